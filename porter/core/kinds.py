"""Which kind of file a name is: the kinds porter reads besides Python, told by name alone.

A run never opens a file to learn its kind (discovery stays a walk of names). A kind's porter
may still decide from the content that a file is not its business (a YAML file that is no
accelerate or Lightning config is checked for CUDA values only).

`PORTER_FILE_KINDS` (comma-separated kinds, or `python`) narrows what discovery finds: what
the other kinds cost a run is measured by switching them off (benchmarks/bench_lint_real.py).
"""

from __future__ import annotations

import os
import re
from functools import lru_cache

PYTHON = "python"
REQUIREMENTS = "requirements"  # requirements*.txt, constraints*.txt, requirements/*.txt, *.in
PYPROJECT = "pyproject"  # pyproject.toml: dependency tables (and tool configs); uv.toml, hatch.toml (`TOOL_FILES`)
SETUP_CFG = "setup-cfg"  # setup.cfg: install_requires, extras_require
SETUP_PY = "setup-py"  # setup.py: Python, and the requirement strings it passes to setup()
CONDA = "conda"  # environment*.yml
DOCKERFILE = "dockerfile"  # Dockerfile, Dockerfile.*, *.Dockerfile, Containerfile
COMPOSE = "compose"  # docker-compose*.yml, compose*.yml
SHELL = "shell"  # *.sh, *.bash, Slurm batch files
MAKEFILE = "makefile"  # Makefile, *.mk
YAML = "yaml"  # other *.yml / *.yaml: configs
JSON = "json"  # *.json: configs (DeepSpeed, ...)
TOML = "toml"  # other *.toml: configs
NOTEBOOK = "notebook"  # *.ipynb

FILE_KINDS = (
    REQUIREMENTS,
    PYPROJECT,
    SETUP_CFG,
    SETUP_PY,
    CONDA,
    DOCKERFILE,
    COMPOSE,
    SHELL,
    MAKEFILE,
    YAML,
    JSON,
    TOML,
    NOTEBOOK,
)
# what a kind's findings say the file is, in messages and reports
LABELS = {
    PYTHON: "Python",
    REQUIREMENTS: "requirements file",
    PYPROJECT: "pyproject.toml",
    SETUP_CFG: "setup.cfg",
    SETUP_PY: "setup.py",
    CONDA: "conda environment file",
    DOCKERFILE: "Dockerfile",
    COMPOSE: "compose file",
    SHELL: "shell script",
    MAKEFILE: "Makefile",
    YAML: "YAML file",
    JSON: "JSON file",
    TOML: "TOML file",
    NOTEBOOK: "notebook",
}

_REQUIREMENTS = re.compile(r"(?:.*[-_.])?(?:requirements|constraints|reqs)(?:[-_.].*)?\.(?:txt|in)", re.IGNORECASE)
_REQUIREMENTS_FOLDERS = frozenset({"requirements", "reqs", "requirement"})
_CONDA = re.compile(r"(?:environment|conda[-_.]?env(?:ironment)?|conda)(?:[-_.].*)?\.ya?ml", re.IGNORECASE)
_COMPOSE = re.compile(r"(?:docker-)?compose(?:[-_.].*)?\.ya?ml", re.IGNORECASE)
_DOCKERFILE = re.compile(r"(?:dockerfile|containerfile)(?:[-_.].*)?|.+\.dockerfile", re.IGNORECASE)
_SHELL_SUFFIXES = (".sh", ".bash", ".slurm", ".sbatch")
_MAKEFILES = frozenset({"Makefile", "makefile", "GNUmakefile"})
# suffixes that may name one of the kinds above (a first, cheap test in discovery)
_SUFFIXES = (".py", ".pyi", ".txt", ".in", ".toml", ".cfg", ".yml", ".yaml", ".json", ".ipynb", ".mk", *_SHELL_SUFFIXES)


def _enabled_kinds() -> frozenset[str]:
    value = os.environ.get("PORTER_FILE_KINDS", "").strip()
    if not value:
        return frozenset((PYTHON, *FILE_KINDS))
    return frozenset(k.strip() for k in value.split(",") if k.strip()) | {PYTHON}


@lru_cache(maxsize=8)
def _enabled(env: str) -> frozenset[str]:
    return _enabled_kinds()


def enabled_kinds() -> frozenset[str]:
    """The kinds this run reads (all of them unless `PORTER_FILE_KINDS` says otherwise)."""
    return _enabled(os.environ.get("PORTER_FILE_KINDS", ""))


def unknown_kinds() -> list[str]:
    """The names in `PORTER_FILE_KINDS` that are no kind porter reads: a typo (`requirement`,
    `Shell`) left every kind but Python out, unsaid."""
    return sorted(enabled_kinds() - {PYTHON, *FILE_KINDS})


# files that hold one tool's table of pyproject.toml at their top, by the exact name the tool looks for: uv reads
# `uv.toml` as `[tool.uv]` (uv 0.13.9: "Found project configuration in uv.toml"), hatch `hatch.toml` as `[tool.hatch]`
# (hatch 1.18.2 `env show --json`), pixi `pixi.toml` as `[tool.pixi]`; read as pyproject.toml's tables
# (porter.files.deps.pyproject)
TOOL_FILES = {"uv.toml": "uv", "hatch.toml": "hatch", "pixi.toml": "pixi"}


def kind_of(name: str) -> str | None:
    """The kind of the file at `name` (a path or a bare name), or None when porter reads no
    such file. `.py`/`.pyi` are Python (setup.py is Python with requirement strings)."""
    kind = _named(name)
    if kind is None or kind == PYTHON:
        return kind
    return kind if kind in enabled_kinds() else None


@lru_cache(maxsize=65536)
def _named(name: str) -> str | None:
    """`_kind` of a name, once per name in a process: a run asks it of each file several times."""
    return _kind(name.rsplit("/", 1)[-1], name)


def _kind(base: str, name: str) -> str | None:
    lower = base.lower()
    if lower.endswith((".py", ".pyi")):
        return SETUP_PY if base == "setup.py" else PYTHON
    if lower.endswith(".ipynb"):
        return NOTEBOOK
    if base in _MAKEFILES or lower.endswith(".mk"):
        return MAKEFILE
    if lower.endswith(_SHELL_SUFFIXES):
        return SHELL
    if lower == "pyproject.toml" or base in TOOL_FILES:
        return PYPROJECT
    if lower == "setup.cfg":
        return SETUP_CFG
    return _data_kind(base, lower, name)


def _data_kind(base: str, lower: str, name: str) -> str | None:
    """The kinds told apart by suffix and then by name (YAML: compose and conda files;
    requirements by name or folder), and Dockerfiles."""
    if lower.endswith((".yml", ".yaml")):
        if _COMPOSE.fullmatch(base):
            return COMPOSE
        if _CONDA.fullmatch(base):
            return CONDA
        return YAML
    if lower.endswith((".txt", ".in")):
        if _REQUIREMENTS.fullmatch(base):
            return REQUIREMENTS
        parent = name.rsplit("/", 2)[-2] if name.count("/") else ""
        return REQUIREMENTS if parent.lower() in _REQUIREMENTS_FOLDERS else None
    if lower.endswith(".json"):
        return JSON
    if lower.endswith(".toml"):
        return TOML
    if _DOCKERFILE.fullmatch(base):
        return DOCKERFILE
    return None


# how a JSON file porter wrote begins (`--report r.json`, `--write-baseline`, `-o` in json,
# json-lines or gitlab): no config, though named as one. Read as a config, the last run's report
# was "CFG005 `kept_on_cuda` is a CUDA setting" four times over (a CI step failed on porter's own
# report), and its name was "a file this run checks" for the next run's `-o`, `--write-baseline`,
# `--report` (thirty-first read, second wave)
_PORTER_OUTPUTS = (
    re.compile(r'\{\s*"schema":\s*"porter-report"'),  # --report
    re.compile(r'\{\s*"version":\s*\d+,\s*"tool":\s*"porter '),  # --write-baseline
    re.compile(r'(?:\[\s*)?\{\s*"code":\s*"[A-Z]+[0-9]+",\s*"name":'),  # -o, json and json-lines: a finding first
    re.compile(r'\[\s*\{\s*"type":\s*"issue",\s*"check_name":'),  # -o, gitlab
    re.compile(r"\[\s*\]\s*\Z"),  # -o of a run without findings
)
OUTPUT_HEAD = 256  # characters of a file that tell whether porter wrote it


def is_porter_output(head: str) -> bool:
    """Whether a JSON file beginning with `head` (its first `OUTPUT_HEAD` characters) is one
    porter wrote (`_PORTER_OUTPUTS`)."""
    head = head.lstrip()  # (not in the patterns: `\[?\s*` at each space of a run was quadratic, searched)
    return any(pattern.match(head) for pattern in _PORTER_OUTPUTS)


def left_out(name: str) -> str | None:
    """Why the file at `name` is not read: its kind by name, where `PORTER_FILE_KINDS` leaves
    that kind out (None where the run reads it). A file so named on the command line was read as
    Python ("All checks passed!" for a requirements.txt, a syntax error for a Dockerfile); a
    setup.py is Python either way."""
    kind = _named(name)
    if kind in (None, PYTHON, SETUP_PY) or kind in enabled_kinds():
        return None
    value = os.environ.get("PORTER_FILE_KINDS", "").strip()
    return f"a {label(kind)}: not read (PORTER_FILE_KINDS={value} leaves out `{kind}`)"


def discovered(name: str, parent: str = "") -> bool:
    """Whether discovery picks up a file of this bare name (in a folder named `parent`)."""
    if name.endswith((".py", ".pyi")):
        return True
    lower = name.lower()
    if not (lower.endswith(_SUFFIXES) or name in _MAKEFILES or _DOCKERFILE.fullmatch(name)):
        return False
    return kind_of(f"{parent}/{name}" if parent else name) is not None


def is_python(name: str) -> bool:
    """Whether the file at `name` is Python source (what the project index reads): a `.py`
    file, setup.py, or a file given by name that is of no other kind."""
    return kind_of(name) in (None, PYTHON, SETUP_PY)


def label(kind: str) -> str:
    return LABELS.get(kind, kind)
