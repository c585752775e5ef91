"""What each side really runs on. Decided inside the side's own process, where the runtimes
are imported, and written into the result so no report can claim more than what ran."""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import resource
import sys
import types
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch  # imported where it runs: selecting a device starts the runtime


@dataclass
class SideDevice:
    role: str  # "reference" | "ported"
    kind: str  # the device type tensors live on: cuda, cpu, xla, neuron, tpu
    label: str  # what the report prints, e.g. "xla (CPU PJRT, emulated)"
    hardware: bool  # an accelerator really ran this side
    emulated: bool  # the target's compiled path ran on a stand-in (XLA on the CPU)
    shim: str | None = None  # the device shim installed in this process, if any
    versions: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    device: torch.device | None = None  # not serialised
    sync: Callable[[], None] = field(default=lambda: None, repr=False)
    remap: Any = field(default=None, repr=False)  # the shim's DeviceRemapMode, if one runs
    collectives: Any = field(default=None, repr=False)  # porter.verify.collectives.COUNTS, if used

    def to_dict(self) -> dict:
        data = {k: v for k, v in asdict(self).items() if k not in ("device", "sync", "remap", "collectives")}
        data["device"] = str(self.device)
        return data


def _versions() -> dict:
    import torch

    out = {"python": sys.version.split()[0], "torch": torch.__version__}
    for mod in ("torch_xla", "torch_neuronx", "torch_tpu"):
        m = sys.modules.get(mod)
        if m is not None:
            out[mod] = getattr(m, "__version__", "unknown")
    return out


def hardware_hints() -> dict[str, bool]:
    """Device files that show accelerator hardware on this host (checked by the parent to
    decide whether PJRT_DEVICE=CPU is the right default)."""
    dev = Path("/dev")
    names = [p.name for p in dev.iterdir()] if dev.is_dir() else []
    return {
        "neuron": any(n.startswith("neuron") for n in names),
        "tpu": any(n.startswith("accel") or n == "vfio" for n in names),
    }


# the targets' runtimes: the reference never imports them (keep_reference_off_targets)
TARGET_RUNTIMES = ("torch_xla", "torch_neuronx", "torch_tpu")
TARGET_KINDS = ("xla", "neuron", "tpu")
# the libraries whose versions a trace records where the program imported them (`library_versions`):
# torch, its targets' runtimes, and the model libraries whose code runs in the step
RECORDED_LIBRARIES = ("torch", *TARGET_RUNTIMES, "transformers", "accelerate", "peft", "diffusers", "timm", "numpy")


MAX_FOUND_LIBRARIES = 32  # libraries found by `torch_libraries` a trace records at most (first by name)


def library_versions() -> dict[str, str]:
    """Python's version and those of the `RECORDED_LIBRARIES` the process imported, read when the
    trace is written: the side's `versions` are read before the program runs, so a trace held
    no transformers version, and two traces recorded with other transformers, torch or torch_xla
    compared with nothing said (twenty-fourth trace read's leftover). Then those of the other
    installed libraries whose code uses torch (`torch_libraries`)."""
    return _library_versions_of(torch_libraries()[0])


def _library_versions_of(found: dict[str, list[str]]) -> dict[str, str]:
    out: dict[str, str | None] = {"python": sys.version.split()[0]}
    for name in RECORDED_LIBRARIES:
        version = getattr(sys.modules.get(name), "__version__", None)
        if isinstance(version, str):
            out[name] = version
    for name, dists in found.items():
        version = getattr(sys.modules.get(name), "__version__", None)
        out[name] = version if isinstance(version, str) else _dist_version(dists[0])
    return {k: v for k, v in out.items() if v is not None}


def libraries_recorded() -> tuple[dict[str, str], str | None]:
    """`library_versions`, and a note naming the libraries past `MAX_FOUND_LIBRARIES` whose
    versions are not recorded (they were dropped unsaid: twenty-fifth read's leftover)."""
    found, left = torch_libraries()
    if not left:
        return _library_versions_of(found), None
    shown = ", ".join(left[:5]) + (", ..." if len(left) > 5 else "")
    return _library_versions_of(found), (
        f"{len(left)} further imported {'library that uses' if len(left) == 1 else 'libraries that use'} torch "
        f"({shown}): versions not recorded (porter records {MAX_FOUND_LIBRARIES}, first by name), "
        "so traces of other releases of them compare unsaid"
    )


def torch_libraries() -> tuple[dict[str, list[str]], list[str]]:
    """The imported top-level packages, outside `RECORDED_LIBRARIES` and porter, that an installed
    distribution holds (importlib.metadata: not the program's own modules) and one of whose
    modules holds torch or a torch module, or one of another such library's (a library that
    reaches torch only through transformers was not recorded: twenty-fifth read's leftover): a
    fixed list of ten left flash-attn, xformers and deepspeed unrecorded (twenty-fifth read).
    At most `MAX_FOUND_LIBRARIES`, with the names of those past it."""
    torch = sys.modules.get("torch")
    if torch is None:
        return {}, []
    try:
        installed = importlib.metadata.packages_distributions()
    except Exception:  # noqa: BLE001 — unreadable metadata: the fixed list only
        return {}, []
    # through installed packages only: the program's `__main__` holds torch, and dill holds it
    holds = {top: held for top, held in _held_tops().items() if top in installed}
    holds.pop(__name__.partition(".")[0], None)
    tops = _reaching(holds, {"torch", *RECORDED_LIBRARIES} - {"numpy"}) - {"torch", *RECORDED_LIBRARIES}
    recorded = {d for name in RECORDED_LIBRARIES for d in installed.get(name, ())}  # functorch: torch's
    found = [t for t in sorted(tops) if not recorded.issuperset(installed.get(t) or recorded)]
    return {t: installed[t] for t in found[:MAX_FOUND_LIBRARIES]}, found[MAX_FOUND_LIBRARIES:]


def _held_tops() -> dict[str, set[str]]:
    """Per imported top-level package, the top-level packages whose modules its modules'
    namespaces hold (`import torch.nn as nn`: torch); read from their dicts, so no lazy
    module's `__getattr__` runs."""
    holds: dict[str, set[str]] = {}
    for name, mod in list(sys.modules.items()):
        if isinstance(mod, types.ModuleType):
            held = holds.setdefault(name.partition(".")[0], set())
            held.update(
                str(getattr(v, "__name__", "")).partition(".")[0]
                for v in list(vars(mod).values())
                if issubclass(type(v), types.ModuleType)  # (not `__class__`: a deprecated alias warns)
            )
    return holds


def _reaching(holds: dict[str, set[str]], targets: set[str]) -> set[str]:
    """The packages that hold a module of `targets`, or of a package that does, and so on."""
    reached = set(targets)
    grew = True
    while grew:
        more = {top for top, held in holds.items() if top not in reached and held & reached}
        reached |= more
        grew = bool(more)
    return reached


def _dist_version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except Exception:  # noqa: BLE001 — a distribution without a readable version: not recorded
        return None


class TargetRuntimeImported(RuntimeError):
    """A target runtime was imported in the reference's process before porter could keep it out."""


def keep_reference_off_targets() -> None:
    """The reference is the original's CUDA run, on a GPU or on the CPU through the CUDA shim:
    a CUDA host has no XLA. With torch_xla importable, transformers, accelerate and others train
    on XLA by themselves (`is_torch_xla_available()`), and a reference on XLA compares the port
    with itself. So the target runtimes cannot be imported here: `import torch_xla` raises
    ModuleNotFoundError and `importlib.util.find_spec` finds nothing, as on a host without them
    (None in sys.modules is Python's own way to say so). Called before the program runs."""
    imported = [name for name in TARGET_RUNTIMES if sys.modules.get(name) is not None]
    if imported:
        raise TargetRuntimeImported(
            f"{', '.join(imported)} was imported in the reference's process before the program "
            "started (TORCH_DEVICE_BACKEND_AUTOLOAD?): the reference must not run on a target's "
            "device"
        )
    for name in TARGET_RUNTIMES:
        sys.modules[name] = None  # type: ignore[assignment]  # Python's marker for "not importable"


def select_reference() -> SideDevice:
    keep_reference_off_targets()
    import torch

    if torch.cuda.is_available():
        name = torch.cuda.get_device_name(0)
        dev = torch.device("cuda")
        return SideDevice(
            "reference",
            "cuda",
            f"cuda ({name})",
            hardware=True,
            emulated=False,
            versions=_versions(),
            device=dev,
            sync=torch.cuda.synchronize,
        )
    return SideDevice(
        "reference",
        "cpu",
        "cpu (reference; CUDA shim)",
        hardware=False,
        emulated=False,
        shim="cuda->cpu",
        versions=_versions(),
        device=torch.device("cpu"),
    )


def _try_import(name: str):
    try:
        return importlib.import_module(name), None
    except Exception as exc:  # placeholders on PyPI raise on import
        return None, f"{name}: {type(exc).__name__}: {exc}"


def _xla_side(target: str, notes: list[str]) -> SideDevice | None:
    xla, why = _try_import("torch_xla")
    if xla is None:
        notes.append(f"PyTorch/XLA not importable ({why})")
        return None
    import torch_xla
    import torch_xla.core.xla_model as xm
    import torch_xla.runtime as xr

    pjrt = xr.device_type() or os.environ.get("PJRT_DEVICE", "?")
    dev = torch_xla.device()

    def sync() -> None:
        torch_xla.sync()
        xm.wait_device_ops()

    if pjrt == "CPU":
        label = "xla (CPU PJRT, emulated)"
        if target != "xla":
            label = f"xla (CPU PJRT, emulated; '{target}' device strings mapped to xla)"
        return SideDevice(
            "ported",
            "xla",
            label,
            hardware=False,
            emulated=True,
            shim=None if target == "xla" else f"{target}->xla",
            versions=_versions(),
            notes=notes,
            device=dev,
            sync=sync,
        )
    label = f"xla (PJRT {pjrt})"
    if target != "xla":
        label += f"; '{target}' device strings mapped to xla"
    return SideDevice(
        "ported",
        "xla",
        label,
        hardware=True,
        emulated=False,
        shim=None if target == "xla" else f"{target}->xla",
        versions=_versions(),
        notes=notes,
        device=dev,
        sync=sync,
    )


def select_ported(target: str) -> SideDevice:
    import torch

    notes: list[str] = []
    if target in ("neuron", "tpu"):
        pkg = "torch_neuronx" if target == "neuron" else "torch_tpu"
        mod, why = _try_import(pkg)
        if mod is not None:
            try:
                ns = getattr(torch, target)
                ok = bool(ns.is_available()) if hasattr(ns, "is_available") else False
                if not ok:
                    ok = (
                        torch.accelerator.is_available()
                        and (acc := torch.accelerator.current_accelerator()) is not None
                        and acc.type == target
                    )
            except Exception as exc:  # runtime present, no device
                ok = False
                notes.append(f"{pkg} imported but no {target} device: {type(exc).__name__}: {exc}")
            if ok:
                dev = torch.device(target)
                kind = "Trainium/Inferentia" if target == "neuron" else "TPU"
                return SideDevice(
                    "ported",
                    target,
                    f"{target} ({kind}, {pkg})",
                    hardware=True,
                    emulated=False,
                    versions=_versions(),
                    notes=notes,
                    device=dev,
                    sync=torch.accelerator.synchronize,
                )
        else:
            notes.append(f"{target} runtime not installed ({why})")
    side = _xla_side(target, notes)
    if side is not None:
        return side
    label = "cpu (no target runtime installed)"
    return SideDevice(
        "ported",
        "cpu",
        label,
        hardware=False,
        emulated=False,
        shim=None if target == "xla" else f"{target}->cpu",
        versions=_versions(),
        notes=notes,
        device=torch.device("cpu"),
    )


def peak_memory(side: SideDevice) -> dict:
    """Peak memory where the device reports it; host RSS otherwise, labelled as such."""
    import torch

    if side.kind == "cuda":
        return {"bytes": int(torch.cuda.max_memory_allocated()), "source": "torch.cuda.max_memory_allocated"}
    if side.kind in ("neuron", "tpu"):
        try:
            return {
                "bytes": int(torch.accelerator.max_memory_allocated()),
                "source": "torch.accelerator.max_memory_allocated",
            }
        except Exception as exc:
            return {"bytes": None, "source": f"not reported ({type(exc).__name__}: {exc})"}
    if side.kind == "xla" and side.hardware:
        try:
            import torch_xla.core.xla_model as xm

            info: Any = xm.get_memory_info(side.device)  # torch_xla's MemoryInfo type misses these keys
            peak = info.get("peak_bytes_used", info.get("bytes_used"))
            return {"bytes": int(peak), "source": "xm.get_memory_info"}
        except Exception as exc:
            return {"bytes": None, "source": f"not reported ({type(exc).__name__})"}
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    why = "XLA:CPU does not report device memory; " if side.kind == "xla" else ""
    return {
        "bytes": None,
        "host_peak_rss_bytes": int(rss_kib) * 1024,
        "source": why + "host process peak RSS (includes the runtime's own memory)",
    }


def reset_peak_memory(side: SideDevice) -> None:
    import torch

    if side.kind == "cuda":
        torch.cuda.reset_peak_memory_stats()
    elif side.kind in ("neuron", "tpu"):
        try:
            torch.accelerator.reset_peak_memory_stats()
        except Exception:
            pass


__all__ = [
    "SideDevice",
    "select_reference",
    "keep_reference_off_targets",
    "TARGET_KINDS",
    "select_ported",
    "peak_memory",
    "reset_peak_memory",
    "hardware_hints",
]
