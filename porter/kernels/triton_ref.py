"""Triton kernel → plain-PyTorch reference body, for the kernels simple enough to translate
mechanically: elementwise over a flat range (`offs = pid * BLOCK + tl.arange(0, BLOCK)`) and
row-wise kernels reducing over one axis (`row * stride + tl.arange(0, BLOCK)`, `tl.sum(x, axis=0)`).

The translation reads the kernel with `ast` (it never runs it) and rebuilds it on whole-tensor
views: a masked flat load `tl.load(p + offs, mask=offs < n)` is `p.view(-1)[:n]`, a row load
`tl.load(p + row * s + cols, mask=cols < n)` is `p.view(-1, s)[:, :n]`, `tl.sum(x, axis=0)` over
a row is `x.sum(dim=-1, keepdim=True)`. Masked-out lanes are left out of the view, which equals
the kernel where the lanes a reduction takes hold its identity (0 for sum, -inf for max): what
they hold is followed from the loads' `other=` through the math, and a reduction of other lanes
is not translated. Anything outside these forms returns None with the reason, and the scaffold
writes a TODO instead of guessing.
"""

from __future__ import annotations

import ast
import math
import textwrap
from dataclasses import dataclass, field

_UNARY = {
    "exp": "torch.exp",
    "log": "torch.log",
    "sqrt": "torch.sqrt",
    "rsqrt": "torch.rsqrt",
    "abs": "torch.abs",
    "sigmoid": "torch.sigmoid",
    "cos": "torch.cos",
    "sin": "torch.sin",
    "tanh": "torch.tanh",
    "exp2": "torch.exp2",
    "log2": "torch.log2",
    "floor": "torch.floor",
    "ceil": "torch.ceil",
    "erf": "torch.erf",
}
_BINARY = {"maximum": "torch.maximum", "minimum": "torch.minimum"}
_REDUCE = {"sum": "sum", "max": "amax", "min": "amin"}
_DTYPES = {"float32", "float16", "bfloat16", "float64", "int32", "int64", "int8", "int16", "uint8"}


_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
_C_OPS = {ast.FloorDiv: "torch.div({}, {}, rounding_mode='trunc')", ast.Mod: "torch.fmod({}, {})"}


# What the masked-out lanes of a value hold (`other=` of its loads, through the math): a number,
# `_FINITE` (some finite number: a scalar argument, a reduced row), `_NO_PAD` (no lane is masked
# out: an unmasked load) or None (not known). A reduction takes the whole block, masked-out lanes
# too, and the reference takes the row's `[:n]` only: the two agree only where those lanes hold
# the reduction's identity (`other=1.0` before `tl.sum`, or `other=0.0` before `tl.max` of
# negative rows, gave a "derived" reference of other numbers: eighteenth read)
_FINITE, _NO_PAD = "finite", "no masked lane"
_IDENTITY = {"sum": 0.0, "max": -math.inf, "min": math.inf}
_MATH = {"exp": math.exp, "exp2": lambda x: 2.0**x, "abs": abs, "sigmoid": lambda x: 1 / (1 + math.exp(-x))}


def _constant(code: str) -> float | None:
    """The number a scalar's code spells (`0.5`, `(-float('inf'))`), or None."""
    try:
        node = ast.parse(code, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    sign = 1.0
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign, node = (-sign if isinstance(node.op, ast.USub) else sign), node.operand
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        try:
            return sign * float(node.value)
        except OverflowError:  # an int past a float's range (`0x` and 5,000 digits)
            return None
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float"):
        return None
    if len(node.args) == 1 and isinstance(value := node.args[0], ast.Constant):
        try:
            return sign * float(value.value) if isinstance(value.value, (str, int, float)) else None
        except (ValueError, OverflowError):
            return None
    return None


def _pad(sym: _Sym) -> object:
    if sym.kind == "scalar":
        value = _constant(sym.code)
        return _FINITE if value is None else value
    return sym.extra.get("pad")


def _padded(sym: _Sym, kinds: tuple[str, str], pads: tuple[object, object], op: str) -> _Sym:
    """`sym` with the pad of `a op b`."""
    a, b = pads
    if _NO_PAD in pads:  # the other side's masked lanes meet real (finite) numbers, or none is masked
        if kinds[0] == "scalar" or kinds[1] == "scalar" or a == b:
            return _with_pad(sym, _NO_PAD)
        a, b = (_FINITE if x == _NO_PAD else x for x in (a, b))
    return _with_pad(sym, _pad_arith(op, a, b))


def _pad_arith(op: str, a: object, b: object) -> object:
    if a is None or b is None:
        return None
    if isinstance(a, float) and isinstance(b, float):
        try:
            return float({"+": a + b, "-": a - b, "*": a * b}[op]) if op in "+-*" else (a / b if op == "/" else None)
        except (ZeroDivisionError, OverflowError, KeyError):
            return None
    inf = [x for x in (a, b) if isinstance(x, float) and math.isinf(x)]
    zero = [x for x in (a, b) if x == 0.0]
    if op in "+-" and inf and len(inf) == 1:  # ±inf with a finite number
        return inf[0] if (op == "+" or inf[0] is a) else -inf[0]
    if op == "*" and zero and not inf:
        return 0.0
    return _FINITE if op in "+-*" and not inf else None


def _with_pad(sym: _Sym, pad: object) -> _Sym:
    sym.extra = {**sym.extra, "pad": pad}
    return sym


def _unary_pad(name: str, pad: object) -> object:
    if isinstance(pad, float) and name in _MATH:
        try:
            return float(_MATH[name](pad))
        except (OverflowError, ValueError, ZeroDivisionError):
            return None
    return pad if pad in (_NO_PAD, _FINITE) else None


class Untranslatable(Exception):
    pass


def _constexpr_giver(fn: ast.FunctionDef, name: str) -> str:
    """Who gives the kernel's tl.constexpr `name` its value. One with a default (`SCALE: tl.constexpr
    = 2.0`) is the launch's or, where it passes none, the default: "only the launch gives" was false
    of it (twenty-first read); so was it of one a decorator's dict names (`@triton.heuristics({"EVEN":
    ...})`, an autotune `triton.Config({"BLOCK": 64})`), which the launch does not pass (twenty-eighth read)."""
    for deco in fn.decorator_list:
        dicts = [d for d in ast.walk(deco) if isinstance(d, ast.Dict)]
        if any(isinstance(k, ast.Constant) and k.value == name for d in dicts for k in d.keys):
            named = _shown(deco.func if isinstance(deco, ast.Call) else deco)[:40]
            return f"the `@{named}` decorator gives, not the launch"
    args = fn.args.args
    defaults = dict(zip((a.arg for a in args[len(args) - len(fn.args.defaults) :]), fn.args.defaults))
    if name in defaults:
        return f"is its default `{_shown(defaults[name])[:40]}` unless the launch passes another"
    return "only the launch gives"


def _shown(node: ast.AST) -> str:
    """A statement as a reason quotes it: its first line (a loop's body stays out)."""
    lines = ast.unparse(node).splitlines()
    return lines[0] + (" …" if len(lines) > 1 else "")


@dataclass
class Translation:
    name: str
    params: list[str]  # the reference's parameters: the kernel's, minus tl.constexpr ones
    constexprs: list[str]
    stored: list[str]  # pointer parameters the kernel writes
    loaded: list[str]
    body: list[str]
    kind: str  # "elementwise" or "row-reduction"
    covers: str = ""  # what the reference takes the launch's grid to cover (`_covers`), said in a TODO

    def source(self, fn_name: str | None = None) -> str:
        lines = [f"def {fn_name or self.name + '_reference'}({', '.join(self.params)}):"]
        lines.append(
            f'    """Plain-PyTorch reference of Triton kernel `{self.name}` ({self.kind}), derived by porter."""'
        )
        lines.extend(f"    # {line}" for line in textwrap.wrap(f"TODO(porter): {self.covers}", 96) if self.covers)
        lines.extend("    " + line for line in self.body)
        return "\n".join(lines) + "\n"


@dataclass
class _Sym:
    kind: str  # pid, pidscaled, arange, offs, rowstart, ptr, mask, value, scalar
    code: str = ""
    base: str = ""  # pointer parameter
    stride: str | None = None  # row stride (row-wise pointers)
    limit: str | None = None  # mask bound
    cols: bool = False
    extra: dict = field(default_factory=dict)


def _is_tl(node: ast.AST, tl: set[str], *names: str) -> str | None:
    """`tl.exp` / `tl.math.exp` → "exp" when it is one of `names` (any when empty)."""
    if isinstance(node, ast.Attribute):
        base = node.value
        if isinstance(base, ast.Attribute) and base.attr in ("math", "libdevice"):
            base = base.value
        if isinstance(base, ast.Name) and base.id in tl and (not names or node.attr in names):
            return node.attr
    return None


def _kw(call: ast.Call, name: str) -> ast.AST | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


# Triton's positions of the arguments of `tl.load` and `tl.store` that porter reads, each also given
# by keyword: `tl.load(pointer=p)` raised an IndexError (no scaffold at all), `tl.store(pointer=p,
# value=v)` was "without a value", a positional mask was read as none (twenty-fourth read)
_POSITIONS = {"load": ("pointer", "mask", "other"), "store": ("pointer", "value", "mask")}


def _memory_arg(call: ast.Call, op: str, name: str) -> ast.AST | None:
    at = _POSITIONS[op].index(name)
    return call.args[at] if len(call.args) > at else _kw(call, name)


def translate(source: str, name: str | None = None) -> Translation | None:
    """Translate the kernel `name` (or the first decorated function) of `source`."""
    try:
        return translate_or_raise(source, name)
    except Untranslatable:
        return None


def why_not(source: str, name: str | None = None) -> str | None:
    try:
        translate_or_raise(source, name)
    except Untranslatable as exc:
        return str(exc)
    return None


def translate_or_raise(source: str, name: str | None = None) -> Translation:
    tree = ast.parse(source)
    tl = {"tl"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            tl |= {a.asname or a.name for a in node.names if a.name == "triton.language"}
    fn = next(
        (
            n
            for n in tree.body
            if isinstance(n, ast.FunctionDef) and (name is None and n.decorator_list or n.name == name)
        ),
        None,
    )
    if fn is None:
        raise Untranslatable(f"no kernel {name!r} in the source")
    if _config_hooked(fn, tree):
        raise Untranslatable("a `triton.Config` of its autotune has a `pre_hook`, which runs before each launch")
    return _Translator(fn, tl).run()


def _config_hooked(fn: ast.FunctionDef, tree: ast.Module) -> bool:
    """Whether the kernel's `@triton.autotune` may run a config's `pre_hook` (`triton.Config({...}, pre_hook=f)`: Triton
    calls it before every launch, not only when tuning): its configs', or, given by a name, the module's. Read as
    the kernel alone, the derived reference of `pre_hook=` filling `out_ptr` before an `out += x` kernel left it
    out, and the reference and the kernel differed (Triton's interpreter: thirty-seventh read)."""
    tuned = [d for d in fn.decorator_list if isinstance(d, ast.Call) and ast.unparse(d.func).endswith("autotune")]
    if not tuned:
        return False
    configs = [c for d in tuned for c in ast.walk(d) if _is_config(c)]
    return any(_hooked(c) for c in configs or [c for c in ast.walk(tree) if _is_config(c)])


def _is_config(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] == "Config"


def _hooked(config: ast.AST) -> bool:
    """Whether a `Config(...)` call gives a `pre_hook` (by keyword, or sixth)."""
    assert isinstance(config, ast.Call)
    given = [k.value for k in config.keywords if k.arg in ("pre_hook", None)] + config.args[5:6]
    return any(not (isinstance(v, ast.Constant) and v.value is None) for v in given)


def _covers(rowwise: bool, bound: str) -> str:
    """What a derived reference takes the launch's grid to cover, said where it is written: a masked
    kernel writes the lanes of its grid below its bound, so the reference (`[:n]`, every row) equals
    it only where the launch runs enough programs, which only the launch knows (a grid of fewer
    programs writes fewer elements; the reference said nothing of it: twenty-third read's leftover)."""
    if rowwise:
        return (
            f"each row of the view is computed (its first `{bound}` columns); the kernel computes the rows its"
            " grid has programs for, so the two agree only where every launch runs one program per row"
            " (porter does not read the grid): check the launches"
        )
    return (
        f"the first `{bound}` elements are computed; the kernel writes its grid's lanes below `{bound}`, so"
        f" the two agree only where every launch runs `triton.cdiv({bound}, BLOCK)` programs or more"
        " (porter does not read the grid): check the launches"
    )


class _Translator:
    def __init__(self, fn: ast.FunctionDef, tl: set[str]) -> None:
        self.fn, self.tl = fn, tl
        self.env: dict[str, _Sym] = {}
        self.body: list[str] = []
        self.stored: list[str] = []
        self.loaded: list[str] = []
        self.rowwise = False
        self.flat = False
        self.written = _written(fn)
        self.bounds: dict[str | None, str] = {}  # a load's or store's mask bound (None: no mask) -> its code
        self.promotes = False  # the body calls `_as_triton` (Triton's promotion is not torch's)
        self.meets: list[frozenset[str]] = []  # where values meet: the loads and half casts each may be (`halves`)
        self.fixed = _unspecialized(fn)  # the parameters `do_not_specialize` names

    def run(self) -> Translation:
        params, constexprs = [], []
        for a in self.fn.args.args:
            ann = ast.unparse(a.annotation) if a.annotation is not None else ""
            if "constexpr" in ann:
                constexprs.append(a.arg)
                self.env[a.arg] = _Sym("constexpr", a.arg)
            else:
                params.append(a.arg)
                self.env[a.arg] = _Sym("param", a.arg)
        if self.fn.args.vararg or self.fn.args.kwarg or self.fn.args.kwonlyargs:
            raise Untranslatable("the kernel takes *args / **kwargs / keyword-only parameters")
        for stmt in self.fn.body:
            self.statement(stmt)
        if not self.stored:
            raise Untranslatable("the kernel stores nothing")
        if self.rowwise and self.flat:
            raise Untranslatable("the kernel mixes flat and row-wise indexing")
        # a tl.constexpr the body still names (a value, a mask's bound, a stride): the reference
        # takes only the launch's other arguments, and `* BLOCK` was a NameError when it ran
        named = {n.id for line in self.body for n in ast.walk(ast.parse(line)) if isinstance(n, ast.Name)}
        stray = [c for c in constexprs if c in named]
        if stray:
            raise Untranslatable(
                f"the math uses tl.constexpr `{stray[0]}`, whose value {_constexpr_giver(self.fn, stray[0])} "
                "(the reference takes the other arguments)"
            )
        self.covered()
        kind = "row-reduction" if self.rowwise else "elementwise"
        body = (_AS_TRITON if self.promotes else []) + self.halves() + self.body
        covers = _covers(self.rowwise, next((b for b in self.bounds if b), "n"))
        return Translation(self.fn.name, params, constexprs, self.stored, self.loaded, body, kind, covers)

    # statements ------------------------------------------------------------------------

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            return  # docstring
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            target = stmt.targets[0].id
            sym = self.expr(stmt.value)
            if sym.kind == "value":
                self.body.append(f"{target} = {sym.code}")
                sym = _Sym("value", target, extra=sym.extra)
            elif sym.kind == "scalar" and sym.code != target:
                self.body.append(f"{target} = {sym.code}")
                sym = _Sym("scalar", target, extra={"arg": sym.extra.get("arg", False)})
            self.env[target] = sym
            return
        if (
            isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Call)
            and _is_tl(stmt.value.func, self.tl, "store")
        ):
            call = stmt.value
            pointer, stored = _memory_arg(call, "store", "pointer"), _memory_arg(call, "store", "value")
            if pointer is None or stored is None:
                raise Untranslatable("`tl.store` without a pointer or a value")
            view = self.view(pointer, _memory_arg(call, "store", "mask"))
            value = self.expr(stored)
            if value.kind not in ("value", "scalar", "param"):
                raise Untranslatable("`tl.store` of an index, not a value")
            self.body.append(f"{view} = {value.code}")
            base = self.expr(pointer).base
            if base not in self.stored:
                self.stored.append(base)
            return
        # (counted from its `def`, the line the listing gives it: the line of the text read, which holds the blank
        # lines and comments above the decorator, was 2 and more past it: thirty-first read)
        line = stmt.lineno - self.fn.lineno + 1
        raise Untranslatable(f"statement not in the translatable forms: `{_shown(stmt)}` (line {line} of the kernel)")

    def view(self, ptr_node: ast.AST, mask_node: ast.AST | None) -> str:
        ptr = self.expr(ptr_node)
        if ptr.kind != "ptr":
            raise Untranslatable(f"`{ast.unparse(ptr_node)}` is not a pointer expression porter can follow")
        limit = None
        if mask_node is not None:
            mask = self.expr(mask_node)
            if mask.kind != "mask":
                raise Untranslatable(f"mask `{ast.unparse(mask_node)}` is not `offsets < n`")
            limit = mask.limit
        self.bounded(limit, ptr_node)
        if ptr.stride is not None:
            self.rowwise = True
            cols = f"[:, :{limit}]" if limit else "[:, :]"
            return f"{ptr.base}.view(-1, {ptr.stride}){cols}"
        if ptr.extra.get("flat"):
            self.flat = True
        return f"{ptr.base}.view(-1)" + (f"[:{limit}]" if limit else "[:]")  # (an unmasked store: `[:]`, assignable)

    def bounded(self, limit: str | None, ptr_node: ast.AST) -> None:
        """One bound for every load and store: a view is `[:n]` or `[:]`, so `x = tl.load(p + offs,
        mask=offs < n)` stored by `tl.store(q + offs, x)` (or under `offs < m`) assigned n values to
        the whole tensor (or m of it), and the "derived" reference raised where the kernel writes
        its grid's lanes (twenty-third read)."""
        self.bounds.setdefault(limit, ast.unparse(ptr_node))
        if len(self.bounds) > 1:
            a, b = (f"`{at}` " + (f"masked at `{limit}`" if limit else "unmasked") for limit, at in self.bounds.items())
            raise Untranslatable(
                f"its loads and stores stop at different bounds ({a}, {b}): the reference's views of them"
                " differ in length"
            )

    def covered(self) -> None:
        """A view of an unmasked kernel would be the whole tensor, where the kernel reads and writes
        only its grid's lanes (grid × BLOCK, the launch's, which the reference never sees): two
        programs of 32 over 128 elements wrote 64, the "derived" reference 128 (twenty-third read)."""
        if None in self.bounds:
            raise Untranslatable(
                f"no load or store is masked (`{self.bounds[None]}`): the kernel covers only its grid's"
                " lanes (grid × BLOCK, the launch's), which a whole-tensor reference cannot know"
            )

    # expressions -------------------------------------------------------------------------

    def expr(self, node: ast.AST) -> _Sym:
        if isinstance(node, ast.Name):
            return self.named(node)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return _Sym("scalar", number_literal(node.value))
        if isinstance(node, ast.Call):
            return _float_literal(node) or self.call(node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Not)):
            operand = self.value_like(node.operand)
            sign = {ast.USub: "-", ast.UAdd: "+", ast.Not: "~"}[type(node.op)]
            if sign == "~" and operand.kind == "scalar":
                # Triton takes `not` of a number as Python's (a constexpr): `x * (not 0)` is x; `~0`
                # is -1, and the reference computed -x (twenty-third read)
                sign = "not "
            pad = _pad(operand)
            pad = (
                -pad
                if isinstance(pad, float) and sign == "-"
                else (pad if sign == "+" or pad in (_FINITE, _NO_PAD) else None)
            )
            extra = {"arg": operand.extra.get("arg", False), **_kept(operand)}
            sym = _Sym(operand.kind, f"({sign}{operand.code})", extra=extra)
            return _with_pad(sym, pad)
        if isinstance(node, ast.BinOp):
            return self.binop(node)
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            cmp = self.compare(node)
            if cmp is not None:
                return cmp
        raise Untranslatable(f"expression not in the translatable forms: `{ast.unparse(node)}`")

    def named(self, node: ast.Name) -> _Sym:
        if node.id not in self.env:
            raise Untranslatable(f"unknown name `{node.id}`")
        sym = self.env[node.id]
        if sym.kind in ("param", "constexpr"):  # a runtime argument is typed, a constexpr weak
            return _Sym("scalar", node.id, extra={"arg": sym.kind == "param"})
        return sym

    def compare(self, node: ast.Compare) -> _Sym | None:
        """`offsets < n` is a mask (the bound a load or store stops at); a comparison of values is
        a value; None for any other comparison."""
        left, right = self.expr(node.left), self.expr(node.comparators[0])
        if left.kind in ("offs", "arange") and isinstance(node.ops[0], ast.Lt) and right.kind == "scalar":
            return _Sym("mask", limit=right.code)
        ops = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
        op = ops.get(type(node.ops[0]))
        if op and left.kind in ("value", "scalar") and right.kind in ("value", "scalar"):
            kind = "value" if "value" in (left.kind, right.kind) else "scalar"
            self.meet(left, right)  # (a bool: no half type after)
            return _Sym(kind, f"({left.code} {op} {right.code})")
        return None

    def value_like(self, node: ast.AST) -> _Sym:
        sym = self.expr(node)
        if sym.kind not in ("value", "scalar"):
            raise Untranslatable(f"`{ast.unparse(node)}` mixes indices into arithmetic")
        return sym

    def binop(self, node: ast.BinOp) -> _Sym:
        left, right = self.expr(node.left), self.expr(node.right)
        kinds = {left.kind, right.kind}
        if isinstance(node.op, ast.Add):
            # index algebra
            if kinds == {"pidscaled", "arange"}:
                return _Sym("offs")
            if left.kind == "rowstart" and right.kind == "arange" or right.kind == "rowstart" and left.kind == "arange":
                stride = left.stride if left.kind == "rowstart" else right.stride
                return _Sym("rowcols", stride=stride)
            index_kinds = ("offs", "rowstart", "rowcols", "arange")
            for ptr, other in ((left, right), (right, left)):
                if ptr.kind == "ptr":
                    return self.offset(ptr, other, node)
                if ptr.kind == "scalar" and ptr.code in self._params() and other.kind in index_kinds:
                    return self.offset(_Sym("ptr", base=ptr.code), other, node)
        if isinstance(node.op, ast.Mult) and kinds <= {"pid", "scalar"} and "pid" in kinds:
            other = right if left.kind == "pid" else left
            if self._is_block(other.code):
                return _Sym("pidscaled")
            return _Sym("rowstart", stride=other.code)
        if kinds <= {"value", "scalar"} and (type(node.op) in _OPS or type(node.op) in _C_OPS):
            return self.arithmetic(node, left, right)
        raise Untranslatable(f"arithmetic porter cannot follow: `{ast.unparse(node)}`")

    def arithmetic(self, node: ast.BinOp, left: _Sym, right: _Sym) -> _Sym:
        """Arithmetic of values and scalars; `%` and `//` as Triton computes them, C's (frem / srem,
        sdiv: the sign of the dividend, toward zero), where torch and Python floor: -1 % 3 is -1 in
        the kernel and was 2 in the "derived" reference, other numbers for every negative operand
        (eighteenth read)."""
        op = _OPS.get(type(node.op))
        if op is not None:
            kind = "value" if "value" in (left.kind, right.kind) else "scalar"
            arg = kind == "scalar" and (left.extra.get("arg", False) or right.extra.get("arg", False))
            div = op == "/"
            code = f"({self._typed(left, right, div)} {op} {self._typed(right, left, div)})"
            if div and left.kind == "scalar" and right.kind == "value":
                # torch's `number / tensor` is the tensor's reciprocal times the number, 1 ulp off
                # Triton's quotient in a quarter of fp32 values (twenty-fifth read's leftover)
                code = f"torch.div({self._typed(left, right, div)}, {self._typed(right, left, div)})"
            extra = _beside_argument(self.meet(left, right, div), left, right)
            sym = _Sym(kind, code, extra={"arg": arg, **extra})
            return _padded(sym, (left.kind, right.kind), (_pad(left), _pad(right)), op)
        if left.kind != "value" and right.kind != "value":
            raise Untranslatable(f"C's `{ast.unparse(node)}` of two scalars: porter does not translate it")
        div = isinstance(node.op, ast.Mod)
        first = self._typed(left, right, div) if left.kind == "value" else f"torch.as_tensor({left.code})"
        code = _C_OPS[type(node.op)].format(first, self._typed(right, left, div))
        return _Sym("value", code, extra=self.meet(left, right))

    def _typed(self, sym: _Sym, other: _Sym, div: bool = False) -> str:
        """`sym`'s code, a value in the dtype Triton computes it with `other` in (`div`: in `/` or
        `%`). A compiled kernel takes a scalar argument as a typed tensor (a float as fp32), torch a
        Python number as weak; and Triton divides fp16/bf16 in fp32 even by a literal: an fp16 value
        divided by `s * s + 1.0` was fp16 in the reference, fp32 in the kernel (0.005 apart after
        three operations: twenty-second read)."""
        arg = other.kind == "scalar" and other.extra.get("arg", False)
        if sym.kind != "value" or not (arg or div):
            return sym.code
        self.promotes = True
        fixed = ", specialized=False" if arg and other.code in self.fixed else ""
        return f"_as_triton({sym.code}{', ' + other.code if arg else ''}{', div=True' if div else ''}{fixed})"

    def meet(self, a: _Sym, b: _Sym, div: bool = False) -> dict[str, object]:
        """Values `a` and `b` meet in one operation (`div`: a `/`): recorded where both may be of a
        half type (`halves`); the result's `extra`. Where one is computed in fp32 or wider (`_WIDE`),
        or in a `/` (fp32 for halves: `computation_type_impl`'s rules 2 to 4), Triton and torch both
        compute in fp32 and the result is no half: `a.to(tl.float32) * h` was still counted as `h`'s
        type where it met a bf16 value, and the reference refused (twenty-fourth read's leftover)."""
        if div or _wide(a) or _wide(b):
            return {_HALF: frozenset(), _WIDE: True}
        if _halves(a) and _halves(b):
            self.meets.append(_halves(a) | _halves(b))
        return {_HALF: _halves(a) | _halves(b)}

    def halves(self) -> list[str]:
        """Where fp16 and bf16 may meet, the reference's first lines: Triton computes their mix in fp16
        (`computation_type_impl`'s rule 3 comes before bf16's), torch in fp32, so a product of an fp16
        and a bf16 load was 0.0078 apart from the kernel's (under TRITON_INTERPRET=1, as compiled).
        Casts to both meeting: not derived; loads that may be both (only the call tells): it raises
        there, saying why. Values cast to fp32 (or any other type) before they meet are not checked:
        all loads were, and loads of fp16 and bf16 each cast to fp32 were refused (twenty-fourth read)."""
        checks: list[str] = []
        for met in dict.fromkeys(self.meets):
            casts = sorted(o for o in met if o.startswith("torch."))
            loaded = sorted(o for o in met if not o.startswith("torch."))
            if len(casts) == 2:
                raise Untranslatable(_HALVES_WHY)
            if len(loaded) + len(casts) >= 2:
                checks.append(
                    f"_one_half_type(({''.join(f'{n}, ' for n in loaded)}), ({''.join(f'{c}, ' for c in casts)}))"
                )
        return _HALVES + checks if checks else []

    def offset(self, ptr: _Sym, other: _Sym, node) -> _Sym:
        if ptr.stride is None and not ptr.cols:
            if other.kind == "offs":
                return _Sym("ptr", base=ptr.base, cols=True, extra={"flat": True})
            if other.kind == "arange":  # a per-column vector (weights) in a row-wise kernel
                return _Sym("ptr", base=ptr.base, cols=True)
            if other.kind == "rowstart":
                return _Sym("ptr", base=ptr.base, stride=other.stride)
            if other.kind == "rowcols":
                return _Sym("ptr", base=ptr.base, stride=other.stride, cols=True)
        if ptr.stride is not None and not ptr.cols and other.kind == "arange":
            return _Sym("ptr", base=ptr.base, stride=ptr.stride, cols=True)
        raise Untranslatable(f"pointer arithmetic porter cannot follow: `{ast.unparse(node)}`")

    def _params(self) -> set[str]:
        return {a.arg for a in self.fn.args.args if self.env.get(a.arg, _Sym("")).kind == "param"}

    def _is_block(self, code: str) -> bool:
        return code in self.env and self.env[code].kind == "constexpr"

    def call(self, node: ast.Call) -> _Sym:
        sym = self.index_call(node) or self.math_call(node)
        if sym is None:
            raise Untranslatable(f"call porter cannot translate: `{ast.unparse(node)}`")
        return sym

    def index_call(self, node: ast.Call) -> _Sym | None:
        """The calls that make indices and read memory: `tl.program_id(0)`, `tl.arange(0, …)`,
        `tl.load` (None for any other call)."""
        tl = self.tl
        f = node.func
        if _is_tl(f, tl, "program_id"):
            axis = node.args[0] if node.args else _kw(node, "axis")
            if not (isinstance(axis, ast.Constant) and axis.value == 0):
                raise Untranslatable("a grid over more than one axis")
            return _Sym("pid")
        if _is_tl(f, tl, "arange"):
            if not (node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value == 0):
                raise Untranslatable("`tl.arange` not starting at 0")
            return _Sym("arange")
        if _is_tl(f, tl, "load"):
            pointer, mask = _memory_arg(node, "load", "pointer"), _memory_arg(node, "load", "mask")
            if pointer is None:
                raise Untranslatable("`tl.load` without a pointer")
            view = self.view(pointer, mask)
            base = self.expr(pointer).base
            if base not in self.loaded:
                self.loaded.append(base)
            if base in self.written:
                # a view reads what a later store writes, the kernel's load what was there before
                # (`x = tl.load(p)`, `tl.store(p, x * 2)`, `tl.store(q, x)` stored 2x in q; 22nd read)
                view += ".clone()"
            other = _memory_arg(node, "load", "other")
            pad: object = _NO_PAD if mask is None else None
            if other is not None and pad is None:
                pad = _constant(ast.unparse(other))
            return _with_pad(_Sym("value", view, extra={_HALF: frozenset([base])}), pad)
        return None

    def math_call(self, node: ast.Call) -> _Sym | None:
        """Elementwise math, `tl.where`, reductions over axis 0 and `.to(dtype)` on values (None
        for any other call)."""
        f = node.func
        name = _is_tl(f, self.tl)
        if name in _UNARY and len(node.args) == 1:
            x = self.value_like(node.args[0])
            code = f"{_UNARY[name]}({_as_tensor(x)})"
            return _with_pad(_Sym("value", code, extra=_kept(x)), _unary_pad(name, _pad(x)))
        if name in _BINARY and len(node.args) == 2:
            a, b = (self.value_like(x) for x in node.args)
            pads = (_pad(a), _pad(b))
            numbers = [p for p in pads if isinstance(p, float)]
            pick = max if name == "maximum" else min
            pad = pick(numbers) if len(numbers) == 2 else (pads[0] if pads[0] == pads[1] else None)
            met = self.meet(a, b)
            a, b = _Sym(a.kind, self._typed(a, b), extra=a.extra), _Sym(b.kind, self._typed(b, a), extra=b.extra)
            code = f"{_BINARY[name]}({self._tensor(a)}, {self._tensor(b, like=a)})"
            return _with_pad(_Sym("value", code, extra=met), pad)
        if name == "where" and len(node.args) == 3:
            c, a, b = (self.value_like(x) for x in node.args)
            pad = _pad(a) if _pad(a) == _pad(b) else None
            code = f"torch.where({_as_tensor(c)}, {self._typed(a, b)}, {self._typed(b, a)})"
            return _with_pad(_Sym("value", code, extra=self.meet(a, b)), pad)
        if name in _REDUCE:
            return self.reduction(node, name)
        if isinstance(f, ast.Attribute) and f.attr == "to" and len(node.args) == 1:
            # `bitcast=True` keeps the bits, but was derived as `.to(torch.int32)`, the values' (twenty-ninth read)
            if node.keywords:
                raise Untranslatable(
                    f"`{ast.unparse(node)}` is a cast with keywords (`bitcast=`, a rounding): "
                    "porter translates a cast of values only"
                )
            x = self.value_like(f.value)
            dt = node.args[0]
            if isinstance(dt, ast.Attribute) and dt.attr in _DTYPES:
                pad = _pad(x) if dt.attr.startswith(("float", "bfloat")) or not isinstance(_pad(x), float) else None
                half = frozenset([f"torch.{dt.attr}"]) if dt.attr in ("float16", "bfloat16") else frozenset()
                extra = {_HALF: half, _WIDE: dt.attr in ("float32", "float64")}
                return _with_pad(_Sym("value", f"{_as_tensor(x)}.to(torch.{dt.attr})", extra=extra), pad)
        return None

    def reduction(self, node: ast.Call, name: str) -> _Sym:
        """`tl.sum(x, axis=0)` over a row, where the masked-out lanes of `x` hold its identity."""
        axis = node.args[1] if len(node.args) > 1 else _kw(node, "axis")
        if not (isinstance(axis, ast.Constant) and axis.value == 0):
            raise Untranslatable("a reduction over an axis other than 0")
        x = self.value_like(node.args[0])
        pad = _pad(x)
        if pad != _NO_PAD and pad != _IDENTITY[name]:
            held = f"hold {number_literal(pad)}" if isinstance(pad, float) else "are not known to hold it"
            raise Untranslatable(
                f"`{ast.unparse(node)}` takes the block's masked-out lanes too, and they {held}, not "
                f"{number_literal(_IDENTITY[name])} (`other=` of the loads)"
            )
        self.rowwise = True
        return _with_pad(
            _Sym("value", f"{x.code}.{_REDUCE[name]}(dim=-1, keepdim=True)", extra=_kept(x)),
            _FINITE if pad != _NO_PAD else _NO_PAD,
        )

    @staticmethod
    def _tensor(sym: _Sym, like: _Sym | None = None) -> str:
        if sym.kind == "value":
            return sym.code
        ref = like.code if like is not None and like.kind == "value" else None
        if ref is None:
            return f"torch.tensor({sym.code})"
        # the dtype both promote to, as the kernel's: `full_like` of an int32 value took a float
        # scalar as an int (`tl.maximum(x.to(tl.int32), s)`, s=-1.84: the max of -1; 22nd read)
        return f"torch.full_like({ref}, {sym.code}, dtype=torch.result_type({ref}, {sym.code}))"


# Triton's promotion where it is not torch's, written once into a reference whose math needs it.
# Triton 3.5's source: a compiled kernel's argument is a tensor of the type `mangle_type` gives it
# (runtime/jit.py: a float "fp32", an int "i32", "i64" past it), which promotes as a tensor does;
# a literal or constexpr is weak (`computation_type_impl`, language/semantic.py), as in torch; and
# `/` and `%` of fp16 or bf16 are computed in fp32 (there, rules 3 and 4).
# An int argument equal to 1 is compiled as a constexpr (`specialize_impl`, runtime/jit.py), a weak
# number, unless `do_not_specialize` names it: an int8 value times it stays int8 (the interpreter
# types it as i32, as any other int; the reference follows the compiled kernel, which ran on CUDA).
_AS_TRITON = [
    "def _as_triton(v, s=None, div=False, specialized=True):",
    '    """`v` in the dtype Triton computes it in beside the argument `s` (in `/` or `%`: `div`)."""',
    "    if isinstance(s, float):",
    "        v = v.to(torch.promote_types(v.dtype, torch.float32))",
    "    elif isinstance(s, int) and not isinstance(s, bool) and not (s == 1 and specialized):",
    "        v = v.to(torch.promote_types(v.dtype, torch.int32 if -(2**31) <= s < 2**31 else torch.int64))",
    "    return v.to(torch.float32) if div and v.dtype in (torch.float16, torch.bfloat16) else v",
]


_HALF = "halves"  # a value's `extra`: the loads (by pointer) and half casts (`torch.float16`) it may be typed as


def _halves(sym: _Sym) -> frozenset[str]:
    return sym.extra.get(_HALF, frozenset())


def _beside_argument(extra: dict[str, object], left: _Sym, right: _Sym) -> dict[str, object]:
    """`extra` of a value computed with a scalar argument (`x * s`): each half type it may be, as
    `_as_triton` types it beside the argument (fp32 where the call passes a float), which only the
    call tells. `x * s` of a float `s` was still an fp16 `x`'s, and meeting a bf16 value the
    reference raised, though Triton and it compute the product in fp32 (twenty-seventh read)."""
    args = [o for o in (left, right) if o.kind == "scalar" and o.extra.get("arg", False)]
    if not args or "value" not in (left.kind, right.kind) or not extra.get(_HALF):
        return extra
    s = args[0].code
    typed = [
        f"_as_triton(torch.empty(0, dtype={h}), {s})" if h.startswith("torch.") else f"_as_triton({h}, {s})"
        for h in sorted(_halves_of(extra))
    ]
    return {**extra, _HALF: frozenset(typed)}


def _halves_of(extra: dict[str, object]) -> frozenset[str]:
    found = extra.get(_HALF, frozenset())
    return found if isinstance(found, frozenset) else frozenset()


# a value's `extra`: True where Triton computes it in fp32 or fp64 whatever its loads' types (a cast to
# them, a `/`, or arithmetic with such a value); a `%` is not (of ints it stays an int)
_WIDE = "wide"


def _wide(sym: _Sym) -> bool:
    return bool(sym.extra.get(_WIDE, False))


def _kept(sym: _Sym) -> dict[str, object]:
    """The `extra` of an elementwise function of `sym` alone (`-x`, `tl.exp(x)`, `tl.sum(x)`): its types."""
    return {_HALF: _halves(sym), _WIDE: _wide(sym)}


_HALVES_WHY = (
    "it meets fp16 and bf16 values, whose mix Triton computes in fp16 and torch in fp32: porter does not derive it"
)
_HALVES = [
    "def _one_half_type(tensors, casts):",
    '    """Raise where fp16 and bf16 may meet (Triton computes their mix in fp16, torch in fp32)."""',
    "    if {torch.float16, torch.bfloat16} <= {t.dtype for t in tensors} | set(casts):",
    "        raise NotImplementedError(",
    "            'fp16 and bf16 tensors meet: Triton computes their mix in fp16, torch in fp32 (porter: not derived)'",
    "        )",
]


def _unspecialized(fn: ast.FunctionDef) -> set[str]:
    """The parameters of kernel `fn` its `@triton.jit(do_not_specialize=[...])` names (by name or
    index): an int argument of them equal to 1 stays an i32, not a constexpr."""
    names = [a.arg for a in fn.args.args]
    out: set[str] = set()
    for deco in fn.decorator_list:
        given = _kw(deco, "do_not_specialize") if isinstance(deco, ast.Call) else None
        for e in given.elts if isinstance(given, (ast.List, ast.Tuple)) else []:
            if isinstance(e, ast.Constant) and isinstance(e.value, str):
                out.add(e.value)
            elif isinstance(e, ast.Constant) and isinstance(e.value, int) and 0 <= e.value < len(names):
                out.add(names[e.value])
    return out


def _as_tensor(sym: _Sym) -> str:
    """A value's code, a scalar's as a tensor: in a kernel a scalar argument or literal is a tensor
    too (`tl.ceil(s)`, `s.to(tl.float32)`, `tl.where(s > 0, ...)`), in torch a number has no
    `.to` and `torch.ceil(2.5)` is a TypeError (`(3).to(...)` gave `3.to(...)`, no Python: 22nd read)."""
    return sym.code if sym.kind == "value" else f"torch.as_tensor({sym.code})"


# -- what each parameter is, for a kernel the translation does not cover ----------------------

_POINTER_CALLS = {
    "load",
    "store",
    "advance",
    "make_block_ptr",
    "atomic_add",
    "atomic_max",
    "atomic_min",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "atomic_xchg",
    "atomic_cas",
}
_WRITES = {
    "store",
    "atomic_add",
    "atomic_max",
    "atomic_min",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "atomic_xchg",
    "atomic_cas",
}
_PASSING = {
    "broadcast_to",
    "reshape",
    "view",
    "expand_dims",
    "multiple_of",
    "max_contiguous",
    "max_constancy",
    "advance",
}


@dataclass
class Roles:
    """What a Triton kernel's parameters are, read from how the body uses them."""

    pointers: list[str]  # the base of a pointer that is loaded, stored or atomically updated
    stored: list[str]  # pointers the kernel writes through (`tl.store`, `tl.atomic_*`)
    indices: list[str]  # scalars used in address arithmetic or masks: integers


def roles(source: str, name: str | None = None) -> Roles | None:
    """The roles of the kernel `name`'s parameters, or None when the source cannot be read.

    A parameter is a pointer when it is an added term of the address a `tl.load`,
    `tl.store`, `tl.atomic_*` or `tl.make_block_ptr(base=...)` uses (followed through
    assignments: `ptrs = x_ptr + offs`), not when it is multiplied into one (a stride)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return None
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and (name is None or n.name == name)), None)
    if fn is None:
        return None
    params = [a.arg for a in fn.args.args]
    flow = _Flow(_assignments(fn))
    pointers: set[str] = set()
    stored: set[str] = set()
    address: set[str] = set()
    for node in ast.walk(fn):
        if not (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _POINTER_CALLS
        ):
            continue
        ptr = node.args[0] if node.args else (_kw(node, "pointer") or _kw(node, "base") or _kw(node, "ptr"))
        if ptr is None:
            continue
        found = flow.bases(ptr) & set(params)
        pointers |= found
        if node.func.attr in _WRITES:
            stored |= found
        address |= flow.address_names(node, ptr)
    return Roles(
        pointers=[p for p in params if p in pointers],
        stored=[p for p in params if p in stored],
        indices=[p for p in params if p in address and p not in pointers],
    )


def number_literal(value: int | float) -> str:
    """Python source for the number `value` of a kernel's literal: `repr` is no literal for a
    float the parser rounded to infinity (`1e400` is `inf`, a name the reference does not
    define: a NameError when it runs) or for an integer past the digits `str` converts
    (`0x` and 5,000 hex digits: a ValueError, and the kernel got no scaffold at all)."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({str(value)!r})"
    try:
        return repr(value)
    except ValueError:  # an int: no digit limit on a power-of-two base
        return hex(int(value))


def _float_literal(node: ast.Call) -> _Sym | None:
    """`float("inf")` and the like: a scalar (None for any other call)."""
    if isinstance(node.func, ast.Name) and node.func.id == "float" and len(node.args) == 1:
        inner = node.args[0]
        if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
            return _Sym("scalar", f"float({inner.value!r})")
    return None


def _written(fn: ast.FunctionDef) -> set[str]:
    """The names a `tl.store`'s address is a sum of (through assignments): a parameter the kernel
    writes, whose loads must not be views."""
    flow = _Flow(_assignments(fn))
    return {
        base
        for node in ast.walk(fn)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "store"
        and (pointer := _memory_arg(node, "store", "pointer")) is not None
        for base in flow.bases(pointer)
    }


def _assignments(fn: ast.FunctionDef) -> dict[str, list[ast.AST]]:
    """Every value each name is assigned in the kernel (`=`, `+=`, annotated), so that an address
    can be followed back to the parameters it is made of."""
    assigned: dict[str, list[ast.AST]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for t in ast.walk(target):
                    if isinstance(t, ast.Name):
                        assigned.setdefault(t.id, []).append(node.value)
        elif (
            isinstance(node, (ast.AugAssign, ast.AnnAssign))
            and isinstance(node.target, ast.Name)
            and node.value is not None
        ):
            assigned.setdefault(node.target.id, []).append(node.value)
    return assigned


class _Flow:
    """Names followed through a kernel's assignments."""

    def __init__(self, assigned: dict[str, list[ast.AST]]) -> None:
        self.assigned = assigned

    def bases(self, node: ast.AST, seen: frozenset[str] = frozenset()) -> set[str]:
        """The names an address is a sum of (through assignments)."""
        if isinstance(node, ast.Name):
            if node.id in seen:
                return set()
            out = {node.id}
            for value in self.assigned.get(node.id, ()):
                out |= self.bases(value, seen | {node.id})
            return out
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            return self.bases(node.left, seen) | self.bases(node.right, seen)
        if isinstance(node, ast.Subscript):
            return self.bases(node.value, seen)
        if isinstance(node, ast.IfExp):
            return self.bases(node.body, seen) | self.bases(node.orelse, seen)
        if isinstance(node, ast.Call):
            return self.call_bases(node, seen)
        return set()

    def call_bases(self, node: ast.Call, seen: frozenset[str]) -> set[str]:
        """The bases of a call that passes a pointer through: `tl.make_block_ptr(base=…)`, a
        reshape or hint (`tl.multiple_of`, …), `.to(…)`."""
        attr = node.func.attr if isinstance(node.func, ast.Attribute) else None
        if attr == "make_block_ptr":
            base = node.args[0] if node.args else _kw(node, "base")
            return self.bases(base, seen) if base is not None else set()
        if attr in _PASSING or attr == "to":
            first = node.args[0] if node.args and attr != "to" else getattr(node.func, "value", None)
            return self.bases(first, seen) if first is not None else set()
        return set()

    def names(self, node: ast.AST, seen: frozenset[str] = frozenset()) -> set[str]:
        """Every name an expression uses (through assignments)."""
        out: set[str] = set()
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and n.id not in seen:
                out.add(n.id)
                for value in self.assigned.get(n.id, ()):
                    out |= self.names(value, seen | {n.id})
        return out

    def address_names(self, node: ast.Call, ptr: ast.AST) -> set[str]:
        """The names a memory access computes its address from: the pointer, the mask, and a
        block pointer's shape, strides and offsets (these are indices, not values)."""
        address = self.names(ptr)
        attr = node.func.attr if isinstance(node.func, ast.Attribute) else None
        mask = _memory_arg(node, attr, "mask") if attr in _POSITIONS else _kw(node, "mask")
        if mask is not None:
            address |= self.names(mask)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "make_block_ptr":
            for kw in node.keywords:
                if kw.arg in ("shape", "strides", "offsets"):
                    address |= self.names(kw.value)
        return address
