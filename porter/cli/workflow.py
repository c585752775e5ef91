"""A GitHub Actions runner reads workflow commands out of everything a step prints: a line that
starts with `::` (after spaces), and a line that holds `##[` followed by a command's name and `]`
anywhere (the runner's legacy form, still read). Text from a hostile tree reaches porter's output
(a file's name, a source line under a finding, a diff line), so `# ##[set-output name=ok;]true`
in a comment, printed by `porter lint`, set a step's output, and `##[stop-commands]x` hid the
annotations after it (eighteenth read).

On a runner (`GITHUB_ACTIONS=true`) porter first stops the runner's processing of commands with
`::stop-commands::TOKEN` (GitHub's way to print untrusted text), on stderr, and resumes it with
`::TOKEN::` when it exits; the token is random, so no text in the tree can resume it. The
annotations of `--output-format github` are commands by design: that output resumes the
processing before them. The pause is said on stderr: a step that sends stderr elsewhere and
stdout to the log is not covered.
"""

from __future__ import annotations

import atexit
import os
import sys

_state: dict[str, str] = {}


def pause() -> None:
    """On a GitHub Actions runner, stop its processing of workflow commands until porter exits."""
    if os.environ.get("GITHUB_ACTIONS") != "true" or "token" in _state:
        return
    _state["token"] = os.urandom(16).hex()
    _say(f"::stop-commands::{_state['token']}")
    atexit.register(resume)


def resume() -> None:
    """Resume the runner's processing of commands (at exit; again is harmless: an unknown command)."""
    token = _state.get("token")
    if token is not None:
        _say(f"::{token}::")


def commands(text: str) -> str:
    """Lines the runner must read as commands (GitHub annotations on stdout): preceded, in the same
    stream, by the line that resumes the processing porter stopped."""
    token = _state.get("token")
    return text if token is None or not text else f"::{token}::\n{text}"


def _say(line: str) -> None:
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed or full: nothing to say it on
        pass
