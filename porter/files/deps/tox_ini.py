"""tox.ini's `deps`, as the requirements lines tox 4 hands pip.

tox 4 (4.11.4, `tox_env/python/pip/req_file.PythonDeps`) reads a test environment's `deps` as a requirements
file at tox.ini's own path: `-c pins.txt` and `-r requirements.txt` are from tox.ini's folder, and `tox -e py311`
runs `pip install -r requirements.txt -c pins.txt`. pip reads such a file as constraints, and refuses an extra
there ("ERROR: Constraints cannot have extras"): porter added the target's `torch-xla[tpu]==2.9.0` to a
`requirements-pins.txt` tox.ini names with `-c`, and `tox` failed (thirty-sixth read, cdleft2). tox.ini is no
kind porter checks (it has no finding of its own); the runner reads it beside the dependency files it names.

A pip configuration file (`pip.conf`, `pip.ini`) is read so too: pip 23.2.1 takes `constraint = pins.txt` of its
`[global]` or `[install]` section as `-c pins.txt` (from pip's working folder, a `COPY pip.conf /etc/pip.conf` image's
`WORKDIR`, or `PIP_CONFIG_FILE`), so the file of that name is matched by its name, reported, not edited.
"""

from __future__ import annotations

import configparser
import re

from porter.core.reading import configparser_text

NAME = "tox.ini"
PIP_CONFIGS = ("pip.conf", "pip.ini")
NAMES = (NAME, *PIP_CONFIGS)
# tox 4's `IniLoader.process_raw`: a `#` (not `\\#`) starts a comment, cut with the blanks before it (its own
# `(\s)*(?<!\\)#.*` is quadratic on a run of blanks)
_COMMENT = re.compile(r"(?<!\\)#")
# tox 4's `expand_factors`: `py311,lint: -c pins.txt` is a line of the environments its factors name
_FACTORS = re.compile(r"^[\w.!{},\s-]+:(?:\s|$)")
# tox's substitutions that name tox.ini's folder (an absolute path, the same folder as a path from it) and `os.sep`
_ROOT = re.compile(r"\{(?:toxinidir|tox_root)\}")


def is_tox_ini(name: str) -> bool:
    """Whether `name` is a tox.ini (by its file name, as tox looks for it)."""
    return name.replace("\\", "/").rsplit("/", 1)[-1] == NAME


def is_pip_config(name: str) -> bool:
    """Whether `name` is a pip configuration file (by the file names pip 23.2.1 reads)."""
    return name.replace("\\", "/").rsplit("/", 1)[-1] in PIP_CONFIGS


def config_constraints(text: str) -> list[tuple[str, int, str]]:
    """(path, 1-based line of its key, " (its `constraint`)") of each constraints file a pip configuration file
    names: pip 23.2.1's `ConfigOptionParser` reads `constraint` in `[global]` and `[install]` as `--constraint`, an
    append option, its value split at blanks; none where configparser cannot read the file (pip refuses it too)."""
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(configparser_text(text))
    except configparser.Error:
        return []
    out: list[tuple[str, int, str]] = []
    for section in ("global", "install"):
        keys = parser.options(section) if parser.has_section(section) else []
        for key in (
            k for k in keys if _option_name(k) == "constraint"
        ):  # pip keeps one of them (the last it reads); each is reported
            value = parser.get(section, key, fallback="")
            out.extend((path, _key_line(text, section, key), " (its `constraint`)") for path in value.split())
    return out


def _option_name(key: str) -> str:
    """A configuration file's key as pip 23.2.1 names its option (`configuration._normalize_name`): `--constraint`,
    `__constraint` and `Constraint` are `constraint` (thirty-seventh read, cache)."""
    name = key.lower().replace("_", "-")
    return name[2:] if name.startswith("--") else name


def _key_of(line: str) -> str | None:
    """configparser's key of a line: what is before its first `=` or `:`, stripped, lowercased (None: neither)."""
    ends = [at for at in (line.find("="), line.find(":")) if at >= 0]
    return line[: min(ends)].strip().lower() if ends else None


def _key_line(text: str, section: str, key: str) -> int:
    """The 1-based line of the last `key =` of `[section]` (configparser keeps the last; 1 where not found)."""
    found, current = 1, None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            current = stripped[1:-1].strip()
        elif current == section and not line[:1].isspace() and _key_of(stripped) == key:
            found = number
    return found


def deps_lines(text: str) -> list[str]:
    """The `deps` lines of every `[testenv]` and `[testenv:NAME]` of a tox.ini, as the requirements lines tox
    writes for pip (comments cut, a factor's condition dropped: the line is some environment's, `{toxinidir}/`
    as `./`); none where configparser cannot read the file (tox cannot either)."""
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(configparser_text(text))
    except configparser.Error:
        return []
    out: list[str] = []
    for section in parser.sections():
        if section != "testenv" and not section.startswith("testenv:"):
            continue
        value = parser.get(section, "deps", fallback="")
        kept = [_uncommented(line).replace("\\#", "#") for line in value.split("\n") if not line.startswith("#")]
        for line in "\n".join(kept).replace("\r", "").replace("\\\n", "").split("\n"):
            line = _FACTORS.sub("", line.strip(), count=1)
            out.append(_ROOT.sub(".", line).replace("{/}", "/"))
    return out


def _uncommented(line: str) -> str:
    found = _COMMENT.search(line)
    return line if found is None else line[: found.start()].rstrip()
