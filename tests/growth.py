"""How a piece of work grows with its input, measured against itself in the same test.

The project's standards keep speed out of tests: a bound in seconds fails on a slow machine and
passes on a fast one whatever the code does. A scan that went quadratic is caught instead by the
ratio of its CPU time on an input and on one FACTOR times smaller, both measured here: about
FACTOR for linear work, FACTOR**2 for quadratic, whatever the machine."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

FACTOR = 4  # the larger input is FACTOR times the smaller
# linear work grows about FACTOR times (4), quadratic FACTOR**2 (16): the bound is between, nearer
# linear's at 8 (a larger input's memory costs more than its length: x8.1 seen on a linear scan at
# load 5, after the best of three), so 10 where a test gives none
LIMIT = 10
FLOOR_S = 0.02  # a larger input done in less CPU time than this is too quick to time, and no blow-up


def _cpu(fn: Callable[[Any], Any], data: Any) -> tuple[float, Any]:
    began = time.process_time()
    out = fn(data)
    return time.process_time() - began, out


def growth(
    fn: Callable[[Any], Any], make: Callable[[int], Any], n: int, tries: int = 3, limit: float = LIMIT
) -> tuple[float, Any]:
    """How many times more CPU time `fn(make(n))` takes than `fn(make(n // FACTOR))`, and what
    `fn(make(n))` gave. Timed once each; a ratio over `limit` is timed again, the best of `tries`
    each (a cold cache or a descheduling only adds time). CPU time, not the clock's: the other
    processes of a loaded machine do not count. `fn` must do its work on each call (clear a cache
    of the code under test in it)."""
    small, large = make(max(1, n // FACTOR)), make(n)
    _cpu(fn, small)  # warm: imports, compiled patterns and caches are not the input's cost
    little, _ = _cpu(fn, small)
    much, out = _cpu(fn, large)
    if much < FLOOR_S or much <= limit * little:
        return much / max(little, 1e-9), out
    little = min(_cpu(fn, small)[0] for _ in range(tries))
    much = min(_cpu(fn, large)[0] for _ in range(tries))
    return much / max(little, 1e-9), out


def linear(fn: Callable[[Any], Any], make: Callable[[int], Any], n: int, limit: float = LIMIT) -> Any:
    """`fn(make(n))`, checked to take CPU time linear in `n` (see `growth`): at most `limit` times
    the time of an input FACTOR times smaller."""
    ratio, out = growth(fn, make, n, limit=limit)
    assert ratio <= limit, f"x{ratio:.1f} CPU time for x{FACTOR} input (linear: about x{FACTOR}; at n={n})"
    return out


class _OverBudget(Exception):
    """Raised inside the traced code when it runs past its budget of bytecodes."""


def steps(fn: Callable[[Any], Any], data: Any, budget: int | None = None) -> tuple[int, Any]:
    """How many Python bytecodes `fn(data)` runs (in every Python frame it calls), and what it gave:
    the work itself, the same on any machine and under any load. Past `budget` it is stopped (count
    `budget + 1`, nothing given), so a quadratic scan fails at once instead of running for hours.
    Blind to the work inside one C call (a regular expression's search, a slice): the patterns are
    `tests/safety/test_regex_linear.py`'s."""
    count = 0

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        if event == "opcode":
            count += 1
            if budget is not None and count > budget:
                raise _OverBudget
        return tracer

    before = sys.gettrace()
    sys.settrace(tracer)
    try:
        out = fn(data)
    except _OverBudget:
        return count, None
    finally:
        sys.settrace(before)
    return count, out


def linear_steps(fn: Callable[[Any], Any], make: Callable[[int], Any], n: int, limit: float = 2 * FACTOR) -> Any:
    """`fn(make(n))`, checked to run a number of bytecodes linear in `n` (see `steps`): at each of two
    steps to `n`, at most `limit` times those of an input FACTOR times smaller (linear: about FACTOR;
    quadratic: FACTOR**2), each run stopped past its budget. Counted, not timed, so a loaded machine
    cannot fail it (`linear` timed a scan of a millisecond: x31 to x57 under load)."""
    counted, _ = steps(fn, make(max(1, n // FACTOR**2)))
    out = None
    for size in (n // FACTOR, n):
        budget = int(limit * max(counted, 1))
        much, out = steps(fn, make(max(1, size)), budget)
        assert much <= budget, f"over x{limit:g} the {counted} bytecodes of an input x{FACTOR} smaller (at n={size})"
        counted = much
    return out
