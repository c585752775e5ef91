"""The Hugging Face stack in its own vocabulary (HF001–HF017, rules/hf.toml).

transformers, accelerate, peft and trl take CUDA's choices as keyword values of their own:
`attn_implementation="flash_attention_2"`, `device_map="cuda"`, `ddp_backend="nccl"`,
`fp16=True`, `optim="adamw_torch_fused"`. What each keyword accepts comes from the libraries'
recorded APIs (`porter.apidata.libraries`), so a port never writes a value the library rejects
(`ddp_backend` has no `"neuron"`: the keyword is removed and the library picks). This family
claims the values it ports (`ctx.claimed`, `ctx.keep_cuda`) when it enters the call, before the
device, distributed and amp families see them: a `device_map` is not a torch device string, a
`ddp_backend` is not `init_process_group`'s backend.
"""

from __future__ import annotations

from porter.codemods import cstwalk
import libcst as cst

import operator
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from typing import Any

from porter.analysis.resolve import dotted, import_bindings, iter_statements, name_assignments, small_statements
from porter.apidata.libraries import LibraryApi, library_api
from porter.codemods.context import one_line
from porter.codemods.family import Family, replace_string, string_value
from porter.codemods.flow import (
    Reading,
    binding_before,
    bindings,
    ends,
    is_param,
    last_binding,
    holding_small,
    reaching_before,
    reaching_bindings,
    reaching_next_pass,
    reached,
    small_ends,
    statement_path,
)
from porter.codemods.library_api import PACKAGES
from porter.config.ruledata import load_toml
from porter.core.findings import Applicability


@cache
def cuda_switches() -> dict[str, str]:
    """The Trainer's switches only CUDA honours (HF013): keyword -> why, from rules/hf.toml's `[[cuda_switch]]`."""
    return {row["keyword"]: row["what"] for row in load_toml("hf.toml").get("cuda_switch", ())}


@cache
def _late_switches(target: str) -> dict[str, tuple[str, str, str | None]]:
    """The switches the Trainer reads from the built arguments (so setting one late counts): attribute ->
    (rule, why, the string value that counts, None for any true one); HF012's and HF014's on xla only,
    HF003's `fp16_full_eval`, HF013's `[[cuda_switch]]` rows marked `read_late`. Not `fp16`, `bf16`,
    `torch_compile`, `torch_compile_mode`: read only as the arguments are built (seen)."""
    late: dict[str, tuple[str, str, str | None]] = {"fp16_full_eval": ("HF003", _FP16_EVAL_LATE, None)}
    if target == "xla":
        late["activation_checkpointing"] = ("HF012", _CHECKPOINTING_FAILS, None)
        late["torch_compile_backend"] = ("HF014", _COMPILE_FAILS, "inductor")
    for row in load_toml("hf.toml").get("cuda_switch", ()):
        if row.get("read_late"):
            late[row["keyword"]] = ("HF013", f"{row['read_late']}: {row['what']}", None)
    return late


@cache
def _replaced_switches(target: str) -> dict[str, tuple[str, str, str | None]]:
    """The switches `dataclasses.replace(args, ...)` sets on the copy, as `_late_switches` gives them: the late
    ones, and those read only as the arguments are built, since `replace` builds them anew (`__post_init__`
    again; seen with transformers 5.24: `tf32=True` raises, `fp16=True` makes the copy's mixed precision fp16,
    `torch_compile=True` its backend inductor)."""
    switches = dict(_late_switches(target))
    switches["fp16"] = ("HF003", _FP16_REPLACED, None)
    switches.update({k: ("HF013", what, None) for k, what in cuda_switches().items() if k not in switches})
    if target == "xla":
        switches.update({k: ("HF014", _COMPILE_FAILS, None) for k in ("torch_compile", "torch_compile_mode")})
    return switches


@cache
def kernels_no_fallback() -> dict[str, Any]:
    """HF016: rules/hf.toml's `[kernels_no_fallback]`: `KernelizeFallback`'s `classes` and `flags`, the flag
    `needed` to keep a layer's own forward off CUDA, what `booleans` mean, `advice`, and target -> why it raises."""
    return load_toml("hf.toml").get("kernels_no_fallback", {})


@cache
def gptqmodel_configs() -> tuple[dict[str, str], dict[str, str]]:
    """HF017: (config -> why, target -> why not there), rules/hf.toml's `[[gptqmodel_config]]` / `[gptqmodel_on]`
    (a row's `also`: the same callable under its defining module's name)."""
    table = load_toml("hf.toml")
    rows = table.get("gptqmodel_config", ())
    return {n: row["what"] for row in rows for n in (row["name"], *row.get("also", ()))}, table.get("gptqmodel_on", {})


@cache
def breaks() -> tuple[dict, ...]:
    """Library trainers that fail on a target (HF010), from rules/hf.toml's `[[breaks]]`."""
    return tuple(load_toml("hf.toml").get("breaks", ()))


_LIBRARIES = tuple(f"{p}." for p in PACKAGES)
_LOADERS = ("from_pretrained", "from_config")
# the keywords `_loader` reads (a loader's call passing none of them is left as it is)
_LOADER_KEYWORDS = frozenset(
    (
        "attn_implementation",
        "load_in_8bit",
        "load_in_4bit",
        "device_map",
        "torch_dtype",
        "dtype",
        "use_kernels",
        "kernel_config",
    )
)
# an argument parser's methods that return its dataclasses in the order it was built with (trl 1.16's
# `TrlParser.parse_args_and_config` wraps `parse_args_into_dataclasses`: read and run)
_PARSE = frozenset(
    ("parse_args_into_dataclasses", "parse_dict", "parse_json_file", "parse_yaml_file", "parse_args_and_config")
)
_STRATEGIES = frozenset(("auto", "balanced", "balanced_low_0", "sequential"))
_FP16 = {"fp16": "bf16", "fp16_full_eval": "bf16_full_eval"}
# HF015: the KV caches built by hand that offload (transformers 5.24 cache_utils.py: `offloading=True`;
# 4.57's `OffloadedCache()` is `DynamicCache(offloading=True)`, its `OffloadedStaticCache(config, max_cache_len)`
# `StaticCache(..., offloading=True)`, both gone in 5.x), under the names transformers exports them by
_CACHES = ("DynamicCache", "StaticCache", "OffloadedCache", "OffloadedStaticCache")
_CACHE_NAMES = frozenset(f"transformers.{m}{c}" for c in _CACHES for m in ("", "cache_utils."))
# HF016, HF017: the context managers that may swallow an exception of their body, which may then stop part way
# with the code after the `with` run (`contextlib.suppress(...)`; `pytest.raises(...)`, the one it expects), and
# what makes one of a module's own generators a context manager, and one of its classes' exits (`_swallowing_def`)
_SWALLOWING = frozenset(("contextlib.suppress", "pytest.raises"))
# ... and `unittest.TestCase`'s methods that do the same (`with self.assertRaises(E):`; by the method's name: the
# test case is `self`, an instance no import names)
_SWALLOWING_METHODS = frozenset(("assertRaises", "assertRaisesRegex"))
# ... and those whose `__exit__` never swallows (twenty-ninth read: each run with a `ValueError` raised in its body,
# which came out: docs/reads/47-rleft-tools/managers_exit.py.txt): read as running their body, said nothing of
_NOT_SWALLOWING = frozenset(
    ("builtins.open", "io.open", "contextlib.nullcontext", "contextlib.redirect_stdout", "contextlib.redirect_stderr")
    + ("warnings.catch_warnings", "tempfile.TemporaryDirectory", "tempfile.NamedTemporaryFile", "torch.no_grad")
    + ("torch.enable_grad", "torch.inference_mode", "torch.autocast", "torch.amp.autocast")
)
_CONTEXT_MAKERS = frozenset(("contextlib.contextmanager", "contextlib.asynccontextmanager"))
_EXITS = ("__exit__", "__aexit__")
# HF016: the `kernels` package's own entry point (kernels 0.18.3: `kernels.kernelize` re-exports it)
_KERNELIZE = frozenset(("kernels.kernelize", "kernels.layer.kernelize", "kernels.layer.kernelize.kernelize"))
# HF016: the operators a `KernelizeFallback` value is combined with (a `Flag`: bitwise on its values)
_FLAG_OPS = {cst.BitOr: operator.or_, cst.BitAnd: operator.and_, cst.BitXor: operator.xor}
# HF016: how many names deep a flag value is read (`G = F | K.NO_LAYER`, `F = E`, ...): each is a walk of the
# scope's statements at the site, and a chain that long names values porter does not see written out
_FLAG_NAMES = 4
# HF016: the compound statements whose header a `kernelize(...)` is read in (`if kernelize(...):`)
_HEADERS = (cst.If, cst.While, cst.For, cst.With)
# HF016: where a name is read: the scope of the statement, that statement, and the statements that hold it
_At = tuple[cst.Module | cst.FunctionDef | cst.Lambda, cst.CSTNode | None, list[cst.CSTNode]]
_UNFUSED = "adamw_torch"
# HF012: what the Trainer does with activation checkpointing on PyTorch/XLA (seen on XLA:CPU)
_CHECKPOINTING_FAILS = (
    "makes the Trainer give the model's layers torch.utils.checkpoint, which raises on XLA tensors with "
    "torch_xla 2.9 (`module 'torch' has no attribute 'xla'`)"
)
# HF012: the keywords that set it, the first set (not None) deciding: the arguments read the new name
# first (`__post_init__`), `set_training` its deprecated alias, and a copy passes the new name always
_CHECKPOINTING_ORDER = {
    "args": ("activation_checkpointing", "gradient_checkpointing"),
    "set_training": ("gradient_checkpointing", "activation_checkpointing"),
    "replace": ("activation_checkpointing",),
}
# HF014: the Trainer's compile keywords (a backend or a mode alone turns `torch_compile` on) and what
# they do on PyTorch/XLA (seen on XLA:CPU)
_COMPILE = ("torch_compile", "torch_compile_backend", "torch_compile_mode")
_COMPILE_FAILS = (
    "the Trainer compiles the model with torch.compile's inductor backend (transformers 5.24's choice off "
    "CUDA, HPU and Neuron), whose first step fails on XLA tensors (`InductorError: LoweringException`), and "
    "accelerate 1.16 names no XLA backend (`'OPENXLA' is not a valid DynamoBackend`)"
)
# HF003: `fp16_full_eval` is read by the Trainer itself, so setting it on built arguments counts (seen)
_FP16_EVAL_LATE = (
    "the Trainer casts the model to float16 for evaluation (transformers 5.24 trainer.py reads "
    "`args.fp16_full_eval` when it evaluates); bf16 is the targets' reduced precision: `bf16_full_eval`"
)
# HF003: `fp16=True` given to `dataclasses.replace` (seen: the copy's `__post_init__` sets fp16 again)
_FP16_REPLACED = (
    "`replace` builds the arguments anew, and transformers 5.24 sets float16 autocast with loss scaling on the "
    "copy (seen); bf16 is the targets' native reduced precision: `bf16=True`"
)
# HF003/HF012/HF013/HF014: a late switch on a name parsed by a parser another module builds (twenty-fifth read)
_ELSEWHERE = (
    "on a name parsed by the parser `{}()` returns, built in another module: whether it is the training "
    "arguments is not known here (lint reads one file; the project index keeps no parser's dataclasses); if it is"
)
# HF015: what an offloaded KV cache does off CUDA (transformers 5.24 cache_utils.py; seen on XLA:CPU)
_OFFLOADED_FAILS = (
    "transformers 5.24 offloads the KV cache through CUDA streams (`torch.cuda.default_stream(device)` at "
    "every layer's update, its prefetch stream made for the current accelerator): on XLA:CPU `generate` fails "
    "as it builds the cache"
)
# HF016: the `kernels` hub on PyTorch/XLA (kernels 0.18.3, seen on XLA:CPU)
_KERNELS_REFUSE = (
    "the `kernels` package refuses XLA (`ValueError: Unsupported device type 'xla'`; its devices: cpu, cuda, mps, "
    "neuron, npu, rocm, tpu, xpu)"
)
_KERNELS_FAIL = f"transformers kernelizes the model on the device it is loaded to, and {_KERNELS_REFUSE}"
_KERNELS_LATE = (
    f"transformers kernelizes the model on its device; if that is the XLA device, {_KERNELS_REFUSE} (seen). "
    "Kernelized on the CPU before the move, the model ran on XLA (seen, with no hub kernel fetched)"
)
# bitsandbytes optimizers by name (transformers' OptimizerNames) and the torch optimizer the
# Trainer has for the same update; None: the Trainer names no torch equivalent
_BNB_OPTIMIZERS = {
    "adamw_bnb_8bit": _UNFUSED,
    "adamw_8bit": _UNFUSED,
    "paged_adamw_8bit": _UNFUSED,
    "paged_adamw_32bit": _UNFUSED,
    "rmsprop_bnb": "rmsprop",
    "rmsprop_bnb_8bit": "rmsprop",
    "rmsprop_bnb_32bit": "rmsprop",
    "lion_8bit": None,
    "lion_32bit": None,
    "paged_lion_8bit": None,
    "paged_lion_32bit": None,
    "ademamix_8bit": None,
    "paged_ademamix_8bit": None,
    "paged_ademamix_32bit": None,
}
_FUSED_OPTIMIZERS = frozenset(("adamw_torch_fused",))
# accelerate's object gather: under XLA it raises even in one process (accelerate 1.16,
# utils/operations.py), where on CUDA's one process it returns the object (HF011)
_GATHER_OBJECT = ("accelerate.utils.gather_object", "accelerate.utils.operations.gather_object")
_PROCESS_GROUP = (
    "accelerate.InitProcessGroupKwargs",
    "accelerate.utils.InitProcessGroupKwargs",
    "accelerate.PartialState",
)


def _is_cuda(value: str | None) -> bool:
    return value is not None and (value == "cuda" or value.startswith("cuda:"))


def _late_given(value: cst.BaseExpression, wanted: str | None, code: str) -> str | None:
    """How a late switch's value reads in its finding: `= True`, `= x`, if true, or the string that
    counts (`wanted`); None where it is another string."""
    if wanted is not None:
        return f'= "{wanted}"`' if string_value(value) == wanted else None
    return "= True`" if _true(value) else f"= {code}`, if true,"


def _unguarded_imports(
    block: Sequence[cst.BaseStatement],
    function: str | None,
    reading: Reading,
    ending: Reading,
    withs: tuple[cst.With, ...] = (),
) -> Iterator[tuple[cst.Import | cst.ImportFrom, str | None, tuple[cst.With, ...]]]:
    """The imports a module, or a function when called (its name), runs whenever it runs past them: its block's
    own statements, a `with`'s body (but one whose context manager may swallow an exception: `swallows`), and
    those of the classes and functions it defines; not one in an `if`, a `try` or a loop (peft's `if
    is_gptqmodel_available():`), nor one after a statement that may return (peft's `if not
    is_gptqmodel_available(): return None`; both seen on 41-rleft's tree), which are optional. One after an `if`
    that raises is run on every call that does not fail: a call needs it (twenty-sixth read: the same rule for
    `with` and `raise`). Each with the `with` statements it is under (`withs`: in its function). Nothing after a
    statement that never ends normally (`flow.ends` by `ending`, where a `with` whose context manager is not read
    here may swallow: a `raise`, `sys.exit(...)`, `while True:` with no `break`) is run: Python never reaches it
    (twenty-ninth read)."""
    for stmt in block:
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            yield from ((s, function, withs) for s in _imports_run(stmt, reading))
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            inner = stmt.name.value if isinstance(stmt, cst.FunctionDef) else function
            yield from _unguarded_imports(_block_of(stmt), inner, reading, ending)
        elif isinstance(stmt, cst.With) and not reading.swallows(stmt):
            yield from _unguarded_imports(_block_of(stmt), function, reading, ending, (*withs, stmt))
        if ends(stmt, ending):
            return
        if function is not None and not isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            if any(isinstance(s, cst.Return) for s in small_statements(stmt, into_defs=False)):
                return


def _imports_run(
    line: cst.SimpleStatementLine | cst.SimpleStatementSuite, reading: Reading
) -> list[cst.Import | cst.ImportFrom]:
    """A line's imports up to a small statement after which the rest of it never runs (`raise E; import m`)."""
    out: list[cst.Import | cst.ImportFrom] = []
    for small in line.body:
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            out.append(small)
        if small_ends(small, reading):
            break
    return out


def _swallowing_def(node: cst.CSTNode | None, qualname: Callable[[cst.BaseExpression], str | None]) -> bool:
    """Whether a class or function of the file makes a context manager that may swallow an exception of the `with`
    body it guards, as the file shows it: a class whose `__exit__` (or `__aexit__`) may return true (any `return`
    but of `None`, `False` or `0`); a `contextlib.contextmanager` generator whose `yield` is in a `try` with a
    handler that raises nothing (the exception is thrown in at the `yield` and ends there)."""
    if isinstance(node, cst.ClassDef):
        exits = [s for s in _block_of(node) if isinstance(s, cst.FunctionDef) and s.name.value in _EXITS]
        returns = [s for f in exits for s in small_statements(f.body, into_defs=False) if isinstance(s, cst.Return)]
        return any(r.value is not None and not _falsy(r.value) for r in returns)
    decorators = node.decorators if isinstance(node, cst.FunctionDef) else ()
    if not isinstance(node, cst.FunctionDef) or all(qualname(d.decorator) not in _CONTEXT_MAKERS for d in decorators):
        return False
    tries = [s for s in iter_statements(node.body, into_defs=False) if isinstance(s, (cst.Try, cst.TryStar))]
    return any(_yields(t.body) and any(_raises_nothing(h.body) for h in t.handlers) for t in tries)


def _swallowing_method(called: cst.BaseExpression) -> bool:
    """Whether a context manager is a `unittest` test case's that swallows the exception it expects
    (`self.assertRaises(E)`: `_SWALLOWING_METHODS`)."""
    return isinstance(called, cst.Attribute) and called.attr.value in _SWALLOWING_METHODS


def _manager_of(item: cst.BaseExpression) -> cst.BaseExpression:
    """A `with` item's context manager: the callee of a call (`quiet()`), else the item itself (`with lock:`)."""
    return item.func if isinstance(item, cst.Call) else item


def _falsy(node: cst.BaseExpression) -> bool:
    return (isinstance(node, cst.Name) and node.value in ("None", "False")) or (
        isinstance(node, cst.Integer) and node.value == "0"
    )


def _yields(block: cst.CSTNode) -> bool:
    """Whether a block's statements `yield` (`yield`, `x = yield`), not in a nested function."""
    return any(isinstance(getattr(s, "value", None), cst.Yield) for s in small_statements(block, into_defs=False))


def _raises_nothing(block: cst.CSTNode) -> bool:
    return not any(isinstance(s, cst.Raise) for s in small_statements(block, into_defs=False))


def _block_of(stmt: cst.FunctionDef | cst.ClassDef | cst.With) -> Sequence[cst.BaseStatement]:
    """A compound statement's body as statements (a one-line suite: itself)."""
    body = stmt.body
    return body.body if isinstance(body, cst.IndentedBlock) else [body]  # type: ignore[list-item]


def _loop_or_with_binds(scope: cst.Module | cst.FunctionDef | cst.Lambda, name: str) -> bool:
    """Whether a `for name in` or `with ... as name` of the scope binds `name`, which `reaching_bindings`
    (assignments only) does not see: HF016's `use_fallback=name` is then left unread."""
    body = scope if isinstance(scope, cst.Module) else scope.body
    for stmt in iter_statements(body, into_defs=False):
        targets = [stmt.target] if isinstance(stmt, cst.For) else []
        targets += [i.asname.name for i in stmt.items if i.asname] if isinstance(stmt, cst.With) else []
        if any(isinstance(t, cst.Name) and t.value == name for t in targets):
            return True
    return False


def _unpacked(bound: tuple[cst.BaseExpression, int | None]) -> cst.BaseExpression | None:
    """The value a binding gives its name: the whole value, or at its place in a tuple or list written
    out (`a, types = m, (A, B)`); None where that place is not known (`a, types = make()`)."""
    value, index = bound
    if index is None:
        return value
    elements = value.elements if isinstance(value, (cst.Tuple, cst.List)) else ()
    if index >= len(elements) or any(isinstance(e, cst.StarredElement) for e in elements[: index + 1]):
        return None
    return elements[index].value


def _true(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def call_kind(lib: LibraryApi, qual: str, attr: str | None, hf_file: bool) -> tuple[str, str] | None:
    """(kind, name) of a call to `qual` (its qualified callee, "" where it has none), `attr`
    the callee's last name where it is an attribute: what HfFamily handles it as, if anything."""
    canonical = lib.canonical(qual) or ""
    return (
        _run_setup_kind(lib, qual, canonical) or _model_kind(lib, qual, canonical) or _method_kind(qual, attr, hf_file)
    )


def _run_setup_kind(lib: LibraryApi, qual: str, canonical: str) -> tuple[str, str] | None:
    """The calls that set up how a run is distributed and in what precision: training
    arguments, accelerate's Accelerator, its object gather, a process group."""
    if lib.is_training_arguments(qual):
        return "args", canonical
    if canonical in ("accelerate.Accelerator", "accelerate.notebook_launcher"):
        return "accelerator", canonical
    if canonical in _GATHER_OBJECT or qual in _GATHER_OBJECT:
        return "gather_object", qual
    if canonical in _PROCESS_GROUP or qual in _PROCESS_GROUP:
        return "process_group", canonical or qual
    if qual == "dataclasses.replace":
        return "replace", qual
    return None


def _model_kind(lib: LibraryApi, qual: str, canonical: str) -> tuple[str, str] | None:
    """The calls, by their qualified name, that make or train a model: a pipeline, an
    arguments parser, a quantization config, PEFT's k-bit preparation, a Trainer."""
    if canonical == "transformers.pipeline":
        return "pipeline", canonical
    if canonical == "transformers.HfArgumentParser" or qual == "trl.TrlParser":
        return "parser", canonical or qual
    if canonical in lib.quantization_configs:
        return "quantization", canonical
    if qual in gptqmodel_configs()[0]:  # optimum.gptq's quantizer and loader (HF017)
        return "quantization", qual
    if qual in _KERNELIZE:
        return "kernelize", qual
    if qual in _CACHE_NAMES:
        return "cache", qual
    if canonical == "transformers.GenerationConfig":
        return "generation_config", canonical
    if qual.startswith("peft.") and qual.endswith("prepare_model_for_kbit_training"):
        return "kbit", qual
    if lib.is_trainer(qual):
        return "trainer", qual
    return None


def _method_kind(qual: str, attr: str | None, hf_file: bool) -> tuple[str, str] | None:
    """The calls known by their method name (a loader's `from_pretrained`, a model's
    `set_attn_implementation` or `generate`), which a callee without a qualified name may be."""
    if attr in _LOADERS and qual.startswith(_LIBRARIES):
        return "loader", qual
    if attr == "set_attn_implementation" and hf_file:
        return "set_attn", qual
    if attr == "set_training" and hf_file:
        return "set_training", qual
    if attr == "set_use_kernels" and hf_file:
        return "set_use_kernels", qual
    if attr == "generate" and hf_file and (not qual or qual.startswith(_LIBRARIES)):
        return "generate", qual
    return None


class HfFamily(Family):
    name = "hf"
    # `into_dataclasses` and the other `_PARSE` methods: a late switch on arguments parsed by a parser another
    # module builds, in a file that names no library of the family (`_parsed_elsewhere`; `parse_dict`,
    # `parse_json_file`, `parse_yaml_file`, trl's `parse_args_and_config` since the twenty-seventh read)
    tokens = (
        b"transformers",
        b"accelerate",
        b"peft",
        b"trl",
        b"kernelize",
        b"optimum.gptq",
        b"gptqmodel",
        b"into_dataclasses",
        b"parse_dict",
        b"parse_json_file",
        b"parse_yaml_file",
        b"parse_args_and_config",
    )

    candidate_reads_ast = True

    @classmethod
    def candidate(cls, ctx, source: bytes) -> bool:
        """Every site is a call `_kind` knows, or `import bitsandbytes` / `gptqmodel` (`visit_Module`): a
        `.generate(...)`, a `.set_attn_implementation(...)` (the only kinds a callee with no
        qualified name can be), or a dotted callee `call_kind` knows under one of the names
        the file's imports may qualify it to (`Sites.qualified`); a loader's only with one of
        the keywords `_loader` reads; or `.use_kernels`, or a trainer imported where `self.args.` is written."""
        found = ctx.sites()
        if found is None or any(n.split(".")[0] in ("bitsandbytes", "gptqmodel") for n in found.import_names):
            return True
        if not found.callees.isdisjoint(("generate", "set_attn_implementation", "set_training", "set_use_kernels")):
            return True
        if not found.callees.isdisjoint(_PARSE):
            return True  # a parser's dataclasses, the parser built here or in another module (`_parsed_elsewhere`)
        lib = library_api()
        if b".use_kernels" in source or b".cache_implementation" in source:
            return True  # `model.use_kernels = True` (`visit_Assign`), `x.cache_implementation = ...` (`leave_Assign`)
        if b"self.args." in source and any(lib.is_trainer(q) for qs in found.imported.values() for q in qs):
            return True  # `self.args.x = ...` in a trainer's subclass (`visit_Assign`)
        for name, keywords in found.dotted_calls.items():
            attr = name.rpartition(".")[2] if "." in name else None
            for qual in found.qualified(name):
                kind = call_kind(lib, qual, attr, True)
                if kind is not None and (kind[0] != "loader" or not keywords.isdisjoint(_LOADER_KEYWORDS)):
                    return True
        return False

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.lib: LibraryApi = library_api()
        self._kinds: dict[int, tuple[str, str]] = {}  # id(call) -> (kind, qualname)
        self._trainer_noted = False
        self._guarded: set[int] = set()  # gather_object calls a one-process test already guards (HF011)
        self._written: set[int] = set()  # the guards HF011 wrote, parenthesized until their parent is known
        self._classes: list[bool] = []  # the enclosing classes: whether each derives from a trainer
        self._assign: cst.Assign | None = None  # the assignment being visited: where a replaced copy is bound
        self._mappings: list[dict[str, set[str]] | None] | None = None  # HF016: the file's kernel mappings, read once
        self._defs: dict[str, cst.ClassDef | cst.FunctionDef] | None = None  # `_top_defs`, read at a `with` only
        self._assigned: frozenset[str] | None = None  # `_module_names`, read at a builtin's name only
        self._reading = Reading(self._swallows, self._name_or_builtin, self._own_def)  # HF016's reading of what runs
        source = ctx.source or b""
        self._hf_file = any(t in source for t in (b"transformers", b"peft", b"trl"))

    # -- what a call is ---------------------------------------------------------------------

    def _kind(self, call: cst.Call) -> tuple[str, str] | None:
        func = call.func
        attr = func.attr.value if isinstance(func, cst.Attribute) else None
        kind = call_kind(self.lib, self.ctx.qualname(func) or "", attr, self._hf_file)
        if kind is not None and kind[0] == "gather_object" and id(call) in self._guarded:
            return None  # (no later kind is a gather_object's)
        return kind

    _OWNED = {
        "args": ("ddp_backend",),
        "process_group": ("backend",),
        "loader": ("device_map", "torch_dtype", "dtype"),
        "pipeline": ("device", "device_map", "torch_dtype", "dtype"),
    }

    def visit_IfExp(self, node: cst.IfExp) -> None:
        """`x if <one process> else gather_object(x)`: the guard HF011 writes (or the author did)."""
        if isinstance(node.orelse, cst.Call) and "num_processes" in self.ctx.code(node.test):
            self._guarded.add(id(node.orelse))

    def visit_Call(self, node: cst.Call) -> None:
        kind = self._kind(node)
        if kind is None:
            return
        self._kinds[id(node)] = kind
        for name in self._OWNED.get(kind[0], ()):
            arg = self.kwarg(node, name)
            if arg is not None and self._literal(arg.value):
                self._claim(arg.value)
        device = self.kwarg(node, "device") if kind[0] == "kernelize" and self.ctx.target.name == "xla" else None
        if device is not None and _is_cuda(string_value(device.value)):
            self._claim(device.value)  # not "xla", which `kernels` refuses (`_kernelize`)

    @staticmethod
    def _literal(node: cst.BaseExpression) -> bool:
        if isinstance(node, (cst.SimpleString, cst.Integer)):
            return True
        if isinstance(node, cst.Dict):
            return all(
                isinstance(e, cst.DictElement) and isinstance(e.value, (cst.SimpleString, cst.Integer))
                for e in node.elements
            )
        return isinstance(node, cst.Attribute) and node.attr.value in ("float16", "half")

    def _claim(self, node: cst.CSTNode) -> None:
        """The value is this family's: the device, distributed and amp families leave it."""

        class Mark(cst.CSTVisitor):
            def __init__(self, ids: set[int]) -> None:
                self.ids = ids

            def on_visit(self, n: cst.CSTNode) -> bool:
                self.ids.add(id(n))
                return True

        found: set[int] = set()
        cstwalk.visit(node, Mark(found))
        self.ctx.claimed.update(found)
        self.ctx.keep_cuda.update(found)

    # -- edits ------------------------------------------------------------------------------

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        kind = self._kinds.pop(id(original), None)
        if kind is None:
            return updated
        what, qual = kind
        handler = getattr(self, f"_{what}")
        return handler(original, updated, qual)

    def _args(self, original: cst.Call, updated: cst.Call, qual: str) -> cst.Call:
        new = updated
        # HF003: fp16 → bf16
        for old_name, new_name in _FP16.items():
            arg = self.kwarg(original, old_name)
            if arg is None or not _true(arg.value):
                continue
            args = [
                a.with_changes(keyword=cst.Name(new_name))
                if a.keyword is not None and a.keyword.value == old_name
                else a
                for a in new.args
            ]
            candidate = new.with_changes(args=args)
            if self.ctx.report(
                "HF003",
                arg,
                f"`{old_name}=True` asks {qual.rsplit('.', 1)[1]} for float16 autocast with loss scaling; "
                f"bf16 is {self.ctx.target.display}'s native reduced precision: `{new_name}=True`",
                replacement=candidate,
            ):
                new = candidate
        # HF004 / HF002: the optimizer by name
        new = self._optimizer(original, new, qual)
        # HF006: ddp_backend
        arg = self.kwarg(original, "ddp_backend")
        if arg is not None and (string_value(arg.value) or "").lower() == "nccl":
            new = self._drop_backend(arg, new, "ddp_backend", qual)
        self._checkpointing(original, qual)
        return self._compile(original, self._cuda_switches(original, new))

    def _compile(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        """HF014: the Trainer's torch.compile with inductor (what transformers picks on XLA) fails on
        XLA tensors and accelerate has no XLA backend to name: the keywords removed (XLA compiles anyway)."""
        given = {
            n: a for n in _COMPILE if (a := self.kwarg(original, n)) is not None and self.ctx.code(a.value) != "None"
        }
        backend = given.get("torch_compile_backend")
        if self.ctx.target.name != "xla" or (backend and (string_value(backend.value) or "").lower() != "inductor"):
            return updated  # unset, or a backend other than the one seen failing
        flag = given.get("torch_compile")
        if flag is not None and len(given) == 1 and not _true(flag.value):
            if self.ctx.code(flag.value) != "False":
                self.ctx.report(
                    "HF014", flag, f"`torch_compile={self.ctx.code(flag.value)}`, if true, {_COMPILE_FAILS}"
                )
            return updated
        if not given:
            return updated
        first = next(iter(given.values()))
        candidate = self.without_kwargs(updated, set(given))
        if self.ctx.report("HF014", first, f"{_COMPILE_FAILS}: removed", replacement=candidate):
            return candidate
        return updated

    def _cuda_switches(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        """HF013: a switch only CUDA honours, set True: removed (left unset the library does neither)."""
        new = updated
        for keyword, what in cuda_switches().items():
            arg = self.kwarg(original, keyword)
            if arg is None or not _true(arg.value):
                continue
            candidate = self.without_kwargs(new, {keyword})
            if self.ctx.report("HF013", arg, f"`{keyword}=True` removed: {what}", replacement=candidate):
                new = candidate
        return new

    def _checkpointing(self, call: cst.Call, qual: str) -> None:
        """HF012: the Trainer enables torch's checkpoint on the model, which raises on XLA tensors;
        transformers reads `activation_checkpointing`, then its deprecated alias, then the default."""
        if self.ctx.target.name != "xla" or self._checkpointing_kwargs(call, _CHECKPOINTING_ORDER["args"]):
            return
        short = qual.rsplit(".", 1)[1]
        if not any(a.star == "**" for a in call.args) and self._default(qual, "gradient_checkpointing") is True:
            self.ctx.report(
                "HF012",
                call.func,
                f"{short} turns `gradient_checkpointing` on by default ({self.lib.source_of(qual)}): it "
                f"{_CHECKPOINTING_FAILS}",
            )

    def _checkpointing_kwargs(self, call: cst.Call, names: tuple[str, ...]) -> bool:
        """HF012 by keyword, the first of `names` set (not None) deciding: reported unless False;
        False where none is set."""
        for name in names:
            arg = self.kwarg(call, name)
            if arg is None or (isinstance(arg.value, cst.Name) and arg.value.value == "None"):
                continue  # unset: transformers reads the next
            value = arg.value
            if not (isinstance(value, cst.Name) and value.value == "False"):
                given = f"`{name}=True`" if _true(value) else f"`{name}={self.ctx.code(value)}`, if true,"
                self.ctx.report("HF012", arg, f"{given} {_CHECKPOINTING_FAILS}")
            return True
        return False

    def _set_training(self, original: cst.Call, updated: cst.Call, qual: str) -> cst.Call:
        """HF012: `args.set_training(...)` sets checkpointing anew, its `gradient_checkpointing` winning."""
        if self.ctx.target.name == "xla":
            self._checkpointing_kwargs(original, _CHECKPOINTING_ORDER["set_training"])
        return updated

    def _replace(self, original: cst.Call, updated: cst.Call, qual: str) -> cst.Call:
        """HF012: `dataclasses.replace(args, ...)` of training arguments built in this scope; only
        `activation_checkpointing` counts (the copy passes it, so the deprecated alias is ignored)."""
        first = self.positional(original)[:1]
        use = self._assign if self._assign is not None and self._assign.value is original else None
        if not first or not self._holds_training_arguments(first[0].value, use):
            return updated
        if self.ctx.target.name == "xla":
            self._checkpointing_kwargs(original, _CHECKPOINTING_ORDER["replace"])
        self._late_kwargs(original)
        return updated

    def _late_kwargs(self, original: cst.Call) -> None:
        """HF003/HF013/HF014: a switch passed to `dataclasses.replace(args, ...)` sets it on the copy the Trainer
        reads, as `args.x = True` does (the twenty-fourth rules4 read), and one read only as the arguments are
        built too (`fp16`, `tf32`: `replace` builds them again; twenty-fifth read); HF012's is read above."""
        late = _replaced_switches(self.ctx.target.name)
        for arg in original.args:
            name = arg.keyword.value if arg.keyword is not None else None
            row = late.get(name) if name is not None and name != "activation_checkpointing" else None
            if row is None or self.ctx.code(arg.value) in ("False", "None"):
                continue
            given = _late_given(arg.value, row[2], self.ctx.code(arg.value))
            if given is not None:
                self.ctx.report(row[0], arg, f"`{name} {given} in a replaced copy of the arguments: {row[1]}")

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        """`self.args` in a class deriving from a trainer is its training arguments (HF012/HF013 late)."""
        self._classes.append(any(self.lib.is_trainer(self.ctx.qualname(b.value)) for b in node.bases))

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self._classes.pop()
        return updated

    def visit_Assign(self, node: cst.Assign) -> None:
        """HF003/HF012/HF013/HF014: a switch the Trainer reads from the built arguments set after they are
        built (`args.activation_checkpointing = True`; `args.gradient_checkpointing = True` it does not read,
        seen; `args.tf32 = True`, `fp16`, `torch_compile` are read only as the arguments are built, seen)."""
        self._assign = node
        value = node.value
        if isinstance(value, cst.Name) and value.value in ("False", "None"):
            return
        for target in node.targets:
            t = target.target
            if isinstance(t, cst.Attribute) and t.attr.value == "use_kernels" and self._model_attribute(t):
                self.ctx.report("HF016", node, f"`{self.ctx.code(t)} = {self.ctx.code(value)}`: {_KERNELS_LATE}")
            late = _late_switches(self.ctx.target.name).get(t.attr.value) if isinstance(t, cst.Attribute) else None
            given = _late_given(value, late[2], self.ctx.code(value)) if late is not None else None
            if not (late and given and isinstance(t, cst.Attribute)):
                continue
            if self._holds_training_arguments(t.value, node):
                self.ctx.report(late[0], node, f"`{t.attr.value} {given} {late[1]}")
            elif (maker := self._parsed_elsewhere(t.value, node)) is not None:
                self.ctx.report(late[0], node, f"`{t.attr.value} {given} {_ELSEWHERE.format(maker)}: {late[1]}")

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        """HF015: `model.generation_config.cache_implementation = "offloaded"` (or on a name bound to a
        `GenerationConfig(...)` in this scope): `generate` reads it when it builds the cache (seen)."""
        given = original.value
        t = original.targets[0].target if len(original.targets) == 1 else None
        if not isinstance(given, cst.SimpleString) or not isinstance(t, cst.Attribute):
            return updated
        value = string_value(given)
        if not (value or "").startswith("offloaded"):
            return updated
        if t.attr.value != "cache_implementation" or not self._generation(t.value):
            return updated
        kept = (value or "").removeprefix("offloaded").lstrip("_") or "dynamic"
        new = updated.with_changes(value=replace_string(given, kept))
        message = f'`cache_implementation = "{value}"`: {_OFFLOADED_FAILS}; `"{kept}"` keeps the cache on the device'
        return new if self.ctx.report("HF015", given, message, replacement=new) else updated

    def _generation(self, node: cst.BaseExpression) -> bool:
        """A model's `.generation_config`, or a name last bound in this scope to a `GenerationConfig(...)`."""
        if isinstance(node, cst.Attribute):
            return node.attr.value == "generation_config"
        scope = self.ctx.scopes.innermost or self.ctx.module
        bound = last_binding(scope, node.value) if isinstance(node, cst.Name) and scope is not None else None
        call = bound[0] if bound is not None and bound[1] is None else None
        return isinstance(call, cst.Call) and (self._kind(call) or ("",))[0] == "generation_config"

    def _model_attribute(self, target: cst.Attribute) -> bool:
        """`model.use_kernels = ...` (transformers' setter calls `set_use_kernels`), in a transformers
        file on xla; not `self.use_kernels`, a class's own attribute."""
        holder = target.value
        return (
            self.ctx.target.name == "xla" and self._hf_file and isinstance(holder, cst.Name) and holder.value != "self"
        )

    def _holds_training_arguments(self, node: cst.BaseExpression, use: cst.BaseSmallStatement | None = None) -> bool:
        """A name last bound in this scope (before `use`, the statement that reads it, where given) to a
        training-arguments call, or unpacked at the place of a training-arguments class from an argument
        parser's `parse_*` call on a parser built inline or in this scope; `self.args` in a trainer's
        subclass. No further: what porter cannot see is left."""
        if isinstance(node, cst.Attribute):
            return bool(self._classes) and self._classes[-1] and self.ctx.code(node) == "self.args"
        scope = self.ctx.scopes.innermost or self.ctx.module
        if not isinstance(node, cst.Name) or scope is None:
            return False
        bound = last_binding(scope, node.value) if use is None else binding_before(scope, node.value, use)
        if bound is None:
            return False
        value, index = bound
        if index is None:
            qual = self.ctx.qualname(value.func) or "" if isinstance(value, cst.Call) else ""
            copied = qual == "dataclasses.replace" and isinstance(value, cst.Call) and self._copied(value)
            return self.lib.is_training_arguments(qual) or copied
        classes = self._parsed_classes(value)
        return index < len(classes) and classes[index] is not None

    def _copied(self, call: cst.Call) -> bool:
        """`dataclasses.replace(args, ...)` bound to the name: a copy of training arguments where `args` holds
        them at that statement (a replace of a replace too); read only at a statement already visited, which
        precedes the one before it."""
        first = self.positional(call)[:1]
        statement = self.ctx.statement_of.get(id(call))
        return bool(first) and statement is not None and self._holds_training_arguments(first[0].value, statement)

    def _parsed_classes(self, value: cst.BaseExpression) -> list[str | None]:
        """`parser.parse_args_into_dataclasses()` (or `parse_dict`, `parse_json_file`, `parse_yaml_file`)
        on an argument parser built inline or on a name bound in this scope to one: its dataclasses in
        order, None for one that is not training arguments."""
        parser = self._parsed_by(value)
        where: cst.FunctionDef | None = None  # the function that builds it, where another does
        if isinstance(parser, cst.Call) and not self._builds_parser(parser):
            parser, where = self._returned_parser(parser) or (None, None)
        if not isinstance(parser, cst.Call) or not self._builds_parser(parser):
            return []
        items = self._parser_items(parser, where)
        return [q if q is not None and self.lib.is_training_arguments(q) else None for q in items]

    def _parsed_by(self, value: cst.BaseExpression) -> cst.BaseExpression | None:
        """The parser a `parser.parse_*()` call is made on: inline, or what its name is bound to before the
        statement that parses (the scope's last binding where that statement is not known)."""
        func = value.func if isinstance(value, cst.Call) else None
        if not (isinstance(func, cst.Attribute) and func.attr.value in _PARSE):
            return None
        if not isinstance(func.value, cst.Name):
            return func.value
        scope = self.ctx.scopes.innermost or self.ctx.module
        use = self.ctx.statement_of.get(id(value))
        if scope is None:
            return None
        bound = binding_before(scope, func.value.value, use) if use else last_binding(scope, func.value.value)
        return bound[0] if bound is not None and bound[1] is None else None

    def _parsed_elsewhere(self, node: cst.BaseExpression, use: cst.BaseSmallStatement) -> str | None:
        """The callee (`make_parser`, `args.make_parser`) where `node` is unpacked from a `parse_*` call on the parser
        an imported function returns (`from .args import make_parser`, `from . import args`): built in another
        module, which lint does not read from here (the project index keeps no parser's dataclasses); None
        otherwise."""
        scope = self.ctx.scopes.innermost or self.ctx.module
        bound = binding_before(scope, node.value, use) if isinstance(node, cst.Name) and scope is not None else None
        parser = self._parsed_by(bound[0]) if bound is not None and bound[1] is not None else None
        callee = dotted(parser.func) if isinstance(parser, cst.Call) else None
        if not isinstance(parser, cst.Call) or callee is None:
            return None
        if self._builds_parser(parser) or self._returned_parser(parser) is not None:
            return None
        # `make_parser` imported, or a module's (`from . import args`: `args.make_parser()`)
        return callee if callee.split(".")[0] in import_bindings(self.ctx.module) else None

    def _builds_parser(self, call: cst.Call) -> bool:
        """An argument parser's constructor, or `subparsers.add_parser(..., dataclass_types=...)` (trl's
        scripts: only an `HfArgumentParser` takes that keyword, argparse's own parser raises on it)."""
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "add_parser":
            return any(a.keyword is not None and a.keyword.value == "dataclass_types" for a in call.args)
        return (self._kind(call) or ("",))[0] == "parser"

    def _returned_parser(self, call: cst.Call) -> tuple[cst.Call, cst.FunctionDef] | None:
        """The parser a function of this module returns (`parser = make_parser()`, trl's scripts), with
        that function: every `return` gives a parser, directly or through a name each binding of which
        is one, all built on the same dataclasses. None where any of that is not so."""
        name = call.func.value if isinstance(call.func, cst.Name) else None
        module = self.ctx.module
        fn = next((s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == name), None)
        if fn is None:
            return None
        values: list[cst.BaseExpression | None] = []
        for small in small_statements(fn.body, into_defs=False):
            if isinstance(small, cst.Return):
                value = small.value
                bound = list(bindings(fn, value.value)) if isinstance(value, cst.Name) else [(value, None)]
                values += [v if i is None else None for v, i in bound] or [None]
        parsers = [v for v in values if isinstance(v, cst.Call) and self._builds_parser(v)]
        if not parsers or len(parsers) != len(values):
            return None
        built = {tuple(self._parser_items(p, fn)) for p in parsers}
        return (parsers[0], fn) if len(built) == 1 else None

    def _optimizer(self, original: cst.Call, updated: cst.Call, qual: str) -> cst.Call:
        arg = self.kwarg(original, "optim")
        short = qual.rsplit(".", 1)[1]
        if arg is None:
            if any(a.star == "**" for a in original.args):
                return updated  # `**kwargs` may name it
            default = self._default_optim(qual)
            if default not in _FUSED_OPTIMIZERS:
                return updated
            new = self.with_kwarg(updated, "optim", cst.SimpleString(f'"{_UNFUSED}"'))
            message = (
                f'{short} names no optimizer: {self.lib.source_of(qual)}\'s default is `"{default}"` '
                f'(fused AdamW, which {self.ctx.target.display} has no kernel for): `optim="{_UNFUSED}"`, '
                "the same update unfused"
            )
            if self.ctx.report("HF004", original.func, message, replacement=new):
                return new
            return updated
        value = string_value(arg.value)
        if value in _FUSED_OPTIMIZERS and isinstance(arg.value, cst.SimpleString):
            new_value = replace_string(arg.value, _UNFUSED)
            new = self._replace_kwarg_value(updated, "optim", new_value)
            if self.ctx.report(
                "HF004",
                arg,
                f'`optim="{value}"` builds fused AdamW, which {self.ctx.target.display} has no kernel for: '
                f'`"{_UNFUSED}"` is the same update unfused',
                replacement=new,
            ):
                return new
        elif value in _BNB_OPTIMIZERS:
            torch_name = _BNB_OPTIMIZERS[value]
            instead = (
                f'; the Trainer\'s `"{torch_name}"` is the same update with 32-bit state (about four times '
                "the optimizer memory of 8-bit)"
                if torch_name
                else "; the Trainer names no torch optimizer with the same update"
            )
            self.ctx.report("HF002", arg, f'`optim="{value}"` is a bitsandbytes optimizer (CUDA kernels){instead}')
        return updated

    def _default_optim(self, qual: str) -> str | None:
        return self._default(qual, "optim")

    def _default(self, qual: str, name: str):
        """The recorded default of `qual`'s parameter `name`; None where none is recorded."""
        entry = self.lib.callable(qual)
        param = entry.param(name) if entry is not None else None
        if param is None:
            return None
        return param.get("default_value")

    def _replace_kwarg_value(self, call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
        args = [
            a.with_changes(value=value) if a.keyword is not None and a.keyword.value == name else a for a in call.args
        ]
        return call.with_changes(args=args)

    def _drop_backend(self, arg: cst.Arg, updated: cst.Call, keyword: str, qual: str) -> cst.Call:
        new = self.without_kwargs(updated, {keyword})
        t = self.ctx.target
        accepted = self.lib.callable(qual)
        choices = accepted.choices(keyword) if accepted is not None else None
        rejects = (
            f' ({keyword} accepts {", ".join(choices)}: not "{t.dist_backend}")'
            if choices and t.dist_backend not in choices
            else ""
        )
        picks = {
            "xla": 'accelerate sets "xla" itself whenever torch_xla is installed',
            "neuron": 'accelerate picks "neuron" for the neuron device itself',
            "tpu": (
                "accelerate 1.16 has no TorchTPU backend: a multi-process launch does not start data parallel "
                "on TorchTPU"
            ),
        }[t.name]
        message = f'`{keyword}="nccl"` removed: the library picks the backend when none is named; {picks}{rejects}'
        if self.ctx.report("HF006", arg, message, replacement=new):
            return new
        return updated

    def _process_group(self, original: cst.Call, updated: cst.Call, qual: str) -> cst.Call:
        arg = self.kwarg(original, "backend")
        if arg is not None and (string_value(arg.value) or "").lower() == "nccl":
            return self._drop_backend(arg, updated, "backend", qual)
        return updated

    def _accelerator(self, original: cst.Call, updated: cst.Call, qual: str) -> cst.Call:
        arg = self.kwarg(original, "mixed_precision")
        if arg is None or string_value(arg.value) != "fp16" or not isinstance(arg.value, cst.SimpleString):
            return updated
        new = self._replace_kwarg_value(updated, "mixed_precision", replace_string(arg.value, "bf16"))
        if self.ctx.report(
            "HF003",
            arg,
            '`mixed_precision="fp16"` is float16 autocast with loss scaling; bf16 is '
            f'{self.ctx.target.display}\'s native reduced precision: `"bf16"`',
            replacement=new,
        ):
            return new
        return updated

    # HF001 / HF002 / HF005 / HF007 on loaders and pipelines ---------------------------------

    def _loader(self, original: cst.Call, updated: cst.Call, qual: str) -> cst.Call:
        new = self._attention(original, updated, qual)
        for flag in ("load_in_8bit", "load_in_4bit"):
            arg = self.kwarg(original, flag)
            if arg is not None and _true(arg.value):
                self.ctx.report(
                    "HF002", arg, f"`{flag}=True` loads the model with bitsandbytes' quantized layers (CUDA kernels)"
                )
        new = self._device_map(original, new)
        return self._kernels(original, self._dtype(original, new))

    def _kernels(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        """HF016: the `kernels` hub refuses a model on an XLA device: the keywords removed (the model's own layers)."""
        given = [a for n in ("use_kernels", "kernel_config") if (a := self.kwarg(original, n)) is not None]
        if self.ctx.target.name != "xla" or not given or self.ctx.code(given[0].value) in ("False", "None"):
            return updated
        if (
            len(given) == 1
            and given[0].keyword
            and given[0].keyword.value == "use_kernels"
            and not _true(given[0].value)
        ):
            self.ctx.report(
                "HF016", given[0], f"`use_kernels={self.ctx.code(given[0].value)}`, if true: {_KERNELS_FAIL}"
            )
            return updated
        candidate = self.without_kwargs(updated, {"use_kernels", "kernel_config"})
        if self.ctx.report("HF016", given[0], f"{_KERNELS_FAIL}: removed", replacement=candidate):
            return candidate
        return updated

    def _kernelize(self, original: cst.Call, updated: cst.Call, qual: str) -> cst.Call:
        """HF016: `kernelize(model, device="cuda")` on xla: `kernels` refuses the device string "xla", and
        without one reads the model's device, where an XLA model keeps its own layers (seen): removed."""
        self._kernelize_no_fallback(original)
        arg = self.kwarg(original, "device")
        if self.ctx.target.name != "xla" or arg is None or not _is_cuda(string_value(arg.value)):
            return updated
        candidate = self.without_kwargs(updated, {"device"})
        message = (
            f'`device={self.ctx.code(arg.value)}` would name `"xla"`, and {_KERNELS_REFUSE} (seen); '
            "without it `kernelize` reads the model's device, and a model on the XLA device keeps its own layers "
            "(no hub kernel is built for XLA): removed"
        )
        return candidate if self.ctx.report("HF016", arg, message, replacement=candidate) else updated

    def _kernelize_no_fallback(self, original: cst.Call) -> None:
        """HF016: a `use_fallback=` whose `KernelizeFallback` flags lack `NO_DEVICE` (`False`, `NONE`, `NO_LAYER`,
        `ALL & ~NO_DEVICE`) raises for a layer whose mapping names no kernel for the device, as a CUDA port's
        does on every target: reported with the table's reason; where the file's own mapping names a kernel for
        the device, a value without `CANNOT_LOAD` (the default too) is said not known here (`_hub_build_unknown`).
        A name is read at the bindings that reach the call, then at those a loop holding it carries to its next
        pass. A call Python never runs (after a `return` ...) is not read."""
        use, path = self._statement_at(original)
        at: _At = (self.ctx.scopes.innermost or self.ctx.module, use, path)
        body = at[0] if isinstance(at[0], cst.Module) else at[0].body
        dead = "" if use is None or not path else self._dead_unless_swallowed(body, use, path)
        if dead is None:
            return  # dead code (after a `return`, a `try` that returns ...): Python never runs the call
        table = kernels_no_fallback()
        arg = self.kwarg(original, "use_fallback")
        if arg is None:  # kernelize's default, `True`: `DEFAULT`
            default = f" (the default, `True`: `KernelizeFallback.DEFAULT`){dead}"
            self._hub_build_unknown(original, "use_fallback", default, table["flags"][table["booleans"]["True"]])
            return
        for given, bound, given_at in self._fallback_reads(arg.value, at):
            boolean = table["booleans"].get(self.ctx.code(given))
            flags = table["flags"][boolean] if boolean else self._fallback_flags(given, given_at)
            if flags is not None and self._fallback_finding(arg, bound + dead, flags):
                return

    def _dead_unless_swallowed(self, body: cst.CSTNode, use: cst.CSTNode, path: Sequence[cst.CSTNode]) -> str | None:
        """What a finding at a `kernelize` call adds of whether Python runs it: nothing where it may; None where it
        never does (`reached`); where it runs only if a context manager `_manager_read` does not read swallows an
        exception of a `with` body that ends before it (`async with lock: return`), those managers (twenty-ninth
        read: silent before)."""
        if reached(body, use, path, self._reading):
            return ""
        unread = self._unread_withs(body, into_defs=False)
        if not reached(body, use, path, self._swallowing_too(unread)):
            return None
        needed = [w for w in unread if reached(body, use, path, self._swallowing_too([w]))]
        return (
            f" (after `with {', '.join(self._unread_items(needed or unread))}`, whose body ends and whose context "
            "manager is not read here: the call runs only where it swallows an exception, which is not known here)"
        )

    def _unread_withs(self, body: cst.CSTNode, into_defs: bool = True) -> list[cst.With]:
        """The `with` statements of `body` with a context manager `_manager_read` does not read."""
        found = iter_statements(body, into_defs=into_defs)
        return [s for s in found if isinstance(s, cst.With) and self._unread_items([s])]

    def _swallowing_too(self, withs: Sequence[cst.With]) -> Reading:
        """The flow's reading with `withs` read as swallowing an exception of their body (what if they do)."""
        return self._reading._replace(swallows=lambda w: any(w is s for s in withs) or self._swallows(w))

    def _fallback_finding(self, arg: cst.Arg, bound: str, flags: int) -> bool:
        """HF016 for one value `use_fallback` may hold (`_kernelize_no_fallback`); whether it made a finding."""
        table = kernels_no_fallback()
        code = f"use_fallback={self.ctx.code(arg.value)}"
        lacking = self._unmapped_layers()
        if flags & table["flags"][table["needed"]] or lacking == ():  # no layer of the file's mapping lacks one
            return self._hub_build_unknown(arg, code, bound, flags)
        message = (
            f"`{code}`{bound} has no `KernelizeFallback.NO_DEVICE`, so a layer whose mapping names no kernel for the "
            f"device does not keep its own forward: {table[self.ctx.target.name]}"
        )
        if lacking:
            message += f"; this file's mapping names no `{self.ctx.target.name}` kernel for {', '.join(lacking)}"
        self.ctx.report("HF016", arg, message, advice=table["advice"])
        return True

    def _hub_build_unknown(self, node: cst.CSTNode, code: str, bound: str, flags: int) -> bool:
        """HF016 where the file's mapping names the target's kernel for a layer: kernels 0.18.3 then loads that
        repository's build for the host's backend, and raises where it has none unless `CANNOT_LOAD` is among the
        flags (twenty-seventh read: its source, and run on CPU; `DEFAULT`, the default `True`, lacks it too:
        twenty-eighth read); whether the hub repository has a `tpu` or `neuron` build is the hub's, not in the
        file: said not known here. Whether it made a finding."""
        table = kernels_no_fallback()
        mapped, lacking = self._target_layers(), self._unmapped_layers()
        if flags & table["flags"]["CANNOT_LOAD"] or not mapped:
            return False
        device = self.ctx.target.name
        layers = "every layer it maps" if lacking == () else ", ".join(mapped)
        message = (
            f"`{code}`{bound} has no `KernelizeFallback.CANNOT_LOAD`, and this file's mapping names a `{device}` "
            f"kernel for {layers}: {table['hub_build']}"
        )
        self.ctx.report("HF016", node, message, advice=table["hub_advice"])
        return True

    def _target_layers(self) -> tuple[str, ...]:
        """HF016: the layers this file's kernel mappings name a kernel for the target's device type, where
        `_unmapped_layers` reads them all; () otherwise."""
        if self._unmapped_layers() is None:
            return ()
        device = self.ctx.target.name
        return tuple(f"`{n}`" for m in self._mappings or () for n, types in (m or {}).items() if device in types)

    def _unmapped_layers(self) -> tuple[str, ...] | None:
        """HF016: the layers this file's kernel mappings (`use_kernel_mapping` / `register_kernel_mapping` of a
        dict written out, or of a name the module binds once to one) name no kernel for the target's device
        type; () where they name one for every layer; None where the file has none, or one porter does not read
        (built elsewhere, a key it cannot tell): the mapping is then not known here. One walk of the file, at a
        finding only."""
        if self._mappings is None:
            table = kernels_no_fallback()
            calls: list[cst.Call] = []

            class Calls(cst.CSTVisitor):  # by hand: the mapping calls anywhere in the file, wherever the walk is
                def visit_Call(self, n: cst.Call) -> None:
                    calls.append(n)

            cstwalk.visit(self.ctx.module, Calls())
            found = [c for c in calls if self.ctx.qualname(c.func) in table["mapping_calls"]]
            self._mappings = [self._mapping_devices(c) for c in found]
        if not self._mappings or any(m is None for m in self._mappings):
            return None
        device = self.ctx.target.name
        return tuple(f"`{n}`" for m in self._mappings for n, types in (m or {}).items() if device not in types)

    def _mapping_devices(self, call: cst.Call) -> dict[str, set[str]] | None:
        """Layer name -> the device types a mapping call's first argument names for it; None where not read."""
        first = self.positional(call)[:1]
        value = first[0].value if first else None
        if isinstance(value, cst.Name):
            bound = list(bindings(self.ctx.module, value.value))
            value = bound[0][0] if len(bound) == 1 and bound[0][1] is None else None
        if not isinstance(value, cst.Dict):
            return None
        layers: dict[str, set[str]] = {}
        for element in value.elements:
            name = string_value(element.key) if isinstance(element, cst.DictElement) else None
            inner = element.value if isinstance(element, cst.DictElement) else None
            if name is None or not isinstance(inner, cst.Dict):
                return None
            types = [self._device_type(e.key) if isinstance(e, cst.DictElement) else None for e in inner.elements]
            if None in types:
                return None
            layers[name] = {t for t in types if t is not None}
        return layers

    def _device_type(self, key: cst.BaseExpression) -> str | None:
        """A mapping's device key: `"tpu"`, or `Device(type="tpu")` (its first argument or `type=`)."""
        if not isinstance(key, cst.Call):
            return string_value(key)
        if self.ctx.qualname(key.func) not in kernels_no_fallback()["device_classes"]:
            return None
        given = self.kwarg(key, "type") or next(iter(self.positional(key)), None)
        return string_value(given.value) if given is not None else None

    def _fallback_reads(self, value: cst.BaseExpression, at: _At) -> list[tuple[cst.BaseExpression, str, _At | None]]:
        """The values `use_fallback=value` may hold at the call, each with how it is bound and where its own
        names are read: a name's value at the bindings that reach the call, then at those after it in a loop
        that holds it (its next pass)."""
        if not isinstance(value, cst.Name):
            return [(value, "", at)]
        held = self._fallback_bound(value.value, at)
        reads: list[tuple[cst.BaseExpression, str, _At | None]] = [(value, "", None)]
        if held is not None:
            unread = self._unread_managers(held[1][2] if held[1] is not None else ())
            reads = [(held[0], f" (`{self.ctx.code(held[0])}`, bound above{unread})", held[1])]
        later = self._fallback_bound(value.value, at, next_pass=True)
        if later is not None:
            note = "bound after the call in the loop that holds it: the value at its next pass"
            reads.append((later[0], f" (`{self.ctx.code(later[0])}`, {note})", later[1]))
        return reads

    def _fallback_flags(self, node: cst.BaseExpression, at: _At | None, names: int = 0) -> int | None:
        """The flags a `KernelizeFallback` expression gives (its members, `|`, `&`, `^`, `~`; a name, read at
        `at`, the statement that holds the expression: the call, or a binding's own statement for a name inside
        a bound value, `G = F | K.NO_LAYER`), from rules/hf.toml's table (kernels is not porter's dependency: its
        `Flag` values are recorded); None where not read (a parameter, a binding porter cannot tell, a chain of
        more than `_FLAG_NAMES` names)."""
        table = kernels_no_fallback()
        flags = table["flags"]
        cls, _, member = (self.ctx.qualname(node) or "").rpartition(".")
        if cls in table["classes"] and member in flags:
            return flags[member]
        if isinstance(node, cst.Name) and at is not None and names < _FLAG_NAMES:
            held = self._fallback_bound(node.value, at)
            return None if held is None else self._fallback_flags(held[0], held[1], names + 1)
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.BitInvert):
            inner = self._fallback_flags(node.expression, at, names)
            return None if inner is None else flags["ALL"] & ~inner
        if not isinstance(node, cst.BinaryOperation) or type(node.operator) not in _FLAG_OPS:
            return None
        left, right = self._fallback_flags(node.left, at, names), self._fallback_flags(node.right, at, names)
        return None if left is None or right is None else _FLAG_OPS[type(node.operator)](left, right)

    def _fallback_bound(
        self, name: str, at: _At, next_pass: bool = False
    ) -> tuple[cst.BaseExpression, _At | None] | None:
        """The value `name` reads at `at` where every binding of it that may reach that statement (in its
        function; a module's name read in a function: every one that may reach the module's end) is one and the
        same plain `name = value`, with where that value's own names are read (its statement); None where porter
        cannot tell (a parameter, an outer function's name, a binding in a branch beside another value): left,
        as the finding's reason is the value's. `next_pass`: the bindings after it in the loops that hold it."""
        where = self._name_scope(name, at[0])
        if where is None:
            return None
        scope, at_end = where
        if _loop_or_with_binds(scope, name) or (next_pass and at_end):
            return None
        use, path = at[1:]
        if next_pass:
            reaching = reaching_next_pass(name, use, path, self._reading) if use is not None and path else []
        elif at_end or use is None:
            reaching = reaching_bindings(scope, name, self._reading)
        else:
            reaching = reaching_before(scope, name, use, path, self._reading)
        codes = {self.ctx.code(value) if index is None else None for value, index in reaching}
        if len(codes) != 1 or None in codes:
            return None
        value = reaching[0][0]
        # (its statement's path for a value with no name in it too, `K.NO_LAYER`: the `with`s it is under)
        small, held = statement_path(scope if isinstance(scope, cst.Module) else scope.body, value)
        return value, (scope, small, held) if small is not None else None

    def _name_scope(
        self, name: str, scope: cst.Module | cst.FunctionDef | cst.Lambda
    ) -> tuple[cst.Module | cst.FunctionDef | cst.Lambda, bool] | None:
        """Where a statement of `scope` (the module, or the function the walk is in) reads `name`, and whether
        at the module's end (a module's name read in a function, as it is called); None for a parameter."""
        if isinstance(scope, cst.Module):
            return scope, False
        if is_param(scope, name):
            return None
        return (scope, False) if self.ctx.scopes.shadows(name) else (self.ctx.module, True)

    def _statement_at(self, node: cst.BaseExpression) -> tuple[cst.CSTNode | None, list[cst.CSTNode]]:
        """The statement that holds `node` (a small statement: its whole value, or in it: `m =
        kernelize(...).eval()`, `return kernelize(...)`; a compound statement whose header holds it: `if
        kernelize(...):`), and the statements that hold it, outermost first, where it is in the one the walk is
        in (else none). A one-line body (`for m in ms: kernelize(m, ...)`) is its suite."""
        path = list(self.ctx.current_statements)
        last = path[-1] if path else None
        suite = getattr(last, "body", None)
        lines: list[cst.CSTNode] = [suite] if isinstance(suite, cst.SimpleStatementSuite) else []
        for line in [*lines, *path[-1:]]:
            use = self._small_in(line, node)
            if use is not None:
                return use, [*path, line] if line is suite else path
        if isinstance(last, _HEADERS):
            return last, path
        return self.ctx.statement_of.get(id(node)), []

    def _small_in(self, line: cst.CSTNode, node: cst.BaseExpression) -> cst.BaseSmallStatement | None:
        """The small statement of a simple statement `line` that holds `node` (`statement_of`'s, else a walk of
        the line); None where `line` is not simple or holds no such statement."""
        if not isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            return None
        use = self.ctx.statement_of.get(id(node))
        return use if use is not None and any(s is use for s in line.body) else holding_small(line, node)

    def _reaching_at(
        self, scope: cst.Module | cst.FunctionDef | cst.Lambda, name: str, node: cst.BaseExpression
    ) -> list[tuple[cst.BaseExpression, int | None]]:
        """The bindings of `name` that may reach the statement that holds `node` (one the walk has passed:
        its blocks are known where it is the statement visited); those that reach the scope's end where that
        statement is not known."""
        use, path = self._statement_at(node)
        if use is None:
            return reaching_bindings(scope, name, self._reading)
        return reaching_before(scope, name, use, path, self._reading)

    def _set_use_kernels(self, original: cst.Call, updated: cst.Call, qual: str) -> cst.Call:
        """HF016: `model.set_use_kernels(True)` kernelizes on the model's device: it fails if that is XLA."""
        given = next(iter(self.positional(original)), None) or self.kwarg(original, "use_kernels")
        if self.ctx.target.name == "xla" and given is not None and self.ctx.code(given.value) not in ("False", "None"):
            self.ctx.report("HF016", original, f"`set_use_kernels({self.ctx.code(given.value)})`: {_KERNELS_LATE}")
        return updated

    def _pipeline(self, original: cst.Call, updated: cst.Call, qual: str) -> cst.Call:
        new = self._device_map(original, updated)
        arg = self.kwarg(original, "device")
        if arg is not None and self._literal(arg.value):
            value = self._device_value(arg.value, pipeline=True)
            if value is not None:
                candidate = self._replace_kwarg_value(new, "device", value)
                why = (
                    "an int is a CUDA index to `pipeline`, which otherwise falls back to the CPU"
                    if isinstance(arg.value, cst.Integer)
                    else "a CUDA device"
                )
                if self.ctx.report(
                    "HF005",
                    arg,
                    f"`device={self.ctx.code(arg.value)}` ({why}) becomes {self.ctx.code_of_new(value)}",
                    replacement=candidate,
                ):
                    new = candidate
        return self._dtype(original, new)

    def _attention(self, original: cst.Call, updated: cst.Call, qual: str) -> cst.Call:
        arg = self.kwarg(original, "attn_implementation")
        if arg is None:
            return updated
        value = string_value(arg.value)
        if value is None or not value.startswith("flash_attention") or not isinstance(arg.value, cst.SimpleString):
            return updated
        owner = qual.rsplit(".", 2)[-2] if qual.count(".") >= 2 else ""
        supports = self.lib.supports_sdpa(owner)
        new = self._replace_kwarg_value(updated, "attn_implementation", replace_string(arg.value, "sdpa"))
        version = self.lib.version("transformers")
        if supports is False:
            self.ctx.report(
                "HF001",
                arg,
                f'`"{value}"` needs flash-attn (CUDA); {owner} has no SDPA implementation in transformers '
                f'{version}: use `"eager"`',
                applicability=Applicability.MANUAL,
            )
            return updated
        if supports:
            message, applicability = (
                f'`"{value}"` needs flash-attn (CUDA): `"sdpa"`, which {owner} supports (transformers {version})',
                Applicability.SAFE,
            )
        else:
            message, applicability = (
                f'`"{value}"` needs flash-attn (CUDA): `"sdpa"`, if the checkpoint\'s architecture '
                "supports it (transformers raises at load time if not)",
                Applicability.UNSAFE,
            )
        if self.ctx.report("HF001", arg, message, replacement=new, applicability=applicability):
            return new
        return updated

    def _set_attn(self, original: cst.Call, updated: cst.Call, qual: str) -> cst.Call:
        args = self.positional(original)
        if not args:
            return updated
        value = string_value(args[0].value)
        if value is None or not value.startswith("flash_attention") or not isinstance(args[0].value, cst.SimpleString):
            return updated
        index = original.args.index(args[0])
        new_args = list(updated.args)
        new_args[index] = new_args[index].with_changes(value=replace_string(args[0].value, "sdpa"))
        new = updated.with_changes(args=new_args)
        if self.ctx.report(
            "HF001",
            args[0],
            f'`"{value}"` needs flash-attn (CUDA): `"sdpa"`, if the model supports it',
            replacement=new,
            applicability=Applicability.UNSAFE,
        ):
            return new
        return updated

    def _device_value(self, node: cst.BaseExpression, pipeline: bool = False) -> cst.BaseExpression | None:
        """The target device for one CUDA device value (`"cuda"`, `"cuda:1"`, `0`), or None."""
        if isinstance(node, cst.Integer):
            if pipeline and node.value.startswith("-"):
                return None
            return self.ctx.device(node)
        value = string_value(node)
        if not _is_cuda(value):
            return None
        assert value is not None
        _, _, index = value.partition(":")
        return self.ctx.device(cst.Integer(index) if index.isdigit() else None)

    def _device_map(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        arg = self.kwarg(original, "device_map")
        if arg is None or not self._literal(arg.value):
            return updated
        node = arg.value
        text = string_value(node)
        if isinstance(node, cst.Dict):
            new_value = self._device_map_dict(arg, node)
        elif text in _STRATEGIES:
            return self._device_map_strategy(arg, updated, text)
        else:
            new_value = self._device_value(node)
        if new_value is None:
            return updated
        candidate = self._replace_kwarg_value(updated, "device_map", new_value)
        if self.ctx.report(
            "HF005",
            arg,
            f"`device_map={self.ctx.code(node)}` names CUDA: {self.ctx.code_of_new(new_value)}",
            replacement=candidate,
        ):
            return candidate
        return updated

    def _device_map_dict(self, arg: cst.Arg, node: cst.Dict) -> cst.BaseExpression | None:
        """A `device_map` dict with its CUDA devices made the target's; None where it names no
        CUDA device, or several on a target with one device per process (reported)."""
        t = self.ctx.target
        values = [e.value for e in node.elements if isinstance(e, cst.DictElement)]
        devices = {self.ctx.code(v) for v in values if self._device_value(v) is not None}
        if len(devices) > 1 and not t.rank_indexed_devices:
            self.ctx.report(
                "HF005",
                arg,
                f"a device map over {len(devices)} CUDA devices: {t.display} has one device per process",
            )
            return None
        elements = []
        for e in node.elements:
            value = self._device_value(e.value) if isinstance(e, cst.DictElement) else None
            elements.append(e.with_changes(value=value) if value is not None else e)
        if not devices:
            return None
        return node.with_changes(elements=elements)

    def _device_map_strategy(self, arg: cst.Arg, updated: cst.Call, text: str | None) -> cst.Call:
        """`device_map="auto"` (a strategy, no device): kept, except on PyTorch/XLA, where
        accelerate would size no XLA device and load the model on the CPU."""
        if self.ctx.target.name != "xla":
            return updated
        new_value = self.ctx.device()
        candidate = self._replace_kwarg_value(updated, "device_map", new_value)
        if self.ctx.report(
            "HF005",
            arg,
            f'`device_map="{text}"`: accelerate sizes devices through torch.accelerator, which '
            "has no XLA device, so the model would load on the CPU: "
            f"{self.ctx.code_of_new(new_value)}",
            replacement=candidate,
            applicability=Applicability.UNSAFE,
        ):
            return candidate
        return updated

    def _dtype(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        new = updated
        for keyword in ("torch_dtype", "dtype"):
            arg = self.kwarg(original, keyword)
            if arg is None:
                continue
            node = arg.value
            if isinstance(node, cst.Attribute) and self.ctx.qualname(node) in ("torch.float16", "torch.half"):
                value: cst.BaseExpression = self.ctx.expr("{torch}.bfloat16")
            elif isinstance(node, cst.SimpleString) and string_value(node) in ("float16", "half"):
                value = replace_string(node, "bfloat16")
            else:
                continue
            candidate = self._replace_kwarg_value(new, keyword, value)
            if self.ctx.report(
                "HF007",
                arg,
                f"`{keyword}={self.ctx.code(node)}` loads the weights in float16; bf16 is "
                f"{self.ctx.target.display}'s native reduced precision",
                replacement=candidate,
            ):
                new = candidate
        return new

    # HF002 / HF004 / HF008 / HF009 findings -------------------------------------------------

    def _quantization(self, original: cst.Call, updated: cst.Call, qual: str) -> cst.Call:
        if self.lib.quantization_configs.get(qual) == "bitsandbytes":
            self.ctx.report("HF002", original, f"`{qual.rsplit('.', 1)[1]}` quantizes with bitsandbytes (CUDA kernels)")
        configs, on = gptqmodel_configs()
        if qual in configs:
            message = f"`{qual.rsplit('.', 1)[1]}`: {configs[qual]}; {on[self.ctx.target.name]}"
            self.ctx.report("HF017", original, message)
        return updated

    def _kbit(self, original: cst.Call, updated: cst.Call, qual: str) -> cst.Call:
        self.ctx.report(
            "HF002",
            original,
            "`prepare_model_for_kbit_training` prepares a bitsandbytes-quantized model (QLoRA): there is "
            "none on the target",
        )
        return updated

    def _parser_items(self, parser: cst.Call, scope: cst.FunctionDef | None = None) -> list[str | None]:
        """The qualified names of the dataclasses a parser is built with (its `dataclass_types`: the first
        positional argument or that keyword), in order (None: not known). A name is read at the bindings in
        `scope` (default: the one visited) that reach the parser's statement; unpacked, only from a tuple or
        list written there."""
        arg = next((a for a in parser.args if a.keyword is not None and a.keyword.value == "dataclass_types"), None)
        arg = arg or next((a for a in parser.args if a.keyword is None and not a.star), None)
        value = arg.value if arg is not None else None
        if isinstance(value, cst.Name):  # `TrlParser(dataclass_types)`: the tuple bound in the scope
            where = scope or self.ctx.scopes.innermost or self.ctx.module
            reaching = self._reaching_at(where, value.value, parser) if where is not None else []
            if reaching:  # bindings in branches that list different classes: not known
                read = {self._dataclasses(_unpacked(b)) for b in reaching}
                return list(read.pop()) if len(read) == 1 else []
        return list(self._dataclasses(value))

    def _dataclasses(self, value: cst.BaseExpression | None) -> tuple[str | None, ...]:
        """The qualified names a `dataclass_types` value lists (one where it is not a tuple or list); ()
        where the value is not known."""
        if value is None:
            return ()
        items = [e.value for e in value.elements] if isinstance(value, (cst.Tuple, cst.List)) else [value]
        return tuple(self.ctx.qualname(i) for i in items)

    def _parser(self, original: cst.Call, updated: cst.Call, qual: str) -> cst.Call:
        items = self._parser_items(original)
        if not items:
            self._unknown_dataclasses(original)
            return updated
        classes = [q for q in items if q is not None and self.lib.is_training_arguments(q)]
        for cls in classes:
            if self.ctx.target.name == "xla" and self._default(cls, "gradient_checkpointing") is True:
                self.ctx.report(
                    "HF012",
                    original,
                    f"{cls.rsplit('.', 1)[1]} parsed from the command line turns `gradient_checkpointing` on by "
                    f"default ({self.lib.source_of(cls)}): it {_CHECKPOINTING_FAILS}; pass "
                    "`--gradient_checkpointing false`",
                )
        for cls in classes:
            default = self._default_optim(cls)
            if default in _FUSED_OPTIMIZERS:
                self.ctx.report(
                    "HF004",
                    original,
                    f'{cls.rsplit(".", 1)[1]} parsed from the command line defaults to `optim="{default}"` '
                    + self._fused_default(cls),
                )
                break
        return updated

    def _unknown_dataclasses(self, parser: cst.Call) -> None:
        """HF004: a parser whose dataclasses porter cannot read (a tuple unpacked from a call, or bound to
        other classes in a branch): said, as what holds where they include the training arguments."""
        cls = "transformers.TrainingArguments"
        default = self._default_optim(cls)
        if default in _FUSED_OPTIMIZERS:
            self.ctx.report(
                "HF004",
                parser,
                f"the dataclasses `{self.ctx.code(parser.func)}` is built with are not known here (unpacked from "
                "a value porter does not read, passed by `**`, or bound to other classes in a branch): where they "
                f'include TrainingArguments (or a trl config), `optim` defaults to `"{default}"` '
                + self._fused_default(cls),
            )

    def _fused_default(self, cls: str) -> str:
        """HF004's end of a parser's message: where the fused default is recorded, and what to pass."""
        return (
            f"({self.lib.source_of(cls)}): fused AdamW, which {self.ctx.target.display} has no kernel for; "
            f"pass `--optim {_UNFUSED}`"
        )

    def _offloaded(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        """HF015: an offloaded KV cache syncs CUDA streams (`torch.cuda.default_stream`): the same cache
        kept on the device, which computes the same tokens."""
        arg = self.kwarg(original, "cache_implementation")
        if arg is not None and isinstance(arg.value, cst.Name):
            self._offloaded_name(arg)
        value = string_value(arg.value) if arg is not None else None
        if arg is None or not isinstance(arg.value, cst.SimpleString) or not (value or "").startswith("offloaded"):
            return updated
        kept = (value or "").removeprefix("offloaded").lstrip("_") or "dynamic"
        new = self.with_kwarg(updated, "cache_implementation", replace_string(arg.value, kept))
        message = f'`cache_implementation="{value}"`: {_OFFLOADED_FAILS}; `"{kept}"` keeps the cache on the device'
        return new if self.ctx.report("HF015", arg, message, replacement=new) else updated

    def _offloaded_name(self, arg: cst.Arg) -> None:
        """HF015: `cache_implementation=impl`, `impl` last bound in this scope to an `offloaded*` string:
        reported where it is passed, not fixed (the name may serve elsewhere)."""
        scope = self.ctx.scopes.innermost or self.ctx.module
        assert isinstance(arg.value, cst.Name)
        bound = last_binding(scope, arg.value.value) if scope is not None else None
        value = string_value(bound[0]) if bound is not None and bound[1] is None else None
        if value is not None and value.startswith("offloaded"):
            self.ctx.report("HF015", arg, f'`{arg.value.value}` holds `"{value}"` (bound above): {_OFFLOADED_FAILS}')

    def _generation_config(self, original: cst.Call, updated: cst.Call, qual: str) -> cst.Call:
        """HF015: `GenerationConfig(cache_implementation="offloaded")`, which `generate` builds its cache from."""
        return self._offloaded(original, updated)

    def _cache(self, original: cst.Call, updated: cst.Call, qual: str) -> cst.Call:
        """HF015: a KV cache built by hand that offloads: `offloading=True` removed (the same cache kept on the
        device); 4.57's `Offloaded*Cache` classes reported with the class that replaces them."""
        name = qual.rsplit(".", 1)[1]
        if name.startswith("Offloaded"):
            kept = "DynamicCache()" if name == "OffloadedCache" else "StaticCache(config=..., max_cache_len=...)"
            message = (
                f"`{name}` is transformers 4.x's offloaded {kept.split('(')[0]} (gone in 5.x): {_OFFLOADED_FAILS}; "
                f"`{kept}` keeps the cache on the device"
            )
            self.ctx.report("HF015", original.func, message)
            return updated
        arg = self.kwarg(original, "offloading")
        if arg is None or self.ctx.code(arg.value) in ("False", "None"):
            return updated
        new = self.without_kwargs(updated, {"offloading", "offload_only_non_sliding"})
        if not _true(arg.value):
            self.ctx.report("HF015", arg, f"`offloading={self.ctx.code(arg.value)}`, if true: {_OFFLOADED_FAILS}")
            return updated
        message = f"`{name}(offloading=True)`: {_OFFLOADED_FAILS}; without it the same cache stays on the device"
        return new if self.ctx.report("HF015", arg, message, replacement=new) else updated

    def _generate(self, original: cst.Call, updated: cst.Call, qual: str) -> cst.Call:
        t = self.ctx.target
        updated = self._offloaded(original, updated)
        arg = self.kwarg(updated, "cache_implementation")
        static = arg is not None and string_value(arg.value) == "static"
        if t.name == "xla":
            self.ctx.report(
                "HF008",
                original,
                "`generate` grows input_ids and the attention mask by one token per step: on PyTorch/XLA "
                "each new token compiles new graphs (measured: 2 per token, with a dynamic or a static "
                "cache); the same prompt length and `max_new_tokens` reuse them",
            )
            return updated
        if static:
            return updated
        if any(a.star == "**" and self.ctx.code(a.value) in ("generation_kwargs", "gen_kwargs") for a in original.args):
            self.ctx.report(
                "HF008",
                original,
                f"`generate` grows the sequence by one token per step: on {t.display} each new shape "
                'compiles; its KV cache is the library\'s to fix (`cache_implementation="static"`)',
            )
            return updated
        new = self.with_kwarg(updated, "cache_implementation", cst.SimpleString('"static"'))
        if self.ctx.report(
            "HF008",
            original,
            f"`generate` with the default (dynamic) KV cache: every step has new shapes, and {t.display} "
            'compiles per shape; `cache_implementation="static"` keeps each step\'s shapes fixed',
            replacement=new,
        ):
            return new
        return updated

    def visit_Module(self, node: cst.Module) -> None:
        """`import bitsandbytes` for its side effects only (its name used nowhere): no use site
        for another rule to report, so it is said here; and `import gptqmodel` (HF017)."""
        if b"gptqmodel" in (self.ctx.source or b""):
            self._gptqmodel_imports(node)
        if b"bitsandbytes" not in (self.ctx.source or b""):
            return
        from porter.analysis.resolve import _import_statements

        names: list[str] = []

        class Names(cst.CSTVisitor):
            def visit_Name(self, n: cst.Name) -> None:
                names.append(n.value)

        cstwalk.visit(node, Names())
        for stmt in _import_statements(node):
            if not isinstance(stmt, cst.Import):
                continue
            for alias in stmt.names:
                module = dotted(alias.name) or ""
                if module.split(".")[0] != "bitsandbytes":
                    continue
                bound = (
                    alias.asname.name.value
                    if alias.asname and isinstance(alias.asname.name, cst.Name)
                    else module.split(".")[0]
                )
                if names.count(bound) <= (1 if alias.asname else 0):
                    self.ctx.report(
                        "HF002",
                        stmt,
                        "bitsandbytes is imported (its kernels are CUDA's, its quantization what this "
                        "rule is about) and its name is used nowhere: an import for its side effects",
                    )

    def _gptqmodel_imports(self, node: cst.Module) -> None:
        """HF017: `import gptqmodel` (or from it) that the module, or a function when called, runs whenever it
        runs (`_unguarded_imports`). Its sdist is not CUDA-only (rules/cuda_only/packages.json's
        `read_not_cuda_only`: kernels in plain torch for every device), so not KERN003; its kernels are selected
        for no target's device, which `[gptqmodel_on]` says per target (twenty-fifth read)."""
        why = gptqmodel_configs()[1][self.ctx.target.name]
        for stmt, function, withs in _unguarded_imports(
            node.body, None, self._reading, self._swallowing_too(self._unread_withs(node))
        ):
            if isinstance(stmt, cst.Import):
                modules = [dotted(a.name) or "" for a in stmt.names]
            else:
                modules = [] if stmt.relative or stmt.module is None else [dotted(stmt.module) or ""]
            if not any(m.split(".")[0] == "gptqmodel" for m in modules):
                continue
            where = "is imported" if function is None else f"is imported by `{function}`, unchecked (a call needs it)"
            message = f"gptqmodel {where}: not CUDA-only (its torch kernels run on the CPU), but {why}"
            self.ctx.report("HF017", stmt, message + self._unread_managers(withs))

    def _swallows(self, stmt: cst.With) -> bool:
        """Whether a `with`'s context manager may swallow an exception of its body, which may then stop part way
        (HF017: at the import, an optional one; HF016: before a binding): `_SWALLOWING`'s calls (and
        `_SWALLOWING_METHODS`'), or a class or generator this module defines at its top level that the file shows
        swallowing (`_swallowing_def`). One defined elsewhere is read as running its body, as Python does unless
        its `__exit__` returns true."""
        for item in stmt.items:
            called = _manager_of(item.item)
            if self.ctx.qualname(called) in _SWALLOWING or _swallowing_method(called):
                return True
            if isinstance(called, cst.Name) and _swallowing_def(self._top_defs().get(called.value), self.ctx.qualname):
                return True
        return False

    def _unread_managers(self, withs: Sequence[cst.CSTNode]) -> str:
        """What a finding read through `with` statements adds where a context manager of one is not defined in this
        file (imported, or an instance bound to a name): its body is read as running whole, as Python runs it
        unless that manager's `__exit__` returns true, which is not known here (twenty-eighth read); "" where
        each is read (`_swallows`)."""
        unread = self._unread_items(withs)
        if not unread:
            return ""
        return (
            f"; under `with {', '.join(unread)}`, whose context manager is not read here (not a class or generator "
            "of this file): read as running its body (whether it swallows an exception is not known here)"
        )

    def _unread_items(self, withs: Sequence[cst.CSTNode]) -> list[str]:
        """The items of `with` statements whose context manager `_manager_read` does not read, quoted on one line."""
        return [
            one_line(self.ctx.code(item.item), 60)
            for w in withs
            if isinstance(w, cst.With)
            for item in w.items
            if not self._manager_read(_manager_of(item.item))
        ]

    def _manager_read(self, called: cst.BaseExpression) -> bool:
        """Whether `_swallows` reads a context manager: one of the file's top-level classes or generators, or one
        it knows swallows (`_SWALLOWING`, `_SWALLOWING_METHODS`) or never does (`_NOT_SWALLOWING`)."""
        if isinstance(called, cst.Name) and called.value in self._top_defs():
            return True
        known = _SWALLOWING | _NOT_SWALLOWING
        return self._name_or_builtin(called) in known or _swallowing_method(called)

    def _name_or_builtin(self, node: cst.BaseExpression) -> str | None:
        """A name's qualified name; a builtin's (`open`: `builtins.open`, `exit`) where the name is neither imported,
        nor bound by the walk's functions, nor bound at the file's top level."""
        qual = self.ctx.qualname(node)
        if qual is not None or not isinstance(node, cst.Name):
            return qual
        name = node.value
        local = self.ctx.scopes.shadows(name) or name in self._top_defs() or name in self._module_names()
        return None if local else f"builtins.{name}"

    def _module_names(self) -> frozenset[str]:
        """The names the file's top-level statements assign (`exit = ...`), read once, at a builtin's name only."""
        if self._assigned is None:
            self._assigned = frozenset(name for name, _ in name_assignments(self.ctx.module))
        return self._assigned

    def _own_def(self, name: str) -> cst.ClassDef | cst.FunctionDef | None:
        """The file's top-level class or function a name read in the walk's scope stands for (None where a function
        of the walk binds the name itself, or the file defines none)."""
        return None if self.ctx.scopes.shadows(name) else self._top_defs().get(name)

    def _top_defs(self) -> dict[str, cst.ClassDef | cst.FunctionDef]:
        """The classes and functions the module defines at its top level, by name (read at a `with` only)."""
        if self._defs is None:
            body = self.ctx.module.body
            self._defs = {s.name.value: s for s in body if isinstance(s, (cst.ClassDef, cst.FunctionDef))}
        return self._defs

    def _gather_object(self, original: cst.Call, updated: cst.Call, qual: str) -> cst.BaseExpression:
        """HF011: accelerate's `gather_object` raises under XLA even in one process, where on
        CUDA (accelerate's DistributedType.NO) it returns the object: the object itself when the
        run has one process, read from accelerate's own state; several processes keep the call."""
        if self.ctx.target.name != "xla":
            return updated
        args = updated.args
        if len(args) != 1 or args[0].keyword is not None or args[0].star:
            self.ctx.report(
                "HF011", original.func, "accelerate 1.16's `gather_object` raises under XLA, even in one process"
            )
            return updated
        value = args[0].value
        state = self.ctx.code(self.ctx.ref("accelerate.PartialState"))
        new = cst.parse_expression(f"(x if {state}().num_processes == 1 else f(x))").with_changes(
            lpar=[cst.LeftParen()], rpar=[cst.RightParen()]
        )
        assert isinstance(new, cst.IfExp)
        new = new.with_changes(body=value, orelse=updated)
        message = (
            "accelerate 1.16's `gather_object` raises under XLA even in one process (utils/operations.py), where on "
            "CUDA it returns the object: the object itself when the run has one process; with several processes the "
            "call stays and still raises (accelerate has no XLA object gather)"
        )
        if self.ctx.report("HF011", original.func, message, replacement=new):
            self._written.add(id(new))
            return new
        return updated

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        """A guard HF011 wrote as a call's argument needs no parentheses of its own."""
        value = updated.value
        if id(value) in self._written and isinstance(value, cst.IfExp):
            return updated.with_changes(value=value.with_changes(lpar=[], rpar=[]))
        return updated

    def _trainer(self, original: cst.Call, updated: cst.Call, qual: str) -> cst.Call:
        t = self.ctx.target.name
        row = next((r for r in breaks() if qual in r["callables"] and t in r["targets"]), None)
        if row is not None:
            self.ctx.report("HF010", original.func, row["what"], advice=row.get("advice"))
        if self._trainer_noted:
            return updated
        self._trainer_noted = True
        how = {
            "neuron": (
                "transformers 5.24's TrainingArguments finds the neuron device and accelerate 1.16 picks the "
                '"neuron" backend: the plain Trainer runs on TorchNeuron (AWS: transformers, PEFT, TRL and '
                "accelerate run natively on TorchNeuron)"
            ),
            "tpu": (
                "TrainingArguments picks `tpu:0` through torch.accelerator (transformers 5.24); accelerate "
                "1.16 has no TorchTPU distributed backend, so it trains in one process on one chip"
            ),
            "xla": "the Trainer detects torch_xla and trains on the XLA device, cutting the graph per step itself",
        }[t]
        self.ctx.report("HF009", original.func, f"`{qual.rsplit('.', 1)[1]}` on {self.ctx.target.display}: {how}")
        return updated


__all__ = ["HfFamily"]
