"""What porter writes must parse again, whatever the kind of file: the check per kind.

Each kind is read back with the parser made for its format (tomllib, PyYAML, json, configparser,
tree-sitter-bash, ast); the port of a file and a cached rewrite both pass here before they may
be written. `problem` names what is wrong, or None.
"""

from __future__ import annotations

import ast
import configparser
import json
import sys
import warnings

from porter.core import kinds
from porter.core.reading import configparser_text

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def problem(kind: str, data: bytes) -> str | None:
    """Why `data` is not a valid file of `kind` (None when it is)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if kind in (kinds.SHELL, kinds.MAKEFILE, kinds.REQUIREMENTS, kinds.DOCKERFILE):
            text = data.decode("utf-8", "surrogateescape")
        else:
            return f"not UTF-8: {exc}"
    try:
        check = _CHECKS.get(kind)
        return check(text) if check is not None else None
    except RecursionError:
        return "nesting too deep"


def _python(text: str) -> str | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except (SyntaxError, ValueError, MemoryError) as exc:
        return f"Python: {exc}"
    return None


def _toml(text: str) -> str | None:
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return f"TOML: {exc}"
    return None


def _yaml(text: str) -> str | None:
    from porter.files.readers.yamlpos import load_all

    try:
        load_all(text)
    except ValueError as exc:
        return f"YAML: {exc}"
    return None


def _json(text: str) -> str | None:
    try:
        json.loads(text.removeprefix("\ufeff"))  # a byte order mark is read as utf-8-sig (jsonpos)
    except ValueError as exc:
        return f"JSON: {exc}"
    return None


def _notebook(text: str) -> str | None:
    try:
        doc = json.loads(text.removeprefix("\ufeff"))
    except ValueError as exc:
        return f"notebook JSON: {exc}"
    if not isinstance(doc, dict) or not isinstance(doc.get("cells"), list):
        return "not a notebook (no cells)"
    return None


def _setup_cfg(text: str) -> str | None:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(configparser_text(text))
    except configparser.Error as exc:
        return f"setup.cfg: {exc}"
    return None


def _requirements(text: str) -> str | None:
    from porter.files.deps.reqfile import unparsable

    bad = unparsable(text.removeprefix("\ufeff"))  # pip skips a byte order mark (auto_decode)
    return f"requirements: line {bad[0]} is no requirement" if bad else None


def _shell(text: str) -> str | None:
    from porter.files.shell.parse import errors

    found = errors(text)
    return f"shell: does not parse at line {found[0]}" if found else None


def _makefile(text: str) -> str | None:
    from porter.files.shell.parse import error_lines, parse

    found = error_lines(parse(text.encode("utf-8", "surrogateescape"), "make").root_node)
    return f"Makefile: does not parse at line {found[0]}" if found else None


def _dockerfile(text: str) -> str | None:
    from porter.files.readers.dockerfile_instructions import instructions

    instructions(text)  # (a Dockerfile is lines of instructions: nothing porter writes breaks that)
    return None


_CHECKS = {
    kinds.PYTHON: _python,
    kinds.SETUP_PY: _python,
    kinds.PYPROJECT: _toml,
    kinds.TOML: _toml,
    kinds.YAML: _yaml,
    kinds.CONDA: _yaml,
    kinds.COMPOSE: _yaml,
    kinds.JSON: _json,
    kinds.NOTEBOOK: _notebook,
    kinds.SETUP_CFG: _setup_cfg,
    kinds.REQUIREMENTS: _requirements,
    kinds.SHELL: _shell,
    kinds.MAKEFILE: _makefile,
    kinds.DOCKERFILE: _dockerfile,
}
