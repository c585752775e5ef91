"""The stat index (porter/pipeline/statindex.py): a warm run answers an unchanged file from its stat,
and never answers a changed one from it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from porter.pipeline import statindex
from porter.pipeline.cache import Cache, seal
from porter.core.findings import FileResult, FileStatus
from porter.analysis.prefilter import NOT_ADMITTED
from porter.pipeline.runner import run
from porter.config.settings import Settings
from porter.pipeline.statindex import StatIndex

CLEAN = b"import torch\nx = torch.randn(3).cudb()\n"  # no CUDA token: skipped
CUDA = b"import torch\nx = torch.randn(3).cuda()\n"  # the same size: DEV001
assert len(CLEAN) == len(CUDA)


@pytest.fixture
def trusting(monkeypatch):
    """Trust a record however recently its file changed (a test cannot wait for the racy
    window; `test_racily_clean_record_is_not_trusted` covers the window itself)."""
    monkeypatch.setattr(statindex, "RACY_NS", 0)


def _lint(root: Path, cache: Path, **settings) -> dict[str, object]:
    results, _ = run([root], Settings(target="xla", want_source=False, **settings), jobs=1, cache_dir=cache)
    return {Path(r.path).name: r for r in results}


def _codes(result) -> list[str]:
    return [f.code for f in result.findings]


def _index(cache: Path) -> Path:
    [path] = Cache(cache).entries.glob("stat-*.idx")
    return path


def test_unchanged_file_is_answered_without_reading_it(tmp_path, monkeypatch, trusting):
    root, cache = tmp_path / "p", tmp_path / "cache"
    root.mkdir()
    (root / "m.py").write_bytes(CLEAN)
    assert _lint(root, cache)["m.py"].reason == NOT_ADMITTED
    real = Path.read_bytes

    def refuse(self: Path) -> bytes:
        if self.name == "m.py":
            raise PermissionError("read")
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", refuse)
    again = _lint(root, cache)["m.py"]
    assert again.reason == NOT_ADMITTED  # not "permission denied": the file was not read


def test_same_size_edit_with_restored_mtime_is_seen(tmp_path, trusting):
    root, cache = tmp_path / "p", tmp_path / "cache"
    root.mkdir()
    path = root / "m.py"
    path.write_bytes(CLEAN)
    assert _codes(_lint(root, cache)["m.py"]) == []
    before = path.stat()
    path.write_bytes(CUDA)  # same size, and the mtime put back: only the ctime tells
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    assert _codes(_lint(root, cache)["m.py"]) == ["DEV001"]


def test_racily_clean_record_is_not_trusted(tmp_path):
    """A file whose mtime or ctime is within RACY_NS of the run could change again in the same
    clock tick without changing its stat: its record must not answer for it."""
    store = Cache(tmp_path / "cache")
    path = tmp_path / "m.py"
    path.write_bytes(CLEAN)
    index = StatIndex(store, [tmp_path], Settings(target="xla"))
    st = path.stat()
    result = FileResult(path="m.py", status=FileStatus.SKIPPED, reason=NOT_ADMITTED)
    index.record("m.py", st, CLEAN, False, b"", statindex.context_key((), None), None, result)
    index.save()
    later = StatIndex(store, [tmp_path], Settings(target="xla"))
    assert "m.py" in later.old
    assert later.lookup("m.py", path.stat()) is None  # the same stat, but too recent to vouch for
    later.old["m.py"].trusted = True
    assert later.lookup("m.py", path.stat()) is not None  # (and only the racy mark refused it)


def test_deleted_file_leaves_the_index(tmp_path, trusting):
    root, cache = tmp_path / "p", tmp_path / "cache"
    root.mkdir()
    (root / "a.py").write_bytes(CUDA)
    (root / "b.py").write_bytes(CLEAN)
    assert set(_lint(root, cache)) == {"a.py", "b.py"}
    assert b"a.py" in _index(cache).read_bytes()
    (root / "a.py").unlink()
    assert set(_lint(root, cache)) == {"b.py"}
    assert b"a.py" not in _index(cache).read_bytes()


def test_settings_change_is_not_answered_from_the_old_run(tmp_path, trusting):
    root, cache = tmp_path / "p", tmp_path / "cache"
    root.mkdir()
    (root / "m.py").write_bytes(CUDA)
    assert _codes(_lint(root, cache)["m.py"]) == ["DEV001"]
    assert _codes(_lint(root, cache, ignore=("DEV001",))["m.py"]) == []
    assert _codes(_lint(root, cache)["m.py"]) == ["DEV001"]


def test_corrupt_index_is_an_empty_one(tmp_path, trusting):
    root, cache = tmp_path / "p", tmp_path / "cache"
    root.mkdir()
    (root / "m.py").write_bytes(CLEAN)
    _lint(root, cache)
    index = _index(cache)
    assert StatIndex(Cache(cache), [root], Settings(target="xla", want_source=False)).old
    digest, _, body = index.read_bytes().partition(b"\n")
    forged = body.replace(NOT_ADMITTED.encode(), b"no CUDA-related tokeN")  # valid JSON, one bit off
    assert forged != body
    index.write_bytes(digest + b"\n" + forged)
    assert StatIndex(Cache(cache), [root], Settings(target="xla", want_source=False)).old == {}
    assert _lint(root, cache)["m.py"].reason == NOT_ADMITTED


def test_suppression_comment_is_read_on_a_warm_run(tmp_path, trusting):
    """A file with no finding but a `# noqa: CODE` comment is read on a hit: PORT100 needs its text."""
    from porter.lint import lint

    root, cache = tmp_path / "p", tmp_path / "cache"
    root.mkdir()
    (root / "m.py").write_bytes(b"import torch\nx = torch.zeros(3)  # noqa: DEV001\n")
    settings = Settings(target="xla", want_source=False)
    for _ in range(2):  # the second run is answered by the stat index
        run = lint([root], settings, report_unused=True, jobs=1, cache_dir=cache)
        assert [f.code for f in run.findings] == ["PORT100"]


def test_a_warm_run_keeps_cross_file_cuda_only_facts_without_reading(tmp_path, monkeypatch, trusting):
    """The CUDA-only imports across modules (GUARD001/KERN005) come from the stat index on a
    warm run, and an edit to the module they come from is seen."""
    from porter.analysis import cuda_only_index

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "kernels.py").write_text(
        "import triton\n\n\n@triton.jit\ndef k(x):\n    pass\n\n\ndef launch(x):\n    k[(1,)](x)\n"
    )
    api = "import torch\nfrom pkg.kernels import launch\n\n\ndef f(x):\n    if x.is_cuda:\n        launch(x)\n    return x\n"
    (pkg / "api.py").write_text(api)
    cache = tmp_path / "cache"

    def port() -> str:
        results, _ = run([pkg], Settings(target="neuron"), jobs=1, cache_dir=cache)
        (res,) = [r for r in results if r.path.endswith("api.py")]
        return (res.new_source or res.original_source or b"").decode()

    assert "x.is_cuda" in port()
    with monkeypatch.context() as m:
        m.setattr(cuda_only_index, "cuda_only_imports", lambda *a, **k: pytest.fail("warm run rescanned"))
        assert "x.is_cuda" in port()
    (pkg / "kernels.py").write_text("import torch\n\n\ndef launch(x):\n    return x\n")
    assert "x.is_neuron" in port()


# --- findings held in the index: a warm run says what a cold one says, and nothing stale ----

MANY = b"""import torch

x = torch.zeros(3).cuda()  # noqa: DEV002
torch.cuda.synchronize()
dev = "cuda"
with torch.cuda.amp.autocast():
    y = x * 2
"""


def _lint_cli(root: Path, cache: Path, *extra: str) -> list[dict]:
    """`porter lint --output-format json` in-process from `root` (what CI runs)."""
    from typer.testing import CliRunner

    from porter.cli import app

    here = os.getcwd()
    os.chdir(root)
    try:
        r = CliRunner().invoke(
            app, ["lint", ".", "-t", "xla", "--output-format", "json", "--cache-dir", str(cache), *extra]
        )
    finally:
        os.chdir(here)
    assert r.exit_code in (0, 1), r.stderr
    import json

    return json.loads(r.stdout)


def test_warm_findings_are_the_cold_ones(tmp_path, monkeypatch, trusting):
    """Every field of every finding (and its fingerprint) from the index equals a run with no cache."""
    root, cache = tmp_path / "p", tmp_path / "cache"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "m.py").write_bytes(MANY)
    (root / "n.py").write_bytes(CUDA)
    (root / "clean.py").write_bytes(CLEAN)
    cold = _lint_cli(root, cache, "--no-cache")
    assert len(cold) >= 4
    assert _lint_cli(root, cache) == cold  # fills the cache and the index
    import porter.pipeline.port

    with monkeypatch.context() as m:
        m.setattr(statindex.Cache, "get", lambda *a, **k: pytest.fail("a warm run read a cache entry"))
        m.setattr(porter.pipeline.port, "port_source", lambda *a, **k: pytest.fail("a warm run ported a file"))
        assert _lint_cli(root, cache) == cold  # answered by the index alone
    unused = _lint_cli(root, cache, "--no-cache", "--report-unused-ignores")
    assert "PORT100" in {f["code"] for f in unused}  # the `noqa: DEV002` on a line without DEV002
    assert _lint_cli(root, cache, "--report-unused-ignores") == unused


def test_edited_file_with_findings_is_ported_again(tmp_path, trusting):
    root, cache = tmp_path / "p", tmp_path / "cache"
    root.mkdir()
    path = root / "m.py"
    path.write_bytes(CUDA)
    assert _codes(_lint(root, cache)["m.py"]) == ["DEV001"]
    path.write_bytes(CUDA + b"torch.cuda.synchronize()\n")
    assert sorted(_codes(_lint(root, cache)["m.py"])) == ["CUDA003", "DEV001"]


def test_moved_file_is_named_by_its_new_name(tmp_path, trusting):
    """A rename keeps the inode, size and mtime: the results carry the new name, and the old
    name's record (findings with the old path) answers for nothing."""
    root, cache = tmp_path / "p", tmp_path / "cache"
    root.mkdir()
    (root / "a.py").write_bytes(CUDA)
    assert _codes(_lint(root, cache)["a.py"]) == ["DEV001"]
    (root / "a.py").rename(root / "b.py")
    found = _lint(root, cache)
    assert set(found) == {"b.py"}
    assert [Path(f.path).name for f in found["b.py"].findings] == ["b.py"]


def test_config_change_is_not_answered_from_the_old_run(tmp_path, trusting):
    root, cache = tmp_path / "p", tmp_path / "cache"
    root.mkdir()
    (root / "m.py").write_bytes(CUDA)
    config = root / "porter.toml"
    config.write_text('ignore = ["DEV001"]\n')
    assert _lint_cli(root, cache) == []
    config.write_text('ignore = ["CUDA003"]\n')
    assert [f["code"] for f in _lint_cli(root, cache)] == ["DEV001"]
    config.write_text('[per-file-ignores]\n"m.py" = ["DEV001"]\n')
    assert _lint_cli(root, cache) == []


@pytest.mark.parametrize("fix", [False, True])
def test_a_folder_made_a_package_is_not_answered_from_the_old_run(tmp_path, trusting, fix):
    """A default device of a package's public function is its API and stays (DEV016); of a
    script's, it is ported (DEV002). Whether the folder holds `__init__.py` was in no key: after
    `touch __init__.py` a warm run gave the script's DEV002 and `lint --fix` would have rewritten
    the package's API (seventeenth read). The same the other way."""
    from porter.codemods.literals import _folder_is_package

    root, cache = tmp_path / "p", tmp_path / "cache"
    root.mkdir()
    (root / "mod.py").write_text('import torch\n\n\ndef run(x, device="cuda"):\n    return x.to(device)\n')

    def codes() -> list[str]:
        _folder_is_package.cache_clear()  # (a new process in a real run)
        results, _ = run([root], Settings(target="neuron", want_source=fix), jobs=1, cache_dir=cache)
        return [f.code for r in results for f in r.findings]

    assert codes() == ["DEV002"]
    (root / "__init__.py").write_text("")
    assert codes() == ["DEV016"]
    (root / "__init__.py").unlink()
    assert codes() == ["DEV002"]


def test_rule_file_change_is_not_answered_from_the_old_run(tmp_path, monkeypatch, trusting):
    """Rule data is part of every key (the salt): new advice in a rule file shows on the next run."""
    import shutil
    from functools import _lru_cache_wrapper
    import sys

    import porter.config.ruledata

    def clear() -> None:
        for name, module in list(sys.modules.items()):
            if name == "porter" or name.startswith("porter."):
                for value in list(vars(module).values()):
                    if isinstance(value, _lru_cache_wrapper):
                        value.cache_clear()

    rules = tmp_path / "rules"
    shutil.copytree(porter.config.ruledata.rules_dir(), rules)
    monkeypatch.setattr(porter.config.ruledata, "rules_dir", lambda: rules)
    root, cache = tmp_path / "p", tmp_path / "cache"
    root.mkdir()
    (root / "m.py").write_bytes(CUDA)
    clear()
    try:
        [before] = _lint(root, cache)["m.py"].findings
        device = rules / "device.toml"
        text = device.read_text()
        assert before.advice and before.advice in text
        device.write_text(text.replace(before.advice, "Advice edited since the last run."))
        clear()
        [after] = _lint(root, cache)["m.py"].findings
        assert after.advice == "Advice edited since the last run."
    finally:
        monkeypatch.undo()
        clear()


def test_edit_in_the_same_clock_tick_is_seen(tmp_path, monkeypatch):
    """On a file system with a coarse clock, a same-size edit right after a run can leave the
    stat as it was: only the racy rule (a record of a file changed just before the run is not
    trusted) sees it. The clock here ticks once a minute, so that the test does not depend on
    how long a run takes."""
    tick = 60 * 10**9
    coarse = lambda st: [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns // tick, st.st_ctime_ns // tick]  # noqa: E731
    monkeypatch.setattr(statindex, "signature", coarse)
    root, cache = tmp_path / "p", tmp_path / "cache"
    root.mkdir()
    path = root / "m.py"
    path.write_bytes(CLEAN)
    before = path.stat()
    assert _codes(_lint(root, cache)["m.py"]) == []
    path.write_bytes(CUDA)
    if coarse(path.stat()) != coarse(before):
        pytest.skip("the minute turned between the two writes")
    assert _codes(_lint(root, cache)["m.py"]) == ["DEV001"]


def _lagging_server(monkeypatch, lag_ns: int, stamped: bool = False):
    """Simulate a file server whose clock runs `lag_ns` behind this machine's and ticks once a
    minute (an NFS export of a 1-second file system, at a scale a test need not wait for):
    this machine's clock reads `lag_ns` ahead of the files' times, and the `stat` keeps only
    the tick. `stamped`: whether the file system counts as stamped by this machine's clock."""
    import time as real_time

    tick = 60 * 10**9
    coarse = lambda st: [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns // tick, st.st_ctime_ns // tick]  # noqa: E731
    monkeypatch.setattr(statindex, "signature", coarse)
    clock = {"now": real_time.time_ns() + lag_ns}
    monkeypatch.setattr(statindex.time, "time_ns", lambda: clock["now"])
    monkeypatch.setattr(statindex, "stamped_here", lambda device: stamped, raising=False)
    return coarse, clock


@pytest.mark.parametrize("lag_s", [10, 600])
def test_a_lagging_file_server_clock_never_serves_a_same_size_edit(tmp_path, monkeypatch, lag_s):
    """On a network file system the file's times are the server's clock: one that lags this
    machine's by more than the racy window made a file written just now look old, so its
    record was trusted, and a same-size edit in the same tick of the server's clock was
    answered from the index (the old findings: none). Now such a file system's record is
    trusted only once two runs `RACY_NS` apart saw the same `stat`."""
    coarse, clock = _lagging_server(monkeypatch, lag_s * 10**9)
    root, cache = tmp_path / "p", tmp_path / "cache"
    root.mkdir()
    path = root / "m.py"
    path.write_bytes(CLEAN)
    before = path.stat()
    assert _codes(_lint(root, cache)["m.py"]) == []
    path.write_bytes(CUDA)
    if coarse(path.stat()) != coarse(before):
        pytest.skip("the minute turned between the two writes")
    assert _codes(_lint(root, cache)["m.py"]) == ["DEV001"]
    clock["now"] += 3 * 10**9  # a run later than the racy window by this machine's clock
    assert _codes(_lint(root, cache)["m.py"]) == ["DEV001"]
    [record] = StatIndex(Cache(cache), [root], Settings(target="xla", want_source=False)).old.values()
    assert record.trusted  # (the same stat seen twice, RACY_NS apart: the warm path is kept)


def test_only_a_file_system_this_machine_stamps_is_judged_by_its_clock(tmp_path, monkeypatch):
    """A file system on a block device or in memory is stamped by this kernel's clock (a
    record made long after its file changed is trusted at once); a FUSE or network one is not
    (a device no mount names is a local one's: a btrfs subvolume, an overlay's layer)."""
    monkeypatch.setattr(
        statindex,
        "_mount_types",
        lambda: (
            {1: "ext4", 2: "tmpfs", 3: "nfs4", 4: "fuse.sshfs", 5: "fuseblk", 6: "9p"},
            frozenset({"ext4", "fuseblk"}),
        ),
    )
    statindex.stamped_here.cache_clear()
    try:
        assert [statindex.stamped_here(d) for d in range(1, 8)] == [True, True, False, False, False, False, True]
    finally:
        monkeypatch.undo()
        statindex.stamped_here.cache_clear()
    assert statindex.stamped_here(os.stat(tmp_path).st_dev)  # (this test machine's own disk)


def _one_file_index(tmp_path):
    """(root, cache, the stat index's path, its data) after a lint of one CUDA file."""
    import json

    root, cache = tmp_path / "p", tmp_path / "cache"
    root.mkdir()
    (root / "m.py").write_bytes(CUDA)
    _lint(root, cache)
    index = _index(cache)
    return root, cache, index, json.loads(index.read_bytes().partition(b"\n")[2])


def _forge(cache, index, data):
    """Write `data` into the stat index, sealed as if the user's porter wrote it; the cache."""
    import json

    store = Cache(cache)
    index.write_bytes(seal(store.mac_key, f"stat:{index.name}", json.dumps(data).encode()))
    return store


def test_forged_finding_reads_as_an_empty_index(tmp_path, trusting):
    """A row of the wrong shape behind a valid tag: the index is dropped, not believed."""
    root, cache, index, data = _one_file_index(tmp_path)
    [record] = data["files"].values()
    [row] = record[6][3]
    row[3] = -1  # a negative line
    store = _forge(cache, index, data)
    assert StatIndex(store, [root], Settings(target="xla", want_source=False)).old == {}
    assert [(f.code, f.start.line) for f in _lint(root, cache)["m.py"].findings] == [("DEV001", 2)]


def test_unknown_rule_code_behind_a_valid_tag_reads_as_an_empty_index(tmp_path, trusting):
    """A finding whose code no rule declares is not a finding porter made (defence in depth:
    the tag already keeps out anyone without the user's key)."""
    root, cache, index, data = _one_file_index(tmp_path)
    data["strings"] = ["XYZ999" if t == "DEV001" else t for t in data["strings"]]
    store = _forge(cache, index, data)
    assert StatIndex(store, [root], Settings(target="xla", want_source=False)).old == {}
    assert [f.code for f in _lint(root, cache)["m.py"].findings] == ["DEV001"]


def test_a_warm_run_keeps_what_each_file_imports_after_the_port(tmp_path, monkeypatch, trusting):
    """Whether requirements.txt may drop flash-attn depends on what the ported Python still
    imports (porter.files.deps.imports). A warm run takes each unchanged file's imports from
    its stat index record: it neither reads nor parses the files naming a CUDA-only module
    (on the 1.2M-line benchmark corpus, 324 parsed files and 1.2 of 3.5 CPU s of a warm lint);
    an edit to one is read again."""
    from porter.files.deps import imports

    root, cache = tmp_path / "p", tmp_path / "cache"
    root.mkdir()
    (root / "requirements.txt").write_text("torch\nflash-attn\n")
    (root / "attn.py").write_text("import torch\nimport flash_attn\n\n\ndef f(q):\n    return flash_attn.f(q)\n")
    (root / "other.py").write_text("import torch\nx = torch.zeros(3).cuda()\n")

    def requirements(results: dict) -> list[tuple]:
        r = results["requirements.txt"]
        return [(f.code, f.message) for f in r.findings]

    cold = _lint(root, cache)
    with monkeypatch.context() as m:
        m.setattr(imports, "imports_cuda_only", lambda *a: pytest.fail("a warm run read what a file imports"))
        warm = _lint(root, cache)
    assert requirements(warm) == requirements(cold)
    assert {n: _codes(r) for n, r in warm.items()} == {n: _codes(r) for n, r in cold.items()}
    (root / "attn.py").write_text("import torch\n\n\ndef f(q):\n    return q\n")
    edited = _lint(root, cache)
    assert requirements(edited) == requirements(_lint(root, tmp_path / "fresh"))
    assert requirements(edited) != requirements(cold)


def test_a_dependency_file_added_later_is_told_what_an_unchanged_file_still_imports(tmp_path, trusting):
    """A record written by a run with no dependency file kept no imports after the port (none
    was asked), and its result (`--output-format json`: no ported text, no source) has none to
    read them from: once a requirements.txt naming cupy-cuda12x was added, the warm run
    answered the unchanged m.py from it and said cupy-cuda12x could go ("no Python file of the
    run imports `cupy`"), fixable, where m.py still imports it (twenty-eighth cache read)."""
    root, cache = tmp_path / "p", tmp_path / "cache"
    root.mkdir()
    (root / "m.py").write_text("import torch\nimport cupy\nx = torch.ones(1).cuda()\n")
    _lint_cli(root, cache)
    _lint_cli(root, cache)
    (root / "requirements.txt").write_text("torch\ncupy-cuda12x\n")

    def dep005(findings: list[dict]) -> list[tuple]:
        return [(f["message"], f["fixable"]) for f in findings if f["code"] == "DEP005"]

    cold = dep005(_lint_cli(root, cache, "--no-cache"))
    assert cold and "still imports `cupy`" in cold[0][0]
    assert dep005(_lint_cli(root, cache)) == cold
    assert dep005(_lint_cli(root, cache)) == cold  # and the record it keeps now


def test_a_dependency_file_naming_no_cuda_package_keeps_no_imports_read_off_nothing(tmp_path, trusting):
    """The same record answered a run whose requirements.txt named no CUDA-only package: asked
    what m.py imports, its result held no text, and "nothing" was kept; once cupy-cuda12x was
    added, that answered (twenty-eighth cache read)."""
    root, cache = tmp_path / "p", tmp_path / "cache"
    root.mkdir()
    (root / "m.py").write_text("import torch\nimport cupy\nx = torch.ones(1).cuda()\n")
    _lint_cli(root, cache)
    _lint_cli(root, cache)
    (root / "requirements.txt").write_text("torch\n")
    _lint_cli(root, cache)
    (root / "requirements.txt").write_text("torch\ncupy-cuda12x\n")
    [warm] = [f["message"] for f in _lint_cli(root, cache) if f["code"] == "DEP005"]
    assert "still imports `cupy`" in warm


def _lint_text(root: Path, cache: Path, *extra: str) -> str:
    """`porter lint` in-process from `root` with the given options; its stdout."""
    from typer.testing import CliRunner

    from porter.cli import app

    here = os.getcwd()
    os.chdir(root)
    try:
        r = CliRunner().invoke(app, ["lint", ".", "-t", "xla", "--cache-dir", str(cache), *extra])
    finally:
        os.chdir(here)
    assert r.exit_code in (0, 1), r.stderr
    return r.stdout


def test_a_warm_json_lint_fingerprints_the_shown_files_without_reading_them(tmp_path, monkeypatch, trusting):
    """The stat index keeps each finding's normalised lines (what its fingerprint hashes), so
    a warm `--output-format json` run neither reads nor hashes an unchanged file with findings
    (on the 1.2M-line benchmark corpus, 1,059 files: 0.12 of a warm lint's 0.99 CPU s). Its
    output is the cold one, fingerprints included; `full`, which shows each finding's line,
    still reads the files; an edit is seen."""
    root, cache = tmp_path / "p", tmp_path / "cache"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "m.py").write_bytes(MANY)
    (root / "n.py").write_bytes(b"import torch\r\nx = torch.zeros(3).cuda(  )\r\ntorch.cuda.synchronize()\n")
    cold = _lint_cli(root, cache, "--no-cache")
    cold_full = _lint_text(root, cache, "--no-cache")
    assert _lint_cli(root, cache) == cold  # fills the cache and the index
    with monkeypatch.context() as m:
        m.setattr(statindex, "read_regular", lambda *a: pytest.fail("a warm json lint read a file"))
        assert _lint_cli(root, cache) == cold
    assert _lint_text(root, cache) == cold_full  # the lines shown are read
    (root / "n.py").write_bytes(b"import torch\n\n\nx = torch.zeros(3).cuda()\n")
    assert _lint_cli(root, cache) == _lint_cli(root, cache, "--no-cache")


@pytest.mark.parametrize(
    "texts",
    [[-1], [10**6], ["x"], [0, 0], [], 7],
    ids=["negative", "past the table", "not a place", "one too many", "one too few", "not a list"],
)
def test_forged_finding_lines_read_as_an_empty_index(tmp_path, trusting, texts):
    """The lines kept for fingerprints are checked as the findings are: a place in the string
    table, one per finding, or the index is dropped, not believed."""
    root, cache, index, data = _one_file_index(tmp_path)
    [record] = data["files"].values()
    assert len(record[10]) == 1  # one DEV001, one line
    record[10] = texts
    store = _forge(cache, index, data)
    assert StatIndex(store, [root], Settings(target="xla", want_source=False)).old == {}
    assert [(f.code, f.start.line) for f in _lint(root, cache)["m.py"].findings] == [("DEV001", 2)]


@pytest.mark.parametrize(
    "native",
    [
        [],
        {"a.cu": "x"},
        {"a.cu": [[1, 2, 3, 4], "0" * 64, True, True]},
        {"a.cu": [[1, 2, 3, 4, "5"], "0" * 64, True, True]},
        {"a.cu": [[1, 2, 3, 4, 5], "0" * 63, True, True]},
        {"a.cu": [[1, 2, 3, 4, 5], "0" * 64, 1, True]},
        {"a.cu": [[1, 2, 3, 4, 5], "0" * 64, True, True, None]},
    ],
    ids=["not a map", "not a row", "short stat", "stat not ints", "not a sha256", "not a bool", "one too many"],
)
def test_forged_native_source_rows_read_as_an_empty_index(tmp_path, trusting, native):
    """The C++/CUDA sources' rows (stat, sha256, whether they register ops) are checked as the
    records are: the shape `record_native` writes, or the whole index is dropped."""
    root, cache, index, data = _one_file_index(tmp_path)
    data["native"] = native
    store = _forge(cache, index, data)
    assert StatIndex(store, [root], Settings(target="xla", want_source=False)).old == {}
    assert [(f.code, f.start.line) for f in _lint(root, cache)["m.py"].findings] == [("DEV001", 2)]


def test_a_run_asks_each_folder_once_whether_it_is_a_package_and_a_link_alone(tmp_path, monkeypatch):
    """The runner asks `folder_is_package` once per folder (a warm run asked it twice of every
    file: 0.1 s of 0.6 s on 3,945 files); a file that is a link is asked alone, since its
    folder is its target's, and the answers are those of `folder_is_package` itself."""
    from porter.core import reading
    from porter.pipeline import runner

    pkg, plain = tmp_path / "pkg", tmp_path / "plain"
    pkg.mkdir()
    plain.mkdir()
    (pkg / "__init__.py").write_text("")
    for name in ("a.py", "b.py", "c.py"):
        (plain / name).write_text("x = 1\n")
    (pkg / "m.py").write_text("x = 1\n")
    (plain / "link.py").symlink_to(pkg / "m.py")
    asked: list[Path] = []

    def counting(path):
        asked.append(Path(path))
        return reading.folder_is_package(path)

    monkeypatch.setattr(runner, "folder_is_package", counting)
    serial = runner._Serial(Settings(target="xla"), None, None, {}, ())
    files = [plain / "a.py", plain / "b.py", plain / "link.py", plain / "c.py", pkg / "m.py", plain / "link.py"]
    given = [runner.Candidate(f, tmp_path) for f in files]  # files given by name: the walk told nothing
    assert [serial.package(c) for c in given] == [reading.folder_is_package(f) for f in files]
    assert [serial.package(c) for c in given] == [False, False, True, False, True, True]
    assert asked.count(plain / "link.py") == 4 and len([p for p in asked if p.name in "a.py b.py c.py"]) == 1


def test_a_warm_run_makes_no_path_object_per_file(tmp_path, monkeypatch, trusting):
    """A walked file is named by a string; its `Path` (`Candidate.path`) is made only where a
    file is read or ported. A warm run answers every file from its `stat` and makes none (on
    the 1.2M-line corpus a Path per file, built and printed, was 0.02 s of a 0.5 s warm lint);
    a cold one still gets the same results."""
    from porter.pipeline.runner import iter_results

    root, cache = tmp_path / "p", tmp_path / "cache"
    for rel in ("pkg/__init__.py", "pkg/m.py", "n.py", "sub/o.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(CUDA if rel != "pkg/__init__.py" else b"")
    monkeypatch.chdir(root)
    settings = Settings(target="xla", want_source=False)

    def results() -> tuple[list, list]:
        pairs = list(iter_results([Path(".")], settings, jobs=1, cache_dir=cache, sources=False))
        return [c for c, _ in pairs], [(r.path, r.status, _codes(r)) for _, r in pairs]

    cold_cands, cold = results()
    warm_cands, warm = results()
    assert warm == cold and [p for p, _, codes in cold if codes == ["DEV001"]] == ["n.py", "pkg/m.py", "sub/o.py"]
    assert [c.where for c in warm_cands] == ["n.py", "pkg/__init__.py", "pkg/m.py", "sub/o.py"]
    assert not [c for c in warm_cands if "path" in vars(c)]  # no Path was made


def test_a_file_named_in_a_run_that_reads_python_alone_is_read_by_the_next_run(tmp_path, monkeypatch, trusting):
    """`PORTER_FILE_KINDS=python` leaves a requirements.txt unread, even one named: that result
    was kept under a key and a stat index that did not say which kinds the run read, and it
    answered the next run, which reads the file ("All checks passed!" where a cold run has
    DEP004 and DEP005; twenty-eighth cache read)."""
    root, cache = tmp_path / "p", tmp_path / "cache"
    root.mkdir()
    reqs = root / "requirements.txt"
    reqs.write_text("torch\ncupy-cuda12x\n")

    def codes(**kw) -> list[str]:
        results, _ = run([reqs], Settings(target="xla", want_source=False), jobs=1, **kw)
        return [f.code for r in results for f in r.findings]

    monkeypatch.setenv("PORTER_FILE_KINDS", "python")
    assert codes(cache_dir=cache) == codes(cache_dir=cache) == []
    monkeypatch.delenv("PORTER_FILE_KINDS")
    cold = codes(cache=False)
    assert "DEP005" in cold
    assert codes(cache_dir=cache) == cold
    reqs.touch()  # (the stat index misses; the cache entry answers)
    assert codes(cache_dir=cache) == cold
