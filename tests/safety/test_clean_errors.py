"""Contract 6: bad settings, baselines, patterns and paths end in exit 2 with one line that
names the file and the reason, and leave nothing behind."""

from __future__ import annotations


import pytest

from tests.safety.conftest import CUDA, porter


def _one_line_error(out, *words: str) -> str:
    err = out.stderr.decode(errors="replace")
    assert out.returncode == 2, (out.returncode, err)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("command", ["lint", "rewrite"])
@pytest.mark.parametrize("name", ["pyproject.toml", "porter.toml"])
def test_config_that_is_not_utf8(tmp_path, name, command):
    (tmp_path / name).write_bytes(
        b'[tool.porter]\ntarget = "xla"\n# caf\xe9\n' if name == "pyproject.toml" else b'target = "xla"\n# caf\xe9\n'
    )
    (tmp_path / "m.py").write_bytes(CUDA)
    args = ["--diff"] if command == "rewrite" else []
    _one_line_error(porter(command, ".", "--target", "xla", *args, cwd=tmp_path), name, "UTF-8")


def test_baseline_that_is_not_utf8(tmp_path):
    (tmp_path / "m.py").write_bytes(CUDA)
    (tmp_path / "base.json").write_bytes(b'{"version": 1, "findings": ["caf\xe9"]}')
    _one_line_error(
        porter("lint", ".", "--target", "xla", "--baseline", "base.json", cwd=tmp_path), "base.json", "UTF-8"
    )


def test_baseline_entry_holding_markup(tmp_path):
    (tmp_path / "m.py").write_bytes(CUDA)
    (tmp_path / "base.json").write_text('{"version": 1, "findings": [{"path": "[/]"}]}')
    line = _one_line_error(porter("lint", ".", "--target", "xla", "--baseline", "base.json", cwd=tmp_path), "base.json")
    assert "[/]" in line


def test_baseline_nested_too_deep(tmp_path):
    (tmp_path / "m.py").write_bytes(CUDA)
    (tmp_path / "base.json").write_text("[" * 100_000)
    _one_line_error(porter("lint", ".", "--target", "xla", "--baseline", "base.json", cwd=tmp_path), "base.json")


@pytest.mark.parametrize("pattern", ["[z-a].py", "\\"])
def test_invalid_exclude_pattern_on_the_command_line(tmp_path, pattern):
    (tmp_path / "m.py").write_bytes(CUDA)
    for command in (["rewrite", "--diff"], ["lint"]):
        out = porter(command[0], ".", "--target", "xla", *command[1:], "--exclude", pattern, cwd=tmp_path)
        _one_line_error(out, "--exclude", "invalid pattern")


def test_invalid_exclude_pattern_in_the_config(tmp_path):
    (tmp_path / "porter.toml").write_text('target = "xla"\nexclude = ["gen/[z-a].py"]\n')
    (tmp_path / "m.py").write_bytes(CUDA)
    _one_line_error(porter("rewrite", ".", "--diff", cwd=tmp_path), "porter.toml", "invalid pattern")


def test_missing_input_path_is_exit_2(tmp_path):
    (tmp_path / "m.py").write_bytes(CUDA)
    _one_line_error(porter("rewrite", "nope.py", "--target", "xla", "--diff", cwd=tmp_path), "nope.py")
    _one_line_error(porter("rewrite", "m.py", "nope", "--target", "xla", "--allow-no-vcs", cwd=tmp_path), "nope")
    assert (tmp_path / "m.py").read_bytes() == CUDA  # nothing written when one path is missing


def test_report_naming_a_folder(tmp_path):
    (tmp_path / "m.py").write_bytes(CUDA)
    (tmp_path / "r.html").mkdir()
    _one_line_error(
        porter("rewrite", ".", "--target", "xla", "--diff", "--report", "r.html", cwd=tmp_path), "r.html", "folder"
    )
    out = porter("lint", ".", "--target", "xla", "--report", "r.html", cwd=tmp_path)
    _one_line_error(out, "r.html")
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith((".tmp", ".porter-tmp"))]


def test_a_yaml_alias_bomb_is_refused_at_once(tmp_path):
    """A few hundred bytes of nested YAML aliases ("billion laughs") expand to hundreds of
    millions of nodes, each scalar a finding at its anchor: porter spent the whole per-file
    limit on it (and, with the limit off, ran without end). It is an error in milliseconds,
    and so is an alias to the node that holds it; anchors used as compose files use them are
    read as before."""

    lines = ['a0: &a0 ["cuda", "cuda", "cuda", "cuda", "cuda", "cuda", "cuda", "cuda", "cuda"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    (tmp_path / "bomb.yaml").write_text("\n".join(lines) + "\ndevice: cuda\n")
    (tmp_path / "loop.yaml").write_text("device: cuda\nd: &d [*d]\n")
    (tmp_path / "compose.yaml").write_text(
        "x-gpu: &gpu\n  environment:\n    CUDA_VISIBLE_DEVICES: '0'\n"
        "services:\n  a:\n    image: nvidia/cuda:12.4.1-runtime-ubuntu22.04\n    <<: *gpu\n  b:\n    <<: *gpu\n"
    )
    # (no --file-timeout: what the bomb and the loop say shows they were stopped as read, not by
    # a limit; 90 s only ends a test whose run no longer ends)
    out = porter(
        "lint", ".", "--target", "neuron", "--file-timeout", "0", "--output-format", "concise", cwd=tmp_path, timeout=90
    )
    err = out.stderr.decode() + out.stdout.decode()
    assert "Traceback" not in err, err
    assert "bomb.yaml" in err and "billion laughs" in err, err
    assert "loop.yaml" in err and "never ends" in err, err
    assert "compose.yaml:" in err, err  # still ported: its findings are listed


def test_a_notebook_with_nan_in_its_metadata_or_a_byte_order_mark_is_ported(tmp_path):
    """What Python's `json.loads` reads from a file's bytes is JSON to porter too: `NaN` and
    `-Infinity` (Python's json writes them: papermill parameters, a widget's state) and a
    UTF-8 byte order mark (an editor on Windows). Both were "not valid JSON" (the notebook
    failed the run); the changed cell is ported and every byte outside it stays."""
    head = b'\xef\xbb\xbf{"cells": [{"cell_type": "code", "execution_count": null, "metadata": {"x": NaN}, "outputs": [], "source": '
    tail = b'}], "metadata": {"inf": -Infinity, "big": Infinity}, "nbformat": 4, "nbformat_minor": 5}\n'
    (tmp_path / "n.ipynb").write_bytes(head + b'["import torch\\n", "x = torch.randn(3).cuda()\\n"]' + tail)
    (tmp_path / "ds_config.json").write_bytes(b'\xef\xbb\xbf{"device": "cuda", "lr": NaN}\n')
    out = porter("rewrite", ".", "--target", "xla", "--allow-no-vcs", cwd=tmp_path)
    err = out.stderr.decode()
    assert out.returncode == 0 and "not valid JSON" not in err, err + out.stdout.decode()
    new = (tmp_path / "n.ipynb").read_bytes()
    assert new.startswith(head) and new.endswith(tail), new
    assert b'"x = torch.randn(3).to(torch_xla.device())\\n"' in new
    lint = porter("lint", "ds_config.json", "--target", "xla", "--output-format", "concise", cwd=tmp_path)
    assert lint.returncode == 1 and b"CFG" in lint.stdout, lint.stdout + lint.stderr


@pytest.mark.parametrize("fmt", ["full", "concise", "json"])
def test_a_file_too_large_to_read_is_not_a_pass(tmp_path, fmt):
    """A Python file over the 2 MiB porter parses was a note on stderr while lint said "All
    checks passed!" and exited 0: a CI gate passed a file nobody checked. As ruff's E902 (a
    file it cannot read is an error, exit 1), the summary says how many files were not read
    and the exit code is 1 (`--exit-zero` still 0)."""
    (tmp_path / "big.py").write_bytes(b"import torch\n" + b"x = torch.zeros(1).cuda()\n" * 90_000)
    (tmp_path / "small.py").write_bytes(b"import os\n")
    out = porter("lint", ".", "--target", "xla", "--no-cache", "--output-format", fmt, cwd=tmp_path)
    text = (out.stdout + out.stderr).decode()
    assert out.returncode == 1, text
    assert "All checks passed" not in text
    assert "note: big.py" in out.stderr.decode(), text
    if fmt != "json":
        assert "1 file was not read (larger than porter reads" in out.stdout.decode(), text
    zero = porter("lint", ".", "--target", "xla", "--no-cache", "--exit-zero", cwd=tmp_path)
    assert zero.returncode == 0, zero.stderr


@pytest.mark.parametrize("mode", [("--diff",), ("--out-dir", "ported")])
def test_rewrite_fails_for_a_file_too_large_to_read(tmp_path, mode):
    """`rewrite` said "No CUDA-specific sites found." and exited 0 for a tree whose one CUDA file
    was too large to read; as for a file it cannot read (the README's exit codes), it exits 2,
    names the file, and still ports the others."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "big.py").write_bytes(b"import torch\n" + b"x = torch.zeros(1).cuda()\n" * 90_000)
    (src / "small.py").write_bytes(b"import torch\ny = torch.zeros(1).cuda()\n")
    out = porter("rewrite", "src", "--target", "xla", "--no-cache", *mode, cwd=tmp_path)
    assert out.returncode == 2, (out.stdout + out.stderr).decode()
    assert "big.py:" in out.stderr.decode() and "(not ported)" in out.stderr.decode(), out.stderr
    if mode[0] == "--out-dir":
        assert "torch_xla" in (tmp_path / "ported" / "small.py").read_text()


def test_a_data_file_past_the_bound_stays_a_note(tmp_path):
    """A JSON file of more than 16 MiB holding `cuda` (a tokenizer's vocabulary) is data: a note,
    not a file lint fails for."""
    (tmp_path / "tokenizer.json").write_bytes(b'{"vocab": ["' + b"cuda " * 4_000_000 + b'"]}')
    out = porter("lint", ".", "--target", "xla", "--no-cache", cwd=tmp_path)
    assert out.returncode == 0 and "note: tokenizer.json" in out.stderr.decode(), out.stderr


@pytest.mark.parametrize(
    ("config", "words"),
    [
        ('target = "' + "x" * 3_000_000 + '"\n', ["`target`", "choose one of"]),
        ("x" * 3_000_000 + " = 1\n", ["unknown key", "known keys"]),
        ('ignore = ["' + "x" * 3_000_000 + '"]\n', ["`ignore`", "unknown rule code"]),
        ("ignore = [" + ",".join(f'"Q{i}"' for i in range(100_000)) + "]\n", ["Q4 and 99,995 more"]),
        ('exclude = ["' + "[" * 3_000_000 + '"]\n', ["`exclude`", "at most 4,096"]),
        ('[per-file-ignores]\n"' + "x" * 3_000_000 + '[" = ["DEV"]\n', ["`per-file-ignores`", "at most 4,096"]),
    ],
)
def test_a_huge_config_value_is_a_short_error_in_bounded_time(tmp_path, config, words):
    """A value, key or pattern of a config file was quoted whole in its error (3 MB of stderr for
    `target = "xxx…"`), 100,000 codes were each checked against every rule (6 s), and pathspec
    read a 3-million-character pattern quadratically (past four minutes; seventeenth read)."""
    (tmp_path / "m.py").write_bytes(CUDA)
    (tmp_path / "porter.toml").write_text(config)
    line = _one_line_error(porter("lint", ".", "--target", "xla", "--no-cache", cwd=tmp_path, timeout=60), *words)
    assert len(line) < 400, len(line)


def test_a_gitignore_line_longer_than_any_path_is_passed_over(tmp_path, monkeypatch):
    """pathspec reads a pattern in time quadratic in its length: a `.gitignore` line of 400,000
    characters cost a lint 11 s before any file, one of 2 MB minutes (seventeenth read). No path
    is that long: the line is passed over, and the other lines still apply."""
    (tmp_path / "m.py").write_bytes(CUDA)
    (tmp_path / "skip.py").write_bytes(CUDA)
    (tmp_path / ".gitignore").write_text("x" * 2_000_000 + "\nskip.py\n")
    from porter.config import globs

    real = globs._read

    def read(line, *args):
        assert len(line) <= globs.MAX_PATTERN, f"a line of {len(line):,} characters read as a pattern"
        return real(line, *args)

    monkeypatch.setattr(globs, "_read", read)  # the quadratic translation starts here: counted, not timed
    built = globs.spec(["x" * 2_000_000, "skip.py"])
    assert built.match_file("skip.py") and not built.match_file("x" * 4096)
    # (120 s only ends a test whose run no longer ends: a 2 MB line read by pathspec took minutes)
    out = porter("lint", ".", "--target", "xla", "--no-cache", "--output-format", "concise", cwd=tmp_path, timeout=120)
    assert out.returncode == 1 and b"m.py" in out.stdout and b"skip.py" not in out.stdout, out.stdout + out.stderr
