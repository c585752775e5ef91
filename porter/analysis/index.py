"""The project index: where device values come from, across the project's own modules.

Real code hides a CUDA device behind names: `device = 0` → `main(device)` →
`Trainer(..., gpu_id)` → `self.gpu_id = gpu_id` → `model.to(self.gpu_id)`. The index reads
`ast` (~10x faster than libcst), and only on demand: the files with a device site, the
modules they import, the files that name a function being followed. It follows such
values through assignments, parameters and call arguments, `self` attributes, returns,
argparse options and imports between the project's modules, then answers, per file, what
each name at a device site holds: an integer index (a CUDA device: the site is ported), a
device made elsewhere (ported where it is made: the site is left alone), or unknown, with
the chain that shows where porter lost it.

The answers travel in `Settings.flow`, so a worker process gets them with its file and the
cache key covers them: a file's cached result goes stale when another module changes what
flows into it. The index never imports or runs the code it reads.
"""

from __future__ import annotations

import ast
import gc
import hashlib
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from porter.config.settings import Facts
from porter.analysis import device_types, fused_flags, summary
from porter.analysis.fused_flags import names_fused
from porter.analysis.kinds import MoveKind, NameKind, ValueKind
from porter.analysis.summary import Ref, Summary
from porter.analysis.program import (
    defines_is_cuda,
    KEPT,
    ModuleInfo,
    Scope,
    Value,
    call_argument,
    attributes_key,
    dotted,
    join,
    module_name,
    move_key,
    origin_key,
    short_source,
    stale_key,
)


# a file is read into the index only if it may hold a device value or a call carrying one (or
# a fused-optimizer flag: `fused`, and `optim` for the calls that hand one on, once ported)
_FLOW_TOKENS = re.compile(
    rb"\.to\(|device|cuda|fused|optim|rank|gpu|map_location|\.spawn\(|parameters\(\)|\.weight = self\."
)
RANK_NAMES = frozenset(
    {"local_rank", "rank", "gpu", "gpu_id", "gpu_idx", "device_id", "device_idx", "local_gpu", "gpu_index"}
)
_INT_CALL_SUFFIXES = ("get_rank", "get_local_rank", "current_device", "local_rank", "get_node_local_rank")
_MAX_DEPTH = 40
_T = TypeVar("_T")
_IDENTIFIER = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
# the kinds of file an answer may read all of (`_deps`, "f:<kind>"): a file that changes and is
# of one makes every answer that read that kind's files stale
_PARAMETER_LOOP_FILES = "parameter loop"
_IS_CUDA_FILES = "own is_cuda"
_FUSED_FILES = "fused flag"
# a file needs answers only if it has a device site or a module move
# a comparison with a CUDA string (`x == "cuda"`, `"cuda" in x`): porter.analysis.device_types
_COMPARED = re.compile(rb"""[=!]=\s*["']cuda["']|["']cuda["']\s*(?:[=!]=|in\b|not\s+in\b)""")


def _compares_cuda(source: bytes) -> bool:
    """`_COMPARED.search(source)`, asked only where a quote opens `cuda` (each `=`, `!` and quote
    of a file started a try of the pattern: 0.54 CPU s of the bench corpus, 0.08 now)."""
    return (b"'cuda" in source or b'"cuda' in source) and _COMPARED.search(source) is not None


_SITES = re.compile(rb"\.to\(|\.cuda\(|device\s*=|map_location|set_device\(|device_ids")
_PARAMETERS = ("parameters", "named_parameters")
_DTYPE = re.compile(r"dtype|float|half|bfloat|int\d|bool|memory_format")
_RETURNS_SELF = frozenset({"to", "cuda", "train", "eval", "float", "half", "bfloat16", "requires_grad_", "apply"})
_CONFIG_OWNER = re.compile(
    r"(?:^|\.)(?:cfg|config|conf|configs|args|opt|opts|options|hparams|hp|params|settings|flags|training_args)$", re.I
)
# calls that keep the Parameter objects they are handed (optimizers, EMA / SWA averages)
_KEEPS_PARAMETERS = re.compile(
    r"optim|adam|sgd|lamb|lion|sophia|shampoo|adafactor|rmsprop|adagrad|lbfgs|ema|averaged|swa", re.I
)
_DEVICE_WORDS = re.compile(r"device|gpu|cuda|rank", re.I)
# a loop over a module's parameters (`for name, p in model.named_parameters():`): where a
# project may set attributes on Parameter objects (mup's `p.infshape = ...`)
# (what `rb"for\s[^\n]*\sin\s[^\n]*parameters\("` finds, found in one pass: that pattern
# backtracks cubically, and 18 KB of `for x in ` cost a lint 27 CPU s past --file-timeout)
_LOOP_PARTS = tuple(re.compile(rb"(?=(%s))" % part) for part in (rb"for\s", rb"\sin\s", rb"parameters\("))


def parameter_loop(source: bytes) -> bool:
    """Whether a line of `source` loops over parameters: `for`, whitespace, then on the same
    line whitespace, `in`, whitespace, then on the same line `parameters(` (each of those
    three whitespace characters may be the line's end). Linear: each part's places are found
    once, and a `for` (or an `in`) is live until the line ends. The line ends are looked for
    between one place and the next (each one an event, sorted with the parts', was most of
    the cost: 0.5 CPU s of the bench corpus's index)."""
    if b"parameters(" not in source:
        return False
    events = sorted((m.start(), kind) for kind, part in enumerate(_LOOP_PARTS) for m in part.finditer(source))
    fors: deque[int] = deque()  # where the text after a live `for ` starts
    ins: deque[int] = deque()  # where the text after a live ` in ` (after a live `for `) starts
    last = 0  # the place before: the line ends up to it are counted (one at a place comes after its parts)
    for at, kind in events:
        ended = source.rfind(b"\n", last, at)  # the last line end since: only what starts after it lives on
        last = at
        if ended >= 0:
            while fors and fors[0] <= ended:
                fors.popleft()
            while ins and ins[0] <= ended:
                ins.popleft()
        if kind == 0:
            fors.append(at + 4)
        elif kind == 1 and fors and fors[0] <= at:
            ins.append(at + 4)
        elif kind == 2 and ins and ins[0] <= at:
            return True
    return False


_KINDS = (
    (_PARAMETER_LOOP_FILES, parameter_loop),
    (_IS_CUDA_FILES, defines_is_cuda),
    (_FUSED_FILES, names_fused),
)
_TENSOR_STATE = frozenset({"data", "grad", "requires_grad"})  # a tensor's own state, which a move keeps
# methods only a Module has: a holder calling one is a module
_MODULE_METHODS = frozenset(
    {
        "train",
        "eval",
        "modules",
        "named_modules",
        "parameters",
        "named_parameters",
        "children",
        "named_children",
        "state_dict",
        "load_state_dict",
        "register_forward_hook",
        "register_forward_pre_hook",
        "register_buffer",
    }
)


_AST = ast.AST
# nodes that hold no statement or call, nor have a `visit_` of `_Collector`: a name, a constant,
# its context, an operator (half the nodes of a tree: the walk visited each, and its context)
_LEAVES = frozenset(
    {
        ast.Name,
        ast.Constant,
        *(
            kind
            for base in (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
            for kind in base.__subclasses__()
        ),
    }
)


class _Collector(ast.NodeVisitor):
    """Fills a ModuleInfo's scopes in one walk."""

    # node type -> its `visit_` method (None: `generic_visit`), found once per type
    _methods: dict[type, Callable[[_Collector, Any], None] | None] = {}

    def __init__(self, info: ModuleInfo, tree: ast.Module) -> None:
        self.info = info
        self.stack: list[Scope] = [Scope("", info, tree)]
        self.names: list[str] = []
        self.classes: list[str | None] = [None]
        info.scopes[""] = self.stack[0]

    def visit(self, node: ast.AST) -> None:
        """`ast.NodeVisitor.visit`: the same calls, the method looked up once per node type
        (NodeVisitor's `visit_Constant`, which only serves the deprecated `visit_Num` ...
        methods this class does not have, is `generic_visit`)."""
        kind = type(node)
        try:
            method = self._methods[kind]
        except KeyError:
            method = getattr(_Collector, "visit_" + kind.__name__, None)
            if method is ast.NodeVisitor.visit_Constant:
                method = None
            self._methods[kind] = method
        if method is None:
            self.generic_visit(node)
        else:
            method(self, node)

    def generic_visit(self, node: ast.AST) -> None:
        """`ast.NodeVisitor.generic_visit`: the child nodes, field by field, in order, but for
        the leaves (`_LEAVES`), where the walk finds nothing."""
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, _AST) and type(item) not in _LEAVES:
                        self.visit(item)
            elif isinstance(value, _AST) and type(value) not in _LEAVES:
                self.visit(value)

    @property
    def scope(self) -> Scope:
        return self.stack[-1]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.names.append(node.name)
        self.classes.append(".".join(self.names))
        self.info.classes.setdefault(".".join(self.names), {})
        for stmt in node.body:
            self.visit(stmt)
        self.classes.pop()
        self.names.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for d in node.decorator_list:
            self.visit(d)
        self.names.append(node.name)
        a = node.args
        params = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
        scope = Scope(".".join(self.names), self.info, node, cls=self.classes[-1], params=params)
        positional = [*a.posonlyargs, *a.args]
        for p, d in zip(positional[len(positional) - len(a.defaults) :], a.defaults):
            scope.defaults[p.arg] = d
        for p, kw_default in zip(a.kwonlyargs, a.kw_defaults):
            if kw_default is not None:
                scope.defaults[p.arg] = kw_default
        self.info.scopes[scope.qual] = scope
        self.stack.append(scope)
        self.classes.append(None)  # a class's name is not visible inside its methods' bodies
        for stmt in node.body:
            self.visit(stmt)
        self.classes.pop()
        self.stack.pop()
        self.names.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            local = alias.asname or alias.name.split(".")[0]
            self.info.imports[local] = (alias.name if alias.asname else local, None)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:
            package = self.info.name.split(".")
            if not self.info.path.endswith("__init__.py"):
                package = package[:-1]
            package = package[: len(package) - (node.level - 1)] if node.level > 1 else package
            base = ".".join([*package, base] if base else package)
        for alias in node.names:
            self.info.imports[alias.asname or alias.name] = (base, alias.name)

    def _bind(self, target: ast.expr, value: ast.expr | str) -> None:
        if isinstance(target, ast.Attribute) and not isinstance(value, str) and self.scope.cls is not None:
            self._tie(target, value)
        if isinstance(target, ast.Name):
            self.scope.assigns.setdefault(target.id, []).append(value)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            owner = self.scope.cls
            if owner is not None:
                self.info.classes[owner].setdefault(target.attr, []).append((value, self.scope))
        elif isinstance(target, (ast.Tuple, ast.List)):
            starred = any(isinstance(e, ast.Starred) for e in target.elts)
            for i, elt in enumerate(target.elts):
                if isinstance(value, str) or starred:
                    self._bind(elt, "unpacked")
                else:  # `rank, local_rank, world = setup(args)`: element i of the value
                    self._bind(elt, ast.copy_location(ast.Subscript(value=value, slice=ast.Constant(i)), value))

    def _tie(self, target: ast.Attribute, value: ast.expr) -> None:
        """`self.a.weight = self.b.weight`: two modules share one Parameter."""
        lhs, rhs = dotted(target), dotted(value)
        if lhs is None or rhs is None or not (lhs.startswith("self.") and rhs.startswith("self.")):
            return
        if lhs.count(".") < 2 or rhs.count(".") < 2 or not rhs.endswith((".weight", ".bias")):
            return
        if self.scope.cls is not None:
            self.info.ties.setdefault(self.scope.cls, []).append((lhs[5:], rhs[5:]))

    def visit_Assign(self, node: ast.Assign) -> None:
        for t in node.targets:
            self._bind(t, node.value)
        if len(node.targets) == 1:  # `a.b = c.d`, what `_untied` asks for (as `ast.unparse` writes it)
            target, value = dotted(node.targets[0]), dotted(node.value)
            if target is not None and value is not None:
                self.scope.assigned.setdefault(f"{target} = {value}", []).append(node.lineno)
        if len(node.targets) == 1:
            self._move(node.value, dotted(node.targets[0]))
        self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute):
            self._move(node.value, dotted(node.value.func.value))
        self.generic_visit(node)

    def _move(self, value: ast.expr, holder: str | None) -> None:
        """`m.to(device)` (not a dtype cast) or `m.cuda()`: a move of a module to the device."""
        if holder is None or not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
            return
        attr = value.func.attr
        if attr == "cuda" or (attr == "to" and value.args and not _DTYPE.search(ast.unparse(value.args[0]))):
            self.info.moves.append((value, self.scope, holder))

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self._bind(node.target, node.value)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._bind(node.target, "augmented")
        self.generic_visit(node)

    def visit_For(self, node: ast.For) -> None:
        self._parameter_attributes(node)
        it = node.iter
        if isinstance(node.target, ast.Name) and isinstance(it, ast.Call) and dotted(it.func) == "range":
            self._bind(node.target, it)  # `for i in range(n)`: an int
        else:
            self._bind(node.target, "a loop variable")
        self.generic_visit(node)

    def _parameter_attributes(self, node: ast.For) -> None:
        """`for name, p in model.named_parameters(): p.infshape = ...` (or `setattr(p, ...)`)."""
        it, target = node.iter, node.target
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr in _PARAMETERS):
            return
        if isinstance(target, ast.Tuple) and target.elts:
            target = target.elts[-1]
        if not isinstance(target, ast.Name):
            return
        for stmt in node.body:
            for sub in ast.walk(stmt):
                if isinstance(sub, ast.Assign):
                    own = any(
                        isinstance(t, ast.Attribute) and dotted(t.value) == target.id and t.attr not in _TENSOR_STATE
                        for t in sub.targets
                    )
                else:
                    own = (
                        isinstance(sub, ast.Call)
                        and dotted(sub.func) == "setattr"
                        and bool(sub.args)
                        and dotted(sub.args[0]) == target.id
                    )
                if own and isinstance(sub, (ast.Assign, ast.Call)):
                    self.info.param_attributes.append(f"`{short_source(sub)}`, {self.info.path}:{sub.lineno}")

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            if item.optional_vars is not None:
                self._bind(item.optional_vars, "a with-target")
        self.generic_visit(node)

    visit_AsyncWith = visit_With

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None:
            self.scope.returns.append(node.value)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        self.scope.calls.append(node)
        for arg in (*node.args, *(kw.value for kw in node.keywords)):
            if (
                isinstance(arg, ast.Call)
                and isinstance(arg.func, ast.Attribute)
                and arg.func.attr in _PARAMETERS
                and _KEEPS_PARAMETERS.search(dotted(node.func) or "")
            ):
                holder = dotted(arg.func.value)
                if holder is not None:
                    self.scope.param_refs.append((holder, node))
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ("to", "cuda") and node.args:
            self.scope.sites.append(node.args[0])
        if isinstance(func, ast.Attribute) and func.attr == "set_device" and node.args:
            self.scope.sites.append(node.args[0])
        for kw in node.keywords:
            if kw.arg in ("device", "map_location", "output_device"):
                self.scope.sites.append(kw.value)
            elif kw.arg == "device_ids" and isinstance(kw.value, (ast.List, ast.Tuple)):
                self.scope.sites.extend(kw.value.elts)
        self.generic_visit(node)


class ProjectIndex:
    """Device values of a whole project; `facts(path)` gives one file's answers."""

    def __init__(self) -> None:
        self._sources: dict[str, bytes] = {}  # path -> bytes of every file that may carry a device
        self._paths: dict[str, list[str]] = {}  # module name -> paths
        self._parsed: dict[str, ModuleInfo | None] = {}  # parsed on demand
        # node-free summaries (porter.analysis.summary), made from a parse or kept from the
        # last run for a file whose bytes are the same: calls are resolved from these
        self._summaries: dict[str, Summary | None] = {}
        self._named_paths: dict[tuple[str, str], str | None] = {}  # (module name, folder) -> `_path_named`
        self._words: dict[bytes, list[str]] | None = None  # identifier -> paths, made on first use
        # what the project's files show, worked out once (the callers of a function, the calls
        # of a module, the argparse options ...), with what each was read from
        self._structure: dict[tuple[str, ...], tuple[Any, frozenset[str]]] = {}
        # what the answer being worked out has read (`_READS`): "p:<path>" (a file), "w:<word>"
        # (the files naming an identifier), "n:<name>" (the files of a module name), "f:<kind>"
        # (the files of a kind: with a parameter loop, an own `is_cuda`, a fused flag)
        self._deps: set[str] = set()
        # one answer's evaluation (`_fresh`): forgotten before the next one, so that no answer
        # depends on which were asked before it (the memo keeps a cycle's cut results)
        self._memo: dict[tuple[str, ...], Value | None] = {}
        self._origins: dict[
            str, dict[tuple[str, str], tuple[str, str, str, tuple[str, ...]]]
        ] = {}  # path -> ORIGIN facts
        self._device_only: dict[tuple[str, str, str], bool] = {}
        self._device_types: device_types.DeviceTypes | None = None
        self._fused: tuple[dict[str, Facts], frozenset[str]] | None = None

    # -- building ------------------------------------------------------------------------

    @classmethod
    def build(cls, files: Iterable[tuple[str, bytes]]) -> ProjectIndex:
        index = cls()
        for path, source in files:
            index.add(path, source)
        return index

    @staticmethod
    def wants(source: bytes) -> bool:
        return _FLOW_TOKENS.search(source) is not None

    def add(self, path: str, source: bytes) -> None:
        """Register a file; it is parsed only when a question needs it (a device site in
        it, a module it imports, a call of a function being followed)."""
        if not self.wants(source):
            return
        self._sources[path] = source
        self._paths.setdefault(module_name(path), []).append(path)

    def module(self, path: str) -> ModuleInfo | None:
        self._deps.add("p:" + path)
        if path in self._parsed:
            return self._parsed[path]
        self._parsed[path] = None
        source = self._sources.get(path)
        if source is None:
            return None
        try:
            tree = ast.parse(source)
            info = ModuleInfo(module_name(path), path)
            _Collector(info, tree).visit(tree)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None  # the engine reports it when it parses the file itself
        self._parsed[path] = info
        return info

    def mentioning(self, word: str) -> list[ModuleInfo]:
        """The parsed modules whose source has the identifier `word`."""
        self._deps.add("w:" + word)
        found = []
        for path in self._identifiers().get(word.encode(), ()):
            info = self.module(path)
            if info is not None:
                found.append(info)
        return found

    def _identifiers(self) -> dict[bytes, list[str]]:
        """identifier -> the paths whose source has it (made on first use)."""
        if self._words is None:
            self._words = {}
            for path, source in self._sources.items():
                for w in set(_IDENTIFIER.findall(source)):
                    self._words.setdefault(w, []).append(path)
        return self._words

    def naming(self, words: Iterable[str]) -> dict[str, list[str]]:
        """path -> the identifiers of `words` its source has."""
        out: dict[str, list[str]] = {}
        for word in words:
            for path in self._identifiers().get(word.encode(), ()):
                out.setdefault(path, []).append(word)
        return out

    def release(self) -> None:
        """Lets go of the parsed modules once every answer is worked out. A module's scopes
        name it (`Scope.module`) and the index's passes name the index, so what the index held
        was cyclic garbage: the collector, run as soon as `answers` turned it back on, walked
        every node of every tree to free them (~1.5 of the bench corpus's 18 CPU s of index);
        with the cycles cut here they are freed as they go, and the collector finds nothing."""
        for info in self._parsed.values():
            if info is not None:
                info.scopes.clear()
                info.classes.clear()
                info.moves.clear()
        self._parsed.clear()
        self._structure.clear()
        self._fresh()

    # -- resolution ----------------------------------------------------------------------

    def summary(self, path: str) -> Summary | None:
        """The file's summary (read as `module` reads the file: an answer using it depends on it)."""
        if path in self._summaries:
            self._deps.add("p:" + path)
            return self._summaries[path]
        info = self.module(path)
        found = None if info is None else summary.summarize(info, _argparse_dests)
        self._summaries[path] = found
        return found

    def module_named(self, name: str, near: ModuleInfo) -> ModuleInfo | None:
        path = self._path_named(name, near.path)
        return self.module(path) if path is not None else None

    def _path_named(self, name: str, near: str) -> str | None:
        """The project file of the module `name` (a dotted tail of it), seen from `near`."""
        self._deps.add("n:" + name)
        exact = self._paths.get(name)
        if exact:
            return exact[0]
        folder = near.rpartition("/")[0]
        key = (name, folder)
        if key not in self._named_paths:  # (a search of every module name: once per name and folder)
            suffix = "." + name
            found = [p for n, ps in self._paths.items() if n.endswith(suffix) for p in ps]
            if len(found) != 1:
                found = [p for p in found if p.rpartition("/")[0] == folder]
            self._named_paths[key] = found[0] if len(found) == 1 else None
        return self._named_paths[key]

    def function_of(self, func: ast.expr, scope: Scope) -> tuple[Scope, int] | None:
        """The project function a call runs, and how many leading parameters it binds
        implicitly (1 for `self` of a method or a class's `__init__`)."""
        mod = scope.module
        if isinstance(func, ast.Name):
            return self._named(func.id, mod)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            head = func.value.id
            if head == "self":
                owner = self._owner_class(scope)
                if owner is not None:
                    target = mod.scopes.get(f"{owner}.{func.attr}")
                    if target is not None:
                        return target, 1
                return None
            imported = mod.imports.get(head)
            if imported is not None and imported[1] is None:
                other = self.module_named(imported[0], mod)
                if other is not None:
                    return self._local(func.attr, other)
        return None

    def _owner_class(self, scope: Scope) -> str | None:
        return scope.cls

    def _local(self, name: str, mod: ModuleInfo) -> tuple[Scope, int] | None:
        if name in mod.classes:
            init = mod.scopes.get(f"{name}.__init__")
            return (init, 1) if init is not None else None
        fn = mod.scopes.get(name)
        return (fn, 0) if fn is not None and fn.qual else None

    def _named(self, name: str, mod: ModuleInfo) -> tuple[Scope, int] | None:
        local = self._local(name, mod)
        if local is not None:
            return local
        imported = mod.imports.get(name)
        if imported is not None and imported[1] is not None:
            other = self.module_named(imported[0], mod)
            if other is not None:
                return self._local(imported[1], other)
        return None

    def callers(self, fn: Scope) -> list[tuple[ast.Call, Scope, int]]:
        """[(call, calling scope, parameters bound implicitly)] for the calls of `fn` in the
        project (-1: `mp.spawn(fn, args=...)`, which passes the process index first). Only
        the files that name `fn` are parsed, each file's calls resolved once."""
        if not fn.qual:
            return []
        return self._structural(("callers", fn.module.path, fn.qual), lambda: self._find_callers(fn))

    def _find_callers(self, fn: Scope) -> list[tuple[ast.Call, Scope, int]]:
        """The calls are resolved from the summaries of the files naming `fn`; only the files
        holding one are parsed (its arguments are evaluated)."""
        key = (fn.module.path, fn.qual)
        out: list[tuple[ast.Call, Scope, int]] = []
        word = fn.cls.rpartition(".")[2] if fn.qual.endswith(".__init__") and fn.cls else fn.qual.rpartition(".")[2]
        for path in self._summaries_naming(word):
            for where, qual, i, skip in self._calls_in(path).get(key, ()):
                info = self.module(where)
                if info is not None:
                    scope = info.scopes[qual]
                    out.append((scope.calls[i], scope, skip))
        return out

    def _summaries_naming(self, word: str) -> list[str]:
        """The files whose source has the identifier `word` and that parse (`mentioning`,
        from their summaries)."""
        self._deps.add("w:" + word)
        return [path for path in self._identifiers().get(word.encode(), ()) if self.summary(path) is not None]

    def _structural(self, key: tuple[str, ...], work: Callable[[], _T]) -> _T:
        """What `work` finds in the project's files, worked out once; each use reads what it
        was read from (an answer that uses it depends on those files too)."""
        found = self._structure.get(key)
        if found is None:
            outer, self._deps = self._deps, set()
            try:
                value = work()
            finally:
                inner, self._deps = self._deps, outer
                self._deps |= inner
            self._structure[key] = (value, frozenset(inner))
            return value
        self._deps |= found[1]
        return found[0]  # type: ignore[no-any-return]

    # a call site in the project: (its file, its scope, its index in the scope's calls, the
    # parameters it binds implicitly)
    _Site = tuple[str, str, int, int]

    def _calls_in(self, path: str) -> dict[tuple[str, str], list[_Site]]:
        """Every call in the file resolved to the project function it runs (once per file)."""
        return self._structural(("calls", path), lambda: self._resolve_calls(path))

    def _resolve_calls(self, path: str) -> dict[tuple[str, str], list[_Site]]:
        found: dict[tuple[str, str], list[ProjectIndex._Site]] = {}
        mod = self.summary(path)
        if mod is None:
            return found
        for scope in mod.scopes.values():
            for i, callee, spawned_ref, passed in scope.sites:
                target = self._resolved(callee, path) if callee is not None else None
                if target is not None:
                    where, qual, skip = target
                    found.setdefault((where, qual), []).append((path, scope.qual, i, skip))
                    for fn, spawn in self._relayed_spawns(passed, path, target):
                        found.setdefault(fn, []).append((where, qual, spawn, -1))
                if spawned_ref is not None:
                    spawned = self._resolved(spawned_ref, path)
                    if spawned is not None:
                        found.setdefault(spawned[:2], []).append((path, scope.qual, i, -1))
        return found

    def _resolved(self, ref: Ref, path: str) -> tuple[str, str, int] | None:
        """(file, qual, parameters bound implicitly) of the function a summary's `ref` names
        (`function_of`, from summaries)."""
        kind, name, rest = ref
        if kind == "l":
            return path, name, rest
        where = self._path_named(name, path)
        if where is None:
            return None
        other = self.summary(where)
        found = summary.local(rest, other.classes, other.scopes) if other is not None else None
        return (where, *found) if found is not None else None

    def _relayed_spawns(
        self, passed: tuple[tuple[int, Ref], ...], path: str, target: tuple[str, str, int]
    ) -> Iterator[tuple[tuple[str, str], int]]:
        """`run_demo(fn, 2)` where `def run_demo(demo_fn, n): mp.spawn(demo_fn, ...)`: (the
        spawned function, the index of the spawn among `run_demo`'s calls)."""
        where, qual, skip = target
        g = self._summaries[where]
        assert g is not None  # resolved from it
        fn = g.scopes[qual]
        for j, arg in passed:
            if j + skip >= len(fn.params):
                continue
            param = fn.params[j + skip]
            for inner, name in fn.spawns:
                if name == param:
                    relayed = self._resolved(arg, path)
                    if relayed is not None:
                        yield relayed[:2], inner

    def options(self, dest: str) -> list[tuple[ast.Call, Scope]]:
        """The `add_argument` calls of the argparse destination `dest`, from the files that
        have any (found from their summaries; the files holding one are parsed)."""
        out = []
        for path, qual, i in self._structural(("argparse",), self._find_argparse).get(dest, ()):
            info = self.module(path)
            if info is not None:
                scope = info.scopes[qual]
                out.append((scope.calls[i], scope))
        return out

    def _find_argparse(self) -> dict[str, list[tuple[str, str, int]]]:
        found: dict[str, list[tuple[str, str, int]]] = {}
        for path in self._summaries_naming("add_argument"):
            mod = self._summaries[path]
            assert mod is not None  # (the files that parse)
            for qual, i, dest in mod.options:
                found.setdefault(dest, []).append((path, qual, i))
        return found

    # -- evaluation ----------------------------------------------------------------------

    def value(self, expr: ast.expr, scope: Scope, depth: int = 0) -> Value | None:
        """What `expr` evaluates to in `scope`; None only inside a cycle."""
        if depth > _MAX_DEPTH:
            return Value(ValueKind.UNKNOWN, (f"`{short_source(expr)}` (too deep to follow)",))
        where = f"{scope.module.path}:{getattr(expr, 'lineno', '?')}"
        if isinstance(expr, ast.Constant):
            return Value(_constant_kind(expr.value), (f"`{short_source(expr)}`, {where}",))
        if isinstance(expr, ast.JoinedStr):
            return Value(ValueKind.DEVICE, (f"`{short_source(expr)}`, {where}",))
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.operand, ast.Constant):
            return self.value(expr.operand, scope, depth + 1)
        if isinstance(expr, ast.IfExp):
            parts = [self.value(e, scope, depth + 1) for e in (expr.body, expr.orelse)]
            return join([p for p in parts if p is not None], f"`{short_source(expr)}`")
        if isinstance(expr, ast.BinOp):
            parts = [self.value(e, scope, depth + 1) for e in (expr.left, expr.right)]
            integer = any(p is not None and p.kind == ValueKind.INDEX for p in parts)
            return (
                Value(ValueKind.INDEX, (f"`{short_source(expr)}` (integer arithmetic), {where}",))
                if integer
                else Value(ValueKind.OTHER, (f"`{short_source(expr)}`, {where}",))
            )
        if isinstance(expr, ast.Call):
            return self._call_value(expr, scope, depth, where)
        if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant) and type(expr.slice.value) is int:
            return self._element(expr, expr.slice.value, scope, depth, where)
        name = dotted(expr)
        if name is None:
            return Value(ValueKind.UNKNOWN, (f"`{short_source(expr)}`, {where}",))
        return self.name_value(name, scope, depth)

    def _element(self, expr: ast.Subscript, i: int, scope: Scope, depth: int, where: str) -> Value | None:
        """Element `i` of a tuple literal, or of the tuples a project function returns."""
        seq = expr.value
        if isinstance(seq, (ast.Tuple, ast.List)):
            return self.value(seq.elts[i], scope, depth + 1) if -len(seq.elts) <= i < len(seq.elts) else None
        target = self.function_of(seq.func, scope) if isinstance(seq, ast.Call) else None
        if target is None:
            return Value(ValueKind.UNKNOWN, (f"`{short_source(expr)}`, {where}",))
        fn, _ = target
        parts = []
        for r in fn.returns:
            if isinstance(r, (ast.Tuple, ast.List)) and -len(r.elts) <= i < len(r.elts):
                v = self.value(r.elts[i], fn, depth + 1)
                if v is not None:
                    parts.append(v.via(f"`return {short_source(r)}`"))
            else:
                parts.append(Value(ValueKind.UNKNOWN, (f"`return {short_source(r)}`, {fn.module.path}:{r.lineno}",)))
        if not parts:
            return Value(ValueKind.UNKNOWN, (f"`{short_source(expr)}` (returns nothing porter can see), {where}",))
        return join(parts, f"`{fn.qual}()`").via(f"`{short_source(seq)}` returns")

    def _call_value(self, call: ast.Call, scope: Scope, depth: int, where: str) -> Value | None:
        name = dotted(call.func) or ""
        last = name.rpartition(".")[2]
        if last == "current_device" and "." in name and not name.startswith("torch."):
            # `current_platform.current_device()`: the project's device object answers with an
            # index of its own device (vLLM's platforms), which is no CUDA device on the target
            return Value(
                ValueKind.UNKNOWN,
                (f"`{short_source(call)}`, {where} (the index of the device `{name.rpartition('.')[0]}` stands for)",),
            )
        if name in ("int", "range", "len") or last.endswith(_INT_CALL_SUFFIXES):
            return Value(ValueKind.INDEX, (f"`{short_source(call)}`, {where}",))
        if last == "device" or name in ("str", "float", "bool"):
            return Value(
                ValueKind.DEVICE if last == "device" else ValueKind.OTHER, (f"`{short_source(call)}`, {where}",)
            )
        target = self.function_of(call.func, scope)
        if target is None:
            return Value(ValueKind.UNKNOWN, (f"`{short_source(call)}`, {where} (a call porter cannot follow)",))
        fn, _ = target
        key = ("return", fn.module.path, fn.qual)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = None
        parts = [p for r in fn.returns if (p := self.value(r, fn, depth + 1)) is not None]
        result = (
            join(parts, f"`{fn.qual}()`").via(f"`{short_source(call)}` returns")
            if parts
            else Value(ValueKind.UNKNOWN, (f"`{short_source(call)}` (returns nothing porter can see), {where}",))
        )
        self._memo[key] = result
        return result

    def name_value(self, name: str, scope: Scope, depth: int = 0) -> Value | None:
        key = ("name", scope.module.path, scope.qual, name)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = None  # a cycle contributes nothing
        result = self._name_value(name, scope, depth)
        self._memo[key] = result
        return result

    def _name_value(self, name: str, scope: Scope, depth: int) -> Value | None:
        head, _, rest = name.partition(".")
        if rest:
            if head == "self" and "." not in rest and scope.cls is not None:
                return self._attribute(scope, rest, depth)
            return self._option(name, rest.rpartition(".")[2], scope, depth)
        assigned = scope.assigns.get(name)
        if assigned:
            parts = []
            for value in assigned:
                if isinstance(value, str):
                    parts.append(Value(ValueKind.UNKNOWN, (f"`{name}` ({value}), {scope.module.path}",)))
                    continue
                v = self.value(value, scope, depth + 1)
                if v is not None:
                    parts.append(_assigned(v, name, value))
            ported = self._port_at_origin(name, scope, assigned, parts)
            if ported is not None:
                return ported
            return join(parts, f"`{name}`") if parts else None
        if name in scope.params:
            return self._param(scope, name, depth)
        elsewhere = self._defined_elsewhere(name, scope)
        if elsewhere is not None:
            return self.name_value(elsewhere[0], elsewhere[1], depth + 1)
        return Value(ValueKind.UNKNOWN, (f"`{name}` (not assigned where porter can see it), {scope.module.path}",))

    def _defined_elsewhere(self, name: str, scope: Scope) -> tuple[str, Scope] | None:
        """(name, module scope) where a name a function neither assigns nor takes is assigned:
        its module's top level, or the top level of the project module it is imported from."""
        if scope.qual and name in scope.module.scopes[""].assigns:
            return name, scope.module.scopes[""]
        imported = scope.module.imports.get(name)
        if imported is not None and imported[1] is not None:
            other = self.module_named(imported[0], scope.module)
            if other is not None and imported[1] in other.scopes[""].assigns:
                return imported[1], other.scopes[""]
        return None

    def _port_at_origin(
        self, name: str, scope: Scope, assigned: list[ast.expr | str], parts: list[Value]
    ) -> Value | None:
        """`device = local_rank` on one path, `device = "cpu"` on the other: when the function
        uses `device` only as a device (directly or through the parameters it hands it to),
        the integer assignments are ported where they are made (the target device) and the
        CPU one is kept; every site then holds a device made there. None when the name's
        values are not every one an integer or "cpu", both seen."""
        if {p.kind for p in parts} != {ValueKind.INDEX, ValueKind.CPU} or len(parts) != len(assigned):
            return None
        if not scope.qual or not self.device_only(name, scope):
            return None
        where = scope.module.path
        facts = self._origins.setdefault(where, {})
        lines = []
        for value, part in zip(assigned, parts):
            if part.kind == ValueKind.INDEX and not isinstance(value, str):
                key = origin_key(name, ast.unparse(value))
                facts[(scope.qual, key)] = (scope.qual, key, NameKind.ORIGIN.value, part.chain)
                lines.append(f"`{name} = {short_source(value)}`, {where}:{value.lineno}")
        return Value(
            ValueKind.DEVICE, (f"{' and '.join(lines)} (the target device where it held an integer; `'cpu'` kept)",)
        )

    def device_only(self, name: str, scope: Scope, depth: int = 0) -> bool:
        """Every read of `name` in `scope` is a device argument (`.to(x)`, `device=x`,
        `device_ids=[x]`, `set_device(x)`, an f-string) or an argument of a project function
        whose parameter is itself used only so. Anything else (arithmetic, a comparison, a call
        porter cannot follow) leaves the value unproven."""
        key = (scope.module.path, scope.qual, name)
        if key in self._device_only:
            return self._device_only[key]
        self._device_only[key] = False  # a cycle proves nothing
        ok = depth <= _MAX_DEPTH and all(
            self._device_use(use, parent, scope, depth) for use, parent in _reads(scope.node, name)
        )
        self._device_only[key] = ok
        return ok

    def _device_use(self, use: ast.Name, parent: ast.AST, scope: Scope, depth: int) -> bool:
        if isinstance(parent, ast.FormattedValue):
            return True
        if isinstance(parent, (ast.List, ast.Tuple)):  # `device_ids=[x]`
            return any(kw.arg == "device_ids" and kw.value is parent for call in scope.calls for kw in call.keywords)
        if isinstance(parent, ast.keyword):
            if parent.arg in ("device", "map_location", "output_device"):
                return True
            call = next((c for c in scope.calls if parent in c.keywords), None)
            return call is not None and self._handed_on(call, parent.arg, None, scope, depth)
        if not isinstance(parent, ast.Call) or use not in parent.args:
            return False
        func = parent.func
        if isinstance(func, ast.Attribute) and func.attr in ("to", "cuda", "set_device") and parent.args[0] is use:
            return True
        return self._handed_on(parent, None, parent.args.index(use), scope, depth)

    def _handed_on(self, call: ast.Call, keyword: str | None, i: int | None, scope: Scope, depth: int) -> bool:
        """The argument becomes a parameter of a project function that uses it only as a device."""
        target = self.function_of(call.func, scope)
        if target is None:
            return False
        fn, skip = target
        if keyword is None:
            assert i is not None  # a positional argument: its index is given
            if any(isinstance(a, ast.Starred) for a in call.args[: i + 1]) or i + skip >= len(fn.params):
                return False
            keyword = fn.params[i + skip]
        return keyword in fn.params and self.device_only(keyword, fn, depth + 1)

    def _param(self, fn: Scope, name: str, depth: int) -> Value | None:
        i = fn.params.index(name)
        calls = self.callers(fn)
        parts: list[Value] = []
        for call, caller, skip in calls:
            if skip == -1:  # mp.spawn(fn, args=(...)): the process index, then args
                if i == 0:
                    parts.append(
                        Value(
                            ValueKind.INDEX,
                            (f"`{short_source(call)}` passes the process index, {caller.module.path}:{call.lineno}",),
                        )
                    )
                    continue
                arg = _spawn_arg(call, i - 1)
            else:
                arg = call_argument(call, i - skip, name) if i >= skip else None
            if arg is None:
                default = fn.defaults.get(name)
                if default is None:
                    continue  # *args/**kwargs forwarding: not visible
                v = self.value(default, fn, depth + 1)
                if v is not None:
                    parts.append(v.via(f"default of `{name}`"))
                continue
            v = self.value(arg, caller, depth + 1)
            if v is not None:
                parts.append(v.via(f"`{_call_text(call, arg)}`"))
        if not parts:
            default = fn.defaults.get(name)
            if default is not None and not calls:
                v = self.value(default, fn, depth + 1)
                return v.via(f"default of `{name}`") if v is not None else None
            return Value(
                ValueKind.UNKNOWN,
                (f"parameter `{name}` of `{fn.qual}` (no caller in the project passes it), {fn.module.path}",),
            )
        return join(parts, f"parameter `{name}` of `{fn.qual}`")

    def _attribute(self, scope: Scope, attr: str, depth: int) -> Value | None:
        assigned = scope.module.classes.get(scope.cls, {}).get(attr) if scope.cls is not None else None
        if not assigned:
            return Value(ValueKind.UNKNOWN, (f"`self.{attr}` (not assigned in `{scope.cls}`), {scope.module.path}",))
        parts = []
        for value, where in assigned:
            if isinstance(value, str):
                parts.append(Value(ValueKind.UNKNOWN, (f"`self.{attr}` ({value}), {scope.module.path}",)))
                continue
            v = self.value(value, where, depth + 1)
            if v is not None:
                parts.append(_assigned(v, f"self.{attr}", value))
        return join(parts, f"`self.{attr}`") if parts else None

    def _option(self, name: str, attr: str, scope: Scope, depth: int) -> Value:
        """`args.gpu`, `cfg.device`: an argparse option porter can see, else unknown."""
        defs = self.options(attr)
        parts: list[Value] = []
        for call, where in defs:
            kws = {kw.arg: kw.value for kw in call.keywords if kw.arg}
            line = f"{where.module.path}:{call.lineno}"
            typ = kws.get("type")
            if typ is not None and dotted(typ) == "int":
                parts.append(Value(ValueKind.INDEX, (f"`{short_source(call)}`, {line}",)))
            elif "default" in kws:
                v = self.value(kws["default"], where, depth + 1)
                if v is not None:
                    parts.append(v.via(f"`{short_source(call)}`"))
            else:
                parts.append(Value(ValueKind.UNKNOWN, (f"`{short_source(call)}` (no type or default), {line}",)))
        if parts:
            return join(parts, f"`{name}`").via(f"`{name}`")
        if attr in RANK_NAMES:
            return Value(ValueKind.INDEX, (f"`{name}` (a rank, by its name), {scope.module.path}",))
        owner = name.rpartition(".")[0]
        if _DEVICE_WORDS.search(attr) and _CONFIG_OWNER.search(owner):
            return Value(ValueKind.CONFIG, (f"`{name}` (configuration porter cannot read), {scope.module.path}",))
        if attr == "device":  # `x.device`: the device of a tensor or module, made elsewhere
            return Value(ValueKind.DEVICE, (f"`{name}`, {scope.module.path}",))
        return Value(ValueKind.UNKNOWN, (f"`{name}` (a value porter cannot see), {scope.module.path}",))

    # -- tied weights ----------------------------------------------------------------------

    def instance_of(self, expr: ast.expr, scope: Scope, depth: int = 0) -> tuple[ModuleInfo, str] | None:
        """The project class `expr` is an instance of, where the code shows it."""
        if depth > _MAX_DEPTH:
            return None
        key = None
        sources: Iterable[tuple[ast.expr, Scope]]
        if isinstance(expr, ast.Call):
            made, sources = self._call_sources(expr, scope)
            if made is not None:
                return made
        else:
            name = dotted(expr)
            if name is None:
                return None
            key = ("instance", scope.module.path, scope.qual, name)
            if key in self._memo:
                return self._memo[key]  # type: ignore[return-value]
            self._memo[key] = None
            sources = self._name_sources(name, scope)
        # the first of the expressions it comes from that shows one (followed here, not in a
        # helper: a frame per level of the recursion would change where a deep program stops)
        found = None
        for value, where in sources:
            found = self.instance_of(value, where, depth + 1)
            if found is not None:
                break
        if key is not None:
            self._memo[key] = found  # type: ignore[assignment]
        return found

    def _call_sources(
        self, call: ast.Call, scope: Scope
    ) -> tuple[tuple[ModuleInfo, str] | None, list[tuple[ast.expr, Scope]]]:
        """(the class a call constructs, None) for a project class's constructor; otherwise
        (None, the expressions its result is an instance of): the receiver of a method that
        returns it (`.to()`, `.train()` ...), or a project function's returns."""
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in _RETURNS_SELF:
            return None, [(func.value, scope)]
        target = self.function_of(func, scope)
        if target is None:
            return None, []
        fn, skip = target
        if skip == 1 and fn.qual.endswith(".__init__") and fn.cls is not None:
            return (fn.module, fn.cls), []
        return None, [(r, fn) for r in fn.returns]

    def _name_sources(self, name: str, scope: Scope) -> Iterator[tuple[ast.expr, Scope]]:
        """The expressions a name (or `self.attr`) is assigned, then, for a parameter, the
        arguments the project's calls pass for it; read one by one (the callers only once the
        assignments showed no class)."""
        if name.startswith("self.") and name.count(".") == 1 and scope.cls is not None:
            values = [(v, w) for v, w in scope.module.classes.get(scope.cls, {}).get(name[5:], [])]
        else:
            values = [(v, scope) for v in scope.assigns.get(name, [])]
        yield from ((value, where) for value, where in values if not isinstance(value, str))
        if name not in scope.params:
            return
        i = scope.params.index(name)
        for call, caller, skip in self.callers(scope):
            arg = call_argument(call, i - skip, name) if skip >= 0 and i >= skip else None
            if arg is not None:
                yield arg, caller

    def _stale(self, move: ast.Call, scope: Scope, found: tuple[ModuleInfo, str] | None) -> tuple[str, ...] | None:
        """Where `x.parameters()` was handed to a call before `x.to(...)` moves x: in the
        same scope above the move, or inside the moved module's own class."""
        receiver = dotted(move.func.value)  # type: ignore[attr-defined]
        for holder, call in scope.param_refs:
            if holder == receiver and call.lineno < move.lineno:
                return (f"`{short_source(call)}`, {scope.module.path}:{call.lineno}",)
        if found is not None:
            mod, cls = found
            for method in mod.scopes.values():
                if method.cls == cls:
                    for holder, call in method.param_refs:
                        if holder == "self":
                            return (f"`{short_source(call)}` in `{method.qual}`, {mod.path}:{call.lineno}",)
        return None

    def parameter_attributes(self) -> tuple[str, ...]:
        """Where the project sets attributes on Parameter objects (once per index; only the
        files with a loop over parameters are parsed)."""
        return self._structural(("parameter loops",), self._find_parameter_attributes)

    def _find_parameter_attributes(self) -> tuple[str, ...]:
        self._deps.add("f:" + _PARAMETER_LOOP_FILES)
        found: list[str] = []
        for path, source in self._sources.items():
            if parameter_loop(source):
                info = self.summary(path)
                if info is not None:
                    found.extend(info.param_attributes)
        return tuple(sorted(found))

    def _is_module(self, holder: str, call: ast.Call, scope: Scope, found: tuple[ModuleInfo, str] | None) -> bool:
        """The moved object is a Module: a project class, or the scope calls a Module-only
        method on it (`model.train()`, `model.named_modules()`)."""
        if found is not None:
            return True
        receiver = dotted(call.func.value)  # type: ignore[attr-defined]
        return any(
            isinstance(c.func, ast.Attribute)
            and c.func.attr in _MODULE_METHODS
            and dotted(c.func.value) in (holder, receiver)
            for c in scope.calls
        )

    def ties_for(self, mod: ModuleInfo, cls: str) -> list[tuple[str, str]]:
        return mod.ties.get(cls, [])

    # -- answers -------------------------------------------------------------------------

    def _fresh(self) -> None:
        """Forget one answer's evaluation before the next: each answer is worked out from the
        files alone, the same whichever were asked before it (in a cold run and after an edit)."""
        self._memo = {}
        self._origins = {}
        self._device_only = {}
        self._device_types = None
        self._deps = set()

    def fused_unit(self) -> tuple[dict[str, Facts], frozenset[str]]:
        """The cuts of fused-optimizer flags per path (porter.analysis.fused_flags: the whole
        project's flags are followed at once, on the first question), and what they were
        worked out from."""
        if self._fused is None:
            self._fresh()
            self._deps.add("f:" + _FUSED_FILES)
            try:
                found = fused_flags.FusedFlags(self).run(self._sources)
            except RecursionError:
                found = {}
            self._fused = ({path: tuple(cuts.values()) for path, cuts in found.items()}, frozenset(self._deps))
        return self._fused

    def fused_flags(self, path: str) -> Facts:
        """The cuts of fused-optimizer flags that lie in `path`."""
        return self.fused_unit()[0].get(path, ())

    def compared(self, path: str) -> Facts:
        """What each value compared with `"cuda"` in `path` is: a device type or no device
        (porter.analysis.device_types; for device-generic code, porter.codemods.literals)."""
        source = self._sources.get(path)
        if source is None or not _compares_cuda(source):
            return ()
        if self._device_types is None:
            self._device_types = device_types.DeviceTypes(self)
        try:
            return self._device_types.facts(path)
        except RecursionError:
            return ()

    def own_is_cuda(self) -> tuple[str, ...]:
        """The project's files that define their own `is_cuda`."""
        return self._structural(("own is_cuda",), self._find_own_is_cuda)

    def _find_own_is_cuda(self) -> tuple[str, ...]:
        self._deps.add("f:" + _IS_CUDA_FILES)
        found = tuple(sorted(p for p, src in self._sources.items() if defines_is_cuda(src)))
        self._deps.update("p:" + p for p in found)
        return found

    def _is_cuda_facts(self, path: str) -> Facts:
        """`.is_cuda` in a file, when another file of the project defines its own: porter
        cannot tell the two apart (nano-gpt's `worker_state.is_cuda` is a dataclass property)."""
        source = self._sources.get(path)
        if source is None or b".is_cuda" not in source or defines_is_cuda(source):
            return ()  # (a file that defines its own is told so by its own text)
        others = tuple(p for p in self.own_is_cuda() if p != path)
        return (("", "is_cuda", NameKind.OWN_IS_CUDA.value, others[:3]),) if others else ()

    def facts(self, path: str) -> Facts:
        """((scope, expression, kind, chain), ...) for each named device site in `path`."""
        own, _ = self.own(path)
        return combined(own, self.fused_flags(path))

    def own(self, path: str) -> tuple[Own, frozenset[str]]:
        """A file's answers but its fused flags' (how `combined` joins them to those), and
        what they were worked out from (`_deps`): an answer changes only when one of those does."""
        self._fresh()
        self._deps.add("p:" + path)
        source = self._sources.get(path)
        if source is None:
            return (_NOTHING, ()), frozenset(self._deps)
        rest = (*self.compared(path), *self._is_cuda_facts(path))
        own: Own = (_LISTED, rest)
        if _SITES.search(source) is not None:  # a device site or a move: answers of its own
            info = self.module(path)
            try:
                own = (_NOTHING, ()) if info is None else (_JOINED, (*self._facts(info), *rest))
            except RecursionError:
                pass  # pathological nesting: the sites are left as the file shows them
        return own, frozenset(self._deps)

    def _facts(self, info: ModuleInfo) -> Facts:
        # a fact holds its kind's text (`.value`): Facts are keyed, pickled and cached as plain strings
        out: dict[tuple[str, str], tuple[str, str, str, tuple[str, ...]]] = {}
        for scope in info.scopes.values():
            for site in scope.sites:
                name = dotted(site)
                if name is None or (scope.qual, name) in out:
                    continue
                v = self.name_value(name, scope)
                if v is None or not (
                    v.kind in KEPT or (v.kind == ValueKind.UNKNOWN and name.rpartition(".")[2] in RANK_NAMES)
                ):
                    continue
                out[(scope.qual, name)] = (scope.qual, name, v.kind.value, v.chain)
        for name, scope in _handed_on_after_paths(info):  # an integer on one path, "cpu" on another
            self.name_value(name, scope)
        out.update(self._origins.get(info.path, {}))
        for call, scope, holder in info.moves:
            found = self.instance_of(call.func.value, scope)  # type: ignore[attr-defined]
            stale = self._stale(call, scope, found)
            if stale is not None:
                key = stale_key(holder)
                out[(scope.qual, key)] = (scope.qual, key, MoveKind.STALE.value, stale)
            if self.parameter_attributes() and self._is_module(holder, call, scope, found):
                key = attributes_key(holder)
                out[(scope.qual, key)] = (scope.qual, key, MoveKind.ATTRIBUTES.value, self.parameter_attributes()[:3])
            tied = self._untied(call, scope, holder, found)
            if tied is not None:
                key = move_key(holder)
                out[(scope.qual, key)] = (scope.qual, key, MoveKind.TIED.value, tied)
        return tuple(sorted(out.values()))

    def _untied(
        self, call: ast.Call, scope: Scope, holder: str, found: tuple[ModuleInfo, str] | None
    ) -> tuple[str, ...] | None:
        """The tie statements (`m.a = m.b`) of the moved module's class that the move breaks and
        that are not made again below it, with the class; None when there are none."""
        ties = self.ties_for(*found) if found is not None else []
        statements = [f"{holder}.{a} = {holder}.{b}" for a, b in ties]
        if not statements or all(any(line > call.lineno for line in scope.assigned.get(s, ())) for s in statements):
            return None  # no ties, or re-tied right there already
        assert found is not None  # the ties came from its class
        return (*statements, f"`{found[1]}` ({found[0].path})")


# how a file's own answers join the fused flags' cuts in it (`combined`)
_NOTHING = "nothing"  # not read, or its sites could not be parsed: no answers
_LISTED = "listed"  # no device site: the fused cuts and its own, as they come
_JOINED = "joined"  # the answers at its sites: each once
Own = tuple[str, Facts]


def combined(own: Own, fused: Facts) -> Facts:
    """A file's answers from its own (`ProjectIndex.own`) and the fused cuts in it."""
    how, found = own
    if how == _NOTHING:
        return ()
    if how == _LISTED:
        return tuple(sorted((*fused, *found)))
    return tuple(sorted({*found, *fused}))


State = dict[str, Any]  # what `answers` hands to its next call (JSON)


Held = tuple[str, Own, frozenset[str], frozenset[str], frozenset[str]]  # `_loaded`: one file's


def answers(files: Iterable[tuple[str, bytes]], previous: object = None) -> tuple[dict[str, Facts], State, list[str]]:
    """Each file's answers (for the files the index reads), the state to hand to the next
    call, and the files whose own answers were worked out again (not taken from `previous`).

    `previous` is a state an earlier call returned (anything else is none). An answer in it
    is kept when nothing it was worked out from changed: no file it read changed, came or
    went; no file that changed or came names an identifier it looked up that it did not name
    before, has a module name it looked up, or is newly of a kind whose files it read
    (`_stale`). Each answer is worked out on its own (`ProjectIndex._fresh`), so the answers
    are a cold run's, whatever the state."""
    # the index keeps every module it parses until it is done: the cyclic collector, run again
    # and again as they pile up, would find nothing to free (half the index's time on deepspeed)
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _answers(files, previous)
    finally:
        if collecting:
            gc.enable()


def _answers(files: Iterable[tuple[str, bytes]], previous: object) -> tuple[dict[str, Facts], State, list[str]]:
    index = ProjectIndex.build(files)
    shas = {path: hashlib.sha256(source).hexdigest() for path, source in index._sources.items()}
    old = _loaded(previous)
    held = old[0] if old is not None else {}
    if old is not None:  # the summaries of the files whose bytes are the same
        index._summaries.update((p, s) for p, (sha, s) in old[2].items() if shas.get(p) == sha)
    # (with no state, nothing is kept that `stale` would test: a cold run does not work it out)
    stale = _stale(index._sources, shas, held) if old is not None else set()
    units: dict[str, tuple[Own, frozenset[str]]] = {}
    redone: list[str] = []
    for path, sha in shas.items():
        h = held.get(path)
        if h is not None and h[0] == sha and stale.isdisjoint(h[2]):
            units[path] = (h[1], h[2])
        else:
            units[path] = index.own(path)
            redone.append(path)
    fused = old[1] if old is not None and stale.isdisjoint(old[1][1]) else index.fused_unit()
    facts = {path: combined(own, fused[0].get(path, ())) for path, (own, _) in units.items()}
    # what the next call's `_stale` compares a changed file with: the identifiers looked up
    # that it names, and its kinds
    looked_up = {t[2:] for _, deps in (*units.values(), fused) for t in deps if t.startswith("w:")}
    names = index.naming(looked_up)
    tokens: dict[str, int] = {}

    def ids(found: Iterable[str]) -> list[int]:
        return [tokens.setdefault(t, len(tokens)) for t in found]

    state: State = {
        "files": {
            path: [
                shas[path],
                own[0],
                _rows(own[1]),
                ids(deps),
                ids(names.get(path, ())),
                [kind for kind, of_kind in _KINDS if of_kind(index._sources[path])],
            ]
            for path, (own, deps) in units.items()
        },
        "fused": [{path: _rows(found) for path, found in fused[0].items()}, ids(fused[1])],
        "summaries": _summaries(index, shas),
    }
    state["tokens"] = list(tokens)
    index.release()
    return facts, state, redone


def _stale(sources: dict[str, bytes], shas: dict[str, str], before: dict[str, Held]) -> set[str]:
    """What an answer may have read (`ProjectIndex._deps`) that is not as it was: the files
    that changed, came or went; the identifiers a changed file names now and did not, its
    kinds it was not of (a lookup by one of them may now find it: one that found it before
    read it, so it is stale by the file); the module names of the files that came or went."""
    changed = [path for path, sha in shas.items() if path not in before or before[path][0] != sha]
    stale = {"p:" + path for path in (*changed, *(p for p in before if p not in shas))}
    for path in changed:
        source = sources[path]
        words, kinds = before[path][3:] if path in before else (frozenset(), frozenset())
        stale.update("w:" + w for w in {w.decode() for w in _IDENTIFIER.findall(source)} - words)
        stale.update("f:" + kind for kind, of_kind in _KINDS if kind not in kinds and of_kind(source))
    for path in shas.keys() ^ before.keys():
        parts = module_name(path).split(".")  # `module_named` finds a module by any dotted tail
        stale.update("n:" + ".".join(parts[i:]) for i in range(len(parts)))
    return stale


def _summaries(index: ProjectIndex, shas: dict[str, str]) -> dict[str, Any]:
    """The summaries of the files the index read (each parsed file's, made now if no answer
    asked for it), with the sha256 of the bytes they were made from."""
    for path, info in index._parsed.items():
        if path in shas and path not in index._summaries:
            index._summaries[path] = None if info is None else summary.summarize(info, _argparse_dests)
    return {path: [shas[path], summary.to_json(s)] for path, s in index._summaries.items() if path in shas}


Kept = tuple[dict[str, Held], tuple[dict[str, Facts], frozenset[str]], dict[str, tuple[str, Summary | None]]]


def _loaded(state: object) -> Kept | None:
    """A state `answers` returned, read back; None for anything not of its shape."""
    try:
        if not isinstance(state, dict):
            return None
        table = state["tokens"]
        _check(isinstance(table, list) and all(isinstance(t, str) for t in table))
        files: dict[str, Held] = {}
        for path, (sha, how, found, deps, words, kinds) in state["files"].items():
            _check(isinstance(path, str) and isinstance(sha, str) and how in (_NOTHING, _LISTED, _JOINED))
            _check(isinstance(kinds, list) and all(isinstance(k, str) for k in kinds))
            own = (how, _read_facts(found))
            files[path] = (sha, own, _tokens(table, deps), _tokens(table, words), frozenset(kinds))
        cuts, deps = state["fused"]
        _check(isinstance(cuts, dict) and all(isinstance(path, str) for path in cuts))
        summaries = {}
        for path, (sha, found) in state["summaries"].items():
            _check(isinstance(path, str) and isinstance(sha, str))
            summaries[path] = (sha, summary.from_json(found))
        return files, ({path: _read_facts(found) for path, found in cuts.items()}, _tokens(table, deps)), summaries
    except (TypeError, ValueError, KeyError, IndexError, AttributeError):
        return None


def _tokens(table: list[str], ids: object) -> frozenset[str]:
    if not (isinstance(ids, list) and all(type(i) is int and i >= 0 for i in ids)):
        raise TypeError("not a state of the project index")
    return frozenset(table[i] for i in ids)


def _check(ok: bool) -> None:
    if not ok:
        raise TypeError("not a state of the project index")


def _rows(facts: Facts) -> list[list[Any]]:
    """Facts as the state keeps them (JSON: lists)."""
    return [[scope, expr, kind, list(chain)] for scope, expr, kind, chain in facts]


def _read_facts(rows: object) -> Facts:
    _check(isinstance(rows, list))
    out = []
    for row in rows:  # type: ignore[attr-defined]
        _check(isinstance(row, list) and len(row) == 4)
        scope, expr, kind, chain = row
        _check(
            (scope is None or isinstance(scope, str))
            and isinstance(expr, str)
            and isinstance(kind, str)
            and isinstance(chain, list)
            and all(isinstance(step, str) for step in chain)
        )
        out.append((scope, expr, kind, tuple(chain)))
    return tuple(out)


def _handed_on_after_paths(info: ModuleInfo) -> Iterator[tuple[str, Scope]]:
    """(name, function) for the names a function of the module assigns on more than one path
    and hands to a call, when they name a device or one path assigns "cpu": their value (an
    integer on one path, "cpu" on another) is worked out so that `_port_at_origin` records
    where to port it. Read one by one (between them the evaluation goes on)."""
    for scope in info.scopes.values():
        several = [(name, values) for name, values in scope.assigns.items() if len(values) > 1] if scope.qual else []
        if not several:  # (the names handed on are gathered only where one is assigned twice)
            continue
        handed = {
            a.id
            for call in scope.calls
            for a in (*call.args, *(k.value for k in call.keywords))
            if isinstance(a, ast.Name)
        }
        for name, values in several:
            if name in handed and (
                _DEVICE_WORDS.search(name) or any(isinstance(v, ast.Constant) and v.value == "cpu" for v in values)
            ):
                yield name, scope


def _constant_kind(v: object) -> ValueKind:
    """What a literal is: an index (an int that is not a bool), the CPU ("cpu"), a device (any
    other string), or something else (None, a bool, a float, bytes ...)."""
    if isinstance(v, bool) or v is None:
        return ValueKind.OTHER
    if isinstance(v, int):
        return ValueKind.INDEX
    if isinstance(v, str):
        return ValueKind.CPU if v == "cpu" else ValueKind.DEVICE
    return ValueKind.OTHER


def _spawn_arg(call: ast.Call, i: int) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == "args" and isinstance(kw.value, ast.Tuple) and i < len(kw.value.elts):
            return kw.value.elts[i]
    if len(call.args) > 1 and isinstance(call.args[1], ast.Tuple) and i < len(call.args[1].elts):
        return call.args[1].elts[i]
    return None


def _call_text(call: ast.Call, arg: ast.expr) -> str:
    func = short_source(call.func)
    everything = [*call.args, *(kw.value for kw in call.keywords)]
    shown = next((f"{kw.arg}={short_source(kw.value)}" for kw in call.keywords if kw.value is arg), short_source(arg))
    before = "..., " if everything and everything[0] is not arg else ""
    after = ", ..." if everything and everything[-1] is not arg else ""
    return f"{func}({before}{shown}{after})"


def _argparse_dests(call: ast.Call) -> list[str]:
    for kw in call.keywords:
        if kw.arg == "dest" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
            return [kw.value.value]
    flags = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    longs = [f for f in flags if f.startswith("--")]
    chosen = longs[:1] or flags[:1]
    return [f.lstrip("-").replace("-", "_") for f in chosen]


def _assigned(v: Value, name: str, value: ast.expr) -> Value:
    """`name = value` in front of the chain; a literal's own step merges into it."""
    line = f"`{name} = {short_source(value)}`"
    head = f"`{short_source(value)}`, "
    if len(v.chain) == 1 and v.chain[0].startswith(head):
        return Value(v.kind, (line + v.chain[0][len(head) - 2 :],))
    return v.via(line)


def _reads(node: ast.AST, name: str) -> Iterator[tuple[ast.Name, ast.AST]]:
    """(read, its parent) for every read of the bare `name` under `node`."""
    for parent in ast.walk(node):
        for child in ast.iter_child_nodes(parent):
            if isinstance(child, ast.Name) and child.id == name and isinstance(child.ctx, ast.Load):
                yield child, parent
