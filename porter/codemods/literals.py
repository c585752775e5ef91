"""Strings that read `"cuda"` but are not devices: they stay as they are.

A dict key (`rng_states["cuda"]`, `{"cuda": ...}`), a framework's vocabulary
(`accelerator="cuda"`, a tuple of accelerator names such as `("cpu", "gpu", "cuda")`, a
comparison with an `accelerator` flag), a key built in an f-string (a profiler's
`f"{'cuda' if c else 'cpu'}_time_total"`), or the argument of a `torch.cuda` call that stays
CUDA names CUDA in someone else's vocabulary: rewriting it breaks the program. In a project
that picks its device generically (`ctx.device_generic`), `x == "cuda"` on a device type (the
project index says what `x` is: porter.analysis.device_types; by its name `device_type` only
where the index cannot tell) asks "is this CUDA?" of a device type that is already the
target's; a value the index proves is no device (a GPU-platform option) keeps its `"cuda"`
in any project, as someone else's vocabulary. The `"cuda"` in
`_get_available_device_type() or "cuda"` is only the fallback when no accelerator is found:
both stay. This family
only marks such strings in `ctx.keep_cuda` before the device family sees them; it reports
nothing (a framework's own device name is reported by `frameworks.py`; the device family
reports the device-generic ones, `ctx.keep_generic`, as DEV014).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from functools import lru_cache

from porter.codemods import cstwalk
import libcst as cst

from porter.codemods.cuda_api import rewrites_call
from porter.codemods.device import DeviceFamily, cuda_device_index
from porter.codemods.family import Family, string_value, walk
from porter.codemods.flow import Flow, FlowScopes, assigned_values
from porter.analysis.kinds import TypeKind
from porter.analysis.device_words import own_device_words
from porter.analysis.device_types import PLUGIN_DEVICE_TYPES, TORCH_DEVICE_TYPES, compared_key
from porter.analysis.resolve import dotted
from porter.config.ruledata import load_toml
from porter.core.reading import folder_is_package


AVAILABLE_DEVICE_TYPE = "torch._utils._get_available_device_type"
CUDA_AVAILABLE = "torch.cuda.is_available"
VOCABULARY = frozenset(("gpu", "rocm"))  # names beside "cuda" that no torch device type has
GENERIC_DEVICE_TYPE = "device_type"  # the name generic selection gives its answer (when the index cannot tell)
_ENUM_BASES = ("Enum", "Flag")  # and their kin: StrEnum, accelerate's BaseEnum, transformers' ExplicitEnum


@lru_cache(maxsize=1)
def not_device_keywords() -> frozenset[str]:
    return frozenset(load_toml("frameworks.toml").get("not_device", {}).get("keywords", ()))


@lru_cache(maxsize=1)
def _backend_keyword_suffixes() -> tuple[str, ...]:
    return tuple(load_toml("frameworks.toml").get("not_device", {}).get("keyword_suffixes", ()))


def names_a_backend(keyword: str) -> bool:
    """`quantization_backend=`, `backend=`: a keyword for the library's own kernel set, whose
    `"cuda"` is a name in its vocabulary (beside `"triton"`), not a torch device."""
    lowered = keyword.lower()
    return "device" not in lowered and lowered.endswith(_backend_keyword_suffixes())


@lru_cache(maxsize=1)
def autocast_state_functions() -> frozenset[str]:
    """Callables whose `device_type=` is the autocast state they read (DEV017, rules/device.toml)."""
    return frozenset(load_toml("device.toml").get("autocast_state", {}).get("functions", ()))


@lru_cache(maxsize=1)
def autocast_state_readers() -> frozenset[str]:
    """The same, with the device type as their first argument (`torch.is_autocast_enabled("cuda")`)."""
    return frozenset(load_toml("device.toml").get("autocast_state", {}).get("readers", ()))


@lru_cache(maxsize=1)
def cuda_legacy_autocast_state() -> frozenset[str]:
    """torch's calls that read or set CUDA's autocast state with no device type (`torch.get_autocast_gpu_dtype`)."""
    return frozenset(load_toml("device.toml").get("autocast_state", {}).get("cuda_legacy", ()))


@lru_cache(maxsize=1)
def cuda_legacy_autocast_arity() -> dict[str, int]:
    """torch's autocast state calls that are CUDA's when given this many arguments and no device type
    (`torch.is_autocast_enabled()`, `torch.set_autocast_enabled(True)`)."""
    return dict(load_toml("device.toml").get("autocast_state", {}).get("cuda_legacy_arity", {}))


def cuda_autocast_call(ctx, body: cst.CSTNode) -> str | None:
    """The first call in `body` of CUDA's autocast state with no device type (`torch.get_autocast_gpu_dtype()`,
    `torch.is_autocast_enabled()`: rules/device.toml `cuda_legacy`, `cuda_legacy_arity`), or None."""
    wanted, arity = cuda_legacy_autocast_state(), cuda_legacy_autocast_arity()
    for n in walk(body):
        if isinstance(n, cst.Call):
            qual = ctx.qualname(n.func) or dotted(n.func) or ""
            if qual in wanted or (qual in arity and _positional_only(n, arity[qual])):
                return qual
    return None


def _positional_only(call: cst.Call, count: int) -> bool:
    """Whether `call` has exactly `count` arguments, none a keyword or a star (`is_autocast_enabled()`:
    with no device type it asks about CUDA's autocast)."""
    return len(call.args) == count and all(a.keyword is None and not a.star for a in call.args)


@lru_cache(maxsize=1)
def _autocast_state_words() -> tuple[bytes, ...]:
    names = autocast_state_functions() | autocast_state_readers()
    return tuple(sorted({f.rsplit(".", 1)[-1].encode() for f in names}))


@lru_cache(maxsize=1)
def device_generator() -> dict:
    """The device generator calls and the targets that have none (rules/device.toml)."""
    return load_toml("device.toml").get("device_generator", {})


def _is_cuda(node: cst.CSTNode) -> bool:
    value = string_value(node)
    return value is not None and (value == "cuda" or value.startswith("cuda:"))


def _strings(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """`node` itself, or the elements of a tuple/list/set literal, that are CUDA strings."""
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        return [e.value for e in node.elements if _is_cuda(e.value)]
    return [node] if _is_cuda(node) else []


def _device_word(value: str) -> bool:
    """A torch device type, with or without an index (`"cpu"`, `"cuda:0"`, `"npu"`)."""
    kind = value.split(":")[0]
    return kind in TORCH_DEVICE_TYPES or kind in PLUGIN_DEVICE_TYPES


_COLLECTIONS = (cst.Tuple, cst.List, cst.Set)
# methods whose first argument is a key (`components.get("cuda", {})`), builtins whose second
# is an attribute name (`getattr(torch.version, "cuda", None)`)
_KEY_METHODS = frozenset(("get", "pop", "setdefault"))
_ATTRIBUTE_BUILTINS = frozenset(("getattr", "hasattr", "setattr", "delattr"))
# text a program searches for CUDA's words (`'cuda' in str(e).lower()`)
_RELATIVE_IMPORT = re.compile(rb"^[^\S\n]*from \.", re.MULTILINE)  # a module of a package (`\s*` was quadratic)
_TEXT_CALLS = frozenset(("str", "repr", "format", "lower", "upper", "casefold"))
# a name a call passes (`"to"`, `"copy_"`): beside one that is no device, `"cuda"` is a name too
_WORD = re.compile(r"[A-Za-z_]\w*")
# what a program does to text a user typed (a device string torch takes is lower case already)
_NORMALIZERS = frozenset(("lower", "upper", "casefold"))
_ENVIRONMENT_READS = frozenset(("os.getenv", "os.environ.get"))


def _collection_strings(node: cst.BaseExpression) -> list[str]:
    """The string values in a collection literal and the collection literals nested in it."""
    out: list[str] = []
    if isinstance(node, _COLLECTIONS):
        for e in node.elements:
            value = string_value(e.value)
            if value is not None:
                out.append(value)
            else:
                out.extend(_collection_strings(e.value))
    return out


def _inner_collections(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """`node` and the collection literals nested in it (a table of tuples), outermost first."""
    if not isinstance(node, _COLLECTIONS):
        return []
    out: list[cst.BaseExpression] = [node]
    for e in node.elements:
        out.extend(_inner_collections(e.value))
    return out


def _own_vocabulary(node: cst.BaseExpression) -> bool:
    """A collection of strings that holds `"cuda"` beside a word that is no torch device type:
    `("cpu", "cuda", "webgpu", "dml")` (providers), `["cuda", "triton"]` (kernel sets),
    `("cuda", "torch", "python", "numpy")` (key suffixes), `{"contiguous", "cuda", "half"}`
    (method names). Only a device type is a device; the rest name something of the program's."""
    if not isinstance(node, _COLLECTIONS):
        return False
    values = [string_value(e.value) for e in node.elements]
    return any(v is not None and _is_cuda_value(v) for v in values) and any(
        v is not None and not _device_word(v) for v in values
    )


def _is_cuda_value(value: str) -> bool:
    return value == "cuda" or value.startswith("cuda:")


def _names_accelerator(node: cst.BaseExpression) -> bool:
    name = dotted(node)
    return name is not None and "accelerator" in name.rsplit(".", 1)[-1].lower()


def _conjuncts(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands of `a and b and c` (unparenthesised nesting flattened)."""
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.And) and not node.lpar:
        return [*_conjuncts(node.left), *_conjuncts(node.right)]
    return [node]


class _Strings(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: list[cst.SimpleString] = []

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if _is_cuda(node):
            self.found.append(node)


class LiteralsFamily(FlowScopes, Family):
    name = "literals"
    serves = DeviceFamily  # it owns no code: it marks the strings the device family must leave
    tokens = (b"cuda",)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.flow = Flow(ctx.settings, ctx.path, ctx.source)
        self._handlers: list[str] = []  # the names `except ... as NAME` binds around the node
        self._scanned: tuple[set[str], set[str], set[tuple[str, int]]] | None = None
        self._classes: list[str] = []
        self._reads_autocast_state: bool | None = None  # the file names a DEV017 callable

    def _module_facts(self) -> tuple[set[str], set[str], set[tuple[str, int]]]:
        """Read once per file: the values this file checks against a vocabulary of its own
        (`self.backend not in ["cuda", "triton"]`), the containers it indexes with a CUDA
        key (`rng_state_dict["cuda"]`), and the (function, position) pairs its calls pass a
        word that is no device (`_report("to", ...)`)."""
        if self._scanned is None:
            scan = _ModuleFacts(self.ctx)
            cstwalk.visit(self.ctx.module, scan)
            self._scanned = (scan.vocabulary_values, scan.keyed, scan.worded)
        return self._scanned

    def _keep(self, nodes) -> None:
        self.ctx.keep_cuda.update(id(n) for n in nodes)

    def _compared(self, node: cst.BaseExpression) -> str | None:
        """The index's verdict on a value compared with `"cuda"`: DEVICE_TYPE, NOT_DEVICE or None."""
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            return None
        try:
            text = ast.unparse(ast.parse("(" + self.ctx.code(node) + ")", mode="eval").body)
        except SyntaxError:
            return None
        found = self.flow.lookup(compared_key(text))
        return found[0] if found is not None and found[0] in (TypeKind.DEVICE_TYPE, TypeKind.NOT_DEVICE) else None

    def _keep_vocabulary(self, nodes) -> None:
        """A GPU-platform or accelerator name (`choices=["cuda", "rocm"]`): the device family
        notes it (DEV015), so that a reviewer sees it was read."""
        ids = {id(n) for n in nodes}
        self.ctx.keep_cuda.update(ids)
        self.ctx.keep_vocabulary.update(ids)

    def _keep_generic(self, nodes) -> None:
        """Kept because the project is device-generic: reported as kept (DEV014 for strings, by the
        device family; CUDA010 for `torch.cuda.is_available()`, by the torch.cuda family)."""
        ids = {id(n) for n in nodes}
        self.ctx.keep_cuda.update(ids)
        self.ctx.keep_generic.update(ids)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        """`class RNGType(Enum): CUDA = "cuda"`: an enum member's value is the enum's own name
        for CUDA (`RNGType.CUDA`), not a device: it stays, noted (DEV015)."""
        super().visit_ClassDef(node)
        self._classes.append(node.name.value)
        self._enum_members(node)
        self._public_fields(node)

    def _public_fields(self, node: cst.ClassDef) -> None:
        """`ec_buffer_device: str | None = "cuda"` in a library's public configuration class
        (one a decorator such as `@dataclass` turns into its `__init__`): the field's default
        is a public default like a parameter's (DEV016): it stays, reported."""
        if not node.decorators or any(c.startswith("_") for c in self._classes) or not in_package(self.ctx):
            return
        for stmt in node.body.body if isinstance(node.body, cst.IndentedBlock) else ():
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                if (
                    isinstance(small, cst.AnnAssign)
                    and small.value is not None
                    and isinstance(small.target, cst.Name)
                    and not small.target.value.startswith("_")
                ):
                    for string in _default_strings(self.ctx, small.value):
                        self._keep([string])
                        self.ctx.keep_public_default[id(string)] = ".".join([*self._classes, small.target.value])
                        if "device" in small.target.value:
                            self._methods_follow(node, ".".join([*self._classes, small.target.value]))

    def _methods_follow(self, node: cst.ClassDef, field: str) -> None:
        """ColossalAI's `BatchInferState`: its public `device` field defaults to CUDA (kept,
        DEV016) while `init_from_batch` allocated its tensors on `"cuda"`; ported, the state's
        tensors would sit on the target beside a field that says CUDA. The devices the class's
        methods name stay with the field, reported."""
        methods = (
            [m for m in node.body.body if isinstance(m, cst.FunctionDef)]
            if isinstance(node.body, cst.IndentedBlock)
            else []
        )
        found = [
            n
            for m in methods
            for n in _descendants(m.body)
            if isinstance(n, cst.SimpleString) and _is_cuda(n) and id(n) not in self.ctx.keep_cuda
        ]
        if not found:
            return
        self._keep(found)
        for n in found:  # reported by the device family (DEV016), as the field's default is
            self.ctx.keep_public_default[id(n)] = f"{METHOD_OF}{node.name.value}:{field}"

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self._classes.pop()
        return super().leave_ClassDef(original, updated)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        self._public_defaults(node)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None and isinstance(node.name.name, cst.Name):
            self._handlers.append(node.name.name.value)
        else:
            self._handlers.append("")

    def leave_ExceptHandler(self, original: cst.ExceptHandler, updated: cst.ExceptHandler) -> cst.ExceptHandler:
        self._handlers.pop()
        return updated

    def visit_If(self, node: cst.If) -> None:
        """`if TYPE_CHECKING:` declares names for type checkers; nothing in it runs."""
        if (dotted(node.test) or "").rsplit(".", 1)[-1] == "TYPE_CHECKING":
            scan = _Strings()
            cstwalk.visit(node.body, scan)
            self._keep_vocabulary(scan.found)
        self._module_in_place_of_cpu(node)
        self._cuda_autocast_branch(node)
        self._own_cuda_method_branch(node)
        if in_package(self.ctx):
            self._cuda_beside_fallback(node)

    def _cuda_beside_fallback(self, node: cst.If) -> None:
        """`if freqs_cis.is_cuda: <one implementation> else: <another>` in a package, each branch
        binding the same names with no CUDA API in either: CUDA's implementation beside the
        generic one that every other device takes (SAM2's rotary `repeat` on complex tensors,
        expand + flatten elsewhere). The target is one more such device; made the target's test,
        CUDA would lose its branch. Kept, reported (the device family's DEV004)."""
        test = node.test
        orelse = node.orelse
        if not (
            isinstance(test, cst.Attribute)
            and test.attr.value == "is_cuda"
            and isinstance(orelse, cst.Else)
            and isinstance(node.body, cst.IndentedBlock)
            and isinstance(orelse.body, cst.IndentedBlock)
        ):
            return
        bound = [_bound_names(node.body), _bound_names(orelse.body)]
        if not bound[0] or bound[0] != bound[1]:
            return
        if any(_names_cuda(n) for branch in (node.body, orelse.body) for n in walk(branch)):
            return  # a CUDA API, a CUDA device or a CUDA kernel in a branch: not generic code
        self.ctx.cuda_beside_fallback.add(id(test))

    def _cuda_autocast_branch(self, node: cst.If) -> None:
        """`if device_type == "cuda": dtype = torch.get_autocast_gpu_dtype()`: the branch reads CUDA's
        autocast state; made the target's test, the target's autocast would get CUDA's dtype. Kept,
        reported (DEV005)."""
        test = node.test
        if not (
            isinstance(test, cst.Comparison)
            and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.Equal)
        ):
            return
        strings = [e for e in (test.left, test.comparisons[0].comparator) if _is_cuda(e)]
        qual = cuda_autocast_call(self.ctx, node.body) if strings else None
        if qual is not None:  # (not kept here: a switch BACK002 keeps is said there, once)
            for string in strings:
                self.ctx.keep_cuda_autocast_branch[id(string)] = qual

    def _own_cuda_method_branch(self, node: cst.If) -> None:
        """gpytorch 1.14.2's `NNUtil.to`: `elif "cuda" in str(device): return self.cuda()` in a file that
        defines its own `cuda()` (faiss's GPU index): that call is kept as CUDA's (device.py's DEV001).
        Made the target's test, the branch would run CUDA's method on the target (`Module.cuda()`:
        no NVIDIA driver) and a CUDA device would reach the "Unknown device" error. Kept, reported
        (DEV005)."""
        test = node.test
        if not (
            b"def cuda(" in self.ctx.source
            and isinstance(test, cst.Comparison)
            and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, (cst.Equal, cst.In))
        ):
            return
        strings = [e for e in (test.left, test.comparisons[0].comparator) if _is_cuda(e)]
        call = next(
            (
                n
                for n in (walk(node.body) if strings else ())
                if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "cuda"
            ),
            None,
        )
        if call is not None:
            for string in strings:
                self.ctx.keep_cuda_method_branch[id(string)] = self.ctx.code(call.func) + (
                    "(...)" if call.args else "()"
                )

    def _module_in_place_of_cpu(self, node: cst.If) -> None:
        """`if device == 'cpu': device = 'cuda'; device_torch_lib = getattr(torch, device)` (fla's
        hardware module): on a host with no accelerator, `"cuda"` names the `torch.cuda` module,
        which every build of torch has, as a stand-in; the target's module is not there. An
        attribute name, kept (DEV015)."""
        test = node.test
        if not (
            isinstance(test, cst.Comparison)
            and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.Equal)
            and isinstance(test.left, cst.Name)
            and string_value(test.comparisons[0].comparator) == "cpu"
        ):
            return
        name = test.left.value
        assigned: list[cst.BaseExpression] = []
        for stmt in node.body.body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                if (
                    isinstance(small, cst.Assign)
                    and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name)
                    and small.targets[0].target.value == name
                    and _is_cuda(small.value)
                ):
                    assigned.append(small.value)
                elif (
                    assigned
                    and isinstance(small, cst.Assign)
                    and isinstance(small.value, cst.Call)
                    and isinstance(small.value.func, cst.Name)
                    and small.value.func.value == "getattr"
                    and len(small.value.args) >= 2
                    and self.ctx.qualname(small.value.args[0].value) == "torch"
                    and isinstance(small.value.args[1].value, cst.Name)
                    and small.value.args[1].value.value == name
                ):
                    self._keep_vocabulary(assigned)
                    return

    def visit_IfExp(self, node: cst.IfExp) -> None:
        """`"rocm" if is_hip else "cuda"`: beside a word that is no device type (a library-file
        prefix, a platform), `"cuda"` is that word's kin, not a device."""
        sides = (node.body, node.orelse)
        words = [string_value(s) for s in sides]
        if any(w is not None and not _device_word(w) for w in words):
            self._keep_vocabulary(s for s in sides if _is_cuda(s))

    def _public_defaults(self, node: cst.FunctionDef) -> None:
        """A library's public function or method that defaults its device to CUDA
        (`def load(path, device="cuda")`, `if device is None: device = "cuda"`): the default is
        the library's API, which its callers and docs rely on; it stays, reported (DEV016, by
        the device family), so that the target's callers pass their device."""
        name = node.name.value
        if (name.startswith("_") and name != "__init__") or any(c.startswith("_") for c in self._classes):
            return
        if not in_package(self.ctx):
            return
        params = [*node.params.params, *node.params.kwonly_params, *node.params.posonly_params]
        found: list[tuple[str, cst.BaseExpression]] = []
        for param in params:
            if param.default is not None:
                found.extend((param.name.value, s) for s in _default_strings(self.ctx, param.default))
        names = {p.name.value for p in params}
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        for stmt in body:
            target = _none_default(stmt)
            if target is not None and target[0] in names:
                found.extend((target[0], s) for s in _default_strings(self.ctx, target[1]))
        for param_name, string in found:
            self._keep([string])
            self.ctx.keep_public_default[id(string)] = f"{'.'.join(self._classes + [name])}({param_name}=...)"

    def _enum_members(self, node: cst.ClassDef) -> None:
        if not any((dotted(b.value) or "").rsplit(".", 1)[-1].endswith(_ENUM_BASES) for b in node.bases):
            return
        for stmt in node.body.body if isinstance(node.body, cst.IndentedBlock) else ():
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None:
                        self._keep_vocabulary(_strings(small.value))

    def visit_Subscript(self, node: cst.Subscript) -> None:
        """`Literal["cpu", "cuda", "auto"]`: the values a parameter accepts, not a device."""
        if (dotted(node.value) or "").rsplit(".", 1)[-1] != "Literal":
            return  # (by its name: most subscripts are no annotation, and resolving each costs)
        for element in node.slice:
            if isinstance(element.slice, cst.Index):
                self._keep_vocabulary(_strings(element.slice.value))

    def visit_DictElement(self, node: cst.DictElement) -> None:
        self._keep(_strings(node.key))

    def visit_SubscriptElement(self, node: cst.SubscriptElement) -> None:
        if isinstance(node.slice, cst.Index):
            self._keep(_strings(node.slice.value))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None and node.keyword.value in not_device_keywords():
            self._keep(_strings(node.value))
        elif node.keyword is not None and names_a_backend(node.keyword.value):
            # `"cuda"`, `"cuda:0"`; not a backend map (`"cuda:nccl"`), the distributed family's
            self._keep_vocabulary([s for s in _strings(node.value) if cuda_device_index(string_value(s))[0]])

    def visit_Comparison(self, node: cst.Comparison) -> None:
        sides = [node.left, *(c.comparator for c in node.comparisons)]
        if not any(_strings(s) for s in sides):
            return  # no CUDA string to keep: spares the index lookups below
        if self._not_device_membership(node):
            return
        keep = self._kept_as(sides)
        if keep is not None:
            for s in sides:
                keep(_strings(s))

    def _kept_as(self, sides: list[cst.BaseExpression]) -> Callable[[list[cst.BaseExpression]], None] | None:
        """How the CUDA strings compared with the other sides stay, from what those sides are:
        a value of the module's own vocabulary or one the index says is no device (a name),
        an accelerator's name (CUDA's), a device type the project picks generically; None where
        they are ported."""
        vocabulary_values, _, _ = self._module_facts()
        if any(_expression(self.ctx, s) in vocabulary_values for s in sides if not _strings(s)):
            return self._keep_vocabulary
        if any(_names_accelerator(s) for s in sides):
            return self._keep
        if any(self._compared(s) == TypeKind.NOT_DEVICE for s in sides):
            return self._keep_vocabulary
        if any(self._generic_device_type(s) for s in sides):
            return self._keep_generic
        return None

    def _not_device_membership(self, node: cst.Comparison) -> bool:
        """`"cuda" in str(e).lower()` searches an error's text; `"cuda" in rng_state_dict` a
        container this file indexes with `"cuda"` (a key)."""
        if len(node.comparisons) != 1 or not isinstance(node.comparisons[0].operator, (cst.In, cst.NotIn)):
            return False
        if not _is_cuda(node.left):
            return False
        container = node.comparisons[0].comparator
        _, keyed, _ = self._module_facts()
        if _expression(self.ctx, container) in keyed or _error_text(container, self._handlers):
            self._keep_vocabulary([node.left])
            return True
        return False

    def _generic_device_type(self, node: cst.BaseExpression) -> bool:
        """A device type (`utils.device_type`, `kind` from `current_accelerator().type`) in
        device-generic code: the selected device's type, not a CUDA string porter rewrites.
        What it is comes from the project index; where the index cannot tell, the name
        `device_type` is taken at its word (unless this file assigns it a CUDA string)."""
        if not self.ctx.device_generic:
            return False
        verdict = self._compared(node)
        if verdict is not None:
            return verdict == TypeKind.DEVICE_TYPE
        name = dotted(node)
        if name is None or name.rsplit(".", 1)[-1] != GENERIC_DEVICE_TYPE:
            return False
        if "." in name:
            return True
        for scope in (self.ctx.scopes.innermost, self.ctx.module):
            if scope is not None and any(_strings(v) for v in assigned_values(scope, name)):
                return False  # `device_type = "cuda"` here: it is ported, so is the test
        return True

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        """`_get_available_device_type() or "cuda"`: the fallback when no accelerator is found.
        `device_type == "cuda" and torch.cuda.is_available()`: one question, "is this CUDA?"."""
        if not self.ctx.device_generic:
            return
        if isinstance(node.operator, cst.Or):
            if isinstance(node.left, cst.Call) and self.ctx.qualname(node.left.func) == AVAILABLE_DEVICE_TYPE:
                self._keep_generic(_strings(node.right))
            return
        operands = _conjuncts(node)
        if any(self._asks_cuda(o) for o in operands):
            self._keep_generic(
                o for o in operands if isinstance(o, cst.Call) and self.ctx.qualname(o.func) == CUDA_AVAILABLE
            )

    def _asks_cuda(self, node: cst.BaseExpression) -> bool:
        if not isinstance(node, cst.Comparison) or len(node.comparisons) != 1:
            return False
        sides = (node.left, node.comparisons[0].comparator)
        return any(self._generic_device_type(s) for s in sides) and any(_strings(s) for s in sides)

    def _vocabulary(self, node: cst.Tuple | cst.List | cst.Set) -> None:
        """A list of accelerator or GPU-platform names ("gpu" and "rocm" are no torch device
        types), of kernel sets, providers, key suffixes: `"cuda"` beside a word that is no
        device type is a word of the program's own. In a table of such lists (`[(fuse, ("cuda",
        "dml")), (pack, ("cuda",))]`), a list of only the table's own words is one too."""
        collections = _inner_collections(node)
        own = [c for c in collections if _own_vocabulary(c)]
        if not own:
            return
        words = {w for c in own for w in _collection_strings(c)}
        own_ids = {id(c) for c in own}
        for c in collections:
            strings = _collection_strings(c)
            if id(c) in own_ids or (strings and set(strings) <= words):
                self._keep_vocabulary(s for s in _strings(c))

    visit_Tuple = _vocabulary
    visit_List = _vocabulary
    visit_Set = _vocabulary

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        """`f"{'cuda' if c else 'cpu'}_time_total"` builds a key; `f"{dev}:{i}"` a device."""
        texts = [p.value for p in node.parts if isinstance(p, cst.FormattedStringText)]
        if not any(t and not t.startswith(":") for t in texts) or texts[:1] == ["cuda:"]:
            return
        scan = _Strings()
        for part in node.parts:
            if isinstance(part, cst.FormattedStringExpression):
                cstwalk.visit(part.expression, scan)
        self._keep_vocabulary(scan.found)

    def visit_Call(self, node: cst.Call) -> None:
        """`torch.cuda.get_device_properties("cuda")` keeps its argument where the call stays;
        `parser.add_argument("--accelerator", default="cuda")` is an accelerator name too, as is
        the default of an option whose choices are such names (`choices=["cuda", "rocm"]`)."""
        func = node.func
        if self._reads_autocast_state is None:  # (once per file: a scan of its bytes)
            self._reads_autocast_state = any(w in self.ctx.source for w in _autocast_state_words())
        if self._reads_autocast_state:
            self._autocast_state(node)
        if self.ctx.target.name in device_generator().get("targets", ()):
            self._keep_generator_device(node)
        if isinstance(func, cst.Attribute):
            self._keep_keys_and_settings(node, func)
        if isinstance(func, cst.Name):
            self._keep_worded_arguments(node, func)
        self._keep_names_of_own(node, func)
        if isinstance(func, cst.Attribute) and func.attr.value == "add_argument":
            self._keep_option_names(node)
            return
        qual = self.ctx.qualname(node.func)
        if qual is None or not qual.startswith("torch.cuda.") or rewrites_call(self.ctx, qual):
            return
        for arg in node.args:
            self._keep(_strings(arg.value))

    def _keep_keys_and_settings(self, node: cst.Call, func: cst.Attribute) -> None:
        """A dict's key (`components.get("cuda", {})`) and the default of a setting the library
        case-normalizes (`os.getenv("VLLM_TARGET_DEVICE", "cuda").lower()`): names, no device."""
        if func.attr.value in _KEY_METHODS and node.args and node.args[0].keyword is None:
            self._keep_vocabulary(_strings(node.args[0].value))  # `components.get("cuda", {})`: a key
        if func.attr.value in _NORMALIZERS and not node.args and in_package(self.ctx):
            # `os.getenv("VLLM_TARGET_DEVICE", "cuda").lower()`, `str(cfg.buffer_device or "cuda").lower()`:
            # the default of a value the library case-normalizes is an option's value as a user
            # types it (a build target, a transfer engine's setting), not a torch device string
            self._keep_vocabulary(_configured_defaults(self.ctx, func.value))

    def _keep_worded_arguments(self, node: cst.Call, func: cst.Name) -> None:
        """`_report("cuda", "H2D", ...)` beside `_report("to", "H2D", ...)`: the function takes
        names there (an operation's), and "cuda" is one of them (`Tensor.cuda`); the file's walk
        only where a positional argument holds a CUDA string to keep."""
        strings = []
        for i, arg in enumerate(node.args):
            if arg.keyword is not None or arg.star:
                break
            if found := _strings(arg.value):
                strings.append((i, found))
        worded = self._module_facts()[2] if strings else ()
        for i, found in strings:
            if (func.value, i) in worded:
                self._keep_vocabulary(found)

    def _keep_names_of_own(self, node: cst.Call, func: cst.BaseExpression) -> None:
        """Arguments that are names in a vocabulary the call reads: a library's own device
        words, an attribute's name, the default beside a list of choices."""
        if isinstance(func, cst.Attribute) and func.attr.value in own_device_words(self.ctx.source):
            # `binding.bind_output(name, "cuda", 0)` (ONNX Runtime's IOBinding): a library that
            # names devices in words of its own (rules/frameworks.toml `own_device_words`)
            for arg in node.args:
                self._keep_vocabulary(_strings(arg.value))
        if isinstance(func, cst.Name) and func.value in _ATTRIBUTE_BUILTINS and len(node.args) >= 2:
            self._keep_vocabulary(_strings(node.args[1].value))  # `getattr(torch.version, "cuda")`: a name
        if any(_own_vocabulary(a.value) for a in node.args):
            # `env_with_choices("KERNEL", "cuda", ["cuda", "triton"])`: the default is one of them
            for arg in node.args:
                if not isinstance(arg.value, _COLLECTIONS):
                    self._keep_vocabulary(_strings(arg.value))

    def _keep_option_names(self, node: cst.Call) -> None:
        """`add_argument("--accelerator", default="cuda")`, or an option whose choices are GPU
        platforms: its default, choices and const are names, no device."""
        flags = [string_value(a.value) or "" for a in node.args if a.keyword is None]
        choices = self.kwarg(node, "choices")
        listed = choices.value if choices is not None else None
        vocabulary = isinstance(listed, (cst.Tuple, cst.List, cst.Set)) and not VOCABULARY.isdisjoint(
            string_value(e.value) for e in listed.elements
        )
        if vocabulary or any("accelerator" in f.lower() for f in flags):
            for arg in node.args:
                if arg.keyword is not None and arg.keyword.value in ("default", "choices", "const"):
                    self._keep_vocabulary(_strings(arg.value))

    def _keep_generator_device(self, node: cst.Call) -> None:
        """`torch.Generator(device="cuda")` where the target has no device generator, and the
        `device=` of a draw given `generator=` (it must match the generator's): kept, reported."""
        data = device_generator()
        keyword = data.get("keyword", "generator")
        makes = self.ctx.qualname(node.func) in data.get("callables", ())
        if not makes and self.kwarg(node, keyword) is None:
            return
        for i, arg in enumerate(node.args):
            if (arg.keyword is not None and arg.keyword.value == "device") or (
                makes and i == 0 and arg.keyword is None and not arg.star
            ):
                for string in _strings(arg.value):
                    self._keep([string])
                    self.ctx.keep_generator_device.add(id(string))

    def _autocast_state(self, node: cst.Call) -> None:
        """`torch.amp.custom_fwd(device_type="cuda")` (or `partial(torch.amp.custom_fwd,
        device_type="cuda")`) in a package: the autocast state the wrapper reads, not a
        placement. The function already runs on the target; the target's name would raise on
        the CUDA and CPU hosts the library also serves. Kept, reported (DEV017)."""
        args = list(node.args)
        qual = self.ctx.qualname(node.func)
        if qual == "functools.partial" and args and args[0].keyword is None:
            qual = self.ctx.qualname(args[0].value)
            args = args[1:]
        reader = qual in autocast_state_readers()
        if qual is None or not (reader or qual in autocast_state_functions()) or not in_package(self.ctx):
            return
        for i, arg in enumerate(args):
            if (arg.keyword is not None and arg.keyword.value == "device_type") or (
                reader and i == 0 and arg.keyword is None and not arg.star
            ):
                for string in _strings(arg.value):
                    self._keep([string])
                    self.ctx.keep_autocast_state[id(string)] = qual


class _ModuleFacts(cst.CSTVisitor):
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.vocabulary_values: set[str] = set()
        self.keyed: set[str] = set()
        self.worded: set[tuple[str, int]] = set()

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if len(node.comparisons) == 1 and isinstance(node.comparisons[0].operator, (cst.In, cst.NotIn)):
            if _own_vocabulary(node.comparisons[0].comparator):
                self.vocabulary_values.add(_expression(self.ctx, node.left))

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) and _is_cuda(node.slice[0].slice.value):
            self.keyed.add(_expression(self.ctx, node.value))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in _KEY_METHODS
            and node.args
            and _is_cuda(node.args[0].value)
        ):
            self.keyed.add(_expression(self.ctx, func.value))
        if isinstance(func, cst.Name):
            for i, arg in enumerate(node.args):
                if arg.keyword is not None or arg.star:
                    break
                word = string_value(arg.value) if isinstance(arg.value, cst.SimpleString) else None
                if word is not None and _WORD.fullmatch(word) and not _device_word(word):
                    self.worded.add((func.value, i))


# a `keep_public_default` entry for a device a class's method names: "method:Class:Class.field"
METHOD_OF = "method:"


def _descendants(node: cst.CSTNode) -> list[cst.CSTNode]:
    return list(walk(node))


def _expression(ctx, node: cst.BaseExpression) -> str:
    return " ".join(ctx.code(node).split())


def _error_text(node: cst.BaseExpression, handlers: list[str]) -> bool:
    """`str(e)`, `str(e).lower()`, `repr(err)`: the text of the exception being handled."""
    while isinstance(node, cst.Call):
        func = node.func
        if isinstance(func, cst.Name) and func.value in _TEXT_CALLS and node.args:
            node = node.args[0].value
        elif isinstance(func, cst.Attribute) and func.attr.value in _TEXT_CALLS:
            node = func.value
        else:
            return False
    return isinstance(node, cst.Name) and node.value in handlers


def _configured_defaults(ctx, value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The CUDA strings a configuration value falls back to: the default of `os.getenv(NAME,
    "cuda")` / `os.environ.get(NAME, "cuda")`, the last operand of `cfg.x or "cuda"`, inside
    `str(...)` or parentheses."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "str":
        if len(value.args) != 1:
            return []
        value = value.args[0].value
    if isinstance(value, cst.BooleanOperation) and isinstance(value.operator, cst.Or):
        return _strings(value.right)
    if isinstance(value, cst.Call) and ctx.qualname(value.func) in _ENVIRONMENT_READS and len(value.args) >= 2:
        return _strings(value.args[1].value)
    return []


def _names_cuda(node: cst.CSTNode) -> bool:
    """A name, attribute or string (not a comment) that says CUDA (`torch.cuda`, `"cuda:0"`)."""
    if isinstance(node, cst.Name):
        return "cuda" in node.value.lower()
    if isinstance(node, cst.SimpleString):
        return "cuda" in node.value.lower()
    return False


def _bound_names(block: cst.IndentedBlock) -> frozenset[str]:
    """The names a block's own simple statements assign (`x = ...`, `x += ...`)."""
    names: set[str] = set()
    for stmt in block.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Assign):
                names.update(t.target.value for t in small.targets if isinstance(t.target, cst.Name))
            elif isinstance(small, (cst.AugAssign, cst.AnnAssign)) and isinstance(small.target, cst.Name):
                names.add(small.target.value)
    return frozenset(names)


def in_package(ctx) -> bool:
    """A module of a package (its folder has `__init__.py`, or it imports relatively): library
    code, whose public functions and options are its API. The runner looks at the folder
    (`Settings.package`, in the cache key); a file ported alone, here."""
    package = ctx.settings.package
    if package is None:
        package = _folder_is_package(ctx.path)
    return package or _imports_relatively(ctx.source)


@lru_cache(maxsize=8)
def _imports_relatively(source: bytes) -> bool:
    """Whether `source` has a `from .` import line: asked by several families, often of every
    function of a file outside a package folder (a script's), so searched once per file."""
    return bool(_RELATIVE_IMPORT.search(source))


@lru_cache(maxsize=4096)
def _folder_is_package(path: str) -> bool:
    """A module of a package (its folder has `__init__.py`): library code, with an API."""
    return folder_is_package(path)


def _default_strings(ctx, value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The CUDA strings of a default device: `"cuda"`, `"cuda:0"`, `torch.device("cuda")`."""
    if _is_cuda(value):
        return [value]
    if (
        isinstance(value, cst.Call)
        and ctx.qualname(value.func) == "torch.device"
        and value.args
        and _is_cuda(value.args[0].value)
    ):
        return [value.args[0].value]
    return []


def _none_default(stmt: cst.BaseStatement) -> tuple[str, cst.BaseExpression] | None:
    """`if device is None: device = "cuda"`: (the name, the value it defaults to)."""
    if not isinstance(stmt, cst.If) or stmt.orelse is not None:
        return None
    test = stmt.test
    if not (
        isinstance(test, cst.Comparison)
        and isinstance(test.left, cst.Name)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Is)
        and isinstance(test.comparisons[0].comparator, cst.Name)
        and test.comparisons[0].comparator.value == "None"
    ):
        return None
    body = stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else ()
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1:
        return None
    assign = body[0].body[0]
    if (
        isinstance(assign, cst.Assign)
        and len(assign.targets) == 1
        and isinstance(assign.targets[0].target, cst.Name)
        and assign.targets[0].target.value == test.left.value
    ):
        return test.left.value, assign.value
    return None
