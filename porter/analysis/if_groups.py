"""The `#if` groups of C/C++ source and which branch's braces go on after each: the one rule of `porter kernels`'
namespaces (`inventory._Namespaces`) and of the registration readers' block bodies (`native_ops`). It was two: the
namespaces read the `#if` branch's braces on after a group with no `#else` and a decided `#if 0` / `#if 1` branch's as
any other (`namespace a {` / `#if 0` / `}` / `namespace b {` / `#endif` / `k`: `k` listed in `b`, in `a` to the
compiler whatever it defines), the bodies an empty `#else` and the decided branch (thirty-fifth read, scaf2)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

# a conditional directive's line, its word
_BRANCHING = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b", re.M)

# one branch of a group: (where its directive's line starts, where the directive ends, the directive's word)
Branch = tuple[int, int, str]


def directives(code: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, word) of each conditional directive of `code` (`if`, `ifdef`, `ifndef`, `elif`, `else`,
    `endif`), in order."""
    for m in _BRANCHING.finditer(code):
        yield m.start(), m.end(), m.group(1)


def going_on(branches: list[Branch], endif: int, compiled: Callable[[int], bool | None]) -> int | None:
    """Which of a group's `branches` (its `#endif` at `endif`) leaves the braces that count after it, as a default
    build reads it (`compiled`: whether it compiles an offset, None not known): the branch surely taken, else the
    `#else` (an undecided `#ifdef X` / `#else`: as `cpp` reads it with `X` undefined); None where there is no `#else`
    and no branch is surely taken: an empty one, the braces open at the `#if` go on."""
    unbuilt = compiled(endif) is False  # (a group in a branch the build skips: each branch read as undecided)
    taken = [None if unbuilt else compiled(at) for at, _, _ in branches]
    if True in taken:
        return taken.index(True)
    return len(branches) - 1 if branches[-1][2] == "else" else None


# a brace, or a conditional directive
_BRACE_OR_BRANCH = re.compile(r"[{}]|^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b", re.M)


def branch_brace_spans(code: str, compiled: Callable[[int], bool | None]) -> list[tuple[int, int]]:
    """The `{...}` blocks of `code` by where each opens (one that never closes: to the end), read as the compiler
    reads each branch of an `#if` group: from the braces open at its `#if`, a brace a branch leaves open ending with
    the branch (optimum-quanto 0.2.7's `namespace gptq_marlin {` closed in both branches of `#if __CUDA_ARCH__ < 800`:
    thirty-second read); after the group, the braces as the branch `going_on` names left them."""
    spans: list[tuple[int, int]] = []
    opened: list[int] = []
    # each open group: the blocks open at its `#if`, its branches, the blocks each branch before the current one left
    groups: list[tuple[list[int], list[Branch], list[list[int]]]] = []
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
            after = _braces_after(groups, opened, (m.start(), m.end(), word), compiled)
            if after is not None:
                _reopened(spans, opened, after, m.start(), len(code))
                opened = after
    return spans


def _braces_after(
    groups: list[tuple[list[int], list[Branch], list[list[int]]]],
    opened: list[int],
    directive: Branch,
    compiled: Callable[[int], bool | None],
) -> list[int] | None:
    """The blocks open after an `#elif`/`#else`/`#endif` `directive` of the innermost of `groups` (`opened`: those
    open before it): the `#if`'s for a next branch; after the group, those of the branch `going_on` names (None: the
    last one's, as they are)."""
    base, branches, left = groups[-1]
    left.append(list(opened))
    if directive[2] != "endif":
        branches.append(directive)
        return list(base)
    groups.pop()
    going = going_on(branches, directive[0], compiled)
    return None if going == len(branches) - 1 else list(base if going is None else left[going])


def _reopened(spans: list[tuple[int, int]], opened: list[int], after: list[int], at: int, end: int) -> None:
    """`spans` with the blocks `opened` and not open `after` ended at `at` (a branch's own), and those open after
    and not before open again to `end` (a brace of the branch closed them)."""
    for i in opened:
        spans[i] = spans[i] if i in after else (spans[i][0], at)
    for i in after:
        spans[i] = spans[i] if i in opened else (spans[i][0], end)
