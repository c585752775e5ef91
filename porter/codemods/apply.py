"""One Python source through the rule families: prefilter → parse → families → verify → result.

Nothing here writes files; `porter.pipeline.writer` does, and only with a result this module made.
Nothing here imports or executes the code it reads.
"""

from __future__ import annotations

import ast
import re
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from itertools import accumulate
from typing import Any

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor
from libcst.metadata import MetadataWrapper

from porter.codemods import FAMILIES, cstwalk, imports
from porter.codemods.candidates import Gate
from porter.codemods.composite import PortTransformer
from porter.codemods.context import PortContext
from porter.codemods.fit import fit
from porter.core.findings import FileResult, FileStatus, Finding
from porter.core.reading import lf_line_ends, too_large_to_parse
from porter.analysis.prefilter import NOT_ADMITTED, admits
from porter.config.settings import Settings
from porter.core.suppressions import Suppressions
from porter.core.suppressions import scan as scan_suppressions

# CPython refuses more than 200 nested brackets; libcst's native parser crashes the
# process (a C stack overflow) somewhere past ~1,200, so such input never reaches it.
MAX_BRACKET_DEPTH = 200
# The rewrite visits the tree recursively: a legal 199-deep expression needs ~3,000 frames.
RECURSION_LIMIT = 10_000
_BRACKET_VALUE = {ord("("): 1, ord("["): 1, ord("{"): 1, ord(")"): -1, ord("]"): -1, ord("}"): -1}
_NOT_BRACKETS = bytes(b for b in range(256) if b not in _BRACKET_VALUE)
# False: every admitted file is parsed (the candidate pass off; tests compare both paths)
CANDIDATE_PASS = True
# False: the findings' positions, and whether a findings-only run changed the file, come from
# printing the whole module rather than the statements that hold them (tests compare both)
UNIT_TEXT = True
# False: the families' walk is libcst's, which copies every node it passes (tests compare both)
COPY_FREE_WALK = True
# False: a rewrite requotes (`_requoted`) every file with an f-string by walking both whole
# trees, rather than only where the statements the families replaced need it, and prints the
# whole tree of a file no step changed to learn that it is unchanged (tests compare both)
REWRITE_CHANGED_ONLY = True
# False: libcst checks every node its parser builds, as it checks the nodes a family builds
# (`_unchecked`; tests compare both)
UNCHECKED_PARSE = True


def port_python(source: bytes, path: str, settings: Settings, *, admitted: bool = False) -> FileResult:
    """`port_source` for a Python file (or Python text, such as a notebook's code cells).
    `admitted`: the prefilter already let it through with these settings (the run's parent
    asks it of every file before it hands one to a worker), so it is not asked again."""
    result = FileResult(path=path, status=FileStatus.UNCHANGED, original_source=source)
    if not admitted and not admits(source, settings):
        result.status, result.reason = FileStatus.SKIPPED, NOT_ADMITTED
        return result
    suppressions = scan_suppressions(source)
    refused = _refused(result, source, suppressions)
    if refused is not None:
        return refused
    # the families' byte tests and analyses read lines as LF ends them; libcst reads the bytes
    lines = lf_line_ends(source)
    round_trips = _round_trips(source)
    if CANDIDATE_PASS and round_trips and not holds_candidate(lines, path, settings, suppressions):
        return result  # no family has a site here: what they would say of it, without libcst
    module = _parse(result, source)
    if isinstance(module, FileResult):
        return module
    try:
        new_module, ctx, transformer = _transform(module, path, settings, source, suppressions, lines)
    except RecursionError:
        return _error(result, "nesting too deep to rewrite")
    if UNIT_TEXT and round_trips and transformer is not None:
        # the module's text is the source: positions print only the statements with a finding
        result.findings = ctx.findings(source.decode(module.encoding), transformer.units)
    else:
        result.findings = ctx.findings()
    result.suppressed = ctx.suppressed
    if not settings.want_source and round_trips:
        changed = _changed_by_units(module, transformer)
        if changed is not None:
            if changed:
                result.status = FileStatus.CHANGED  # findings only: the new text is not kept
            return result
    # (the parsed tree, where no step replaced it, prints as the source where that round trips)
    return _with_new_source(result, source, new_module, ctx, settings, as_parsed=round_trips and new_module is module)


def _changed_by_units(module: cst.Module, transformer: PortTransformer | None) -> bool | None:
    """Whether a findings-only run changed a file whose parsed text is its source, told without
    printing the whole new module; None where only that print can tell."""
    if transformer is None or not transformer.replaced:
        return False  # the tree is the one parsed, and its text is the source: unchanged
    # from the statements a rule replaced a node in
    return transformer.changed_text(module) if UNIT_TEXT else None


def _refused(result: FileResult, source: bytes, suppressions: Suppressions) -> FileResult | None:
    """`result`, skipped or an error, for a file porter does not parse (ignored, not Python
    text, too large or too deeply nested for libcst); None for one it parses. These answers
    need no parse, so they come before any."""
    if suppressions.ignore_file:
        result.status, result.reason = FileStatus.SKIPPED, "`# porter: ignore-file`"
        return result
    if b"\x00" in source:
        return _error(result, "contains NUL bytes: not a Python source file")
    too_large = too_large_to_parse(len(source))
    if too_large is not None:  # (larger files with a CUDA token are reported, not parsed)
        result.status, result.reason = FileStatus.SKIPPED, too_large
        return result
    too_deep = _too_deep(source)
    if too_deep:
        return _error(result, too_deep)
    return None


def _parse(result: FileResult, source: bytes) -> cst.Module | FileResult:
    """The libcst module of `source`, or `result` as the error that says why it does not parse
    (libcst's message, a decoding error, or nesting past the recursion limit)."""
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
    try:
        with _unchecked():
            return cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        libcst_said = exc.message.splitlines()[0]
        no_line = libcst_said.startswith("tokenizer error")  # (libcst names no line for these)
        said = _python_says(source) or (libcst_said, None if no_line else exc.editor_line)
        return _error(result, f"syntax error: {said[0]}", said[1])
    except (UnicodeDecodeError, LookupError, SyntaxError) as exc:
        return _error(result, f"cannot decode: {exc}")
    except RecursionError:
        return _error(result, "nesting too deep to parse")


@contextmanager
def _unchecked() -> Iterator[None]:
    """libcst's parse without its check of each node it builds. Every libcst node runs its
    `_validate` as it is made (`CSTNode.__post_init__`), which only raises, for a node its
    fields could not have come from Python text (a `Name` that is no identifier, an import
    alias that is no dotted name, missing whitespace): a guard for the nodes code builds
    (the families' fixes still pass it), and ~13% of the parse of a file its parser read,
    whose nodes hold the text's own pieces (libcst's own comment on `__post_init__` says
    as much). Only for the libcst release `cstwalk.FIELDS` was made from, where no node
    class has a `__post_init__` of its own (tests/codemods/test_unchecked_parse.py)."""
    if not (UNCHECKED_PARSE and cstwalk.KNOWN_LIBCST):
        yield
        return
    _NODE.__post_init__ = _no_check  # type: ignore[method-assign]
    try:
        yield
    finally:
        _NODE.__post_init__ = _CHECK  # type: ignore[method-assign]


_NODE = cst.CSTNode
_CHECK = _NODE.__post_init__


def _no_check(self: cst.CSTNode) -> None:
    return None


def _with_new_source(
    result: FileResult,
    source: bytes,
    new_module: cst.Module,
    ctx: PortContext,
    settings: Settings,
    *,
    as_parsed: bool = False,
) -> FileResult:
    """`result` once the families have rewritten the tree: CHANGED where the new text differs
    from `source`, with that text where the settings want it and only if it parses again.
    `as_parsed`: `new_module` is the tree parsed from `source` and prints as it, unchanged."""
    if REWRITE_CHANGED_ONLY and as_parsed:
        return result  # nothing to print: the text is the source
    # the import clean-up generated the new text already: generating it again costs a tree walk
    text = ctx.new_text
    new_source = _keep_final_newline(source, text.encode(new_module.encoding) if text is not None else new_module.bytes)
    if settings.want_source and new_source != source:
        # a line porter lengthened past the project's formatter limit: split as black would
        new_source = fit(source, new_source, settings.line_length, new_module.encoding)
    if new_source == source:
        return result
    if not settings.want_source:
        result.status = FileStatus.CHANGED  # findings only: the new text is not kept
        return result
    # verify: what porter writes must parse again, or nothing is written
    try:
        cst.parse_module(new_source)
    except Exception as exc:  # noqa: BLE001 - any failure means: do not write
        return _error(result, f"internal error: the rewritten file does not parse ({exc}); left unchanged")
    result.status, result.new_source = FileStatus.CHANGED, new_source
    return result


def holds_candidate(source: bytes, path: str, settings: Settings, suppressions: Suppressions) -> bool:
    """Whether some family that would run on `source` may have a site in it
    (porter.codemods.candidates); True also where `ast` cannot parse the file, so that libcst's
    parse says what is wrong with it."""
    gate = Gate(path, settings, suppressions, source)
    for cls in _BY_COST:
        if cls.wanted(gate, source) and cls.candidate(gate, source):  # type: ignore[arg-type]
            return True
    return gate.tree() is None


# the families whose condition needs no `ast` first: one of them may answer before the parse
_BY_COST = sorted(FAMILIES, key=lambda cls: cls.candidate_reads_ast)


def _transform(
    module: cst.Module, path: str, settings: Settings, source: bytes, suppressions: Suppressions, lines: bytes
) -> tuple[cst.Module, PortContext, PortTransformer | None]:
    """(new module, context, the transformer that made it: None where no family ran). `lines`:
    `source` with lone CRs as LF (`lf_line_ends`), what the families' byte tests read."""
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    ctx = PortContext(wrapper=wrapper, path=path, settings=settings, suppressions=suppressions, source=lines)
    ctx.port_snippet = lambda code: _port_snippet(code, path, settings)
    families = [cls(ctx) for cls in FAMILIES if cls.wanted(ctx, lines)]
    if not families:
        return module, ctx, None
    transformer = PortTransformer(ctx, families)
    new = transformer.transform(wrapper.module) if COPY_FREE_WALK else wrapper.module.visit(transformer)
    if not settings.want_source:
        return new, ctx, transformer
    fstrings = _FSTRING.search(source) is not None
    # asked here, before the steps below copy the tree: which statements the families replaced
    requote = fstrings and (not REWRITE_CHANGED_ONLY or _may_need_requote(module, new))
    scratch = ctx.codemod_context.scratch
    _drop_unneeded_aliases(scratch, new)
    if scratch.get(AddImportsVisitor.CONTEXT_KEY) and ctx.applied:
        # (with no fix applied, an import was asked for a fix a rule not reported built)
        new = imports.add_imports(new, scratch.pop(AddImportsVisitor.CONTEXT_KEY), ctx.codemod_context)
    if scratch.get(RemoveImportsVisitor.CONTEXT_KEY):
        new = RemoveImportsVisitor(ctx.codemod_context).transform_module(new)
    new = ctx.finish_device_helper(new)
    # (the device helper's inlining writes code inside f-strings: a file with one is requoted)
    if requote or (fstrings and ctx.device_helper is not None):
        new = _requoted(module, new)
    if ctx.applied:
        new, ctx.new_text = imports.remove_made_unused(module, new, source)
    return new, ctx, transformer


# an f-string's prefix: a file without one needs no look at the quotes porter wrote
_FSTRING = re.compile(rb"(?<![\w])(?:[fF][rR]?|[rR][fF])[\"']")


class _NestedQuotes(cst.CSTTransformer):
    """A string porter wrote inside an f-string's braces takes the quote the f-string does not
    use: `f"{'GPU' if (x.device.type == "xla") else 'CPU'}"` parses on Python 3.12 only (PEP
    701), and porter's users run 3.10 and 3.11 too. A file that nests an f-string's quote
    itself is left as it is (its project runs 3.12 or later): `clashed` says so."""

    def __init__(self) -> None:
        self.quotes: list[str] = []  # the quote of each f-string the walk is in, innermost last
        self.clashed = False

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        self.quotes.append(node.start.lstrip("fFrRbBuU"))

    def leave_FormattedString(self, original: cst.FormattedString, updated: cst.FormattedString) -> cst.BaseExpression:
        self.quotes.pop()
        quote = updated.start.lstrip("fFrRbBuU")
        if not self._clashes(quote):
            return updated
        other = _other(quote)
        prefix = updated.start[: len(updated.start) - len(quote)]
        return updated.with_changes(start=prefix + other, end=other)

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString) -> cst.BaseExpression:
        value = updated.value
        prefix, quote = _string_quote(value)
        if not self._clashes(quote):
            return updated
        other, body = _other(quote), value[len(prefix) + len(quote) : len(value) - len(quote)]
        if other[0] in body or "\\" in body:
            return updated  # cannot be requoted as it stands
        return updated.with_changes(value=prefix + other + body + other)

    def _clashes(self, quote: str) -> bool:
        clash = _clash(self.quotes, quote)
        self.clashed |= clash
        return clash


class _QuoteClash(cst.CSTVisitor):
    """`_NestedQuotes`'s `clashed`, read-only: whether a tree holds a string or an f-string
    whose quote ends an f-string around it (walked by `cstwalk.visit`, which copies nothing)."""

    def __init__(self) -> None:
        self.quotes: list[str] = []
        self.clashed = False

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        self.quotes.append(node.start.lstrip("fFrRbBuU"))

    def leave_FormattedString(self, original_node: cst.FormattedString) -> None:
        self.quotes.pop()
        self.clashed |= _clash(self.quotes, original_node.start.lstrip("fFrRbBuU"))

    def leave_SimpleString(self, original_node: cst.SimpleString) -> None:
        self.clashed |= _clash(self.quotes, _string_quote(original_node.value)[1])


def _string_quote(value: str) -> tuple[str, str]:
    """(prefix, quote) of a string literal's text, e.g. ("rb", '\"\"\"')."""
    prefix = value[: len(value) - len(value.lstrip("rRbBuU"))]
    quote = value[len(prefix) : len(prefix) + 3]
    return prefix, quote if quote in ('"""', "'''") else value[len(prefix)]


def _clash(quotes: list[str], quote: str) -> bool:
    """Whether `quote` ends one of the f-strings (their `quotes`) it stands in: before 3.12 an
    f-string ends at its own quote, wherever it stands (a single-quoted f-string cannot hold
    its quote character, a triple-quoted one its three quotes)."""
    return any(q == quote or (len(q) == 1 and q == quote[0]) for q in quotes)


def _may_need_requote(module: cst.Module, new: cst.Module) -> bool:
    """Whether `_requoted` may change `new`, the families' tree. A statement the families did
    not replace is the original's own node (the copy-free walk keeps it), and requoting leaves
    the original's statements as they are: it returns `new` untouched when the file nests an
    f-string's quote itself anywhere, and finds nothing to requote in them otherwise. So only
    the replaced statements can hold a string to requote; where none clashes, nothing changes.
    The import steps after the families add and drop import lines only, without strings."""
    kept = {id(stmt) for stmt in module.body}
    probe = _QuoteClash()
    for stmt in new.body:
        if id(stmt) not in kept:
            cstwalk.visit(stmt, probe)
            if probe.clashed:
                return True
    return False


def _other(quote: str) -> str:
    return quote.replace('"', "\x00").replace("'", '"').replace("\x00", "'")


def _requoted(module: cst.Module, new: cst.Module) -> cst.Module:
    """`new` with porter's strings inside f-strings requoted (`_NestedQuotes`), unless the
    file nested an f-string's quote itself."""
    if REWRITE_CHANGED_ONLY:
        clash = _QuoteClash()
        cstwalk.visit(module, clash)
        clashed = clash.clashed
    else:
        probe = _NestedQuotes()
        module.visit(probe)
        clashed = probe.clashed
    return new if clashed else new.visit(_NestedQuotes())


def _port_snippet(code: bytes, path: str, settings: Settings) -> tuple[bytes | None, list[Finding]]:
    """A piece of a file ported on its own (the branch porter adds to a device switch is CUDA's
    branch ported): same target, no cross-file facts. Every rule a run without `--select` would
    apply ports it: the branch is what the target runs (one rule's fix), whichever rules are
    reported; `--ignore` still holds."""
    wide = replace(settings, select=(), extend_select=settings.extend_select + settings.select)
    result = port_python(code, path, replace(wide, flow=(), want_source=True))
    if result.status is FileStatus.ERROR:
        return None, result.findings
    return result.new_source or code, result.findings


def _drop_unneeded_aliases(scratch: dict[str, Any], module: cst.Module) -> None:
    """An aliased import requested for a node a parent rewrite then replaced is not added."""
    wanted = scratch.get(AddImportsVisitor.CONTEXT_KEY)
    if not wanted or all(item.alias is None for item in wanted):
        return  # (no alias to look for: the module's text is not printed)
    code = module.code
    scratch[AddImportsVisitor.CONTEXT_KEY] = [
        item for item in wanted if item.alias is None or re.search(rf"\b{re.escape(item.alias)}\.", code)
    ]


def _python_says(source: bytes) -> tuple[str, int | None] | None:
    """CPython's message and line for a source libcst refused: libcst names no line for a
    tokenizer error, and each was said at line 1 (an emoji identifier on line 4: the
    twenty-fifth read's leftover); its parser's line is where it gave up, often past the error,
    with a position of its own in the words (`def f(:` on line 1 of 2 was `m.py:2: syntax error:
    parser error: error at 2:4: ...`: twenty-seventh read). A second parse on this error path
    only; None where CPython parses the source (libcst's words are kept)."""
    try:
        with warnings.catch_warnings():  # (a `SyntaxWarning` of the source is not porter's to print)
            warnings.simplefilter("ignore")
            ast.parse(source)
    except SyntaxError as exc:
        return str(exc.msg), exc.lineno
    except (RecursionError, MemoryError, ValueError):
        return None
    return None


def _too_deep(source: bytes) -> str | None:
    """A reason when brackets nest deeper than Python allows, else None (cheap: C loops only)."""
    brackets = source.translate(None, _NOT_BRACKETS)
    if len(brackets) <= 2 * MAX_BRACKET_DEPTH:
        return None
    if max(accumulate(map(_BRACKET_VALUE.__getitem__, brackets))) <= MAX_BRACKET_DEPTH:
        return None
    # brackets inside strings and comments count above: let CPython's tokenizer decide
    try:
        ast.parse(source)
    except SyntaxError as exc:
        if "too many nested" in str(exc.msg):
            return f"nesting too deep: more than {MAX_BRACKET_DEPTH} nested brackets (Python's own limit)"
        return f"syntax error: {exc.msg}"
    except (RecursionError, MemoryError, ValueError):
        return "nesting too deep to parse"
    return None


# libcst's round trip drops a form feed before the first statement and a final lone CR
# (checked on libcst 1.0.1); sources with neither print back byte for byte (every file of
# the 1.2M-line benchmark corpus does)
_NOT_ROUND_TRIP = (b"\x0c", b"\r")


def _round_trips(source: bytes) -> bool:
    """Whether libcst prints `source`'s unchanged tree back as exactly these bytes, so a tree
    no rule family touched needs no code generation to tell that nothing changed (~10% of a
    findings-only run)."""
    return not any(b in source for b in _NOT_ROUND_TRIP)


def _keep_final_newline(source: bytes, new: bytes) -> bytes:
    """libcst drops a final lone CR (old Mac line endings): put back the ending the file had."""
    if source.endswith(b"\r") and not new.endswith((b"\r", b"\n")):
        return new + b"\r"
    return new


def _error(result: FileResult, reason: str, line: int | None = None) -> FileResult:
    result.status = FileStatus.ERROR
    result.reason = reason
    result.error_line = line
    result.findings = []
    result.new_source = None
    return result
