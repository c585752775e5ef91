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
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Any

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
# a library a call gives and uses at once, that nothing porter reads keeps (`make().impl("a", fn, "CPU")`): torch
# destroys it with its kernels unless the function keeps it, in a list, an attribute: whether they last is unread
_UNKEPT = (-1, "", UNREAD)
# `torch.library.Library.impl(lib, "op", fn, "CUDA")`, the class's method given the library: read as
# `torch.library.impl(lib, "op", key)`, its key was `fn`, unread, and an op torch runs on CUDA only was given no
# verdict (thirty-fourth read, scaf2)
_ON_CLASS = (3, "dispatch_key")
# `lib.m.impl("op", "CPU", fn)`: a library's C++ handle (torch 2.9's `_DispatchModule.impl(name, dispatch, func,
# with_keyset)`, what `Library.impl` calls), in a subclass's override (`def _register_fake(self, op_name, fn, ...):
# self.m.impl(op_name, "CPU", fn)`, reached by `torch.library.register_fake("ns::a", fn, lib=lib)`): read as no
# kernel, `a` was said CUDA-only where torch runs it on a CPU tensor (thirty-seventh read, scleft)
_ON_HANDLE = (1, "dispatch")
_HANDLE = "m"
_LIBRARY_CLASS = re.compile(r"(?:(?:torch\.)?library\.)?Library")
# what a subclass of `Library` may override that changes what its calls register, or how long (`__init__` given its
# own arguments, `impl` its own key): a subclass overriding one is read as a library of unread namespace and key
_LIBRARY_OWN = frozenset({"__init__", "__new__", "__del__", "__call__", "impl", "fallback", "define", "_destroy"})
# a device type's name as a key (`"cuda"`, `"meta"`): the C++ reader's keys are spelled so
_KEY_OF_DEVICE = {"cuda": "CUDA", "meta": "Meta"}
_OP = re.compile(r"\w+(?:\.\w+)?")  # (an op and its overload, as the C++ reader reads them)
_WORD = re.compile(rb"\w+")  # (a name as a whole word of another file)
_IMPORTS_RELATIVELY = re.compile(rb"^[^\S\n]*from[^\S\n]+\.", re.M)  # (`from . import reg`, `from .ops import reg`)
# a `torch.library` function named by an attribute (`torch.library.impl`, `library.register_kernel` of `from torch
# import library`), assigned to a name of the file's
_TORCH_LIBRARY_NAME = re.compile(r"(?:torch\.)?library\.(\w+)")
# torch 2.9's parameter names of the calls whose arguments may be given by keyword (`Library(ns="ns", kind="IMPL",
# dispatch_key="CPU")`, `lib.impl(op_name="a", fn=fn, dispatch_key="CPU")`): read by position only, each was no
# library or no kernel, and an op that runs on a CPU tensor was said CUDA-only (thirty-fourth read)
_PARAMETERS = {"Library": ("ns", "kind", "dispatch_key"), "impl": ("op_name", "fn", "dispatch_key")}
# a name's binding to a `Library`: (its function, its class, where, (namespace, key))
_Binding = tuple[ast.AST, ast.AST, tuple[int, int], tuple[str, str]]


def may_register(source: bytes) -> bool:
    """Whether a Python file may register a kernel: it names `torch.library` (`TOKEN`), or calls `.impl(` or
    `.register_kernel(` on what another module of the project gives it (`from ._lib import lib`)."""
    return TOKEN in source.lower() or b".impl(" in source or b".register_kernel(" in source


def _dotted_module(name: str) -> str:
    """The dotted module a Python file's name (from the working folder) is, `pkg.ops` of `pkg/ops.py` and of
    `pkg/ops/__init__.py`."""
    dotted = name.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    return "" if dotted == "__init__" else dotted  # (the folder read is a package: its own `__init__.py`)


def registered_kernels(files: Iterable[tuple[str, bytes]]) -> list[tuple[str, str, str, str]]:
    """(file, namespace, op, key) for each kernel the Python `files` (name, bytes) register; an overload is its own op
    (`a.out`)."""
    out: list[tuple[str, str, str, str]] = []
    files = list(files)
    project = _Modules(files)
    for name, source in files:
        names = project.module(_dotted_module(name)) if may_register(source) else None
        if names is None:
            continue  # (a file that cannot be parsed: lint says it)
        passing = _passed_on(names.tree, names)
        for call in ast.walk(names.tree):
            if isinstance(call, ast.Call) and id(call) not in passing:
                out.extend((name, *kernel) for kernel in _kernels_of_call(call, names))
    return out


class _Modules:
    """The project's Python modules by their dotted names, each read (`_FileNames`, its imports taken) when another
    imports from it: a module that only passes a `Library` on (`pkg/__init__.py`'s `from ._lib import cpu`, never
    spelling "library") was not read, nor one read after the module that imports from it, and `from pkg import cpu`
    / `cpu.impl("a", a_cpu)` was no kernel: `a` said CUDA-only where torch runs it on a CPU tensor (thirty-third read,
    scaf2)."""

    def __init__(self, files: list[tuple[str, bytes]]) -> None:
        self.sources = {_dotted_module(name): source for name, source in files}
        self.packages = {_dotted_module(name) for name, _ in files if name.endswith("__init__.py")}
        self.read: dict[str, _FileNames | None] = {}
        self._words: dict[str, set[bytes]] = {}

    def words(self, module: str) -> set[bytes]:
        """The whole words of a module's source, found once however many modules ask (`_called_elsewhere`)."""
        if module not in self._words:
            self._words[module] = set(_WORD.findall(self.sources[module]))
        return self._words[module]

    def inside_package(self) -> bool:
        """Whether the folder read may be (in) a package another name imports it by: it has an `__init__.py`, or a
        module of its top imports relatively."""
        top = (source for module, source in self.sources.items() if "." not in module)
        return "" in self.packages or any(_IMPORTS_RELATIVELY.search(source) for source in top)

    def module(self, module: str) -> _FileNames | None:
        """The module `module` names (its own dotted name, or the one it ends where one only does: `pkg.ops` of
        `src/pkg/ops.py`), read; in an import cycle, the module being read gives its own names only."""
        found = self.named(module)
        if found is None or found in self.read:
            return self.read.get(found) if found is not None else None
        self.read[found] = None
        try:
            tree = ast.parse(self.sources[found])
        except (SyntaxError, ValueError):
            return None
        package = found in self.packages
        parts = found.split(".") if found else []
        constants = _imported_constants(tree, parts if package else parts[:-1], self)
        names = self.read[found] = _FileNames(tree, package, constants)
        names.imported(found, self)
        return names

    def named(self, module: str) -> str | None:
        if module in self.sources:
            return module
        found = [name for name in self.sources if name.endswith("." + module)] if module else []
        if not found and "" in self.packages and "." in module:
            # (the folder read is itself a package, `porter kernels pkg`: its files' names lack its own, and `import
            # pkg._lib as L` is `_lib`; unread, `L.lib.impl("a", a_cpu)` was no kernel: thirty-third read, scaf2)
            inner = module.partition(".")[2]
            return inner if inner in self.sources else None
        return found[0] if len(found) == 1 else None


# torch's kernel that computes nothing and goes on to the next key (`torch.library.fallthrough_kernel`): given to
# `lib.impl("a", fallthrough_kernel, "CPU")`, the op has no CPU kernel (torch 2.9: NotImplementedError on a CPU tensor
# beside a CUDA kernel), as the C++ reader has `CppFunction::makeFallthrough()` (thirty-third read)
_PASSES_ON = "fallthrough_kernel"


def _passed_on(tree: ast.AST, names: _FileNames) -> set[int]:
    """The ids of the registering calls given `fallthrough_kernel` (as an argument, or applied to the decorator a call
    makes: `torch.library.impl(lib, "a", "CPU")(fallthrough_kernel)`)."""
    out: set[int] = set()
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and any(names.passes_on(arg) for arg in _call_values(call)):
            out.add(id(call.func) if isinstance(call.func, ast.Call) else id(call))
    return out


def _call_values(call: ast.Call) -> list[ast.expr]:
    return [*call.args, *(k.value for k in call.keywords)]


def _class_bound(node: ast.ClassDef) -> set[str]:
    """The names a class body binds in its own scope: its `def`s and assignments, and those under an `if` or a `try`,
    annotated (`impl: Any = ...`), unpacked (`impl, other = ...`), imported, a `for`'s, a `with`'s, an `except`'s, a
    `:=`'s; not its methods' own. Its `def`s and plain assignments only, a `Library` subclass binding `impl` so was read
    as `Library` itself, and `lib.impl("a", fn, "CUDA")` said `a` CUDA-only where its own `impl` registers for the CPU
    (thirty-sixth read, scaf2)."""
    bound: set[str] = set()
    todo: list[ast.AST] = list(node.body)
    while todo:
        inner = todo.pop()
        if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(inner.name)
            todo += [*inner.decorator_list, *(inner.bases if isinstance(inner, ast.ClassDef) else ())]
            continue
        if isinstance(inner, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue  # (their own scopes)
        if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store):
            bound.add(inner.id)
        elif isinstance(inner, (ast.Import, ast.ImportFrom)):
            bound |= {(alias.asname or alias.name).partition(".")[0] for alias in inner.names}
        elif isinstance(inner, ast.ExceptHandler) and inner.name:
            bound.add(inner.name)
        todo += ast.iter_child_nodes(inner)
    return bound


class _FileNames:
    """What a file's names stand for: `torch.library`'s functions imported under another name (`from torch.library
    import impl as I`), its `Library` variables (name -> namespace, key: their `impl`s given no key register for the
    library's, torch's `Library.impl`) and the custom ops it makes (`@custom_op("ns::a", ...) def a`, name ->
    namespace, op: `a.register_kernel("cpu")` gives `ns::a` a kernel). Unread, each such form's CPU kernel was not seen
    and an op that runs on a CPU tensor was said CUDA-only (thirty-second read, pyops2)."""

    def __init__(self, tree: ast.Module, package: bool = False, imported: dict[str, str] | None = None) -> None:
        self.package = package  # (an `__init__.py`: its relative imports start at its own folder)
        nodes = list(ast.walk(tree))  # (walked once: each reading below takes its kind of node)
        self.aliases = {
            alias.asname: alias.name
            for node in nodes
            if isinstance(node, ast.ImportFrom) and node.module == "torch.library"
            for alias in node.names
            if alias.asname
        }
        # the names `torch.library` itself is imported as (`import torch.library as tl`, `from torch import library as
        # tl`): `tl.Library.impl(DEF, "a", fn, "CUDA")` was not the class's method, its key read at `fn`, unread, and
        # `a`, CUDA-only in torch 2.9, was given no verdict (thirty-fourth read, scaf2's leftover)
        self.library_modules = {
            alias.asname
            for node in nodes
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for alias in node.names
            if alias.asname
            and (alias.name if isinstance(node, ast.Import) else f"{node.module}.{alias.name}") == "torch.library"
        }
        # (`I = torch.library.impl` / `I("ns::a", "cpu", fn, lib=L)`: unread, the CPU kernel was lost and `a` said
        # CUDA-only where torch runs it on a CPU tensor: thirty-fourth read)
        self.aliases.update(
            (node.targets[0].id, m.group(1))
            for node in nodes
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            if (m := _TORCH_LIBRARY_NAME.fullmatch(self.spelled(node.value)))
        )
        self.subclasses: set[str] = set()  # (those read as `Library`)
        self.unread_classes: set[str] = set()
        self._library_subclasses(nodes)
        self.tree = tree
        stores = _stores(tree)
        once = {name for name, count in stores.items() if count == 1}
        self.stood_for = _names_stood_for(tree, stores)  # what a name bound once stands for (`values`)
        self.loops = {  # name -> the loop that binds it, of a loop's name bound once (`skips`)
            target.id: node
            for node in nodes
            if isinstance(node, (ast.For, ast.AsyncFor))
            for target in [node.target.elts[0] if isinstance(node.target, ast.Tuple) else node.target]
            if isinstance(target, ast.Name) and stores[target.id] == 1
        }
        self.skipping: dict[int, list[tuple[ast.expr, bool]]] = {}  # (id of a call -> `_skipping_tests`)
        self.rebound = _names_rebound(tree, stores)
        self.following: set[str] = set()  # (the names `_library_stood_for` is following)
        # (what `_library_stood_for` found for a name where it is used, from no other name's following: read once per
        # call, not once per item of `for op in (...)`, each of whose N items read its N values again)
        self.stood_for_found: dict[tuple[int, int], tuple[str, str] | None] = {}
        # the names `torch.library`'s functions are imported as (`from torch.library import impl`)
        self.from_library = {
            alias.asname or alias.name
            for node in nodes
            if isinstance(node, ast.ImportFrom) and node.module == "torch.library"
            for alias in node.names
        }
        # those of the module's top that give a string (`text`): one count of bindings for both, parameters and
        # imports too (a module constant a function's parameter shadows is no constant there: thirty-fourth read, tidy)
        self.constants = _string_constants(tree, once, imported or {})
        self.scopes, self.classes = _innermost(tree, _SCOPES), _innermost(tree, (ast.ClassDef,))
        # name -> (its function, its class, where, (namespace, key)) of each binding of a `Library`
        self.libraries: dict[str, list[_Binding]] = {}
        self.custom_ops: dict[str, tuple[str, str]] = {}
        self.factories = {
            node.name: self._returned_libraries(node)
            for node in nodes
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        self.keeping = {  # (the factories that return a library they keep in a global: `_returns_global`)
            node.name for node in nodes if isinstance(node, _SCOPES[:2]) and _returns_global(node)
        }
        for node in nodes:
            assigned = _call_assigned(node)
            if assigned is not None:
                for target in assigned[0]:
                    self._assigned(node, target, assigned[1])
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                ops = [op for d in node.decorator_list if isinstance(d, ast.Call) and (op := self.made_op(d))]
                self.custom_ops.update((node.name, op) for op in ops[:1])
        # the namespaces of the `Library` objects bound to no name (`LIBS = [Library("ns", "IMPL", "CPU")]`): an
        # `X.impl("op", ...)` of no library porter reads may be theirs (below); one used at once and dropped
        # (`Library("ns", "IMPL", "CPU").impl("a", fn)`) registers nothing that lasts (torch 2.9: it is destroyed)
        bound = {id(assigned[1]) for node in nodes if (assigned := _call_assigned(node)) is not None}
        bound |= {id(node.value) for node in nodes if isinstance(node, ast.Attribute)}
        made = (self.library_namespace(node) for node in nodes if id(node) not in bound)
        self.unbound = sorted({ns for ns in made if ns is not None})
        self.class_names = {node.name for node in nodes if isinstance(node, ast.ClassDef)}
        # (the names the file binds only to an object of its own classes: `r = R()`)
        calls = [
            (t, isinstance(a[1].func, ast.Name) and a[1].func.id in self.class_names)
            for node in nodes
            if (a := _call_assigned(node)) is not None
            for t in a[0]
        ]
        self.instances = {t for t, own in calls if own} - {t for t, own in calls if not own}
        self.every_namespace = sorted({ns for node in nodes if (ns := self.library_namespace(node)) is not None})
        self.destroyed = _destroyed_bindings(tree, self.libraries)
        # (id of a function, a parameter's name) -> the library the file's calls give it (`_bind_parameters`)
        self.parameters: dict[tuple[int, str], tuple[str, str]] = {}
        self.function_names: dict[int, str] = {}  # (id of a function -> its name)
        # (a method of a subclass of `Library`: its `self` is a library of unread namespace and key, `self.impl("a",
        # a_cpu, "CPU")` a kernel of `a` of any namespace)
        self._bind_selves(self.unread_classes | set(self.aliases), nodes)
        self._bind_scoped()
        self.partials = {  # (the names `functools.partial` is imported as: `_method_given`)
            alias.asname or alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "functools"
            for alias in node.names
            if alias.name == "partial"
        }

    def _library_subclasses(self, nodes: list[ast.AST]) -> set[str]:
        """Read the file's subclasses of `Library` (`class CpuLib(torch.library.Library): pass`), and of those it has
        read or taken from another module (`_take`): one that overrides none of its own methods (`_LIBRARY_OWN`) as
        `Library` itself (an alias); the others' libraries as of an unread namespace and key (`unread_classes`).
        Unread, `CpuLib("ns", "IMPL").impl("a", a_cpu, "CPU")` was no kernel, and `a` said CUDA-only where torch 2.9
        runs it on a CPU tensor (thirty-sixth read). Returns the classes read now."""
        found: set[str] = set()
        unread, read = self.unread_classes, self.subclasses
        for node in nodes:  # (a module's classes in their order: a subclass of a subclass after it)
            if not isinstance(node, ast.ClassDef) or not node.bases or node.keywords or node.name in unread | read:
                continue
            spelled = [self.spelled(base) for base in node.bases]
            bases = [self.aliases.get(base, base) for base in spelled]
            if not any(_LIBRARY_CLASS.fullmatch(base) or base in unread or base in read for base in bases):
                continue
            own = _class_bound(node)
            found.add(node.name)
            if len(bases) > 1 or own & _LIBRARY_OWN or bases[0] in unread:
                unread.add(node.name)
            else:
                self.aliases[node.name] = "Library"
                read.add(node.name)
        return found

    def _bind_selves(self, classes: set[str], nodes: list[ast.AST] | None = None) -> None:
        """Bind the `self` of the methods of the file's `classes` (subclasses of `Library`) as a library of unread
        namespace and key."""
        if not classes:
            return
        self.parameters.update(
            ((id(method), method.args.args[0].arg), (UNREAD, UNREAD))
            for node in (nodes if nodes is not None else ast.walk(self.tree))
            if isinstance(node, ast.ClassDef) and node.name in classes
            for method in node.body
            if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef))
            and method.args.args
            and not method.decorator_list
        )

    def _bind_parameters(self) -> None:
        """Bind each parameter of the file's functions that its calls give a `Library` (`def reg(lib): lib.impl("a",
        a_cpu)`, `reg(cpu)`): unread, `a`'s CPU kernel was none and `a` said CUDA-only where torch runs it on a CPU
        tensor (thirty-third scaffold read's leftover). Calls giving libraries of two keys: the key `UNREAD`; of two
        namespaces, or a name the file defines twice: not bound."""
        functions: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.setdefault(node.name, []).append(node)
        given: dict[tuple[int, str], set[tuple[str, str] | None]] = {}  # (None: a value that is no library read)
        for call in ast.walk(self.tree) if self.libraries else ():
            if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
                continue
            function = functions.get(call.func.id, [])
            if len(function) != 1:
                continue
            for parameter, value in _arguments_of(function[0], call):
                library = self.library(value, call) if isinstance(value, (ast.Name, ast.Attribute)) else None
                given.setdefault((id(function[0]), parameter), set()).add(library)
        self.function_names = {id(f[0]): name for name, f in functions.items() if len(f) == 1}
        for (function_id, parameter), values in given.items():
            libraries = {library for library in values if library is not None}
            if len({ns for ns, _ in libraries}) == 1:
                ns, key = next(iter(libraries))
                # (two keys, or a call giving what porter does not read, perhaps another device's library: no verdict)
                key = key if values == libraries and len(libraries) == 1 else UNREAD
                self.parameters[(function_id, parameter)] = (ns, key)

    def imported(self, name: str, modules: _Modules) -> None:
        """Add the `Library` variables and custom ops the module `name` (dotted) imports from the project's other
        `modules` (`from ._lib import lib`, `from .ops import a`, `from . import _lib`: `_lib.lib`, `import pkg._lib
        as L`, `from ._lib import *`), each bound where its import is: read in their own module only,
        `lib.impl("a", a_cpu, "CPU")` and `a.register_kernel("cpu")` of another file were no kernel, and `a` said
        CUDA-only where torch runs it on a CPU tensor (thirty-second pyops2 and scaffold reads' leftovers)."""
        parts = name.split(".") if name else []
        package = parts if self.package else parts[:-1]
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):  # (`import pkg._lib as L`: `L.lib`)
                for alias in node.names:
                    self._take_module(modules, alias.name, alias.asname or alias.name, node)
            module = _module_imported_from(node, package) if isinstance(node, ast.ImportFrom) else None
            if module is None or not isinstance(node, ast.ImportFrom):
                continue
            other = modules.module(module)
            for alias in node.names:
                local = alias.asname or alias.name
                if other is not None and other is not self:
                    self._take(other, other.public() if alias.name == "*" else {alias.name: local}, node)
                self._take_module(modules, f"{module}.{alias.name}" if module else alias.name, local, node)
        self._bind_parameters()  # (the libraries it imports too)
        self._called_elsewhere(modules, name)

    def _called_elsewhere(self, modules: _Modules, name: str) -> None:
        """Leave the key of a parameter `UNREAD` where the project's other `modules` name its function: another module
        may call it with a library this file's calls do not give (`from .ops import reg` / `reg(cpu)`, ops.py's own
        `reg(cuda)`: read by ops.py's calls alone, `a` was said CUDA-only where torch runs it on a CPU tensor:
        thirty-fourth read, scaf2)."""
        others = [module for module in modules.sources if module != name] if self.parameters else []
        # (and that may import it: naming a part of its dotted name, `from .ops import reg`, `import pkg.ops`, or
        # importing relatively; by the function's name alone, any file of the project naming `reg` for anything else
        # took the verdict: thirty-fourth read, scaf2's leftover)
        # (the folder read inside a package, `porter kernels pkg`: its modules' names lack the package's, and `from pkg
        # import reg` names no part of `ops`: any file, as before)
        parts = {part.encode() for part in name.split(".") if part} if not modules.inside_package() else set()
        others = [
            other
            for other in others
            if not parts or parts & modules.words(other) or _IMPORTS_RELATIVELY.search(modules.sources[other])
        ]
        for function, parameter in list(self.parameters):
            named = self.function_names.get(function)  # (none: a method of a `Library` subclass, its key unread)
            if named is not None and any(named.encode() in modules.words(other) for other in others):
                self.parameters[(function, parameter)] = (self.parameters[(function, parameter)][0], UNREAD)

    def _take_module(self, modules: _Modules, module: str, local: str, node: ast.AST) -> None:
        """Take a module's names as `local.name` (`from . import _lib`: `_lib.lib`)."""
        inner = modules.module(module)
        if inner is not None and inner is not self:
            self._take(inner, {v: f"{local}.{v}" for v in inner.public(everything=True)}, node)

    def public(self, everything: bool = False) -> dict[str, str]:
        """The `Library` variables, subclasses and custom ops the module gives another (theirs -> theirs): those
        `import *` takes (its `__all__`'s, else those not named `_...`), or, `everything`, all of them."""
        names = [*self.libraries, *self.custom_ops, *self.subclasses, *self.unread_classes]
        listed = _listed_all(self.tree)
        if not everything:
            names = [n for n in names if n in listed] if listed is not None else [n for n in names if n[:1] != "_"]
        return {n: n for n in names}

    def _take(self, other: _FileNames, names: dict[str, str], node: ast.AST) -> None:
        """Take the `Library` variables and custom ops of `other` named in `names` (theirs -> the local one), bound
        where the import `node` is."""
        at = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
        scope, cls = self.scopes.get(id(node), self.tree), self.classes.get(id(node), self.tree)
        for theirs, local in names.items():
            # (their module's own bindings only, the last: a name bound in their functions or classes is not one
            # they export)
            top = [b for b in other.libraries.get(theirs, []) if b[0] is other.tree and b[1] is other.tree]
            if top:
                library = max(top, key=lambda binding: binding[2])[3]
                self.libraries.setdefault(local, []).append((scope, cls, at, library))
            if theirs in other.custom_ops:
                self.custom_ops[local] = other.custom_ops[theirs]
        # (their subclasses of `Library`: `from .lib import CpuLib` / `L = CpuLib("ns", "IMPL")`, bound here now)
        classes = {local for theirs, local in names.items() if theirs in other.subclasses | other.unread_classes}
        for theirs, local in names.items():
            if theirs in other.unread_classes:
                self.unread_classes.add(local)
            elif theirs in other.subclasses:
                self.subclasses.add(local)  # (`L.CpuLib` of `import pkg.lib as L` too)
        # (and this file's subclasses of them, `class Mine(CpuLib): pass`: its classes were read before its imports
        # were taken, and `Mine("ns", "IMPL").impl("a", a_cpu, "CPU")` was no kernel: thirty-sixth read, scaf2)
        mine = self._library_subclasses(list(ast.walk(self.tree))) if classes else set()
        classes |= mine
        self._bind_selves(mine)
        for node in ast.walk(self.tree) if classes else ():
            assigned = _call_assigned(node)
            if assigned is not None and ast.unparse(assigned[1].func) in classes:
                for target in assigned[0]:
                    self._assigned(node, target, assigned[1])

    def _returned_libraries(self, function: ast.AST) -> list[ast.Call]:
        """The `Library(...)` calls a function returns (`return Library(...)`, `made = Library(...)` / `return
        made`)."""
        made: dict[str, ast.expr] = {}
        for node in ast.walk(function):
            assigned = _call_assigned(node)
            if assigned is not None and self.library_namespace(assigned[1]) is not None:
                made.update((target, assigned[1]) for target in assigned[0])
        returned = [node.value for node in ast.walk(function) if isinstance(node, ast.Return) and node.value]
        calls = [made.get(ast.unparse(value), value) for value in returned]
        return [call for call in calls if isinstance(call, ast.Call) and self.library_namespace(call) is not None]

    def made_library(self, call: ast.Call) -> tuple[str, str] | None:
        """(namespace, key) of the `Library` a call makes: `Library("ns", "IMPL", "CPU")`, or a call of the file's
        function that returns one (`lib = make()`: unread, `lib.impl("a", a_cpu)` was no kernel, and `a` said
        CUDA-only where torch runs it on a CPU tensor: thirty-third read, scaf2); its key `UNREAD` where its
        returns differ."""
        ns = self.library_namespace(call)
        if ns is not None and ast.unparse(call.func) in self.unread_classes:
            return (UNREAD, UNREAD)
        if ns is not None:
            keys = _given_keys(call, (2, "dispatch_key", ""), self)
            return (ns, keys[0] if len(keys) == 1 else UNREAD)
        factory = self.factories.get(call.func.id, []) if isinstance(call.func, ast.Name) else []
        made = {library for returned in factory if (library := self.made_library(returned)) is not None}
        if len({ns for ns, _ in made}) != 1:
            return None
        return next(iter(made)) if len(made) == 1 else (next(iter(made))[0], UNREAD)

    def _assigned(self, node: ast.AST, target: str, value: ast.Call) -> None:
        library = self.made_library(value)
        if library is not None:
            at = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
            binding = (self.scopes.get(id(node), self.tree), self.classes.get(id(node), self.tree), at, library)
            self.libraries.setdefault(target, []).append(binding)
        made = self.made_op(value.func if isinstance(value.func, ast.Call) else value)
        if made is not None:
            self.custom_ops[target] = made

    def library_namespace(self, node: ast.AST) -> str | None:
        """The namespace of a `Library("ns", ...)` call, `UNREAD` where porter cannot read it (`Library(*ARGS)`, a
        parameter: read as no library, `lib.impl("a", a_cpu)` was no kernel, and `a` said CUDA-only where torch runs
        it on a CPU tensor: thirty-fifth read)."""
        made = ast.unparse(node.func) if isinstance(node, ast.Call) else None
        if made in self.unread_classes:
            return UNREAD
        if isinstance(node, ast.Call) and (self.callee(node) == "Library" or made in self.subclasses):
            args = _in_positions(node, _PARAMETERS["Library"])
            return (self.text(args[0]) if args else None) or UNREAD
        return None

    def library(self, owner: ast.expr, use: ast.AST) -> tuple[str, str] | None:
        """(namespace, key) of the `Library` a name stands for where `use` is: the scope's own binding before it
        (else the last of its class's, of the module's, of the file's: a function runs after the module's top),
        `R.lib` and `self.lib` a class's `lib`. One name bound in two functions (`lib = Library("ns", "IMPL",
        "CUDA")` in one, `"CPU"` in the other, or `self.lib` in two classes) was read as the file's last binding
        everywhere, and `a`, CUDA-only, was not said so (thirty-third read)."""
        if isinstance(owner, ast.NamedExpr):  # `(lib := Library("ns", "IMPL", "CPU")).impl("a", fn)`
            owner = owner.target
        if isinstance(owner, ast.Call) and self.library_namespace(owner) is None:
            return self._library_returned(owner)
        scope = self.scopes.get(id(use), self.tree)
        own = [b for b in self.libraries.get(ast.unparse(owner), []) if b[0] is scope]  # (`lib = Library(...)` there)
        if isinstance(owner, ast.Name) and (id(scope), owner.id) in self.parameters and not own:
            return self.parameters[(id(scope), owner.id)]
        bound = self.libraries.get(ast.unparse(owner))
        if bound is None and isinstance(owner, ast.Attribute):  # (`R.lib`: a class's `lib`)
            bound = next((b for name, b in self.libraries.items() if name.rpartition(".")[2] == owner.attr), None)
            bound = [b for b in bound or [] if b[1] is not self.tree] or bound
        if not bound:
            return self._library_stood_for(owner, use)
        scope, cls = self.scopes.get(id(use), self.tree), self.classes.get(id(use), self.tree)
        at = (getattr(use, "lineno", 0), getattr(use, "col_offset", 0))
        # (a class body's binding is the class's, not the module's: `lib` at the module's top after `class K: lib =
        # Library(..., "CUDA")` is the module's own, and so is the `lib` another module imports: thirty-third read)
        before = [b for b in bound if b[0] is scope and b[1] is cls and b[2] <= at]
        if isinstance(owner, ast.Attribute):  # (`self.lib` of another method; a bare name there is the module's)
            before = before or [b for b in bound if b[1] is cls is not self.tree]
        before = before or [b for b in bound if b[0] is self.tree and b[1] is self.tree] or bound
        binding = max(before, key=lambda b: b[2])
        return None if (id(binding[0]), binding[2]) in self.destroyed else binding[3]

    def _library_returned(self, call: ast.Call) -> tuple[str, str] | None:
        """The `Library` a call of the file's function gives, used at once (`get_lib().impl("a", a_cpu, "CPU")`):
        unread, the CPU kernel was lost and `a` said CUDA-only where torch runs it on a CPU tensor (thirty-fifth read).
        Its key `UNREAD` unless the function keeps it in a global: one nothing keeps is destroyed with its kernels at
        once (torch 2.9), one kept in a list or an attribute porter does not follow."""
        made = self.made_library(call)
        return made if made is None or self.keeps(call) else (made[0], UNREAD)

    def _bind_scoped(self) -> None:
        """Bind each name a `torch.library._scoped_library(...)` is bound to (`cpu = stack.enter_context(
        _scoped_library("ns", "IMPL"))`, `with _scoped_library(...) as cpu:`), as a `Library` of its arguments: read as
        none, `cpu.impl("a", a_cpu, "CPU")` was no kernel and `a` said CUDA-only where torch runs it on a CPU tensor
        (thirty-fifth read, scaf3: the scaffold read's leftover). Its key is read where an `ExitStack` at the module's
        top keeps it; in a `with` block (torch destroys it at the block's end) or a function's stack, its key is
        `UNREAD`; never read as destroyed (the stack may be kept)."""
        for node in ast.walk(self.tree):
            items = node.items if isinstance(node, (ast.With, ast.AsyncWith)) else []
            bound = [(ast.unparse(i.optional_vars), i.context_expr, False) for i in items if i.optional_vars]
            assigned = _call_assigned(node)
            bound += [(target, assigned[1], True) for target in assigned[0]] if assigned is not None else []
            for target, value, entered in bound:
                made = self._scoped_made(value, entered)
                if made is None:
                    continue
                scope, cls = self.scopes.get(id(node), self.tree), self.classes.get(id(node), self.tree)
                key = made[1] if entered and scope is self.tree else UNREAD
                at = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
                self.libraries.setdefault(target, []).append((scope, cls, at, (made[0], key)))

    def _scoped_made(self, value: ast.expr, entered: bool) -> tuple[str, str] | None:
        """(namespace, key) of the `Library` a `_scoped_library(...)` call makes, `entered` through a stack's
        `enter_context(...)`."""
        if entered and isinstance(value, ast.Call) and called_name(value) == "enter_context" and len(value.args) == 1:
            value = value.args[0]
        elif entered:
            return None
        if not isinstance(value, ast.Call) or self.callee(value) != "_scoped_library":
            return None
        return self.made_library(
            ast.Call(func=ast.Name("Library", ast.Load()), args=value.args, keywords=value.keywords)
        )

    def unbound_of(self, call: ast.Call) -> list[str]:
        """The namespaces of the libraries `X.impl(...)`'s `X` may be where porter cannot follow it to one: every one
        the file makes. Only those bound to no name were counted, and an `X` porter does not follow (`r.make()` of a
        method returning `self.lib`, `get()` returning the module's `lib`, `LIBS["cpu"]`, `(lib if c else other)`,
        `r.lib` of an instance's attribute, `x` of `with nullcontext(lib) as x`) gave no kernel: its CPU kernel lost,
        `a` was said CUDA-only where torch 2.9 runs it on a CPU tensor (thirty-sixth read). An object of a class of
        the file (`R().impl(...)`, `r = R()`; `r.impl(...)`) is its own, no library; a name bound to a library is
        read as before."""
        owner = call.func.value if isinstance(call.func, ast.Attribute) else None
        if isinstance(owner, ast.Name) and owner.id in self.instances:
            return self.unbound
        if isinstance(owner, (ast.Name, ast.Attribute)) and ast.unparse(owner) in self.libraries:
            return self.unbound  # (a library porter follows, and finds destroyed there)
        if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id in self.class_names:
            return self.unbound
        return self.every_namespace

    def drops(self, call: ast.Call) -> bool:
        """Whether a call is of the file's function that returns a `Library` it makes and nothing keeps: used at once
        (`make().impl("a", a_cpu, "CPU")`), torch 2.9 destroys it with its kernels (read as a kernel of an unread key:
        no verdict where torch has `a` CUDA-only: the scaffold read's leftover)."""
        name = call.func.id if isinstance(call.func, ast.Name) else None
        functions = [n for n in ast.walk(self.tree) if isinstance(n, _SCOPES[:2]) and n.name == name]
        return len(functions) == 1 and not functions[0].decorator_list and self._returns_fresh(functions[0])

    def _returns_fresh(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """Whether each `return` of a function gives a `Library(...)` call, or a local name bound only to one that the
        function uses only to register through (no `global`, no closure, no cache: nothing else keeps it)."""
        parents = {id(child): node for node in ast.walk(function) for child in ast.iter_child_nodes(node)}
        returned = [node.value for node in ast.walk(function) if isinstance(node, ast.Return)]
        declared = {
            name for node in ast.walk(function) if isinstance(node, (ast.Global, ast.Nonlocal)) for name in node.names
        }
        for value in returned:
            if isinstance(value, ast.Call) and self.library_namespace(value) is not None:
                continue
            if not isinstance(value, ast.Name) or value.id in declared:
                return False
            stores = [
                n
                for n in ast.walk(function)
                if isinstance(n, ast.Name) and n.id == value.id and not _loads(n, value.id)
            ]
            made = [parents.get(id(n)) for n in stores]
            if not all(isinstance(m, ast.Assign) and self.library_namespace(m.value) is not None for m in made):
                return False
            uses = [n for n in ast.walk(function) if _loads(n, value.id)]
            if any(self.scopes.get(id(n)) is not function for n in uses):
                return False  # (a closure may keep it)
            if not all(isinstance(parents.get(id(n)), ast.Return) or _keeps_no_reference(n, parents) for n in uses):
                return False
        return bool(returned)

    def keeps(self, call: ast.Call) -> bool:
        """Whether a call is of the file's function that keeps the library it returns in a global."""
        return isinstance(call.func, ast.Name) and call.func.id in self.keeping

    def _library_stood_for(self, owner: ast.expr, use: ast.AST) -> tuple[str, str] | None:
        """The `Library` a name the file binds to another's stands for (`other = lib`, `for lib in (cpu,)`): unread,
        `other.impl("a", a_cpu)` was no kernel, and `a` said CUDA-only where torch runs it on a CPU tensor
        (thirty-fourth read, scaf2); libraries of two keys: the key `UNREAD`."""
        if not isinstance(owner, ast.Name) or owner.id in self.following:
            return None
        top, place = not self.following, (id(owner), id(use))
        if top and place in self.stood_for_found:
            return self.stood_for_found[place]
        self.following.add(owner.id)  # (`a = b` / `b = a`)
        values = [v for v in self.values(owner)[1:] if isinstance(v, (ast.Name, ast.Attribute))]
        found = [self.library(value, use) for value in values]
        self.following.discard(owner.id)
        libraries = {library for library in found if library is not None}
        one = len(libraries) == len(set(found)) and len({ns for ns, _ in libraries}) == 1
        ns, key = next(iter(libraries)) if one else ("", "")
        result = (ns, key if len(libraries) == 1 else UNREAD) if one else None
        if top:
            self.stood_for_found[place] = result
        return result

    def values(self, node: ast.expr) -> list[ast.expr]:
        """What an argument may stand for: itself (a custom op's name), and a name's value where the file binds it
        once (`NAME = "a"`, `op = torch.ops.ns.a.default`, `for op in ("a", "b")`: each item)."""
        if not isinstance(node, ast.Name):
            return [node]
        if node.id in self.stood_for or node.id not in self.rebound:
            return [node, *self.stood_for.get(node.id, [])]
        # (a name the module's top binds anew, `late = "f"` then `late = "g"`: there, the binding before it; in a
        # function, which ran before is not read: each)
        bound = self.rebound[node.id]
        at_top = self.scopes.get(id(node), self.tree) is self.tree
        before = [value for line, value in bound if line < node.lineno][-1:] if at_top else []
        return [node, *(before or [value for _, value in bound])]

    def skips(self, call: ast.Call, name: ast.expr, item: ast.expr) -> bool:
        """Whether the loop binding `name` skips `call` where `name` is `item`, by an `if` on it that porter decides
        (`for op in ("a", "b"): if op != "b": lib.impl(op, fn, "CPU")`, `if op == "b": continue`): read as each item's,
        `b` was given a CPU kernel torch never registers, and, CUDA-only in torch 2.9, not said so (thirty-fourth
        read, scaffold's leftover)."""
        loop, value = self.loops.get(name.id) if isinstance(name, ast.Name) else None, _literal_str(item)
        if not isinstance(name, ast.Name) or loop is None or value is None:
            return False
        if id(call) not in self.skipping:  # (once a call, not once an item: a loop of 4,000 names took 32 s)
            self.skipping[id(call)] = _skipping_tests(loop, call)
        return any(_decided(test, name.id, value) is skips for test, skips in self.skipping[id(call)])

    def passes_on(self, node: ast.expr) -> bool:
        """Whether an argument is torch's `fallthrough_kernel`."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id) == _PASSES_ON
        return isinstance(node, ast.Attribute) and node.attr == _PASSES_ON

    def callee(self, call: ast.Call) -> str | None:
        """The name a call calls, a `torch.library` function's own where the file imported it under another."""
        name = called_name(call)
        return self.aliases.get(name, name) if isinstance(call.func, ast.Name) and name is not None else name

    def library_named(self, node: ast.expr) -> bool:
        """Whether an argument is a name the file binds a `Library` to (live or not)."""
        return ast.unparse(node) in self.libraries

    def library_class(self, func: ast.expr) -> bool:
        """Whether a call's callee is the `Library` class's own method (`torch.library.Library.impl`)."""
        if not isinstance(func, ast.Attribute):
            return False
        owner = self.spelled(func.value)
        return _LIBRARY_CLASS.fullmatch(self.aliases.get(owner, owner)) is not None

    def of_torch_library(self, call: ast.Call) -> bool:
        """Whether a call calls `torch.library`'s own function (`torch.library.impl`, `impl` imported from it, a name
        assigned it), not another object's method of the same name."""
        if isinstance(call.func, ast.Name):
            return call.func.id in self.aliases or call.func.id in self.from_library
        return _TORCH_LIBRARY_NAME.fullmatch(self.spelled(call.func)) is not None

    def spelled(self, node: ast.expr) -> str:
        """`node`'s text, a name `torch.library` is imported as spelled `torch.library` (`tl.Library`)."""
        head, dot, rest = ast.unparse(node).partition(".")
        return f"torch.library{dot}{rest}" if head in self.library_modules else f"{head}{dot}{rest}"

    def made_op(self, call: ast.Call) -> tuple[str, str] | None:
        """(namespace, op) of a `custom_op("ns::op", ...)`/`triton_op` call."""
        first = self.text(call.args[0]) if call.args and self.callee(call) in _MAKERS else None
        return _op_of_qualname(first) if first is not None else None

    def text(self, node: ast.expr) -> str | None:
        """The string a literal, an f-string of the module's string constants (`f"{NS}::a"`, `NS = "myops"`) or such a
        constant gives; unread, `@torch.library.impl(f"{NS}::a", "cpu")` was no kernel, and `a`, given a CUDA kernel
        in C++, said CUDA-only where torch runs it on a CPU tensor (the thirty-second read's leftover, mase-triton
        0.0.7's `f"{PACKAGE_NAME}::..."`)."""
        return _constant_text(node, self.constants)

    def custom_op_stood_for(self, owner: ast.expr) -> tuple[str, str]:
        """The custom op `X.register_kernel("cpu")`'s `X` stands for where it is no custom op's own name: that of a
        name bound once to one (`op = a`), else an op porter cannot read, of the namespace of the custom ops the file
        has (all, where they are of several or none). Read as no kernel, `op = a` / `op.register_kernel("cpu")(fn)`
        and `OPS["a"].register_kernel("cpu")(fn)` lost `a`'s CPU kernel, and `a` was said CUDA-only where torch 2.9
        runs it on a CPU tensor (thirty-seventh read)."""
        if ast.unparse(owner) in self.custom_ops:
            return self.custom_ops[ast.unparse(owner)]
        followed = [v for v in self.values(owner)[1:] if isinstance(v, ast.Name)]
        ops = {self.custom_ops.get(v.id) for v in followed}
        if len(followed) == 1 and None not in ops:
            return next(iter(ops)) or (UNREAD, UNREAD)
        namespaces = {ns for ns, _ in self.custom_ops.values()}
        return (next(iter(namespaces)) if len(namespaces) == 1 else UNREAD, UNREAD)

    def op_of(self, node: ast.expr) -> tuple[str, str] | None:
        """(namespace, op) of an op given as `"ns::op"`, a custom op's name or `torch.ops.ns.op[.overload]`."""
        text = self.text(node)
        if text is not None:
            return _op_of_qualname(text)
        if isinstance(node, ast.Name) and node.id in self.custom_ops:
            return self.custom_ops[node.id]
        m = _TORCH_OPS.fullmatch(_GETATTR.sub(r"\1.\2", ast.unparse(node)))
        return (m.group(1), m.group(2)) if m else None


_MAKERS = ("custom_op", "triton_op")
_TORCH_OPS = re.compile(r"torch\.ops\.(\w+)\.(\w+(?:\.\w+)?)")  # an op (and its overload) as an object
_GETATTR = re.compile(r"getattr\(([\w.]+), '(\w+)'\)")  # `getattr(torch.ops.ns, "a")` (as `ast.unparse` spells it)
_ON_OP = (0, "", None)  # `op.register_kernel("cpu")` of a custom op (`CustomOpDef.register_kernel`: positional only)


# what a `Library` is given to, or called with, that keeps no reference to it: its own registering methods
# (`lib.impl(...)`) and `torch.library`'s functions given it (`torch.library.impl(lib, "a", "CPU")`)
_KEEPS_NO_REFERENCE = frozenset({"impl", "define", "fallback", "register_kernel", "register_fake", "register_autograd"})


def _destroyed_bindings(tree: ast.Module, libraries: dict[str, list[_Binding]]) -> set[tuple[int, tuple[int, int]]]:
    """(id of its scope, where) of each `Library` binding torch destroys, with its kernels, before any op is called:
    one made in a function and dropped at its return, or at the module's top then deleted (`del lib`) or bound anew,
    where nothing else holds it (its name is used only to register through). Read as live, `lib.impl("a", a_cpu)`
    was a CPU kernel, and an op torch 2.9 runs only on CUDA (NotImplementedError on a CPU tensor) was not said
    CUDA-only (thirty-third scaffold read's leftover). Anything else the name is given to may keep it: live."""
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    out: set[tuple[int, tuple[int, int]]] = set()
    for name, bindings in libraries.items() if tree else ():
        for scope, _cls, at, _library in bindings if "." not in name else ():  # (`self.lib`: the object's)
            made = [n for n in ast.walk(scope) if isinstance(n, _MAKING) and (n.lineno, n.col_offset) == at]
            if not made:
                continue  # (an import: the library is its module's)
            if scope is tree:
                ends = made[0] in tree.body and _unbound_after(tree.body, made[0], name)
                uses: ast.AST = tree
            else:
                ends = not any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in ast.walk(scope))
                uses = scope
            kept = (n for n in ast.walk(uses) if _loads(n, name) and not _keeps_no_reference(n, parents))
            if ends and all(scope is tree and _alias_dropped(n, parents, tree) for n in kept):
                out.add((id(scope), at))
    return out


def _alias_dropped(use: ast.AST, parents: dict[int, ast.AST], tree: ast.Module) -> bool:
    """Whether a use of a library's name at the module's top binds it to another name there (`keep = lib`) that is
    used only to register through and deleted or bound anew after: torch 2.9 destroys the library with its last
    name (`del lib`, `del keep`: read as kept, an op with a CUDA kernel only was not said CUDA-only: thirty-fourth
    scleft read's leftover); one name kept keeps it."""
    statement = parents.get(id(use))
    if not (isinstance(statement, ast.Assign) and statement.value is use and statement in tree.body):
        return False
    alias = statement.targets[0] if len(statement.targets) == 1 else None
    return (
        isinstance(alias, ast.Name)
        and _unbound_after(tree.body, statement, alias.id)
        and all(_keeps_no_reference(n, parents) for n in ast.walk(tree) if _loads(n, alias.id))
    )


_MAKING = (ast.Assign, ast.AnnAssign, ast.NamedExpr)  # (the statements `_call_assigned` reads)


def _unbound_after(body: list[ast.stmt], statement: ast.AST, name: str) -> bool:
    """Whether a statement of the module's top after `statement` deletes `name` or binds it anew."""
    for later in body[next(i for i, s in enumerate(body) if s is statement) + 1 :]:
        targets = later.targets if isinstance(later, (ast.Delete, ast.Assign)) else [getattr(later, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return True
    return False


def _loads(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)


def _keeps_no_reference(use: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """Whether a use of a library's name gives it to nothing that may keep it (`lib.impl(...)`, `impl(lib, ...)`)."""
    parent = parents.get(id(use))
    if isinstance(parent, ast.Attribute) and parent.attr in _KEEPS_NO_REFERENCE:
        call = parents.get(id(parent))
        return isinstance(call, ast.Call) and call.func is parent
    if isinstance(parent, ast.keyword):
        parent = parents.get(id(parent))
    return isinstance(parent, ast.Call) and called_name(parent) in _KEEPS_NO_REFERENCE and use is not parent.func


def _arguments_of(function: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call) -> list[tuple[str, ast.expr]]:
    """(parameter, the value a call gives it) of each argument a call of `function` names one of its parameters by
    (positionally, or by keyword)."""
    positional = [a.arg for a in [*function.args.posonlyargs, *function.args.args]]
    named = {a.arg for a in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]}
    out = [(p, v) for p, v in zip(positional, call.args) if not isinstance(v, ast.Starred)]
    return out + [(k.arg, k.value) for k in call.keywords if k.arg in named]


def _module_imported_from(node: ast.ImportFrom, package: list[str]) -> str | None:
    """The dotted module a `from ... import` names, from the importing module's `package` (None: above the
    project)."""
    if node.level > len(package) + 1:
        return None
    base = package[: len(package) - node.level + 1] if node.level else []
    return ".".join([*base, *(node.module.split(".") if node.module else [])])


def _imported_constants(tree: ast.Module, package: list[str], modules: _Modules) -> dict[str, str]:
    """The string constants a module imports from the project's other modules at its top (`from .about import
    PACKAGE_NAME`: unread, `Library(PACKAGE_NAME, "IMPL", "CPU")` was no library and `f"{PACKAGE_NAME}::a"` no op, and
    `a` said CUDA-only where torch runs it on a CPU tensor: thirty-fourth read, scaf2: mase-triton 0.0.7)."""
    out: dict[str, str] = {}
    for node in tree.body:
        module = _module_imported_from(node, package) if isinstance(node, ast.ImportFrom) else None
        other = modules.module(module) if module is not None else None
        if other is None or not isinstance(node, ast.ImportFrom):
            continue
        out.update({a.asname or a.name: other.constants[a.name] for a in node.names if a.name in other.constants})
    return out


def _returns_global(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a function returns a name it declares `global` (`global _LIB` ... `return _LIB`: the library it makes
    once and keeps)."""
    kept = {name for node in ast.walk(function) if isinstance(node, ast.Global) for name in node.names}
    returned = (node.value for node in ast.walk(function) if isinstance(node, ast.Return))
    return any(isinstance(value, ast.Name) and value.id in kept for value in returned)


def _op_of_qualname(text: str) -> tuple[str, str] | None:
    return (text.partition("::")[0], text.partition("::")[2]) if "::" in text else None


def _call_assigned(node: ast.AST) -> tuple[list[str], ast.Call] | None:
    """(targets, call) of `NAME = call(...)`, `A = B = call(...)` (each name binds it: read as no name, `lib = keep =
    Library("ns", "IMPL", "CUDA")` / `lib.impl("a", fn)` was a kernel of an unread key, and `a`, CUDA-only, was not
    said so: thirty-fourth read), `NAME: T = call(...)` or `(NAME := call(...))`."""
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
        return [ast.unparse(target) for target in node.targets], node.value
    if isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and isinstance(node.value, ast.Call):
        return [ast.unparse(node.target)], node.value
    return None


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _names_stood_for(tree: ast.AST, stores: Counter[str]) -> dict[str, list[ast.expr]]:
    """name -> what it stands for, of each name the file binds once (no parameter, import or other binding of it):
    by `NAME = value`, or by a `for` over a literal list, tuple or set (its items) or a dict (`.items()`, `.keys()`
    or itself: its keys)."""
    out: dict[str, list[ast.expr]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = [node.value]
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.AsyncFor)):
            target = node.target.elts[0] if isinstance(node.target, ast.Tuple) and node.target.elts else node.target
            # (`OPS = ("a", "b")` / `for op in OPS:`: unread, the CPU kernels were lost: thirty-fourth read, scaf2)
            it = node.iter
            it = out[it.id][0] if isinstance(it, ast.Name) and stores[it.id] == 1 and it.id in out else it
            items = _loop_items(it, isinstance(node.target, ast.Tuple))
            if isinstance(target, ast.Name) and items is not None:
                out[target.id] = items
    return {name: values for name, values in out.items() if stores[name] == 1}


def _names_rebound(tree: ast.Module, stores: Counter[str]) -> dict[str, list[tuple[int, ast.expr]]]:
    """name -> (line, value) of each binding, of each name bound more than once and only by `NAME = value` statements
    of the module's top (`late = "f"` / `late = "g"`); `stores`: `_stores`."""
    out: dict[str, list[tuple[int, ast.expr]]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out.setdefault(node.targets[0].id, []).append((node.lineno, node.value))
    return {name: bound for name, bound in out.items() if len(bound) == stores[name] > 1}


def _stores(tree: ast.AST) -> Counter[str]:
    """How many times the file binds (or deletes) each name: stores, parameters, imports."""
    stores = Counter(
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))
    )
    stores.update(n.arg for n in ast.walk(tree) if isinstance(n, ast.arg))
    stores.update(
        (a.asname or a.name).partition(".")[0]
        for n in ast.walk(tree)
        if isinstance(n, (ast.Import, ast.ImportFrom))
        for a in n.names
    )
    return stores


def _loop_items(it: ast.expr, pairs: bool) -> list[ast.expr] | None:
    """What a `for` over `it` binds its (first) name to: a literal list, tuple or set's items, a dict's keys."""
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and not it.args:
        it = it.func.value if it.func.attr in ("items", "keys") and (it.func.attr == "items") == pairs else it
    if isinstance(it, ast.Dict) and None not in it.keys:
        return [key for key in it.keys if key is not None]
    return list(it.elts) if isinstance(it, (ast.List, ast.Tuple, ast.Set)) and not pairs else None


def _skipping_tests(loop: ast.For | ast.AsyncFor, call: ast.AST) -> list[tuple[ast.expr, bool]]:
    """(test, the value that skips `call`) of each `if` between `loop` and `call`: one around it (its other branch's
    value), or an `if ...: continue` (or `break`) before it in the loop's own body (True); none where a function is
    between them (it runs later: not read)."""
    parents = {id(child): node for node in ast.walk(loop) for child in ast.iter_child_nodes(node)}
    path = [call]
    while path[-1] is not loop and id(path[-1]) in parents:
        path.append(parents[id(path[-1])])
    if path[-1] is not loop or any(isinstance(node, _SCOPES) for node in path):
        return []
    out: list[tuple[ast.expr, bool]] = []
    own = True  # (a `continue` of the loop's own body, not an inner loop's)
    for parent, node in zip(path[:0:-1], path[-2::-1]):
        if isinstance(parent, ast.If) and node is not parent.test:
            out.append((parent.test, node not in parent.body))
        earlier = next((block[: block.index(node)] for block in _statement_blocks(parent) if node in block), [])
        out += [
            (statement.test, True)
            for statement in (earlier if own else ())
            if isinstance(statement, ast.If) and statement.body and isinstance(statement.body[-1], _LEAVING)
        ]
        own = own and (parent is loop or not isinstance(parent, (ast.For, ast.AsyncFor, ast.While)))
    return out


_LEAVING = (ast.Continue, ast.Break)  # (a `break` skips this item too; the later ones are read, as before)


def _statement_blocks(node: ast.AST) -> list[list[ast.stmt]]:
    """A statement's blocks of statements (`body`, `orelse`, `finalbody`)."""
    return [block for field in ("body", "orelse", "finalbody") if isinstance(block := getattr(node, field, None), list)]


def _decided(test: ast.expr, name: str, item: str) -> bool | None:
    """The value of an `if` test on a loop's `name` where it is `item`: comparisons (`==`, `!=`, `in`, `not in`) with
    string literals, `name.startswith(...)`/`endswith(...)`, `not`, `and`, `or`; None where porter cannot decide."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _decided(test.operand, name, item)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        values = [_decided(value, name, item) for value in test.values]
        settles = isinstance(test.op, ast.Or)  # (the value that settles it: True for `or`, False for `and`)
        return settles if settles in values else None if None in values else not settles
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _COMPARISONS:
        left, right = (_test_side(node, name, item) for node in (test.left, test.comparators[0]))
        in_ = isinstance(right, (str, tuple))
        if left is None or right is None or (type(test.ops[0]) in (ast.In, ast.NotIn) and not in_):
            return None
        return bool(_COMPARISONS[type(test.ops[0])](left, right))
    func = test.func if isinstance(test, ast.Call) else None
    if isinstance(func, ast.Attribute) and func.attr in ("startswith", "endswith") and isinstance(test, ast.Call):
        given = _test_side(test.args[0], name, item) if len(test.args) == 1 and not test.keywords else None
        if _test_side(func.value, name, item) == item and given is not None:
            return bool(getattr(item, func.attr)(given))
    return None


_COMPARISONS: dict[type[ast.cmpop], Callable[[object, Any], bool]] = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


def _test_side(node: ast.expr, name: str, item: str) -> str | tuple[str, ...] | None:
    """What a side of an `if` test is: the loop's name (`item`), a string literal, or a literal tuple, list or set of
    them (a tuple)."""
    if isinstance(node, ast.Name):
        return item if node.id == name else None
    strings = _literal_strs(node) if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else None
    return tuple(strings) if strings is not None else _literal_str(node)


def _innermost(tree: ast.AST, kinds: tuple[type[ast.AST], ...]) -> dict[int, ast.AST]:
    """id(node) -> the innermost node of `kinds` (a function, a class) it is in (the module where none)."""
    out: dict[int, ast.AST] = {}
    stack = [(tree, tree)]
    while stack:
        node, scope = stack.pop()
        for child in ast.iter_child_nodes(node):
            out[id(child)] = scope
            stack.append((child, child if isinstance(child, kinds) else scope))
    return out


def _kernels_of_call(call: ast.Call, names: _FileNames) -> Iterator[tuple[str, str, str]]:
    """The kernels a call registers, its op given by a name read as each value the name stands for (`for op in ("a",
    "b"): lib.impl(op, fn, "CPU")`, `NAME = "a"`: unread, the CPU kernel was lost and `a` said CUDA-only where torch
    runs it on a CPU tensor: thirty-fourth read)."""
    call = _as_method_call(call, names)
    name = names.callee(call)
    if name == "fallback":
        yield from _fallback_kernels(call, names)
    args = _in_positions(call, _PARAMETERS.get(name or "", ()))
    if name in _QUALIFIED and args:  # (a name and the value it stands for may both read as one op: once each)
        ops = names.values(args[0])
        by_values = len(ops) > 1  # (a name read by its values)
        ops = [op for op in ops if op is ops[0] or not names.skips(call, args[0], op)]
        yield from dict.fromkeys(
            kernel
            for op in ops
            for kernel in _kernels_of_op(call, names, name or "", [op, *args[1:]])
            if not (op is ops[0] and by_values and kernel[1] == UNREAD)
        )


# `Library("_", "IMPL").fallback(fn, "CPU")`: torch's fallback for a key, which every op reaching that key without
# a kernel of its own calls (torch 2.9: an op with a CUDA kernel only runs on a CPU tensor then); read as nothing,
# the project's CUDA-only ops were said so where every one runs there (thirty-fifth read)
_GLOBAL_NAMESPACE = "_"
_FALLBACK = (1, "dispatch_key")


def _fallback_kernels(call: ast.Call, names: _FileNames) -> Iterator[tuple[str, str, str]]:
    """A kernel of op and namespace `UNREAD` for each key a global library's `fallback` registers for."""
    library = names.library(call.func.value, call) if isinstance(call.func, ast.Attribute) else None
    if library is not None and library[0] == _GLOBAL_NAMESPACE:
        yield from ((UNREAD, UNREAD, key) for key in _given_keys(call, (*_FALLBACK, library[1]), names))


def _as_method_call(call: ast.Call, names: _FileNames) -> ast.Call:
    """A call of a name the file binds once to a library's registering method (`reg = lib.impl` / `reg("a", a_cpu,
    "CPU")`) as the method's own call: read as a call of `reg`, nothing, the CPU kernel was lost and `a` said
    CUDA-only where torch runs it on a CPU tensor (thirty-fifth read)."""
    func, args, keywords = _method_given(call.func, names)
    if func is call.func or not isinstance(func, ast.Attribute) or func.attr not in _REGISTERS:
        return call
    method = ast.copy_location(
        ast.Call(func=func, args=[*args, *call.args], keywords=[*keywords, *call.keywords]), call
    )
    names.scopes[id(method)] = names.scopes.get(id(call), names.tree)  # (where the call is, for `library`)
    names.classes[id(method)] = names.classes.get(id(call), names.tree)
    return method


def _method_given(
    func: ast.expr, names: _FileNames, depth: int = 0
) -> tuple[ast.expr, list[ast.expr], list[ast.keyword]]:
    """The method (and the arguments given it first) a callee stands for: a name bound once to it (`reg = lib.impl`),
    `getattr(lib, "impl")`, `functools.partial(lib.impl, dispatch_key="CPU")`. Read as the call of `reg`, `getattr`'s
    or `partial`'s result, nothing, the CPU kernel was lost and `a` said CUDA-only where torch runs it on a CPU tensor
    (thirty-fifth read, scaf3: the scaffold read's leftover)."""
    bound = names.stood_for.get(func.id, []) if isinstance(func, ast.Name) else []
    if len(bound) == 1 and depth < _FOLLOWED:  # (`a = b` / `b = a`: followed so far only)
        return _method_given(bound[0], names, depth + 1)
    if not isinstance(func, ast.Call) or any(isinstance(a, ast.Starred) for a in func.args):
        return func, [], []
    callee = ast.unparse(func.func)
    if callee == "getattr" and len(func.args) == 2 and not func.keywords and _literal_str(func.args[1]):
        return (
            ast.copy_location(ast.Attribute(func.args[0], _literal_str(func.args[1]) or "", ast.Load()), func),
            [],
            [],
        )
    if func.args and (callee == "functools.partial" or callee in names.partials):
        inner, args, keywords = _method_given(func.args[0], names, depth + 1)
        return inner, [*args, *func.args[1:]], [*keywords, *func.keywords]
    return func, [], []


_FOLLOWED = 4  # (how many names and `partial`s deep a callee is followed)


def _kernels_of_op(
    call: ast.Call, names: _FileNames, name: str, args: list[ast.expr]
) -> Iterator[tuple[str, str, str]]:
    owner = ast.unparse(call.func.value) if isinstance(call.func, ast.Attribute) else None
    first = names.text(args[0])
    found: tuple[str, str] | None
    where: tuple[int, str, str | None]
    library, on = _library_owning(call, names)
    on_library = names.library(call.args[0], call) if len(call.args) > 1 else None
    if name == "impl" and library is not None:  # `lib.impl("op" | "ns::op" | torch.ops.ns.op.default, fn, key)`
        ns, key = library
        found = (ns, first) if first is not None and "::" not in first else names.op_of(args[0])
        given = call.func.value if isinstance(call.func, ast.Attribute) else None  # (attribute of a library above)
        at_once = isinstance(given, ast.Call) and not names.keeps(given)
        if isinstance(given, ast.Call) and at_once and names.drops(given):
            return  # (a library torch destroys at once registers nothing)
        found, where = found or (ns, UNREAD), _UNKEPT if at_once else (*on, key)
    elif name == "register_kernel" and isinstance(call.func, ast.Attribute) and not names.of_torch_library(call):
        found, where = names.custom_op_stood_for(call.func.value), _ON_OP
    elif name == "impl" and on_library is not None:
        ns, key = on_library
        at = _ON_CLASS if names.library_class(call.func) else _ON_LIBRARY
        found, where = (ns, names.text(call.args[1]) or UNREAD), (*at, key)
    elif name == "impl" and owner is not None and first is not None and "::" not in first and names.unbound_of(call):
        # (a `Library` porter cannot follow to its name: `LIBS[0].impl("a", fn)`, `r.make().impl("a", fn)`: a kernel
        # of a key it cannot read; none of one made there and dropped)
        if isinstance(call.func, ast.Attribute) and names.library_namespace(call.func.value) is not None:
            return
        yield from ((ns, first.strip(), UNREAD) for ns in names.unbound_of(call) if _OP.fullmatch(first.strip()))
        return
    else:
        found, where = names.op_of(args[0]), _QUALIFIED[name]
        # (`torch.library.impl(lib, "a", "CPU")` of a library torch destroys registers nothing)
        if found is None and name in _REGISTERS and names.of_torch_library(call) and not names.library_named(args[0]):
            found = (_namespace_spelled(args[0]) or UNREAD, UNREAD)
    if found is None:
        return
    ns, op = found[0], found[1].strip().removesuffix(".default")
    if _OP.fullmatch(op) or op == UNREAD:
        yield from ((ns.strip(), op, key) for key in _given_keys(call, where, names))


def _library_owning(call: ast.Call, names: _FileNames) -> tuple[tuple[str, str] | None, tuple[int, str]]:
    """The library a call's method is of (`lib.impl`; `lib.m.impl`, `self.m.impl` in a subclass's method, its C++
    handle's, whose key is given, never the library's), and where the call's key goes."""
    owner = call.func.value if isinstance(call.func, ast.Attribute) else None
    if isinstance(owner, ast.Attribute) and owner.attr == _HANDLE:
        library = names.library(owner.value, call)
        return (library[0], UNREAD) if library is not None else None, _ON_HANDLE
    return names.library(owner, call) if owner is not None else None, _ON_LIBRARY


# the `torch.library` functions that give an op that exists (one `define`d, or C++'s) a kernel: one whose op porter
# cannot read (`f"ns::{name}"` of a loop's name, `"{}::a".format(NS)`, a function's parameter) is a kernel of op
# `UNREAD`, so that no op of its namespace (of any, where that is unread too) is said CUDA-only on a guess; read as
# none, the op's CPU kernel was lost and the op said CUDA-only where torch runs it on a CPU tensor (thirty-fourth
# read, scaf2)
_REGISTERS = ("impl", "register_kernel")


def _namespace_spelled(node: ast.expr) -> str | None:
    """The namespace an op's name spells before anything porter cannot read (`f"myops::{name}"`)."""
    head = node.values[0] if isinstance(node, ast.JoinedStr) and node.values else node
    head = head.left if isinstance(head, ast.BinOp) and isinstance(head.op, ast.Add) else head
    text = _literal_str(head) if head is not node else None
    return text.partition("::")[0] if text and "::" in text else None


def _in_positions(call: ast.Call, parameters: tuple[str, ...]) -> list[ast.expr]:
    """A call's arguments by position, those given by the keywords of `parameters` (torch's names) in theirs (an
    argument not given before one that is: `None`; each not given, where a `**mapping` is: the mapping, which porter
    does not read: `lib.impl(**spec)` was no kernel, and an op torch runs on a CPU tensor said CUDA-only: thirty-fifth
    read)."""
    args: list[ast.expr] = list(call.args)
    for keyword in call.keywords:
        if keyword.arg in parameters[len(call.args) :]:
            at = parameters.index(keyword.arg)
            args.extend(ast.Constant(None) for _ in range(at + 1 - len(args)))
            args[at] = keyword.value
    mapping = next((keyword.value for keyword in call.keywords if keyword.arg is None), None)
    if mapping is not None:
        args = [mapping if _literal_none(arg) else arg for arg in args]
        args.extend(mapping for _ in range(len(args), len(parameters)))
    return args


def _literal_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _given_keys(call: ast.Call, where: tuple[int, str, str | None], names: _FileNames) -> list[str]:
    """The keys a call registers for, a name's read by what the file binds it to (`KEY = "CUDA"`: unread, a CUDA
    library's op was given no verdict where torch has it CUDA-only: thirty-fourth read)."""
    at, keyword, default = where
    given = (
        call.args[at] if 0 <= at < len(call.args) else next((k.value for k in call.keywords if k.arg == keyword), None)
    )
    # (`""` is no key given: `Library.impl(op, fn, "")` registers for the library's own; read as a key of its own,
    # another device's, a CUDA library's `impl(op, fn, "")` left its op not CUDA-only: thirty-third read)
    if given is None or (isinstance(given, ast.Constant) and given.value in (None, "")):
        return [default] if default is not None else [UNREAD]
    items = given.elts if isinstance(given, (ast.Tuple, ast.List, ast.Set)) else [given]
    keys = [[key for value in names.values(item) if (key := names.text(value))] or [UNREAD] for item in items]
    return list(dict.fromkeys(_KEY_OF_DEVICE.get(key, key) for each in keys for key in each))


def _listed_all(tree: ast.Module) -> list[str] | None:
    """A module's `__all__`, where it is a literal list or tuple of strings."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return _literal_strs(node.value)
    return None


def _literal_strs(node: ast.expr) -> list[str] | None:
    """The strings of a literal list or tuple of strings (`__all__ = ["lib"]`), None for anything else."""
    items = [_literal_str(item) for item in node.elts] if isinstance(node, (ast.List, ast.Tuple)) else [None]
    return [item for item in items if item is not None] if None not in items else None


def _string_constants(tree: ast.Module, once: set[str], imported: dict[str, str]) -> dict[str, str]:
    """The names of `once` (bound once in the file) that the module's top binds to a string (`NS = "myops"`, `OP =
    f"{NS}::a"`), or `imported` (the constants of other modules it imports, bound by that import alone)."""
    out = {name: text for name, text in imported.items() if name in once}
    for node in tree.body:  # (in order: a constant is read from those above it)
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(target := node.targets[0], ast.Name):
            text = _constant_text(node.value, out) if target.id in once else None
            out.update({target.id: text} if text is not None else {})
    return out


def _constant_text(node: ast.expr, constants: dict[str, str]) -> str | None:
    """The string a literal, one of `constants` or an f-string of them gives."""
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    if not isinstance(node, ast.JoinedStr):
        return _literal_str(node)
    parts = [
        _constant_text(v.value, constants)
        if isinstance(v, ast.FormattedValue) and v.conversion == -1 and not v.format_spec
        else _literal_str(v)
        for v in node.values
    ]
    return "".join(p for p in parts if p is not None) if None not in parts else None


def _literal_str(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
