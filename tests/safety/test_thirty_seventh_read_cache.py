"""The thirty-seventh read of the cache and the readers it keys (cache): each reader against the tool that reads
the file (pip 23.2.1's `ConfigOptionParser` for a pip configuration file: `PIP_CONFIG_FILE=pip.conf pip install
--dry-run` with a pins file holding an extra: "DEPRECATION: Constraints are only allowed to take the form of a package
name and a version specifier"), and each warm run against a cold one (`--no-cache`)."""

from __future__ import annotations

import pytest

from porter.files.deps.tox_ini import config_constraints
from tests.safety.test_thirty_third_read_cache2 import _run

_PINS = {
    "requirements-pins.txt": "torch==2.9.0\n",
    "requirements.txt": "torch\n",
    "m.py": "import torch\nx = torch.zeros(2).cuda()\n",
}


def _dep004(results, name):
    return [f for f in results[name].findings if f.code == "DEP004"]


# pip 23.2.1 names a configuration file's key as its option (`configuration._normalize_name`: lowercased, `_` as
# `-`, a leading `--` dropped): each of these is `--constraint`, and pip read the pins as constraints
_SPELLED = {
    "dashes": ("pip.conf", "[global]\n--constraint = requirements-pins.txt\n", 2),
    "underscores": (
        "pip.conf",
        "[global]\nindex-url = https://pypi.org/simple\n__constraint = requirements-pins.txt\n",
        3,
    ),
    "mixed-install": ("pip.ini", "[install]\n-_Constraint: requirements-pins.txt\n", 2),
}


@pytest.mark.parametrize("name, text, line", list(_SPELLED.values()), ids=list(_SPELLED))
def test_a_constraint_key_spelled_as_pip_reads_it_names_the_pins(tmp_path, name, text, line):
    """`--constraint = requirements-pins.txt` in pip.conf: pip 23.2.1 reads the pins as constraints (its
    deprecation for the extra), porter read only a key spelled `constraint` and added `torch-xla[tpu]==2.9.0`
    there. Now the key is named as pip names it: the DEP004 is reported at that line, not added."""
    [found] = _dep004(_run(tmp_path, {**_PINS, name: text}, target="xla"), "requirements-pins.txt")
    assert found.replacement is None and f"{name}:{line} (its `constraint`) names this file" in found.advice, found


def test_a_key_pip_reads_as_another_option_keeps_the_edit(tmp_path):
    """Controls: `-constraint` (one dash: pip's option `---constraint`, none), `- -constraint`, `constraints`, `c`
    (pip asks for `--c`): pip 23.2.1 reads no constraints there, and the pins are edited as before."""
    for i, key in enumerate(["-constraint", "- -constraint", "constraints", "c"]):
        text = f"[global]\n{key} = requirements-pins.txt\n"
        assert config_constraints(text) == [], key
        [found] = _dep004(_run(tmp_path / f"k{i}", {**_PINS, "pip.conf": text}, target="xla"), "requirements-pins.txt")
        assert found.replacement, (key, found)


def test_each_constraint_key_is_read_at_its_line():
    """pip keeps one of two keys that both name `--constraint` (the last it reads); porter reports each, at its own
    line (a pins file either one names takes no extra)."""
    text = "[global]\nconstraint = a.txt\n--constraint = b.txt\n[install]\n__CONSTRAINT: c.txt d.txt\n"
    assert config_constraints(text) == [
        ("a.txt", 2, " (its `constraint`)"),
        ("b.txt", 3, " (its `constraint`)"),
        ("c.txt", 5, " (its `constraint`)"),
        ("d.txt", 5, " (its `constraint`)"),
    ]


SCRIPT = 'import torch\nimport cuda\n\nx = torch.ones(2, device="cuda")\ncuda.sync()\n'
_OWN = "def sync():\n    return 0\n"


def _lint(root, files, exclude=(), cache=False):
    """`porter lint <root>` (with `--exclude` patterns): each Python file's codes, by its path below `root`."""
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    results = run([root], Settings(target="tpu", exclude=tuple(exclude)), jobs=1, cache=cache)[0]
    return {str(r.path).replace("\\", "/").split(root.name + "/", 1)[-1]: [f.code for f in r.findings] for r in results}


@pytest.mark.parametrize(
    "own, given, exclude",
    [
        ("cuda.py", "train.py", ["cuda.py"]),
        ("cuda/__init__.py", "train.py", ["cuda/"]),
        ("cuda.py", "pkg/model.py", ["cuda.py"]),
        ("cuda.py", "train.py", ["*.py", "!train.py"]),
    ],
    ids=["module", "package", "package-module", "negated"],
)
def test_an_own_module_the_run_leaves_out_is_still_what_python_imports(tmp_path, own, given, exclude):
    """`porter lint . --exclude cuda.py` (or a git-ignored, generated `cuda.py`): `python train.py` still imports the
    project's `cuda.py` (find_spec: it is the file beside the script). porter read the own module from the run's
    candidates only and said cuda-python (KERN003 at the import, GUARD004 keeping `"cuda"`); the file given alone
    read the disk and said DEV002. Now the folders Python looks in are read off the disk in a project run too."""
    files = {own: _OWN, "pkg/__init__.py": "", given: SCRIPT}
    assert _lint(tmp_path / "proj", files, exclude)[given] == ["DEV002"]


def test_an_own_module_elsewhere_left_out_is_no_own_module(tmp_path):
    """The control: an excluded `other/cuda.py` is not on the script's path; `import cuda` is cuda-python."""
    files = {"other/cuda.py": _OWN, "train.py": SCRIPT}
    assert _lint(tmp_path / "proj", files, ["other/"])["train.py"] == ["KERN003", "GUARD004"]


def test_a_warm_run_follows_a_left_out_own_module_on_the_disk(tmp_path, monkeypatch):
    """The cache: the own modules are read off the disk each run and keyed with the settings; a warm run after the
    excluded `cuda.py` is removed says cuda-python again, and after it is back, DEV002 again."""
    monkeypatch.setenv("PORTER_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "proj"
    files = {"cuda.py": _OWN, "train.py": SCRIPT}
    assert _lint(root, files, ["cuda.py"], cache=True)["train.py"] == ["DEV002"]
    (root / "cuda.py").unlink()
    assert _lint(root, {}, ["cuda.py"], cache=True)["train.py"] == ["KERN003", "GUARD004"]
    assert _lint(root, {"cuda.py": _OWN}, ["cuda.py"], cache=True)["train.py"] == ["DEV002"]


_IMAGE = "FROM python:3.11\nCOPY docker/pip.conf /etc/pip.conf\nCOPY . /app\nWORKDIR /app\nRUN pip install -r requirements.txt\n"
_SITE = "[global]\nconstraint = /app/requirements-pins.txt\n"


@pytest.mark.parametrize(
    "files",
    [
        {"docker/Dockerfile": _IMAGE, "docker/pip.conf": _SITE},
        {
            ".github/workflows/ci.yml": "on: push\njobs:\n  t:\n    runs-on: x\n    env:\n      PIP_CONFIG_FILE: "
            ".github/pip.ini\n    steps:\n      - run: pip install -r requirements.txt\n",
            ".github/pip.ini": _SITE,
        },
        {
            "scripts/setup.sh": "#!/bin/sh\nPIP_CONFIG_FILE=scripts/pip.conf pip install -r requirements.txt\n",
            "scripts/pip.conf": _SITE,
        },
    ],
    ids=["copied-to-etc", "workflow-config-file", "script-config-file"],
)
def test_a_pip_configuration_beside_what_runs_pip_names_the_pins(tmp_path, files):
    """`COPY docker/pip.conf /etc/pip.conf` (pip 23.2.1 reads its site configuration there: `site_config_dirs`,
    `/etc/xdg/pip` and `/etc`; with `constraint` naming pins that hold `torch-xla[tpu]`: "ERROR: Constraints cannot
    have extras"), or a `PIP_CONFIG_FILE` naming one beside the workflow or script: porter read a pip.conf only in a
    requirements file's folder or above it, and added the extra to the pins. Now one beside (or above) a Dockerfile,
    script, compose file or workflow is read too: the DEP004 is reported there, not added."""
    [found] = _dep004(_run(tmp_path, {**_PINS, **files}, target="xla"), "requirements-pins.txt")
    config = next(n for n in files if n.endswith(("pip.conf", "pip.ini")))
    assert found.replacement is None and f"{config}:2 (its `constraint`) names" in found.advice, found


def test_a_pip_configuration_away_from_what_runs_pip_keeps_the_edit(tmp_path):
    """The control: a pip.conf in a folder that holds nothing porter reads (`docs/pip.conf`, nothing above or beside
    a Dockerfile, script or requirements file) is not looked for, and the pins are edited as before; so is a pip.conf
    beside the Dockerfile that names no constraint."""
    files = {"docs/pip.conf": _SITE, "docs/readme.md": "x\n"}
    [found] = _dep004(_run(tmp_path / "a", {**_PINS, **files}, target="xla"), "requirements-pins.txt")
    assert found.replacement, found
    files = {"docker/Dockerfile": _IMAGE, "docker/pip.conf": "[global]\nindex-url = https://pypi.org/simple\n"}
    [found] = _dep004(_run(tmp_path / "b", {**_PINS, **files}, target="xla"), "requirements-pins.txt")
    assert found.replacement, found


def test_a_warm_run_reads_a_pip_configuration_made_beside_the_dockerfile(tmp_path, monkeypatch):
    """The cache: the roles are in the settings every key hashes; a warm run after `docker/pip.conf` is written
    reports the DEP004 (not the cold run's edit), and after it is removed, edits again."""
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    monkeypatch.setenv("PORTER_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "p"
    for name, text in {**_PINS, "docker/Dockerfile": _IMAGE}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)

    def pins():
        results = run([root], Settings(target="xla"), jobs=1, cache=True)[0]
        [found] = [f for r in results if r.path.endswith("requirements-pins.txt") for f in r.findings]
        return found.replacement

    assert pins()
    (root / "docker/pip.conf").write_text(_SITE)
    assert pins() is None
    (root / "docker/pip.conf").unlink()
    assert pins()


_CONFIG_SET = {
    "dockerfile": (
        "Dockerfile",
        "FROM python:3.11\nCOPY . /app\nWORKDIR /app\nRUN pip config set global.constraint /app/requirements-pins.txt\n"
        "RUN pip install -r requirements.txt\n",
    ),
    "script-user-install": (
        "setup.sh",
        "#!/bin/sh\npython -m pip config --user set install.Constraint requirements-pins.txt\npip install -r requirements.txt\n",
    ),
    "workflow-section-case": (
        ".github/workflows/ci.yml",
        "on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n      - run: pip3 config set Global.__constraint "
        "requirements-pins.txt\n      - run: pip install -r requirements.txt\n",
    ),
}


@pytest.mark.parametrize("name, text", list(_CONFIG_SET.values()), ids=list(_CONFIG_SET))
def test_pip_config_set_constraint_names_the_pins(tmp_path, name, text):
    """`pip config set global.constraint requirements-pins.txt` writes pip's configuration; every later `pip install`
    reads the pins as constraints (pip 23.2.1, in a HOME of its own: "ERROR: Constraints cannot have extras" once the
    pins hold `torch-xla[tpu]`; `install.`, `Global.`, `__constraint` too: `pip config` lowercases the name). porter
    read no `pip config` and added the extra. Now the command names the file as `PIP_CONSTRAINT` does."""
    [found] = _dep004(_run(tmp_path, {**_PINS, name: text}, target="xla"), "requirements-pins.txt")
    assert found.replacement is None and "names" in found.advice and "pip config set" in found.advice, found


def test_a_pip_config_command_that_sets_no_install_constraint_keeps_the_edit(tmp_path):
    """Controls: `pip config set global.index-url`, `pip config get global.constraint`, `pip config unset ...`,
    `pip config set freeze.constraint` (no section `pip install` reads: pip read no constraints there)."""
    for i, command in enumerate(
        [
            "set global.index-url https://pypi.org/simple",
            "get global.constraint",
            "unset global.constraint",
            "set freeze.constraint requirements-pins.txt",
        ]
    ):
        files = {**_PINS, "setup.sh": f"#!/bin/sh\npip config {command}\npip install -r requirements.txt\n"}
        [found] = _dep004(_run(tmp_path / f"c{i}", files, target="xla"), "requirements-pins.txt")
        assert found.replacement, (command, found)
