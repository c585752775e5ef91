"""A fingerprint hashes the finding's own line, numbered as Python numbers lines (CR LF, CR, LF):
a form feed or a line separator inside a line does not start a new one."""

from __future__ import annotations

import pytest

from porter.core.findings import Applicability, Finding, Position, Severity
from porter.lint.fingerprint import fingerprint_file


def _finding(line: int) -> Finding:
    return Finding(
        code="DEV001",
        name="cuda-call",
        message="m",
        path="a.py",
        start=Position(line, 0),
        end=Position(line, 8),
        severity=Severity.ERROR,
        applicability=Applicability.SAFE,
        target="neuron",
    )


@pytest.mark.parametrize("separator", ["\x0c", "\x0b", "\x1c", "\x85", "\u2028"])
def test_a_separator_inside_a_line_is_not_a_line_break(separator):
    # the finding is on line 2 in both: the separator sits inside line 1
    with_separator = f"x = 1{separator}# note\nx.cuda()\n".encode()
    with_space = b"x = 1 # note\nx.cuda()\n"
    got = fingerprint_file([_finding(2)], with_separator, "a.py")
    assert got == fingerprint_file([_finding(2)], with_space, "a.py")


def test_each_line_break_python_knows_ends_a_line():
    for source in (b"x = 1\nx.cuda()\n", b"x = 1\r\nx.cuda()\r\n", b"x = 1\rx.cuda()\r"):
        assert fingerprint_file([_finding(2)], source, "a.py") == fingerprint_file(
            [_finding(2)], b"x = 1\nx.cuda()\n", "a.py"
        )
