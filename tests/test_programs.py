"""tests/programs.py runs programs in one long-lived process as if each ran alone: its own
argv, working directory, environment and modules from its folder, and a failure that stays
its own."""

from __future__ import annotations

from pathlib import Path

from tests.programs import run_programs

MAIN = """\
import os
import sys

import helper

print(helper.NAME, os.environ.get("SET_BY_AN_EARLIER_PROGRAM", "clean"), sys.argv[1:], os.getcwd(), __name__)
os.environ["SET_BY_AN_EARLIER_PROGRAM"] = "1"
if sys.argv[1] == "fail":
    raise ValueError("this one fails")
if sys.argv[1] == "exit":
    sys.exit(3)
"""


def _program(root: Path, name: str) -> Path:
    root.mkdir()
    (root / "helper.py").write_text(f"NAME = {name!r}\n")
    (root / "main.py").write_text(MAIN)
    return root / "main.py"


def test_each_program_runs_as_if_alone(tmp_path):
    first, second = _program(tmp_path / "a", "first"), _program(tmp_path / "b", "second")
    runs = run_programs(
        [(first, ["fail"], tmp_path / "a"), (second, ["exit"], tmp_path / "b"), (first, ["ok"], tmp_path)], tmp_path
    )
    # each imports the helper.py beside it, not the one an earlier program left loaded, and
    # sees the environment the runner started with
    assert [r.stdout.split()[:2] for r in runs] == [["first", "clean"], ["second", "clean"], ["first", "clean"]]
    assert [r.stdout.split()[-2:] for r in runs] == [
        [str(tmp_path / "a"), "__main__"],
        [str(tmp_path / "b"), "__main__"],
        [str(tmp_path), "__main__"],
    ]
    assert "['fail']" in runs[0].stdout and "['ok']" in runs[2].stdout
    # a failure is its program's own: the traceback kept, the next program run
    assert runs[0].rc == 1 and "ValueError: this one fails" in runs[0].stderr
    assert runs[1].rc == 3 and runs[2].rc == 0 and runs[2].stderr == ""
