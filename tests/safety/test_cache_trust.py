"""Contract 1: a cache entry is verified, never trusted; a project's own cache is used only
when asked for; a malformed entry is a miss that gets replaced, never an error or a hang."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

from tests.safety.conftest import CUDA, PORTED, committed_repo, porter

PAYLOAD = b"import os; os.system('echo pwned > /tmp/porter-pwned')\nthis is not python(\n"


def _entries(cache: Path) -> list[Path]:
    """Per-file entries (the project index keeps its own `index-*.json` beside them)."""
    return [p for p in cache.rglob("*.json") if (p.is_file() or p.is_fifo()) and not p.name.startswith("index-")]


def _seed(tmp_path: Path, cache: Path) -> Path:
    """Run once so the cache holds the entry for m.py; return that entry."""
    committed_repo(tmp_path, {"m.py": CUDA})
    out = porter("rewrite", ".", "--target", "xla", "--diff", "--cache-dir", str(cache), cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    entries = _entries(cache)
    assert len(entries) == 1
    return entries[0]


def _forge(entry: Path, new: bytes, fix_hash: bool) -> None:
    data = json.loads(entry.read_bytes())
    data["new_source"] = base64.b64encode(new).decode()
    if fix_hash and "new_sha256" in data:
        import hashlib

        data["new_sha256"] = hashlib.sha256(new).hexdigest()
    entry.write_text(json.dumps(data))


def test_cache_shipped_inside_the_project_is_not_used(tmp_path):
    entry = _seed(tmp_path, tmp_path / ".porter_cache")
    _forge(entry, PAYLOAD, fix_hash=True)
    out = porter("rewrite", ".", "--target", "xla", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "m.py").read_bytes() == PORTED


def test_forged_entry_that_does_not_parse_is_not_written(tmp_path):
    # the forger even fixed up the hash: the re-parse check still stops it
    cache = tmp_path / ".porter_cache"
    entry = _seed(tmp_path, cache)
    _forge(entry, PAYLOAD, fix_hash=True)
    out = porter("rewrite", ".", "--target", "xla", "--cache-dir", str(cache), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "m.py").read_bytes() == PORTED


def test_flipped_bit_in_an_entry_is_a_miss(tmp_path):
    cache = tmp_path / "cache"
    entry = _seed(tmp_path, cache)
    # valid Python, but not what porter computed: only the recorded hash tells
    _forge(entry, PORTED.replace(b"randn(3)", b"randn(7)"), fix_hash=False)
    out = porter("rewrite", ".", "--target", "xla", "--cache-dir", str(cache), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "m.py").read_bytes() == PORTED


def _check_replaced(tmp_path: Path, cache: Path, entry: Path) -> None:
    # the stat index answers an unchanged file without reading its entry (it holds the
    # findings itself): without it, the next run reads the bad entry
    for index in cache.rglob("stat-*.idx"):
        index.unlink()
    for _ in range(2):  # the bad entry is a miss, then it is replaced and a hit
        out = porter("lint", ".", "--target", "xla", "--output-format", "concise", "--cache-dir", str(cache), cwd=tmp_path, timeout=60)
        err = out.stderr.decode()
        assert out.returncode == 1 and "Traceback" not in err, err
        assert b"m.py:2:" in out.stdout
    assert all(p.is_file() for p in _entries(cache))


def _lint_entry(tmp_path: Path, cache: Path) -> Path:
    (tmp_path / "m.py").write_bytes(CUDA)
    out = porter("lint", ".", "--target", "xla", "--cache-dir", str(cache), cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    [entry] = _entries(cache)
    return entry


def test_deeply_nested_entry_is_a_miss(tmp_path):
    cache = tmp_path / "cache"
    entry = _lint_entry(tmp_path, cache)
    entry.write_text("[" * 200_000)
    _check_replaced(tmp_path, cache, entry)


def test_entry_of_wrong_types_is_a_miss(tmp_path):
    cache = tmp_path / "cache"
    entry = _lint_entry(tmp_path, cache)
    for bad in ("[]", '"x"', json.dumps({"key": entry.parent.name + entry.stem, "status": 3, "findings": {"a": 1}})):
        entry.write_text(bad)
        _check_replaced(tmp_path, cache, entry)


def test_fifo_in_place_of_an_entry_is_a_miss_not_a_hang(tmp_path):
    cache = tmp_path / "cache"
    entry = _lint_entry(tmp_path, cache)
    entry.unlink()
    os.mkfifo(entry)
    _check_replaced(tmp_path, cache, entry)


def test_malformed_project_index_entry_is_a_miss(tmp_path: Path) -> None:
    """The project index's cached answers are read like any entry: a FIFO, deep nesting or
    a wrong shape is a miss (no hang, no traceback) and the port is the fresh one."""
    cache = tmp_path / "cache"
    committed_repo(tmp_path, {"m.py": b"import torch\ngpu_id = 0\nx = torch.zeros(2).to(gpu_id)\n"})
    fresh = porter("rewrite", ".", "--target", "neuron", "--diff", "--no-cache", cwd=tmp_path)
    seeded = porter("rewrite", ".", "--target", "neuron", "--diff", "--cache-dir", str(cache), cwd=tmp_path)
    assert seeded.stdout == fresh.stdout
    [index] = [p for p in cache.rglob("index-*.json")]
    for bad in ("fifo", "[" * 100_000, '{"m.py": 3}', '{"m.py": [[1, 2, 3, 4]]}', "[]"):
        index.unlink()
        if bad == "fifo":
            os.mkfifo(index)
        else:
            index.write_bytes(bad.encode())
        again = porter("rewrite", ".", "--target", "neuron", "--diff", "--cache-dir", str(cache), cwd=tmp_path, timeout=60)
        assert again.returncode == fresh.returncode, again.stderr
        assert again.stdout == fresh.stdout
        assert b"Traceback" not in again.stderr
