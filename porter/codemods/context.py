"""What every codemod family shares while one file is rewritten.

Families report sites through `PortContext.report`, which decides from the rule data and
the settings whether the fix is applied, so no family decides selection or fix safety.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from porter.codemods import cstwalk
import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from porter.core.findings import Applicability, Finding, Position
from porter.analysis.generic import keeps_generic_selection, selects_generically
from porter.analysis.kinds import ModuleKind
from porter.analysis.positions import Units, positions, statement_positions
from porter.analysis.resolve import (
    ImportTable,
    Resolver,
    ScopeStack,
    dotted,
    import_bindings,
    imported_modules,
    name_assignments,
    small_statements,
)
from porter.config.ruledata import Rule, all_rules, rule_computed, rule_enabled
from porter.config.settings import Settings
from porter.core.suppressions import Suppressions
from porter.config.targets import Target, get_target, portable_spellings
from porter.codemods import device_helper


_ALIASED_MODULES = (
    ("torch_xla.core.xla_model", "xm"),
    ("torch_xla.runtime", "xr"),
    ("torch_xla.distributed.parallel_loader", "pl"),
)
_ALIAS_MODULE = {alias: module for module, alias in _ALIASED_MODULES}


def one_line(code: str, limit: int) -> str:
    """Code as a message quotes it: one line, at most `limit` characters. Quoted as written, code
    over several lines put its line breaks and comments into the finding (`\\x0a` in `concise`,
    `%0A` in a GitHub annotation) and a long one all of its text (twenty-eighth read)."""
    code = " ".join(code.split())
    return code if len(code) <= limit else code[: limit - 3] + "..."


@dataclass
class _Pending:
    rule: Rule
    node: cst.CSTNode
    message: str
    applicability: Applicability
    applied: bool
    replacement: str | None
    advice: str | None
    statement: cst.CSTNode | None


@dataclass
class CudaOnlyCode:
    """Code that only ever runs on CUDA (porter/codemods/guards.py): no family changes it, since
    the target never runs it; the codes it would have applied there are reported (GUARD003)."""

    node: cst.CSTNode  # where it is reported
    what: str  # "`def f`", "the code behind `if x.is_cuda`"
    why: str
    left: list[str] = field(default_factory=list)  # the fixes not applied in it
    # the rule that reports it: GUARD003 (guards.py), or a backends rule (backends.py)
    code: str = "GUARD003"
    # it takes the findings without a fix inside it too (CUDA's own branch or class of a device
    # switch: one finding speaks for it); elsewhere those are reported as anywhere
    quiet: bool = False
    # what the finding says instead of "... only runs on CUDA": code left for another reason,
    # reported by the family that left it (backends.py: a build script)
    note: str | None = None


@dataclass
class StatementEdits:
    """Statement-level edits, keyed by the id of the original small statement."""

    remove: set[int] = field(default_factory=set)
    replace: dict[int, list[cst.BaseSmallStatement]] = field(default_factory=dict)


class PortContext:
    def __init__(
        self,
        *,
        wrapper: MetadataWrapper,
        path: str,
        settings: Settings,
        suppressions: Suppressions,
        source: bytes = b"",
    ) -> None:
        self.source = source
        # --portable: the name of the module's device helper once a site asked for it, and its code
        self.device_helper: str | None = None
        self.device_helper_code = ""
        # True while a family none of whose rules is reported (`--select` others) runs for the
        # facts it gives the others: it may request no import (porter.codemods.composite)
        self.muted = False
        self.wrapper = wrapper
        self.module = wrapper.module
        self.path = path
        self.settings = settings
        self.target: Target = get_target(settings.target)
        self.suppressions = suppressions
        self.imports = ImportTable.from_module(self.module)
        self.imports.bind_torch_from_star(source)
        self.scopes = ScopeStack()
        self.resolver = Resolver(self.imports, self.scopes)
        self.codemod_context = CodemodContext(filename=path)
        self.statement_edits = StatementEdits()
        self.statement_of: dict[int, cst.BaseSmallStatement] = {}  # id(expr) -> statement
        self.current_statements: list[cst.CSTNode] = []
        self._pending: list[_Pending] = []
        # a module moved after something took its parameters (XLA005 keeps them on xla)
        self.moves_parameters = False
        self.applied = 0  # fixes applied so far: the statement walker tells rewritten lines by it
        self.new_text: str | None = None  # the rewritten module's code, when already generated
        # nodes that stay CUDA: checks guarding CUDA-only code, kernel registrations, strings
        # that are not devices (porter/codemods/guards.py, literals.py); families skip them
        self.keep_cuda: set[int] = set()
        # id(statement) -> the code that only runs on CUDA it belongs to: left as it is
        self.cuda_only_code: dict[int, CudaOnlyCode] = {}
        # of those, what a device-generic project keeps (literals.py): reported as kept
        self.keep_generic: set[int] = set()
        # and `"cuda"` in a vocabulary of GPU platforms or accelerators (literals.py): noted
        self.keep_vocabulary: set[int] = set()
        # and a package's public default device (literals.py): id -> the parameter, reported (DEV016)
        self.keep_public_default: dict[int, str] = {}
        # and, in a package, the autocast state a `custom_fwd(device_type=...)` reads (literals.py):
        # id -> the callable, reported (DEV017)
        self.keep_autocast_state: dict[int, str] = {}
        # and `"cuda"` compared in a branch that reads CUDA's autocast state with no device type
        # (literals.py): id -> the call, reported (DEV005)
        self.keep_cuda_autocast_branch: dict[int, str] = {}
        # and `"cuda"` compared in a branch that calls a `.cuda()` the file defines itself, kept as
        # CUDA's (literals.py): id -> the call, reported (DEV005)
        self.keep_cuda_method_branch: dict[int, str] = {}
        # and a generator's device where the target has no device generator (literals.py): reported (DEV002)
        self.keep_generator_device: set[int] = set()
        # and, in a package, `x.is_cuda` choosing CUDA's implementation beside the generic one in
        # its `else` (literals.py): reported (DEV004)
        self.cuda_beside_fallback: set[int] = set()
        # values a library family ports in the library's own vocabulary (hf.py: `device_map`,
        # `ddp_backend`, a loader's `dtype`): the device, distributed and amp families leave them
        self.claimed: set[int] = set()
        self.suppressed: list[Finding] = []
        # ports a piece of code on its own, with these settings but no cross-file facts: (the
        # ported bytes or None, its findings). Set by porter.codemods.apply (a family may not
        # import the pipeline); None where a context is made without it.
        self.port_snippet: Callable[[bytes], tuple[bytes | None, list[Finding]]] | None = None
        self._positions: Mapping[cst.CSTNode, CodeRange] | None = None
        self._cheap_positions: dict[int, tuple[Position, Position]] = {}
        # what is reported and applied (`--select`, `--ignore`), and what is computed: every
        # rule a run without `--select` would enable (`rule_computed`), so that a family's
        # analysis that serves another rule runs whenever that rule is selected
        self._reported = {
            code: rule_enabled(rule, settings.target, settings.select, settings.ignore, settings.extend_select)
            for code, rule in all_rules().items()
        }
        self._enabled = {
            code: rule_computed(rule, settings.target, settings.select, settings.ignore, settings.extend_select)
            for code, rule in all_rules().items()
        }
        self.file_ignored_codes = suppressions.file_codes
        self._generic: bool | None = None
        self._module_bound: set[str] | None = None
        self._own_tops: frozenset[str] | None = None
        # id(original def) -> modules to import at the top of its body (the module's own lazy style)
        self.local_imports: dict[int, list[tuple[str, str | None]]] = {}

    @property
    def own_top_modules(self) -> frozenset[str]:
        """The top-level modules of the project's own that this file's `import NAME` finds in
        place of a package porter knows by that name (porter.pipeline.runner's facts)."""
        if self._own_tops is None:
            flow = self.settings.flow or ()
            self._own_tops = frozenset(f[1] for f in flow if f[0] is None and f[2] == ModuleKind.OWN_TOP)
        return self._own_tops

    def owns_module(self, qualname: str) -> bool:
        """Whether `qualname` (`cuda.sync`) is under one of `own_top_modules`."""
        return bool(self.own_top_modules) and qualname.split(".")[0] in self.own_top_modules

    @property
    def device_generic(self) -> bool:
        """The project picks its device generically and the target keeps that selection, so
        the port still runs on CUDA (porter.analysis.generic): CUDA settings that are harmless on the
        target stay."""
        if self._generic is None:
            self._generic = keeps_generic_selection(self.settings) and (
                self.settings.generic or selects_generically(self.source)
            )
        return self._generic

    # -- selection -------------------------------------------------------------------------

    def enabled(self, code: str) -> bool:
        """Whether the analysis of rule `code` runs (its facts may serve another rule); whether
        it is reported, and its fix applied, is `reports`."""
        if not self._enabled.get(code, False):
            return False
        return not any(code.startswith(c) for c in self.file_ignored_codes)

    def reports(self, code: str) -> bool:
        """Whether a finding of `code` is reported and its fix applied (`--select`, `--ignore`)."""
        return self._reported.get(code, False) and self.enabled(code)

    def qualname(self, node: cst.BaseExpression) -> str | None:
        return self.resolver.qualname(node)

    # -- positions -------------------------------------------------------------------------

    def position(self, node: cst.CSTNode) -> tuple[Position, Position]:
        """Where `node` is. During the pass (suppressions need it) from libcst's provider;
        at the end, for all findings at once, from `porter.analysis.positions` (much cheaper)."""
        cached = self._cheap_positions.get(id(node))
        if cached is not None:
            return cached
        if self._positions is None:
            self._positions = self.wrapper.resolve(PositionProvider)
        rng = self._positions[node]
        return (
            Position(rng.start.line, rng.start.column),
            Position(rng.end.line, rng.end.column),
        )

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    # -- reporting -------------------------------------------------------------------------

    def report(
        self,
        code: str,
        node: cst.CSTNode,
        message: str,
        *,
        replacement: cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel[Any] | None = None,
        applicability: Applicability | None = None,
        advice: str | None = None,
    ) -> bool:
        """Record a finding at `node`; True when the caller should apply its fix. A rule that is
        computed but not reported (`--select` another) records nothing and applies nothing, but
        still tells the CUDA-only code it is in which fix it leaves there (GUARD003, BACK007 say
        so, and report the code only where something was left)."""
        if not self.enabled(code):
            return False
        rule = all_rules()[code]
        if applicability is None:
            applicability = rule.applicability_for(self.target.name)
        if replacement is None and applicability is not Applicability.MANUAL:
            applicability = Applicability.MANUAL
        fixes = applicability is Applicability.SAFE or (
            applicability is Applicability.UNSAFE and self.settings.unsafe_fixes
        )
        if self.cuda_only_code:
            region = self.in_cuda_only_code()
            # a fix, applied or only offered (an unsafe one without --unsafe-fixes), is wrong in
            # code the target never runs: the region's, said by GUARD003; elsewhere a finding
            # without a fix is reported as anywhere
            if region is not None and (fixes or replacement is not None or region.quiet):
                region.left.append(code)
                return False
        if not self._reported.get(code, False):
            return False
        if self.suppressions.by_line and self.suppressions.may_silence(code):
            start, end = self.position(node)
            lines = (start.line,) if start.line == end.line else (start.line, end.line)
            hit = self.suppressions.matching(code, lines)
            if hit is not None:
                self.suppressed.append(
                    self._finding(_Pending(rule, node, message, applicability, False, None, advice, None))
                )
                return False
        applied = applicability is Applicability.SAFE or (
            applicability is Applicability.UNSAFE and self.settings.unsafe_fixes
        )
        text = self.code_of_new(replacement) if replacement is not None else None
        statement = self.current_statements[-1] if self.current_statements else None
        self._pending.append(_Pending(rule, node, message, applicability, applied, text, advice, statement))
        self.applied += applied
        return applied

    def would_apply(self, code: str, node: cst.CSTNode, applicability: Applicability) -> bool:
        """Whether `report` would apply a fix of this kind at `node` (records nothing)."""
        if not self.reports(code):
            return False
        if self.cuda_only_code and self.in_cuda_only_code():
            return False  # no fix there
        if self.suppressions.by_line and self.suppressions.may_silence(code):
            start, end = self.position(node)
            if self.suppressions.matching(code, (start.line, end.line)) is not None:
                return False
        return applicability is Applicability.SAFE or (
            applicability is Applicability.UNSAFE and self.settings.unsafe_fixes
        )

    def in_cuda_only_code(self) -> CudaOnlyCode | None:
        """The code that only runs on CUDA the current statement is in, if any."""
        for stmt in reversed(self.current_statements):
            region = self.cuda_only_code.get(id(stmt))
            if region is not None:
                return region
        return None

    def code_of_new(self, node: cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel[Any]) -> str:
        if isinstance(node, cst.FlattenSentinel):
            return "\n".join(self.module.code_for_node(n) for n in node.nodes)
        if isinstance(node, cst.RemovalSentinel):
            return ""
        return self.module.code_for_node(node)

    def supersede(self, subtree: cst.CSTNode) -> None:
        """Drop findings inside `subtree`: a parent's rewrite replaced the whole of it."""
        if not self._pending:
            return
        inside: set[int] = set()
        stack = [subtree]
        while stack:
            n = stack.pop()
            inside.add(id(n))
            stack.extend(cstwalk.children(n))
        self._pending = [p for p in self._pending if id(p.node) not in inside]

    def manual_sites_in(self, statement: cst.CSTNode) -> list[_Pending]:
        return [p for p in self._pending if p.statement is statement and not p.applied]

    def _finding(self, p: _Pending) -> Finding:
        start, end = self.position(p.node)
        return Finding(
            code=p.rule.code,
            name=p.rule.name,
            message=p.message,
            path=self.path,
            start=start,
            end=end,
            severity=p.rule.severity,
            applicability=p.applicability,
            target=self.target.name,
            replacement=p.replacement,
            original=self.code(p.node) if p.replacement is not None else None,
            applied=p.applied,
            advice=p.advice or p.rule.advice_for(self.target.name),
            doc_url=p.rule.doc_url,
        )

    def applied_codes(self) -> set[str]:
        """Codes whose fix was applied in this file so far."""
        return {p.rule.code for p in self._pending if p.applied}

    def findings(self, code: str | None = None, units: Units | None = None) -> list[Finding]:
        """The findings, sorted. `code`: the module's code, where the source is known to be it
        (libcst prints it back byte for byte), and `units` the statements the rewrite met: the
        positions then print only the statements that hold a finding (`statement_positions`),
        not the whole module."""
        if self._pending and self._positions is None:
            nodes = [p.node for p in self._pending]
            at = statement_positions(self.module, code, nodes, units) if code is not None and units else None
            self._cheap_positions = at if at is not None else positions(self.module, nodes)
        found = [self._finding(p) for p in self._pending]
        found.sort(key=Finding.sort_key)
        return found

    # -- spelling helpers ------------------------------------------------------------------

    def ref(self, qualified: str) -> cst.BaseExpression:
        """An expression naming `qualified`, reusing the file's imports, adding one if needed.

        `torch.accelerator.synchronize` becomes `t.accelerator.synchronize` under only
        `import torch as t`; under no torch import at all, `import torch` is added.
        torch_xla's customary module aliases (`xm`, `xr`, `pl`) are used and imported.
        """
        if self.cuda_only_code and self.in_cuda_only_code():
            return cst.parse_expression(qualified)  # for code left as it is (never written): imports nothing
        for module, alias in _ALIASED_MODULES:
            if qualified == module or qualified.startswith(module + "."):
                rest = qualified[len(module) :]
                local = next((n for n, full in self.imports.names.items() if full == module), None)
                if local is None or self.scopes.shadows(local) or not self.in_scope(local):
                    self.import_where_used(module, asname=alias)
                    self.imports.names[alias] = module
                    local = alias
                return cst.parse_expression(local + rest)
        local = self.imports.local_name_for(qualified)
        if local is None or self.scopes.shadows(local.split(".")[0]) or not self.in_scope(local.split(".")[0]):
            top = qualified.split(".")[0]
            self.import_where_used(top)
            local = qualified
        return cst.parse_expression(local)

    def in_scope(self, name: str) -> bool:
        """`name` is bound where the node being visited is: at the module's top level (a
        guarded `try: import torch` too) or by an import in an enclosing function; an import
        in another function does not count."""
        if self._module_bound is None:
            bound = import_bindings(self.module)
            bound.update(n for n, _ in name_assignments(self.module))
            if self.imports.star_modules and self.imports.names.get("torch") == "torch":
                bound.add("torch")  # bind_torch_from_star
            self._module_bound = bound
        return name in self._module_bound or self.scopes.imports_in_scope(name)

    def imports_lazily(self, top: str) -> bool:
        """The module imports `top` only inside functions (its style: torch loaded when used)."""
        return top not in imported_modules(self.module, into_defs=False) and top in imported_modules(
            self.module, into_defs=True
        )

    def would_make_required(self, top: str) -> bool:
        """A module of a package (relative imports) that imports `top` nowhere, not even
        lazily: a new module-level `import top` would make `top` required to import the
        package (transformers' `utils/__init__.py` and torch, an optional extra there). An
        application's script keeps today's import."""
        if top in imported_modules(self.module, into_defs=True) or self.in_scope(top):
            return False
        return self.path.endswith("__init__.py") or any(
            isinstance(small, cst.ImportFrom) and small.relative
            for small in small_statements(self.module, into_defs=False)
        )

    def import_where_used(self, module: str, asname: str | None = None) -> None:
        """`import module [as asname]` for the node being visited: at the top of its function
        where the module imports that package only inside functions, else at the module's top
        level (inside the guard of a guarded torch import: porter.codemods.imports)."""
        if self.muted:
            return
        functions = self.scopes.functions
        if functions and self.imports_lazily(module.split(".")[0]):
            if self.cuda_only_code and self.in_cuda_only_code():
                return
            wanted = self.local_imports.setdefault(id(functions[-1]), [])
            if (module, asname) not in wanted:
                wanted.append((module, asname))
            return
        self.add_import(module, asname=asname)
        local = asname or module.split(".")[0]
        self.imports.names.setdefault(local, asname and module or local)
        if self._module_bound is not None:
            self._module_bound.add(local)

    def release(self, node: cst.BaseExpression) -> None:
        """The name at the head of `node` is being replaced: drop its import if now unused."""
        name = dotted(node)
        if name is None:
            return
        source = self.imports.sources.get(name.split(".")[0])
        if source is not None and source[1] is not None:  # only `from m import x` bindings
            self.remove_import_if_unused(*source)

    def expr(self, template: str, **fields: cst.BaseExpression | str) -> cst.BaseExpression:
        """Parse a template such as `{torch}.device("neuron", {index})`.

        `{torch}`-style fields name modules (resolved through `ref`); other fields take code.
        """
        values = {k: (v if isinstance(v, str) else self.module.code_for_node(v)) for k, v in fields.items()}
        for name in ("torch", "torch_xla", "xm", "xr", "pl"):
            key = "{" + name + "}"
            if key in template and name not in values:
                full = _ALIAS_MODULE.get(name, name)
                values[name] = self.module.code_for_node(self.ref(full))
        return cst.parse_expression(template.format(**values))

    def add_import(self, module: str, obj: str | None = None, asname: str | None = None) -> None:
        if self.muted:
            return  # for a fix that is not applied
        if self.cuda_only_code and self.in_cuda_only_code():
            return  # a spelling made for code left as it is: no fix there needs it
        AddImportsVisitor.add_needed_import(self.codemod_context, module, obj, asname)

    def remove_import_if_unused(self, module: str, obj: str | None = None, asname: str | None = None) -> None:
        if self.muted:
            return
        RemoveImportsVisitor.remove_unused_import(self.codemod_context, module, obj, asname)

    # -- --portable spellings (rules/targets.toml [portable]) -------------------------------

    @property
    def portable(self) -> bool:
        return self.settings.portable

    def _portable(self, key: str, **fields: str) -> str:
        """The code of a `[portable]` template, `{type}` being the device-type expression."""
        template = portable_spellings()[key].replace("{type}", "%(type)s")
        if "%(type)s" in template:
            template = template % {"type": portable_spellings()["device_type"]}
        torch = self.module.code_for_node(self.ref("torch"))
        return template.format(torch=torch, **fields)

    def accelerator_type(self) -> cst.BaseExpression:
        """The accelerator's device type, or "cpu" when there is none (a string): a call to the
        module's device helper, which `device_helper.finish` defines or inlines."""
        if self.device_helper is None:
            torch = self.module.code_for_node(self.ref("torch"))
            helper = portable_spellings()["device_type_helper"].replace("{type}", portable_spellings()["device_type"])
            self.device_helper_code = helper.replace("{torch}", torch)
            self.device_helper = device_helper.pick_name(self.source, self.device_helper_code)
        return cst.Call(func=cst.Name(self.device_helper))

    def accelerator(self) -> cst.BaseExpression:
        """The current accelerator, or the CPU when there is none (for `.to(...)`; inlined as
        `current_accelerator(check_available=True)` where it is the module's only site)."""
        return self.accelerator_type()

    def default_backend(self) -> cst.BaseExpression:
        template = portable_spellings()["dist_backend"].replace("{type}", self.code(self.accelerator_type()))
        return cst.parse_expression(template.format(torch=self.module.code_for_node(self.ref("torch"))))

    def finish_device_helper(self, module: cst.Module) -> cst.Module:
        """The module with the device helper defined once or its single call inlined."""
        if self.device_helper is None:
            return module
        return device_helper.finish(
            module,
            self.device_helper,
            self.device_helper_code,
            self._portable("device_type"),
            self._portable("device"),
        )

    def device(self, index: cst.BaseExpression | None = None) -> cst.BaseExpression:
        """The target's device expression, for `.cuda(index)`, `torch.device("cuda", index)`.

        xla: `torch_xla.device()` (one device per process); tpu drops a non-literal index
        (one chip per process); neuron keeps it. --portable: the current accelerator (None,
        the CPU, when there is none), or `torch.device(<its type>, index)`.
        """
        if self.portable:
            if index is None:
                return self.accelerator()
            return self.expr("{torch}.device(%s, {index})" % self.code(self.accelerator_type()), index=index)
        t = self.target
        if t.device_expr is not None:
            func = self.ref(t.device_expr.removesuffix("()"))
            return cst.Call(func=func)
        if index is None:
            return cst.SimpleString(f'"{t.device_type}"')
        if isinstance(index, cst.Integer) and t.indexed_devices:
            return cst.SimpleString(f'"{t.device_type}:{index.value}"')
        if not t.rank_indexed_devices:
            return cst.SimpleString(f'"{t.device_type}"')
        return self.expr('{torch}.device("%s", {index})' % t.device_type, index=index)
