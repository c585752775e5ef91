"""Device shims that let unmodified code run where its device does not exist.

* Reference side (original CUDA code, no GPU): :func:`install_cuda_shim` maps every CUDA device
  request (``device="cuda"``, ``.cuda()``, ``.to("cuda:0")``, ``.to(0)``,
  ``torch.set_default_device("cuda")``) to the CPU through a
  :class:`~torch.overrides.TorchFunctionMode`, and replaces the ``torch.cuda.*`` calls that real
  code makes (``is_available``, ``synchronize``, ``amp.autocast``, ``Event`` timing, memory
  queries, …) with CPU equivalents. ``torch.cuda.is_available()`` answers True so the program
  (its code and the libraries it calls; torch's own code keeps the truth) takes its CUDA path,
  and ``torch.accelerator`` answers "cuda" the same way. Memory queries answer 0 and
  ``get_device_capability()`` answers (8, 0); these are answers to the program only — porter
  never reports them as measurements.
* Ported side for ``neuron`` / ``tpu`` without that hardware: :func:`install_target_alias` makes
  the target's device string parse (``torch.utils.rename_privateuse1_backend``) and maps it to
  the device that really runs (PyTorch/XLA's device, or the CPU), with ``torch.accelerator.*``
  and ``torch.<target>.*`` answering for it.

Only the worker process of one side installs a shim; nothing here is used in porter's own
process. ``torch.Generator(device="cuda")`` makes a CPU generator. Not covered:
``x.device.type == "cuda"`` checks, CUDA extensions and Triton kernels (they need a GPU).
"""

from __future__ import annotations

import contextlib
import copyreg
import os
import pkgutil
import sys
import time
import types
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

_IS_CUDA_GETTER = torch._C.TensorBase.is_cuda


def _device_type(dev) -> str | None:
    if isinstance(dev, torch.device):
        return dev.type
    if isinstance(dev, str):
        return dev.split(":", 1)[0].strip()
    return None


class DeviceRemapMode(TorchFunctionMode):
    """Rewrites device arguments of every torch call: ``{"cuda": cpu}`` and the like."""

    def __init__(
        self,
        mapping: dict[str, torch.device],
        *,
        claim_cuda: bool = False,
        refuse: tuple[str, ...] = (),
        root: str = "",
    ):
        super().__init__()
        self.mapping = mapping
        self.claim_cuda = claim_cuda  # tensor.is_cuda answers True (reference shim)
        self.refuse = refuse  # device types this side must never compute on (the reference: the targets')
        self.root = root
        self.remapped = 0  # how many device arguments were rewritten
        self.requested: Counter = Counter()  # device type -> device arguments the program gave

    def map(self, dev):
        if isinstance(dev, bool):
            return dev
        if isinstance(dev, int) and "cuda" in self.mapping:
            self.remapped += 1
            self.requested["cuda"] += 1
            return self.mapping["cuda"]
        kind = _device_type(dev)
        if kind is not None:
            self.requested[kind] += 1
        if kind in self.refuse:
            raise TargetDeviceOnReference(
                f"the original asked for a tensor on '{dev}' at {_caller_line(self.root)}: the "
                f"reference runs the original's CUDA path (here on the CPU through porter's CUDA "
                f"shim), where no {kind} device exists; a reference on the target's device would "
                "compare the port with itself, so porter refuses it"
            )
        if kind in self.mapping:
            self.remapped += 1
            return self.mapping[kind]
        return dev

    def __torch_function__(self, func, types_, args=(), kwargs=None):
        kwargs = dict(kwargs) if kwargs else {}
        if self.claim_cuda and getattr(func, "__self__", None) is _IS_CUDA_GETTER:
            return True
        if func is torch.Tensor.cuda and "cuda" in self.mapping:
            self.requested["cuda"] += 1
            non_blocking = kwargs.get("non_blocking", False)
            return args[0].to(self.mapping["cuda"], non_blocking=non_blocking)
        if func is torch.Tensor.pin_memory and "cuda" in self.mapping:
            return args[0]
        if "device" in kwargs:
            kwargs["device"] = self.map(kwargs["device"])
        if kwargs.get("pin_memory") and "cuda" in self.mapping:
            kwargs["pin_memory"] = False
        if func is torch.Tensor.to and len(args) > 1:
            args = (args[0], *(self.map(a) if isinstance(a, (str, torch.device, int)) else a for a in args[1:]))
        return func(*args, **kwargs)


class TargetDeviceOnReference(RuntimeError):
    """The original asked for the target's device on the reference side."""


def _caller_line(root: str) -> str:
    """file:line of the innermost frame in the user's tree, else the innermost one outside torch
    and porter (a library's), for messages that name where the program did something."""
    root = root.rstrip("/") + "/"
    skip = (str(Path(torch.__file__).parent) + "/", str(Path(__file__).parent.parent) + "/")
    frame: FrameType | None = sys._getframe(1)
    outside = None
    while frame is not None:
        name = frame.f_code.co_filename
        if root != "/" and name.startswith(root):
            return f"{os.path.relpath(name, root)}:{frame.f_lineno}"
        if outside is None and not name.startswith(skip) and not name.startswith("<"):
            outside = f"{name}:{frame.f_lineno}"
        frame = frame.f_back
    return outside or "an unknown line"


_OrigAutocast = torch.amp.autocast_mode.autocast
_OrigGradScaler = torch.amp.GradScaler


def _patch_autocast(map_type: Callable[[str], str]) -> None:
    class autocast(_OrigAutocast):  # noqa: N801 - same name as torch's
        def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
            super().__init__(map_type(device_type), dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    class GradScaler(_OrigGradScaler):
        def __init__(self, device="cuda", *args, **kwargs):
            super().__init__(map_type(device), *args, **kwargs)

    patched: Any = torch  # the shim replaces torch's own classes: not what torch's types say
    patched.autocast = autocast
    patched.amp.autocast = autocast
    patched.amp.autocast_mode.autocast = autocast
    patched.amp.GradScaler = GradScaler
    patched._porter_autocast = autocast  # for the shims below


class _Event:
    """torch.cuda.Event on the host clock (elapsed_time in milliseconds, like CUDA's)."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False):
        self._t: float | None = None

    def record(self, stream=None) -> None:
        self._t = time.perf_counter()

    def elapsed_time(self, end: _Event) -> float:
        if self._t is None or end._t is None:
            raise RuntimeError("Event.elapsed_time on an event that was not recorded")
        return (end._t - self._t) * 1000.0

    def synchronize(self) -> None: ...
    def wait(self, stream=None) -> None: ...
    def query(self) -> bool:
        return True


class _Stream:
    def __init__(self, device=None, priority: int = 0, **kwargs):
        self.device = torch.device("cpu")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def wait_stream(self, stream) -> None: ...
    def wait_event(self, event) -> None: ...
    def synchronize(self) -> None: ...
    def query(self) -> bool:
        return True

    def record_event(self, event=None):
        event = event or _Event()
        event.record()
        return event


def _fresh(fn: Callable) -> Callable:
    """A distinct function object per patched name: torch._dynamo maps torch's functions by
    identity and refuses one object under two names."""

    def patched(*args, **kwargs):
        return fn(*args, **kwargs)

    return patched


def _noop(*args, **kwargs) -> None:
    return None


def _zero(*args, **kwargs) -> int:
    return 0


def _package_dirs(*names: str) -> tuple[str, ...]:
    """The folders of installed packages, found without importing them: each as Python names it
    (the code's file names say it so) and as it resolves. Resolved alone, a virtual environment
    reached through a link (`.venv -> /opt/venvs/x`) made torch's own code "the program": its
    optimizers saw CUDA on a host without one and Adam's capture probe raised (eighteenth read)."""
    import importlib.util

    dirs = []
    for name in names:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        for location in (spec.submodule_search_locations or []) if spec else []:
            dirs += [os.path.abspath(location) + "/", str(Path(location).resolve()) + "/"]
    return tuple(dict.fromkeys(dirs))


# torch's own code, and porter's: they keep the true answers (no GPU here)
_TRUTHFUL = _package_dirs("torch", "torchvision", "torchaudio", "functorch", "porter")


def _from_program(root: str) -> bool:
    """True when the first caller outside this file is the program: the user's tree, or a library
    it calls (accelerate, transformers, ignite…: on a GPU host they see the GPU and take their
    CUDA branch, accelerate choosing it with torch.accelerator); False for torch's and porter's own
    code, which must keep the true answers."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    if frame is None:
        return False
    name = frame.f_code.co_filename
    return name.startswith(root) or not name.startswith(_TRUTHFUL)


def install_cuda_shim(root: str) -> DeviceRemapMode:
    """Reference side without a GPU: CUDA requests go to the CPU. Returns the mode to enter.

    `torch.cuda.is_available()` / `device_count()` answer "one GPU" to the program: the code
    under `root` (the user's tree) and the libraries it calls; torch's own internals keep the
    true answer, so they take their CPU paths (the optimizers, for one, probe CUDA graph capture
    when CUDA is available)."""
    cpu = torch.device("cpu")
    root = root.rstrip("/") + "/"
    real_available, real_count = torch.cuda.is_available, torch.cuda.device_count
    _patch_autocast(lambda t: "cpu" if _device_type(t) == "cuda" else t)
    cuda: Any = torch.cuda  # patched below with CPU stand-ins (not what torch's types say)
    replacements: dict[str, Any] = {
        "is_available": lambda: _from_program(root) or real_available(),
        "device_count": lambda: 1 if _from_program(root) else real_count(),
        "init": _noop,
        "current_device": lambda: 0,
        "set_device": _noop,
        "synchronize": _noop,
        "get_device_name": lambda *a, **k: "porter CUDA shim (cpu)",
        "get_device_capability": lambda *a, **k: (8, 0),
        "is_bf16_supported": lambda *a, **k: True,
        # every "cuda" draw runs on the CPU here: the CPU generator is the CUDA one, so the
        # program's CUDA seeding and RNG state go to it (torch.manual_seed seeds CUDA through
        # manual_seed_all itself: torch's own calls are left alone)
        "manual_seed": lambda seed: _seed_cpu(seed, root),
        "manual_seed_all": lambda seed: _seed_cpu(seed, root),
        "seed": _noop,
        "seed_all": _noop,
        "initial_seed": lambda: torch.initial_seed(),
        "get_rng_state": lambda device="cuda": torch.get_rng_state(),
        "set_rng_state": lambda state, device="cuda": torch.set_rng_state(state),
        "get_rng_state_all": lambda: [torch.get_rng_state()],
        "set_rng_state_all": lambda states: torch.set_rng_state(states[0]),
        "empty_cache": _noop,
        "ipc_collect": _noop,
        "memory_allocated": _zero,
        "max_memory_allocated": _zero,
        "memory_reserved": _zero,
        "max_memory_reserved": _zero,
        "memory_cached": _zero,
        "reset_peak_memory_stats": _noop,
        "reset_max_memory_allocated": _noop,
        "reset_accumulated_memory_stats": _noop,
        "memory_stats": lambda *a, **k: {},
        "mem_get_info": lambda *a, **k: (0, 0),
        "Event": _Event,
        "Stream": _Stream,
        "current_stream": lambda *a, **k: _Stream(),
        "default_stream": lambda *a, **k: _Stream(),
        "stream": lambda *a, **k: contextlib.nullcontext(),
        "device": lambda *a, **k: contextlib.nullcontext(),
    }
    for name, value in replacements.items():
        setattr(cuda, name, value if isinstance(value, type) else _fresh(value))
    props = types.SimpleNamespace(
        name="porter CUDA shim (cpu)", major=8, minor=0, total_memory=0, multi_processor_count=1
    )
    cuda.get_device_properties = lambda *a, **k: props
    for name in ("range_push", "range_pop", "mark"):
        setattr(cuda.nvtx, name, _fresh(_noop))
    cuda.nvtx.range = lambda *a, **k: contextlib.nullcontext()
    autocast: Any = vars(torch)["_porter_autocast"]  # set by _patch_autocast

    class CudaAmpAutocast(autocast):
        def __init__(self, enabled=True, dtype=torch.float16, cache_enabled=True):
            super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    cuda.amp.autocast = CudaAmpAutocast
    cuda.amp.GradScaler = lambda *a, **k: torch.amp.GradScaler("cpu", *a, **k)
    _shim_accelerator(root)
    generators_on_cpu({"cuda"})
    default_device_on_cpu({"cuda"})
    from porter.verify.devices import TARGET_KINDS

    return DeviceRemapMode({"cuda": cpu}, claim_cuda=True, refuse=TARGET_KINDS, root=root)


def default_device_on_cpu(kinds: set[str]) -> None:
    """`torch.set_default_device(d)` for a device type in `kinds` makes the CPU the default:
    torch keeps the default device's context below every mode, so the remap never saw the device
    it puts into each factory call, and `set_default_device("cuda")` (then `nn.Linear(...)`) raised
    "Found no NVIDIA driver on your system" on a host without a GPU."""
    real = torch.set_default_device

    def set_default_device(device):
        return real(torch.device("cpu") if _device_type(device) in kinds else device)

    set_default_device.__wrapped__ = real  # type: ignore[attr-defined]
    torch.set_default_device = set_default_device


_RealGenerator = torch.Generator


def generator_metaclass(real: Any, name: str = "torch:Generator") -> Any:
    """A metaclass for a class made in place of `torch.Generator` (here, and
    `rng.ProgramSeeds`'s): isinstance(g, torch.Generator) stays true of every generator (torch's
    own default one too), not only of those made after the patch; the class pickles as `name`
    (its public place: the patched class here, the real one elsewhere). Derived from the metaclass
    torch gives its Generator (torch 2.13's is `OpaqueBaseMeta`; a plain `type` here was
    "metaclass conflict" at the program's start: every reference run under torch 2.13 ended
    before its first line)."""

    class AnyGenerator(type(real)):  # type: ignore[misc]
        def __instancecheck__(cls, obj) -> bool:
            return isinstance(obj, real)

        def __subclasscheck__(cls, sub) -> bool:
            return issubclass(sub, real)

    # the class itself pickles by its public name (`pkgutil.resolve_name`, found again where porter
    # is not): a local class, a program that pickled it (a spawn DataLoader worker's
    # `partial(RandomState, seed)`) failed under porter only, "Can't pickle local object"
    # (twenty-ninth trace2 read)
    copyreg.pickle(AnyGenerator, lambda cls: (pkgutil.resolve_name, (name,)))
    return AnyGenerator


def generators_on_cpu(kinds: set[str], made: list | None = None) -> None:
    """`torch.Generator(device=d)` for a device type in `kinds` makes a CPU generator: its draws
    then run on the CPU (the shim's "cuda"; the port's device under porter.verify.rng), seeded
    by the program's own `manual_seed` calls. `made` collects the device types asked for."""

    class Generator(_RealGenerator, metaclass=generator_metaclass(_RealGenerator)):  # type: ignore[metaclass]
        def __new__(cls, device="cpu"):
            kind = _device_type(device) if not isinstance(device, int) else "cuda"
            if kind in kinds:
                if made is not None:
                    made.append(kind)
                device = "cpu"
            return _RealGenerator.__new__(cls, device=device)

        def __init__(self, device="cpu"):  # the device was taken by __new__
            pass

        def __reduce__(self):  # pickled (`torch.save`) as torch's own: this class is local
            return (_RealGenerator, *_RealGenerator.__reduce__(self)[1:])

    patched: Any = torch
    patched.Generator = Generator


def _seed_cpu(seed, root: str) -> None:
    if _from_program(root):
        torch.default_generator.manual_seed(int(seed))


def _shim_accelerator(root: str) -> None:
    """torch.accelerator answers as on a one-GPU CUDA host, to the program (its code and the
    libraries it calls): a program that picks its device with
    `torch.accelerator.current_accelerator()` (accelerate's `PartialState` does) takes the branch
    it takes on a GPU (its "cuda" device then runs on the CPU through the mode above). torch's
    own callers keep the true answers."""
    acc: Any = torch.accelerator  # patched with CPU stand-ins (not what torch's types say)
    cuda = torch.device("cuda")
    real: dict[str, Callable[..., Any]] = {
        n: getattr(acc, n) for n in ("is_available", "device_count", "current_accelerator")
    }

    def current_accelerator(check_available: bool = False):
        return cuda if _from_program(root) else real["current_accelerator"](check_available)

    replacements: dict[str, Callable[..., Any]] = {
        "is_available": lambda: _from_program(root) or real["is_available"](),
        "device_count": lambda: 1 if _from_program(root) else real["device_count"](),
        "current_accelerator": current_accelerator,
        "current_device_index": lambda: 0,
        "current_device_idx": lambda: 0,
        "set_device_index": _noop,
        "set_device_idx": _noop,
        "device_index": lambda *a, **k: contextlib.nullcontext(),
        "synchronize": _noop,
        "current_stream": lambda *a, **k: _Stream(),
        "set_stream": _noop,
        "empty_cache": _noop,
        "memory_allocated": _zero,
        "max_memory_allocated": _zero,
        "memory_reserved": _zero,
        "max_memory_reserved": _zero,
        "reset_peak_memory_stats": _noop,
        "reset_accumulated_memory_stats": _noop,
        "memory_stats": lambda *a, **k: {},
        "get_memory_info": lambda *a, **k: (0, 0),
    }
    for name, value in replacements.items():
        setattr(acc, name, _fresh(value))


def install_target_alias(target: str, device: torch.device, synchronize: Callable[[], None]) -> DeviceRemapMode:
    """Ported side for `neuron` / `tpu` without their runtime: their device strings run on
    `device` (PyTorch/XLA's device or the CPU). Returns the mode to enter."""
    if torch._C._get_privateuse1_backend_name() == "privateuseone":
        torch.utils.rename_privateuse1_backend(target)
    _patch_autocast(lambda t: device.type if _device_type(t) == target else t)
    acc = torch.accelerator
    fake_device = torch.device(target)
    acc_replacements: dict[str, Callable[..., Any]] = {
        "is_available": lambda: True,
        "device_count": lambda: 1,
        "current_accelerator": lambda *a, **k: fake_device,
        "current_device_index": lambda: 0,
        "current_device_idx": lambda: 0,
        "set_device_index": _noop,
        "set_device_idx": _noop,
        "synchronize": lambda *a, **k: synchronize(),
        "empty_cache": _noop,
        "memory_allocated": _zero,
        "max_memory_allocated": _zero,
        "memory_reserved": _zero,
        "max_memory_reserved": _zero,
        "reset_peak_memory_stats": _noop,
        "memory_stats": lambda *a, **k: {},
    }
    acc_replacements = {k: _fresh(v) for k, v in acc_replacements.items()}
    for name, value in acc_replacements.items():
        setattr(acc, name, value)
    if not hasattr(torch, target):
        module: Any = types.ModuleType(f"torch.{target}")  # a device module, filled in below
        for name in (
            "is_available",
            "device_count",
            "synchronize",
            "empty_cache",
            "memory_allocated",
            "max_memory_allocated",
            "reset_peak_memory_stats",
        ):
            setattr(module, name, _fresh(acc_replacements[name]))
        module.current_device = lambda: 0
        module.set_device = _noop
        module.manual_seed = lambda seed: torch.manual_seed(seed)
        module.manual_seed_all = lambda seed: torch.manual_seed(seed)
        torch._register_device_module(target, module)
    return DeviceRemapMode({target: device})


__all__ = [
    "DeviceRemapMode",
    "TargetDeviceOnReference",
    "install_cuda_shim",
    "install_target_alias",
    "generators_on_cpu",
]
