"""The same random numbers on both sides of a parity run.

A tensor drawn on a device comes from that device's generator: XLA's is not the CPU's, nor
CUDA's, so a port that draws noise or initialises weights on its device starts from other
numbers than the original, however faithful it is. In a parity run, :class:`DeviceRngMode`
draws every random tensor that would be drawn on a device from the CPU's default generator
(seeded the same way on both sides, by porter and by the program) and moves it to the device:

* factories given a device (`torch.randn(..., device=d)`, `rand`, `randint`, `randperm`,
  `normal`), `*_like` of a device tensor, `bernoulli`/`multinomial`/`poisson` of one;
* in-place draws on a device tensor (`normal_`, `uniform_`, `bernoulli_`, `random_`,
  `exponential_`, `geometric_`, `log_normal_`, `cauchy_`) and the `torch.nn.init` initialisers
  (run on a CPU tensor of the same shape and copied: bit-identical to the CPU's);
* dropout masks (`F.dropout`, `dropout1d/2d/3d`, `alpha_dropout`, `feature_alpha_dropout`,
  `torch.dropout`, and `scaled_dot_product_attention` with `dropout_p > 0`, which runs as its
  math form so its mask can be drawn): the mask comes from the same CPU call the original
  makes, so it consumes the generator as the original does.

The CUDA shim's reference already draws everything on the CPU; this mode runs where a real
device draws (the port, or a reference on a real GPU). With redirect off (`--device-rng`) it
only counts the device draws and their source lines, so a divergence that starts at one can
be named as such. Not redirected (counted apart): draws with an explicit device `generator=`,
and draws inside compiled graphs (torch.compile regions do not call Python modes per op).
"""

from __future__ import annotations

import functools
import math
import os
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from porter.verify.probes import user_location

T = torch.Tensor
_PASS = object()  # a redirecting helper's "no redirect: run the call as it is"

FACTORIES = {
    torch.randn: "torch.randn",
    torch.rand: "torch.rand",
    torch.randint: "torch.randint",
    torch.randperm: "torch.randperm",
    torch.normal: "torch.normal",
}
LIKE = {
    torch.randn_like: "torch.randn_like",
    torch.rand_like: "torch.rand_like",
    torch.randint_like: "torch.randint_like",
}
# draws whose result depends on a device tensor's values (probabilities, means, rates)
OF_VALUES = {
    torch.bernoulli: "torch.bernoulli",
    T.bernoulli: ".bernoulli()",
    torch.multinomial: "torch.multinomial",
    T.multinomial: ".multinomial()",
    torch.poisson: "torch.poisson",
}
IN_PLACE = {
    T.normal_: ".normal_()",
    T.uniform_: ".uniform_()",
    T.bernoulli_: ".bernoulli_()",
    T.random_: ".random_()",
    T.exponential_: ".exponential_()",
    T.geometric_: ".geometric_()",
    T.log_normal_: ".log_normal_()",
    T.cauchy_: ".cauchy_()",
}
DROPOUT = {F.dropout: "F.dropout", F.dropout1d: "F.dropout1d", F.dropout2d: "F.dropout2d", F.dropout3d: "F.dropout3d"}
DROPOUT_ON_HOST = {F.alpha_dropout: "F.alpha_dropout", F.feature_alpha_dropout: "F.feature_alpha_dropout"}
INITS = (
    "uniform_",
    "normal_",
    "trunc_normal_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
    "sparse_",
)
FIRST_DRAWS = 20  # draws listed one by one in the trace; the rest are counted


def _on_device(t) -> bool:
    return isinstance(t, torch.Tensor) and t.device.type not in ("cpu", "meta")


def _device_arg(dev) -> torch.device | None:
    if dev is None or isinstance(dev, bool):
        return None
    try:
        d = torch.device(dev)
    except (RuntimeError, TypeError):
        return None
    return d if d.type not in ("cpu", "meta") else None


def _compiling() -> bool:
    """Whether dynamo is tracing this call: a draw there is in a compiled frame, whose graph runs
    without this mode (dynamo reads this as True while it traces, eager code as False)."""
    return torch.compiler.is_compiling()


def _host(t):
    return t.detach().to("cpu") if isinstance(t, torch.Tensor) and _on_device(t) else t


class DeviceRngMode(TorchFunctionMode):
    """Draws on a device come from the CPU generator (redirect) or are only counted."""

    def __init__(self, root: str, redirect: bool = True, step: Callable[[], int] = lambda: 0):
        super().__init__()
        self.root = root.rstrip("/") + "/"
        self.redirect = redirect
        self.step = step
        self.counts: Counter = Counter()  # (call, location) -> draws on a device
        self.by_step: Counter = Counter()  # optimizer steps done when drawn -> draws
        self.first: list[dict] = []
        self.own_generator: Counter = Counter()  # (call, location) with a device generator=
        self.compiled = 0  # draws met while dynamo traced them: in a compiled frame (`causes.compiled_draws`)
        self._restore: list[tuple[object, str, object]] = []
        self.device_generators: list[str] = []  # device types of generators made on the CPU instead

    # ------------------------------------------------------------------ bookkeeping
    def _seen(self, call: str, device, own_generator: bool = False) -> None:
        loc = user_location(self.root)
        if own_generator:
            self.own_generator[(call, loc)] += 1
            return
        step = self.step()
        self.compiled += _compiling()
        self.counts[(call, loc)] += 1
        self.by_step[step] += 1
        if len(self.first) < FIRST_DRAWS:
            self.first.append({"call": call, "location": loc, "device": str(device), "after_step": step})

    def to_dict(self) -> dict:
        return {
            "redirected": self.redirect,
            "generator": "the CPU's default generator, results moved to the device"
            if self.redirect
            else "each device's own generator",
            "device_draws": sum(self.counts.values()),
            "compiled_draws": self.compiled,
            "before_step_1": self.by_step.get(0, 0),
            "by_step": {str(k): v for k, v in sorted(self.by_step.items())},
            "sites": [{"call": c, "location": loc, "count": n} for (c, loc), n in self.counts.most_common(30)],
            "first": self.first,
            "own_generator": [
                {"call": c, "location": loc, "count": n} for (c, loc), n in self.own_generator.most_common(10)
            ],
            "device_generators_made_on_cpu": len(self.device_generators),
        }

    # ------------------------------------------------------------------ nn.init
    def install_inits(self) -> None:
        """torch.nn.init's initialisers on a device tensor run on a CPU tensor of its shape and
        are copied in: the CPU's numbers, bit for bit (their arithmetic after the draw, such as
        trunc_normal_'s erfinv or orthogonal_'s QR, then runs on the CPU too)."""
        init = torch.nn.init
        for name in INITS:
            original = getattr(init, name)

            def wrapper(tensor, *args, _original=original, _name=f"nn.init.{name}", **kwargs):
                gen = kwargs.get("generator")
                if not _on_device(tensor):
                    return _original(tensor, *args, **kwargs)
                if gen is not None and gen.device.type != "cpu":
                    self._seen(_name, tensor.device, own_generator=True)
                    return _original(tensor, *args, **kwargs)
                self._seen(_name, tensor.device)
                if not self.redirect:
                    return _original(tensor, *args, **kwargs)
                host = torch.empty(tensor.shape, dtype=tensor.dtype)
                _original(host, *args, **kwargs)
                with torch.no_grad():
                    tensor.copy_(host)
                return tensor

            functools.update_wrapper(wrapper, original)
            self._restore.append((init, name, original))
            setattr(init, name, wrapper)

    def install_generators(self, kinds: set[str]) -> None:
        """The program's own device generators (`torch.Generator(device="xla")`) become CPU
        generators, seeded by the program's own calls as on the other side; their draws then
        take the redirected paths above."""
        from porter.verify.shim import generators_on_cpu

        generators_on_cpu(kinds, self.device_generators)

    def uninstall_inits(self) -> None:
        for owner, name, original in reversed(self._restore):
            setattr(owner, name, original)
        self._restore.clear()

    # ------------------------------------------------------------------ the mode
    def __torch_function__(self, func, types_, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        gen = kwargs.get("generator")
        device_gen = isinstance(gen, torch.Generator) and gen.device.type != "cpu"
        out = _PASS
        if func is torch.normal and any(_on_device(a) for a in (*args, *kwargs.values())):
            out = self._normal(func, args, kwargs, device_gen)
        elif func in FACTORIES:
            out = self._factory(func, args, kwargs, device_gen)
        elif func in LIKE and args and (_on_device(args[0]) or _device_arg(kwargs.get("device"))):
            out = self._like(func, args, kwargs, device_gen)
        elif func in OF_VALUES and args and _on_device(args[0]):
            out = self._of_values(func, args, kwargs, device_gen)
        elif func in IN_PLACE and args and _on_device(args[0]):
            out = self._in_place(func, args, kwargs, device_gen)
        elif func in DROPOUT or func is torch.dropout:
            return self._dropout(func, args, kwargs)
        elif func in DROPOUT_ON_HOST:
            out = self._dropout_on_host(func, args, kwargs)
        elif func is F.scaled_dot_product_attention:
            return self._sdpa(func, args, kwargs)
        return func(*args, **kwargs) if out is _PASS else out

    # Each of these notes a draw on a device and, when redirecting (and the draw is not from the
    # program's own device generator), makes it on the CPU and moves the result; _PASS: the call
    # runs as it is.

    def _normal(self, func, args, kwargs, device_gen):
        """torch.normal with a tensor on the device (its mean or std)."""
        dev = next(a.device for a in (*args, *kwargs.values()) if _on_device(a))
        self._seen("torch.normal", dev, device_gen)
        if self.redirect and not device_gen and "out" not in kwargs:
            return func(*[_host(a) for a in args], **{k: _host(v) for k, v in kwargs.items()}).to(dev)
        return _PASS

    def _factory(self, func, args, kwargs, device_gen):
        """torch.rand, randn, randint, ... with a device argument."""
        dev = _device_arg(kwargs.get("device"))
        if dev is None:
            return _PASS
        self._seen(FACTORIES[func], dev, device_gen)
        if self.redirect and not device_gen and "out" not in kwargs:
            grad = kwargs.pop("requires_grad", False)
            kwargs["device"] = "cpu"
            kwargs.pop("pin_memory", None)
            out = func(*args, **kwargs).to(dev)
            return out.requires_grad_(True) if grad else out
        return _PASS

    def _like(self, func, args, kwargs, device_gen):
        """torch.rand_like and the like, of a device tensor or onto a device."""
        dev = _device_arg(kwargs.get("device")) or args[0].device
        self._seen(LIKE[func], dev, device_gen)
        if self.redirect and not device_gen:
            grad = kwargs.pop("requires_grad", False)
            kwargs["device"] = "cpu"
            template = torch.empty_like(args[0], device="cpu")
            out = func(template, *args[1:], **kwargs).to(dev)
            return out.requires_grad_(True) if grad else out
        return _PASS

    def _of_values(self, func, args, kwargs, device_gen):
        """Draws shaped by a device tensor's values (torch.bernoulli, multinomial, poisson)."""
        self._seen(OF_VALUES[func], args[0].device, device_gen)
        if self.redirect and not device_gen and "out" not in kwargs:
            host = [_host(a) for a in args]
            return func(*host, **{k: _host(v) for k, v in kwargs.items()}).to(args[0].device)
        return _PASS

    def _in_place(self, func, args, kwargs, device_gen):
        """In-place draws into a device tensor (Tensor.uniform_, normal_, ...)."""
        self._seen(IN_PLACE[func], args[0].device, device_gen)
        if self.redirect and not device_gen:
            t = args[0]
            host = torch.empty(t.shape, dtype=t.dtype)
            func(host, *[_host(a) for a in args[1:]], **{k: _host(v) for k, v in kwargs.items()})
            return t.copy_(host)
        return _PASS

    def _dropout_on_host(self, func, args, kwargs):
        """Dropout variants drawn whole on the CPU (when training, with p > 0, on the device)."""
        x, p, training = _dropout_args(args, kwargs)
        if training and p > 0 and _on_device(x):
            self._seen(DROPOUT_ON_HOST[func], x.device)
            if self.redirect:
                return func(x.to("cpu"), p, True).to(x.device)
        return _PASS

    def _dropout(self, func, args, kwargs):
        x, p, training = _dropout_args(args, kwargs, train_key="train" if func is torch.dropout else "training")
        if not (training and 0 < p and _on_device(x)):
            return func(*args, **kwargs)
        self._seen("torch.dropout" if func is torch.dropout else DROPOUT[func], x.device)
        if not self.redirect:
            return func(*args, **kwargs)
        inplace = kwargs.get("inplace", args[3] if len(args) > 3 else False)
        return _masked(F.dropout if func is torch.dropout else func, x, p, bool(inplace))

    def _sdpa(self, func, args, kwargs):
        names = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale")
        bound = dict(zip(names, args))
        bound.update(kwargs)
        p = float(bound.get("dropout_p") or 0.0)
        q = bound["query"]
        if p <= 0 or not _on_device(q):
            return func(*args, **kwargs)
        self._seen("F.scaled_dot_product_attention(dropout_p>0)", q.device)
        if not self.redirect:
            return func(*args, **kwargs)
        return _sdpa_math(
            bound["query"],
            bound["key"],
            bound["value"],
            bound.get("attn_mask"),
            p,
            bool(bound.get("is_causal")),
            bound.get("scale"),
            bool(bound.get("enable_gqa")),
        )


def _masked(dropout, x, p: float, inplace: bool):
    """x times the mask the CPU's own `dropout` of ones gives (the mask scaled by 1/(1-p)): it
    consumes the CPU generator as the original's dropout on the CPU does."""
    noise = dropout(torch.ones(x.shape, dtype=x.dtype), p, True).to(x.device)
    return x.mul_(noise) if inplace else x * noise


def _dropout_args(args, kwargs, train_key: str = "training"):
    x = args[0] if args else kwargs.get("input")
    p = args[1] if len(args) > 1 else kwargs.get("p", 0.5)
    training = args[2] if len(args) > 2 else kwargs.get(train_key, True)
    return x, float(p), bool(training)


def _sdpa_math(q, k, v, mask, p, is_causal, scale, enable_gqa):
    """scaled_dot_product_attention as torch's math backend computes it (the CPU's path when
    dropout is on), the attention weights' dropout mask drawn on the CPU."""
    L, S = q.size(-2), k.size(-2)
    scale = 1.0 / math.sqrt(q.size(-1)) if scale is None else scale
    if enable_gqa:
        k = k.repeat_interleave(q.size(-3) // k.size(-3), -3)
        v = v.repeat_interleave(q.size(-3) // v.size(-3), -3)
    attn = (q * math.sqrt(scale)) @ (k.transpose(-2, -1) * math.sqrt(scale))
    if is_causal:
        keep = torch.ones(L, S, dtype=torch.bool, device=q.device).tril()
        attn = attn.masked_fill(~keep, float("-inf"))
    if mask is not None:
        attn = attn.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else attn + mask
    attn = torch.softmax(attn, dim=-1)
    attn = _masked(F.dropout, attn, p, False)
    return attn @ v


__all__ = ["DeviceRngMode"]


PROGRAM_SEEDS = 16  # the program's own seedings kept (a loop that reseeds each epoch: the first)

# the seedings watched: (module, attribute, the name said). Only `torch.manual_seed` was
# (twenty-sixth read): a port that moved or dropped `numpy.random.seed`, `random.seed` or a
# device seeding passed unsaid under porter's own seeding of all three.
WATCHED_SEEDINGS = (
    ("torch", "manual_seed", "torch.manual_seed"),
    ("torch.random", "manual_seed", "torch.manual_seed"),
    ("torch.cuda", "manual_seed", "torch.cuda.manual_seed"),
    ("torch.cuda", "manual_seed_all", "torch.cuda.manual_seed_all"),
    ("numpy.random", "seed", "numpy.random.seed"),
    ("random", "seed", "random.seed"),
    # a state set, or a numpy Generator made, draws as a seeding does: unwatched, a port that set
    # another state or seeded its `default_rng` otherwise was not said (twenty-seventh read)
    ("torch", "set_rng_state", "torch.set_rng_state"),
    ("torch.random", "set_rng_state", "torch.set_rng_state"),
    ("numpy.random", "default_rng", "numpy.random.default_rng"),
)
# what `torch.random.default_generator.manual_seed` (a C method: not wrappable) is said as, seen
# only by the default generator's seed changing between the seedings watched
UNWATCHED_DEFAULT = "torch.default_generator.manual_seed"


def _generator_state(call: str):
    """The state a seeding resets, to tell whether it was drawn from since the last one; None
    for a device's (not read: on the CUDA shim it is the CPU's, said by `torch`'s)."""
    if call in ("torch.manual_seed", "torch.set_rng_state"):
        return torch.get_rng_state()
    if call == "random.seed":
        import random

        return random.getstate()
    if call == "numpy.random.seed":
        import numpy

        state: Any = numpy.random.get_state()  # the legacy tuple: (name, keys, pos, ...)
        return (state[0], state[1].tobytes(), *state[2:])
    return None


_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep


def _seed_of(seed):
    """A seeding's seed as the trace keeps it: a state set (`torch.set_rng_state`) by its CRC-32
    (two sides that set one state agree; its bytes are not kept)."""
    if isinstance(seed, torch.Tensor) and seed.dtype == torch.uint8 and seed.device.type == "cpu":
        import zlib

        return zlib.crc32(seed.contiguous().numpy().tobytes())
    return seed


def _same(a, b) -> bool:
    return torch.equal(a, b) if isinstance(a, torch.Tensor) else a == b


class ProgramSeeds:
    """The program's own seedings (`WATCHED_SEEDINGS`, a `torch.Generator`'s `manual_seed`): the
    call, the seed, where, and whether its generator was drawn from since the last seeding
    (porter's or the program's). Porter seeds torch, numpy and random before the program
    starts, so a port that seeds after making its model drew its weights from porter's seed as
    the reference did and passed, unsaid: run alone, its weights are unseeded (twenty-sixth
    read). Said by `tracecmp._program_seeds`."""

    def __init__(self, root: str) -> None:
        self.root = root.rstrip("/") + "/"
        self.calls: list[dict] = []
        self._restore: list[tuple] = []
        self._inside = False  # torch.manual_seed seeds CUDA through torch.cuda.manual_seed_all
        self._last = {call: _generator_state(call) for _, _, call in WATCHED_SEEDINGS}
        self._seed = torch.initial_seed()

    def install(self) -> None:
        import importlib

        for module_name, attr, call in WATCHED_SEEDINGS:
            try:
                owner = importlib.import_module(module_name)
            except ImportError:  # numpy not installed: nothing of it to watch
                continue
            original = getattr(owner, attr)
            self._restore.append((owner, attr, original))
            setattr(owner, attr, self._wrap(original, call))
        self._watch_generators()
        self._watch_random_states()

    def uninstall(self) -> None:
        for owner, attr, original in reversed(self._restore):
            setattr(owner, attr, original)
        self._restore.clear()

    def finish(self) -> list[dict]:
        """The calls, with a seeding of the default generator made past the wrappers said."""
        self._unwatched()
        return self.calls

    def _wrap(self, original, call: str):
        def seeding(*args, **kwargs):  # `random.seed()` and `numpy.random.seed()` take no seed
            if self._inside or sys._getframe(1).f_code.co_filename.startswith(_TORCH_DIR):
                # (torch's own: `checkpoint` and `fork_rng` set back a state they took)
                return original(*args, **kwargs)
            self._unwatched()
            last, now = self._last.get(call), _generator_state(call)
            seed = _seed_of(args[0] if args else next(iter(kwargs.values()), None))
            self._note(call, seed, None if now is None else not _same(now, last))
            self._inside = True
            try:
                return original(*args, **kwargs)
            finally:
                self._inside = False
                self._last[call] = _generator_state(call)
                if call.startswith("torch."):
                    self._after_torch()

        return functools.update_wrapper(seeding, original)

    def _note(self, call: str, seed, drawn: bool | None) -> None:
        if len(self.calls) < PROGRAM_SEEDS:
            seen = seed if type(seed) is int else None
            self.calls.append({"call": call, "seed": seen, "location": user_location(self.root), "drawn": drawn})

    def _after_torch(self) -> None:
        """A device seeding may have reseeded the CPU generator (the CUDA shim's is the CPU's)."""
        self._last["torch.manual_seed"] = torch.get_rng_state()
        self._seed = torch.initial_seed()

    def _unwatched(self) -> None:
        if torch.initial_seed() != self._seed:
            self._seed = torch.initial_seed()
            if len(self.calls) < PROGRAM_SEEDS:
                self.calls.append({"call": UNWATCHED_DEFAULT, "seed": self._seed, "location": None, "drawn": None})
            self._last["torch.manual_seed"] = torch.get_rng_state()

    def _watch_generators(self) -> None:
        """`torch.Generator` made a class whose `manual_seed` is watched (the C type's method
        cannot be wrapped); `shim.generator_metaclass` keeps every generator an instance of it."""
        from porter.verify.shim import _RealGenerator, generator_metaclass

        base, watch = torch.Generator, self
        meta = generator_metaclass(base) if base is _RealGenerator else type(base)  # the shim's keeps its own

        class Generator(base, metaclass=meta):  # type: ignore[misc,valid-type,metaclass]
            def manual_seed(self, seed):
                watch._note("torch.Generator.manual_seed", seed, _drawn_from(self))
                out = base.manual_seed(self, seed)
                self._porter_state = self.get_state()
                return out

            def __reduce__(self):  # pickled (`torch.save`) as torch's own: this class is local
                return (_RealGenerator, *_RealGenerator.__reduce__(self)[1:])

        def _drawn_from(gen) -> bool | None:
            try:
                last = getattr(gen, "_porter_state", None)
                if last is None:  # first seeding: against a new generator's state
                    last = _RealGenerator(device=gen.device).get_state()
                return not torch.equal(gen.get_state(), last)
            except RuntimeError:  # a device generator's state not readable here
                return None

        self._restore.append((torch, "Generator", base))
        patched: Any = torch
        patched.Generator = Generator

    def _watch_random_states(self) -> None:
        """`numpy.random.RandomState` made a class whose making and `seed` are watched (a C type:
        its methods cannot be wrapped): unwatched, a port that seeded its RandomState otherwise
        passed unsaid (twenty-eighth read's leftover). isinstance stays true of numpy's own
        (`shim.generator_metaclass`: the global `mtrand._rand` too), and it pickles as numpy's."""
        try:
            import numpy
        except ImportError:  # numpy not installed: nothing of it to watch
            return
        from porter.verify.shim import generator_metaclass

        base, watch = numpy.random.RandomState, self

        class RandomState(base, metaclass=generator_metaclass(base, "numpy.random:RandomState")):  # type: ignore[misc,valid-type,metaclass]
            def __init__(self, seed=None):
                watch._note("numpy.random.RandomState", seed, False)  # (a new one: nothing drawn yet)
                base.__init__(self, seed)

            def seed(self, seed=None):
                watch._note("numpy.random.RandomState.seed", seed, None)
                return base.seed(self, seed)

        self._restore.append((numpy.random, "RandomState", base))
        patched: Any = numpy.random
        patched.RandomState = RandomState
