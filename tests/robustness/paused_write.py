"""`python -m porter ARGS`, held at a known point of its K-th in-place write.

Usage: `python paused_write.py K ARGS...`. porter.pipeline.writer._current is called after the
temporary file is written and flushed and just before the rename; on its K-th call this
prints `paused PATH` on stdout and waits for a line on stdin, so the test signals porter at
that exact point instead of after a guessed sleep.
"""

import sys

import porter.pipeline.writer as writer
from porter.cli import main

K = int(sys.argv[1])
_real = writer._current
_calls = 0


def _pausing(path):
    global _calls
    _calls += 1
    if _calls == K:
        print(f"paused {path}", flush=True)
        sys.stdin.readline()
    return _real(path)


writer._current = _pausing
sys.argv = ["porter", *sys.argv[2:]]
main()
