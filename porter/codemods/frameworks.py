"""Frameworks that name devices in their own vocabulary (FW001), and frameworks whose
released versions break on a target whatever the port does (FW002).

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
from porter.analysis.resolve import _import_statements, dotted
from porter.config.ruledata import load_toml


@lru_cache(maxsize=1)
def lightning_table() -> dict:
    return load_toml("frameworks.toml").get("lightning", {})


@lru_cache(maxsize=1)
def framework_rows() -> tuple[dict, ...]:
    return tuple(load_toml("frameworks.toml").get("framework", ()))


class FrameworksFamily(Family):
    name = "frameworks"
    tokens = (b"lightning", b"ignite", b'"cuda', b"'cuda")

    candidate_reads_ast = True

    @classmethod
    def candidate(cls, ctx, source: bytes) -> bool:
        """FW001 needs `accelerator=` passed to a call an import qualifies into Lightning's
        callables, FW002 an import under a framework row's prefix for the target, FW003 a
        call an import qualifies to `torch.cuda.is_available` (`visit_BooleanOperation`)."""
        found = ctx.sites()
        if found is None:
            return True
        rows = [r for r in framework_rows() if ctx.target.name in r.get("targets", ())]
        prefixes = [p for r in rows for p in r["prefixes"]]
        if any(n == p or n.startswith(p + ".") for n in found.import_names for p in prefixes):
            return True
        callables = lightning_table().get("callables", ())
        for name, keywords in found.dotted_calls.items():
            for qual in found.qualified(name):
                if qual == "torch.cuda.is_available" or ("accelerator" in keywords and qual in callables):
                    return True
        return False

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._requests: set[int] = set()  # comparisons next to a torch.cuda.is_available() test

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        """`device_name == "cuda" and not torch.cuda.is_available()`: a request for CUDA being
        validated, where the caller's name for the device matters."""
        operands = [node.left, node.right]
        asks = [
            o
            for o in operands
            for inner in [o.expression if isinstance(o, cst.UnaryOperation) else o]
            if isinstance(inner, cst.Call) and self.ctx.qualname(inner.func) == "torch.cuda.is_available"
        ]
        if asks:
            self._requests.update(id(o) for o in operands if o not in asks)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        """`device_name == "cuda"` on a parameter, in a CUDA request check: the caller's
        vocabulary (FW003)."""
        if id(node) not in self._requests:
            return
        sides = [node.left, *(c.comparator for c in node.comparisons)]
        if not any((string_value(x) or "").split(":")[0] == "cuda" for x in sides):
            return
        names = [x.value for x in sides if isinstance(x, cst.Name)]
        function = next((f for f in reversed(self.ctx.current_statements) if isinstance(f, cst.FunctionDef)), None)
        if not names or function is None:
            return
        params = function.params
        every = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
        name = next((n for n in names if n in every), None)
        if name is None:
            return
        self.ctx.report(
            "FW003",
            node,
            f"`{name}` is a parameter of `{function.name.value}()` compared with a CUDA device name: "
            f'callers in this project are ported, callers outside it that pass "cuda" still ask for CUDA',
        )

    def visit_Module(self, node: cst.Module) -> None:
        target = self.ctx.target.name
        rows = [r for r in framework_rows() if target in r.get("targets", ())]
        if not rows:
            return
        top = [s for line in node.body if isinstance(line, cst.SimpleStatementLine) for s in line.body]
        nested = [s for s in _import_statements(node) if s not in top]  # under try/if, in defs
        for stmt in [s for s in top if isinstance(s, (cst.Import, cst.ImportFrom))] + nested:
            names = _imported_modules(stmt)
            row = next((r for r in rows for p in r["prefixes"] for n in names if n == p or n.startswith(p + ".")), None)
            if row is not None:
                self.ctx.report("FW002", stmt, row["what"], advice=row.get("advice"))
                rows.remove(row)  # once per file

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


def _imported_modules(stmt: cst.Import | cst.ImportFrom) -> list[str]:
    if isinstance(stmt, cst.Import):
        return [dotted(a.name) or "" for a in stmt.names]
    if stmt.relative or stmt.module is None:
        return []
    return [dotted(stmt.module) or ""]
