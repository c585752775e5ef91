"""The thirty-first read's helper on the cache and terminal leftovers of the thirtieth (ctleft, issue 24):
docs/reads/49-ctleft-attempts.md."""

from __future__ import annotations

import json

from tests.safety.conftest import CUDA, porter


def test_a_sarif_run_whose_fix_could_not_be_written_is_not_said_successful(tmp_path):
    """`lint --fix --output-format sarif` where one file's fix could not be written (read-only):
    the run left with 2, but its SARIF said `"executionSuccessful": true` with no notification, so a
    consumer of the document read a run that did what it was asked. Now false, with the file and why."""
    (tmp_path / "m.py").write_bytes(CUDA)
    (tmp_path / "m.py").chmod(0o444)
    (tmp_path / "n.py").write_bytes(CUDA)
    done = porter("lint", "--fix", ".", "-t", "xla", "--allow-no-vcs", "--no-cache", "--output-format", "sarif", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    invocation = json.loads(done.stdout)["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "error"
    assert note["message"]["text"].startswith("m.py: its fixes were not written (no write permission")
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "m.py"
    assert (tmp_path / "m.py").read_bytes() == CUDA
