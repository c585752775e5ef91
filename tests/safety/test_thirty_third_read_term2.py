"""The thirty-third read of terminal output, second wave (term2, on d99062c4): each test failed there."""

from __future__ import annotations

import os
import signal

import pytest

from tests.safety.conftest import CUDA
from tests.safety.test_thirty_third_read_term import _HELD_AFTER_THE_BAR, _stopped_then_continued

# rewrite's bar drawn from the first file; its last draw (rich's `Live.stop`, the cursor shown)
# done, then porter held there, still in `RunProgress.__exit__`, until the gate opens
_HELD_AFTER_THE_LAST_DRAW = """
import os, time
import rich.live
import porter.report.progress as progress
progress.RunProgress.__init__.__kwdefaults__["delay"] = 0.0
real = rich.live.Live.stop
def held(self):
    real(self)
    if not os.path.exists({marker!r}):
        open({marker!r}, "w").close()
        while not os.path.exists({gate!r}):
            time.sleep(0.05)
rich.live.Live.stop = held
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="a process's state is read in /proc")
def test_ctrl_z_during_the_progress_bars_last_draw_leaves_the_cursor_shown(tmp_path):
    # Ctrl-Z after the bar's last draw had shown the cursor, before its handler was put back:
    # the handler hid the cursor again on `fg`, and porter ended with the shell's cursor hidden
    (tmp_path / "m.py").write_bytes(CUDA)
    porter_argv = ["rewrite", "m.py", "-t", "xla", "--diff", "-j", "1", "--allow-no-vcs"]
    _, out, code = _stopped_then_continued(tmp_path, _HELD_AFTER_THE_LAST_DRAW, porter_argv)
    assert code == 1, out  # the run went on after `fg`, its diff printed
    assert b"+++ b/m.py" in out, out
    assert b"\x1b[?25l" not in out, out  # the cursor never hidden (the bar leaves it shown: thirty-sixth read)


@pytest.mark.skipif(not hasattr(signal, "SIGTSTP"), reason="Ctrl-Z is job control's")
def test_ctrl_c_in_the_progress_bars_last_draw_gives_ctrl_z_back(monkeypatch):
    # Ctrl-C while the bar's last frame was written (a terminal whose output waits: Ctrl-S) raised
    # out of rich's `Live.stop` before the bar's Ctrl-Z handler was put back: the program after it
    # (a test, a notebook, a tool running porter in-process) kept it, its cursor hidden on each `fg`
    import pty

    import rich.live
    from rich.console import Console

    from porter.report.progress import RunProgress

    real = rich.live.Live.refresh

    def interrupted(self):
        if not self.is_started:  # the last draw, in `stop`
            raise KeyboardInterrupt
        real(self)

    monkeypatch.setattr(rich.live.Live, "refresh", interrupted)
    before = signal.signal(signal.SIGTSTP, signal.SIG_DFL)
    leader, follower = pty.openpty()
    try:
        with open(follower, "w", closefd=True) as terminal:
            console = Console(file=terminal, force_terminal=True, width=80, height=24)
            with pytest.raises(KeyboardInterrupt), RunProgress(console, total=2, delay=0.0, tty=True) as progress:
                progress.advance("m.py")
                assert signal.getsignal(signal.SIGTSTP) is not signal.SIG_DFL  # the bar's, while drawn
            assert signal.getsignal(signal.SIGTSTP) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGTSTP, before)
        os.close(leader)


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="a process's state is read in /proc")
def test_ctrl_z_erases_the_progress_bars_frame_before_the_stop(tmp_path):
    # Ctrl-Z left the bar's frame on the line where the shell then printed its "Stopped": on `fg`
    # the bar was drawn anew below, and the old frame (`porting ━━╺━━ 1/4 0:00:00`) stayed on the
    # screen after the run, as if a port had stopped there (pyte 0.8.2 as the terminal: the frame
    # was the screen's ninth line)
    for name in ("m.py", "n.py"):
        (tmp_path / name).write_bytes(CUDA)
    porter_argv = ["rewrite", ".", "-t", "xla", "--diff", "-j", "1", "--allow-no-vcs"]
    stopped, out, _ = _stopped_then_continued(tmp_path, _HELD_AFTER_THE_BAR, porter_argv)
    # the frame's line erased (rich's own `\r\e[2K`) after its last draw, and the cursor shown
    assert stopped.rfind(b"\x1b[?25h") > stopped.rfind(b"\r\x1b[2K") > stopped.rfind(b"porting") > -1, stopped
    assert out.count(b"+++ b/") == 2, out
