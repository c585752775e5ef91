"""The thirty-sixth read's second wave on the dependency leftovers (cdleft2): what cdleft left, each read against
the tool that reads the file (tox 4.11.4 runs `pip install -r requirements.txt -c requirements-pins.txt` for a
`deps` of `-c requirements-pins.txt`; pip 23.2.1: "ERROR: Constraints cannot have extras")."""

from __future__ import annotations

import pytest

from tests.safety.test_thirty_second_read_cache import _pins_dep004_findings
from tests.safety.test_thirty_third_read_cache2 import _run

_PINS = {
    "requirements-pins.txt": "torch==2.9.0\n",
    "requirements.txt": "torch\n",
    "m.py": "import torch\nx = torch.zeros(2).cuda()\n",
}
_TOX = "[tox]\nenvlist = py311\n\n[testenv]\ndeps =\n{deps}commands = pytest\n"


def _dep004(results, name):
    return _codes(results[name], "DEP004")


def _codes(result, code):
    return [f for f in result.findings if f.code == code]


_NAMED_BY_TOX = {
    "c": "    -c requirements-pins.txt\n    -r requirements.txt\n",
    "toxinidir": "    -c {toxinidir}/requirements-pins.txt\n    -r {toxinidir}/requirements.txt\n",
    "glued-factor": "    py311,lint: -crequirements-pins.txt\n    -r requirements.txt\n",
    "long-option": "    pytest  # the runner\n    --constraint=requirements-pins.txt\n",
}


@pytest.mark.parametrize("deps", list(_NAMED_BY_TOX.values()), ids=list(_NAMED_BY_TOX))
def test_a_file_tox_ini_names_with_c_takes_no_target_package(tmp_path, deps):
    """tox 4 hands a test environment's `deps` to pip as a requirements file at tox.ini's path: `tox -e py311`
    ran `pip install -r requirements.txt -c requirements-pins.txt`. porter never read tox.ini (no kind it
    finds), so its fix added `torch-xla[tpu]==2.9.0` to requirements-pins.txt, and tox failed: "ERROR:
    Constraints cannot have extras". Now no DEP004 there; requirements.txt (control) still takes the packages."""
    results = _run(tmp_path, {**_PINS, "tox.ini": _TOX.format(deps=deps)}, target="xla")
    assert _dep004(results, "requirements-pins.txt") == []
    [added] = _dep004(results, "requirements.txt")
    assert added.replacement, added


def test_a_file_tox_ini_installs_and_constrains_is_reported_not_edited(tmp_path):
    """`deps = -r requirements-pins.txt` and `-c requirements-pins.txt` in another environment, or tox's
    `commands = pip install -c requirements-pins.txt ...`: pip may install it and reads it as constraints too;
    the DEP004 is due and no edit (it was an edit, the extra pip refuses)."""
    tox = "[testenv]\ndeps = -r requirements-pins.txt\n[testenv:pinned]\ndeps = -c requirements-pins.txt\n"
    [found] = _dep004(_run(tmp_path / "both", {**_PINS, "tox.ini": tox}, target="xla"), "requirements-pins.txt")
    assert found.replacement is None and "tox.ini names this file with `-c`" in (found.advice or ""), found
    tox = "[testenv]\ndeps = -r requirements-pins.txt\ncommands = pip install -c requirements-pins.txt -e .\n"
    [found] = _dep004(_run(tmp_path / "commands", {**_PINS, "tox.ini": tox}, target="xla"), "requirements-pins.txt")
    assert found.replacement is None and "tox.ini:3 names this file with `-c`" in (found.advice or ""), found


def test_a_tox_ini_that_names_no_constraints_changes_nothing(tmp_path):
    """Guards: `-r` only, a `-c` in a comment, a `-c` of another section than a test environment's, and a
    tox.ini configparser refuses (tox does too): the pins file is a requirements file, edited as before."""
    for i, tox in enumerate(
        [
            "[testenv]\ndeps = -r requirements-pins.txt\n",
            "[testenv]\ndeps =\n    # -c requirements-pins.txt\n    pytest  # -c requirements-pins.txt\n",
            "[tox]\nrequires = -c requirements-pins.txt\n",
            "deps = -c requirements-pins.txt\n",
        ]
    ):
        [found] = _dep004(
            _run(tmp_path / f"guard-{i}", {**_PINS, "tox.ini": tox}, target="xla"), "requirements-pins.txt"
        )
        assert found.replacement, (tox, found)


def test_a_tox_ini_above_the_requirements_folder_is_read(tmp_path):
    """tox.ini at the project's top, `deps = -c requirements/pins.txt`: the path is from tox.ini's folder."""
    files = {"requirements/pins.txt": "torch==2.9.0\n", "m.py": _PINS["m.py"]}
    results = _run(tmp_path, {**files, "tox.ini": "[testenv]\ndeps = -c requirements/pins.txt\n"}, target="xla")
    assert _dep004(results, "requirements/pins.txt") == []


def test_a_warm_run_reads_an_edited_tox_ini(tmp_path):
    """The cache: requirements-pins.txt's bytes do not change when tox.ini starts or stops naming it with `-c`;
    each warm run reads tox.ini anew (its roles are in the pins file's settings, which every cache key hashes)."""
    for name, text in _PINS.items():
        (tmp_path / name).write_text(text)
    tox = tmp_path / "tox.ini"
    tox.write_text("[testenv]\ndeps = -r requirements.txt\n")
    assert [f.fixable for f in _pins_dep004_findings(tmp_path)] == [True]
    tox.write_text("[testenv]\ndeps = -r requirements.txt\n    -c requirements-pins.txt\n")
    assert _pins_dep004_findings(tmp_path) == []
    tox.write_text("[testenv]\ndeps = -r requirements.txt\n")
    assert [f.fixable for f in _pins_dep004_findings(tmp_path)] == [True]


_CU121 = "https://download.pytorch.org/whl/cu121"
_HEREDOC_SCRIPTS = {
    "c-cat": f"bash -c \"$(cat <<'EOF'\necho one\npip install torch --index-url {_CU121}\nEOF\n)\"\n",
    "c-cat-args": f"sh -c \"$(cat <<'EOF'\npip install torch --index-url {_CU121}\nEOF\n)\" name arg\n",
    "stdin": f"bash <<'EOF'\npip install torch --index-url {_CU121}\nEOF\n",
    "sh-s": f"sh -s <<EOF\npip install torch --index-url {_CU121}\nEOF\n",
}


@pytest.mark.parametrize("script", list(_HEREDOC_SCRIPTS.values()), ids=list(_HEREDOC_SCRIPTS))
def test_a_here_document_a_shell_runs_is_read_as_its_script(tmp_path, script):
    """bash 5.2 and dash run the here-document's lines: `bash -c "$(cat <<'EOF' ... EOF)"` (the command
    substitution writes the script), `bash <<'EOF'`, `sh -s <<EOF` each ran `pip install torch --index-url
    .../cu121` (a fake `pip` printed its words: `heredoc36.sh`). porter read the body as `cat`'s or the shell's
    input: "All checks passed!". Now DEP002 at the URL, edited in place (the rewritten script ran pip without it)."""
    [found] = _codes(_run(tmp_path, {"run.sh": script}, target="xla")["run.sh"], "DEP002")
    line = script.splitlines()[found.start.line - 1]
    assert line[found.start.column :].startswith(f" --index-url {_CU121}"), (line, found)
    assert found.replacement == "", found


def test_a_here_document_no_shell_runs_or_one_it_changes_is_not_edited(tmp_path):
    """Guards (bash and dash as the oracle): `cat <<'EOF' > notes.txt` and `bash script.bash <<'EOF'` (the body is
    input) and `python3 - <<'EOF'` run no pip; `bash -c $(cat <<'EOF' ...)` unquoted runs `pip` alone (the output is
    split into words); `<<-` strips tabs and an unquoted delimiter reads `\\` escapes: reported, not edited."""
    body = f"pip install torch --index-url {_CU121}\n"
    none = {
        "notes.sh": f"cat <<'EOF' > notes.txt\n{body}EOF\n",
        "input.sh": f"bash script.bash <<'EOF'\n{body}EOF\n",
        "python.sh": f"python3 - <<'EOF'\nprint('{body.strip()}')\nEOF\n",
        "split.sh": f"bash -c $(cat <<'EOF'\n{body}EOF\n)\n",
    }
    reported = {
        "dashed.sh": f"bash -c \"$(cat <<-'EOF'\n\t{body}\tEOF\n)\"\n",
        "escaped.sh": f"sh <<EOF\npip install torch \\\n  --index-url {_CU121}\nEOF\n",
    }
    results = _run(tmp_path, {**none, **reported}, target="xla")
    assert {name: _codes(results[name], "DEP002") for name in none} == {name: [] for name in none}
    for name in reported:
        [found] = _codes(results[name], "DEP002")
        assert found.replacement is None, (name, found)


_PIP_CONFIGS = {
    "global": ("pip.conf", "[global]\nconstraint = requirements-pins.txt\n", 2),
    "install-list": ("pip.ini", "[install]\nconstraint =\n    other.txt\n    requirements-pins.txt\n", 2),
}


@pytest.mark.parametrize("name, text, line", list(_PIP_CONFIGS.values()), ids=list(_PIP_CONFIGS))
def test_a_file_a_pip_configuration_names_as_its_constraint_is_reported_not_edited(tmp_path, name, text, line):
    """pip 23.2.1 reads `constraint` of a configuration file's `[global]` or `[install]` as `-c` (`PIP_CONFIG_FILE=
    pip.conf pip install torch` with the port's pins: "ERROR: Constraints cannot have extras"); a Dockerfile's `COPY
    pip.conf /etc/pip.conf` makes it the image's pip's. porter never read it and added the extra to the pins. The
    path is from pip's working folder: matched by its file name, the DEP004 reported there, not added."""
    [found] = _dep004(_run(tmp_path, {**_PINS, name: text}, target="xla"), "requirements-pins.txt")
    assert found.replacement is None and f"{name}:{line} (its `constraint`) names this file" in found.advice, found


def test_a_pip_configuration_without_an_install_constraint_changes_nothing(tmp_path):
    """Guards: an index only, `constraint` in `[freeze]` (no section `pip install` reads), a file configparser
    refuses: the pins file is edited as before."""
    for i, text in enumerate(
        ["[global]\nindex-url = https://pypi.org/simple\n", "[freeze]\nconstraint = requirements-pins.txt\n", "x\n"]
    ):
        [found] = _dep004(
            _run(tmp_path / f"conf-{i}", {**_PINS, "pip.conf": text}, target="xla"), "requirements-pins.txt"
        )
        assert found.replacement, (text, found)
