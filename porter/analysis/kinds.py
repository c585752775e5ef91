"""The kinds of the project index's facts, one enum per family.

A fact (`porter.config.settings.Facts`) is `(scope, expression, kind, chain)`; its kind says
which analysis made it and what the rule family that reads it may do. Each family's kinds are
one enum here, so a maintainer sees every kind a fact can have, and a new fact has a family to
join. A kind is a `str` (a mixed-in enum: porter supports Python 3.10, which has no StrEnum):
it compares and hashes as its text, and it is written as its text everywhere -- `str()`,
`format()`/f-strings (whose output for mixed-in enums differs between 3.10/3.11 and 3.12),
`repr()` (the cache key holds the facts' repr) and JSON (the index cache) -- so the bytes
porter writes or keys on are those of the plain strings the kinds were before they were enums.
"""

from __future__ import annotations

from enum import Enum


class Kind(str, Enum):
    """A kind, written as its text on every Python version (see the module's docstring)."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)

    def __repr__(self) -> str:
        return repr(str(self.value))


class ValueKind(Kind):
    """What a name holds, as the index follows it (porter.analysis.index)."""

    INDEX = "index"  # an int: PyTorch reads it as a CUDA device
    DEVICE = "device"  # a device made elsewhere: ported where it is made
    CPU = "cpu"  # the string "cpu"
    CONFIG = "config"  # a device from configuration porter cannot read (`cfg.device`)
    OTHER = "other"  # not a device
    UNKNOWN = "unknown"  # porter cannot see it
    MAYBE = "maybe"  # an integer on some paths, something else on others: a CUDA device there


class MoveKind(Kind):
    """A module's `.to()` move that XLA's Module.to() (which replaces every Parameter) breaks."""

    TIED = "tied"  # a move of a module whose class ties parameters
    STALE = "stale"  # a move of a module whose parameters something took before the move
    ATTRIBUTES = "attributes"  # a module move in a project that sets attributes on Parameter objects


class NameKind(Kind):
    """A fact about one name of the file, from the rest of the project."""

    ORIGIN = "origin"  # `device = local_rank` (else "cpu"), the name used only as a device: ported there
    # another module of the project defines its own `is_cuda`: an `x.is_cuda` here may be that one
    OWN_IS_CUDA = "own-is-cuda"


class FusedKind(Kind):
    """A fused-optimizer flag (porter.analysis.fused_flags)."""

    FALSE = "fused-false"  # an expression the port makes False
    KEEP = "fused-keep"  # a CUDA test kept as it is
    SITE = "fused-site"  # a `fused=flag` use the cuts take care of


class TypeKind(Kind):
    """The index's verdict on a value compared with a device type (porter.analysis.device_types)."""

    DEVICE_TYPE = "device-type"  # a device type torch selected
    CUDA_LITERAL = "cuda-literal"  # a CUDA string porter ports (so a test of it is ported too)
    NOT_DEVICE = "not-device"  # no device


class BackendKind(Kind):
    """The project's own device backends (porter.analysis.device_backends)."""

    # the file defines CUDA's class of a per-device family of classes (`CUDA_Accelerator`)
    BACKEND = "cuda-backend"
    # CUDA's module of a per-device family of folders (`backends/cuda/ops.py` beside `backends/cpu/`)
    MODULE = "cuda-backend-module"
    # a member of CUDA's class that answers CUDA's own name (`device_name()` returns "cuda"): code
    # that compares it with "cuda" asks which backend the project picked, not about a device
    ACCESSOR = "backend-accessor"
    # the project has a device abstraction of its own (a class per device, or a module that names
    # CUDA and two other accelerators as device types): its CUDA cases are CUDA's, not the device in play
    ABSTRACTION = "device-abstraction"
    # a function of the project whose parameter is the key of a closed switch over device names
    # (`if device_type == "cuda": ... elif device_type == "cpu": ... else: raise TypeError`):
    # ColossalAI's `MemStats.non_model_data_list("cuda")`. Its callers' "cuda" is that key
    SWITCH_KEY = "device-switch-key"
    # a function whose parameter is a CUDA device's index (`torch.device(f"cuda:{target_device}")`):
    # what a caller passes there is CUDA's index
    CUDA_INDEX = "cuda-index-param"
    # a function whose parameter defaulting to "nccl" is overwritten before it is read, or never
    # read (ColossalAI's `launch(backend="nccl")` takes `get_accelerator().communication_backend`):
    # what a caller passes there selects nothing
    DISCARDED = "discarded-param"


class ModuleKind(Kind):
    """A module of the project's own (porter.pipeline.runner; module-wide: no scope)."""

    # a top-level module of the project (`cuda.py`, `cuda/__init__.py`) named as a package porter
    # knows, where the file's `import NAME` finds it (its folder, or above its package's folders):
    # the import is the project's module, not the package (`import cuda` is not cuda-python)
    OWN_TOP = "own-top-module"


class CudaOnlyKind(Kind):
    """A name imported from another module of the project that is CUDA-only there
    (porter.analysis.cuda_only_index; module-wide: no scope)."""

    IMPORTED = "cuda-only"


class CudaOnlyTag(Kind):
    """The parts of a CudaOnlyKind fact's chain after its reason."""

    RUNS = "runs"  # using the name runs CUDA-only code (not only asks)
    # the name is a function whose truth means a CUDA-only package is installed: what an `if`
    # on its call guards runs only on CUDA (not a CUDA-only name itself)
    PREDICATE = "predicate"
    # "needs:PACKAGE": the module imports the name at its top level from the project's package of
    # PACKAGE's kernels, so it cannot be imported without PACKAGE
    NEEDS = "needs"
    # "binds:QUAL": the module it is imported from binds the name to Triton's QUAL (`import triton`
    # in a shim): lint's KERN002 takes `@triton.jit` through it as `porter kernels` does
    BINDS = "binds"
    # the name is a Triton kernel the module it is imported from defines: `ops.k[grid](...)` launches it
    KERNEL = "kernel"
