"""Code that already has a backend per device: CUDA's stays, the target becomes one more.

Libraries and frameworks dispatch over devices themselves: a list of the device types they
support (`SUPPORTED = ["cuda", "xpu", "npu"]`, the devices that allow fp16), an `if/elif`
chain over device types or availability tests, a `default_device()` that tries each backend
in turn, a registry of backend classes keyed by device type. Turning their `"cuda"` into the
target's breaks CUDA (and what else shared the branch) and gives the target no real backend.
So, where the switch has a place for one more device, the target is added and every existing
branch stays byte for byte:

- BACK001 a list of device types that names CUDA and another device, in a place that holds
  devices (`x in (...)`, `SUPPORTED_* = [...]`, `return [...]` from `supported_devices`), or
  the same list written `t == "cuda" or t == "npu"`: the target is added.
- BACK002 a branch per device (chain or ladder of early returns): CUDA's branch is kept and a
  branch for the target goes before the CPU fallback. Its body is CUDA's, ported on its own
  with the same rules (`ctx.port_snippet`), its test the target's own (`available` in
  rules/targets.toml, or the device string in a comparison). Where that port leaves work for
  a person (or the branch builds a CUDA class, or the fallback raises: the devices listed are
  the ones the code works on), nothing is added and the finding says where the target's
  branch goes. A detection rung that sets a switch key (`accelerator_name = "cuda"`) is kept
  the same way. BACK005: the port of CUDA's branch does nothing on the target.
- BACK003 CUDA's class of a per-device family (porter.analysis.device_backends) is kept.
- BACK004 a registry keyed by device type: reported where the target's backend is registered.
- BACK006 a check about CUDA itself (an assertion or error that demands CUDA, a library's
  `is_cuda_available()`, the project's accelerator asked whether it is CUDA's) stays CUDA's.
- BACK007 code the target never runs because it takes an alternative (a `try` body importing
  a CUDA-only package beside its `except ImportError` fallback, a build script) is left.

CUDA's kept branch or class is a `CudaOnlyCode` region with the code of its rule: no family
changes it, and the findings it would have had are counted in the one finding that speaks
for it (`quiet`); in a BACK007 region only the fixes are held back.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from porter.codemods import cstwalk
import libcst as cst

from porter.codemods.context import CudaOnlyCode
from porter.codemods.cuda_api import lookup
from porter.codemods.device import names_current_device
from porter.codemods.guards import after as _after
from porter.codemods.guards import _module_needs as module_needs
from porter.codemods.guards import cuda_only_facts, only_cuda_reaches
from porter.config.cuda_packages import cuda_only_modules, import_tokens, ported_imports
from porter.analysis.cuda_only_index import imports_package
from porter.codemods.family import Family, code_nodes, one_comparison, replace_string, string_value, walk
from porter.codemods.literals import cuda_autocast_call, in_package, not_device_keywords
from porter.analysis.device_backends import DIRS, abstraction, answers
from porter.analysis.kinds import BackendKind
from porter.analysis.device_backends import cuda_backend_facts
from porter.analysis.device_words import own_device_words
from porter.core.findings import Applicability, Severity
from porter.analysis.resolve import dotted, name_assignments

# device types a switch names: torch's own and the out-of-tree backends libraries dispatch to
DEVICE_NAMES = frozenset(
    {
        "cuda",
        "cpu",
        "xpu",
        "mps",
        "hpu",
        "npu",
        "mlu",
        "musa",
        "xla",
        "tpu",
        "neuron",
        "hip",
        "mtia",
        "ipu",
        "sdaa",
        "gcu",
        "maia",
        "meta",
    }
)
HOSTS = frozenset({"cpu", "meta"})  # not an accelerator: a switch needs another one beside CUDA
# `is_torch_npu_available()`, `is_npu_available()`, `is_cuda_available()` (accelerate, transformers)
_AVAILABLE_HELPER = re.compile(r"^is_(?:torch_)?([a-z]+?)_available$")
_AVAILABLE_API = re.compile(r"^torch\.(?:backends\.)?([a-z]+)\.is_available$")
_CUDA_NAMED = re.compile(r"cuda|nccl", re.I)
# a device object's method that asks whether it is CUDA's (`platform.is_cuda()`, `.is_cuda_alike()`)
_PLATFORM_QUERY = re.compile(r"^is_cuda(?:_alike)?$")
# a module that imports the builder of CUDA extensions: build code (BACK007)
_BUILDS_CUDA = re.compile(
    rb"^[ \t]*from[ \t]+torch\.utils\.cpp_extension[ \t]+import[^\n]*\bCUDAExtension\b", re.MULTILINE
)
BRANCH = "_porter_target_branch"  # the function a branch is ported in, on its own
# the packages with CUDA-only parts that LIB rules port (apex, flash-attn, xformers)
_PORTED_TOKENS = import_tokens(sorted(ported_imports()))
# a string literal that names an accelerator other than CUDA: a file with none has no switch key
_OTHER_DEVICE = re.compile(rb"""["'](?:xpu|mps|hpu|npu|mlu|musa|xla|tpu|neuron|hip|mtia|ipu|sdaa|gcu|maia)[:."']""")
# a vendor's own device name beside the known ones (DeepSpeed's "supa", "klxpu"; "xpu.external")
_VENDOR = re.compile(r"^[a-z][a-z0-9_.]{1,15}$")
VOCABULARY = frozenset({"gpu", "rocm", "auto", "tpu_v4", "nvidia", "amd"})  # accelerator names, not device types
# a comment saying the code under it is CUDA's alone: `# right now, only CUDA is implemented`
_ONLY_CUDA = re.compile(r"(?i)\bonly (?:on )?(?:cuda|nvidia)\b|\bcuda[ -]only\b")
# NVIDIA's CUDA libraries, by the word a class named for one uses (`CUBLAS_Context`)
_NVIDIA_LIBRARIES = {
    "cublas": "cuBLAS",
    "cublaslt": "cuBLASLt",
    "cudnn": "cuDNN",
    "cufft": "cuFFT",
    "curand": "cuRAND",
    "cusparse": "cuSPARSE",
    "cusolver": "cuSOLVER",
    "nccl": "NCCL",
    "nvml": "NVML",
}
# the words of a name: `CUBLAS_Context` -> CUBLAS, Context; `CublasLtHandle` -> Cublas, Lt, Handle
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+")
# a library's own lookup of the accelerator in use: `get_current_accelerator()`, `current_accelerator()`
_ACCELERATOR_LOOKUP = re.compile(r"^_?(?:get_)?(?:current_)?accelerator(?:_device)?$")
# a link to an issue or a pull request: what a workaround cites
_ISSUE_LINK = re.compile(r"https?://\S+/(?:issues|pull)/\d+")
# a message that says CUDA is required (not "GPU": the target is an accelerator too)
_SAYS_CUDA = re.compile(r"CUDA|NVIDIA|[Nn]vidia")
# a class named for CUDA (`CUDAProperties`, `CudaConfig`): what it makes describes CUDA's device
_CUDA_CLASS = re.compile(r"(?:^|\.)(?:CUDA|Cuda)[A-Z]\w*$")
# a class's name (`Int8Params`, `Linear8bitLt`): CamelCase
_CLASS_NAME = re.compile(r"^[A-Z](?=[A-Za-z0-9]*[a-z])(?=[A-Za-z0-9]*[A-Z0-9])[A-Za-z0-9]+$")
# a function that loads a kernel package by name (`get_kernel("org/name")`, `lazy_load_kernel("name")`)
# the last part of a dotted name ends in `_kernel` and holds `load` or `get` before it (the
# lookahead first, once: `\w*(?:load|get)\w*_kernel$` tried each `load` of a long name to its end)
_KERNEL_LOADER = re.compile(r"(?i)(?:^|\.)(?=\w*_kernel$)\w*?(?:load|get)")
# a check that may demand CUDA (`Backends._integration`): `assert torch.cuda...`, `if not torch.cuda...`
_DEMAND = re.compile(rb"assert\s+torch\.cuda\.is_available\(\)|if\s+not\s+torch\.cuda\.is_available\(\)")
# a message about CUDA's platform itself (`_only_says`)
_SAYS_PLATFORM = re.compile(r"\b(?:CUDA|ROCm|NVIDIA|HIP)\b")
# ... an assertion's, in any case ("Only cuda device is supported")
_SAYS_CUDA_ANY_CASE = re.compile(r"(?i)\bcuda\b|nvidia")
# ... or, in a library (`_raises_for_cuda`), a GPU: what the library calls CUDA's hardware
_SAYS_GPU = re.compile(r"\bGPUs?\b")
# a function that answers whether CUDA itself is there (accelerate's `is_cuda_available`)
_CUDA_PREDICATE = re.compile(r"^_?(?:is_)?(?:torch_)?(?:cuda|rocm|hip)(?:_is)?_available$|^_?has_(?:cuda|rocm)$")
# a variable that records whether CUDA is there (accelerate's `pt_cuda_available`), not a choice (`use_cuda`)
_CUDA_FACT = re.compile(r"(?:^|_)cuda_(?:is_)?available$|^_?has_cuda$")
# `torch.cuda` APIs with no device-generic twin: a branch that calls them is CUDA's own
_CUDA_OWN = frozenset(
    {
        "get_rng_state",
        "set_rng_state",
        "get_rng_state_all",
        "set_rng_state_all",
        "random",
        "is_initialized",
        "is_bf16_supported",
        "get_device_capability",
        "get_device_properties",
        "nccl",
        "graphs",
        "graph",
        "CUDAGraph",
        "is_current_stream_capturing",
        "amp",
        "jiterator",
        "tunable",
    }
)
# CUDA's streams and events (a function that keeps one unported is CUDA's own, in a library)
_STREAM_KINDS = frozenset({"Stream", "Event", "ExternalStream", "StreamContext", "stream"})
# torch's own methods that take a stream (`t.record_stream(s)`): not a hand-over to other code
_TORCH_STREAM_METHODS = frozenset({"record_stream", "wait_stream", "wait_event", "record", "synchronize", "query"})
# the `torch.cuda` stream calls a method of a class that keeps CUDA streams makes on them
_STREAM_APIS = frozenset({*_STREAM_KINDS, "current_stream", "set_stream", "default_stream", "synchronize"})
# a function named for CUDA (`_get_cuda_rng_state`, `set_cuda_graph`): `cuda` as a word of its name
_NAMED_CUDA_WORD = re.compile(r"(?:^|_)cuda(?:_|$)", re.I)
# `is_cuda_stream_capturing`, `is_torch_cuda_available`, `get_cuda_device_count`: a library's
# question about CUDA itself
_CUDA_QUESTION = re.compile(r"^_?(?:is|has|get)_(?:\w+_)?cuda(?:_\w+)?$")
# `self.root_device`, `self._device`: the device a class holds
_SELF_DEVICE = re.compile(r"\bself\.(?:_?root_device|_?device)\b")
# calls whose first argument is a device type (or a collective backend)
_DEVICE_FIRST = frozenset(
    {"init_device_mesh", "autocast", "init_process_group", "init_distributed", "device", "to", "empty_cache"}
)
# the methods that put a value in a set, list or dict (`self._gpu_devices.add(device)`)
_FILLS = frozenset({"add", "append", "appendleft", "extend", "insert", "update", "setdefault"})
# an empty container a field starts as (`self._gpu_devices: set[int] = set()`)
_EMPTY = frozenset({"set", "list", "dict", "deque", "OrderedDict"})
# builtins that read a container without putting anything in it (`sorted(self._gpu_devices)`)
_READS = frozenset(
    {
        "len",
        "sorted",
        "list",
        "tuple",
        "set",
        "frozenset",
        "iter",
        "enumerate",
        "reversed",
        "bool",
        "any",
        "all",
        "min",
        "max",
    }
)
# a name that says it holds devices, accelerators or backends
_NAMES_DEVICES = re.compile(r"device|accelerator|backend|platform|supported", re.I)


def device_of(value: str | None) -> str | None:
    """The device type a string names (`"cuda"`, `"cuda:0"`, `"xpu.external"`), if any."""
    if not value:
        return None
    head = re.split(r"[:.]", value, maxsplit=1)[0]
    return head if head in DEVICE_NAMES and head == head.lower() else None


class _Test:
    """What a branch's test asks: the device, and the node that names it there."""

    def __init__(self, device: str, node: cst.CSTNode, kind: str) -> None:
        self.device = device
        self.node = node  # the string, call or attribute that names the device
        self.kind = kind  # "string" | "available" | "attribute" | "backend" | "platform"


def _device_pairs(node: cst.CSTNode) -> list[tuple[str, cst.BaseExpression]] | None:
    """`((is_torch_cuda_available, "cuda"), (is_torch_npu_available, "npu"))`: each device
    type paired with the test of its availability (a name, an attribute or a call), or None."""
    if not isinstance(node, cst.Tuple) or not node.elements:
        return None
    out = []
    for e in node.elements:
        pair = e.value
        if not isinstance(pair, cst.Tuple) or len(pair.elements) != 2:
            return None
        test, device = pair.elements[0].value, pair.elements[1].value
        name = (dotted(test.func if isinstance(test, cst.Call) else test) or "").rpartition(".")[2]
        value = string_value(device)
        if not name or device_of(value) is None or "available" not in name.lower():
            return None
        out.append((name, device))
    return out if any(device_of(string_value(d)) == "cuda" for _, d in out) else None


def _subject(test: cst.BaseExpression, found: _Test | None) -> str | None:
    """The name compared with a device string in a switch's test (`device` in `device == "cuda"`)."""
    if found is None or found.kind != "string" or not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    sides = [test.left, test.comparisons[0].comparator]
    other = [x for x in sides if x is not found.node]
    return other[0].value if len(other) == 1 and isinstance(other[0], cst.Name) else None


def _handles_any_device(after: Sequence[cst.CSTNode], subject: str, code) -> bool:
    """Whether the code after a switch puts its work on the switch's own subject
    (`torch.zeros(..., device=device)`, `x.to(device)`): its fallback is every device's."""
    for stmt in after:
        for n in _nodes(stmt):
            if isinstance(n, cst.Arg) and isinstance(n.value, cst.Name) and n.value.value == subject:
                if n.keyword is not None and n.keyword.value == "device":
                    return True
            if (
                isinstance(n, cst.Call)
                and isinstance(n.func, cst.Attribute)
                and n.func.attr.value == "to"
                and n.args
                and isinstance(n.args[0].value, cst.Name)
                and n.args[0].value.value == subject
            ):
                return True
    return False


def _exits(body: cst.BaseSuite) -> bool:
    """Whether a block ends by leaving its function or loop (a ladder's rung)."""
    stmts = body.body
    if not stmts:
        return False
    last = stmts[-1]
    small = last.body[-1] if isinstance(last, cst.SimpleStatementLine) and last.body else last
    return isinstance(small, (cst.Return, cst.Raise, cst.Continue, cst.Break))


class BackendsFamily(Family):
    """Adds the target to device switches; keeps CUDA's part of them as it is."""

    name = "backends"
    tokens = (b"cuda",)

    @classmethod
    def candidate(cls, ctx, source: bytes) -> bool:
        """Wanted also for reasons no token shows (the project's CUDA-only facts and imports): no cheaper condition."""
        return True

    @classmethod
    def wanted(cls, ctx, source: bytes) -> bool:
        """Also a CUDA backend class whose file names no `cuda` (`class CUDA_Accelerator`), and a
        file that imports a CUDA-only package (a `try: import apex ... except ImportError:`)."""
        if super().wanted(ctx, source):
            return True
        if not any(ctx.enabled(c) for c in cls.codes()):
            return False
        if b"nccl" in source and any(
            f[2] == BackendKind.ABSTRACTION for f in (getattr(ctx.settings, "flow", None) or ())
        ):
            return True  # `init_distributed(dist_backend='nccl')` where the project's accelerator is at hand
        return (
            bool(_backend_facts(ctx.settings))
            or _module_fact(ctx.settings, ctx.path) is not None
            or imports_package(source)
            or any(t in source for t in _PORTED_TOKENS)
        )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._lists: set[int] = set()  # lists of devices the target is added to
        self._available: str | None = None  # the target's own availability test, as code
        self._vocabulary: set[int] = set()  # lists of a framework's accelerator names: no devices
        self._accessors: dict[str, str] | None = None  # members of CUDA's backend class that answer "cuda"
        self._other_devices: bool | None = None  # the file names an accelerator other than CUDA (`_keys_of`)
        self._hip = not ctx.source or b"version.hip" in ctx.source
        self._reaches: dict[int, str | None] = {}  # id(branch body) -> why it reaches CUDA-only code
        self._says_cuda = not ctx.source or b"CUDA" in ctx.source or b"NVIDIA" in ctx.source or b"Nvidia" in ctx.source
        self._listed: set[int] = (
            set()
        )  # lists in a place that holds devices (`x.type in ...`, `SUPPORTED_DEVICES = ...`)
        self._keys: dict[int, dict[str, set[str]]] = {}  # id(scope) -> its switch keys
        self._bindings: set[str] | None = None  # what the module binds to a class, function or import
        self._cuda_asserts: dict[int, str] = {}  # id(class) -> an assert of its code that only CUDA passes ("": none)
        self._ors: dict[
            int, tuple[str, cst.SimpleString]
        ] = {}  # `a == "cuda" or a == "npu"` -> (subject, CUDA's string)
        self._inner_ors: set[int] = set()  # the inner `or`s of a chain already looked at
        self._inner_lists: set[int] = set()  # the inner `or`s / `and`s of a list of availability tests
        self._chains: dict[int, tuple[int, cst.If]] = {}  # id(head If) -> (insert after branch k, new branch)
        self._ladders: dict[int, tuple[int, cst.If]] = {}  # id(block) -> (insert after its k-th If, new If)
        self._regions: list[
            tuple[CudaOnlyCode, cst.CSTNode, str, cst.CSTNode | None]
        ] = []  # (region, at, message, replacement)
        self._elifs: set[int] = set()
        self._module_needs: str | None | bool = False  # the CUDA-only package the module needs (`_needs`)
        self._fields: dict[int, dict[str, cst.BaseExpression]] = {}  # id(class) -> `_cuda_only_fields`
        self._stream_units: dict[int, str] = {}  # id(function or class) -> a CUDA stream it keeps ("": none)
        # what `_kept_cuda_runtime` looks for, by a cheap test of the source first
        source = ctx.source
        self._raw_streams = source is None or any(t in source for t in (b"cuda_stream", b"_C._cuda", b"_C import"))
        self._streams_named = source is None or any(t in source for t in (b"Stream", b"Event", b"stream"))
        # the project's own device abstraction (porter.analysis.kinds.BackendKind.ABSTRACTION):
        # (why, {class of a per-device family: its device}) or None
        self._library: tuple[str, dict[str, str]] | None | bool = False
        self._guarded: set[int] = set()  # tests in front of CUDA-only code (the guards' GUARD001)
        self._folders: tuple[str, ...] = ()  # the folders of the project's classes per device
        self._backend_dirs: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (CUDA's folder, its siblings)
        self._accessor: str | None | bool = False  # a name imported from those folders (`get_accelerator`)
        self._index: str | None = None  # the CUDA class's member that names an indexed device (`answers`)
        self._abstraction_names: dict[str, str] | None = None  # local name -> the module it came from
        self._import_flags: dict[str, str] = {}  # `HAS_X` set by a `try` import of a package the target lacks -> it
        self._gates: set[int] = set()  # module-level `if f(): import <such a package>` (`_import_gates`)
        self._key_functions: dict[str, tuple[str, ...]] | None = (
            None  # the project's functions that take a device switch's key
        )
        self._assert_reads: dict[str, cst.Assert] | None = None  # `_kept_assert_reads`, read once
        self._filed: dict[int, cst.SimpleString] = {}  # `if x == "npu": x = "cuda"`: id(test) -> "npu"
        self._table: tuple[str, str] | None | bool = (
            False  # the module's enum of devices without the target (`_device_enum`)
        )

    # -- tests ------------------------------------------------------------------------------

    def _test(self, test: cst.BaseExpression) -> _Test | None:
        """The device question `test` asks, or None: the target's own availability test, a
        comparison with a device string, a call or an attribute that asks about a device; an
        `and` asks its first operand's that does."""
        if type(test) in (cst.Comparison, cst.BooleanOperation) and self._is_target_available(test):
            return _Test(self.ctx.target.device_type, test, "available")  # the branch porter added
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self._test(test.left) or self._test(test.right)
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            return _string_test(test)
        if isinstance(test, cst.Call):
            return self._call_test(test)
        if isinstance(test, cst.Attribute):
            return self._attribute_test(test)
        return None

    def _call_test(self, test: cst.Call) -> _Test | None:
        """A call that asks about a device: `device.startswith("cuda")`, a class of the
        project's per-device family (`CUDAAccelerator.is_available()`), or an availability API
        or helper (`torch.cuda.is_available()`, `is_cuda_available()`)."""
        func = test.func
        if isinstance(func, cst.Attribute) and func.attr.value == "startswith" and test.args:
            device = device_of(string_value(test.args[0].value))
            return _Test(device, test.args[0].value, "string") if device else None
        qual = self.ctx.qualname(func) or dotted(func) or ""
        if isinstance(func, cst.Attribute) and func.attr.value == "is_available" and isinstance(func.value, cst.Name):
            # `CUDAAccelerator.is_available()`: a class of the project's per-device family
            library = self.library()
            device = library[1].get(func.value.value) if library else None
            if device is not None:
                return _Test(device, test, "backend")
        m = _AVAILABLE_API.match(qual) or _AVAILABLE_HELPER.match(qual.rpartition(".")[2])
        if m and m.group(1) in DEVICE_NAMES:
            return _Test(m.group(1), test, "available")
        return None

    def _attribute_test(self, test: cst.Attribute) -> _Test | None:
        """An attribute that asks about a device: `x.is_cuda` (a tensor's), or `torch._C._has_xpu`
        (whether this build of torch has the device's backend)."""
        if test.attr.value.startswith("is_") and self.ctx.qualname(test) is None:
            device = test.attr.value[3:]
            return _Test(device, test, "attribute") if device in DEVICE_NAMES else None
        if test.attr.value.startswith("_has_"):
            # `torch._C._has_xpu`: whether this build of torch has the device's backend
            device = test.attr.value[5:]
            qual = self.ctx.qualname(test) or ""
            if qual == f"torch._C._has_{device}" and device in DEVICE_NAMES and device != "cuda":
                return _Test(device, test, "available")
        return None

    def _is_target_available(self, test: cst.BaseExpression) -> bool:
        """Whether `test` is the target's own availability test (the branch porter adds): its
        code is compared only where its last operand looks like it (code costs a walk)."""
        last = test.right if isinstance(test, cst.BooleanOperation) else test
        if not isinstance(last, cst.Comparison):
            return False
        other = last.comparisons[0].comparator
        if not (string_value(other) == self.ctx.target.device_type or isinstance(other, cst.Integer)):
            return False
        if self._available is None:
            self._available = self.ctx.code(
                cst.parse_expression(self.ctx.target.available.format(torch="torch", xr="xr"))
            )
        return self.ctx.code(test) == self._available

    def _target_test(self, test: cst.BaseExpression, asks: _Test) -> cst.BaseExpression:
        """CUDA's test, asking for the target instead."""
        t = self.ctx.target
        if asks.kind == "string":
            assert isinstance(asks.node, cst.SimpleString)
            new: cst.BaseExpression = replace_string(asks.node, t.device_type)
        elif asks.kind == "attribute":
            assert isinstance(asks.node, cst.Attribute)
            if t.tensor_is_attr:
                new = asks.node.with_changes(attr=cst.Name(t.tensor_is_attr))
            else:  # `x.is_cuda` -> `x.device.type == "xla"`
                new = cst.parse_expression(f'({self.ctx.code(asks.node.value)}.device.type == "{t.device_type}")')
        else:
            new = self._own_helper(asks) or self.ctx.expr(t.available)
            if asks.node is not test:  # an operand of `and`: keep the precedence
                new = new.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return test.deep_replace(asks.node, new) if asks.node is not test else new

    def _own_helper(self, asks: _Test) -> cst.BaseExpression | None:
        """`is_torch_neuron_available()` where CUDA's rung calls `is_torch_cuda_available()`
        and the module has that helper for the target too (imported or defined): the rung
        the module's other rungs are written in, with no new import."""
        node = asks.node
        if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Name) or node.args:
            return None
        m = _AVAILABLE_HELPER.match(node.func.value)
        if m is None or m.group(1) != asks.device:
            return None
        name = node.func.value[: m.start(1)] + self.ctx.target.device_type + node.func.value[m.end(1) :]
        defined = any(isinstance(s, cst.FunctionDef) and s.name.value == name for s in self.ctx.module.body)
        if not (defined or self.ctx.in_scope(name)) or self.ctx.scopes.shadows(name):
            return None
        return cst.Call(func=cst.Name(name))

    # -- `try: <CUDA-only import> ... except ImportError: <fallback>` -----------------------

    def visit_Try(self, node: cst.Try) -> None:
        """`try: from apex.normalization import FusedLayerNorm; norm = FusedLayerNorm(...)
        except ImportError: norm = LayerNorm(...)`: a switch too. The library is absent on the
        target, so the fallback runs there: the `try` body is CUDA's branch, left as it is."""
        if self.ctx.in_cuda_only_code() is not None or not any(_catches_import_error(h) for h in node.handlers):
            return
        module = next((m for m in _imports_in(node.body) if _cuda_only_import(m, self.ctx.target.name)), None)
        if module is None:
            return
        note = (
            f"the `try` body imports `{module}`, which the target does not have: its `except` is the fallback that "
            "runs there, so the body is left as it is"
        )
        region = CudaOnlyCode(node, "the `try` body", f"it imports `{module}`", code="BACK007", note=note)
        for stmt in node.body.body:
            self.ctx.cuda_only_code[id(stmt)] = region
        self._regions.append((region, node, note, None))
        # `HAS_FLASH_ATTN = True` in the body, `= False` in the handler: a flag of the import
        flags = {name for name, value in name_assignments(node.body) if _is_constant(value, "True")}
        for handler in node.handlers:
            for name, value in name_assignments(handler.body):
                if name in flags and _is_constant(value, "False"):
                    self._import_flags[name] = module

    def _import_flag(self, test: cst.BaseExpression) -> str | None:
        """`HAS_FLASH_ATTN` in `if HAS_FLASH_ATTN:` (or one operand of an `and`), a flag set
        by a `try` import of a package the target does not have (visit_Try), or a call that
        gates such an import at the top of the module (`_import_gates`)."""
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self._import_flag(test.left) or self._import_flag(test.right)
        if isinstance(test, cst.Call) and not test.args:
            code = self.ctx.code(test)
            return code if code in self._import_flags else None
        return test.value if isinstance(test, cst.Name) and test.value in self._import_flags else None

    def _import_gates(self, module: cst.Module) -> None:
        """`if is_sagemaker_mp_enabled(): import smdistributed.modelparallel.torch as smp` at the
        top of the module: the call gates the import of a package the target does not have, so
        the module's branches on that same call run only where the package runs, as a flag set
        by a `try` import does."""
        for stmt in module.body:
            if not (isinstance(stmt, cst.If) and isinstance(stmt.test, cst.Call) and not stmt.test.args):
                continue
            imported = next((m for m in _imports_in(stmt.body) if _cuda_only_import(m, self.ctx.target.name)), None)
            if imported is not None:
                self._import_flags[self.ctx.code(stmt.test)] = imported
                self._gates.add(id(stmt))

    def _flagged_branch(self, node: cst.If) -> None:
        """`if HAS_FLASH_ATTN: flash_attn_func(...) else: <SDPA>`: the flag is False on the
        target, whose path is the `else` the library wrote for a missing package; the branch is
        the package's own (CUDA's), left as it is (rewriting it there would break CUDA and
        orphan the `try` import)."""
        name = self._import_flag(node.test) if self._import_flags else None
        if name is None or id(node) in self._gates or self.ctx.in_cuda_only_code() is not None:
            return
        module = self._import_flags[name]
        how = f"the module imports it under `{name}`" if name.endswith(")") else f"the `try` above sets `{name}`"
        note = (
            f"`if {_short(self.ctx.code(node.test))}` runs where `{module}` imports ({how}), which the target does "
            "not have: the code after it is the fallback that runs there, so the branch is left as it is"
        )
        region = CudaOnlyCode(
            node.test,
            f"`if {self.ctx.code(node.test)}`",
            f"`{name}` is False without `{module}`",
            code="BACK007",
            note=note,
        )
        for stmt in node.body.body:
            self.ctx.cuda_only_code[id(stmt)] = region
        self._regions.append((region, node.test, note, None))

    # -- a project with a device abstraction of its own (BACK008) ----------------------------

    def library(self) -> tuple[str, dict[str, str]] | None:
        """(why, {class of the project's per-device family: its device}) when the project has a
        device abstraction of its own (porter.analysis.device_backends.abstraction), else None."""
        if self._library is False:
            flow = getattr(self.ctx.settings, "flow", None)
            if flow is None:
                evidence = abstraction([(self.ctx.path, self.ctx.source)])
            else:
                evidence = next((f[3] for f in flow if f[2] == BackendKind.ABSTRACTION), None)
            if evidence is None:
                self._library = None
            else:
                classes: dict[str, str] = {}
                for e in evidence[1:]:
                    if not e.startswith(("@", "!", DIRS)):
                        device, _, name = e.partition("=")
                        classes[name] = device
                self._folders = tuple(e[1:] for e in evidence[1:] if e.startswith("@"))
                self._index = answers(evidence, "index")
                self._backend_dirs = tuple(
                    (folder, tuple(others.split(",")))
                    for e in evidence[1:]
                    if e.startswith(DIRS)
                    for folder, _, others in [e[len(DIRS) :].partition("=")]
                )
                self._library = (evidence[0], classes)
        return self._library  # type: ignore[return-value]

    def _names_cuda(self, node: cst.CSTNode, constants: bool = False) -> str | None:
        """What in `node` is CUDA's own: a "cuda" device string, a CUDA class of the project's
        family, `torch.cuda` as a value, or a `torch.cuda` API with no device-generic twin."""
        library = self.library()
        classes = {c for c, d in library[1].items() if d == "cuda"} if library else set()
        nodes = _nodes(node)
        # `torch.cuda.memory` of `torch.cuda.memory.x`
        inner = {id(n.value) for n in nodes if isinstance(n, cst.Attribute)}
        keyed = self._allocator_keys(nodes)
        if keyed is not None:
            return keyed
        for n in nodes:
            if isinstance(n, (cst.Name, cst.Attribute)) and id(n) not in inner:
                qual = self.ctx.qualname(n) or (dotted(n) if isinstance(n, cst.Attribute) else None) or ""
                if qual.startswith("torch.cuda.") and not _ported_on(qual, self.ctx.target.name, constants):
                    return qual  # `torch.cuda.get_device_name` (CUDA007 on neuron): CUDA's own on this target
            if isinstance(n, cst.SimpleString) and device_of(string_value(n)) == "cuda":
                return self.ctx.code(n)
            if isinstance(n, cst.Name) and n.value in classes:
                return n.value
            if (
                isinstance(n, cst.Arg)
                and isinstance(n.value, cst.Attribute)
                and (self.ctx.qualname(n.value) or dotted(n.value)) == "torch.cuda"
            ):
                return "torch.cuda"  # `set_rng_state_for_device("CUDA", torch.cuda, ...)`
            if isinstance(n, cst.Attribute) and (api := self._cuda_own_api(n)) is not None:
                return api
        return None

    def _cuda_own_api(self, n: cst.Attribute) -> str | None:
        """A `torch.cuda` API of CUDA's own (for _names_cuda): one with no device-generic twin,
        a private one, or CUDA's runtime itself (`torch._C._cuda*`)."""
        qual = self.ctx.qualname(n) or dotted(n) or ""
        if qual.startswith("torch.cuda.") and (
            qual.split(".")[2] in _CUDA_OWN or any(p.startswith("_") for p in qual.split(".")[2:])
        ):
            return qual  # a private `torch.cuda` API (`memory._dump_snapshot`) has no device-generic twin either
        if qual.startswith("torch._C._cuda"):
            return qual  # `torch._C._cuda_attach_out_of_memory_observer`: CUDA's runtime itself
        return None

    def _allocator_keys(self, nodes: Sequence[cst.CSTNode], depth: int = 2) -> str | None:
        """`stats = torch.cuda.memory_stats()` then `stats["num_alloc_retries"]` (Composer's
        alloc-retry tracking): a statistic read by name from CUDA's caching allocator, whose
        names another device's allocator need not have; also read by a function of the module
        that `nodes` call (`depth` calls deep). What is read, or None."""
        if depth and self.ctx.module is not None:
            read = self._allocator_keys_called(self.ctx.module, nodes, depth)
            if read is not None:
                return read
        stats: set[str] = set()
        for n in nodes:
            if (
                isinstance(n, cst.Assign)
                and len(n.targets) == 1
                and isinstance(n.targets[0].target, cst.Name)
                and isinstance(n.value, cst.Call)
                and self.ctx.qualname(n.value.func) == "torch.cuda.memory_stats"
            ):
                stats.add(n.targets[0].target.value)
        for n in nodes:
            if not isinstance(n, cst.Subscript) or len(n.slice) != 1 or not isinstance(n.slice[0].slice, cst.Index):
                continue
            key = string_value(n.slice[0].slice.value)
            value = n.value
            if key is None:
                continue
            if (isinstance(value, cst.Name) and value.value in stats) or (
                isinstance(value, cst.Call) and self.ctx.qualname(value.func) == "torch.cuda.memory_stats"
            ):
                return f"torch.cuda.memory_stats()[{key!r}]"
        return None

    def _allocator_keys_called(self, module: cst.Module, nodes: Sequence[cst.CSTNode], depth: int) -> str | None:
        """What a module-level function that `nodes` call by name reads of CUDA's allocator
        statistics (for _allocator_keys, one call less deep), said with where; None if none."""
        called = {n.func.value for n in nodes if isinstance(n, cst.Call) and isinstance(n.func, cst.Name)}
        for stmt in module.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value in called:
                read = self._allocator_keys(_nodes(stmt.body), depth - 1)
                if read is not None:
                    return f"{read} (in `{stmt.name.value}`)"
        return None

    def _cuda_case(self, node: cst.CSTNode, kept: Sequence[cst.CSTNode], what: str, *, test: bool = True) -> None:
        """Keep `kept` (every node of them) on CUDA and say where the target's case goes."""
        library = self.library()
        if (
            library is None
            or self.ctx.in_cuda_only_code() is not None
            or any(id(k) in self.ctx.keep_cuda or id(k) in self._guarded for k in kept)
        ):
            return
        facts = cuda_only_facts(self.ctx) if test else None
        if facts is not None and facts.active and facts.guard_reason(self.ctx.current_statements, whole_function=True):
            return  # a check in front of CUDA-only code: the guards' (GUARD001)
        for k in kept:
            self.ctx.keep_cuda.update(id(n) for n in _nodes(k))
        t = self.ctx.target
        self.ctx.report(
            "BACK008",
            node,
            f"{what} in a project with a device abstraction of its own ({library[0]}): kept on CUDA; {t.display}'s "
            f"case belongs beside it, through the project's own device (its class or device for {t.display})",
            applicability=Applicability.MANUAL,
        )

    def _cuda_test(self, test: cst.BaseExpression) -> _Test | None:
        """The part of an `if` test that asks whether the device is CUDA's (or CUDA is there)."""
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self._cuda_test(test.left) or self._cuda_test(test.right)
        if (
            isinstance(test, cst.Comparison)
            and len(test.comparisons) == 1
            and not isinstance(test.comparisons[0].operator, cst.Equal)
        ):
            return None
        if isinstance(test, cst.Comparison):
            if self._accessors is None:
                self._accessors = _accessor_facts(self.ctx.settings)
            for side in (test.left, test.comparisons[0].comparator):
                member = side.func if isinstance(side, cst.Call) else side
                if isinstance(member, cst.Attribute) and member.attr.value in self._accessors:
                    return None  # the project's accelerator asked whether it is CUDA's (BACK006)
        if isinstance(test, cst.Comparison) and any(
            string_value(side) == "gpu" for side in (test.left, test.comparisons[0].comparator)
        ):
            # `if device.name == 'gpu':` (Composer's name for its CUDA device)
            side = next(side for side in (test.left, test.comparisons[0].comparator) if string_value(side) == "gpu")
            return _Test("cuda", side, "string")
        if (
            isinstance(test, cst.Call)
            and isinstance(test.func, cst.Attribute)
            and test.func.attr.value == "endswith"
            and test.args
        ):
            return (
                _Test("cuda", test.args[0].value, "string")
                if device_of(string_value(test.args[0].value)) == "cuda"
                else None
            )
        if (
            isinstance(test, cst.Call)
            and not test.args
            and isinstance(test.func, cst.Attribute)
            and _PLATFORM_QUERY.match(test.func.attr.value)
            and not (self.ctx.qualname(test.func) or "").startswith("torch.")
        ):
            # `current_platform.is_cuda()`, `platform.is_cuda_alike()`: the project's own device
            # object asked whether it is CUDA's (a method, where a tensor's `is_cuda` is a property)
            return _Test("cuda", test, "platform")
        found = self._test(test)
        return found if found is not None and found.device == "cuda" else None

    def _library_branch(self, node: cst.If) -> None:
        """`if device.type == "cuda":` (or `if torch.cuda.is_available():` before CUDA's own
        code) in a project with a device abstraction: CUDA's case of it, kept as it is."""
        if (
            self.library() is None
            or self.ctx.in_cuda_only_code() is not None
            or any(id(s) in self.ctx.cuda_only_code for s in node.body.body)
        ):
            return
        test = self._cuda_test(node.test)
        kept = self._kept_cuda_name(node.test) if test is None else None
        if kept is not None:
            pass  # `is_cuda = x.is_cuda` kept on CUDA above, then `if is_cuda:`: its body is CUDA's case
        elif test is None or id(test.node) in self.ctx.keep_cuda:
            return
        elif test.kind != "platform" and self._runs_cuda_only(node.body):
            # `if x.is_cuda: <kernel>`: the guards' (GUARD001); they do not judge a platform's own
            # test (`if current_platform.is_cuda(): self.op = torch.ops._C.op`): CUDA's case here
            self._guarded.update(id(n) for n in _nodes(node.test))
            return
        elif test is not None and test.kind in ("available", "backend") and self._names_cuda(node.body) is None:
            return  # `if torch.cuda.is_available(): torch.cuda.synchronize()`: generic once ported
        self.ctx.keep_cuda.update(id(n) for n in _nodes(node.test))
        t = self.ctx.target
        self._keep_cuda_case(
            node.test,
            f"`if {self.ctx.code(node.test)}`",
            node.body,
            lambda library: (
                f"`if {_short(self.ctx.code(node.test))}` is CUDA's case in a project with a device abstraction "
                f"of its own ({library}): kept as it is; {t.display}'s case belongs beside it, through the "
                f"project's own device (its class or device for {t.display})"
            ),
        )

    def _keep_cuda_case(
        self, anchor: cst.CSTNode, what: str, body: cst.BaseSuite, message: Callable[[str], str]
    ) -> None:
        """Keep `body` as CUDA's case of the project's own device abstraction (BACK008, quiet:
        its fixes are listed by the one finding, `message(the abstraction)`, at `anchor`)."""
        library = self.library()
        assert library is not None
        region = CudaOnlyCode(anchor, what, library[0], code="BACK008", quiet=True)
        for stmt in body.body:
            self.ctx.cuda_only_code[id(stmt)] = region
        self._regions.append((region, anchor, message(library[0]), None))

    def _kept_cuda_name(self, test: cst.BaseExpression) -> str | None:
        """`is_cuda_tensor` in `if is_cuda_tensor:` (or one operand of an `and`) where the
        function's only `is_cuda_tensor = ...` is a test this port keeps on CUDA (`x.is_cuda`,
        `torch.cuda.is_available() and torch.cuda.is_initialized()`: BACK008, BACK006): the
        branch runs on CUDA only, so it is CUDA's case too. The name, else None."""
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self._kept_cuda_name(test.left) or self._kept_cuda_name(test.right)
        if not isinstance(test, cst.Name):
            return None
        fn = next((s for s in reversed(self.ctx.current_statements) if isinstance(s, cst.FunctionDef)), None)
        if fn is None:
            return None
        values = [value for name, value in name_assignments(fn.body) if name == test.value]
        if len(values) != 1 or not (id(values[0]) in self.ctx.keep_cuda or self._kept_equality(values[0])):
            return None
        return test.value

    def _kept_equality(self, value: cst.BaseExpression) -> bool:
        """`device.type == "cuda"` whose CUDA string this port keeps (BACK008: it asks whether
        the device is CUDA's): true only on CUDA, as a kept `x.is_cuda` is."""
        if not (
            isinstance(value, cst.Comparison)
            and len(value.comparisons) == 1
            and isinstance(value.comparisons[0].operator, cst.Equal)
        ):
            return False
        return any(
            id(side) in self.ctx.keep_cuda and device_of(string_value(side)) == "cuda"
            for side in (value.left, value.comparisons[0].comparator)
        )

    def visit_IfExp(self, node: cst.IfExp) -> None:
        """`DeviceGPU() if torch.cuda.is_available() else DeviceCPU()`, `"xpu" if
        is_xpu_available() else "cuda"`: CUDA's arm of a device choice in a project with a
        device abstraction stays CUDA's (and the test that picks it)."""
        if self.library() is None:
            return
        cuda_test = self._cuda_test(node.test)
        if cuda_test is not None and self._names_cuda(node.body) is not None:
            self._cuda_case(
                node,
                [node.test, node.body],
                f"`{_short(self.ctx.code(node))}` picks CUDA's own when CUDA is there",
                test=False,
            )
        elif any((string_value(arm) or "").lower() == "nccl" for arm in (node.body, node.orelse)) and _devices_in_test(
            node.test
        ):
            # `"gloo" if cfg.device == "cpu" else "nccl"`: the backend of CUDA's case
            arm = node.orelse if (string_value(node.orelse) or "").lower() == "nccl" else node.body
            self._cuda_case(
                node,
                [arm],
                f"`{_short(self.ctx.code(node))}` names NCCL as CUDA's case of a choice over devices",
                test=False,
            )
        elif device_of(string_value(node.orelse)) == "cuda" or device_of(string_value(node.body)) == "cuda":
            arm = node.orelse if device_of(string_value(node.orelse)) == "cuda" else node.body
            self._cuda_case(
                node, [arm], f"`{_short(self.ctx.code(node))}` names CUDA as one case of a device choice", test=False
            )

    def _imported_accessor(self) -> str | None:
        """A name the module imports from the folder of the project's classes per device
        (`from deepspeed.accelerator import get_accelerator`): the abstraction, at hand."""
        if self._accessor is False:
            self._accessor = None
            for stmt in self.ctx.module.body:
                if not isinstance(stmt, cst.SimpleStatementLine):
                    continue
                for small in stmt.body:
                    if (
                        isinstance(small, cst.ImportFrom)
                        and small.module is not None
                        and not isinstance(small.names, cst.ImportStar)
                    ):
                        where = (dotted(small.module) or "").replace(".", "/")
                        if where and any(f == where or f.endswith("/" + where) for f in self._folders):
                            self._accessor = small.names[0].evaluated_alias or dotted(small.names[0].name)
        return self._accessor  # type: ignore[return-value]

    def _names_from_abstraction(self) -> dict[str, str]:
        """The names this module imports (anywhere in it) from the folders of the project's
        classes per device (`from vllm.platforms import current_platform`): local name -> the
        module named in the import. The project's own device object, at hand."""
        if self._abstraction_names is None:
            self._abstraction_names = {}
            if self._folders and self.ctx.module is not None:
                for small in _imports_from(self.ctx.module):
                    if small.module is None or small.relative or isinstance(small.names, cst.ImportStar):
                        continue
                    where = (dotted(small.module) or "").replace(".", "/")
                    if where and any(f == where or f.endswith("/" + where) for f in self._folders):
                        for alias in small.names:
                            local = alias.evaluated_alias or dotted(alias.name)
                            if local:
                                self._abstraction_names[local] = dotted(small.module) or ""
        return self._abstraction_names

    def _fallback_beside_platform(self, node: cst.BooleanOperation) -> None:
        """`backend = backend or "nccl"` in a module that imports the project's own device object
        (a name from the folder of its classes per device): CUDA's collective backend (or device)
        as the fallback of a value the caller passes, where the project names each device's own
        through that object. It stays CUDA's (BACK009); the target's goes through the object."""
        value = string_value(node.right)
        if (
            value is None
            or not (value.lower() == "nccl" or device_of(value) == "cuda")
            or id(node.right) in self.ctx.keep_cuda
            or self.library() is None
            or self.ctx.in_cuda_only_code() is not None
        ):
            return
        helper = self._accelerator_helper(node.left)
        if helper is not None and device_of(value) == "cuda":
            # `get_current_accelerator() or "cuda"` (transformers' torchao integration): the
            # library's own lookup of the accelerator answered nothing, so no accelerator is
            # there, CUDA's or the target's; the fallback is what the code was written for
            self._cuda_case(
                node.right,
                [node.right],
                f"`{_short(self.ctx.code(node))}` falls back to CUDA where the library's own `{helper}()` finds no "
                "accelerator",
                test=False,
            )
            return
        names = self._names_from_abstraction()
        if not names:
            return
        used = sorted(names)[0]
        self.ctx.keep_cuda.add(id(node.right))
        t = self.ctx.target
        self.ctx.report(
            "BACK009",
            node.right,
            f"`{_short(self.ctx.code(node))}` falls back to CUDA's `{self.ctx.code(node.right)}` in a module that "
            f"imports the project's own device object (`{used}`, from `{names[used]}`, where its classes per device "
            f"live): kept; on {t.display}, pass the target's or take it from `{used}` rather than naming {t.display}",
            applicability=Applicability.MANUAL,
        )

    def _accelerator_helper(self, node: cst.BaseExpression) -> str | None:
        """The name of a call of the project's own accelerator lookup (`get_current_accelerator()`:
        a function it defines or imports, not torch's), or None."""
        if not isinstance(node, cst.Call):
            return None
        name = dotted(node.func) or ""
        leaf = name.rpartition(".")[2]
        if not _ACCELERATOR_LOOKUP.match(leaf) or (self.ctx.qualname(node.func) or "").startswith("torch."):
            return None
        return name

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        """`f"cuda:{current_platform.current_device()}"`: CUDA's device type beside an index the
        project's own device object answers (a name imported from the folder of its classes per
        device): the line already goes through the abstraction, which names each device's type
        itself; the literal stays CUDA's (BACK009) and the target's case is reported."""
        parts = node.parts
        if (
            not parts
            or not isinstance(parts[0], cst.FormattedStringText)
            or parts[0].value != "cuda:"
            or id(node) in self.ctx.keep_cuda
            or self.library() is None
            or self.ctx.in_cuda_only_code() is not None
        ):
            return
        if self._beside_kept_choice(node):
            return
        names = self._names_from_abstraction()
        used = next(
            (
                n.value
                for p in parts
                if isinstance(p, cst.FormattedStringExpression)
                for n in _nodes(p.expression)
                if isinstance(n, cst.Name) and n.value in names
            ),
            None,
        )
        if used is None:
            return
        self.ctx.keep_cuda.add(id(node))
        t = self.ctx.target
        self.ctx.report(
            "BACK009",
            node,
            f"`{_short(self.ctx.code(node))}` names CUDA's device type beside the index the project's own device "
            f"object answers (`{used}`, from `{names[used]}`, where its classes per device live): kept; on "
            f"{t.display}, take the device type from `{used}` too rather than naming {t.display}",
            applicability=Applicability.MANUAL,
        )

    def _beside_kept_choice(self, node: cst.FormattedString) -> bool:
        """`device_str = f"cuda:{first}"` where the function's other choice of `device_str` is
        `"cuda:0" if torch.cuda.is_available() else "cpu"` (CUDA's own, kept: visit_IfExp): the
        index made a CUDA device is CUDA's case of the same choice, kept with it (BACK008), so
        that the two choices agree on CUDA."""
        statement = self.ctx.current_statements[-1] if self.ctx.current_statements else None
        fn = next((s for s in reversed(self.ctx.current_statements) if isinstance(s, cst.FunctionDef)), None)
        if fn is None or not isinstance(statement, cst.SimpleStatementLine):
            return False
        target = next(
            (
                small.targets[0].target.value
                for small in statement.body
                if isinstance(small, cst.Assign)
                and small.value is node
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
            ),
            None,
        )
        if target is None:
            return False
        kept = next(
            (
                value
                for name, value in name_assignments(fn.body)
                if name == target
                and isinstance(value, cst.IfExp)
                and self._cuda_test(value.test) is not None
                and self._names_cuda(value.body) is not None
            ),
            None,
        )
        if kept is None:
            return False
        self._cuda_case(
            node,
            [node],
            f"`{_short(self.ctx.code(node))}` makes an index CUDA's device where the other choice of `{target}` "
            f"(`{_short(self.ctx.code(kept))}`) picks CUDA's own",
            test=False,
        )
        return True

    def _device_at_hand(self) -> str | None:
        """The device the code has at hand: a `device` parameter of the function, a
        `self.<...>device` the class reads, or the project's accessor the module imports."""
        statements = self.ctx.current_statements
        fn = next((s for s in reversed(statements) if isinstance(s, cst.FunctionDef)), None)
        if fn is not None:
            for param in (*fn.params.params, *fn.params.kwonly_params):
                name = param.name.value
                if name == "device" or (name.endswith("_device") and not name.startswith("cpu")):
                    return name
        cls = next((s for s in reversed(statements) if isinstance(s, cst.ClassDef)), None)
        if cls is not None:
            code = self.ctx.code(cls)
            m = _SELF_DEVICE.search(code)
            if m is not None:
                return m.group(0)
            if fn is not None and (field := self._tensor_field_read(cls, fn)) is not None:
                return f"self.{field}.device"
        return self._accessor_at_hand()

    def _accessor_at_hand(self) -> str | None:
        """The project's accessor the module imports, as the code reads it, or None."""
        accessor = self._imported_accessor()
        if not accessor:
            return None
        # `get_accelerator()` is called; `current_platform` is an object the module reads
        return f"{accessor}()" if f"{accessor}(".encode() in (self.ctx.source or b"") else accessor

    def _tensor_field_read(self, cls: cst.ClassDef, fn: cst.FunctionDef) -> str | None:
        """A field the class declares as a tensor (`nopad_b_loc: torch.Tensor`, a dataclass's)
        that the method reads (`self.nopad_b_loc[...]`): the object's own tensors carry its
        device. The first such field, or None."""
        body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
        fields = [
            small.target.value
            for stmt in body
            if isinstance(stmt, cst.SimpleStatementLine)
            for small in stmt.body
            if isinstance(small, cst.AnnAssign)
            and isinstance(small.target, cst.Name)
            and (self.ctx.qualname(small.annotation.annotation) or dotted(small.annotation.annotation))
            == "torch.Tensor"
        ]
        if not fields:
            return None
        read = {
            n.attr.value
            for n in _nodes(fn.body)
            if isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name) and n.value.value == "self"
        }
        return next((f for f in fields if f in read), None)

    def _device_positions(self, node: cst.Call) -> list[cst.BaseExpression]:
        """The arguments of `node` that take a device type or a collective backend."""
        name = (dotted(node.func) or "").rpartition(".")[2]
        out = []
        for i, arg in enumerate(node.args):
            kw = arg.keyword.value if arg.keyword is not None else None
            if kw in ("device", "device_type", "backend", "dist_backend", "map_location") or (
                kw is None and i == 0 and name in _DEVICE_FIRST
            ):
                out.append(arg.value)
        return out

    def _at_hand(self, node: cst.Call) -> None:
        """`torch.zeros(n, device='cuda')`, `x.cuda()` where the code has its device at hand (BACK009)."""
        if self.ctx.in_cuda_only_code() is not None:
            return
        self._dot_cuda_at_hand(node)
        for value in self._device_positions(node):
            s = string_value(value)
            if isinstance(value, cst.FormattedString):
                s = "".join(p.value for p in value.parts if isinstance(p, cst.FormattedStringText))
            if not s or id(value) in self.ctx.keep_cuda or id(value) in self.ctx.keep_vocabulary:
                continue
            if not (device_of(s) == "cuda" or s.startswith("cuda:") or s.lower() == "nccl"):
                continue
            at_hand = self._device_at_hand()
            t = self.ctx.target
            if at_hand is None and self._index is not None and isinstance(value, cst.FormattedString) and s == "cuda:":
                # `f'cuda:{device_id}'` where the project's CUDA class turns an index into its
                # device (DeepSpeed's `CUDA_Accelerator.device_name(device_index)`): each class of
                # the family names its own device, so the literal is the abstraction bypassed
                self.ctx.keep_cuda.add(id(value))
                self.ctx.report(
                    "BACK009",
                    value,
                    f"`{self.ctx.code(value)}` names CUDA's device of an index, which the project's device "
                    f"abstraction answers for each device (`{self._index}`, one of its classes per device): kept; on "
                    f"{t.display}, take the device from that abstraction rather than naming {t.display}",
                    applicability=Applicability.MANUAL,
                )
                continue
            if at_hand is None:
                return
            self.ctx.keep_cuda.add(id(value))
            self.ctx.report(
                "BACK009",
                value,
                f"`{self.ctx.code(value)}` is hard-coded where the code has its device at hand (`{at_hand}`), in a "
                f"project with a device abstraction of its own: kept; on {t.display}, take it from `{at_hand}` rather "
                f"than naming {t.display}",
                applicability=Applicability.MANUAL,
            )

    def _dot_cuda_at_hand(self, node: cst.Call) -> None:
        """`x.cuda()` is `x.to("cuda")` in a method's spelling: where the module has the project's
        device accessor at hand, `.to(<target>)` in its place would pin the code to the target and break it on CUDA
        just as `device="neuron"` would (vLLM's `swizzle_blockscale`, beside the module's
        `current_platform`). Kept (the device rule leaves what `keep_cuda` holds), reported;
        not where the port is a device-generic spelling (`--portable`, a class that names
        `torch.cuda.current_device()` as its device), which is the same on CUDA."""
        func = node.func
        if (
            not isinstance(func, cst.Attribute)
            or func.attr.value != "cuda"
            or self.ctx.qualname(func) is not None
            or id(node) in self.ctx.keep_cuda
            or b"def cuda(" in (self.ctx.source or b"")  # the file's own `cuda()`: DEV001 says so
        ):
            return
        cls = next((c for c in reversed(self.ctx.current_statements) if isinstance(c, cst.ClassDef)), None)
        if self.ctx.portable or (cls is not None and names_current_device(self.ctx, cls)):
            return  # the port is a device-generic spelling, the same on CUDA: nothing pinned
        # only the project's accessor answers where `.cuda()` moves things (the current device):
        # a `device` parameter may name another (ColossalAI's p2p `device` is NCCL's transport
        # device, not where an unpickled tensor lands)
        at_hand = self._accessor_at_hand()
        if at_hand is None:
            return
        t = self.ctx.target
        called = ".cuda()" if not node.args else ".cuda(...)"
        self.ctx.keep_cuda.add(id(node))
        self.ctx.report(
            "BACK009",
            node,
            f"`{called}` moves to CUDA where the code has its device at hand (`{at_hand}`), in a project with a "
            f"device abstraction of its own: kept; on {t.display}, move it to the device `{at_hand}` names "
            f"(`.to(...)`) rather than to {t.display}",
            applicability=Applicability.MANUAL,
        )

    def _switch_key(self, node: cst.Call) -> None:
        """`self._memstats.non_model_data_list("cuda")` where the project's function takes its
        argument as the key of a closed switch over device names (BackendKind.SWITCH_KEY):
        the callee's `== "cuda"` is CUDA's case, kept (BACK008), so the key passed stays too."""
        if self._key_functions is None:
            self._key_functions = {
                f[1]: f[3] for f in (getattr(self.ctx.settings, "flow", None) or ()) if f[2] == BackendKind.SWITCH_KEY
            }
        if not self._key_functions:
            return
        func = node.func
        name = (
            func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        )
        if name not in self._key_functions:
            return
        position = int(self._key_functions[name][1])
        positional = [a for a in node.args if a.keyword is None and a.star == ""]
        if position < len(positional) and device_of(string_value(positional[position].value)) == "cuda":
            self.ctx.keep_vocabulary.add(id(positional[position].value))
            self.ctx.keep_cuda.add(id(positional[position].value))

    def visit_Call(self, node: cst.Call) -> None:
        """`location.startswith("cuda")`, `module.__name__.endswith("cuda")` (library mode)."""
        self._keyword_registry(node)
        if self.library() is not None:
            self._at_hand(node)
            self._switch_key(node)
            self._cuda_described(node)
            self._past_cuda_test(node)
        func = node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in ("startswith", "endswith")
            and node.args
            and device_of(string_value(node.args[0].value)) == "cuda"
        ):
            self._cuda_case(
                node, [node.args[0].value], f"`{_short(self.ctx.code(node))}` asks whether a device is CUDA's"
            )

    def _past_cuda_test(self, node: cst.Call) -> None:
        """`torch.cuda.current_stream(t.device)` after `if not t.is_cuda ...: return` whose test
        stays CUDA's: only CUDA gets there, so the call is CUDA's case too, kept with its test (a
        rewrite would be the same on CUDA and never run on the target). The body of `if
        t.is_cuda:` is `_library_branch`'s."""
        called = self.ctx.qualname(node.func) or ""
        if not called.startswith("torch.cuda.") or id(node) in self.ctx.keep_cuda:
            return
        test = only_cuda_reaches(self.ctx, {}, enclosing=False)
        if test is not None and not any(
            isinstance(n, cst.Call) and self.ctx.qualname(n.func) == "torch.cuda.is_available" for n in walk(test.test)
        ):
            # (`if not torch.cuda.is_available(): return` asks whether CUDA is there, not whether a
            # device is CUDA's: ported with the API behind it, the generic spelling)
            shown = _short(self.ctx.code(test.test))
            self._cuda_case(node, [node], f"`{called}()` runs only past `if {shown}`, kept CUDA's,", test=False)

    def _cuda_described(self, node: cst.Call) -> None:
        """`Device(type="cuda", properties=CUDAProperties(min_capability=121))`: a description of
        a CUDA device (what a kernel is registered for), its CUDA-only part made by a class named
        for CUDA beside the device string. The target's entry is one of its own, not this one."""
        strings = [a.value for a in node.args if device_of(string_value(a.value)) == "cuda"]
        if not strings:
            return
        described = next(
            (
                a.value
                for a in node.args
                if isinstance(a.value, cst.Call)
                and _CUDA_CLASS.search(_dotted(a.value.func))
                and not (self.ctx.qualname(a.value.func) or "").startswith("torch.")
            ),
            None,
        )
        if described is not None:
            self._cuda_case(
                node,
                strings,
                f"`{_short(self.ctx.code(node))}` describes a CUDA device (`{_dotted(described.func)}` beside it)",
                test=False,
            )

    def visit_Attribute(self, node: cst.Attribute) -> None:
        """`x.is_cuda` (library mode)."""
        if node.attr.value == "is_cuda" and self.ctx.qualname(node) is None and self.library() is not None:
            self._cuda_case(node, [node], f"`{_short(self.ctx.code(node))}` asks whether a tensor is on CUDA")

    # -- CUDA's class of a per-device family (BACK003) -------------------------------------

    def _cuda_method(self, node: cst.FunctionDef) -> None:
        """`def cuda(self, device=None)` of a class (an `nn.Module.cuda` override, a quantized
        parameter's own `.cuda()` beside its `.xpu()`), in a project with a device abstraction:
        the method that moves to CUDA, kept as it is; the target's is `.to(...)`."""
        statements = self.ctx.current_statements
        if self.ctx.in_cuda_only_code() is not None:
            return
        if node.name.value == "cuda" and len(statements) >= 2 and isinstance(statements[-2], cst.ClassDef):
            what = f"`{statements[-2].name.value}.cuda()`"
        elif any(self._implements_tensor_cuda(d) for d in node.decorators):
            # `@implements_torch_function(torch.Tensor.cuda) def function_cuda(*args)` (torchao's
            # NF4Tensor): a tensor subclass's implementation of `Tensor.cuda`, registered as such
            what = f"`{node.name.value}`, its implementation of `torch.Tensor.cuda`,"
        else:
            return
        library = self.library()
        t = self.ctx.target
        where = f", in a project with a device abstraction of its own ({library[0]})" if library else ""
        message = f"{what} moves to CUDA by its name{where}: kept as it is; {t.display} is reached through `.to(...)`"
        region = CudaOnlyCode(
            node.name,
            f"`def {node.name.value}`",
            "it moves to CUDA by its name",
            code="BACK008",
            quiet=True,
            # in an application, said only where the port would have changed it
            note=None if library else message,
        )
        self.ctx.cuda_only_code[id(node)] = region
        self._regions.append((region, node.name, message, None))

    def _implements_tensor_cuda(self, decorator: cst.Decorator) -> bool:
        """`@implements(torch.Tensor.cuda)` / `@implements([torch.Tensor.cuda])`: a decorator
        that registers the function as the implementation of `torch.Tensor.cuda`."""
        call = decorator.decorator
        if not isinstance(call, cst.Call):
            return False
        for arg in call.args:
            values = (
                [e.value for e in arg.value.elements] if isinstance(arg.value, (cst.List, cst.Tuple)) else [arg.value]
            )
            if any(self.ctx.qualname(v) == "torch.Tensor.cuda" or dotted(v) == "torch.Tensor.cuda" for v in values):
                return True
        return False

    def _backend_function(self, node: cst.FunctionDef) -> None:
        """`def num_cuda_devices()` beside `class CUDAAccelerator` in CUDA's backend module
        (Lightning's accelerators/cuda.py): a module-level helper of CUDA's backend, kept."""
        if (
            len(self.ctx.current_statements) > 1
            or not _CUDA_NAMED.search(node.name.value)
            or self.ctx.in_cuda_only_code() is not None
        ):
            return
        facts = _backend_facts(self.ctx.settings, self.ctx.path, self.ctx.source)
        if not facts:
            return
        cls = next(iter(facts))
        region = CudaOnlyCode(
            node.name,
            f"`def {node.name.value}`",
            f"a helper of CUDA's backend `{cls}` in its module",
            code="BACK003",
            quiet=True,
        )
        self.ctx.cuda_only_code[id(node)] = region
        message = (
            f"`def {node.name.value}` is a helper of CUDA's backend (`{cls}`, {facts[cls][0]}) in that backend's "
            f"module: kept as it is; {self.ctx.target.display}'s belongs with its own backend"
        )
        self._regions.append((region, node.name, message, None))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        fact = _backend_facts(self.ctx.settings, self.ctx.path, self.ctx.source).get(node.name.value)
        library = self.library() if fact is None else None
        device = library[1].get(node.name.value) if library else None
        if (
            fact is None
            and device not in (None, "cuda", self.ctx.target.device_type)
            and self.ctx.in_cuda_only_code() is None
        ):
            # `class RocmPlatform` (device_type "cuda"), `class SDAA_Accelerator` (its "NCCL"
            # prefixes): another device's backend; what it names is that backend's own
            region = CudaOnlyCode(
                node.name, f"`class {node.name.value}`", f"{device}'s backend", code="BACK003", quiet=True
            )
            self.ctx.cuda_only_code[id(node)] = region
            if _CUDA_NAMED.search(self.ctx.code(node.body)):
                why = (
                    f"`class {node.name.value}` is {device}'s backend ({library[0]}): "  # type: ignore[index]
                    "what it names of CUDA is that backend's own; kept as it is"
                )
                self._regions.append((region, node.name, why, None))
            return
        if fact is None and self.ctx.in_cuda_only_code() is None:
            self._nvidia_library_class(node)
        if fact is None or self.ctx.in_cuda_only_code() is not None:
            return
        why, *siblings = fact
        t = self.ctx.target
        names = [s.split("=", 1)[1].split("@", 1)[0] for s in siblings]
        own = next((n for s, n in zip(siblings, names) if s.startswith(f"{t.device_type}=")), None)
        region = CudaOnlyCode(node.name, f"`class {node.name.value}`", why, code="BACK003", quiet=True)
        self.ctx.cuda_only_code[id(node)] = region
        if own is not None:
            message = (
                f"`class {node.name.value}` is CUDA's backend, {why} ({', '.join(names)}): kept as it is; "
                f"{t.display}'s is `{own}`"
            )
        else:
            message = (
                f"`class {node.name.value}` is CUDA's backend, {why} ({', '.join(names)}): kept as it is; "
                f"{t.display} has none: `porter backends . --target {t.name} --scaffold DIR` writes one modelled on it"
            )
        self._regions.append((region, node.name, message, None))

    def _nvidia_library_class(self, node: cst.ClassDef) -> None:
        """`class CUBLAS_Context` (bitsandbytes: a cuBLAS handle per device, from its CUDA
        library): a class named for one of NVIDIA's CUDA libraries is that library's, and runs
        where it does; its device code stays as it is (BACK006), reported."""
        words = {w.lower() for w in _WORDS.findall(node.name.value)}
        library = next((w for w in sorted(words) if w in _NVIDIA_LIBRARIES), None)
        if library is None or "cuda" not in self.ctx.code(node.body):
            return
        message = (
            f"`class {node.name.value}` is named for NVIDIA's {_NVIDIA_LIBRARIES[library]}, which runs only on NVIDIA "
            f"GPUs: kept as it is; {self.ctx.target.display} needs its own counterpart, if any, beside it"
        )
        region = CudaOnlyCode(
            node.name, f"`class {node.name.value}`", f"it is {_NVIDIA_LIBRARIES[library]}'s", code="BACK006"
        )
        self.ctx.cuda_only_code[id(node)] = region
        self._regions.append((region, node.name, message, None))

    def _device_enum(self) -> tuple[str, str] | None:
        """(the class, its CUDA member as code) when the module defines an enum of the devices
        the code supports (torchtune's `DeviceSupport`: `CUDA = ("cuda", "GPU", "nccl")`, `NPU =
        (...)`) that has no member for the target. Device types the module lists or detects are
        looked up in it (`DeviceSupport.from_type(...)` raises on any other): the target added
        to the list, or a rung that answers the target, only reaches that error. Its member
        comes first, so the target is reported, not added."""
        if self._table is False:
            self._table = None
            t = self.ctx.target.device_type
            for stmt in self.ctx.module.body:
                if not isinstance(stmt, cst.ClassDef) or not any("Enum" in (dotted(b.value) or "") for b in stmt.bases):
                    continue
                members: dict[str, str] = {}
                cuda = ""
                for line in stmt.body.body:
                    if not isinstance(line, cst.SimpleStatementLine) or not isinstance(line.body[0], cst.Assign):
                        continue
                    value = line.body[0].value
                    first = value.elements[0].value if isinstance(value, cst.Tuple) and value.elements else value
                    device = device_of(string_value(first))
                    if device is not None:
                        members[device] = self.ctx.code(line.body[0])
                        if device == "cuda":
                            cuda = members[device]
                if cuda and t not in members and len(set(members) - HOSTS) >= 2:
                    self._table = (stmt.name.value, cuda)
                    break
        return self._table  # type: ignore[return-value]

    def _table_lacks_target(self, at: cst.CSTNode, what: str) -> bool:
        """Report (BACK004) that the module's enum of devices needs the target's member before
        `at` may name the target; True when it does."""
        table = self._device_enum()
        if table is None:
            return False
        t = self.ctx.target
        self.ctx.report(
            "BACK004",
            at,
            f"{what} are looked up in `{table[0]}`, this module's enum of devices, which has no member for "
            f"{t.display}: adding {t.device_type!r} here would only reach its unknown-device error; add "
            f"`{t.device_type.upper()}` to `{table[0]}` beside `{table[1]}` (its device type, name and communication "
            f"backend), then {t.device_type!r} here",
            applicability=Applicability.MANUAL,
        )
        return True

    # -- lists of device types (BACK001) ---------------------------------------------------

    def _device_list(self, node: cst.List | cst.Tuple | cst.Set) -> None:
        listed = id(node) in self._listed
        found = self._cuda_device_list(node, listed)
        if found is None:
            return
        values, devices, strings = found
        if not listed:
            self._devices_named(node, strings, devices)
            return
        facts = cuda_only_facts(self.ctx)
        if facts.active and facts.guard_reason(self.ctx.current_statements, whole_function=True):
            return  # a check in front of CUDA-only code (GUARD001 keeps it as it is)
        self.ctx.keep_cuda.update(id(s) for s in strings)
        t = self.ctx.target
        if t.device_type in devices or self._gates_device_module(node):
            return
        if self.library() is not None and all(d in HOSTS for d in devices if d not in (None, "cuda")):
            # `model_device.type not in ('cuda', 'meta')` in a project with a device abstraction:
            # CUDA and no other accelerator, the devices a CUDA-only feature works on (Composer's
            # memory monitor, which then reads CUDA's allocator statistics on `type == 'cuda'`)
            self._cuda_case(
                node,
                [node],
                f"`{self.ctx.code(node)}` names CUDA and no other accelerator (the devices a CUDA feature works on)",
            )
            return
        if self._table_lacks_target(node, f"the device types `{self.ctx.code(node)}` lists"):
            return
        if self._lacks_backend_folder(node, devices):
            return
        if (answered := self._platform_answered(node)) is not None:
            self.ctx.report(
                "BACK001",
                node,
                f"`{_short(self.ctx.code(node))}` is the fallback where {answered} answers nothing: CUDA's entry "
                f"stays; {t.display}'s answer belongs there (the project's own device object), not beside CUDA's",
                applicability=Applicability.MANUAL,
            )
            return
        if (said := self._list_said(node, values)) is not None:
            self.ctx.report(
                "BACK001",
                node,
                f"`{_short(self.ctx.code(node))}` {said}: CUDA's entry stays; add {t.device_type!r} only where "
                f"{t.display} needs the same",
                applicability=Applicability.MANUAL,
            )
            return
        self._lists.add(id(node))

    def _gates_device_module(self, node: cst.CSTNode) -> bool:
        """xla: `torch.get_device_module(device).Stream(priority=p) if device.type in ["cuda", "mtia"]
        else None` (torchrec 1.3.0's DataLoadingThread), or an `if` whose body calls it: torch_xla 2.9
        registers no `torch.xla`, so `torch.get_device_module` raises for an XLA device ("Device 'xla'
        does not have a corresponding module registered as 'torch.xla'"). The list stays (BACK001
        says why); True when so reported."""
        if self.ctx.target.name != "xla" or not self.ctx.current_statements:
            return False
        for n in _nodes(self.ctx.current_statements[-1]):
            if not isinstance(n, (cst.If, cst.IfExp, cst.While)) or not any(m is node for m in _nodes(n.test)):
                continue
            call = next(
                (
                    c
                    for c in _nodes(n.body)
                    if isinstance(c, cst.Call) and self.ctx.qualname(c.func) == "torch.get_device_module"
                ),
                None,
            )
            if call is not None:
                t = self.ctx.target
                self.ctx.report(
                    "BACK001",
                    node,
                    f"`{_short(self.ctx.code(node))}` gates `{_short(self.ctx.code(call))}`, which raises on "
                    f"{t.display} (torch_xla registers no `torch.xla` module): CUDA's entry stays, so {t.display} "
                    "takes the other branch as before; give it its own path there if it needs one",
                    applicability=Applicability.MANUAL,
                )
                return True
        return False

    def _cuda_device_list(
        self, node: cst.List | cst.Tuple | cst.Set, listed: bool
    ) -> tuple[list[str | None], list[str | None], list[cst.BaseExpression]] | None:
        """For _device_list, whether `node` lists CUDA's device type beside another device's, as
        strings of device types (or vendors' names), in no one else's vocabulary: (the values,
        their device types, CUDA's strings), or None."""
        if id(node) in self._vocabulary:
            return None
        if not listed and (len(node.elements) < 2 or self.library() is None):
            return None
        values = [string_value(e.value) for e in node.elements]
        if len(values) < 2 or any(v is None or not _VENDOR.match(v) for v in values):
            return None
        devices = [device_of(v) for v in values]
        if "cuda" not in devices or devices.count(None) > len(devices) - 2 or VOCABULARY & set(values):
            return None  # two device types at least (a vendor's own name beside them is one more)
        strings = [e.value for e in node.elements if device_of(string_value(e.value)) == "cuda"]
        if any(id(s) in self.ctx.keep_cuda or id(s) in self.ctx.keep_vocabulary for s in strings):
            return None  # someone else's vocabulary (an `--accelerator` option's choices)
        return values, devices, strings

    def _platform_answered(self, node: cst.CSTNode) -> str | None:
        """`if self.kv_buffer_device in ["cuda", "xpu"]:` under `if memory_type is None:`, where
        the function set `memory_type = current_platform.get_nixl_memory_type()` (a method of a
        name the module imports from the folder of the project's classes per device): the list
        answers only where the project's own device object did not, and that object answers for
        the target (its own platform class). Adding the target to the fallback claims CUDA's
        answer for it. The call, as code, or None."""
        names = self._names_from_abstraction()
        fn = next((s for s in reversed(self.ctx.current_statements) if isinstance(s, cst.FunctionDef)), None)
        if not names or fn is None:
            return None
        for stmt in self.ctx.current_statements:
            if not isinstance(stmt, cst.If) or any(n is node for n in _nodes(stmt.test)):
                continue
            sides = one_comparison(stmt.test, cst.Is)
            if not (
                sides is not None
                and isinstance(left := sides[0], cst.Name)
                and _is_constant(sides[1], "None")
                and any(n is node for n in _nodes(stmt.body))
            ):
                continue
            for name, value in name_assignments(fn.body):
                if (
                    name == left.value
                    and isinstance(value, cst.Call)
                    and (dotted(value.func) or "").partition(".")[0] in names
                    and "." in (dotted(value.func) or "")
                ):
                    return f"`{_short(self.ctx.code(value))}`"
        return None

    def _list_said(self, node: cst.CSTNode, values: Sequence[str | None]) -> str | None:
        """What the library says of the devices a test lists, where it says more than that the
        code works there: the comment at the `if` cites an issue (`# Details: https://github.com/
        pytorch/pytorch/issues/110213`: a workaround for those devices' kernels), or a message in
        its branch spells the list out (`"MXFP4 requires model on cuda/xpu/cpu"`: what a feature's
        kernels run on). None when it says neither."""
        test_of = next(
            (
                s
                for s in reversed(self.ctx.current_statements)
                if isinstance(s, (cst.If, cst.While)) and any(n is node for n in _nodes(s.test))
            ),
            None,
        )
        if test_of is None or not isinstance(test_of.body, cst.IndentedBlock):
            return None
        body = test_of.body
        first = body.body[0] if body.body else None
        lines = [*test_of.leading_lines, *(getattr(first, "leading_lines", ()) or ())]
        comments = [line.comment.value for line in lines if line.comment is not None]
        if body.header.comment is not None:
            comments.append(body.header.comment.value)
        link = next((m.group(0) for c in comments if (m := _ISSUE_LINK.search(c))), None)
        if link is not None:
            return f"lists the devices a workaround is for (the comment cites {link})"
        names = [v for v in values if v]
        for n in _nodes(body):
            if isinstance(n, (cst.SimpleString, cst.FormattedStringText)):
                text = n.value
                if all(re.search(rf"(?i)(?<![\w-]){re.escape(v)}(?![\w-])", text) for v in names):
                    return (
                        "names the devices a message in its branch spells out "
                        f"(`{_short(text.strip(chr(34) + chr(39)))}`)"
                    )
        return None

    def _devices_named(self, node: cst.CSTNode, strings: Sequence[cst.CSTNode], devices: Sequence[str | None]) -> None:
        """`for_devices_and_modes(("cuda", "xpu"), modes, kernel)` in a library: devices named
        together somewhere no rule reads as the devices the code supports (an argument, a
        value): what the code makes or registers for each. Turning CUDA's entry into the target
        drops CUDA; adding the target claims what nothing says it has (a GPU kernel)."""
        others = [d for d in devices if d is not None and d not in ("cuda", *HOSTS)]
        t = self.ctx.target
        if not others or t.device_type in devices:
            return
        self.ctx.keep_cuda.update(id(s) for s in strings)
        self.ctx.report(
            "BACK001",
            node,
            f"`{_short(self.ctx.code(node))}` names the devices something is made or registered for (CUDA beside "
            f"{', '.join(others)}): CUDA's entry stays; add {t.device_type!r} where {t.display} has what it names",
            applicability=Applicability.MANUAL,
        )

    def _no_target_folder(self, devices: Sequence[str | None]) -> str | None:
        """CUDA's backend folder where the project has one per device, another of `devices` has
        one too, and the target has none (`backends/cuda/` beside `xpu/`, no `neuron/`)."""
        self.library()
        t = self.ctx.target
        for folder, others in self._backend_dirs:
            if t.device_type not in others and any(d in others for d in devices if d not in (None, "cuda")):
                return folder
        return None

    def _lacks_backend_folder(self, node: cst.CSTNode, devices: list[str | None]) -> bool:
        """`supported_torch_devices = {"cpu", "cuda", "xpu", "mps"}` in a project with a folder
        per device (bitsandbytes' `backends/cuda/` beside `cpu/`, `xpu/`, `mps/`): the list names
        the devices the project has a backend for, and the target has none; adding it would
        claim one. BACK004 says to write the target's folder first. True when so reported."""
        self.library()
        t = self.ctx.target
        for folder, others in self._backend_dirs:
            if t.device_type in others or sum(d in others for d in devices if d not in (None, "cuda")) < 2:
                continue
            self.ctx.report(
                "BACK004",
                node,
                f"`{_short(self.ctx.code(node))}` names devices the project has a backend folder for (`{folder}` "
                f"beside {', '.join(f'`{o}/`' for o in others)}); {t.display} has none: write its backend "
                f"(`{folder.rstrip('/').rpartition('/')[0]}/{t.device_type}/`) first, then add {t.device_type!r} here",
                applicability=Applicability.MANUAL,
            )
            return True
        return False

    # -- checks that ask about CUDA itself (BACK006) ----------------------------------------

    def _cuda_checks(self, test: cst.CSTNode) -> list[cst.CSTNode]:
        """The parts of a test that ask about CUDA: `torch.cuda.is_available()` (or
        `device_count()`), a comparison with "cuda", `x.is_cuda`."""
        found: list[cst.CSTNode] = []
        for n in _nodes(test):
            if isinstance(n, cst.Call) and (self.ctx.qualname(n.func) or "") in (
                "torch.cuda.is_available",
                "torch.cuda.device_count",
            ):
                found.append(n)
            elif isinstance(n, cst.SimpleString) and device_of(string_value(n)) == "cuda":
                found.append(n)
            elif isinstance(n, cst.Attribute) and n.attr.value == "is_cuda" and self.ctx.qualname(n) is None:
                found.append(n)
        return found

    def _itself(self, at: cst.CSTNode, test: cst.CSTNode, why: str) -> None:
        checks = self._cuda_checks(test)
        if not checks or any(id(c) in self.ctx.keep_cuda for c in checks):
            return
        self.ctx.keep_cuda.update(id(n) for n in _nodes(test))
        self.ctx.report(
            "BACK006",
            at,
            f"`{_short(self.ctx.code(test))}` {why}: kept on CUDA, so {self.ctx.target.display} is not taken for CUDA",
        )

    def visit_Assert(self, node: cst.Assert) -> None:
        """`assert torch.cuda.is_available(), "Megatron requires CUDA."`. A test that also
        accepts another accelerator (ColossalAI's `assert device.type == "cuda" or device.type
        == "npu", "each chunk should first be moved to CUDA"`) does not demand CUDA, whatever
        its message calls the device: it lists the devices the code handles (BACK001)."""
        if (
            node.msg is not None
            and _SAYS_CUDA_ANY_CASE.search(self.ctx.code(node.msg))
            and not self._accepts_other_accelerator(node.test)
        ):
            self._itself(node.test, node.test, "demands CUDA (its message says so)")
            if not _negates(_nodes(node.test)):
                self._cuda_past(self.ctx.current_statements[-1], f"assert {_short(self.ctx.code(node.test))}")

    @staticmethod
    def _accepts_other_accelerator(test: cst.BaseExpression) -> bool:
        """`device.type == "cuda" or device.type == "npu"`, `name in ("cuda", "npu")`: the test
        names an accelerator besides CUDA and negates nothing (`!=`, `not in`, `not`)."""
        nodes = _nodes(test)
        if _negates(nodes):
            return False
        return any(
            isinstance(n, cst.SimpleString) and device_of(string_value(n)) not in (None, "cuda", *HOSTS) for n in nodes
        )

    def _cuda_past(self, stmt: cst.CSTNode, check: str) -> None:
        """The statements after a check that demands CUDA, in its block (fla's `else: assert device
        == 'cuda', 'Only cuda device is supported for PyTorch version < 2.4.0.'` before its
        `torch.cuda.device(index)`): in a library, they only run on CUDA, and stay as they are."""
        if self.library() is None or self.ctx.in_cuda_only_code() is not None:
            return  # (an application's script past its `CUDA required` check is still the application)
        statements = self.ctx.current_statements
        parent = statements[statements.index(stmt) - 1] if statements.index(stmt) > 0 else self.ctx.module
        rest = _after(parent, stmt)
        if not rest:
            return
        message = (
            f"the code after `{check}` runs only on CUDA (the check demands it, its message says so): left as it is"
        )
        region = CudaOnlyCode(stmt, f"the code after `{check}`", "the check demands CUDA", code="BACK006", note=message)
        for s in rest:
            self.ctx.cuda_only_code.setdefault(id(s), region)
        self._regions.append((region, stmt, message, None))

    @staticmethod
    def _raises(body: cst.BaseSuite) -> bool:
        """Whether a block ends by refusing: `raise X(...)`, or `assert False, "Unsupported device"`."""
        last = body.body[-1] if body.body else None
        small = last.body[-1] if isinstance(last, cst.SimpleStatementLine) and last.body else None
        return isinstance(small, cst.Raise) or (
            isinstance(small, cst.Assert) and isinstance(small.test, cst.Name) and small.test.value == "False"
        )

    def _raises_for_cuda(self, node: cst.If) -> bool:
        """`if not torch.cuda.is_available(): raise RuntimeError("... requires CUDA")`. In a
        project with a device abstraction of its own, also "... GPU ...": a library that refuses
        to go on without `torch.cuda` and calls what it needs a GPU (`"No GPU found. A GPU is
        needed for quantization."`) demands CUDA's hardware, which the target is not; an
        application's "needs a GPU" asks for an accelerator, and the target is one."""
        body = node.body
        last = body.body[-1] if body.body else None
        small = last.body[-1] if isinstance(last, cst.SimpleStatementLine) and last.body else None
        if not isinstance(small, cst.Raise) or small.exc is None:
            return False
        message = self.ctx.code(small.exc)
        if self._says_cuda and _SAYS_CUDA.search(message):
            return True
        return bool(_SAYS_GPU.search(message)) and self._without_cuda(node.test) and self.library() is not None

    def _without_cuda(self, test: cst.BaseExpression) -> bool:
        """`not torch.cuda.is_available()`, alone or one operand of an `and`/`or` (`not
        supports_cpu and not torch.cuda.is_available()`): the test refuses hosts without CUDA."""
        return any(
            isinstance(o, cst.UnaryOperation)
            and isinstance(o.operator, cst.Not)
            and isinstance(o.expression, cst.Call)
            and self.ctx.qualname(o.expression.func) == "torch.cuda.is_available"
            for o in _nodes(test)
        )

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        """`torch.version.hip is not None and torch.cuda.is_available()`: a ROCm question.
        `t == "cuda" or t == "npu"`: a list of devices written with `or` (BACK001)."""
        if isinstance(node.operator, cst.Or):
            self._fallback_beside_platform(node)
        self._rocm_question(node)
        if isinstance(node.operator, cst.Or) and id(node) not in self._inner_ors:
            self._device_or(node)
        if id(node) not in self._inner_lists:
            self._available_list(node)
        if isinstance(node.operator, cst.And):
            self._other_without_cuda(node)
        if isinstance(node.operator, cst.And) and id(node) not in self.ctx.keep_cuda and self.library() is not None:
            self._cuda_capability(node)

    def _rocm_question(self, node: cst.BooleanOperation) -> None:
        """`torch.version.hip is not None and torch.cuda.is_available()` (or a module-level flag
        made so): CUDA's availability test asks about ROCm's build of torch, kept as it is."""
        if (
            isinstance(node.operator, cst.And)
            and self._hip
            and _asks_hip(node.left)
            and id(node) not in self.ctx.keep_cuda
        ):
            self._itself(node.right, node.right, "asks about ROCm's build of torch (`torch.version.hip` beside it)")
        elif (
            isinstance(node.operator, cst.And)
            and self._hip
            and id(node) not in self.ctx.keep_cuda
            and len(self.ctx.current_statements) == 1
        ):
            # `IS_ROCM = torch.cuda.is_available() and torch.version.hip is not None` (torchao's
            # module-level constant; in a function the guards follow such a flag: GUARD001)
            operands = _and_operands(node)
            if any(_asks_hip(o) for o in operands[1:]):
                for o in operands:
                    if isinstance(o, cst.Call) and self.ctx.qualname(o.func) == "torch.cuda.is_available":
                        self._itself(o, o, "asks about ROCm's build of torch (`torch.version.hip` beside it)")

    def _cuda_capability(self, node: cst.BooleanOperation) -> None:
        """`torch.cuda.is_available() and torch.cuda.is_bf16_supported()`: what CUDA can do,
        beside the project's answers for its other devices: CUDA's own question (_itself)."""
        calls = [self.ctx.qualname(o.func) or "" for o in _and_operands(node) if isinstance(o, cst.Call)]
        if "torch.cuda.is_available" in calls and any(
            c.startswith("torch.cuda.") and c != "torch.cuda.is_available" for c in calls
        ):
            self._itself(
                node,
                node,
                "asks what CUDA itself can do, in a project whose own abstraction answers for its other devices",
            )

    def _other_without_cuda(self, node: cst.BooleanOperation) -> None:
        """`torch.backends.mps.is_available() and not torch.cuda.is_available()`: another
        accelerator's case, taken where CUDA is absent. `not torch.accelerator.is_available()`
        in CUDA's place is false wherever that accelerator is there (torch.accelerator answers
        for it too), so the case would never be taken: CUDA's test stays. On the target the other
        accelerator is absent, so the case is not taken there either way."""
        operands = _and_operands(node.with_changes(lpar=[], rpar=[]))
        others = [d for d in map(self._available_device, operands) if d not in (None, "cuda", *HOSTS)]
        if not others:
            return
        for o in operands:
            if self._without_cuda(o):
                self._itself(
                    o,
                    o,
                    f"takes {others[0]}'s case where CUDA is absent (`torch.accelerator.is_available()` would be true "
                    f"on {others[0]} too)",
                )

    def _available_list(self, node: cst.BooleanOperation) -> None:
        """`torch.cuda.is_available() or torch.xpu.is_available()` (and its mirror `not
        torch.cuda.is_available() and not is_torch_xpu_available()`): the devices the code
        handles, named by their availability tests. `torch.accelerator.is_available()` in
        CUDA's place would stand for every accelerator, the other ones and the target
        included: CUDA's test stays, and the finding says where the target's test goes. Only
        in a project with a device abstraction of its own: an application's `cuda or mps` test
        chooses its device, and the target is what it should choose."""
        if self.library() is None:
            return
        negated = isinstance(node.operator, cst.And)
        flat = node.with_changes(lpar=[], rpar=[])
        operands = _and_operands(flat) if negated else _or_operands(flat)
        tests: list[tuple[str, cst.BaseExpression]] = []
        for o in operands:
            if negated:
                if not (isinstance(o, cst.UnaryOperation) and isinstance(o.operator, cst.Not)):
                    return
                o = o.expression
            device = self._available_device(o)
            if device is None:
                return
            tests.append((device, o))
        devices = [d for d, _ in tests]
        if devices.count("cuda") != 1 or len(set(devices) - HOSTS) < 2 or self.ctx.target.device_type in devices:
            return
        cuda = next(o for d, o in tests if d == "cuda")
        if not isinstance(cuda, cst.Call) or id(cuda) in self.ctx.keep_cuda or self.ctx.in_cuda_only_code() is not None:
            return
        facts = cuda_only_facts(self.ctx)
        if facts.active and facts.guard_reason(self.ctx.current_statements, whole_function=True):
            return  # a check in front of CUDA-only code (GUARD001 keeps it as it is)
        self.ctx.keep_cuda.update(id(n) for n in _nodes(cuda))
        self._inner_lists.update(id(n) for n in _nodes(node) if isinstance(n, cst.BooleanOperation))
        t = self.ctx.target
        self.ctx.report(
            "BACK001",
            node,
            f"`{_short(self.ctx.code(node))}` names the devices the code handles by their availability tests "
            f"({', '.join(devices)}): CUDA's test is kept (`torch.accelerator.is_available()` would stand for every "
            f"accelerator); {t.display}'s test is not added, since nothing says this code runs there",
            applicability=Applicability.MANUAL,
        )

    def _available_device(self, node: cst.BaseExpression) -> str | None:
        """The device whose availability `node` tests: `torch.xpu.is_available()`,
        `is_torch_npu_available()`, or a flag named so (`is_npu_available`)."""
        if isinstance(node, cst.Name):
            m = _AVAILABLE_HELPER.match(node.value)
            return m.group(1) if m and m.group(1) in DEVICE_NAMES else None
        if not isinstance(node, cst.Call) or node.args:
            return None
        test = self._test(node)
        return test.device if test is not None and test.kind == "available" else None

    def _device_or(self, node: cst.BooleanOperation) -> None:
        operands = _or_operands(node)
        self._inner_ors.update(id(o) for o in _nodes(node) if isinstance(o, cst.BooleanOperation))
        subject, devices, strings = None, [], []
        for o in operands:
            if not (
                isinstance(o, cst.Comparison)
                and len(o.comparisons) == 1
                and isinstance(o.comparisons[0].operator, cst.Equal)
            ):
                return
            value, other = o.comparisons[0].comparator, o.left
            if string_value(value) is None:
                value, other = other, value
            device = device_of(string_value(value))
            if device is None or (subject is not None and self.ctx.code(other) != subject):
                return
            subject = self.ctx.code(other)
            devices.append(device)
            strings.append(value)
        if "accelerator" in (subject or "").rsplit(".", 1)[-1].lower():
            # `accelerator == "cuda" or accelerator == "mps"`: a framework's accelerator names
            # (visit_Comparison)
            return
        if "cuda" not in devices or len(set(devices) - HOSTS) < 2 or any(id(s) in self.ctx.keep_cuda for s in strings):
            return
        facts = cuda_only_facts(self.ctx)
        if facts.active and facts.guard_reason(self.ctx.current_statements, whole_function=True):
            return
        self.ctx.keep_cuda.update(id(s) for s, d in zip(strings, devices) if d == "cuda")
        cuda = strings[devices.index("cuda")]
        if self.ctx.target.device_type not in devices and subject is not None and isinstance(cuda, cst.SimpleString):
            self._ors[id(node)] = (subject, cuda)

    def leave_BooleanOperation(self, original: cst.BooleanOperation, updated: cst.BooleanOperation):
        plan = self._ors.pop(id(original), None)
        if plan is None:
            return updated
        subject, cuda = plan
        t = self.ctx.target
        added = cst.Comparison(
            left=cst.parse_expression(subject),
            comparisons=[cst.ComparisonTarget(operator=cst.Equal(), comparator=replace_string(cuda, t.device_type))],
        )
        new = cst.BooleanOperation(
            left=updated.with_changes(lpar=[], rpar=[]),
            operator=cst.Or(),
            right=added,
            lpar=updated.lpar,
            rpar=updated.rpar,
        )
        if self.ctx.report(
            "BACK001",
            original,
            f"`{self.ctx.code(original)}` lists the devices the code handles: `{subject} == {t.device_type!r}` is "
            "added, CUDA's test stays",
            replacement=new,
        ):
            return new
        return updated

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        """`# right now, only CUDA is implemented` over `device = torch.device("cuda",
        torch.cuda.current_device())` (peft's ZeRO-3 token collection): in a library, the
        statement its comment says is CUDA's alone stays CUDA's (BACK006)."""
        said = next(
            (
                line.comment.value
                for line in node.leading_lines
                if line.comment and _ONLY_CUDA.search(line.comment.value)
            ),
            None,
        )
        if (
            said is None
            or "cuda" not in self.ctx.code(node).lower()
            or self.library() is None
            or self.ctx.in_cuda_only_code() is not None
        ):
            return
        message = (
            f"`{_short(self.ctx.code(node).strip())}` is CUDA's alone (its comment says so: `{said}`): left as it is"
        )
        region = CudaOnlyCode(
            node, "the statement", "its comment says only CUDA is implemented", code="BACK006", note=message
        )
        self.ctx.cuda_only_code.setdefault(id(node), region)
        self._regions.append((region, node, message, None))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        """`def is_cuda_available(): return torch.cuda.is_available()`: a library's answer
        about CUDA itself, beside its answers about the other backends."""
        self._backend_function(node)
        self._cuda_method(node)
        self._set_for_kept_test(node)
        if (
            _CUDA_QUESTION.match(node.name.value)
            and self.library() is not None
            and self.ctx.in_cuda_only_code() is None
            and len(self.ctx.current_statements) == 1
        ):
            # `def is_cuda_stream_capturing()` beside the project's answers for other devices
            library = self.library()
            assert library is not None
            region = CudaOnlyCode(
                node.name,
                f"`def {node.name.value}`",
                "it answers a question about CUDA itself",
                code="BACK006",
                quiet=True,
            )
            self.ctx.cuda_only_code[id(node)] = region
            message = (
                f"`def {node.name.value}` answers a question about CUDA itself, in a project with a device "
                f"abstraction of its own ({library[0]}): kept as it is"
            )
            self._regions.append((region, node.name, message, None))
            return
        if self._cuda_own_function(node):
            return
        if not _CUDA_PREDICATE.match(node.name.value):
            return
        for n in _nodes(node.body):
            if isinstance(n, cst.Return) and n.value is not None:
                self._itself(n.value, n.value, f"is what `{node.name.value}()` answers about CUDA itself")
            elif isinstance(n, cst.Assign):
                self._itself(n.value, n.value, f"is what `{node.name.value}()` answers about CUDA itself")

    def _set_for_kept_test(self, node: cst.FunctionDef) -> None:
        """`p.data = torch.empty(..., device="cuda")` in a function whose kept CUDA test reads
        that value's device (`cur_dev = p.data.device.type` ... `elif cur_dev == "cuda":
        alloc_storage(p.data)`, BACK008): the literal sets what CUDA's case tests, so the two are
        halves of one state machine (allocate, then re-allocate). Ported alone, a target tensor
        would match neither branch and CUDA would get target tensors: the literal is kept with
        the test, reported."""
        if b"device" not in self.ctx.source or self.library() is None or self.ctx.in_cuda_only_code() is not None:
            return
        nodes = code_nodes(node.body)  # (every reader below asks for an `If` or an `Assign`)
        read_by = self._kept_tests_reading(nodes, _device_values(nodes))
        if not read_by:
            return
        library = self.library()
        assert library is not None
        for n in nodes:
            if not (isinstance(n, cst.Assign) and len(n.targets) == 1):
                continue
            value = dotted(n.targets[0].target)
            test_node = read_by.get(value or "")
            if test_node is None:
                continue
            strings = self._unkept_cuda_strings(n.value)
            if not strings:
                continue
            self.ctx.keep_cuda.update(id(s) for s in strings)
            self.ctx.report(
                "BACK008",
                strings[0],
                f"`{_short(self.ctx.code(strings[0]))}` sets the device of `{value}`, which the kept CUDA test "
                f"`{_short(self.ctx.code(test_node))}` reads, in a project with a device abstraction of its own "
                f"({library[0]}): kept with it (ported alone, a {self.ctx.target.display} value would match neither "
                f"case); {self.ctx.target.display}'s case belongs beside both, through the project's own device",
                applicability=Applicability.MANUAL,
            )

    def _kept_tests_reading(
        self, nodes: Sequence[cst.CSTNode], device_of_value: dict[str, str]
    ) -> dict[str, cst.BaseExpression]:
        """For _set_for_kept_test, the values whose device a CUDA string test of an `if` reads
        (directly, or through a name from `device_of_value`), each -> the first such test; an
        `if` whose body only runs CUDA-only code is not a kept test's."""
        read_by: dict[str, cst.BaseExpression] = {}  # `p.data` -> the test that reads its device
        for n in nodes:
            if type(n) is not cst.If:
                continue
            read = []
            for c in _and_operands(n.test):  # `elif cur_dev == "cuda" and p.requires_grad:` too
                if not isinstance(c, cst.Comparison) or len(c.comparisons) != 1:
                    continue
                test = self._cuda_test(c)
                if test is None or test.kind != "string":
                    continue
                for side in (c.left, c.comparisons[0].comparator):
                    value = device_of_value.get(side.value) if isinstance(side, cst.Name) else _device_read(side)
                    if value is not None:
                        read.append(value)
            # (asked last: the file's CUDA-only facts are computed for a test that reads a device)
            if read and not self._runs_cuda_only(n.body):
                for value in read:
                    read_by.setdefault(value, n.test)
        return read_by

    def _unkept_cuda_strings(self, node: cst.CSTNode) -> list[cst.SimpleString]:
        """The `"cuda"` device strings in `node` that no rule has kept yet."""
        return [
            s
            for s in _nodes(node)
            if isinstance(s, cst.SimpleString)
            and device_of(string_value(s)) == "cuda"
            and id(s) not in self.ctx.keep_cuda
        ]

    def _kept_assert_reads(self) -> dict[str, cst.Assert]:
        """The names whose device type the module's asserts that demand CUDA check (`assert
        self.target_device.type == "cuda", "... should be located in cuda."`, kept by
        `visit_Assert`): name (`target_device`) -> the assert. Read from the whole module
        first, since what sets such a name may come before the assert."""
        if self._assert_reads is None:
            self._assert_reads = {}
            if b"assert" in (self.ctx.source or b"assert"):
                for n in code_nodes(self.ctx.module):
                    if not (
                        isinstance(n, cst.Assert)
                        and n.msg is not None
                        and _SAYS_CUDA_ANY_CASE.search(self.ctx.code(n.msg))
                        and not self._accepts_other_accelerator(n.test)
                    ):
                        continue
                    for c in _and_operands(n.test):
                        sides = one_comparison(c, cst.Equal)
                        if sides is None or not any(device_of(string_value(side)) == "cuda" for side in sides):
                            continue
                        for side in sides:
                            # `self.target_device.type` / `target_device.type`: a device object's
                            # type (a tensor's `x.device.type` names no value that is set to a device)
                            read = side.value if isinstance(side, cst.Attribute) and side.attr.value == "type" else None
                            name = dotted(read) if read is not None else None
                            parts = name.split(".") if name else []
                            if parts and (len(parts) == 1 or (len(parts) == 2 and parts[0] == "self")):
                                self._assert_reads.setdefault(parts[-1], n)
        return self._assert_reads

    def _set_for_kept_assert(self, name: str, value: cst.BaseExpression) -> None:
        """`hijack_context_config(target_device=torch.device("cuda", torch.cuda.current_device()))`
        in a module whose kept assert demands `self.target_device.type == "cuda"` (ColossalAI's
        `ZeroContextConfig`): the keyword sets what the assert checks, so the two go together,
        as an allocation and the kept CUDA test that reads its device (`_set_for_kept_test`).
        Ported alone, the target's device would fail the assert: the literal is kept with it,
        reported (BACK008)."""
        if b"assert" not in (self.ctx.source or b"assert") or self.ctx.in_cuda_only_code() is not None:
            return
        check = self._kept_assert_reads().get(name)
        if check is None or check.test is None:
            return
        library = self.library()
        if library is None:
            return
        strings = self._unkept_cuda_strings(value)
        if not strings:
            return
        self.ctx.keep_cuda.update(id(s) for s in strings)
        self.ctx.report(
            "BACK008",
            strings[0],
            f"`{_short(self.ctx.code(value))}` sets `{name}`, whose device the kept assert "
            f"`{_short(self.ctx.code(check.test))}` demands is CUDA's, in a project with a device abstraction of its "
            f"own ({library[0]}): kept with it (ported alone, a {self.ctx.target.display} device would fail the "
            f"assert); {self.ctx.target.display}'s case belongs beside both, through the project's own device",
            applicability=Applicability.MANUAL,
        )

    def visit_For(self, node: cst.For) -> None:
        """`for device in self._gpu_devices: with torch.device(f"cuda:{device}"): ...` where the
        class puts every value of `_gpu_devices` there under a test this port keeps on CUDA
        (`if location == GPU` with `location = GPU if cache.device.type == "cuda" else CPU`, in
        another method: `_cuda_only_fields`): the loop runs for CUDA's devices alone, so its body
        is CUDA's case (BACK008). Ported, it would name the target's device on CUDA."""
        if (
            (self.ctx.source is not None and b"self." not in self.ctx.source)
            or self.library() is None
            or self.ctx.in_cuda_only_code() is not None
        ):
            return
        field = _self_field(node.iter)
        statements = self.ctx.current_statements
        cls = next((s for s in reversed(statements) if isinstance(s, cst.ClassDef)), None)
        if field is None or cls is None or not isinstance(cls.body, cst.IndentedBlock):
            return
        test = self._cuda_only_fields(cls).get(field)
        if test is None or not self._cuda_named_in(node.body):
            return
        what = f"`for ... in {self.ctx.code(node.iter)}`"
        t = self.ctx.target
        self._keep_cuda_case(
            node.iter,
            what,
            node.body,
            lambda library: (
                f"{what} runs over what the class puts in `self.{field}` only where `{_short(self.ctx.code(test))}`, "
                f"kept as CUDA's case in a project with a device abstraction of its own ({library}): the loop is "
                f"CUDA's case too, kept as it is; {t.display}'s belongs beside it, through the project's own device"
            ),
        )

    def _cuda_named_in(self, body: cst.CSTNode) -> bool:
        """Whether `body` names CUDA: a CUDA device string (`f"cuda:{i}"` too) or a `torch.cuda` API."""
        for n in _nodes(body):
            if isinstance(n, cst.FormattedString) and n.parts and isinstance(n.parts[0], cst.FormattedStringText):
                if device_of(n.parts[0].value) == "cuda":
                    return True
            elif isinstance(n, (cst.Name, cst.Attribute)) and (self.ctx.qualname(n) or "").startswith("torch.cuda"):
                return True
        return self._names_cuda(body) is not None

    def _cuda_only_fields(self, cls: cst.ClassDef) -> dict[str, cst.BaseExpression]:
        """The fields of `cls` (`self._gpu_devices`) that its methods fill (`.add`, `.append`,
        `[k] = v`) only under a test this port keeps on CUDA, and otherwise only set empty
        (`set()`): field -> that test. A field filled anywhere else, set to anything else or
        handed to other code is not CUDA's alone."""
        if id(cls) in self._fields:
            return self._fields[id(cls)]
        fills: dict[str, list[cst.BaseExpression | None]] = {}
        body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
        for fn in body:
            if isinstance(fn, cst.FunctionDef):
                self._fills(fn, fn.body.body, [], fills)
        out: dict[str, cst.BaseExpression] = {}
        for name, tests in fills.items():
            kept = [t for t in tests if t is not None]
            if kept and len(kept) == len(tests):
                out[name] = kept[0]
        self._fields[id(cls)] = out
        return out

    def _fills(
        self,
        fn: cst.FunctionDef,
        statements: Sequence[cst.CSTNode],
        tests: list[cst.BaseExpression],
        fills: dict[str, list[cst.BaseExpression | None]],
    ) -> None:
        """Record under `fills` each `self.<field>` filled in `statements` (with the CUDA test it is
        under, or None), walking into blocks; an `if`'s body is under its test, its `else` not."""
        for stmt in statements:
            if isinstance(stmt, cst.FunctionDef) and isinstance(stmt.body, cst.IndentedBlock):
                self._fills(fn, stmt.body.body, [], fills)  # a closure runs wherever it is called: under no test
                continue
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                continue
            if isinstance(stmt, cst.If):
                self._fills(fn, stmt.body.body, [*tests, stmt.test], fills)
                if stmt.orelse is not None:
                    self._fills(
                        fn, [stmt.orelse] if isinstance(stmt.orelse, cst.If) else stmt.orelse.body.body, tests, fills
                    )
                continue
            if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                for small in stmt.body:
                    self._fills_small(fn, small, tests, fills)
                continue
            for part in _blocks(stmt):
                self._fills(fn, part, tests, fills)

    def _fills_small(
        self,
        fn: cst.FunctionDef,
        small: cst.BaseSmallStatement,
        tests: list[cst.BaseExpression],
        fills: dict[str, list[cst.BaseExpression | None]],
    ) -> None:
        # the CUDA test the statement is under (an operand of an enclosing `if`'s test), or None
        cuda_test = next(
            (k for t in tests for c in _and_operands(t) if (k := self._cuda_only_operand(fn, c)) is not None), None
        )
        _assigned_fills(small, cuda_test, fills)
        _called_fills(small, cuda_test, fills)

    def _cuda_only_operand(self, fn: cst.FunctionDef, test: cst.BaseExpression) -> cst.BaseExpression | None:
        """The test this port keeps on CUDA that `test` (an operand of an `if`'s test) stands
        for: itself (`cache.device.type == "cuda"`, `cache.is_cuda`), the value of a name the
        function sets once to one (`on_gpu = ...; if on_gpu:`), or the test of a choice whose
        CUDA arm the test compares with (`location = GPU if cache.device.type == "cuda" else
        CPU; if location == GPU:`). None where it is not one."""
        if self._kept_test(test):
            return test
        if isinstance(test, cst.Name):
            values = [v for name, v in name_assignments(fn.body) if name == test.value]
            return values[0] if len(values) == 1 and self._kept_test(values[0]) else None
        if (
            not isinstance(test, cst.Comparison)
            or len(test.comparisons) != 1
            or not isinstance(test.comparisons[0].operator, (cst.Equal, cst.Is))
        ):
            return None
        for name, other in ((test.left, test.comparisons[0].comparator), (test.comparisons[0].comparator, test.left)):
            if not isinstance(name, cst.Name):
                continue
            values = [v for n, v in name_assignments(fn.body) if n == name.value]
            if len(values) != 1 or not isinstance(values[0], cst.IfExp) or not self._kept_test(values[0].test):
                continue
            arm, code = values[0], self.ctx.code(other)
            if self.ctx.code(arm.body) == code and self.ctx.code(arm.orelse) != code:
                return arm.test
        return None

    def _kept_test(self, test: cst.BaseExpression) -> bool:
        """Whether this port keeps `test` on CUDA in this project: it asks whether a device (or
        tensor, or the project's device object) is CUDA's, not whether CUDA is there."""
        found = self._cuda_test(test)
        return found is not None and found.kind in ("string", "attribute", "platform")

    def _cuda_own_function(self, node: cst.FunctionDef) -> bool:
        """`def _get_cuda_rng_state(device="cuda", ...)` whose body reads
        `torch.cuda.default_generators`: a function named for CUDA that uses a `torch.cuda` API
        porter has no port for on this target is CUDA's own. Ported in part, its device would
        be the target's while its body stays CUDA's (a half-ported function): it is left as it
        is, reported; the target needs its own beside it."""
        if self.ctx.in_cuda_only_code() is not None:
            return False
        target = self.ctx.target.name
        kept = None
        if _NAMED_CUDA_WORD.search(node.name.value):
            kept = next(
                (
                    q
                    for n in code_nodes(node.body)
                    if isinstance(n, (cst.Attribute, cst.Name))
                    and (q := self.ctx.qualname(n) or "").startswith("torch.cuda.")
                    and not _ported_on(q, target)
                ),
                None,
            )
            why = f"it uses `{kept}`, which porter has no port for on {self.ctx.target.display}"
            if kept is None and self.library() is not None and (kept := self._cuda_report(node)) is not None:
                why = f"it writes `{kept}` into text that names CUDA, which is a report of CUDA's state"
        named = kept is not None
        if kept is None:
            kept = self._kept_cuda_runtime(node)
            why = f"it keeps {kept}, CUDA's runtime, which porter has no port for on {self.ctx.target.display}"
        if kept is None:
            return False
        region = CudaOnlyCode(
            node.name, f"`def {node.name.value}`", why.split(", which", 1)[0] + ", which has no port", code="BACK006"
        )  # (not quiet: what has no port in it is still reported where it is)
        self.ctx.cuda_only_code[id(node)] = region
        because = (
            "a port of its device alone would leave its body on CUDA"
            if named
            else "the rest of it through `torch.accelerator` would be the same on CUDA and never run on the target"
        )
        message = (
            f"`def {node.name.value}` is CUDA's own: {why}; "
            f"kept as it is ({because}); {self.ctx.target.display}'s own belongs beside it"
        )
        self._regions.append((region, node.name, message, None))
        return True

    def _cuda_report(self, node: cst.FunctionDef) -> str | None:
        """`f"cuda current_device: {torch.cuda.current_device()}"` in a function named for CUDA
        (`log_cuda_info`) of a library with backends of its own: the function reports CUDA's
        state as CUDA's. Through torch.accelerator
        it would print another device's answer under CUDA's name. The `torch.cuda` call, or None."""
        for n in code_nodes(node.body):
            if not isinstance(n, cst.FormattedString):
                continue
            text = "".join(p.value for p in n.parts if isinstance(p, cst.FormattedStringText))
            if "cuda" not in text.lower():
                continue
            for part in n.parts:
                if not isinstance(part, cst.FormattedStringExpression):
                    continue
                for sub in code_nodes(part.expression):
                    if isinstance(sub, cst.Call) and (self.ctx.qualname(sub.func) or "").startswith("torch.cuda."):
                        return self.ctx.code(sub)
        return None

    def _kept_cuda_runtime(self, node: cst.FunctionDef) -> str | None:
        """What of CUDA's runtime the function keeps, or None: a raw CUDA stream handle
        (`stream.cuda_stream` for a CuTe-DSL or FlyDSL launch, `torch._C._cuda_getCurrentRawStream`),
        which nothing ports; in a project with a device abstraction of its own, or in a module
        that cannot be imported without a CUDA-only package (`import triton` at its top), also
        a CUDA stream or event it makes or is typed with that has no (safe) port on the target
        (`torch.cuda.Event(enable_timing=True)` timing a Triton kernel), or, in a method, the
        CUDA stream calls of a class that keeps such streams or events, or CUDA's current
        stream handed to code that is not torch's (`_stream_handed_over`). Such a function only
        runs on CUDA: rewriting the rest of it (a `synchronize`, a `current_stream`) changes
        nothing on CUDA and never reaches the target. (An application's timing code is ported,
        its events reported.)"""
        if self._raw_streams and (raw := self._raw_stream(node)) is not None:
            return raw
        if self.library() is not None:
            handed = self._cuda_in_own_words(node)
            if handed is not None:
                return handed
        if not self._streams_named or (self.library() is None and self._needs() is None):
            return None  # an application's timing or stream code: ported, its events reported
        own = self._kept_streams(node) or self._stream_handed_over(node)
        if own is not None:
            return own
        statements = self.ctx.current_statements
        cls = statements[-2] if len(statements) >= 2 else None
        if not isinstance(cls, cst.ClassDef):
            return None
        streams = self._kept_streams(cls)
        if streams is None:
            return None
        used = next(
            (
                q
                for n in code_nodes(node.body)
                if isinstance(n, cst.Attribute)
                and (q := self.ctx.qualname(n) or "").startswith("torch.cuda.")
                and q.split(".")[2] in _STREAM_APIS
            ),
            None,
        )
        return f"`{used}` beside {streams} of its class `{cls.name.value}`" if used else None

    def _raw_stream(self, node: cst.FunctionDef) -> str | None:
        """A raw CUDA stream handle in the function (for _kept_cuda_runtime), as shown:
        `stream.cuda_stream`, or CUDA's runtime itself (`torch._C._cuda_getCurrentRawStream`)."""
        for n in code_nodes(node):
            if isinstance(n, cst.Attribute) and n.attr.value == "cuda_stream":
                return f"`{_short(self.ctx.code(n))}`"
            if isinstance(n, (cst.Attribute, cst.Name)):
                qual = self.ctx.qualname(n) or ""
                if qual.startswith("torch._C._cuda"):
                    return f"`{qual}`"
        return None

    def _cuda_in_own_words(self, node: cst.FunctionDef) -> str | None:
        """CUDA named in the words of a library that names devices its own way, and no other
        device named there (`binding.bind_output(name, "cuda", i)`: ONNX Runtime's CUDA device,
        porter.analysis.device_words): the function runs that library on CUDA only."""
        words = own_device_words(self.ctx.source)
        if not words:
            return None
        found = None
        for n in code_nodes(node.body):
            if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value in words:
                named = {string_value(a.value) for a in n.args} - {None}
                if (named - {"cuda"}) & DEVICE_NAMES:
                    return None  # another of its devices named too: not CUDA's alone
                if "cuda" in named and found is None:
                    found = f"`{_short(self.ctx.code(n))}` ({words[n.func.attr.value]}'s CUDA device, in its own words)"
        return found

    def _stream_handed_over(self, node: cst.FunctionDef) -> str | None:
        """CUDA's current stream handed to code that is not torch's: `group.broadcast(t,
        src=src, stream=torch.cuda.current_stream())` (a NCCL communicator), `_run_compiled(...,
        torch.cuda.current_stream())` (a compiled kernel's launcher), directly or through a name
        the function sets to it. That code takes a CUDA stream; torch's own stream methods
        (`t.record_stream(s)`, `s.wait_stream(s2)`) do not count."""
        names: set[str] = set()
        for n in code_nodes(node.body):
            if (
                isinstance(n, cst.Assign)
                and len(n.targets) == 1
                and isinstance(n.targets[0].target, cst.Name)
                and self._cuda_stream_call(n.value)
            ):
                names.add(n.targets[0].target.value)
        for n in code_nodes(node.body):
            if not isinstance(n, cst.Call) or (self.ctx.qualname(n.func) or "").startswith("torch."):
                continue
            if isinstance(n.func, cst.Attribute) and n.func.attr.value in _TORCH_STREAM_METHODS:
                continue
            for arg in n.args:
                if self._cuda_stream_call(arg.value) or (isinstance(arg.value, cst.Name) and arg.value.value in names):
                    return f"CUDA's stream handed to `{_short(self.ctx.code(n.func))}`"
        return None

    def _cuda_stream_call(self, value: cst.BaseExpression) -> bool:
        return isinstance(value, cst.Call) and self.ctx.qualname(value.func) in (
            "torch.cuda.current_stream",
            "torch.cuda.default_stream",
        )

    def _needs(self) -> str | None:
        """The CUDA-only package this module cannot be imported without and uses (GUARD004's
        evidence: `import triton` at its top level), or None."""
        if self._module_needs is False:
            self._module_needs = module_needs(self.ctx.module, self.ctx.target.name)
        return self._module_needs  # type: ignore[return-value]

    def _kept_streams(self, node: cst.CSTNode) -> str | None:
        """A `torch.cuda` stream or event that `node` makes or names as a type, on each of its
        runs (not under an `if`: `if async_copy: self._stream = torch.cuda.Stream()` is an
        option), and the port leaves (no port on the target, or an unsafe one not applied)."""
        known = self._stream_units.get(id(node))
        if known is not None:
            return known or None
        found = ""
        for n in _unconditional_nodes(node):
            if not isinstance(n, cst.Attribute):
                continue
            qual = self.ctx.qualname(n) or ""
            if not qual.startswith("torch.cuda.") or qual.split(".")[2] not in _STREAM_KINDS:
                continue
            row = lookup(qual[len("torch.cuda.") :])
            target = self.ctx.target.name
            if (
                row is None
                or not _ported_on(qual, target)
                or (target in row.unsafe and not self.ctx.settings.unsafe_fixes)
            ):
                found = f"`{qual}`"
                break
        self._stream_units[id(node)] = found
        return found or None

    def visit_Comparison(self, node: cst.Comparison) -> None:
        """`x.type in ("cuda", "xpu")`: a list of devices the code handles. But
        `args.accelerator in ("cuda", "mps")` holds a framework's accelerator names
        (Lightning's), not devices (literals.py keeps them)."""
        sides = [node.left, *(c.comparator for c in node.comparisons)]
        if any("accelerator" in (dotted(s) or "").rsplit(".", 1)[-1].lower() for s in sides):
            self._vocabulary.update(id(s) for s in sides)
        for c in node.comparisons:
            if isinstance(c.operator, (cst.In, cst.NotIn)):
                self._listed.add(id(c.comparator))
        # `get_accelerator().device_name() == "cuda"`: the project's own accelerator, asked
        # whether it is CUDA's (porter.analysis.device_backends): true only on CUDA's backend
        if self._accessors is None:
            self._accessors = _accessor_facts(self.ctx.settings)
        accessors = self._accessors
        if accessors and len(node.comparisons) == 1:
            for side in sides:
                member = side.func if isinstance(side, cst.Call) else side
                if (
                    isinstance(member, cst.Attribute)
                    and member.attr.value in accessors
                    and any(device_of(string_value(o)) == "cuda" for o in sides)
                ):
                    self._itself(
                        node, node, f"asks whether the project's accelerator is CUDA's ({accessors[member.attr.value]})"
                    )
                    break
        if (
            len(node.comparisons) == 1
            and isinstance(node.comparisons[0].operator, (cst.Equal, cst.NotEqual))
            and self.library() is not None
        ):
            # `device.type != "cuda"`: whether the device is CUDA's, in a project whose own
            # abstraction answers for the other devices
            strings = [side for side in sides if device_of(string_value(side)) == "cuda"]
            if (
                len(strings) == 1
                and string_value(strings[0]) in ("cuda", "cuda:0")
                and not any(string_value(side) is not None for side in sides if side is not strings[0])
            ):
                self._cuda_case(node, strings, f"`{_short(self.ctx.code(node))}` asks whether a device is CUDA's")

    def _table_entry(self, node: cst.Assign) -> None:
        """`CUDA = ("cuda", "GPU", "nccl")` in a class of members per device (torchtune's
        `DeviceSupport`): CUDA's entry of the project's table, kept; the target's is one more."""
        statements = self.ctx.current_statements
        if len(statements) < 2 or not isinstance(statements[-2], cst.ClassDef) or not isinstance(node.value, cst.Tuple):
            return
        names = [dotted(t.target) or "" for t in node.targets]
        if names != ["CUDA"] and names != ["GPU"]:
            return
        if not any(device_of(string_value(e.value)) == "cuda" for e in node.value.elements):
            return
        self._cuda_case(
            node.value,
            [node.value],
            f"`{names[0]} = {self.ctx.code(node.value)}`, CUDA's entry of `{statements[-2].name.value}`,",
        )

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None and _NAMES_DEVICES.search((dotted(node.target) or "").rsplit(".", 1)[-1]):
            self._listed.add(id(node.value))

    def visit_Return(self, node: cst.Return) -> None:
        """`def supported_devices(self): return ["cuda", "npu"]`."""
        scope = self.ctx.scopes.innermost
        name = scope.name.value if isinstance(scope, cst.FunctionDef) else ""
        if node.value is not None and _NAMES_DEVICES.search(name):
            self._listed.add(id(node.value))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._set_for_kept_assert(node.keyword.value, node.value)
        if node.keyword is not None and "accelerator" in node.keyword.value.lower():
            self._vocabulary.add(id(node.value))
        elif node.keyword is not None and node.keyword.value == "choices":
            # `add_argument("--device", default="cuda", choices=["cpu", "cuda"])`: the devices
            # the option accepts; the target is added, CUDA stays accepted
            self._listed.add(id(node.value))

    def visit_List(self, node: cst.List) -> None:
        self._device_list(node)

    def visit_Tuple(self, node: cst.Tuple) -> None:
        pairs = _device_pairs(node)
        if pairs is not None and len(pairs) >= 2:
            self._keep_table(node, [s for _, s in pairs], "pairs each device with its availability test")
        self._device_list(node)

    def visit_Set(self, node: cst.Set) -> None:
        self._device_list(node)

    def _extend(self, original, updated):
        if id(original) not in self._lists:
            return updated
        elements = list(updated.elements)
        last = elements[-1]
        first = next(e.value for e in original.elements if device_of(string_value(e.value)) == "cuda")
        assert isinstance(first, cst.SimpleString)
        added = cst.Element(value=replace_string(first, self.ctx.target.device_type))
        # the separator between elements (one per line, or `, `), and the last one's trailing comma
        between = (
            elements[-2].comma
            if isinstance(elements[-2].comma, cst.Comma)
            else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        )
        tail = last.comma
        closer = _closer(updated)
        if isinstance(between, cst.Comma) and isinstance(between.whitespace_after, cst.ParenthesizedWhitespace):
            # one element a line: each keeps the comment of its own line (`"mps",  # Apple Silicon`),
            # which follows the last element's comma, or the closing bracket's whitespace without one
            if isinstance(tail, cst.Comma) and isinstance(tail.whitespace_after, cst.ParenthesizedWhitespace):
                own = tail.whitespace_after.first_line
                tail = tail.with_changes(
                    whitespace_after=tail.whitespace_after.with_changes(first_line=cst.TrailingWhitespace())
                )
            elif closer is not None and isinstance(closer[1].whitespace_before, cst.ParenthesizedWhitespace):
                own = closer[1].whitespace_before.first_line
                closer = (
                    closer[0],
                    closer[1].with_changes(
                        whitespace_before=closer[1].whitespace_before.with_changes(first_line=cst.TrailingWhitespace())
                    ),
                )
            else:
                own = cst.TrailingWhitespace()
            between = between.with_changes(whitespace_after=between.whitespace_after.with_changes(first_line=own))
        elements[-1] = last.with_changes(comma=between)
        elements.append(added.with_changes(comma=tail))
        new = updated.with_changes(elements=elements, **({closer[0]: closer[1]} if closer is not None else {}))
        devices = ", ".join(v for e in original.elements if (v := string_value(e.value)))
        if self.ctx.report(
            "BACK001",
            original,
            f"`{self.ctx.code(original)}` lists the devices the code supports ({devices}): "
            f"{self.ctx.target.device_type!r} is added, CUDA's entry stays",
            replacement=new,
        ):
            return new
        return updated

    leave_List = _extend
    leave_Tuple = _extend
    leave_Set = _extend

    # -- tables of the devices each entry runs on (BACK010) ---------------------------------

    def _device_table(self, node: cst.Dict) -> None:
        """`{"flash-attn2": ("cuda", "xpu"), "metal-sdpa": ("mps",)}`: the devices each entry
        runs on, and `{"supported_devices": ((is_cuda_available, "cuda"),)}`: a device paired
        with its availability test. Each entry says where its own code runs: kept as it is."""
        elements = [e for e in node.elements if isinstance(e, cst.DictElement)]
        for e in elements:
            pairs = _device_pairs(e.value) if _NAMES_DEVICES.search(string_value(e.key) or "") else None
            if pairs is not None and len(pairs) == 1:
                self._keep_table(
                    e.value,
                    [s for _, s in pairs],
                    f"pairs each device with its availability test, under `{self.ctx.code(e.key)}`",
                )
        if len(elements) < 2 or not all(isinstance(e.value, (cst.Tuple, cst.List)) for e in elements):
            return
        per_entry = [[string_value(x.value) for x in e.value.elements] for e in elements]  # type: ignore[attr-defined]
        names = [v for entry in per_entry for v in entry]
        if not all(entry for entry in per_entry) or any(
            v is None or (device_of(v) is None and v not in VOCABULARY) for v in names
        ):
            return
        devices = {device_of(v) or v for v in names}
        if "cuda" not in devices or len(devices - HOSTS) < 2 or len({tuple(entry) for entry in per_entry}) < 2:
            return  # entries that differ, over two accelerators at least: a table, not one list repeated
        strings = [x.value for e in elements for x in e.value.elements]  # type: ignore[attr-defined]
        self._keep_table(node, strings, "lists the devices each entry runs on")

    def _keep_table(self, node: cst.CSTNode, strings: Sequence[cst.BaseExpression], what: str) -> None:
        cuda = [s for s in strings if device_of(string_value(s)) == "cuda"]
        if (
            not cuda
            or any(id(s) in self.ctx.keep_cuda or id(s) in self.ctx.keep_vocabulary for s in cuda)
            or self.ctx.in_cuda_only_code() is not None
        ):
            return
        self.ctx.keep_cuda.update(id(s) for s in cuda)
        t = self.ctx.target
        devices = ", ".join(dict.fromkeys(v for s in strings if (v := string_value(s))))
        self.ctx.report(
            "BACK010",
            node,
            f"`{_short(self.ctx.code(node))}` {what} ({devices}): kept as it is; {t.display} is not added, since "
            f"nothing says this code runs there ({t.display} takes the code's own fallback)",
            applicability=Applicability.MANUAL,
        )

    # -- registries keyed by device type (BACK004) -----------------------------------------

    def visit_Dict(self, node: cst.Dict) -> None:
        self._device_table(node)
        self._devices_of_platforms(node)
        keys = [string_value(e.key) for e in node.elements if isinstance(e, cst.DictElement)]
        devices = [device_of(k) for k in keys]
        if len(devices) < 2 or any(d is None for d in devices) or "cuda" not in devices:
            return
        values = [e.value for e in node.elements if isinstance(e, cst.DictElement)]
        if not all(isinstance(v, (cst.Name, cst.Attribute)) for v in values):
            return  # not a registry of backends (a table of numbers, of strings)
        t = self.ctx.target
        if t.device_type in devices:
            # the target has its entry already: CUDA's key is the registry's own name for it
            self.ctx.keep_vocabulary.update(
                id(e.key)
                for e in node.elements
                if isinstance(e, cst.DictElement) and device_of(string_value(e.key)) == "cuda"
            )
            self.ctx.keep_cuda.update(
                id(e.key)
                for e in node.elements
                if isinstance(e, cst.DictElement) and device_of(string_value(e.key)) == "cuda"
            )
            return
        self._registry_lacks_target(node, keys, devices, values)

    def _keyword_registry(self, node: cst.Call) -> None:
        """`OrderedDict(cuda=CudaAccelerator, npu=NpuAccelerator, cpu=CpuAccelerator)` (ColossalAI's
        `_ACCELERATOR_MAPPING`, which `get_accelerator()` builds from): the registry of backends
        per device written with keywords, reported as its literal is (BACK004). Each value is a
        class or function the module defines or imports: `dict(cuda=cuda_memory, cpu=cpu_memory)`
        (ColossalAI's `Chunk.memory_usage`) is a table of numbers, no registry."""
        if not (self.ctx.qualname(node.func) == "collections.OrderedDict" or dotted(node.func) == "dict"):
            return
        keys = [a.keyword.value if a.keyword is not None else None for a in node.args]
        devices = [device_of(k) for k in keys]
        if len(devices) < 2 or None in devices or "cuda" not in devices or self.ctx.target.device_type in devices:
            return
        values = [a.value for a in node.args]
        bound = self._module_bindings()
        if all((dotted(v) or "").partition(".")[0] in bound for v in values):
            self._registry_lacks_target(node, keys, devices, values)

    def _module_bindings(self) -> set[str]:
        """The names the module's own statements bind to a class, a function or an import."""
        if self._bindings is None:
            self._bindings = set()
            for stmt in self.ctx.module.body:
                if isinstance(stmt, (cst.ClassDef, cst.FunctionDef)):
                    self._bindings.add(stmt.name.value)
                elif isinstance(stmt, cst.SimpleStatementLine):
                    for small in stmt.body:
                        if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(
                            small.names, cst.ImportStar
                        ):
                            for alias in small.names:
                                name = alias.asname.name if alias.asname is not None else alias.name
                                self._bindings.add((dotted(name) or "").partition(".")[0])
        return self._bindings

    def _registry_lacks_target(
        self, node: cst.CSTNode, keys: list[str | None], devices: list[str | None], values: list[cst.BaseExpression]
    ) -> None:
        t = self.ctx.target
        cuda = next(v for k, v in zip(devices, values) if k == "cuda")
        self.ctx.report(
            "BACK004",
            node,
            f"a registry of backends per device ({', '.join(k for k in keys if k)}): {t.display} has none here; "
            f"register its backend as {t.device_type!r} beside CUDA's `{self.ctx.code(cuda)}` once it is written",
            applicability=Applicability.MANUAL,
        )

    def _devices_of_platforms(self, node: cst.Dict) -> None:
        """`{'cuda': 'cuda', 'hip': 'cuda', 'xpu': 'xpu'}` (fla's Triton backend -> torch device):
        each value is the torch device of its key's platform, and `'hip': 'cuda'` is AMD's. The
        target is none of those platforms: the values stay, and the target's entry goes beside."""
        elements = [e for e in node.elements if isinstance(e, cst.DictElement)]
        keys = [string_value(e.key) for e in elements]
        if len(elements) < 2 or any(k is None or not _VENDOR.match(k) for k in keys):
            return
        platforms = [device_of(k) or (k if k in VOCABULARY or k == "hip" else None) for k in keys]
        if sum(p is not None for p in platforms) < 2 or self.ctx.target.device_type in platforms:
            return
        values = [
            e.value for e, p in zip(elements, platforms) if p is not None and device_of(string_value(e.value)) == "cuda"
        ]
        if values:
            self._cuda_case(
                node,
                values,
                f"`{_short(self.ctx.code(node))}` maps each platform to its torch device (CUDA's for "
                f"{', '.join(k or '' for k, e in zip(keys, elements) if e.value in values)})",
                test=False,
            )

    # -- branches per device (BACK002) -----------------------------------------------------

    def _branches(self, head: cst.If) -> list[cst.If]:
        out = [head]
        while isinstance(out[-1].orelse, cst.If):
            out.append(out[-1].orelse)
        return out

    # -- switch keys: `accelerator_name` compared with "xpu", "npu", "cuda" ... ------------

    def _keys_of(self, body: cst.CSTNode) -> dict[str, set[str]]:
        """Names compared with the device types of two accelerators at least, in one scope:
        the key of a switch (DeepSpeed's `accelerator_name`), with those devices."""
        if self._other_devices is None:
            self._other_devices = bool(_OTHER_DEVICE.search(self.ctx.source)) or not self.ctx.source
        if not self._other_devices:
            return {}  # (a file that names no other accelerator has no switch: no walk)
        found: dict[str, set[str]] = {}

        class _Compared(cst.CSTVisitor):
            def visit_FunctionDef(self, n: cst.FunctionDef) -> bool:
                return n is body

            def visit_Comparison(self, n: cst.Comparison) -> None:
                sides = [n.left, *(c.comparator for c in n.comparisons)]
                names = [d for side in sides if (d := dotted(side))]
                devices = {dev for side in sides for dev in _devices_in(side)}
                for name in names:
                    found.setdefault(name, set()).update(devices)

        cstwalk.visit(body, _Compared())
        return {k: v for k, v in found.items() if len(v - HOSTS) >= 2}

    def _switch_keys(self) -> dict[str, set[str]]:
        scope = self.ctx.scopes.innermost or self.ctx.module
        keys = self._keys.get(id(scope))
        if keys is None:
            keys = self._keys[id(scope)] = self._keys_of(scope)
        return keys

    def visit_Assign(self, node: cst.Assign) -> None:
        """`SUPPORTED_ACCELERATOR_LIST = [...]`, `self.fp16_devices = (...)`: named as devices.
        `accelerator_name = "cuda"` where `accelerator_name` is a switch key: the switch's
        own name for CUDA's branch, not a device (it stays, DEV015)."""
        if self.library() is not None:
            self._table_entry(node)
        names = [dotted(t.target) or "" for t in node.targets]
        leaves = [n.rpartition(".")[2] for n in names]
        if isinstance(node.value, (cst.List, cst.Tuple, cst.Set)) and any(_NAMES_DEVICES.search(n) for n in leaves):
            self._listed.add(id(node.value))
        if isinstance(node.value, cst.Call) and any(_CUDA_FACT.search(n) for n in leaves):
            self._itself(node.value, node.value, f"is recorded as `{names[0]}`, a fact about CUDA itself")
        named = next((n for n in leaves if _NAMED_CUDA_WORD.search(n)), None)
        if named is not None and self.library() is not None:
            # `FIRST_CUDA_DEVICE = torch.device("cuda", index=0)` (bitsandbytes): a device the
            # library names for CUDA, the default device of its CUDA library
            strings = [
                n
                for n in _nodes(node.value)
                if isinstance(n, cst.SimpleString) and device_of(string_value(n)) == "cuda"
            ]
            if strings and (
                any(n is node.value for n in strings)
                or (isinstance(node.value, cst.Call) and self.ctx.qualname(node.value.func) == "torch.device")
            ):
                self._cuda_case(node.value, strings, f"`{named}` is named for CUDA", test=False)
        if (
            isinstance(node.value, cst.SimpleString)
            and device_of(string_value(node.value)) == "cuda"
            and any(n in self._switch_keys() for n in names)
        ):
            self.ctx.keep_cuda.add(id(node.value))
            self.ctx.keep_vocabulary.add(id(node.value))

    def _detection_rung(self, branch: cst.If, test: _Test) -> bool:
        """`if torch.cuda.is_available(): accelerator_name = "cuda"`: CUDA's rung of a
        detection that sets a switch key. Kept, and where the target's rung goes reported:
        the switch over that key needs the target's backend before a rung may name it."""
        if test.kind != "available":
            return False
        sets = [
            (dotted(t.target), s.value)
            for st in branch.body.body
            if isinstance(st, cst.SimpleStatementLine)
            for s in st.body
            if isinstance(s, cst.Assign)
            for t in s.targets
            if device_of(string_value(s.value)) == "cuda"
        ]
        keys = self._switch_keys() if sets else {}
        key = next((k for k, _ in sets if k in keys), None)
        if key is None:
            return False
        region = self._keep_branch(branch, test, sorted(keys[key]))
        t = self.ctx.target
        message = (
            f"`if {self.ctx.code(branch.test)}` is CUDA's rung of the detection that sets `{key}`, the key "
            "of a switch over "
            f"{', '.join(sorted(keys[key]))}: kept as it is; {t.display} has no rung: once the switch over "
            f"`{key}` builds "
            f'{t.display}\'s backend, detect it beside this one and set `{key}` to "{t.device_type}"'
        )
        self._regions.append((region, branch.test, message, None))
        return True

    def visit_If(self, node: cst.If) -> None:
        self._enables_cuda_asserting_class(node)
        self._serialized_cuda(node)
        self._flagged_branch(node)
        self._foreign_classes(node)
        self._visit_if(node)
        self._library_branch(node)
        self._library_exit(node)
        self._choice_arms(node)
        self._picks_cuda_own(node)
        self._filed_under_cuda(node)

    def _enables_cuda_asserting_class(self, node: cst.If) -> None:
        """`if enabled and not torch.cuda.is_available(): warnings.warn(...); self._enabled = False`
        in a class whose code asserts its tensors are CUDA's (ColossalAI's legacy `GradScaler`:
        `assert outputs.is_cuda or outputs.device.type == "xla"`, kept, BACK008): the test says
        whether that code can run, so it asks about CUDA itself. Kept (BACK006): on the target
        the class stays off, as it was, rather than on and failing its own asserts."""
        if self.library() is None or not any(
            isinstance(n, cst.Call) and self.ctx.qualname(n.func) == "torch.cuda.is_available"
            for n in code_nodes(node.test)
        ):
            return
        cls = next((s for s in reversed(self.ctx.current_statements) if isinstance(s, cst.ClassDef)), None)
        if cls is None:
            return
        check = self._cuda_asserts.get(id(cls))
        if check is None:
            check = self._cuda_asserts[id(cls)] = next(
                (
                    self.ctx.code(n.test)
                    for n in code_nodes(cls)
                    if isinstance(n, cst.Assert) and self._asserts_cuda(n.test)
                ),
                "",
            )
        if check:
            self._itself(
                node.test,
                node.test,
                f"says whether `{cls.name.value}` can run, and its code asserts `{_short(check)}`, which the target "
                "fails",
            )

    def _asserts_cuda(self, test: cst.BaseExpression) -> bool:
        """`x.is_cuda`, `x.is_cuda or x.device.type == "xla"`: a test only CUDA's tensors (and the
        devices it names, not the target) pass; it negates nothing."""
        nodes = _nodes(test)
        return (
            any(
                isinstance(n, cst.Attribute) and n.attr.value == "is_cuda" and self.ctx.qualname(n) is None
                for n in nodes
            )
            and not _negates(nodes)
            and not any(
                isinstance(n, cst.SimpleString) and device_of(string_value(n)) == self.ctx.target.device_type
                for n in nodes
            )
        )

    def _filed_under_cuda(self, node: cst.If) -> None:
        """`if device_type == "npu": device_type = "cuda"` (ColossalAI's `ChunkManager`, whose
        `total_mem` is keyed "cpu" and "cuda"): another accelerator filed under CUDA's name, the
        code's word for accelerator memory. The "cuda" assigned is that key, not a device to
        port (as "neuron" it would be a key nothing holds); the target is filed under it too:
        `or device_type == "neuron"` joins the test (BACK001)."""
        test = node.test
        sides = one_comparison(test, cst.Equal)
        if not (
            sides is not None
            and isinstance(left := sides[0], cst.Name)
            and isinstance(named := sides[1], cst.SimpleString)
            and node.orelse is None
        ):
            return
        other = device_of(string_value(named))
        if other in (None, "cuda", self.ctx.target.device_type, *HOSTS):
            return
        lines = node.body.body
        small = lines[0] if isinstance(node.body, cst.SimpleStatementSuite) and len(lines) == 1 else None
        if (
            isinstance(node.body, cst.IndentedBlock)
            and len(lines) == 1
            and isinstance(lines[0], cst.SimpleStatementLine)
        ):
            small = lines[0].body[0] if len(lines[0].body) == 1 else None
        if not (
            isinstance(small, cst.Assign)
            and len(small.targets) == 1
            and isinstance(small.targets[0].target, cst.Name)
            and small.targets[0].target.value == left.value
            and isinstance(small.value, cst.SimpleString)
            and string_value(small.value) == "cuda"
            and id(small.value) not in self.ctx.keep_cuda
        ):
            return
        self.ctx.keep_cuda.add(id(small.value))
        self._filed[id(test)] = named

    def leave_Comparison(self, original: cst.Comparison, updated: cst.Comparison) -> cst.BaseExpression:
        other = self._filed.pop(id(original), None)
        if other is None:
            return updated
        t = self.ctx.target
        name = self.ctx.code(original.left)
        added = cst.Comparison(
            left=cst.Name(name),
            comparisons=[cst.ComparisonTarget(operator=cst.Equal(), comparator=replace_string(other, t.device_type))],
        )
        new = cst.BooleanOperation(left=updated, operator=cst.Or(), right=added)
        if self.ctx.report(
            "BACK001",
            original,
            f'`if {self.ctx.code(original)}: {name} = "cuda"` files {string_value(other)!r} under CUDA\'s '
            "name, the code's "
            f"word for an accelerator: {t.device_type!r} is filed there too (`{name} == {t.device_type!r}` "
            'is added), the "cuda" stays',
            replacement=new,
        ):
            return new
        return updated

    def _picks_cuda_own(self, node: cst.If) -> None:
        """`if torch.cuda.device_count() > 1: def _cuda_device_of(a): return torch.cuda.device_of(a)`
        `else: def _cuda_device_of(a): return contextlib.nullcontext()` (bitsandbytes): the test
        picks between functions of one name, CUDA's using a `torch.cuda` API porter has no port
        for on the target (its body stays CUDA's) and a stand-in. It asks about CUDA itself:
        made the target's, the target would get CUDA's function."""
        if (
            not isinstance(node.orelse, cst.Else)
            or not isinstance(node.body, cst.IndentedBlock)
            or not isinstance(node.orelse.body, cst.IndentedBlock)
        ):
            return
        defs = node.body.body
        if not defs or not all(isinstance(d, cst.FunctionDef) for d in defs):
            return
        others = {s.name.value for s in node.orelse.body.body if isinstance(s, cst.FunctionDef)}
        target = self.ctx.target.name
        kept = []
        for d in defs:
            assert isinstance(d, cst.FunctionDef)
            api = next(
                (
                    q
                    for n in _nodes(d.body)
                    if isinstance(n, (cst.Attribute, cst.Name))
                    and (q := self.ctx.qualname(n) or "").startswith("torch.cuda.")
                    and not _ported_on(q, target)
                ),
                None,
            )
            if api is None or d.name.value not in others:
                return
            kept.append((d.name.value, api))
        name, api = kept[0]
        self._itself(
            node.test,
            node.test,
            f"picks CUDA's own `{name}` (it uses `{api}`, which has no port on {self.ctx.target.display}) over the "
            "one of the same name beside it: it asks about CUDA itself",
        )

    def _serialized_cuda(self, node: cst.If) -> None:
        """`if b"cuda" in buf:` (patching the device index of a pickled CUDA tensor): the branch
        runs only on bytes that name CUDA, data a CUDA tensor wrote; its code is CUDA's case and
        the target never reaches it. Left as it is (BACK006), reported."""
        if self.ctx.in_cuda_only_code() is not None:
            return
        test = node.test
        if not (
            isinstance(test, cst.Comparison)
            and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.In)
            and isinstance(test.left, cst.SimpleString)
            and isinstance(raw := test.left.evaluated_value, bytes)
            and device_of(raw.decode("ascii", "replace")) == "cuda"
        ):
            return
        region = CudaOnlyCode(
            node.test,
            f"the code behind `if {self.ctx.code(test)}`",
            "it runs only on data that names CUDA",
            code="BACK006",
        )
        for stmt in node.body.body:
            self.ctx.cuda_only_code.setdefault(id(stmt), region)
        message = (
            f"`if {self.ctx.code(test)}` handles bytes a CUDA tensor wrote (CUDA's serialized form): kept as it is; "
            f"data from {self.ctx.target.display} does not name CUDA, so it never takes this branch"
        )
        self._regions.append((region, node.test, message, None))

    def _foreign_classes(self, node: cst.If) -> None:
        """`if param_cls.__name__ in ["Int8Params", "Params4bit"]:` in a library: a branch for
        another package's classes, told apart by name (the module neither defines nor imports
        them: an optional dependency's). The devices it names and moves to (`type in ("cuda",
        "xpu")`, `.to(0)`) are the ones that package handles them on, which nothing says the
        target is: the branch stays as it is, with a finding."""
        if self.library() is None or self.ctx.in_cuda_only_code() is not None:
            return
        names = [
            n
            for c in code_nodes(node.test)
            if isinstance(c, cst.Comparison) and _by_name(c)
            for n in _class_names(c)
            if not re.search(rb"(?:\bclass|\bimport|,)[ \t]+%s\b" % re.escape(n.encode()), self.ctx.source)
        ]
        if not names:
            return
        test_names = bool(self._cuda_checks(node.test))
        if test_names:
            self.ctx.keep_cuda.update(id(n) for n in _nodes(node.test))
        shown = ", ".join(f"`{n}`" for n in dict.fromkeys(names))
        t = self.ctx.target
        message = (
            f"`if {_short(self.ctx.code(node.test))}` handles another package's classes ({shown}, told apart by name): "
            f"the devices it names and moves them to are the ones that package handles them on; kept as it is; "
            f"{t.display} belongs there once that package handles them on {t.display}"
        )
        region = CudaOnlyCode(
            node.test,
            f"`if {_short(self.ctx.code(node.test))}`",
            f"it handles another package's classes ({shown})",
            code="BACK008",
            quiet=True,
            note=None if test_names else message,
        )
        for stmt in node.body.body:
            self.ctx.cuda_only_code[id(stmt)] = region
        self._regions.append((region, node.test, message, None))

    def _library_exit(self, node: cst.If) -> None:
        """`if self._is_pinned or not torch.cuda.is_available(): return` before
        `torch.cuda.cudart().cudaHostRegister(...)`, in a project with a device abstraction:
        the early exit keeps CUDA's own API (one the target has no twin of, or one whose answer
        stays CUDA's in a library) away from other devices. Asked of any accelerator it would
        let the target reach that API: the test stays CUDA's (BACK008)."""
        statements = self.ctx.current_statements
        if self.library() is None or self.ctx.in_cuda_only_code() is not None or len(statements) < 2:
            return
        if node.orelse is not None or not _exits(node.body):
            return
        tests = [
            o.expression
            for o in _operands_of(node.test, cst.Or)
            if isinstance(o, cst.UnaryOperation)
            and isinstance(o.operator, cst.Not)
            and isinstance(o.expression, cst.Call)
            and self.ctx.qualname(o.expression.func) == "torch.cuda.is_available"
        ]
        if len(tests) != 1 or id(tests[0]) in self.ctx.keep_cuda:
            return
        body = getattr(statements[-2], "body", None)
        block = body.body if isinstance(body, cst.IndentedBlock) else body if isinstance(body, list) else ()
        after = next((list(block[i + 1 :]) for i, s in enumerate(block) if s is node), [])
        used = next(
            (u for s in after if (u := self._names_cuda(s, constants=True) or "").startswith("torch.cuda.")), None
        )
        if used is None:
            return
        library = self.library()
        assert library is not None
        self.ctx.keep_cuda.update(id(n) for n in _nodes(tests[0]))
        t = self.ctx.target
        self.ctx.report(
            "BACK008",
            tests[0],
            f"`if {_short(self.ctx.code(node.test))}` leaves early where CUDA is absent, before `{used}` (CUDA's own) "
            f"below it, in a project with a device abstraction of its own ({library[0]}): kept on CUDA; {t.display}'s "
            f"case belongs beside it, through the project's own device (its class or device for {t.display})",
            applicability=Applicability.MANUAL,
        )

    def _choice_arms(self, node: cst.If) -> None:
        """`if is_xpu_available(): x = x.to("xpu")` / `else: x = x.to("cuda")`: the statement
        form of `"xpu" if is_xpu_available() else "cuda"` (visit_IfExp), two arms that differ
        only in the device they name. CUDA's arm, in a project with a device abstraction, stays."""
        if self.library() is None or not isinstance(node.orelse, cst.Else):
            return
        arms = [node.body.body, node.orelse.body.body]
        if any(len(a) != 1 or not isinstance(a[0], cst.SimpleStatementLine) for a in arms):
            return
        strings = [
            [n for n in _nodes(a[0]) if isinstance(n, cst.SimpleString) and device_of(string_value(n))] for a in arms
        ]
        if any(len(found) != 1 for found in strings):
            return
        devices = [device_of(string_value(found[0])) for found in strings]
        if devices[1] != "cuda" or devices[0] in (None, "cuda", *HOSTS):
            return
        texts = [self.ctx.code(a[0]).replace(self.ctx.code(found[0]), "") for a, found in zip(arms, strings)]
        if texts[0] != texts[1]:
            return
        self._cuda_case(
            node,
            [strings[1][0]],
            f"`{_short(self.ctx.code(arms[1][0]))}` names CUDA as one case of a device choice (`{devices[0]}` beside "
            "it)",
            test=False,
        )

    def _visit_if(self, node: cst.If) -> None:
        if self._raises_for_cuda(node):
            self._turns_away(node)
        if id(node) in self._elifs:
            return
        branches = self._branches(node)
        self._elifs.update(id(b) for b in branches[1:])
        first = self._test(node.test)
        self._about_cuda_itself(node, first)
        if first is not None and first.device == "cuda" and self._detection_rung(node, first):
            return
        if len(branches) < 2:
            return
        tests = [self._test(b.test) for b in branches]
        self._cuda_fallback(branches, tests)
        plan = self._switch(branches, tests)
        if plan is None:
            return
        cuda_at, last, region = plan
        new = self._branch_for_target(branches[cuda_at], tests[cuda_at], region, "elif")  # type: ignore[arg-type]
        if new is not None:
            self._chains[id(node)] = (last, new)

    def _turns_away(self, node: cst.If) -> None:
        """`if <not CUDA>: raise ...`: the test turns away what is not CUDA (kept as it is); with
        no `else`, the code past it is CUDA's (see _cuda_past)."""
        says = "CUDA" if _SAYS_CUDA.search(self.ctx.code(node.body)) else "a GPU, CUDA's hardware in this library"
        self._itself(node.test, node.test, f"turns away what is not CUDA (the error it raises says {says})")
        if id(node.test) in self.ctx.keep_cuda:  # the error's own words about CUDA stay with its check
            # (flash-sinkhorn's `got {tensor.device if tensor.is_cuda else 'CPU'}`: made `is_tpu`, CUDA's message lied)
            self.ctx.keep_cuda.update(id(n) for r in _raised(node.body) for n in _nodes(r))
        if (self._without_cuda(node.test) or _other_devices_refused(node.test)) and node.orelse is None:
            self._cuda_past(node, f"if {_short(self.ctx.code(node.test))}: raise ...")

    def _about_cuda_itself(self, node: cst.If, first: _Test | None) -> None:
        """An `if` whose test asks about CUDA itself, not a device for the code: one that only
        reports on CUDA's platform or writes text about it (in a project with a device
        abstraction of its own), or guards the import of CUDA's backend."""
        if (
            first is not None
            and first.device == "cuda"
            and first.kind == "available"
            and node.orelse is None
            and self.library() is not None
            and _only_says(node.body, _SAYS_PLATFORM)
        ):
            # `if torch.cuda.is_available(): logger.warning("ROCm GPU architecture detection
            # failed despite ROCm being available.")`: a message about CUDA's platform itself
            self._itself(node.test, node.test, "only reports on CUDA's platform (its message names it)")
        if node.orelse is None and self.library() is not None and _only_writes_text(node.body, _SAYS_PLATFORM):
            # `if not torch.cuda.is_available() and all_cuda_fields_missing: fields[f] = "No CUDA"`:
            # an environment report writing down CUDA's absence, beside its other devices' sections
            self._itself(node.test, node.test, "only writes text about CUDA (a report of CUDA itself)")
        if first is not None and first.device == "cuda" and first.kind == "available":
            imported = _cuda_backend_imports(node.body)
            if imported:
                t = self.ctx.target
                self._itself(
                    node.test,
                    node.test,
                    f"guards the import of CUDA's backend (`{imported}`); {t.display}'s backend, where there is one, "
                    f"is imported beside it under a test of its own",
                )

    def _cuda_fallback(self, branches: list[cst.If], tests: list[_Test | None]) -> None:
        """`else: device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")` after
        rungs for other accelerators, the target's among them: the `else` is CUDA's rung (and the
        host's where CUDA is absent). The target never reaches it, having a rung of its own above:
        it stays byte for byte (BACK002), as CUDA's branch of any switch does."""
        orelse = branches[-1].orelse
        devices = [t.device for t in tests if t is not None]
        target = self.ctx.target
        if (
            not isinstance(orelse, cst.Else)
            or target.device_type not in devices
            or "cuda" in devices
            or len(set(devices) - HOSTS) < 2
            or self.ctx.in_cuda_only_code() is not None
            or self._names_cuda(orelse.body) is None
        ):
            return
        listed = ", ".join(dict.fromkeys(d for d in devices if d not in HOSTS))
        region = CudaOnlyCode(orelse, "the `else`", listed, code="BACK002", quiet=True)
        for stmt in orelse.body.body:
            self.ctx.cuda_only_code[id(stmt)] = region
        message = (
            f"the `else` after the rungs for {listed} picks CUDA (`{_short(self._names_cuda(orelse.body) or '')}`): "
            f"CUDA's rung of the switch, kept as it is; {target.display} has its own rung above it"
        )
        self._regions.append((region, orelse.body.body[0], message, None))

    def _switch(self, branches: list[cst.If], tests: list[_Test | None]) -> tuple[int, int, CudaOnlyCode] | None:
        """(CUDA's branch, the last device branch, CUDA's kept branch) when the branches form a
        device switch that has no branch for the target yet; CUDA's branch is kept either way.
        A CUDA branch that runs CUDA-only code is the guards' (GUARD001/GUARD003), not this."""
        devices = [t.device if t is not None else None for t in tests]
        if "cuda" not in devices:
            return None
        if all(d in HOSTS or d in (None, "cuda") for d in devices):
            self._host_switch(branches, tests, devices)
            return None
        if devices.count("cuda") > 1:
            # `if x.type == "cuda": ... elif torch.cuda.is_available(): ...`: CUDA twice; each
            # of its branches stays, and where the target goes is for a person to say
            for i, d in enumerate(devices):
                if d == "cuda" and tests[i] is not None and self.ctx.in_cuda_only_code() is None:
                    region = self._keep_branch(branches[i], tests[i], devices)  # type: ignore[arg-type]
                    t = self.ctx.target
                    missing = (
                        f"{t.display} has no branch: write one after the last device branch, before the fallback"
                        if t.device_type not in devices
                        else f"{t.display} has its own"
                    )
                    self._regions.append(
                        (
                            region,
                            branches[i].test,
                            f"`if {self.ctx.code(branches[i].test)}` is one of CUDA's branches of a switch over "
                            f"{region.why}: kept as it is; {missing}",
                            None,
                        )
                    )
            return None
        cuda_at = devices.index("cuda")
        cuda_test = tests[cuda_at]
        assert cuda_test is not None
        body = branches[cuda_at].body
        if self.ctx.in_cuda_only_code() is not None or any(id(s) in self.ctx.cuda_only_code for s in body.body):
            return None
        if cuda_test.kind != "string" and self._runs_cuda_only(body):
            return None  # `if x.is_cuda: <kernel>`: the guards' (a switch over names is this family's)
        region = self._keep_branch(branches[cuda_at], cuda_test, devices)
        if self.ctx.target.device_type in devices or self._vocabulary_switch(region, branches[cuda_at]):
            return None
        last = max(i for i, d in enumerate(devices) if d is not None)
        orelse = branches[last].orelse
        if isinstance(orelse, cst.Else) and self._raises(orelse.body):
            # the devices listed are the ones this code works on (bitsandbytes' quantization):
            # whether the target is one of them is for a person to say
            self._refusing_switch(region, branches[cuda_at].test)
            return None
        return cuda_at, last, region

    def _host_switch(self, branches: list[cst.If], tests: list[_Test | None], devices: list[str | None]) -> None:
        """`if device == "cuda": ... elif device == "cpu": ... else: assert False, "Unsupported
        device"` in a library: CUDA and the host are the devices this code works on (its
        fallback refuses the others), each with a branch of its own. CUDA's stays; whether the
        target is one of them is for a person to say (BACK002)."""
        last = max(i for i, d in enumerate(devices) if d is not None)
        orelse = branches[last].orelse
        if devices.count("cuda") != 1 or not isinstance(orelse, cst.Else) or self.ctx.in_cuda_only_code() is not None:
            return
        cuda_at = devices.index("cuda")
        if not self._raises(orelse.body):
            self._generic_fallback(branches[cuda_at], tests[cuda_at], devices, orelse)  # type: ignore[arg-type]
            return
        if self.library() is None and not self._over_switch_key(branches[cuda_at].test):
            return
        region = self._keep_branch(branches[cuda_at], tests[cuda_at], devices)  # type: ignore[arg-type]
        self._refusing_switch(region, branches[cuda_at].test)

    def _generic_fallback(self, branch: cst.If, test: _Test, devices: Sequence[str | None], orelse: cst.Else) -> None:
        """speechbrain 1.1.2's `Brain.__init__`: `if self.device == "cpu": ... elif "cuda" in self.device:
        self.device_type = "cuda"; torch.cuda.set_device(...)` `else: self.device_type = self.device.split(":")[0]`.
        In a package, a fallback that assigns from the device the switch tests takes every other device by its
        own name, the target's too: CUDA's branch is CUDA's alone. Ported, the target took CUDA's branch renamed
        and CUDA lost its `set_device` (BACK002: kept, the target takes the `else`)."""
        key = _compared(branch.test)
        if key is None or not in_package(self.ctx) or not _assigns_from(orelse.body, key):
            return
        region = self._keep_branch(branch, test, devices)
        message = (
            f"`if {self.ctx.code(branch.test)}` is CUDA's branch of a switch whose `else` takes every other "
            f"device by its own name (it assigns from `{key}`): kept as it is; {self.ctx.target.display} takes "
            "the `else`, as it did before the port"
        )
        self._regions.append((region, branch.test, message, None))

    def _over_switch_key(self, test: cst.BaseExpression) -> bool:
        """`device == "cuda"` where the scope compares `device` with two accelerators elsewhere
        (torchao's AWQ example: a cuda/xpu/cpu switch, then a cuda/cpu one over the same
        `device`): a switch of a program too, kept as the other one is."""
        if not isinstance(test, cst.Comparison):
            return False
        keys = self._switch_keys()
        return any(dotted(side) in keys for side in (test.left, *(c.comparator for c in test.comparisons)))

    def _vocabulary_switch(self, region: CudaOnlyCode, branch: cst.If) -> bool:
        """litgpt 0.5.13's `accelerator = "cuda"` / `"mps"` / `"cpu"`, then `L.Fabric(accelerator=accelerator)`:
        the switch picks a name in the vocabulary of `accelerator=` (Lightning's: its XLA accelerator is
        `"tpu"`, it has none for TorchNeuron or TorchTPU), not a torch device: reported, and (True) no
        target branch is written."""
        named = _vocabulary_assigned(branch.body)
        if named is None:
            return False
        scope = self.ctx.scopes.innermost or self.ctx.module
        if _used_as_device(scope, named, self.ctx.qualname):
            return False  # `torch.device(accelerator)`: the name holds a torch device after all
        test = branch.test
        self._regions.append(
            (
                region,
                test,
                f"`if {self.ctx.code(test)}` is CUDA's branch of a switch that sets `{named}`, a name in the "
                f"vocabulary of `{named}=` (Lightning's accelerators), not a torch device: kept as it is; add a "
                f"branch for {self.ctx.target.display} by hand, with the name that API gives it, where it has one",
                None,
            )
        )
        return True

    def _refusing_switch(self, region: CudaOnlyCode, test: cst.BaseExpression) -> None:
        """Report CUDA's kept branch of a switch whose fallback refuses the other devices: the
        devices listed are the ones the code works on, and whether the target is one is for a
        person to say (BACK002)."""
        self._regions.append(
            (
                region,
                test,
                f"`if {self.ctx.code(test)}` is CUDA's branch of a switch over {region.why} whose fallback refuses "
                f"the other devices: kept as it is; add a branch for {self.ctx.target.display} only where this code "
                "works there",
                None,
            )
        )

    def _runs_cuda_only(self, body: cst.BaseSuite) -> str | None:
        """Why a branch body reaches CUDA-only code (not only asks about the device), once per body."""
        if id(body) not in self._reaches:
            facts = cuda_only_facts(self.ctx)
            why = facts.region_reason(body) if facts.active else None
            self._reaches[id(body)] = why if why and not facts.asks_only(why) else None
        return self._reaches[id(body)]

    def _keep_branch(self, branch: cst.If, test: _Test, devices: Sequence[str | None]) -> CudaOnlyCode:
        """CUDA's branch stays as it is: its test (every node of it) and its body."""
        self.ctx.keep_cuda.update(id(n) for n in _nodes(branch.test))
        region = CudaOnlyCode(
            branch.test,
            f"`if {self.ctx.code(branch.test)}`",
            ", ".join(d for d in devices if d),
            code="BACK002",
            quiet=True,
        )
        for stmt in branch.body.body:
            self.ctx.cuda_only_code[id(stmt)] = region
        return region

    def _branch_for_target(self, branch: cst.If, test: _Test, region: CudaOnlyCode, form: str) -> cst.If | None:
        """The target's branch: CUDA's test asking for the target, CUDA's body ported on its
        own. None (and a manual finding) where that port is not a backend for the target."""
        t = self.ctx.target
        if test.kind == "backend":
            # `if CUDAAccelerator.is_available(): return "cuda"`: the rung names CUDA's class of
            # the project's family; the target's rung asks its own class, once there is one
            own = next((c for c, d in (self.library() or ("", {}))[1].items() if d == t.device_type), None)
            then = (
                f"ask `{own}.is_available()` in a rung of its own"
                if own
                else f"write {t.display}'s class (`porter backends . --target {t.name} --scaffold DIR`), then ask "
                "it in a rung of its own"
            )
            message = (
                f"`if {self.ctx.code(branch.test)}` is CUDA's rung of a switch over {region.why}, the project's "
                f"classes per device: kept as it is; {then}"
            )
            self._regions.append((region, branch.test, message, None))
            return None
        table = self._device_enum()
        if table is not None:
            message = (
                f"`if {self.ctx.code(branch.test)}` is CUDA's branch of a switch over {region.why}: kept as it is; "
                f"{t.display} has no branch: the device types it answers are looked up in `{table[0]}`, this module's "
                f"enum of devices, which has no member for {t.display}: add `{t.device_type.upper()}` to it beside "
                f"`{table[1]}`, then a branch for {t.display} "
                f"{'after the last device branch' if form == 'elif' else 'after the last of these checks'}"
            )
            self._regions.append((region, branch.test, message, None))
            return None
        folder = self._no_target_folder(region.why.split(", ")) if test.kind == "available" else None
        if folder is not None:
            # bitsandbytes' paged-function sync (`torch.cuda.synchronize()`, `torch.xpu...`) in a
            # project with a backend folder per device and none for the target: a ladder over
            # the devices available picks the project's backend for the host, and the target has
            # none (a switch over a tensor's device type still gets its rung: whatever tensor
            # the caller hands in reaches it)
            message = (
                f"`if {self.ctx.code(branch.test)}` is CUDA's branch of a switch over {region.why}: kept as it is; "
                f"{t.display} has no branch: the project has a backend folder per device (`{folder}` beside "
                f"{', '.join(f'`{o}/`' for o in dict(self._backend_dirs)[folder])}) and none for {t.display}; write "
                "its backend first, then a branch here"
            )
            self._regions.append((region, branch.test, message, None))
            return None
        body, why_not, applied = self._ported_body(branch.body)
        if body is not None and _does_nothing(body):
            # CUDA's branch, ported, is empty (`torch.cuda.empty_cache()` on xla): the target
            # needs no branch there, and an emptied one is no branch a reviewer merges
            message = (
                f"`if {self.ctx.code(branch.test)}` is CUDA's branch of a switch over {region.why}: kept as it is; "
                f"{t.display} needs no branch there (CUDA's, ported, does nothing: "
                f"{', '.join(dict.fromkeys(applied))})"
            )
            region.code = "BACK005"
            region.left.clear()
            self._regions.append((region, branch.test, message, None))
            return None
        where = (
            "after the last device branch, before the fallback"
            if form == "elif"
            else "after the last of these checks, before the fallback"
        )
        head = f"`if {self.ctx.code(branch.test)}` is CUDA's branch of a switch over {region.why}: kept as it is; "
        named = (
            next(
                (
                    n.value
                    for n in _nodes(body)
                    if isinstance(n, cst.SimpleString) and re.search(r"(?i)cuda|nvidia", n.value)
                ),
                None,
            )
            if body is not None
            else None
        )
        legacy = cuda_autocast_call(self.ctx, body) if body is not None and named is None else None
        if legacy is not None:
            # `dtype = torch.get_autocast_gpu_dtype()` (mmengine's amp.py): CUDA's autocast dtype,
            # which the copy would hand the target's autocast
            body, why_not = None, f"CUDA's, ported, still calls `{legacy}`, CUDA's autocast state"
        if named is not None:
            # `elif torch.cuda.is_available(): BNB_BACKEND = "CUDA"`: a copy would give the target
            # CUDA's name (bitsandbytes would load its CUDA library there)
            body, why_not = None, f"CUDA's, ported, still names CUDA (`{named}`): the target's needs its own value"
        if body is None:
            message = head + f"{t.display} has no branch: write one {where} ({why_not})"
            self._regions.append((region, branch.test, message, None))
            return None
        if (
            test.kind not in ("string", "attribute")
            and self._own_helper(test) is None
            and self.ctx.would_make_required("torch")
        ):
            # the target's test is torch's (`torch.accelerator…`), in a module that never imports torch
            message = head + (
                f"{t.display} has no branch: write one {where}, testing for {t.display} the way this module tests "
                "for the other devices (it never imports torch: a module-level `import torch` would make torch "
                "required to import the package)"
            )
            self._regions.append((region, branch.test, message, None))
            return None
        new = cst.If(test=self._target_test(branch.test, test), body=body)
        codes = ", ".join(dict.fromkeys(applied)) or "nothing to change"
        message = head + f"a branch for {t.display} is added {where}: CUDA's, ported ({codes})"
        region.left.clear()
        self._regions.append((region, branch.test, message, new))
        # the rung is the fix of the finding reported at the end (leave_Module): no rung where
        # that rule is not reported (`--select BACK005` alone)
        return new if self.ctx.reports(region.code) else None

    def _ported_body(self, body: cst.BaseSuite) -> tuple[cst.BaseSuite | None, str, list[str]]:
        """(CUDA's branch body ported for the target, or None; why not; the codes applied)."""
        if self.ctx.port_snippet is None:
            return None, "porter cannot port it here", []
        named = _cuda_identifiers(body, self.ctx.imports.names)
        if named:
            return None, f"it uses `{named[0]}`, which has no counterpart for the target", []
        cuda_only = self._runs_cuda_only(body)
        if cuda_only:
            return None, f"it {cuda_only}", []
        imports = [
            s
            for s in self.ctx.module.body
            if isinstance(s, cst.SimpleStatementLine)
            and all(isinstance(x, (cst.Import, cst.ImportFrom)) for x in s.body)
        ]
        block = (
            body
            if isinstance(body, cst.IndentedBlock)
            else cst.IndentedBlock(
                body=[cst.SimpleStatementLine(body=[s for s in body.body if isinstance(s, cst.BaseSmallStatement)])]
            )
        )
        snippet = cst.Module(
            body=[*imports, cst.FunctionDef(name=cst.Name(BRANCH), params=cst.Parameters(), body=block)]
        )
        code = snippet.code.encode()
        new, findings = self.ctx.port_snippet(code)
        if new is None:
            return None, "its port does not parse", []
        open_work = [f for f in findings if not f.applied and f.severity in (Severity.WARNING, Severity.ERROR)]
        if open_work:
            return None, f"its port leaves {open_work[0].code} ({open_work[0].message[:120]})", []
        ported = cst.parse_module(new)
        fn = next((s for s in ported.body if isinstance(s, cst.FunctionDef) and s.name.value == BRANCH), None)
        if fn is None or not isinstance(fn.body, cst.IndentedBlock):
            return None, "its port does not parse", []
        left = _cuda_identifiers(fn.body, self.ctx.imports.names)
        if left:
            return None, f"its port still uses `{left[0]}`", []
        still = next(
            (
                n
                for n in _nodes(fn.body)
                if isinstance(n, cst.Attribute) and n.attr.value == "cuda" and (dotted(n) or "").count(".") == 1
            ),
            None,
        )
        if still is not None:  # `torch.cuda.*` the port on its own did not reach (a name it could not resolve)
            return None, f"its port still calls `{dotted(still)}`", []
        optional = self._optional_import(imports, ported)
        if optional:
            return (
                None,
                (
                    f"its port needs `import {optional}`, which this module of a package never imports: "
                    f"a module-level import would make {optional} required to import the package"
                ),
                [],
            )
        self._add_imports(imports, ported)
        return fn.body.with_changes(indent=None), "", [f.code for f in findings if f.applied]

    def _optional_import(self, had: list[cst.SimpleStatementLine], ported: cst.Module) -> str | None:
        """`torch`, where the branch's port imports it and this module never does (not even
        lazily), where the module belongs to a package (relative imports): transformers'
        `utils/__init__.py` tests devices through helpers and imports no torch at all, and
        `import transformers` must work without it. An application keeps the import."""
        before = {cst.Module(body=[s]).code.strip() for s in had}
        added = {
            (dotted(alias.name) or "").split(".")[0]
            for stmt in ported.body
            if isinstance(stmt, cst.SimpleStatementLine) and cst.Module(body=[stmt]).code.strip() not in before
            for small in stmt.body
            if isinstance(small, cst.Import)
            for alias in small.names
        }
        # the target's own packages (torch_xla…) are what a port to it runs on: imported as before
        return "torch" if "torch" in added and self.ctx.would_make_required("torch") else None

    def _add_imports(self, had: list[cst.SimpleStatementLine], ported: cst.Module) -> None:
        """The imports the branch's port added, added to the file."""
        before = {cst.Module(body=[s]).code.strip() for s in had}
        for stmt in ported.body:
            if not isinstance(stmt, cst.SimpleStatementLine) or cst.Module(body=[stmt]).code.strip() in before:
                continue
            for small in stmt.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        asname = (
                            alias.asname.name.value
                            if alias.asname and isinstance(alias.asname.name, cst.Name)
                            else None
                        )
                        # in the function, where the module's style is to import there
                        self.ctx.import_where_used(dotted(alias.name) or "", asname)
                elif (
                    isinstance(small, cst.ImportFrom)
                    and small.module is not None
                    and not isinstance(small.names, cst.ImportStar)
                ):
                    for alias in small.names:
                        asname = (
                            alias.asname.name.value
                            if alias.asname and isinstance(alias.asname.name, cst.Name)
                            else None
                        )
                        self.ctx.add_import(dotted(small.module) or "", dotted(alias.name), asname)

    def leave_If(self, original: cst.If, updated: cst.If):
        plan = self._chains.pop(id(original), None)
        if plan is None:
            return updated
        last, new = plan

        def insert(node: cst.If, depth: int) -> cst.If:
            if depth == last:
                return node.with_changes(orelse=new.with_changes(orelse=node.orelse))
            assert isinstance(node.orelse, cst.If)
            return node.with_changes(orelse=insert(node.orelse, depth + 1))

        return insert(updated, 0)

    # -- ladders: `if <cuda>: return ...` then `if <xpu>: return ...` ----------------------

    def _ladder(self, body: list[cst.BaseStatement]) -> tuple[int, cst.If] | None:
        # rungs that leave (a switch), or, in a library, tests of each device's availability that
        # each do their device's part (`if torch.cuda.is_available(): torch.cuda.empty_cache()`
        # then `if is_xpu_available(): torch.xpu.empty_cache()`)
        rungs = [
            (i, s)
            for i, s in enumerate(body)
            if isinstance(s, cst.If) and s.orelse is None and (_exits(s.body) or self._available_rung(s))
        ]
        # the longest run of consecutive rungs
        runs: list[list[tuple[int, cst.If]]] = []
        for i, s in rungs:
            if runs and runs[-1][-1][0] == i - 1:
                runs[-1].append((i, s))
            else:
                runs.append([(i, s)])
        for run in runs:
            if len(run) < 2:
                continue
            ifs = [s for _, s in run]
            tests = [self._test(s.test) for s in ifs]
            plan = self._switch(ifs, tests)
            if plan is None:
                continue
            cuda_at, last, region = plan
            subject = _subject(ifs[cuda_at].test, tests[cuda_at])
            if subject is not None and _handles_any_device(body[run[-1][0] + 1 :], subject, self.ctx.code):
                # `if device == "cuda": return ...` then a probe on `device` itself: the code
                # after the checks runs on any device, the target's included; no rung is needed
                t = self.ctx.target
                region.code = "BACK005"
                region.left.clear()
                message = (
                    f"`if {self.ctx.code(ifs[cuda_at].test)}` is CUDA's branch of a switch over {region.why}: kept as "
                    f"it is; {t.display} needs no branch there (the code after these checks works on any `{subject}`)"
                )
                self._regions.append((region, ifs[cuda_at].test, message, None))
                return None
            new = self._branch_for_target(ifs[cuda_at], tests[cuda_at], region, "if")  # type: ignore[arg-type]
            if new is None:
                return None
            # spaced as the rung before it (its blank lines, not its comments)
            new = new.with_changes(leading_lines=[e for e in run[-1][1].leading_lines if e.comment is None])
            k = sum(1 for s in body[: run[last][0] + 1] if isinstance(s, cst.If))  # the k-th If of the block
            return k, new
        return None

    def _available_rung(self, node: cst.If) -> bool:
        if self.library() is None or not isinstance(node.test, (cst.Call, cst.Name)):
            return False
        return self._available_device(node.test) is not None

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        plan = self._ladder(list(node.body))
        if plan is not None:
            self._ladders[id(node)] = plan

    def visit_Module(self, node: cst.Module) -> None:
        self._import_gates(node)
        if self.ctx.path.replace("\\", "/").rsplit("/", 1)[-1] == "setup.py" and b"ext_modules" in self.ctx.source:
            # the build script of the project's compiled extensions: its `torch.cuda` questions
            # are about the build host's CUDA (which archs to compile, whether bf16 kernels build)
            note = (
                "the build script of the project's compiled extensions (`ext_modules`) is left as it is: its CUDA "
                "questions are about the build host, which compiles CUDA kernels"
            )
            self._keep_module(
                node,
                CudaOnlyCode(
                    node,
                    "the build script",
                    "it builds the project's compiled extensions (`ext_modules`)",
                    code="BACK007",
                    note=note,
                ),
                note,
            )
            return
        if b"CUDAExtension" in self.ctx.source and _BUILDS_CUDA.search(self.ctx.source):
            # the project's own build code for its CUDA extensions (DeepSpeed's op_builder,
            # ColossalAI's CUDA extension loader): it imports `CUDAExtension`, and its CUDA
            # questions are about the host that compiles the kernels, as in setup.py
            note = (
                "this module builds the project's CUDA extensions (it imports `CUDAExtension` from "
                "`torch.utils.cpp_extension`): left as it is, since its CUDA questions (is CUDA there, which archs "
                "to compile for) are about the host that compiles CUDA kernels"
            )
            self._keep_module(
                node,
                CudaOnlyCode(
                    node,
                    "the extension build code",
                    "it builds the project's CUDA extensions (`CUDAExtension`)",
                    code="BACK007",
                    note=note,
                ),
                note,
            )
            return
        integration = self._integration(node)
        if integration is not None:
            package, demand = integration
            t = self.ctx.target
            note = (
                f"this module integrates `{package}`, which its own check says needs CUDA (`{demand}`): left as it "
                f"is, since its code runs only where `{package}` runs; {t.display} needs a backend of `{package}` "
                "first, then its own path beside this one"
            )
            why = f"it integrates `{package}`, which its check `{demand}` says needs CUDA"
            self._keep_module(node, CudaOnlyCode(node, "the module", why, code="BACK006", note=note), note)
            return
        module = _module_fact(self.ctx.settings, self.ctx.path)
        if (
            module is not None
            and "family of modules" in module[0]
            and _backend_facts(self.ctx.settings, self.ctx.path, self.ctx.source)
        ):
            # the module defines CUDA's class of a class family: that class is kept (BACK003), and
            # says whether the target's exists
            module = None
        if module is not None:
            # CUDA's module of a per-device family of folders (`backends/cuda/ops.py` beside
            # `backends/cpu/`): CUDA's implementation, registered for "cuda"; the target's goes beside it
            why, *others = module
            t = self.ctx.target
            if "family of modules" in why:  # `platforms/cuda.py` beside `xpu.py`, `cpu.py`
                message = (
                    f"this module is a backend for CUDA's device, {why}: kept as it is; {t.display}'s is a module of "
                    f"its own beside it (`{t.device_type}.py`), modelled on the {', '.join(f'`{o}`' for o in others)} "
                    "ones"
                )
            else:
                message = (
                    f"this module is a backend for CUDA's device, {why}: kept as it is; {t.display}'s is a "
                    f"`{t.device_type}/` folder of its own beside it, modelled on the "
                    f"{', '.join(f'`{o}/`' for o in others)} ones"
                )
            self._keep_module(node, CudaOnlyCode(node, "the module", why, code="BACK003"), message)
            return
        plan = self._ladder(list(node.body))
        if plan is not None:
            self._ladders[id(node)] = plan

    def _integration(self, node: cst.Module) -> tuple[str, str] | None:
        """(package, its check as shown) when the module integrates a third-party package that its own
        check says needs CUDA: accelerate's Megatron-LM module imports `megatron` and asserts
        `torch.cuda.is_available(), "Megatron requires CUDA."`. Its classes and helpers are that
        package's plumbing (its loss tensors, `send_to_device(..., torch.cuda.current_device())`),
        which only ever runs where the package does. The package must be imported by absolute
        name and not be the project's own (a folder of the file's path)."""
        if not self._says_cuda:
            return None
        nodes = code_nodes(node)  # (its readers ask for imports, calls, asserts and `if`s)
        if not _DEMAND.search(self.ctx.source):
            return self._hub_kernel_for_cuda(nodes)
        own = set(self.ctx.path.replace("\\", "/").split("/")[:-1])
        packages = _imported_packages(nodes, own)
        if not packages:
            return None
        found = self._package_demand(nodes, packages)
        if found is not None:
            return found
        return self._hub_kernel_for_cuda(nodes)

    def _package_demand(self, nodes: Sequence[cst.CSTNode], packages: set[str]) -> tuple[str, str] | None:
        """For _integration, the first check of the module that demands CUDA (an assert, or an
        `if` that raises or returns an error where CUDA is absent) with a message that says CUDA
        and names one of `packages`: (that package, the check as shown); None if none."""
        for n in nodes:
            if isinstance(n, cst.Assert) and n.msg is not None and self._cuda_checks(n.test):
                message, shown = self.ctx.code(n.msg), _short(self.ctx.code(n))
            elif isinstance(n, cst.If) and self._without_cuda(n.test) and self._raises_for_cuda(n):
                message, shown = self.ctx.code(n.body), f"if {_short(self.ctx.code(n.test))}: raise ..."
            elif isinstance(n, cst.If) and self._without_cuda(n.test) and _returns_error(n.body):
                # `if not torch.cuda.is_available(): return maybe_import_error("... requires CUDA")`
                message, shown = self.ctx.code(n.body), f"if {_short(self.ctx.code(n.test))}: return <error>"
            else:
                continue
            if not _SAYS_CUDA.search(message):
                continue
            words = {w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]+", message)}
            named = {p for p in packages if p in words or re.sub(r"[-_]", "", p) in words}
            if named:
                return sorted(named)[0], shown
        return None

    def _hub_kernel_for_cuda(self, nodes: Sequence[cst.CSTNode]) -> tuple[str, str] | None:
        """(the kernel load as shown, the check) when the module loads a kernel from a hub by a
        name it is given (`get_kernel(repo_id, ...)`) and refuses every device but CUDA with an
        error that says so (`if q.device.type != "cuda" or <capability>: raise RuntimeError("...
        requires an SM100 / Blackwell CUDA device")`): the kernel it loads is CUDA's, and the
        module its plumbing."""
        if not self.library():
            return None
        load = next(
            (n for n in nodes if isinstance(n, cst.Call) and n.args and _KERNEL_LOADER.search(dotted(n.func) or "")),
            None,
        )
        if load is None:
            return None
        for n in nodes:
            if isinstance(n, cst.If) and _other_devices_refused(n.test) and self._raises_for_cuda(n):
                return _short(self.ctx.code(load)), f"if {_short(self.ctx.code(n.test))}: raise ..."
        return None

    def _keep_module(self, node: cst.Module, region: CudaOnlyCode, message: str) -> None:
        """The whole module stays CUDA's: every statement in `region`, one finding saying why."""
        for stmt in node.body:
            self.ctx.cuda_only_code[id(stmt)] = region
        self._regions.append((region, node, message, None))

    def _insert_rung(self, original, updated):
        plan = self._ladders.pop(id(original), None)
        if plan is None:
            return updated
        k, new = plan
        body = list(updated.body)
        seen = 0
        for i, stmt in enumerate(body):
            if isinstance(stmt, cst.If):
                seen += 1
                if seen == k:
                    body.insert(i + 1, new)
                    return updated.with_changes(body=body)
        return updated

    leave_IndentedBlock = _insert_rung

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        updated = self._insert_rung(original, updated)
        for region, at, message, replacement in self._regions:
            if region.note is not None and not region.left:
                continue  # a build script porter would not have changed anyway
            # a branch copied for the target took CUDA's fixes with it: none are left undone
            left = (
                f" (fixes not applied there: {', '.join(dict.fromkeys(region.left))})"
                if region.left and replacement is None and region.code != "BACK005"
                else ""
            )
            self.ctx.report(
                region.code,
                at,
                message + left,
                replacement=replacement,
                applicability=None if replacement is not None or region.code == "BACK005" else Applicability.MANUAL,
            )
        return updated


def _ported_on(qual: str, target: str, constants: bool = False) -> bool:
    """Whether porter ports the `torch.cuda.*` API `qual` to `target` (its row in
    rules/cuda_api.toml names an action there): one it leaves (manual, unmapped) has no twin.
    `constants`: an answer written as the target's constant (`is_current_stream_capturing()`
    -> `False`) counts as left, as in a library it is (CUDA's answer stays there)."""
    row = lookup(qual[len("torch.cuda.") :])
    if row is None:
        return False
    action = row.actions.get(target, "manual")
    if constants and action.startswith("expr ") and action[5:].strip() in ("True", "False", "None"):
        return False
    return action not in ("manual", "delegate")


_DEFAULT = cst.MaybeSentinel.DEFAULT
_CONDITIONAL = (cst.If, cst.IfExp, cst.Try, cst.BooleanOperation, cst.Lambda, cst.While)


def _unconditional_nodes(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The nodes of `node` outside any `if`, `try`, conditional expression, `and`/`or`,
    `while` or lambda (a `for` loop's body and a comprehension count: they run), less
    whitespace, punctuation and operators (`cstwalk.TRIVIA`; for _kept_streams, which reads
    attributes): the fields that hold only those are not read (`cstwalk.CODE_ORDER`)."""
    out: list[cst.CSTNode] = []
    trivia = cstwalk.TRIVIA
    order = cstwalk.CODE_ORDER
    stack = [node]
    while stack:
        n = stack.pop()
        out.append(n)
        fields = order.get(type(n))
        if fields is None:
            stack.extend([c for c in n.children if type(c) not in trivia and not isinstance(c, _CONDITIONAL)])
            continue
        for name in fields:
            value = getattr(n, name)
            kind = type(value)
            if kind is tuple or kind is list:
                stack.extend([c for c in value if type(c) not in trivia and not isinstance(c, _CONDITIONAL)])
            elif (
                value is not None
                and value is not _DEFAULT
                and kind not in trivia
                and not isinstance(value, _CONDITIONAL)
            ):
                stack.append(value)
    return out


def _other_devices_refused(test: cst.BaseExpression) -> bool:
    """`not IS_NVIDIA or device.type != "cuda"` (fla's `_check_cp_device` before `raise`): a
    test one of whose `or` operands is true on every device but CUDA (`x.type != "cuda"`,
    `not x.is_cuda`); what follows its `raise` runs only on CUDA."""
    for o in _operands_of(test, cst.Or):
        if (
            isinstance(o, cst.Comparison)
            and len(o.comparisons) == 1
            and isinstance(o.comparisons[0].operator, cst.NotEqual)
            and any(
                isinstance(side, cst.SimpleString) and string_value(side) == "cuda"
                for side in (o.left, o.comparisons[0].comparator)
            )
        ):
            return True
        if (
            isinstance(o, cst.UnaryOperation)
            and isinstance(o.operator, cst.Not)
            and isinstance(o.expression, cst.Attribute)
            and o.expression.attr.value == "is_cuda"
        ):
            return True
    return False


def _operands_of(node: cst.BaseExpression, op: type) -> list[cst.BaseExpression]:
    """The operands of a chain of one boolean operator (`a or b or c`)."""
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, op):
        return [*_operands_of(node.left, op), *_operands_of(node.right, op)]
    return [node]


def _catches_import_error(handler: cst.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    names = [handler.type] if not isinstance(handler.type, cst.Tuple) else [e.value for e in handler.type.elements]
    return any(
        (dotted(n) or "").rsplit(".", 1)[-1] in ("ImportError", "ModuleNotFoundError", "Exception", "BaseException")
        for n in names
    )


def _imports_in(body: cst.BaseSuite) -> list[str]:
    out: list[str] = []
    for stmt in body.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import):
                    out.extend(dotted(a.name) or "" for a in small.names)
                elif isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
                    out.append(dotted(small.module) or "")
    return out


def _returns_error(body: cst.BaseSuite) -> bool:
    """The block ends in `return <an error helper>(...)` (`maybe_import_error(msg, raise_error=...)`:
    it raises, or answers that the thing cannot be used)."""
    last = body.body[-1] if body.body else None
    small = last.body[-1] if isinstance(last, cst.SimpleStatementLine) and last.body else None
    return (
        isinstance(small, cst.Return)
        and isinstance(small.value, cst.Call)
        and "error" in (dotted(small.value.func) or "").rpartition(".")[2].lower()
    )


def _is_constant(node: cst.BaseExpression, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def _cuda_only_import(module: str, target: str) -> bool:
    """A CUDA-only package (rules/cuda_only/), or one with CUDA-only parts porter ports
    elsewhere (apex, flash-attn, xformers): absent on the target."""
    known = (*cuda_only_modules(target), *ported_imports())
    return any(module == m or module.startswith(m + ".") for m in known)


def _devices_in_test(node: cst.BaseExpression) -> bool:
    return any(isinstance(n, cst.SimpleString) and device_of(string_value(n)) for n in _nodes(node))


def _by_name(node: cst.Comparison) -> bool:
    """`type(x).__name__ == ...`, `x.__class__.__name__ in ...`: a class told apart by its name."""
    sides = [node.left, *(c.comparator for c in node.comparisons)]
    return any(isinstance(s, cst.Attribute) and s.attr.value == "__name__" for s in sides) and all(
        isinstance(c.operator, (cst.Equal, cst.In)) for c in node.comparisons
    )


def _class_names(node: cst.Comparison) -> list[str]:
    out: list[str] = []
    for side in [node.left, *(c.comparator for c in node.comparisons)]:
        values = [e.value for e in side.elements] if isinstance(side, (cst.List, cst.Tuple, cst.Set)) else [side]
        out.extend(v for v in map(string_value, values) if v and _CLASS_NAME.match(v))
    return out


def _closer(node: cst.CSTNode) -> tuple[str, cst.RightSquareBracket | cst.RightCurlyBrace] | None:
    """The closing bracket of a list or set, by its field name (a tuple's parentheses are not its own)."""
    if isinstance(node, cst.List):
        return "rbracket", node.rbracket
    if isinstance(node, cst.Set):
        return "rbrace", node.rbrace
    return None


def _only_says(body: cst.BaseSuite, words: re.Pattern[str]) -> bool:
    """Whether the block only calls something (a log, a warning, a print) with a message that
    `words` finds."""
    if not body.body:
        return False
    for stmt in body.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            return False
        for small in stmt.body:
            if not isinstance(small, cst.Expr) or not isinstance(small.value, cst.Call):
                return False
            texts = [
                string_value(a.value) or ""
                for a in small.value.args
                if isinstance(a.value, (cst.SimpleString, cst.ConcatenatedString))
            ]
            if not any(words.search(t) for t in texts):
                return False
    return True


def _only_writes_text(body: cst.BaseSuite, words: re.Pattern[str]) -> bool:
    """Whether the block only stores string constants (`fields[name] = "No CUDA"`), directly or
    in a `for` loop or an `if` without `else` of its own, and one of them says `words`."""
    said = False

    def writes(suite: cst.BaseSuite) -> bool:
        nonlocal said
        if not suite.body:
            return False
        for stmt in suite.body:
            if isinstance(stmt, (cst.For, cst.If)) and stmt.orelse is None:
                if not writes(stmt.body):
                    return False
            elif isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if not isinstance(small, cst.Assign) or not isinstance(
                        small.value, (cst.SimpleString, cst.ConcatenatedString)
                    ):
                        return False
                    said = said or words.search(string_value(small.value) or "") is not None
            else:
                return False
        return True

    return writes(body) and said


def _cuda_backend_imports(body: cst.BaseSuite) -> str | None:
    """The first module of a block that only imports modules of a `cuda` package
    (`from .backends.cuda import ops`, `from executorch.backends.cuda.cuda_backend import
    CudaBackend`): CUDA's backend, which a test in front of it keeps to CUDA."""
    modules: list[str] = []
    for stmt in body.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            return None
        for small in stmt.body:
            if isinstance(small, cst.ImportFrom) and small.module is not None:
                modules.append("." * len(small.relative) + _dotted(small.module))
            elif isinstance(small, cst.Import):
                modules.extend(_dotted(a.name) for a in small.names)
            else:
                return None
    if not modules or not all("cuda" in m.lstrip(".").split(".") for m in modules):
        return None
    return modules[0]


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return node.value if isinstance(node, cst.Name) else ""


def _and_operands(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.And):
        return [*_and_operands(node.left), *_and_operands(node.right)]
    return [node]


def _or_operands(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.Or) and not node.lpar:
        return [*_or_operands(node.left), *_or_operands(node.right)]
    return [node]


def _asks_hip(node: cst.BaseExpression) -> bool:
    """Whether `node` reads `torch.version.hip` (`torch.version.hip is not None`)."""
    for n in _nodes(node):
        if (
            isinstance(n, cst.Attribute)
            and n.attr.value == "hip"
            and isinstance(n.value, cst.Attribute)
            and n.value.attr.value == "version"
        ):
            return True
    return False


def _accessor_facts(settings) -> dict[str, str]:
    """Members of CUDA's backend class that answer "cuda", with why (BackendKind.ACCESSOR)."""
    return {f[1]: f[3][0] for f in (getattr(settings, "flow", None) or ()) if f[2] == BackendKind.ACCESSOR}


def _device_values(nodes: Sequence[cst.CSTNode]) -> dict[str, str]:
    """The names set to a value's device type (`cur_dev = p.data.device.type`): `cur_dev` ->
    `p.data` (for _set_for_kept_test)."""
    device_of_value: dict[str, str] = {}
    for n in nodes:
        if isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name):
            read = _device_read(n.value)
            if read is not None:
                device_of_value[n.targets[0].target.value] = read
    return device_of_value


def _assigned_fills(
    small: cst.BaseSmallStatement,
    cuda_test: cst.BaseExpression | None,
    fills: dict[str, list[cst.BaseExpression | None]],
) -> None:
    """For _fills_small, the `self.<field>` an assignment fills (`self.x = ...` with a value
    that is not an empty container, `self.x += ...` under `cuda_test`, `self.x[k] = ...`)."""
    if not isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
        return
    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
    for target in targets:
        if (field := _self_field(target)) is not None:
            empty = (
                not isinstance(small, cst.AugAssign) and small.value is not None and _is_empty_container(small.value)
            )
            if not empty:
                fills.setdefault(field, []).append(cuda_test if isinstance(small, cst.AugAssign) else None)
        elif isinstance(target, cst.Subscript) and (field := _self_field(target.value)) is not None:
            fills.setdefault(field, []).append(cuda_test)


def _called_fills(
    small: cst.BaseSmallStatement,
    cuda_test: cst.BaseExpression | None,
    fills: dict[str, list[cst.BaseExpression | None]],
) -> None:
    """For _fills_small, the `self.<field>` the calls in a statement fill: a filling method of
    it (`self.x.append(...)`, under `cuda_test`), or handed to other code (which may fill it)."""
    for n in code_nodes(small):
        if not isinstance(n, cst.Call):
            continue
        func = n.func
        if isinstance(func, cst.Attribute) and func.attr.value in _FILLS and (field := _self_field(func.value)):
            fills.setdefault(field, []).append(cuda_test)
        if isinstance(func, cst.Name) and func.value in _READS:
            continue
        for arg in n.args:
            if (field := _self_field(arg.value)) is not None:
                fills.setdefault(field, []).append(None)  # handed to other code: it may fill it


def _imported_packages(nodes: Sequence[cst.CSTNode], own: set[str]) -> set[str]:
    """For _integration, the top-level packages the module imports by absolute name (not torch,
    not one of the project's own folders `own`) and the kernel packages it loads by name."""
    packages: set[str] = set()
    for n in nodes:
        names: list[cst.CSTNode] = []
        if isinstance(n, cst.Import):
            names = [a.name for a in n.names]
        elif isinstance(n, cst.ImportFrom) and not n.relative and n.module is not None:
            names = [n.module]
        for name in names:
            while isinstance(name, cst.Attribute):
                name = name.value
            if isinstance(name, cst.Name) and name.value not in own and name.value != "torch":
                packages.add(name.value.lower())
        if isinstance(n, cst.Call) and n.args and _KERNEL_LOADER.search(dotted(n.func) or ""):
            # `lazy_load_kernel("deep-gemm")`, `get_kernel("kernels-community/deep-gemm")`: a
            # kernel package loaded by name (from a kernel hub) rather than imported
            loaded = string_value(n.args[0].value)
            if loaded:
                packages.add(loaded.rsplit("/", 1)[-1].lower())
    return packages


def _string_test(test: cst.Comparison) -> _Test | None:
    """`x == "cuda"`, `"cuda" in x`, `x is "cuda"`: a comparison with a device string (either
    side), or None."""
    op = test.comparisons[0].operator
    if not isinstance(op, (cst.Equal, cst.In, cst.Is)):
        return None
    for side in (test.left, test.comparisons[0].comparator):
        device = device_of(string_value(side))
        if device is not None:
            return _Test(device, side, "string")
    return None


def _short(code: str) -> str:
    code = " ".join(code.split())
    return code if len(code) <= 80 else code[:77] + "..."


def _devices_in(node: cst.BaseExpression) -> set[str]:
    """The device types a string, or a list of strings, names."""
    if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
        return {d for e in node.elements if (d := device_of(string_value(e.value)))}
    d = device_of(string_value(node))
    return {d} if d else set()


def _does_nothing(body: cst.BaseSuite) -> bool:
    return all(
        isinstance(st, cst.SimpleStatementLine) and all(isinstance(x, cst.Pass) for x in st.body) for st in body.body
    )


def _module_fact(settings, path: str) -> tuple[str, ...] | None:
    """(why, sibling folder, ...) when the file is CUDA's module of a per-device family of
    folders (porter.analysis.device_backends.folder_families), from the project analysis."""
    return next((f[3] for f in getattr(settings, "flow", None) or () if f[2] == BackendKind.MODULE), None)


def _backend_facts(settings, path: str = "", source: bytes = b"") -> dict[str, tuple[str, ...]]:
    """CUDA backend class -> (why, "device=Class@path" per sibling), from the project analysis;
    from the file alone when it is ported on its own (no project facts: `settings.flow` None)."""
    flow = getattr(settings, "flow", None)
    if flow is None:
        return {f[1]: f[3] for f in cuda_backend_facts([(path, source)]).get(path, ()) if f[2] == BackendKind.BACKEND}
    return {f[1]: f[3] for f in flow if f[2] == BackendKind.BACKEND}


def _device_read(node: cst.BaseExpression) -> str | None:
    """`p.data` of `p.data.device.type` (or `p.data.device`): the value whose device is read."""
    if isinstance(node, cst.Attribute) and node.attr.value == "type":
        node = node.value
    if isinstance(node, cst.Attribute) and node.attr.value == "device":
        return dotted(node.value)
    return None


def _self_field(node: cst.BaseExpression) -> str | None:
    """`_gpu_devices` of `self._gpu_devices` (and of `self._gpu_devices.items()`, `sorted(self._gpu_devices)`)."""
    if isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute):
        if node.func.attr.value in ("items", "keys", "values"):
            node = node.func.value
    elif isinstance(node, cst.Call) and len(node.args) == 1 and isinstance(node.func, cst.Name):
        if node.func.value in _READS:
            node = node.args[0].value
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return node.attr.value
    return None


def _is_empty_container(node: cst.BaseExpression) -> bool:
    """`set()`, `[]`, `{}`, `dict()`: a field that starts empty."""
    if isinstance(node, (cst.List, cst.Set, cst.Tuple)) and not node.elements:
        return True
    if isinstance(node, cst.Dict) and not node.elements:
        return True
    return isinstance(node, cst.Call) and not node.args and (dotted(node.func) or "").rpartition(".")[2] in _EMPTY


def _blocks(stmt: cst.CSTNode) -> list[Sequence[cst.CSTNode]]:
    """The statement lists of a compound statement (`for`, `while`, `with`, `try`: bodies,
    handlers, `else` and `finally`), each of which runs under what the statement runs under."""
    out: list[Sequence[cst.CSTNode]] = []
    for name in ("body", "orelse", "finalbody"):
        part = getattr(stmt, name, None)
        if isinstance(part, cst.IndentedBlock):
            out.append(part.body)
        elif isinstance(part, (cst.Else, cst.Finally)) and isinstance(part.body, cst.IndentedBlock):
            out.append(part.body.body)
    for handler in (*getattr(stmt, "handlers", ()), *getattr(stmt, "cases", ())):  # `except`, `match`'s `case`
        if isinstance(handler.body, cst.IndentedBlock):
            out.append(handler.body.body)
    return out


def _nodes(node: cst.CSTNode) -> list[cst.CSTNode]:
    return list(walk(node))


def _compared(test: cst.BaseExpression) -> str | None:
    """The dotted name a one-comparison test compares with a string (`"cuda" in self.device`: `self.device`)."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    sides = (test.left, test.comparisons[0].comparator)
    if not any(isinstance(side, cst.SimpleString) for side in sides):
        return None
    return next((name for side in sides if (name := dotted(side))), None)


def _assigns_from(body: cst.BaseSuite, key: str) -> bool:
    """Whether a block assigns a value computed from `key` (`x = key.split(":")[0]`), outside a
    formatted string (a message that names the device sends it nowhere)."""
    for node in walk(body):
        if isinstance(node, (cst.Assign, cst.AnnAssign)) and node.value is not None:
            skip = {id(n) for f in walk(node.value) if isinstance(f, cst.FormattedString) for n in walk(f)}
            if any(
                id(n) not in skip and dotted(n) == key
                for n in walk(node.value)
                if isinstance(n, (cst.Name, cst.Attribute))
            ):
                return True
    return False


def _raised(body: cst.CSTNode) -> list[cst.BaseExpression]:
    """The exceptions a block raises (`raise ValueError(f"...")`'s call)."""
    return [n.exc for n in walk(body) if isinstance(n, cst.Raise) and n.exc is not None]


def _negates(nodes: Iterable[cst.CSTNode]) -> bool:
    """Whether a test's nodes negate anything (`not`, `!=`, `not in`)."""
    return any(
        (isinstance(n, cst.UnaryOperation) and isinstance(n.operator, cst.Not))
        or (isinstance(n, cst.ComparisonTarget) and isinstance(n.operator, (cst.NotEqual, cst.NotIn)))
        for n in nodes
    )


def _cuda_identifiers(node: cst.CSTNode, torch_names: dict[str, str]) -> list[str]:
    """The identifiers in `node` that name CUDA or NCCL (`CUDA_Accelerator`, `self.cuda_graph`),
    leaving out torch's own APIs (`torch.cuda.synchronize`: porter ports those by rule)."""
    found: list[str] = []
    for n in _nodes(node):
        if isinstance(n, cst.Attribute):
            head = dotted(n)
            if head is not None and torch_names.get(head.split(".")[0], head.split(".")[0]).split(".")[0] == "torch":
                continue
            if _CUDA_NAMED.search(n.attr.value):
                found.append(n.attr.value)
        elif isinstance(n, cst.Name) and _CUDA_NAMED.search(n.value):
            found.append(n.value)
    # a Name that is the `.attr` of a torch API was passed over with its Attribute: drop it
    torch_attrs = {
        a.attr.value
        for a in _nodes(node)
        if isinstance(a, cst.Attribute)
        and (dotted(a) or "").split(".")[0] in ("torch", *[k for k, v in torch_names.items() if v == "torch"])
    }
    return [f for f in found if f not in torch_attrs]


def _imports_from(module: cst.Module) -> list[cst.ImportFrom]:
    """Every `from ... import ...` of `module`, at any depth."""
    found: list[cst.ImportFrom] = []

    class _Find(cst.CSTVisitor):
        def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
            found.append(node)

    cstwalk.visit(module, _Find())
    return found


def _used_as_device(scope: cst.CSTNode, name: str, qualname) -> bool:
    """Whether the scope gives `name` to torch as a device: `torch.device(name)`, `device=name`,
    `.to(name)` (an f-string or expression around it too), where a name the `[not_device]` keywords
    know (`accelerator`) holds a torch device, not a framework's word (hfleft)."""

    def mentions(expr: cst.CSTNode) -> bool:
        return any(isinstance(n, cst.Name) and n.value == name for n in walk(expr))

    for node in walk(scope):
        if not isinstance(node, cst.Call):
            continue
        func = node.func
        to = isinstance(func, cst.Attribute) and func.attr.value == "to"
        device = to or qualname(func) == "torch.device"
        for arg in node.args:
            keyword = arg.keyword.value if arg.keyword is not None else None
            if (keyword == "device" or (keyword is None and device)) and mentions(arg.value):
                return True
    return False


def _vocabulary_assigned(body: cst.BaseSuite) -> str | None:
    """The name a branch assigns a string to where that name is a keyword whose value is no device
    (`accelerator = "cuda"`: rules/frameworks.toml `[not_device]`), or None."""
    for stmt in body.body if isinstance(body, cst.IndentedBlock) else ():
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Assign) and string_value(small.value) is not None:
                for target in small.targets:
                    if isinstance(target.target, cst.Name) and target.target.value in not_device_keywords():
                        return target.target.value
    return None
