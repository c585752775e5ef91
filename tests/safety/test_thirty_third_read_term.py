"""The thirty-third read of terminal and report output (term, on 6d9b5ff1): each test failed there."""

from __future__ import annotations

import fcntl
import signal

import pytest

from tests.safety import test_thirty_second_read_term2 as term2
from tests.safety.conftest import CUDA, porter


@pytest.mark.skipif(not hasattr(fcntl, "F_SETPIPE_SZ"), reason="a pipe's size is set on Linux")
def test_an_interrupt_while_stdout_waits_on_a_pipe_with_room_left_ends_the_run(tmp_path):
    # files named past ASCII: each 256-character piece of `full` is more than 256 bytes, and the
    # write that does not fit in the page's room waits with 3,854 of 4,096 bytes unread; the
    # second wave's test waited for 4,096 with no end (a hang of the suite, not a verdict)
    term2.test_an_interrupt_while_stdout_waits_on_a_full_pipe_ends_the_run(tmp_path, signal.SIGINT, stem="é")


def test_write_baseline_with_diff_is_refused_not_left_without_its_patch(tmp_path):
    # `lint --write-baseline b.json --diff`: the baseline written, no patch printed, exit 0,
    # unsaid (`--diff` says "write nothing"); ruff 0.17.6 refuses `--diff --add-noqa`
    (tmp_path / "m.py").write_bytes(CUDA)
    run = porter("lint", "m.py", "-t", "xla", "--write-baseline", "b.json", "--diff", cwd=tmp_path)
    assert (run.returncode, (tmp_path / "b.json").exists(), run.stdout) == (2, False, b""), run.stderr
    assert b"--diff and --write-baseline do not go together" in run.stderr, run.stderr
