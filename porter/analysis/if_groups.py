"""The `#if` groups of C/C++ source and which branch's braces go on after each: the one rule of `porter kernels`'
namespaces (`inventory._Namespaces`) and of the registration readers' block bodies (`native_ops`). It was two: the
namespaces read the `#if` branch's braces on after a group with no `#else` and a decided `#if 0` / `#if 1` branch's as
any other (`namespace a {` / `#if 0` / `}` / `namespace b {` / `#endif` / `k`: `k` listed in `b`, in `a` to the
compiler whatever it defines), the bodies an empty `#else` and the decided branch (thirty-fifth read, scaf2)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping

from porter.core import preprocessor

# a conditional directive's line, its word
_BRANCHING = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b", re.M)

# one branch of a group: (where its directive's line starts, where the directive ends, the directive's word)
Branch = tuple[int, int, str]


def directives(code: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, word) of each conditional directive of `code` (`if`, `ifdef`, `ifndef`, `elif`, `else`,
    `endif`), in order."""
    for m in _BRANCHING.finditer(code):
        yield m.start(), m.end(), m.group(1)


def going_on(branches: list[Branch], own: Callable[[int], bool | None]) -> int | None:
    """Which of a group's `branches` leaves the braces that count after it, as a default build reads it (`own`: whether
    the build takes the branch at an offset once in its group, `branch_taken`; None not known): the branch surely taken,
    else the `#else` (the last branch: an undecided `#ifdef X` / `#else` as `cpp` reads it with `X` undefined, an
    `#ifndef X` / `#else` with it defined); None where there is no `#else` and no branch is surely taken: an empty one,
    the braces open at the `#if` go on."""
    taken = [own(at) for at, _, _ in branches]
    if True in taken:
        return taken.index(True)
    return len(branches) - 1 if branches[-1][2] == "else" else None


def branch_taken(code: str, known: Mapping[str, bool | None] | None = None) -> Callable[[int], bool | None]:
    """Whether a default build takes the innermost `#if` branch at an offset of `code` once in its group (`#if 1` in
    an undecided `#ifdef X`: True; `preprocessor.compiled` says None there), True outside any."""
    conditions = preprocessor.Conditions(code, lambda at: 0, known) if "#" in code else None
    return lambda at: (conditions.around(at) or [(0, "", True)])[-1][2] if conditions is not None else True


# a brace, or a conditional directive
_BRACE_OR_BRANCH = re.compile(r"[{}]|^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b", re.M)


def branch_brace_spans(code: str, own: Callable[[int], bool | None]) -> list[tuple[int, int, int]]:
    """The `{...}` blocks of `code` as pieces `(start, end, where the block opens)`, sorted by start (one that never
    closes: to the end), read as the compiler reads each branch of an `#if` group: from the braces open at its `#if`, a
    brace a branch leaves open ending with the branch (optimum-quanto 0.2.7's `namespace gptq_marlin {` closed in both
    branches of `#if __CUDA_ARCH__ < 800`: thirty-second read); after the group, the braces as the branch `going_on`
    names left them. A block a branch closes and one after it goes on with has a hole from its `}` to where it goes on
    (`namespace n1 {` / `#ifdef X` / `}` / `namespace n2 {` / `k1` / `#endif`: `k1` is in `n2` alone in the build
    that compiles it; one span, it was listed in `n1::n2`: thirty-seventh read, scleft)."""
    spans: list[tuple[int, int]] = []
    holes: list[tuple[int, int, int]] = []  # (a block, where its hole starts, where it ends)
    opened: list[int] = []
    # each open group: the blocks open at its `#if`, its branches, what each branch before the current one left
    groups: list[tuple[list[int], list[Branch], list[_Left]]] = []
    for m in _BRACE_OR_BRANCH.finditer(code):
        word = m.group(1)
        if word is None and m.group() == "{":
            opened.append(len(spans))
            spans.append((m.start(), len(code)))
        elif word is None and opened:
            i = opened.pop()
            spans[i] = (spans[i][0], m.start())
        elif word is not None and word.startswith("if"):
            groups.append((list(opened), [(m.start(), m.end(), word)], []))
        elif word is not None and groups:
            after = _braces_after(
                groups, (opened, {i: spans[i] for i in groups[-1][0]}), (m.start(), m.end(), word), own
            )
            if after is not None:
                holes.extend(
                    (i, spans[i][1], m.start()) for i in after[0] if i not in opened and spans[i][1] < m.start()
                )
                _reopened(spans, opened, after, m.start(), len(code))
                opened = after[0]
    return _pieces(spans, holes)


def _pieces(spans: list[tuple[int, int]], holes: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """`spans` less their `holes` (those within each span as it ends), as pieces sorted by start."""
    pieces: list[tuple[int, int, int]] = []
    cut: dict[int, list[tuple[int, int]]] = {}
    for i, start, end in holes:
        cut.setdefault(i, []).append((start, end))
    for i, (opens, closes) in enumerate(spans):
        at = opens
        for start, end in sorted(cut.get(i, ())):
            if start >= closes or end <= at:
                continue
            pieces.extend([(at, start, opens)] if at < start else [])
            at = end
        pieces.extend([(at, closes, opens)] if at < closes else [])
    return sorted(pieces)


# what a branch left: the blocks open at its end, and the spans then of those open at its group's `#if`
_Left = tuple[list[int], dict[int, tuple[int, int]]]


def _braces_after(
    groups: list[tuple[list[int], list[Branch], list[_Left]]],
    now: _Left,
    directive: Branch,
    own: Callable[[int], bool | None],
) -> _Left | None:
    """What goes on after an `#elif`/`#else`/`#endif` `directive` of the innermost of `groups` (`now`: what the branch
    before it left): the `#if`'s blocks for a next branch; after the group, what the branch `going_on` names left
    (None: the last one, as it is)."""
    base, branches, left = groups[-1]
    left.append((list(now[0]), now[1]))
    if directive[2] != "endif":
        branches.append(directive)
        return list(base), {}
    groups.pop()
    going = going_on(branches, own)
    return None if going == len(branches) - 1 else (list(base), {}) if going is None else left[going]


def _reopened(spans: list[tuple[int, int]], opened: list[int], after: _Left, at: int, end: int) -> None:
    """`spans` with the blocks `opened` and not open after (`after[0]`) ended at `at` (a branch's own), those open
    after and not before open again to `end` (a brace of the branch closed them), and those the branch gone on with
    closed, as it closed them (`after[1]`)."""
    for i in opened:
        spans[i] = spans[i] if i in after[0] else (spans[i][0], at)
    for i in after[0]:
        spans[i] = spans[i] if i in opened else (spans[i][0], end)
    for i, span in after[1].items():
        spans[i] = spans[i] if i in after[0] else span
