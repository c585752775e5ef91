"""What a default nvcc build's preprocessor decides, read directive by directive from one file's
text: which `#if` branches it takes (no header is read, no macro's value), and the continued lines
of a directive joined. The kernel listing (inventory) asks it which of two twin definitions nvcc
compiles, the registration reader (native_ops) which registrations it compiles."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Mapping

_NAME = re.compile(r"[A-Za-z_]\w*")

BACKSLASH_NEWLINE = re.compile(r"\\\r?\n")


def joined(text: str) -> str:
    """`text` with its continued lines joined (a backslash-newline is a blank), as a `#define` is read."""
    return BACKSLASH_NEWLINE.sub(" ", text)


def compiled(branches: list[tuple[int, str, bool | None]]) -> bool | None:
    """Whether nvcc with no `-D` of the build's compiles what lies in `branches` (every one taken),
    or None where porter cannot tell."""
    taken = [t for _, _, t in branches]
    return False if False in taken else None if None in taken else True


def fork(
    one: list[tuple[int, str, bool | None]], other: list[tuple[int, str, bool | None]]
) -> tuple[int, str, str] | None:
    """The `#if` group two definitions lie in different branches of, as (its line, one's branch,
    the other's), or None (no such group: SFINAE twins, one file's two uses of a macro)."""
    for (line, text, _), (line2, text2, _) in zip(one, other):
        if line != line2:
            return None
        if text != text2:
            return line, text, text2
    return None


def apart(one: list[tuple[int, str, bool | None]], other: list[tuple[int, str, bool | None]]) -> str | None:
    """`fork` as `#else`, where the one read is in `#if ...`, of the `#if` at line N (or None)."""
    at = fork(one, other)
    return None if at is None else f"`{at[2]}`, where the one read is in `{at[1]}`, of the `#if` at line {at[0]}"


def unbuilt(branches: list[tuple[int, str, bool | None]]) -> str | None:
    """The outermost of `branches` a default nvcc build does not take (`#if 0`, `#ifdef USE_ROCM`),
    as `#else` of the `#if` at line N, or None where it takes them all or porter cannot tell."""
    for line, text, taken in branches:
        if taken is False:
            return f"`{text}` of the `#if` at line {line}"
    return None


# Names a default nvcc build defines (host and device passes: `nvcc -E -Xcompiler -dM` of nvcc 13.0),
# and those it never does: ROCm's and HIP's (and AMD's architectures'), set by a ROCm build alone
# (nvcc 13.0, -arch=sm_90, both passes of `#if defined(USE_ROCM) || defined(__HIPCC__) || ...`
# take its `#else`). Any other name is the build's to set (`-D`, a header, `__CUDA_ARCH__`: the pass).
_NVCC_DEFINES = frozenset(("__NVCC__", "__CUDACC__"))


_NOT_NVCC = re.compile(r"USE_ROCM|__HIP\w*|__gfx\w*|__GFX\w*|__AMDGCN\w*|__amdgcn\w*|__HCC\w*")


_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif|define|undef)\b((?:\\\r?\n|[^\n])*)", re.M)


_COND_TOKEN = re.compile(r"defined\b|[A-Za-z_]\w*|\d+[uUlL]*|&&|\|\||==|!=|<=|>=|\S")  # (blanks between)


# an open `#if` group's conditions so far (an `#else`'s: `1`), and what its current branch settles (`_settled`)
_Group = tuple[list[str], dict[str, bool]]


class Conditions:
    """The `#if` branches of C++ `code` (comments blanked) around each offset, each with whether a
    default nvcc build takes it (`_NVCC_DEFINES`, `_NOT_NVCC`, the file's own `#define`s and
    `#undef`s in branches taken), read directive by directive: no header, no macro's value. An inner
    branch is read as its enclosing branches being taken: what they settle of a name the build does
    not decide goes into its condition (`#ifdef X` in the `#else` of `#ifndef X`: taken; in the first
    branch: not; `_settled`). It was read alone, undecided, and a kernel after such a group was put in
    the namespace of the build that does not compile it (thirty-sixth read, scaf2)."""

    def __init__(
        self, code: str, line_of: Callable[[int], int], known: Mapping[str, bool | None] | None = None
    ) -> None:
        self.at: list[int] = []  # where the stack changes
        self.stacks: list[tuple[tuple[int, str, bool | None], ...]] = []
        env: dict[str, bool | None] = dict(known or {})  # (`known`: what a name is before the file's `#define`s)
        # each open group: (its line, the branch's directive, taken, taken before in the group), and its conditions
        # so far and what its branch settles
        stack: list[tuple[int, str, bool | None, bool | None]] = []
        groups: list[_Group] = []
        for m in _DIRECTIVE.finditer(code) if "#" in code else ():
            word, rest = m.group(1), " ".join(joined(m.group(2)).split())
            if word in ("define", "undef"):
                _defined(env, groups, word, rest, _active(env, groups, word, rest, [e[2] for e in stack]))
                continue
            seen = _assumed(env, groups if word.startswith("if") else groups[:-1])  # (the enclosing branches')
            if word == "endif":
                stack, groups = stack[:-1], groups[:-1]
            elif word in ("if", "ifdef", "ifndef"):
                cond = {"ifdef": f"defined({rest})", "ifndef": f"!defined({rest})"}.get(word, rest)
                taken = truth(cond, seen)
                stack.append((line_of(m.start()), f"#{word} {rest}", taken, taken))
                groups.append(([cond], _settled([cond], seen)))
            elif stack:
                line, _, _, before = stack[-1]
                own = True if word == "else" else truth(rest, seen)
                taken = False if before is True else (own if before is False else (None if own is not False else False))
                after = True if before is True or own is True else (None if None in (before, own) else False)
                stack[-1] = (line, f"#{word} {rest}".rstrip(), taken, after)
                conds = [*groups[-1][0], "1" if word == "else" else rest]
                groups[-1] = (conds, _settled(conds, seen))
            self.at.append(m.start())
            self.stacks.append(tuple((e[0], e[1], e[2]) for e in stack))

    def around(self, offset: int) -> list[tuple[int, str, bool | None]]:
        """The branches (line of their `#if`, their directive, taken) around `offset`, outermost first."""
        i = bisect.bisect_right(self.at, offset) - 1
        return list(self.stacks[i]) if i >= 0 else []


def _active(
    env: Mapping[str, bool | None], groups: list[_Group], word: str, rest: str, taken: list[bool | None]
) -> bool | None:
    """Whether a `#define` or `#undef` (`word`) of the name `rest` starts with, in branches `taken` or not, is read in
    the build: True also where it defines its name in every build that does not have it (the innermost branch holds
    exactly where the name is undefined, the enclosing ones taken: `#ifndef X` / `#define X`, an include guard, a
    default), or of a name every build has. Read as undecided, `X` after the group was read as undecided where every
    build has it defined, and a kernel in `#ifdef X` put in the namespace of no build (thirty-seventh read, scleft).
    The group's earlier conditions are read as the file's defines leave them: one naming a name defined by now (in an
    earlier branch, perhaps) leaves the define as it is."""
    active = compiled([(0, "", t) for t in taken])
    name = _NAME.match(rest)
    if active is not None or word != "define" or name is None or None in taken[:-1]:
        return active
    if _is_defined(name.group(), env) is not None:
        return True if _is_defined(name.group(), env) else active
    seen, conds = _assumed(env, groups[:-1]), groups[-1][0]
    if any(env.get(earlier) for cond in conds[:-1] for earlier in _NAME.findall(cond)):
        return active
    holds = [_branch_holds(conds, {**seen, name.group(): value}) for value in (True, False)]
    return True if holds == [False, True] else active


def _defined(env: dict[str, bool | None], groups: list[_Group], word: str, rest: str, active: bool | None) -> None:
    """`env` after a `#define` or `#undef` (`word`) of the name `rest` starts with, in branches `active` or not: no
    branch settles it after (`groups`' settled names: it is the build's from there on)."""
    name = _NAME.match(rest)
    if name is None or active is False:
        return
    env[name.group()] = (word == "define") if active else None
    for _, settled in groups:
        settled.pop(name.group(), None)


def _assumed(env: Mapping[str, bool | None], groups: list[_Group]) -> Mapping[str, bool | None]:
    """`env` with what the branches of the open `groups` settle of the names it leaves undecided."""
    if not any(settled for _, settled in groups):
        return env
    seen = dict(env)
    for _, settled in groups:
        seen.update((name, value) for name, value in settled.items() if _is_defined(name, env) is None)
    return seen


def _settled(conds: list[str], env: Mapping[str, bool | None]) -> dict[str, bool]:
    """The names `env` leaves undecided that the branch after `conds` settles (each condition but the last false, the
    last true; an `#else`'s: `1`): defined where the branch holds only with the name defined, undefined where only
    with it undefined. At most 8 names of at most 8 conditions (a longer chain settles none: no cost that grows)."""
    names = dict.fromkeys(n for c in conds for n in _NAME.findall(c) if n != "defined" and _is_defined(n, env) is None)
    if len(conds) > 8 or not names or len(names) > 8:
        return {}
    out: dict[str, bool] = {}
    for name in names:
        holds = [_branch_holds(conds, {**env, name: value}) for value in (True, False)]
        if holds.count(False) == 1:
            out[name] = holds[1] is False
    return out


def _branch_holds(conds: list[str], env: Mapping[str, bool | None]) -> bool | None:
    """Whether the branch after `conds` is taken with `env` (each condition but the last false, the last true)."""
    values = [truth(c, env) for c in conds]
    values = [None if v is None else not v for v in values[:-1]] + values[-1:]
    return False if False in values else None if None in values else True


def truth(cond: str, env: Mapping[str, bool | None]) -> bool | None:
    """Whether `#if cond` holds in a default nvcc build (`Conditions`), or None where porter cannot
    tell: `defined`, `!`, `&&`, `||`, parentheses, numbers and names (an undefined one is 0); anything
    else (a macro's value, arithmetic) is None."""
    tokens = _COND_TOKEN.findall(cond)
    value, at = _or(tokens, 0, env)
    return None if at != len(tokens) or value is None else bool(value)


def _is_defined(name: str, env: Mapping[str, bool | None]) -> bool | None:
    if name in env:
        return env[name]
    return True if name in _NVCC_DEFINES else False if _NOT_NVCC.fullmatch(name) else None


def _or(tokens: list[str], at: int, env: Mapping[str, bool | None]) -> tuple[bool | None, int]:
    value, at = _and(tokens, at, env)
    while at < len(tokens) and tokens[at] == "||":
        right, at = _and(tokens, at + 1, env)
        value = True if True in (value, right) else None if None in (value, right) else False
    return value, at


def _and(tokens: list[str], at: int, env: Mapping[str, bool | None]) -> tuple[bool | None, int]:
    value, at = _not(tokens, at, env)
    while at < len(tokens) and tokens[at] == "&&":
        right, at = _not(tokens, at + 1, env)
        value = False if False in (value, right) else None if None in (value, right) else True
    return value, at


def _not(tokens: list[str], at: int, env: Mapping[str, bool | None], depth: int = 0) -> tuple[bool | None, int]:
    """A `!`-ed, parenthesized, `defined` or plain operand."""
    if at >= len(tokens) or depth > 64:
        return None, len(tokens) + 1
    token = tokens[at]
    if token == "!":
        value, at = _not(tokens, at + 1, env, depth + 1)
        return (None if value is None else not value), at
    if token == "(":
        value, at = _or(tokens, at + 1, env) if depth < 64 else (None, len(tokens))
        return value, (at + 1 if at < len(tokens) and tokens[at] == ")" else len(tokens) + 1)
    if token == "defined":
        paren = at + 1 < len(tokens) and tokens[at + 1] == "("
        name = tokens[at + 2] if paren else tokens[at + 1] if at + 1 < len(tokens) else ""
        end = at + 4 if paren and at + 3 < len(tokens) and tokens[at + 3] == ")" else at + 2
        return _is_defined(name, env), end if name.isidentifier() else len(tokens) + 1
    if re.fullmatch(r"\d+[uUlL]*", token):
        return int(token.rstrip("uUlL")) != 0, at + 1
    if token.isidentifier():  # (a name's value: 0 where it is known undefined)
        return (False if _is_defined(token, env) is False else None), at + 1
    return None, len(tokens) + 1
