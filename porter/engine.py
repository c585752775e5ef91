"""One file through the pipeline: prefilter → parse → rule families → verify → result.

Nothing here writes files; `porter.writer` does, and only with a result this module made.
Nothing here imports or executes the code it reads.
"""

from __future__ import annotations

import re

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor
from libcst.metadata import MetadataWrapper

from porter.codemods import FAMILIES
from porter.codemods.composite import PortTransformer
from porter.codemods.context import PortContext
from porter.findings import FileResult, FileStatus
from porter.prefilter import admits
from porter.settings import Settings
from porter.suppressions import scan as scan_suppressions


def port_source(source: bytes, path: str, settings: Settings) -> FileResult:
    """Port one file's bytes. Never raises for bad input: errors come back as results."""
    result = FileResult(path=path, status=FileStatus.UNCHANGED, original_source=source)
    if not admits(source, settings):
        result.status, result.reason = FileStatus.SKIPPED, "no CUDA-related token"
        return result
    suppressions = scan_suppressions(source)
    if suppressions.ignore_file:
        result.status, result.reason = FileStatus.SKIPPED, "`# porter: ignore-file`"
        return result
    if b"\x00" in source:
        return _error(result, "contains NUL bytes: not a Python source file")
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        return _error(result, f"syntax error: {exc.message.splitlines()[0]}", exc.editor_line)
    except (UnicodeDecodeError, LookupError, SyntaxError) as exc:
        return _error(result, f"cannot decode: {exc}")
    except RecursionError:
        return _error(result, "nesting too deep to parse")

    try:
        new_module, ctx = _transform(module, path, settings, source, suppressions)
    except RecursionError:
        return _error(result, "nesting too deep to rewrite")
    result.findings = ctx.findings()
    result.suppressed = ctx.suppressed
    new_source = new_module.bytes
    if new_source == source:
        return result
    # verify: what porter writes must parse again, or nothing is written
    try:
        cst.parse_module(new_source)
    except Exception as exc:  # noqa: BLE001 - any failure means: do not write
        return _error(result, f"internal error: the rewritten file does not parse ({exc}); left unchanged")
    result.status, result.new_source = FileStatus.CHANGED, new_source
    return result


def _transform(module: cst.Module, path: str, settings: Settings, source: bytes, suppressions):
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    ctx = PortContext(wrapper=wrapper, path=path, settings=settings, suppressions=suppressions, source=source)
    families = [cls(ctx) for cls in FAMILIES if cls.wanted(ctx, source)]
    if not families:
        return module, ctx
    new = wrapper.module.visit(PortTransformer(ctx, families))
    scratch = ctx.codemod_context.scratch
    _drop_unneeded_aliases(scratch, new)
    if scratch.get(AddImportsVisitor.CONTEXT_KEY):
        new = AddImportsVisitor(ctx.codemod_context).transform_module(new)
    if scratch.get(RemoveImportsVisitor.CONTEXT_KEY):
        new = RemoveImportsVisitor(ctx.codemod_context).transform_module(new)
    return new, ctx


def _drop_unneeded_aliases(scratch: dict, module: cst.Module) -> None:
    """An aliased import requested for a node a parent rewrite then replaced is not added."""
    wanted = scratch.get(AddImportsVisitor.CONTEXT_KEY)
    if not wanted:
        return
    code = module.code
    scratch[AddImportsVisitor.CONTEXT_KEY] = [
        item
        for item in wanted
        if item.alias is None or re.search(rf"\b{re.escape(item.alias)}\.", code)
    ]


def _error(result: FileResult, reason: str, line: int | None = None) -> FileResult:
    result.status = FileStatus.ERROR
    result.reason = reason
    result.error_line = line
    result.findings = []
    result.new_source = None
    return result
