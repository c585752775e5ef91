"""Frameworks that name devices in their own vocabulary (FW001).

Lightning's `Trainer(accelerator="gpu")` / `Fabric(accelerator="cuda")` choose one of
Lightning's accelerator classes by name; a torch device name that Lightning does not know
fails at start-up, and one it knows under another meaning (its `"tpu"` is PyTorch/XLA)
silently picks the wrong runtime. So the value maps to the framework's own name for the
target where it has one (`rules/frameworks.toml`) and is otherwise left and reported.
"""

from __future__ import annotations

from functools import lru_cache

import libcst as cst

from porter.codemods.family import Family, replace_string, string_value
from porter.ruledata import load_toml


@lru_cache(maxsize=1)
def lightning_table() -> dict:
    return load_toml("frameworks.toml").get("lightning", {})


class FrameworksFamily(Family):
    codes = ("FW001",)
    tokens = (b"accelerator",)

    @classmethod
    def wanted(cls, ctx, source: bytes) -> bool:
        return super().wanted(ctx, source) and b"lightning" in source

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        table = lightning_table()
        arg = self.kwarg(original, "accelerator")
        if arg is None or self.ctx.qualname(original.func) not in table.get("callables", ()):
            return updated
        value = string_value(arg.value)
        if value not in table.get("cuda_names", ()) or not isinstance(arg.value, cst.SimpleString):
            return updated
        t = self.ctx.target
        name = table.get("accelerator", {}).get(t.name)
        if name is None:
            self.ctx.report(
                "FW001",
                arg,
                f"Lightning has no {t.display} accelerator: `accelerator={arg.value.value}` is left as it is",
            )
            return updated
        new_value = replace_string(arg.value, name)
        i = original.args.index(arg)
        args = list(updated.args)
        args[i] = args[i].with_changes(value=new_value)
        new = updated.with_changes(args=args)
        if self.ctx.report(
            "FW001",
            arg,
            f"Lightning's accelerator for {t.display} is {new_value.value} (its PyTorch/XLA accelerator)",
            replacement=new,
        ):
            return new
        return updated
