"""The thirty-fourth read's second wave on the recorder and trace compare (helper `trace2`,
docs/reads/52-trace2-attempts.md): each test failed on 862af2d1 on the wrong outcome. The recorded
programs write their own losses (torch.testing.assert_close is the oracle)."""

import importlib.util
import sys

import pytest

from tests.deps import need


def _raised_from(tmp_path, body: str, call: str = "run"):
    """The exception `body`'s `call()` raises, `body` run as the program's train.py under `tmp_path`."""
    (tmp_path / "train.py").write_text(body)
    spec = importlib.util.spec_from_file_location("trace2_train_34", tmp_path / "train.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(Exception) as info:
        getattr(module, call)()
    sys.modules.pop("trace2_train_34", None)
    return info.value


def test_an_exception_porter_s_own_code_raises_is_said_as_porter_s(tmp_path):
    """An exception raised by porter's own code while the program ran (its recorder's
    `recorder.pending[-1]`, the thirty-fourth trace read's IndexError) was described at the
    program's line that called into porter, `in_user_code: True`: the user was sent to their own
    correct `loss.backward()`. It is said at porter's frame, as porter's defect."""
    from porter.verify.worker import describe_exception

    exc = _raised_from(tmp_path, "from porter.verify.listed import listed_prefixes\ndef run():\n    listed_prefixes(None)\n")
    said = describe_exception(exc, str(tmp_path))
    assert said["in_user_code"] is False, said
    assert said["location"].startswith("porter/verify/listed.py:"), said
    assert "porter's own code" in said["message"] and "train.py:3" in said["message"], said


def test_the_program_s_exceptions_through_porter_stay_the_program_s(tmp_path):
    """What porter raises on purpose (a `raise` statement: its word on the program) and what the
    program's own code raises under porter's frames stay the program's, at its line."""
    from porter.verify.worker import describe_exception

    body = (
        "from porter.verify.launch import run_user_command\n"
        "def run():\n    run_user_command([])\n"
        "def own():\n    run_user_command(['-c', '[][1]'])\n"
    )
    said = describe_exception(_raised_from(tmp_path, body), str(tmp_path))
    assert (said["location"], said["in_user_code"], said["message"]) == ("train.py:3", True, "no Python command to run")
    said = describe_exception(_raised_from(tmp_path, body, "own"), str(tmp_path))
    assert (said["location"], said["in_user_code"]) == ("train.py:5", True), said
    assert said["type"] == "IndexError" and "porter" not in said["message"], said
