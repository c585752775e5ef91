"""`torch.compile`: the target's backend, CUDA-only modes, and `dynamic=True`."""

from __future__ import annotations

import re

from porter.codemods import cstwalk
import libcst as cst

from porter.codemods.family import Family, keyword_arg, string_value
from porter.codemods.guards import CAPABILITY_QUERIES, triton_module
from porter.codemods.literals import in_package
from porter.core.findings import Applicability
from porter.analysis.device_backends import answers, project_abstraction
from porter.analysis.resolve import name_assignments

COMPILE = {"torch.compile"}
CUDA_MODES = {"max-autotune", "reduce-overhead", "max-autotune-no-cudagraphs"}
REPLACEABLE_BACKENDS = {"inductor", "cudagraphs"}
NO_DYNAMIC = {"neuron", "tpu"}
_MAIN = re.compile(rb"^if __name__ == ['\"]__main__['\"]", re.M)


class CompileFamily(Family):
    name = "compile"
    tokens = (b"compile",)

    candidate_reads_ast = True

    @classmethod
    def candidate(cls, ctx, source: bytes) -> bool:
        """Its rules' tokens, and a name that `qualname` may make `torch.compile` of: every site
        is a call (`leave_Call`) or a bare decorator (`leave_Decorator`) whose qualified name is
        in `COMPILE`. `Resolver.qualname` qualifies a dotted name through the imports only, so
        `torch.compile` is either a name an import binds to it (`from torch import compile`) or
        `L.compile` with `L` bound to `torch` (`import torch as T`; `torch` under a star import),
        which `Sites.name_attrs` holds (every attribute of a name, called or not)."""
        if not super().candidate(ctx, source):
            return False
        found = ctx.sites()
        if found is None:
            return True
        return any(
            base in COMPILE or (base == "torch" and f"{local}.compile" in found.name_attrs)
            for local, base in found.bindings()
        )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._triton = triton_module(ctx.source or b"")
        self._capability: frozenset[str] | None = None
        self._abstraction: str | None | bool = False  # the project's member that names the compile backend
        self._library: bool | None = None  # library code of a project with a device abstraction

    def _in_triton_module(self, original: cst.CSTNode) -> bool:
        """A module of Triton kernels compiles its helpers for the GPUs its kernels run on
        (inductor): a target backend there breaks them on CUDA and the target never runs them.
        The call is left as it is, with a finding."""
        if not self._triton:
            return False
        t = self.ctx.target
        self.ctx.report(
            "COMP001",
            original,
            f"`torch.compile` in a module of Triton kernels: its helpers run beside those kernels on CUDA, "
            f'so inductor stays (backend="{t.compile_backend}" would break them there, and {t.display} '
            "does not run this module)",
            applicability=Applicability.MANUAL,
            advice=(
                f"Leave it; write the {t.display} path of this module's ops next to it (`porter kernels . "
                f'--scaffold kernels/`) and compile that with backend="{t.compile_backend}".'
            ),
        )
        return True

    def _named_by_abstraction(self, original: cst.CSTNode) -> bool:
        """A project whose device abstraction names the compile backend per device (DeepSpeed's
        `CUDA_Accelerator.get_compile_backend()` answers "inductor", each accelerator class its
        own): a literal target backend would bypass it and break CUDA, so the call is left as it
        is, with a finding that says where the target's backend belongs."""
        if self._abstraction is False:
            self._abstraction = answers(
                project_abstraction(self.ctx.settings, self.ctx.path, self.ctx.source or b""), "compile"
            )
        member = self._abstraction
        if not isinstance(member, str) or not member:
            return False
        t = self.ctx.target
        self.ctx.report(
            "COMP001",
            original,
            "`torch.compile` without a backend, in a project whose device abstraction names the compile "
            f'backend per device (`{member}` answers "inductor" for CUDA): left as it is '
            f'(backend="{t.compile_backend}" would break it on CUDA)',
            applicability=Applicability.MANUAL,
            advice=(
                f"Pass the backend the project's accelerator answers (`{member.rpartition('.')[2]}`), and "
                f'give its {t.display} class the answer "{t.compile_backend}".'
            ),
        )
        return True

    def _kept_by_library(self, original: cst.CSTNode, backend: str) -> bool:
        """Library code (a module of a package that is no program: no `__main__` entry) of a
        project with a device abstraction of its own still runs on CUDA after the port, where
        a literal target backend raises (`InvalidBackend` without the target's runtime: at
        import, for a module-level decorator). A target that picks its own backend for tensors
        on its device (TorchNeuron, TorchTPU) needs none: the call is left as it is, reported."""
        t = self.ctx.target
        if not t.compile_backend_auto or not self._library_code():
            return False
        self.ctx.report(
            "COMP001",
            original,
            f'`torch.compile` (backend "{backend}") in library code that still runs on CUDA (a project '
            f'with a device abstraction of its own): left as it is (backend="{t.compile_backend}" raises '
            f"where {t.display} is not installed); "
            f"{t.display} picks its own backend for tensors on its device",
            applicability=Applicability.MANUAL,
            advice=(
                f"Nothing to change for {t.display} tensors; where a backend must be named, take it from the "
                f'project\'s device (backend="{t.compile_backend}" only on {t.display}).'
            ),
        )
        return True

    def _library_code(self) -> bool:
        if self._library is None:
            source = self.ctx.source or b""
            self._library = (
                in_package(self.ctx)
                and _MAIN.search(source) is None
                and project_abstraction(self.ctx.settings, self.ctx.path, source) is not None
            )
        return self._library

    def _capability_names(self) -> frozenset[str]:
        """Module-level names set from a CUDA capability query (ColossalAI's `cuda_arch =
        int(...torch.cuda.get_device_capability()...)`), found once per file."""
        if self._capability is None:
            found: set[str] = set()
            if self.ctx.module is not None and b"get_device_capability" in (
                self.ctx.source or b"get_device_capability"
            ):
                found.update(
                    name
                    for name, value in name_assignments(self.ctx.module.body)
                    if self._asks_capability(value, frozenset())
                )
            self._capability = frozenset(found)
        return self._capability

    def _asks_capability(self, node: cst.CSTNode, names: frozenset[str]) -> bool:
        if isinstance(node, cst.Call) and self.ctx.qualname(node.func) in CAPABILITY_QUERIES:
            return True
        if isinstance(node, cst.Name) and node.value in names:
            return True
        return any(self._asks_capability(c, names) for c in cstwalk.children(node))

    def _tuned_for_cuda(self, original: cst.Call) -> bool:
        """`torch.compile(..., disable=cuda_arch < 89)`: the call's options read the CUDA
        capability, so it is set up for CUDA GPUs (off them it is disabled or mistuned); it is
        left as it is, with a finding."""
        if not any(self._asks_capability(a.value, self._capability_names()) for a in original.args):
            return False
        t = self.ctx.target
        self.ctx.report(
            "COMP001",
            original,
            f"`torch.compile` whose options read the CUDA capability is set up for CUDA GPUs: left as it is "
            f'(backend="{t.compile_backend}" would break it on CUDA, and its CUDA test decides whether '
            f"{t.display} compiles)",
            applicability=Applicability.MANUAL,
            advice=(
                f"Give {t.display} a test of its own in the options (or a compile of its own) with "
                f'backend="{t.compile_backend}".'
            ),
        )
        return True

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if self.ctx.qualname(original.func) not in COMPILE:
            return updated
        if self._in_triton_module(original) or self._tuned_for_cuda(original):
            return updated
        backend = self.kwarg(original, "backend")
        if backend is None:
            new = self._no_backend(original, updated)
        else:
            new = self._named_backend(original, updated, backend)
        new = self._mode(original, new)
        return self._dynamic(original, updated, new, backend)

    def _no_backend(self, original: cst.Call, new: cst.Call) -> cst.Call:
        """COMP001 for a call that names no backend: the target's is added, unless the code picks
        its device generically, takes its options from `**kwargs`, or is a project's whose own
        device abstraction (or library code) names the backend."""
        t = self.ctx.target
        if self.ctx.portable:
            self.ctx.report(
                "COMP001",
                original,
                f"`torch.compile` uses inductor on CUDA and the CPU; on {t.display} it needs "
                f'backend="{t.compile_backend}"',
                applicability=Applicability.MANUAL,
                advice=(
                    f'Pass `backend="{t.compile_backend}" if torch.accelerator.current_accelerator().type == '
                    f'"{t.device_type}" else "inductor"` where the model is compiled.'
                ),
            )
        elif any(a.star == "**" for a in original.args):
            self.ctx.report(
                "COMP001",
                original,
                "`torch.compile(..., **kwargs)`: the keyword arguments may already carry a backend, so "
                "porter adds none",
                applicability=Applicability.MANUAL,
                advice=f'Make sure the compile options name backend="{t.compile_backend}" on {t.display}.',
            )
        elif self._auto_backend():
            pass  # device-generic code: the target's backend is picked for its tensors
        elif self._named_by_abstraction(original):
            pass
        elif self._kept_by_library(original, "inductor"):
            pass
        else:
            cand = self.with_kwarg(new, "backend", cst.SimpleString(f'"{t.compile_backend}"'))
            if self.ctx.report(
                "COMP001",
                original,
                "`torch.compile` without a backend uses inductor (CUDA/CPU); "
                f'backend="{t.compile_backend}" compiles for {t.display}',
                replacement=cand,
            ):
                new = cand
        return new

    def _named_backend(self, original: cst.Call, new: cst.Call, backend: cst.Arg) -> cst.Call:
        """COMP001 for a call that names its backend: a CUDA one becomes the target's (unless
        library code keeps it); a computed one is reported."""
        t = self.ctx.target
        value = string_value(backend.value)
        if value in REPLACEABLE_BACKENDS and self._kept_by_library(original, value):
            pass
        elif value in REPLACEABLE_BACKENDS:
            cand = self.with_kwarg(new, "backend", cst.SimpleString(f'"{t.compile_backend}"'))
            if self.ctx.report(
                "COMP001", original, f'backend "{value}" becomes "{t.compile_backend}"', replacement=cand
            ):
                new = cand
        elif value is None:
            self.ctx.report(
                "COMP001",
                original,
                "the compile backend is computed: make sure it is the target's",
                applicability=Applicability.MANUAL,
                advice=f'Use backend="{t.compile_backend}" on {t.display}.',
            )
        return new

    def _mode(self, original: cst.Call, new: cst.Call) -> cst.Call:
        """COMP002: a CUDA-only `mode` is dropped where the (ported) call compiles for the target,
        kept with a finding where it still compiles with inductor on CUDA."""
        t = self.ctx.target
        mode = self.kwarg(original, "mode")
        if mode is None:
            return new
        value = string_value(mode.value)
        if value in CUDA_MODES and not self._compiles_for_target(new):
            # the call still compiles with inductor (device-generic code, a backend from
            # **kwargs): on CUDA the mode is what it tunes (a documented workaround, even)
            self.ctx.report(
                "COMP002",
                original,
                f'mode "{value}" tunes CUDA, where this call still compiles with inductor: kept; '
                f"{t.display}'s backend takes the default mode",
                applicability=Applicability.MANUAL,
                advice=(
                    f'Where the call compiles with backend="{t.compile_backend}", pass no mode (or '
                    f"`mode=None`) for {t.display}."
                ),
            )
        elif value in CUDA_MODES:
            cand = self.without_kwargs(new, {"mode"})
            if self.ctx.report(
                "COMP002",
                original,
                f'mode "{value}" tunes CUDA (autotuned Triton kernels, CUDA graphs); {t.display} takes '
                "the default mode",
                replacement=cand,
            ):
                new = cand
        elif value is None:
            self.ctx.report(
                "COMP002",
                original,
                "the compile mode is computed: only the default mode is supported on the target",
                applicability=Applicability.MANUAL,
            )
        return new

    def _dynamic(self, original: cst.Call, updated: cst.Call, new: cst.Call, backend: cst.Arg | None) -> cst.Call:
        """COMP003: `dynamic=True`, which the targets' backends reject, is dropped, unless the call
        may still compile with inductor on CUDA (a computed backend, or none named and none
        added), which takes it."""
        t = self.ctx.target
        dynamic = self.kwarg(original, "dynamic")
        if not (
            t.name in NO_DYNAMIC
            and dynamic is not None
            and isinstance(dynamic.value, cst.Name)
            and dynamic.value.value == "True"
        ):
            return new
        if (
            not self._other_backend(backend)
            and backend is not None
            and string_value(backend.value) is None
            and new is updated
        ):
            # `backend=current_platform.simple_compile_backend`: the code picks its backend per
            # device (inductor on CUDA, which takes `dynamic=True`); the code that answers the
            # target's backend answers for its dynamic shapes too
            self.ctx.report(
                "COMP003",
                original,
                "`dynamic=True` stays: the compile backend is computed here "
                f"(`{self.ctx.code(backend.value)}`), so on CUDA this call may still compile with "
                f"inductor, which takes it; {t.display}'s backend rejects it",
                applicability=Applicability.MANUAL,
                advice=(
                    f'Where the backend is {t.display}\'s ("{t.compile_backend}"), pass `dynamic=False` (or '
                    "None) there, e.g. from the same place that picks the backend."
                ),
            )
        elif backend is None and not self._compiles_for_target(new):
            # no backend named, and the port names none (the target's is chosen by itself for
            # its own tensors in a device-generic project): on CUDA this is still inductor,
            # which takes `dynamic=True`; dropping it would recompile CUDA's per shape
            self.ctx.report(
                "COMP003",
                original,
                f"`dynamic=True` stays: no backend is named here and the port names none ({t.display}'s is "
                "chosen by itself for its tensors), so on CUDA this call still compiles with inductor, "
                f"which takes it; {t.display}'s backend rejects it",
                applicability=Applicability.MANUAL,
                advice=(
                    f"Where this runs on {t.display}, pass `dynamic=False` (or None), e.g. from the project's "
                    "device or platform object."
                ),
            )
        elif not self._other_backend(backend):
            cand = self.without_kwargs(new, {"dynamic"})
            if self.ctx.report(
                "COMP003",
                original,
                f"{t.display} rejects `dynamic=True`: compile per shape, and pad or bucket variable lengths",
                replacement=cand,
            ):
                new = cand
        return new

    def _compiles_for_target(self, call: cst.Call) -> bool:
        """The (ported) call names the target's compile backend."""
        backend = self.kwarg(call, "backend")
        return backend is not None and string_value(backend.value) == self.ctx.target.compile_backend

    def _other_backend(self, backend: cst.Arg | None) -> bool:
        """`backend="eager"` / `"aot_eager"`: a backend of torch's own, not the target's, which
        takes `dynamic=True` (only the target's backend rejects it)."""
        value = string_value(backend.value) if backend is not None else None
        return value is not None and value not in REPLACEABLE_BACKENDS and value != self.ctx.target.compile_backend

    def _auto_backend(self) -> bool:
        """The project picks its device generically (so the port still runs on CUDA, where
        inductor is right) and the target's backend is chosen by itself for its own tensors
        (TorchNeuron: "auto-selected when running on a Neuron device"; TorchTPU patches
        `torch.compile` to pick "tpu" for TPU inputs): adding a backend only breaks CUDA."""
        return self.ctx.device_generic and self.ctx.target.compile_backend_auto

    def leave_Decorator(self, original: cst.Decorator, updated: cst.Decorator):
        """Bare `@torch.compile` gets the target's backend."""
        deco = original.decorator
        if isinstance(deco, cst.Call) or self.ctx.qualname(deco) not in COMPILE or self._auto_backend():
            return updated
        if (
            self._in_triton_module(original)
            or self._named_by_abstraction(original)
            or self._kept_by_library(original, "inductor")
        ):
            return updated
        t = self.ctx.target
        call = cst.Call(
            func=updated.decorator, args=[keyword_arg("backend", cst.SimpleString(f'"{t.compile_backend}"'))]
        )
        new = updated.with_changes(decorator=call)
        if self.ctx.report(
            "COMP001", original, f'`@torch.compile` gets backend="{t.compile_backend}"', replacement=new
        ):
            return new
        return updated
