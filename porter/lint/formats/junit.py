"""`junit`: JUnit XML. One test suite per file, one failing test case per finding group
(a rule code in a file), listing every site of it; a file that could not be checked is a test
case in error (JUnit's `errors`: it was a run of no test case, "no findings", a pass), and
so is one passed over for its size; a clean
run is one passing case."""

from __future__ import annotations

from itertools import groupby
from xml.etree import ElementTree as ET

from porter.lint.model import LintRun, rule_info
from porter.core.textsafe import located_name, xml, xml_document


def _file(shown: str) -> dict[str, str]:
    """The `file` attribute naming the file `shown`, or none where XML cannot hold its name: a
    name that is not UTF-8 or holds a character XML 1.0 forbids (`a\\x01b.py`) was written as
    its escaped text, the name of no file or of another one (`a\\xff.py`); the suite's name
    and the failure's text name it as the text formats show it (twenty-third read)."""
    name = located_name(shown)
    return {} if name is None or xml(name) != name else {"file": name}


def render(run: LintRun) -> str:
    root = ET.Element("testsuites", name="porter")
    total = failures = 0
    suites: dict[str, ET.Element] = {}  # one suite a file: its findings, and why it was not checked or written
    by_file = groupby(run.findings, key=lambda f: f.path)
    for raw_path, items in by_file:
        path = xml(raw_path)  # XML 1.0 cannot carry control characters, even escaped
        ordered = sorted(items, key=lambda f: (f.code, f.start))
        groups = [(code, list(g)) for code, g in groupby(ordered, key=lambda f: f.code)]
        suite = _suite(root, suites, path)
        suite.set("tests", str(int(suite.get("tests", "0")) + len(groups)))
        suite.set("failures", str(int(suite.get("failures", "0")) + len(groups)))
        for code, sites in groups:
            info = rule_info(code)
            case = ET.SubElement(
                suite,
                "testcase",
                {
                    "name": f"{code} {info.name}",
                    "classname": f"porter.{path}",
                    **_file(raw_path),
                    "line": str(sites[0].start.line),
                },
            )
            n = len(sites)
            failure = ET.SubElement(
                case, "failure", message=f"{n} {code} finding{'s' if n != 1 else ''}: {info.summary}", type=code
            )
            failure.text = "\n".join(
                f"{path}:{f.start.line}:{f.start.column + 1}: {f.code} {xml(f.message)}" for f in sites
            )
        total += len(groups)
        failures += len(groups)
    for result in run.unchecked:  # a test that could not run (SARIF: a notification)
        _error_case(
            _suite(root, suites, xml(result.path)),
            result.path,
            "not checked",
            result.reason or "not checked",
            result.error_line,
        )
    # --fix could not write the file (its failures above are the file's as it is): a run-level sign,
    # as SARIF's `executionSuccessful: false` (the XML counted no error beside an exit of 2)
    for raw_path, why in run.write_failures:
        _error_case(
            _suite(root, suites, xml(raw_path)), raw_path, "fix not written", f"{why}; its fixes are not applied", None
        )
    errors = len(run.unchecked) + len(run.write_failures)
    total += errors
    if total == 0:
        suite = ET.SubElement(root, "testsuite", name="porter", tests="1", failures="0", errors="0", skipped="0")
        ET.SubElement(suite, "testcase", name="no findings", classname="porter")
        total = 1
    root.set("tests", str(total))
    root.set("failures", str(failures))
    root.set("errors", str(errors))
    ET.indent(root)
    return xml_document('<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n")


def _suite(root: ET.Element, suites: dict[str, ET.Element], path: str) -> ET.Element:
    """The file's test suite, made at its first use: a file with findings and a fix not written had two
    suites of one name (`sub/a.py`), which a tool that keys suites by name merges or overwrites."""
    if path not in suites:
        suites[path] = ET.SubElement(root, "testsuite", name=path, tests="0", failures="0", errors="0", skipped="0")
    return suites[path]


def _error_case(suite: ET.Element, raw_path: str, name: str, why: str, line: int | None) -> None:
    """A test case in error for the file (JUnit's `errors`: it did not run as asked), in its suite."""
    path = xml(raw_path)
    suite.set("tests", str(int(suite.get("tests", "0")) + 1))
    suite.set("errors", str(int(suite.get("errors", "0")) + 1))
    case = ET.SubElement(suite, "testcase", {"name": name, "classname": f"porter.{path}", **_file(raw_path)})
    if line:
        case.set("line", str(line))
    ET.SubElement(case, "error", message=f"{path}: {xml(why)}", type="error")
