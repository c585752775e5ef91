"""Contract 7: a file that crashes or stalls the parser costs that file, not the run, and a
per-file time limit bounds it; CR-only line endings keep the final line ending."""

from __future__ import annotations

from porter.pipeline.port import port_source
from porter.config.settings import Settings
from tests.safety.conftest import CUDA, PORTED, committed_repo, porter

# libcst needs minutes for this (and crashes in-process on a longer one)
STALL = b"import torch\nx = torch.zeros(1)" + b".cuda()" * 2000 + b"\n"


def test_file_that_stalls_the_parser_is_reported_and_the_run_goes_on(tmp_path):
    repo = committed_repo(tmp_path / "repo", {"chain.py": STALL, "good.py": CUDA})
    # --jobs 1: the case that ran in porter's own process. chain.py has 1 s over all its
    # attempts; good.py, in its batch, is ported again alone in milliseconds. (The message shows
    # the limit stopped it; a run the limit no longer stops ends at porter()'s 180 s timeout,
    # which only ends the test: not a bound on speed)
    out = porter("rewrite", ".", "--target", "xla", "--jobs", "1", "--file-timeout", "1", cwd=repo)
    err = out.stderr.decode()
    assert out.returncode == 2, err  # a file could not be ported (the other one is written)
    assert "chain.py" in err and "longer than 1 s" in err
    assert (repo / "good.py").read_bytes() == PORTED
    assert (repo / "chain.py").read_bytes() == STALL


def test_single_file_lint_is_bounded_by_the_config_limit(tmp_path):
    # not the default limit (60 s): the message names the configured one
    (tmp_path / "porter.toml").write_text('target = "xla"\nfile-timeout = 1\n')
    (tmp_path / "chain.py").write_bytes(STALL)
    out = porter("lint", "chain.py", "--output-format", "concise", cwd=tmp_path)  # (180 s: a hang ends the test)
    err = out.stderr.decode()
    assert out.returncode == 1, err
    assert "chain.py" in err and "longer than 1 s" in err and "Traceback" not in err


def test_cr_only_line_endings_keep_the_final_line_ending():
    src = b"import torch\rx = torch.zeros(3).cuda()\r"
    result = port_source(src, "m.py", Settings(target="xla"))
    assert result.new_source is not None
    assert result.new_source.endswith(b"device())\r")
    assert b"\n" not in result.new_source
