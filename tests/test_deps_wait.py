"""The wait for what `.ci/run` is still installing (tests/deps.py): a test that needs torch
runs once the installs have ended, and fails, saying why, if they failed."""

from __future__ import annotations

import threading

import pytest

from tests import deps


def test_no_wait_outside_ci(monkeypatch):
    monkeypatch.delenv(deps.INSTALLING, raising=False)
    slept = []
    monkeypatch.setattr(deps.time, "sleep", slept.append)
    deps.wait_for_installs()
    assert slept == []  # (not a bound in seconds: whether it waited at all)


def test_waits_until_the_installs_end(monkeypatch, tmp_path):
    flag = tmp_path / "installs-ended"
    monkeypatch.setenv(deps.INSTALLING, str(flag))
    timer = threading.Timer(1.5, flag.write_text, args=("ok\n",))
    timer.start()
    deps.wait_for_installs()
    assert flag.exists()  # it returned once the installs had ended, not before
    timer.join()


def test_failed_installs_fail_the_test_with_the_reason(monkeypatch, tmp_path):
    flag = tmp_path / "installs-ended"
    flag.write_text("installing .venv-tpu failed: no space left on device\n")
    monkeypatch.setenv(deps.INSTALLING, str(flag))
    with pytest.raises(pytest.fail.Exception, match="no space left on device"):
        deps.require("os")
    with pytest.raises(pytest.fail.Exception, match="no space left on device"):
        deps.tpu_python()


def test_installs_that_never_end_fail_at_the_limit(monkeypatch, tmp_path):
    monkeypatch.setenv(deps.INSTALLING, str(tmp_path / "never"))
    monkeypatch.setattr(deps, "INSTALL_WAIT_S", 1)
    with pytest.raises(pytest.fail.Exception, match="did not end within 1 s"):
        deps.wait_for_installs()
