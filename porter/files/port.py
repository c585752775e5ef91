"""One file of a kind other than Python through the pipeline: prefilter → porter → sites → result.

The same steps as `porter.pipeline.port` for Python: the bytes scan first (the tokens of the
rules that read this kind), then `# porter: ignore-file` and bad input, then the kind's porter,
whose sites become findings and edits in `porter.files.sites`. Nothing here writes a file or
runs one.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import partial

from porter.config.settings import Settings
from porter.files import kinds
from porter.files.errors import NeedsExtra, Unreadable
from porter.files.sites import Site, Text, result
from porter.files.verify import problem
from porter.pipeline.findings import FileResult, FileStatus
from porter.pipeline.prefilter import NOT_ADMITTED, admits
from porter.pipeline.suppressions import scan as scan_suppressions

# kinds whose format has `#` comments, where porter's inline suppressions work
COMMENTED = frozenset({kinds.REQUIREMENTS, kinds.PYPROJECT, kinds.SETUP_CFG, kinds.CONDA, kinds.DOCKERFILE, kinds.COMPOSE,
                       kinds.SHELL, kinds.MAKEFILE, kinds.YAML, kinds.TOML, kinds.NOTEBOOK})
# the porter of each kind: a function (Text, name, Settings) -> list[Site], by module and name
PORTERS = {
    kinds.REQUIREMENTS: ("porter.files.deps.reqfile", "port"),
    kinds.PYPROJECT: ("porter.files.deps.pyproject", "port"),
    kinds.SETUP_CFG: ("porter.files.deps.setup_cfg", "port"),
    kinds.CONDA: ("porter.files.deps.conda", "port"),
    kinds.DOCKERFILE: ("porter.files.containers.dockerfile", "port"),
    kinds.COMPOSE: ("porter.files.containers.compose", "port"),
    kinds.SHELL: ("porter.files.shell.script", "port"),
    kinds.MAKEFILE: ("porter.files.shell.makefile", "port"),
    kinds.YAML: ("porter.files.configs.yaml_config", "port"),
    kinds.JSON: ("porter.files.configs.json_config", "port"),
    kinds.TOML: ("porter.files.configs.toml_config", "port"),
}
# kinds whose porter makes the whole result (they port Python inside them)
WHOLE = {
    kinds.NOTEBOOK: ("porter.files.notebooks.notebook", "port"),
    kinds.SETUP_PY: ("porter.files.deps.setup_py", "port"),
}
MAX_BYTES = 16 * 2**20  # larger files with a CUDA token are reported, not parsed (data, not configuration)


def _porter(table: dict[str, tuple[str, str]], kind: str) -> Callable[..., object]:
    module, name = table[kind]
    fn: Callable[..., object] = getattr(importlib.import_module(module), name)
    return fn


def port_file(kind: str, source: bytes, path: str, settings: Settings) -> FileResult:
    """Port one file of `kind`. Never raises for bad input: errors come back as results."""
    out = FileResult(path=path, status=FileStatus.UNCHANGED, original_source=source)
    if kind == kinds.SETUP_PY:
        return _whole(kind, source, path, settings)  # Python first: it has its own prefilter
    if not admits(source, settings, kind):
        out.status, out.reason = FileStatus.SKIPPED, NOT_ADMITTED
        return out
    suppressions = scan_suppressions(source) if kind in COMMENTED else None
    if suppressions is not None and suppressions.ignore_file:
        out.status, out.reason = FileStatus.SKIPPED, "`# porter: ignore-file`"
        return out
    if b"\x00" in source:
        return _error(out, f"contains NUL bytes: not a {kinds.label(kind)}")
    if len(source) > MAX_BYTES:
        out.status = FileStatus.SKIPPED
        out.reason = f"{len(source) / 2**20:.1f} MiB: larger than porter reads as a {kinds.label(kind)} ({MAX_BYTES // 2**20} MiB)"
        return out
    if kind in WHOLE:
        return _whole(kind, source, path, settings)
    text = Text(source)
    try:
        sites: list[Site] = _porter(PORTERS, kind)(text, path, settings)  # type: ignore[assignment]
    except Unreadable as exc:
        return _error(out, exc.reason, exc.line)
    except NeedsExtra as exc:
        out.status, out.reason = FileStatus.SKIPPED, str(exc)
        return out
    except RecursionError:
        return _error(out, "nesting too deep to read")
    return result(text, sites, path, settings, suppressions=suppressions, check=partial(problem, kind))


def _whole(kind: str, source: bytes, path: str, settings: Settings) -> FileResult:
    try:
        made: FileResult = _porter(WHOLE, kind)(source, path, settings)  # type: ignore[assignment]
    except Unreadable as exc:
        return _error(FileResult(path=path, status=FileStatus.UNCHANGED, original_source=source), exc.reason, exc.line)
    except NeedsExtra as exc:
        return FileResult(path=path, status=FileStatus.SKIPPED, original_source=source, reason=str(exc))
    return made


def _error(out: FileResult, reason: str, line: int | None = None) -> FileResult:
    out.status = FileStatus.ERROR
    out.reason = reason
    out.error_line = line
    out.findings = []
    out.new_source = None
    return out
