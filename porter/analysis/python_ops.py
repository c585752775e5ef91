"""The kernels a project's Python files register for its ops with `torch.library`.

An op may get its kernels in Python, a CUDA one only (optimum-quanto 0.2.7's `gemm_f16i4_awq`: `torch.library.define`
then `@torch.library.impl("quanto::gemm_f16i4_awq", ["CUDA"])`: unread, `if a.is_cuda:` around its call was rewritten
to the target's check, DEV004's "safe" fix, where GUARD001 is due), and an op the C++/CUDA sources give a CUDA kernel
only may get another there:
`@torch.library.impl("myops::a", "cpu")`, `@torch.library.register_kernel("myops::a", "cpu")`,
`lib = torch.library.Library("myops", "IMPL")` then `lib.impl("a", a_cpu, "CPU")` (optimum-quanto registers its
ops' `"default"` kernels so). Unread, such an op was said to have "a CUDA kernel only ... for no other device"
(GUARD001) while a CPU tensor, or with `"default"` every device's, runs it (thirty-second read). Read with `ast`,
without running anything; a key porter cannot read (a name, an expression) is kept as `UNREAD`, another device's
to the caller, so that no op is said CUDA-only on a guess.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator

from porter.analysis.program import called_name

# what a Python file must contain to register a kernel so (`torch.library`, `from torch import library`, `Library(`)
TOKEN = b"library"
UNREAD = "?"  # a key given by what is not a string
# the callee's name, and where its key goes: (position, keyword, the key when none is given)
# (an op `custom_op`/`triton_op` makes is given its function as every device's kernel where no `device_types` says
# otherwise: read as none, `register_kernel("ns::op", "cuda")` beside it made such an op CUDA-only)
_QUALIFIED = {
    "impl": (1, "types", None),
    "register_kernel": (1, "device_types", "default"),
    "custom_op": (-1, "device_types", "default"),
    "triton_op": (-1, "device_types", "default"),
}
_ON_LIBRARY = (2, "dispatch_key")  # `lib.impl("op", fn, "CPU")`, `torch.library.impl(lib, "op", "CPU")`
# a device type's name as a key (`"cuda"`, `"meta"`): the C++ reader's keys are spelled so
_KEY_OF_DEVICE = {"cuda": "CUDA", "meta": "Meta"}
_OP = re.compile(r"\w+(?:\.\w+)?")  # (an op and its overload, as the C++ reader reads them)


def may_register(source: bytes) -> bool:
    """Whether a Python file may register a kernel: it names `torch.library` (`TOKEN`), or calls `.impl(` or
    `.register_kernel(` on what another module of the project gives it (`from ._lib import lib`)."""
    return TOKEN in source.lower() or b".impl(" in source or b".register_kernel(" in source


def _dotted_module(name: str) -> str:
    """The dotted module a Python file's name (from the working folder) is, `pkg.ops` of `pkg/ops.py` and of
    `pkg/ops/__init__.py`."""
    return name.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def registered_kernels(files: Iterable[tuple[str, bytes]]) -> list[tuple[str, str, str, str]]:
    """(file, namespace, op, key) for each kernel the Python `files` (name, bytes) register; an overload is its own op
    (`a.out`)."""
    out: list[tuple[str, str, str, str]] = []
    parsed: list[tuple[str, ast.Module, _FileNames]] = []
    for name, source in files:
        if not may_register(source):
            continue
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue  # (lint says it)
        parsed.append((name, tree, _FileNames(tree)))
    modules = {_dotted_module(name): names for name, _, names in parsed}
    for name, tree, names in parsed:
        names.imported(tree, name, modules)
        for call in ast.walk(tree):
            if isinstance(call, ast.Call):
                out.extend((name, *kernel) for kernel in _kernels_of_call(call, names))
    return out


class _FileNames:
    """What a file's names stand for: `torch.library`'s functions imported under another name (`from torch.library
    import impl as I`), its `Library` variables (name -> namespace, key: their `impl`s given no key register for the
    library's, torch's `Library.impl`) and the custom ops it makes (`@custom_op("ns::a", ...) def a`, name ->
    namespace, op: `a.register_kernel("cpu")` gives `ns::a` a kernel). Unread, each such form's CPU kernel was not seen
    and an op that runs on a CPU tensor was said CUDA-only (thirty-second read, pyops2)."""

    def __init__(self, tree: ast.AST) -> None:
        self.aliases = {
            alias.asname: alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "torch.library"
            for alias in node.names
            if alias.asname
        }
        self.libraries: dict[str, tuple[str, str]] = {}
        self.custom_ops: dict[str, tuple[str, str]] = {}
        for node in ast.walk(tree):
            assigned = _call_assigned(node)
            if assigned is not None:
                self._assigned(*assigned)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                ops = [op for d in node.decorator_list if isinstance(d, ast.Call) and (op := self.made_op(d))]
                self.custom_ops.update((node.name, op) for op in ops[:1])

    def imported(self, tree: ast.Module, name: str, modules: dict[str, _FileNames]) -> None:
        """Add the `Library` variables and custom ops the file `name` imports from the project's other `modules`
        (`from ._lib import lib`, `from .ops import a`, `from . import _lib`: `_lib.lib`, `import pkg._lib as L`):
        read in their own module only, `lib.impl("a", a_cpu, "CPU")` and `a.register_kernel("cpu")` of another file
        were no kernel, and `a` said CUDA-only where torch runs it on a CPU tensor (thirty-second pyops2 and scaffold
        reads' leftovers)."""
        here = _dotted_module(name).split(".")
        package = here if name.endswith("__init__.py") else here[:-1]
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):  # (`import pkg._lib as L`: `L.lib`)
                for alias in node.names:
                    inner = _project_module(modules, alias.name)
                    local = alias.asname or alias.name
                    if inner is not None and inner is not self:
                        self._take(inner, {v: f"{local}.{v}" for v in [*inner.libraries, *inner.custom_ops]})
            if not isinstance(node, ast.ImportFrom) or (node.level > len(package) + 1):
                continue
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            for alias in node.names:
                local = alias.asname or alias.name
                other = _project_module(modules, module)
                if other is not None and other is not self:
                    self._take(other, {alias.name: local})
                inner = _project_module(modules, f"{module}.{alias.name}" if module else alias.name)
                if inner is not None and inner is not self:  # (`from . import _lib`: `_lib.lib`)
                    self._take(inner, {v: f"{local}.{v}" for v in [*inner.libraries, *inner.custom_ops]})

    def _take(self, other: _FileNames, names: dict[str, str]) -> None:
        """Take the `Library` variables and custom ops of `other` named in `names` (theirs -> the local one)."""
        for theirs, local in names.items():
            if theirs in other.libraries:
                self.libraries[local] = other.libraries[theirs]
            if theirs in other.custom_ops:
                self.custom_ops[local] = other.custom_ops[theirs]

    def _assigned(self, target: str, value: ast.Call) -> None:
        ns = _literal_str(value.args[0]) if self.callee(value) == "Library" and value.args else None
        if ns is not None:
            self.libraries[target] = (ns, _given_keys(value, (2, "dispatch_key", ""))[0])
        made = self.made_op(value.func if isinstance(value.func, ast.Call) else value)
        if made is not None:
            self.custom_ops[target] = made

    def callee(self, call: ast.Call) -> str | None:
        """The name a call calls, a `torch.library` function's own where the file imported it under another."""
        name = called_name(call)
        return self.aliases.get(name, name) if isinstance(call.func, ast.Name) and name is not None else name

    def made_op(self, call: ast.Call) -> tuple[str, str] | None:
        """(namespace, op) of a `custom_op("ns::op", ...)`/`triton_op` call."""
        first = _literal_str(call.args[0]) if call.args and self.callee(call) in _MAKERS else None
        return _op_of_qualname(first) if first is not None else None

    def op_of(self, node: ast.expr) -> tuple[str, str] | None:
        """(namespace, op) of an op given as `"ns::op"`, a custom op's name or `torch.ops.ns.op[.overload]`."""
        text = _literal_str(node)
        if text is not None:
            return _op_of_qualname(text)
        if isinstance(node, ast.Name) and node.id in self.custom_ops:
            return self.custom_ops[node.id]
        m = _TORCH_OPS.fullmatch(ast.unparse(node))
        return (m.group(1), m.group(2)) if m else None


_MAKERS = ("custom_op", "triton_op")
_TORCH_OPS = re.compile(r"torch\.ops\.(\w+)\.(\w+(?:\.\w+)?)")  # an op (and its overload) as an object
_ON_OP = (0, "", None)  # `op.register_kernel("cpu")` of a custom op (`CustomOpDef.register_kernel`: positional only)


def _project_module(modules: dict[str, _FileNames], module: str) -> _FileNames | None:
    """The project's module `module` names: its own, or the one its name ends (`pkg.ops` of `src/pkg/ops.py`) where
    one only does."""
    if module in modules:
        return modules[module]
    found = [names for name, names in modules.items() if name.endswith("." + module)] if module else []
    return found[0] if len(found) == 1 else None


def _op_of_qualname(text: str) -> tuple[str, str] | None:
    return (text.partition("::")[0], text.partition("::")[2]) if "::" in text else None


def _call_assigned(node: ast.AST) -> tuple[str, ast.Call] | None:
    """(target, call) of `NAME = call(...)` or `NAME: T = call(...)`."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call):
        return ast.unparse(node.targets[0]), node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.value, ast.Call):
        return ast.unparse(node.target), node.value
    return None


def _kernels_of_call(call: ast.Call, names: _FileNames) -> Iterator[tuple[str, str, str]]:
    name = names.callee(call)
    if name not in _QUALIFIED or not call.args:
        return
    owner = ast.unparse(call.func.value) if isinstance(call.func, ast.Attribute) else None
    first = _literal_str(call.args[0])
    found: tuple[str, str] | None
    where: tuple[int, str, str | None]
    if name == "impl" and owner in names.libraries:  # `lib.impl("op" | "ns::op" | torch.ops.ns.op.default, fn, key)`
        ns, key = names.libraries[owner]
        found = (ns, first) if first is not None and "::" not in first else names.op_of(call.args[0])
        where = (*_ON_LIBRARY, key)
    elif name == "register_kernel" and owner in names.custom_ops:
        found, where = names.custom_ops[owner], _ON_OP
    elif name == "impl" and ast.unparse(call.args[0]) in names.libraries and len(call.args) > 1:
        ns, key = names.libraries[ast.unparse(call.args[0])]
        found, where = (ns, _literal_str(call.args[1]) or ""), (*_ON_LIBRARY, key)
    else:
        found, where = names.op_of(call.args[0]), _QUALIFIED[name]
    if found is None:
        return
    ns, op = found[0], found[1].strip().removesuffix(".default")
    if _OP.fullmatch(op):
        yield from ((ns.strip(), op, key) for key in _given_keys(call, where))


def _given_keys(call: ast.Call, where: tuple[int, str, str | None]) -> list[str]:
    at, keyword, default = where
    given = (
        call.args[at] if 0 <= at < len(call.args) else next((k.value for k in call.keywords if k.arg == keyword), None)
    )
    if given is None or (isinstance(given, ast.Constant) and given.value is None):
        return [default] if default is not None else [UNREAD]
    items = given.elts if isinstance(given, (ast.Tuple, ast.List, ast.Set)) else [given]
    keys = [_literal_str(item) for item in items]
    return [UNREAD if key is None else _KEY_OF_DEVICE.get(key, key) for key in keys]


def _literal_str(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
