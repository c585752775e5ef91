"""The candidate pass: whether a rule family may have a site in a file, told without libcst.

The prefilter (porter.analysis.prefilter) admits a file when one enabled rule's tokens occur
anywhere in it; every family whose `wanted` then holds walks the whole libcst tree, and most
admitted files of a library yield nothing (on bench_lint_real.py's sample, 211 of 273 parsed
files: `cat(` in a comment, `transformers` in every file of transformers). Before the parse,
each wanted family is asked `Family.candidate`: a necessary condition for it to report or
change anything in the file, read from the bytes and from `Sites`, one `ast` walk of the file.
A file in which no family holds a candidate is not given to libcst: it comes out as a parsed
file that yielded nothing (UNCHANGED, no findings), which is what the families would have said
of it. porter.codemods.apply.holds_candidate asks the families; tests/codemods/test_candidates.py
runs both paths over the fixtures and a sample of real library code and requires identical
results. A family that knows no cheaper condition answers True (it keeps the prefilter's answer).
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from porter.config.ruledata import all_rules, rule_computed
from porter.config.settings import Facts, Settings
from porter.config.targets import Target, get_target
from porter.core.suppressions import Suppressions


TORCH_CAT = ("torch.cat", "torch.concat", "torch.concatenate")


@dataclass
class Sites:
    """What one walk of a file's `ast` finds, for the families' necessary conditions. Each
    field over-approximates what the libcst families read (any scope, any statement)."""

    # the last name of every callee: `step` of `opt.step()`, `DataLoader` of `DataLoader(...)`
    callees: set[str] = field(default_factory=set)
    # the last name of the callees of calls with a named keyword argument (`f(x=1)`, not `f(**kw)`)
    keyword_callees: set[str] = field(default_factory=set)
    # the first name of callees spelled as names (`transformers` of `transformers.pipeline(...)`)
    heads: set[str] = field(default_factory=set)
    # ... of calls with a named keyword argument
    keyword_heads: set[str] = field(default_factory=set)
    # local name -> what absolute imports bind it to, as porter.analysis.resolve.ImportTable
    # qualifies it (`import a.b` binds `a` to `a`, `import a.b as c` `c` to `a.b`, `from a.b
    # import c as d` `d` to `a.b.c`); relative imports bind nothing qualified
    imported: dict[str, set[str]] = field(default_factory=dict)
    # `x = torch.cat((x, y), ...)` as a statement of a loop's body (the growing `torch.cat` of
    # a decoding loop, xla_loop._appends_to_itself): the dotted callees of those calls named
    # `cat`, `concat` or `concatenate` whose first argument is a tuple or list holding the name
    self_appends: set[str] = field(default_factory=set)
    # a training step's call (xla_loop._is_step, _StepCalls): `.backward()`, `<optim...>.step()`,
    # `<...scaler...>.step()` or `.update()`, or a callee named `optimizer_step`
    steps: bool = False
    # `m.to(...)` / `m.cuda()` as a statement, or assigned to one target (flow.module_move)
    moves: bool = False
    # a str literal, or an f-string's text, that holds "cuda" (any piece of an implicit
    # concatenation, which `ast` joins): every string the device family reads
    cuda_strings: bool = False
    # an attribute named `cuda` (`.cuda()`, `torch.cuda.X`) or an import whose module or name
    # holds "cuda" (`from torch.cuda import FloatTensor`): every name that can resolve under
    # `torch.cuda` (porter.analysis.resolve qualifies names through imports only)
    cuda_names: bool = False
    # an attribute named `is_cuda`
    is_cuda: bool = False
    # a str literal, or an f-string's text, that holds "ccl" or "cuda" in any case: every string
    # the distributed family reads ("nccl", "NCCL_*", "CUDA_*", "cpu:gloo,cuda:nccl", a "cuda" key)
    backend_strings: bool = False
    # an attribute named `NCCL` (`dist.Backend.NCCL`)
    nccl_attrs: bool = False
    # an int literal passed as a device: a positional argument of `.to(...)`, or `device=`
    int_devices: bool = False
    # a dotted name as a `map_location=` keyword, or as the second argument of a callee named
    # `load` (or a name an import binds to `torch.load`) with no keyword: `torch.load(f, loc)`,
    # `torch.load(*args, **kwargs)` (`second_argument`)
    loads: bool = False
    # every callee spelled as a dotted name (`transformers.AutoModel.from_pretrained`) -> the
    # names of the keyword arguments its calls pass (`device_map`, ...; none for `f(x)`)
    dotted_calls: dict[str, set[str]] = field(default_factory=dict)
    # the module names the import statements name, as the kernels family reads them: `a.b` of
    # `import a.b as c`; `a.b.c` and `a.b` of `from a.b import c` (`a.b` of `from a.b import *`);
    # relative imports name none
    import_names: set[str] = field(default_factory=set)
    # `a.b` of every attribute of a name (`torch.cuda` of `torch.cuda.is_available()`)
    name_attrs: set[str] = field(default_factory=set)
    # the dotted spellings of the attributes named `float16` or `half` (`torch.float16`, `T.half`)
    half_attrs: set[str] = field(default_factory=set)
    # the names of the keyword arguments of every call (`pin_memory` of `DataLoader(..., pin_memory=True)`)
    keywords: set[str] = field(default_factory=set)
    # the names a `for` (or `async for`) loop walks, directly or as `enumerate(name)`'s first
    # argument (xla_loop._iterated_name)
    loop_names: set[str] = field(default_factory=set)
    # the names an assignment binds to a call of a dotted callee ending in `DataLoader`: `x = ...`
    # with `x` one of its targets, or `x: T = ...` (flow.assigned_values, xla_loop._is_loader_call)
    loader_names: set[str] = field(default_factory=set)
    # a `pin_memory=` keyword whose value is not `False`, or a `.pin_memory()` call with no
    # argument (xla_loop.XlaLoopFamily.leave_Call: XLA003's two sites)
    pins: bool = False
    # a star import (`from x import *`): resolve.ImportTable then binds `torch` where it is used
    star_import: bool = False

    def qualified(self, name: str) -> list[str]:
        """What porter.analysis.resolve.Resolver.qualname may make of the dotted name `name`:
        its head as an import binds it (`torch` also under a star import), the rest kept."""
        head, dot, rest = name.partition(".")
        bases = self.imported.get(head) or (("torch",) if head == "torch" and self.star_import else ())
        return [f"{base}{dot}{rest}" for base in bases]

    def grows(self) -> bool:
        """Whether a loop grows a name by `torch.cat` of itself (`self_appends` qualified)."""
        return any(q in TORCH_CAT for name in self.self_appends for q in self.qualified(name))

    def bindings(self) -> list[tuple[str, str]]:
        """(local name, what an import binds it to), `torch` too under a star import."""
        out = [(local, base) for local, bases in self.imported.items() for base in bases]
        return out + [("torch", "torch")] if self.star_import else out

    def bound_to(self, packages: tuple[str, ...]) -> set[str]:
        """The local names an absolute import binds to one of `packages`."""
        return {local for local, bases in self.imported.items() if any(b.split(".")[0] in packages for b in bases)}


def callee_names(func: ast.expr) -> tuple[str | None, str | None]:
    """(last name, first name) of a callee spelled as a dotted name; None where not."""
    last = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None
    while type(func) is ast.Attribute:
        func = func.value
    return last, func.id if type(func) is ast.Name else None


def first_argument(call: ast.Call) -> ast.expr | None:
    """What libcst reads as a call's first argument's value: the first positional one (a
    starred one's value), else the first keyword's (`f(x=1)`, `f(**kw)`)."""
    if call.args:
        first = call.args[0]
        return first.value if type(first) is ast.Starred else first
    return call.keywords[0].value if call.keywords else None


def second_argument(call: ast.Call) -> ast.expr | None:
    """What the device family reads as `torch.load`'s location (`leave_Call`): libcst's second
    argument in the source's order, where it has no keyword: a positional one, `*x` (the
    Starred) or `**x` (its value: `load(f, **kw)`); None where the second is `name=...`."""
    args, keywords = call.args, call.keywords
    if not keywords:
        return args[1] if len(args) > 1 else None
    if len(args) + len(keywords) < 2:
        return None
    pieces: list[ast.expr | ast.keyword] = sorted([*args, *keywords], key=lambda n: (n.lineno, n.col_offset))
    second = pieces[1]
    if type(second) is ast.keyword:
        return second.value if second.arg is None else None
    return second  # type: ignore[return-value]


def _self_append(node: ast.Assign) -> str | None:
    """The dotted callee of `x = <...>.cat((x, ...))`; None where `node` is not one."""
    if len(node.targets) != 1 or type(node.targets[0]) is not ast.Name or type(node.value) is not ast.Call:
        return None
    name = node.targets[0].id
    call = node.value
    callee = dotted_name(call.func)
    if callee is None or callee.rpartition(".")[2] not in ("cat", "concat", "concatenate"):
        return None
    first = first_argument(call)
    if type(first) in (ast.Tuple, ast.List) and any(
        type(e) is ast.Name and e.id == name
        for e in first.elts  # type: ignore[union-attr]
    ):
        return callee
    return None


def dotted_name(node: ast.expr) -> str | None:
    """`a.b.c` as porter.analysis.resolve.dotted spells it; None where it is not a dotted name."""
    parts = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is not ast.Name:
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def is_step_callee(func: ast.expr, last: str | None) -> bool:
    """A training step's callee (`Sites.steps`), `last` its last name (`callee_names`)."""
    if last == "backward" or last == "optimizer_step":
        return True
    if type(func) is not ast.Attribute or last not in ("step", "update"):
        return False
    name = (dotted_name(func.value) or "").lower()
    if last == "step":
        return "optim" in name or "scaler" in name or name in ("opt", "optim")
    return "scaler" in name


def _move(value: ast.expr) -> bool:
    return type(value) is ast.Call and type(value.func) is ast.Attribute and value.func.attr in ("to", "cuda")


def _int(node: ast.expr) -> bool:
    return type(node) is ast.Constant and isinstance(node.value, int)


def _location(node: ast.expr) -> bool:
    """A `map_location` the device family ports on xla whatever it holds: a dotted name, or
    `*rest` (a string, an f-string or an int shows itself otherwise)."""
    return type(node) is ast.Starred or dotted_name(node) is not None


def _call(out: Sites, node: ast.Call, two_args: set[str]) -> None:
    last, head = callee_names(node.func)
    named = any(k.arg is not None for k in node.keywords)
    name = dotted_name(node.func)
    if name is not None:
        kws = out.dotted_calls.setdefault(name, set())
        if named:
            kws.update(k.arg for k in node.keywords if k.arg is not None)
    if named:
        out.keywords.update(k.arg for k in node.keywords if k.arg is not None)
    if last is not None:
        _callee_facts(out, node, last, named, two_args)
    if head is not None:
        out.heads.add(head)
        if named:
            out.keyword_heads.add(head)
    if named:
        _keyword_facts(out, node.keywords)
    if last == "pin_memory" and not node.args and not node.keywords and type(node.func) is ast.Attribute:
        out.pins = True


def _callee_facts(out: Sites, node: ast.Call, last: str, named: bool, two_args: set[str]) -> None:
    """What a call tells by the last name of its callee: an optimizer step, a `.to(<int>)`,
    a `load` given a map location as its 2nd argument, or a bare name called with two
    arguments or more (`sites` asks later whether it is `torch.load` imported)."""
    out.callees.add(last)
    out.steps = out.steps or is_step_callee(node.func, last)
    if named:
        out.keyword_callees.add(last)
    if last == "to" and any(_int(a) for a in node.args):
        out.int_devices = True
    if last == "load":
        second = second_argument(node)
        out.loads = out.loads or (second is not None and _location(second))
    elif type(node.func) is ast.Name and len(node.args) + len(node.keywords) > 1:
        two_args.add(last)  # (whether an import binds it to `torch.load` is rare: not which argument)


def _keyword_facts(out: Sites, keywords: list[ast.keyword]) -> None:
    """What a call tells by its keywords: `device=<int>` and a `map_location` to port."""
    for k in keywords:
        if k.arg == "device" and _int(k.value):
            out.int_devices = True
        elif k.arg == "map_location" and _location(k.value):
            out.loads = True
        elif k.arg == "pin_memory" and not (type(k.value) is ast.Constant and k.value.value is False):
            out.pins = True  # (libcst spells `False` as a Name: `pin_memory=False` is no site)


_AST = ast.AST


def _leaves() -> frozenset[type]:
    """The node types `sites` reads nothing of and under which it finds nothing: those with no
    fields (`Load`, `Store`, operators, `Pass`, ...), a `Name` (its `id` and its `ctx`), an
    `alias` (read through its import) and a `type: ignore` comment; and None (an optional
    field left empty, the key of a `**d` in a dict display)."""
    out: set[type] = {ast.Name, ast.alias, ast.TypeIgnore, type(None)}
    todo = [ast.AST]
    while todo:
        kind = todo.pop()
        todo.extend(kind.__subclasses__())
        if kind is not ast.AST and not kind._fields and not kind.__subclasses__():
            out.add(kind)
    return frozenset(out - set(_HANDLED))


# the fields' types the `ast` module's grammar gives that hold no node
_NOT_NODES = frozenset({"identifier", "string", "int", "constant"})


def _may_hold_nodes(grammar_type: str) -> bool:
    """Whether a field of this grammar type may hold a node `sites` walks into: not a name, a
    string or a number, nor a type all of whose kinds are `_LEAVES` (`expr_context`, `cmpop`,
    `alias`)."""
    if grammar_type in _NOT_NODES:
        return False
    cls = getattr(ast, grammar_type, None)
    if not isinstance(cls, type) or not issubclass(cls, ast.AST):
        return True
    kinds = [cls]
    while kinds:
        kind = kinds.pop()
        subclasses = kind.__subclasses__()
        if not subclasses and kind not in _LEAVES:
            return True
        kinds.extend(subclasses)
    return False


def _plan(kind: type[ast.AST]) -> tuple[tuple[str, bool | None], ...]:
    """The fields of a node type that can hold nodes, in `_fields`' order, each with whether it
    holds a list: read from the grammar line `ast` gives each class as its doc
    (`Attribute(expr value, identifier attr, expr_context ctx)`). A class whose doc does not
    spell its `_fields` in that form has every field read, each as `ast.iter_child_nodes` does."""
    fields = tuple(kind._fields)
    doc = kind.__doc__ or ""
    head, paren, rest = doc.partition("(")
    if head == kind.__name__ and paren and rest.endswith(")"):
        pairs = [p.split() for p in rest[:-1].split(",")] if rest[:-1].strip() else []
        if all(len(p) == 2 for p in pairs) and tuple(p[1] for p in pairs) == fields:
            return tuple((name, typ.endswith("*")) for typ, name in pairs if _may_hold_nodes(typ.rstrip("*?")))
    return tuple((name, None) for name in fields)


def fields_holding_nodes(kind: type[ast.AST]) -> tuple[tuple[str, bool | None], ...]:
    """`_plan(kind)`, worked out once per type."""
    plan = _PLANS.get(kind)
    if plan is None:
        plan = _PLANS[kind] = _plan(kind)
    return plan


def nodes(tree: ast.AST) -> list[ast.AST]:
    """The nodes of `tree` (itself first) in `ast.walk`'s order, less the `LEAVES` under it
    (names, operators, `Load` ...: none is or holds a call, a loop, a definition, and `sites`
    reads nothing of them), each type's fields looked up once (`_plan`)."""
    leaves = _LEAVES
    plans = _PLANS
    out: list[ast.AST] = [tree]
    i = 0
    while i < len(out):
        node = out[i]
        i += 1
        kind = type(node)
        plan = plans.get(kind)
        if plan is None:
            plan = plans[kind] = _plan(kind)
        for name, many in plan:
            value: Any = getattr(node, name, None)
            if many:
                out.extend([v for v in value if type(v) not in leaves])
            elif many is None:  # a type whose grammar `_plan` could not read: every child
                out.extend([v for v in ast.iter_child_nodes(node) if type(v) not in leaves])
                break
            elif type(value) not in leaves:
                out.append(value)
    return out


def sites(tree: ast.Module) -> Sites:
    """The facts of one walk of `tree` (`nodes`: `ast.walk`'s order, less the `_LEAVES`, none
    of which `sites` reads), each type's reader looked up once (`_HANDLED`)."""
    out = Sites()
    two_args: set[str] = set()  # bare names called with two or more arguments
    handled = _HANDLED
    for node in nodes(tree):
        read = handled.get(type(node))
        if read is not None:
            read(out, node, two_args)
    out.loads = out.loads or any("torch.load" in out.imported.get(name, ()) for name in two_args)
    return out


def _constant(out: Sites, node: ast.Constant, two_args: set[str]) -> None:
    value = node.value
    if type(value) is str:
        out.cuda_strings = out.cuda_strings or "cuda" in value
        if not out.backend_strings:
            lowered = value.lower()
            out.backend_strings = "ccl" in lowered or "cuda" in lowered


def _assign(out: Sites, node: ast.Assign, two_args: set[str]) -> None:
    out.moves = out.moves or (len(node.targets) == 1 and _move(node.value))
    if _loader_call(node.value):
        out.loader_names.update(t.id for t in node.targets if type(t) is ast.Name)


def _ann_assign(out: Sites, node: ast.AnnAssign, two_args: set[str]) -> None:
    if type(node.target) is ast.Name and node.value is not None and _loader_call(node.value):
        out.loader_names.add(node.target.id)


def _loader_call(value: ast.expr) -> bool:
    """`...DataLoader(...)`: a call whose dotted callee ends in `DataLoader` (xla_loop._is_loader_call)."""
    return type(value) is ast.Call and (dotted_name(value.func) or "").endswith("DataLoader")


def _expr(out: Sites, node: ast.Expr, two_args: set[str]) -> None:
    out.moves = out.moves or _move(node.value)


def _attribute(out: Sites, node: ast.Attribute, two_args: set[str]) -> None:
    """An attribute: `name.attr` pairs, half-precision dtypes, and `.cuda` / `.is_cuda`."""
    attr = node.attr
    if type(node.value) is ast.Name:
        out.name_attrs.add(f"{node.value.id}.{attr}")
    if attr in ("float16", "half"):
        name = dotted_name(node)
        if name is not None:
            out.half_attrs.add(name)
    out.cuda_names = out.cuda_names or attr == "cuda"
    out.is_cuda = out.is_cuda or attr == "is_cuda"
    out.nccl_attrs = out.nccl_attrs or attr == "NCCL"


def _import(out: Sites, node: ast.Import, two_args: set[str]) -> None:
    """`import a.b [as c]`: the module names, and what each bound name refers to."""
    for alias in node.names:
        out.cuda_names = out.cuda_names or "cuda" in alias.name
        out.import_names.add(alias.name)
        if alias.asname:
            out.imported.setdefault(alias.asname, set()).add(alias.name)
        else:
            top = alias.name.split(".")[0]
            out.imported.setdefault(top, set()).add(top)


def _import_from(out: Sites, node: ast.ImportFrom, two_args: set[str]) -> None:
    """`from m import n [as a]`: CUDA in its names, a star import, and (for an absolute import)
    the dotted names imported and what each bound name refers to."""
    out.cuda_names = (
        out.cuda_names or "cuda" in (node.module or "") or any("cuda" in alias.name for alias in node.names)
    )
    star = node.names[0].name == "*"
    out.star_import = out.star_import or star
    if node.level or not node.module:
        return
    out.import_names.add(node.module)
    for alias in node.names:
        if alias.name != "*":
            out.import_names.add(f"{node.module}.{alias.name}")
            out.imported.setdefault(alias.asname or alias.name, set()).add(f"{node.module}.{alias.name}")


def _loop(out: Sites, node: ast.For | ast.AsyncFor | ast.While, two_args: set[str]) -> None:
    """A loop: the plain name a `for` walks (`enumerate(name)` too; libcst's `For` is also an
    `async for`), and the callees of the `x = <...>.cat((x, ...))` in its body (a tensor grown
    a piece at a time)."""
    if isinstance(node, (ast.For, ast.AsyncFor)):
        it: ast.expr | None = node.iter
        if type(it) is ast.Call and type(it.func) is ast.Name and it.func.id == "enumerate":
            it = first_argument(it)
        if type(it) is ast.Name:
            out.loop_names.add(it.id)
    for stmt in node.body:
        if type(stmt) is ast.Assign and (callee := _self_append(stmt)) is not None:
            out.self_appends.add(callee)


# what `sites` reads of each node type (each reader is given the fact sets and `two_args`)
_HANDLED: dict[type, Callable[[Sites, Any, set[str]], None]] = {
    ast.Call: _call,
    ast.Constant: _constant,
    ast.Attribute: _attribute,
    ast.Import: _import,
    ast.ImportFrom: _import_from,
    ast.Assign: _assign,
    ast.AnnAssign: _ann_assign,
    ast.For: _loop,
    ast.AsyncFor: _loop,
    ast.While: _loop,
    ast.Expr: _expr,
}
_LEAVES = _leaves()
LEAVES = _LEAVES  # (for the families' own `ast` scans: no call, loop or name's use stands under one)
_PLANS: dict[type, tuple[tuple[str, bool | None], ...]] = {}

# the bytes and `ast` of the file the candidate pass parsed last (a worker ports one file at
# a time): a family that scans the `ast` while libcst runs reads it (`parsed`), not a 2nd parse
_last_parsed: tuple[bytes, ast.Module] | None = None


def parsed(source: bytes) -> ast.Module | None:
    """The `ast` the candidate pass parsed of these very bytes, if it parsed them."""
    last = _last_parsed
    return last[1] if last is not None and last[0] is source else None


@lru_cache(maxsize=16)
def _enabled(target: str, select: tuple[str, ...], ignore: tuple[str, ...], extend: tuple[str, ...]) -> dict[str, bool]:
    return {code: rule_computed(rule, target, select, ignore, extend) for code, rule in all_rules().items()}


class Gate:
    """What `Family.wanted` and `Family.candidate` read of a PortContext, without a tree."""

    def __init__(self, path: str, settings: Settings, suppressions: Suppressions, source: bytes) -> None:
        self.path = path
        self.settings = settings
        self.source = source
        self.target: Target = get_target(settings.target)
        self.file_ignored_codes = suppressions.file_codes
        self._enabled = _enabled(settings.target, settings.select, settings.ignore, settings.extend_select)
        self._parsed = False
        self._tree: ast.Module | None = None
        self._sites: Sites | None = None
        self._facts: Facts | None = None

    @property
    def portable(self) -> bool:
        return self.settings.portable

    def enabled(self, code: str) -> bool:  # as PortContext.enabled
        if not self._enabled.get(code, False):
            return False
        return not any(code.startswith(c) for c in self.file_ignored_codes)

    def tree(self) -> ast.Module | None:
        """The file's `ast` (parsed once, on first use), or None where `ast` cannot parse it."""
        if not self._parsed:
            self._parsed = True
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    self._tree = ast.parse(self.source)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._tree = None
            if self._tree is not None:
                global _last_parsed
                _last_parsed = (self.source, self._tree)
        return self._tree

    def sites(self) -> Sites | None:
        """`Sites` of the file, or None where `ast` cannot parse it (the family then answers True)."""
        if self._sites is None:
            tree = self.tree()
            if tree is None:
                return None
            self._sites = sites(tree)
        return self._sites

    def facts(self) -> Facts:
        """The project index's facts for the file (`settings.flow`), or where it is ported on
        its own (`flow` None) the index of the file alone, as codemods.flow.Flow reads them."""
        if self._facts is None:
            given = self.settings.flow
            if given is None:
                from porter.analysis.index import ProjectIndex

                given = ProjectIndex.build([(self.path, self.source)]).facts(self.path)
            self._facts = given
        return self._facts
