"""What a device-generic project keeps for CUDA, reported (GEN001, info).

Where a project picks its device through torch (porter.pipeline.generic), the neuron and tpu
ports still run on CUDA, so the families leave CUDA-only settings that are inert on the target:
cuDNN/TF32 switches, `torch.compile` without a backend, `device_type == "cuda"` tests, the
`"cuda"` fallback of `_get_available_device_type() or "cuda"`, a CUDA seed after
`torch.manual_seed`. Each family notes what it keeps in `ctx.kept_generic`; this family turns
each note into a finding at the end of the file, so nothing kept is silent.
"""

from __future__ import annotations

import libcst as cst

from porter.codemods.family import Family


class GenericKeptFamily(Family):
    name = "generic-kept"

    @classmethod
    def wanted(cls, ctx, source: bytes) -> bool:
        return ctx.device_generic and super().wanted(ctx, source)

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        seen: set[int] = set()
        for node, what in self.ctx.kept_generic:
            if id(node) in seen:
                continue
            seen.add(id(node))
            self.ctx.report(
                "GEN001",
                node,
                f"{what}: kept, since the project picks its device through torch and the port still runs on CUDA; "
                f"on {self.ctx.target.display} it changes nothing",
            )
        return updated
