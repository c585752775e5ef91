"""What CUDA code does that the targets' runtimes do not (RUN001, RUN002, rules/runtime.toml).

- RUN001 `share_memory()` on a module or tensor that lives on the device (Hogwild training:
  `model.share_memory()` then `mp.Process(target=train, args=(model,))`). CUDA shares device
  memory between processes (CUDA IPC); `Tensor.share_memory_()` on an XLA tensor raises
  `_share_fd_: only available on CPU`, and the native targets' PrivateUse1 storages take the
  same CPU-only path.
- RUN002 weights initialised after the move to the device: the draws come from the device's
  own generator (targets.md: XLA's is not the CPU's, nor CUDA's), so the port starts from other
  weights than the original. A note: the program is right either way, but a comparison of the
  two is not like for like unless the draws are made on the CPU.

Both are read per scope (a function body, the module), in statement order: a move
(`m = Net().to(device)`, `m.to(device)`, `m.cuda()`) then the use of the same name.
"""

from __future__ import annotations

import ast

from porter.codemods import cstwalk
import libcst as cst

from porter.codemods.candidates import first_argument, nodes
from porter.codemods.family import Family
from porter.codemods.flow import module_move
from porter.analysis.resolve import dotted

RANDOM_INITS = frozenset(
    (
        "normal_",
        "uniform_",
        "xavier_uniform_",
        "xavier_normal_",
        "kaiming_uniform_",
        "kaiming_normal_",
        "trunc_normal_",
        "orthogonal_",
        "sparse_",
    )
)
_DTYPES = frozenset(
    ("torch.float16", "torch.float32", "torch.float64", "torch.bfloat16", "torch.half", "torch.float", "torch.double")
)


# the last names of the calls `_use` reports: `x.share_memory()`, `x.normal_()`,
# `torch.nn.init.normal_(x)`, `m.apply(init_fn)`
_USES = frozenset(("share_memory", "share_memory_", "apply", *RANDOM_INITS))


def _ast_root(node: ast.expr) -> str | None:
    while type(node) in (ast.Attribute, ast.Subscript):
        node = node.value  # type: ignore[attr-defined]
    return node.id if type(node) is ast.Name else None


def _ast_holder(stmt: ast.stmt) -> str | None:
    """The name holding a module `stmt` moves (flow.module_move, read off the `ast`)."""
    if type(stmt) is ast.Expr:
        call, target = stmt.value, None
    elif type(stmt) is ast.Assign and len(stmt.targets) == 1:
        call, target = stmt.value, stmt.targets[0]
    else:
        return None
    if type(call) is not ast.Call or type(call.func) is not ast.Attribute or call.func.attr not in ("to", "cuda"):
        return None
    holder = call.func.value if target is None else target
    # (a dotted holder, `self.model`, is never a root `_use` compares it to)
    return holder.id if type(holder) is ast.Name else None


def _used_after_move(tree: ast.Module) -> bool:
    """Whether a body (the module's, a function's) moves a name and a later statement of it
    calls one of `_USES` on that name: on its object (`x.normal_()`) or its first argument
    (`torch.nn.init.normal_(x)`)."""
    # (`candidates.nodes`: every node a call or a definition can be, in no particular order)
    bodies = [tree.body] + [n.body for n in nodes(tree) if type(n) in (ast.FunctionDef, ast.AsyncFunctionDef)]  # type: ignore[attr-defined]
    for body in bodies:
        moved: set[str] = set()
        for stmt in body:
            if moved:
                for node in nodes(stmt):
                    if type(node) is not ast.Call:
                        continue
                    func = node.func
                    last = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None
                    if last not in _USES:
                        continue
                    if type(func) is ast.Attribute and _ast_root(func.value) in moved:
                        return True
                    first = first_argument(node)
                    if first is not None and _ast_root(first) in moved:
                        return True
            holder = _ast_holder(stmt)
            if holder is not None:
                moved.add(holder)
    return False


def _root(node: cst.BaseExpression) -> str | None:
    """`model` of `model.fc.weight.data`, `model.fc.weight`, `model`."""
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


class _Calls(cst.CSTVisitor):
    def __init__(self) -> None:
        self.calls: list[cst.Call] = []

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)


class RuntimeFamily(Family):
    name = "runtime"
    tokens = (
        b"share_memory",
        b"normal_",
        b"uniform_",
        b"xavier_",
        b"kaiming_",
        b"trunc_normal_",
        b"orthogonal_",
        b"sparse_",
        b".apply(",
    )

    candidate_reads_ast = True

    @classmethod
    def candidate(cls, ctx, source: bytes) -> bool:
        """Every finding is of a name moved before it (`_scope`): a `.to(...)`/`.cuda()` call
        as a statement or assigned to one target (flow.module_move), then, in a later statement
        of the same body, a call `_use` reads (`_used_after_move`)."""
        found = ctx.sites()
        if found is None:
            return True
        if not found.moves or found.callees.isdisjoint(_USES):
            return False
        tree = ctx.tree()
        return tree is None or _used_after_move(tree)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._module: cst.Module | None = None
        self._init_fns: set[str] | None = None

    def visit_Module(self, node: cst.Module) -> None:
        self._module = node
        self._scope(node.body)

    @property
    def _random_init_fns(self) -> set[str]:
        """Functions of this file that draw random weights (`weights_init` for `model.apply`):
        worked out on the first `.apply(fn)` of a moved module (a walk of the whole file)."""
        if self._init_fns is None:

            class Defs(cst.CSTVisitor):
                def __init__(self, out: set[str]) -> None:
                    self.out = out

                def visit_FunctionDef(self, fn: cst.FunctionDef) -> None:
                    calls = _Calls()
                    cstwalk.visit(fn.body, calls)
                    if any(
                        isinstance(c.func, cst.Attribute) and c.func.attr.value in RANDOM_INITS for c in calls.calls
                    ):
                        self.out.add(fn.name.value)

            self._init_fns = set()
            if self._module is not None:
                cstwalk.visit(self._module, Defs(self._init_fns))
        return self._init_fns

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if isinstance(node.body, cst.IndentedBlock):
            self._scope(node.body.body)

    def _moved(self, small: cst.BaseSmallStatement) -> str | None:
        move = module_move(small)
        if move is None:
            return None
        holder, call = move
        if call.func.attr.value == "to" and call.args and self.ctx.qualname(call.args[0].value) in _DTYPES:  # type: ignore[attr-defined]
            return None
        return holder

    def _scope(self, body) -> None:
        moved: set[str] = set()  # names moved to the device by an earlier statement
        for stmt in body:
            smalls = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else []
            if moved:  # (every finding is of a name moved before: until a move, no walk)
                calls = _Calls()
                cstwalk.visit(stmt, calls)
                for call in calls.calls:
                    self._use(call, moved)
            for small in smalls:
                holder = self._moved(small)
                if holder is not None:
                    moved.add(holder)

    def _use(self, call: cst.Call, moved: set[str]) -> None:
        func = call.func
        qual = self.ctx.qualname(func) or ""
        if qual.startswith("torch.nn.init."):
            if qual.rsplit(".", 1)[1] in RANDOM_INITS and call.args:
                self._init(call, _root(call.args[0].value), moved, qual)
            return
        if not isinstance(func, cst.Attribute):
            return
        attr = func.attr.value
        owner = dotted(func.value)
        root = _root(func.value)
        if attr in ("share_memory", "share_memory_") and root in moved:
            self.ctx.report(
                "RUN001",
                call,
                f"`{self.ctx.code(func.value)}` was moved to the device before `.{attr}()`: CUDA shares "
                f"device memory between processes, {self.ctx.target.display} does not (on XLA "
                "`share_memory_()` raises `_share_fd_: only available on CPU`)",
            )
        elif attr in RANDOM_INITS and root in moved and not qual:
            self._init(call, root, moved, f"{owner or self.ctx.code(func.value)}.{attr}")
        elif attr == "apply" and root in moved and call.args:
            fn = dotted(call.args[0].value)
            if fn is not None and fn.rsplit(".", 1)[-1] in self._random_init_fns:
                self._init(call, root, moved, f"{owner}.apply({fn})")

    def _init(self, call: cst.Call, root: str | None, moved: set[str], what: str) -> None:
        if root is None or root not in moved:
            return
        self.ctx.report(
            "RUN002",
            call,
            f"`{what}` initialises `{root}` after its move to the device: the draws come from "
            f"{self.ctx.target.display}'s generator, not CUDA's nor the CPU's, so the port starts from "
            "other weights than the original",
        )
