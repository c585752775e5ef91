"""The twenty-ninth read of HF016/HF017's reading of what runs (rleft: the rules' leftovers of the twenty-eighth
read; docs/reads/47-rleft-attempts.md). Each case was seen failing on 944c10d."""

from __future__ import annotations

import pytest

from tests.helpers import port

# what Python runs (each function run, `docs/reads/47-rleft-tools/run_oracle.py.txt`) and mypy's
# `--warn-unreachable` agree on: the calls at 24-43 never run; 48 and 54 never run (TYPE_CHECKING is False when
# Python runs, true for mypy alone); the others run
NO_RETURN = """\
import os
import sys
from sys import exit as bye
from typing import TYPE_CHECKING, NoReturn

from kernels import KernelizeFallback as K, kernelize
from typing_extensions import Never


def die() -> NoReturn:
    raise SystemExit(1)


def stop(why) -> Never:
    raise RuntimeError(why)


def maybe() -> int:
    return 1


def exits(model):
    sys.exit(1)
    kernelize(model, use_fallback=False)


def exits_by_alias(model):
    bye(2)
    kernelize(model, use_fallback=False)


def ends_process(model):
    os._exit(0); kernelize(model, use_fallback=False)


def no_return(model):
    die()
    kernelize(model, use_fallback=False)


def never(model):
    stop("x")
    kernelize(model, use_fallback=False)


def type_checking(model):
    if TYPE_CHECKING:
        kernelize(model, use_fallback=False)


def not_type_checking(model):
    if not TYPE_CHECKING:
        return model
    kernelize(model, use_fallback=False)


def typed_binding(model):
    E = K.NONE
    if TYPE_CHECKING:
        E = K.ALL
    kernelize(model, use_fallback=E)


def shadowed(model, die):
    die()
    kernelize(model, use_fallback=False)


def branch_exit(model, c):
    if c:
        sys.exit(1)
    kernelize(model, use_fallback=False)


def caught_exit(model):
    try:
        sys.exit(1)
    except SystemExit:
        pass
    kernelize(model, use_fallback=False)


def returns(model):
    maybe()
    kernelize(model, use_fallback=False)
"""


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_kernelize_fallback_reads_a_call_that_never_returns_and_type_checking_as_python_runs_them(target):
    """`sys.exit(...)` (under another name too), `os._exit(...)`, a function of the file annotated `NoReturn` or
    `Never`, and `if TYPE_CHECKING:` (false when Python runs) were read as running on: HF016 reported the calls
    after them, which never run, and read `E = K.ALL` under `if TYPE_CHECKING:` as a branch beside `K.NONE`
    (silent at 61, where `K.NONE` always reaches). Reached: a parameter named `die` (66), an exit in a branch (72),
    a caught `SystemExit` (80), a function that returns (85)."""
    new, findings = port(NO_RETURN, target)
    assert [(f.code, f.start.line) for f in findings] == [("HF016", n) for n in (61, 66, 72, 80, 85)]
    assert new == NO_RETURN


# a dead call only if `lock` / `quiet()` (imported: not read here) do not swallow (9, 15); dead whatever they do
# (34); `open` and `torch.no_grad()` never swallow (each run with a ValueError raised in its body, which came out:
# docs/reads/47-rleft-tools/managers_exit.py.txt), so 21 and 27 are dead and 40, 46 and 51 read through them
MANAGERS = """\
import torch
from kernels import KernelizeFallback as K, kernelize
from .locks import lock, quiet


async def after_async_with(model):
    async with lock:
        return model
    kernelize(model, use_fallback=False)


def after_with(model):
    with quiet(), torch.no_grad():
        raise ValueError(model)
    kernelize(model, use_fallback=False)


def after_open(model, p):
    with open(p):
        return model
    kernelize(model, use_fallback=False)


def after_no_grad(model):
    with torch.no_grad():
        return model
    kernelize(model, use_fallback=False)


def after_return(model):
    with quiet():
        pass
    return model
    kernelize(model, use_fallback=False)


def no_grad_binding(model):
    with torch.no_grad():
        E = K.NONE
    kernelize(model, use_fallback=E)


def open_binding(model, p):
    with open(p):
        E = K.NONE
    kernelize(model, use_fallback=E)


def load():
    with torch.inference_mode():
        import gptqmodel
"""


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_a_call_dead_only_if_an_unread_manager_does_not_swallow_is_reported_naming_it(target):
    """A `kernelize` call after a `with` whose body ends and whose context manager is not read here (`async with
    lock: return`) was silent, though it runs where that manager swallows (twenty-eighth rules2 read's leftover):
    now reported, naming the managers it depends on (`lock`; `quiet()`, not `torch.no_grad()`). Silent: after
    `open(p)` and `torch.no_grad()`, which never swallow, and after a `return`."""
    new, findings = port(MANAGERS, target)
    dead = [(f.code, f.start.line) for f in findings if f.start.line < 40]
    assert dead == [("HF016", 9), ("HF016", 15)]
    after = "after `with {}`, whose body ends and whose context manager is not read here: the call runs only where"
    assert after.format("lock") in findings[0].message
    assert after.format("quiet()") in findings[1].message
    assert new == MANAGERS


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_a_finding_read_through_open_or_no_grad_does_not_say_their_manager_is_not_read(target):
    """`open(...)`, `torch.no_grad()` and `torch.inference_mode()`, which never swallow, were said "not read here
    (whether it swallows an exception is not known here)" in a finding read through them (HF016's binding under
    them, HF017's import): now read (`_NOT_SWALLOWING`), their findings the same but for that note."""
    findings = [f for f in port(MANAGERS, target)[1] if f.start.line >= 40]
    assert [(f.code, f.start.line) for f in findings] == [("HF016", 40), ("HF016", 46), ("HF017", 51)]
    assert all("not read here" not in f.message for f in findings), [f.message for f in findings]


# mypy's `--warn-unreachable` says 6, 11, 19, 25 and 35 are unreachable; 31 is reached where `c` is false; mypy
# says 41 too (it reads an untyped manager's `__exit__` as not swallowing): porter reads it as it did on 944c10d
DEAD_IMPORTS = """\
import sys


def load():
    raise NotImplementedError("gptqmodel is not supported")
    import gptqmodel


def load_exit():
    sys.exit("no gptqmodel here")
    from gptqmodel import GPTQModel


def load_try():
    try:
        return 1
    finally:
        pass
    import gptqmodel.utils


def load_while():
    while True:
        pass
    import gptqmodel


def load_live(c):
    if c:
        raise ValueError(c)
    import gptqmodel


def load_line():
    raise KeyError("x"); import gptqmodel


def load_lock(lock):
    with lock:
        raise ValueError("x")
    import gptqmodel
"""


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_gptqmodel_import_after_a_statement_that_never_ends_is_not_said_run(target):
    """HF017 said an import after a `raise`, `sys.exit(...)` or `while True:` with no `break` "is imported by
    `load`, unchecked (a call needs it)", though no call ever runs it (mypy: unreachable). Now nothing after a
    statement that never ends (`flow.ends`) is read as run; one after an `if` that raises still is (31), and one
    after a `with` whose body raises where its manager is not read here (41: it runs where `lock` swallows)."""
    new, findings = port(DEAD_IMPORTS, target)
    assert [(f.code, f.start.line) for f in findings] == [("HF017", 31), ("HF017", 41)]
    assert new == DEAD_IMPORTS


# CPython's compiler drops 18, 23 and 29 (`dis`: no line of them in the code); mypy's `--warn-unreachable` says 29,
# 34, 39 and 44 are unreachable; 49 runs where the parameter `exit` returns
CONSTANTS_AND_CALLEES = """\
from typing import NoReturn

from kernels import kernelize


def fail(msg) -> "NoReturn":
    raise RuntimeError(msg)


class Fatal:
    @staticmethod
    def die() -> NoReturn:
        raise SystemExit(1)


def string_test(model):
    if "":
        kernelize(model, use_fallback=False)


def float_test(model):
    if 0.0:
        kernelize(model, use_fallback=False)


def ellipsis_loop(model):
    while ...:
        pass
    kernelize(model, use_fallback=False)


def method_no_return(model):
    Fatal.die()
    kernelize(model, use_fallback=False)


def string_annotation(model):
    fail("x")
    kernelize(model, use_fallback=False)


def exit_builtin(model):
    exit(1)
    kernelize(model, use_fallback=False)


def exit_parameter(model, exit):
    exit(1)
    kernelize(model, use_fallback=False)
"""


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_kernelize_fallback_reads_every_constant_test_and_more_callees_that_never_return(target):
    """`if "":`, `if 0.0:` and `while ...:` (constants CPython's compiler reads, dropping the branch never taken),
    a `NoReturn` method called through the file's class, a `-> "NoReturn"` written as a string, and the builtin
    `exit(1)` were read as running on: their dead calls reported (18-44). A parameter named `exit` is not the
    builtin (49, reported)."""
    new, findings = port(CONSTANTS_AND_CALLEES, target)
    assert [(f.code, f.start.line) for f in findings] == [("HF016", 49)]
    assert new == CONSTANTS_AND_CALLEES
