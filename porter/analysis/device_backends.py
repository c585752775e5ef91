"""Per-device backend classes: `CUDA_Accelerator`, `CPU_Accelerator`, `XPU_Accelerator` under one base.

A library with a class per device (DeepSpeed's accelerators, Lightning's, vLLM's platforms)
already has the place the target's backend goes: beside CUDA's, as one more subclass. The
CUDA class is CUDA's backend: ported for the target it would stop being CUDA's and still not
be a backend the library builds for the target. This analysis finds such families across
the project's modules from their class statements alone (a bytes scan, no parse): classes
that share a base and a name, but for one device word (`CUDA`/`Cuda`, `CPU`, `XPU`, `NPU`,
`MPS`, `HPU`, `MLU`, `XLA`, `TPU`, ...), with CUDA's among them and another device's.
The file that defines the CUDA class gets a fact naming it and its siblings; the backends
family keeps the class as it is (BACK003) and `porter backends --scaffold` writes the
target's beside it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import TypeVar

from porter.config.settings import Facts
from porter.core.reading import NextOf
from porter.analysis.kinds import BackendKind
from porter.analysis.program import called_name, module_name

# the prefix of a BackendKind.ABSTRACTION entry that names CUDA's folder of a per-device family of folders
DIRS = "dir:"
_KEY_TEST = re.compile(rb"""^[ \t]*if[ \t]+(\w+)[ \t]*==[ \t]*["']cuda["'][ \t]*:""", re.MULTILINE)
_DEF_LINE = re.compile(rb"^[ \t]*(?:async[ \t]+)?def[ \t].*$", re.MULTILINE)
# a `def`'s parameters (to their first `)`), a name among them, a bare name in a call's arguments
_SIGNATURE = re.compile(rb"def[ \t]+\w+[ \t]*\([^)]*")
_PARAM = re.compile(rb"[(,][ \t\n]*\**([A-Za-z_]\w*)")
_BARE_ARG = re.compile(rb"[(,][ \t]*([A-Za-z_]\w*)[ \t]*(?=[,)])")
# device-type strings of accelerators an application does not name (not the CPU, MPS or porter's targets)
_ACCELERATOR_STRING = re.compile(rb"""["'](xpu|npu|hpu|mlu|musa|sdaa|gcu|mtia|maia|ipu|hip)[:"']""")
_ACCELERATOR_LINE = re.compile(rb"""^.*["'](?:xpu|npu|hpu|mlu|musa|sdaa|gcu|mtia|maia|ipu|hip)[:"'].*$""", re.MULTILINE)
_CUDA_STRING = re.compile(rb"""["']cuda[:"']""")
# `class Name(bases):` / `class Name:`, the bases up to the first `)` (`class_statements`)
_CLASS_HEAD = re.compile(rb"^[ \t]*class[ \t]+(\w+)[ \t]*(\(|:)", re.M)
_COLON = re.compile(rb"[ \t]*:")
_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
# device words in class names, as each library spells them
DEVICES = frozenset(
    {"cuda", "cpu", "xpu", "npu", "mps", "hpu", "mlu", "tpu", "xla", "neuron", "hip", "rocm", "musa", "sdaa", "gpu"}
)
HOSTS = frozenset({"cpu"})
# folders of a per-device family whose code runs on torch's `cuda` device (CUDA's, a GPU vendor's)
VENDORS = frozenset({"nvidia", "amd"})
CUDA_FOLDERS = frozenset({"cuda", "nvidia", "amd", "rocm", "hip"})
# words naming AMD's GPU stack, whose torch device is also `cuda` (ROCm builds of torch)
ROCM_WORDS = frozenset({"amd", "rocm", "hip"})
# bytes a file must show to be read: a class statement naming a device word
_CUDA_LINE = re.compile(rb"^.*cuda.*$", re.MULTILINE)  # (anchored: one try per line, not per byte)
_INDUCTOR_LINE = re.compile(rb"^.*inductor.*$", re.MULTILINE)
_HINT = re.compile(
    rb"class[ \t]+\w*(?:CUDA|Cuda|cuda|CPU|Cpu|XPU|Xpu|NPU|Npu|MPS|Mps|HPU|Hpu|MLU|Mlu|TPU|Tpu|XLA|Xla"
    rb"|NEURON|Neuron|neuron|HIP|Hip|ROCm|ROCM|Rocm|MUSA|Musa|SDAA|Sdaa|GPU|Gpu)"
)


@dataclass(frozen=True)
class BackendClass:
    name: str
    path: str
    device: str
    role: str  # the name without its device word, lower case (`accelerator`)
    bases: tuple[str, ...]  # the last dotted part of each base


def device_word(name: str) -> tuple[str, str] | None:
    """(device, role) for a class name with exactly one device word (`CUDA_Accelerator` ->
    ("cuda", "accelerator")), else None."""
    words = _WORDS.findall(name)
    devices = [w for w in words if w.lower() in DEVICES]
    if len(devices) != 1 or len(words) < 2:
        return None
    role = "_".join(w.lower() for w in words if w is not devices[0])
    return devices[0].lower(), role


def class_statements(source: bytes) -> Iterator[tuple[bytes, bytes, bytes | None]]:
    r"""(the statement's text up to its colon, the name, the bases or None) of each line-opening
    `class Name(bases):` or `class Name:`, as `^[ \t]*class[ \t]+(\w+)[ \t]*(?:\(([^)]*)\))?[ \t]*:`
    finds them, in time linear in the file (`NextOf`: one search for the `)`s)."""
    close = NextOf(source, b")")
    taken = 0  # where the last statement ended: statements do not overlap (as finditer's matches)
    read: tuple[int, re.Match[bytes] | None] = (-2, None)  # a `)` and the colon after it, read once:
    for m in _CLASS_HEAD.finditer(source):  # the heads whose brackets never close share the next `)`
        if m.start() < taken:
            continue
        if m.group(2) == b":":
            yield m.group(0), m.group(1), None
            continue
        end = close.after(m.end())
        if end != read[0]:
            read = (end, _COLON.match(source, end + 1) if end >= 0 else None)
        colon = read[1]
        if colon is not None:
            taken = colon.end()
            yield source[m.start() : colon.end()], m.group(1), source[m.end() : end]


def classes(path: str, source: bytes) -> list[BackendClass]:
    if not _HINT.search(source):
        return []
    if b"\r" in source:  # a lone CR ends a line for Python (old Mac files), not for `re`'s `^`
        source = source.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    out = []
    for _, raw_name, raw_bases in class_statements(source):
        name = raw_name.decode()
        found = device_word(name)
        if found is None:
            continue
        bases = tuple(
            b.strip().rsplit(".", 1)[-1]
            for b in (raw_bases or b"").decode(errors="replace").split(",")
            if b.strip() and "=" not in b
        )
        out.append(BackendClass(name, path, found[0], found[1], bases))
    return out


def families(files: Iterable[tuple[str, bytes]]) -> list[list[BackendClass]]:
    """Groups of per-device classes: same base, same role, same package folder, one device word
    each, CUDA's and another device's among them (`CudaAccelerator`, `CpuAccelerator` under
    `Accelerator`)."""
    groups: dict[tuple[str, str, str], list[BackendClass]] = {}
    for path, source in files:
        folder = path.replace("\\", "/").rpartition("/")[0]  # one package's classes (a vendored copy is another family)
        for c in classes(path, source):
            for base in c.bases or ("",):
                groups.setdefault((base, c.role, folder), []).append(c)
    out = []
    for (base, _, _), members in groups.items():
        devices = {c.device for c in members}
        if "cuda" not in devices and "gpu" in devices:
            # `DeviceGPU` beside `DeviceCPU`, `DeviceMPS` (Composer): the GPU class is CUDA's
            members = [replace(c, device="cuda") if c.device == "gpu" else c for c in members]
            devices = {c.device for c in members}
        if base and "cuda" in devices and len(devices) > 1 and len(devices) == len(members):
            out.append(members)
    return out


def abstraction(files: Iterable[tuple[str, bytes]]) -> tuple[str, ...] | None:
    """(why, "device=Class" for each class of a per-device family ...) when the project has a
    device abstraction of its own, else None. The evidence: a family of classes per device
    (`families`), or a module that names CUDA and two other accelerators as device types
    (`"npu"`, `"xpu"`: a device ladder, a table per device; not the CPU, MPS or porter's
    targets, which an application names too)."""
    files = list(files)
    found = families(files)
    family_folders = folder_families(p for p, _ in files)
    # CUDA's folder of a per-device family of folders (`backends/cuda/` beside `cpu/`, `xpu/`):
    # "dir:FOLDER=sibling,..." after the evidence (the devices the project has a backend for)
    dirs = tuple(
        sorted(
            {f"{DIRS}{folder}={','.join(others)}" for folder, others in family_folders.values() if folder.endswith("/")}
        )
    )
    # the folder of a per-device family of modules (`platforms/` holding `cuda.py`, `rocm.py`,
    # `xpu.py`): where the project's device object lives, as a folder of its classes per device
    module_folders = sorted({f.rpartition("/")[0] for f, _ in family_folders.values() if f.endswith(".py")})
    if found:
        members = sorted((c for f in found for c in f), key=lambda c: (c.device != "cuda", c.name))
        cuda = next(c for c in members if c.device == "cuda")
        named = ", ".join(c.name for c in members[:4]) + (", ..." if len(members) > 4 else "")
        why = f"a class per device under `{next(b for b in cuda.bases)}` ({named})"
        folders = sorted({c.path.replace("\\", "/").rpartition("/")[0] for c in members})
        sources = dict(files)
        answered: dict[str, str] = {}  # what -> Class.member, from the first CUDA class that answers it
        for c in members:
            if c.device == "cuda":
                for what, member in _answers(sources.get(c.path, b""), c.name):
                    answered.setdefault(what, f"{c.name}.{member}")
        return (
            why,
            *(f"{c.device}={c.name}" for c in members),
            *(f"@{f}" for f in [*folders, *(m for m in module_folders if m not in folders)]),
            *(f"!{what}={answer}" for what, answer in sorted(answered.items())),
            *dirs,
        )
    modules = sorted((p, f) for p, f in family_folders.items() if f[0].endswith(".py"))
    if modules:
        first, (_, siblings) = modules[0]
        return (
            f"a module per device ({first} beside {', '.join(siblings)})",
            *(f"@{m}" for m in module_folders),
            *dirs,
        )
    for path, source in files:
        if not _CUDA_STRING.search(source):
            continue
        others = sorted({m.group(1).decode() for m in _ACCELERATOR_STRING.finditer(source)})
        if len(others) >= 2:
            return (f"{path} names CUDA, {', '.join(others)} as device types", *dirs)
    return None


def project_abstraction(settings: object, path: str = "", source: bytes = b"") -> tuple[str, ...] | None:
    """The project's device-abstraction evidence (`abstraction`) from the project analysis
    (`settings.flow`), or from the file alone when it is ported on its own."""
    flow = getattr(settings, "flow", None)
    if flow is None:
        return abstraction([(path, source)])
    return next((f[3] for f in flow if f[2] == BackendKind.ABSTRACTION), None)


def _class_named(source: bytes, name: str) -> ast.ClassDef | None:
    """The class statement `name` in `source` (the first one, in `ast.walk` order), or None
    when there is none or the source does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return next((n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == name), None)


def _answers(source: bytes, name: str) -> list[tuple[str, str]]:
    """What the CUDA class `name` of a per-device family answers for its device, beside its
    name: ("index", method) for a method that turns a device index into CUDA's device string
    (DeepSpeed's `def device_name(self, device_index): return 'cuda:{}'.format(device_index)`),
    ("compile", member) for the member that names CUDA's `torch.compile` backend ("inductor":
    a method returning it, or the attribute set to it). Each class of the family answers these
    for its own device, so code of the project takes them from there, not from a literal."""
    if b"cuda:" not in source and b"inductor" not in source:
        return []
    cls = _class_named(source, name)
    if cls is None:
        return []
    inductor = _inductor_attributes(cls)
    found: dict[str, str] = {}
    for stmt in cls.body:
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        params = {a.arg for a in stmt.args.args[1:]}
        for n in ast.walk(stmt):
            if not isinstance(n, ast.Return):
                continue
            if params and _indexed(n.value, params):
                found.setdefault("index", stmt.name)
            if _names_inductor(n.value, inductor):
                found.setdefault("compile", stmt.name)
    if "compile" not in found and inductor:
        found["compile"] = sorted(inductor)[0]
    return sorted(found.items())


def _indexed(node: ast.AST | None, params: set[str]) -> bool:
    """Whether `node` makes CUDA's device string of an index parameter: `'cuda:{}'.format(i)`
    or `f"cuda:{i}"` for one of `params`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return (
            isinstance(node.func.value, ast.Constant)
            and node.func.value.value == "cuda:{}"
            and len(node.args) == 1
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id in params
        )
    return (
        isinstance(node, ast.JoinedStr)
        and len(node.values) == 2
        and isinstance(node.values[0], ast.Constant)
        and node.values[0].value == "cuda:"
        and isinstance(node.values[1], ast.FormattedValue)
        and isinstance(node.values[1].value, ast.Name)
        and node.values[1].value.id in params
    )


def _inductor_attributes(cls: ast.ClassDef) -> set[str]:
    """The names the class sets to "inductor" (`self._compile_backend = "inductor"`)."""
    inductor: set[str] = set()
    for n in ast.walk(cls):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and n.value.value == "inductor":
            inductor.update(
                t.attr if isinstance(t, ast.Attribute) else t.id
                for t in n.targets
                if isinstance(t, (ast.Attribute, ast.Name))
            )
    return inductor


def _names_inductor(v: ast.AST | None, inductor: set[str]) -> bool:
    """Whether a returned value is "inductor", or `self.<an attribute set to it>`."""
    return (isinstance(v, ast.Constant) and v.value == "inductor") or (
        isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name) and v.value.id == "self" and v.attr in inductor
    )


def answers(evidence: tuple[str, ...] | None, what: str) -> str | None:
    """`Class.member` that the project's device abstraction (`abstraction`'s evidence) gives
    for `what` ("index", "compile"; see `_answers`), else None."""
    prefix = f"!{what}="
    return next((e[len(prefix) :] for e in evidence or () if e.startswith(prefix)), None)


def _accessors(source: bytes, name: str) -> set[str]:
    """The members of class `name` that answer "cuda": methods that return a "cuda..." string,
    attributes set to one (`_name = 'cuda'`, `self._name = 'cuda'`)."""
    cls = _class_named(source, name)
    if cls is None:
        return set()
    found: set[str] = set()
    for stmt in cls.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.update(_method_accessors(stmt))
        elif isinstance(stmt, ast.Assign) and _cuda_string(stmt.value):
            found.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
    return found


def _method_accessors(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The method's name when it returns a "cuda..." string, and the `self.` attributes it sets
    to one."""
    found: list[str] = []
    if any(isinstance(n, ast.Return) and _cuda_string(n.value) for n in ast.walk(fn)):
        found.append(fn.name)
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign) and _cuda_string(n.value):
            found.extend(
                t.attr
                for t in n.targets
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
            )
    return found


def _cuda_string(node: ast.AST | None) -> bool:
    """Whether `node` is a "cuda..." string: a constant, an f-string or a `.format` starting so."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        node = node.func.value  # 'cuda:{}'.format(i)
    if isinstance(node, ast.JoinedStr) and node.values:
        node = node.values[0]
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.split(":")[0] == "cuda"


def folder_families(paths: Iterable[str]) -> dict[str, tuple[str, tuple[str, ...]]]:
    """path -> (CUDA's folder, the sibling folders named for other devices) for each module
    under a folder named `cuda` whose parent also holds folders named for other devices
    (bitsandbytes' `backends/cuda/` beside `backends/cpu/`, `backends/xpu/`, `backends/hpu/`):
    the project's implementation per device, CUDA's among them. A folder per GPU vendor counts
    too (vLLM's `models/kimi_k3/nvidia/` beside `amd/` and `common/`): NVIDIA's and AMD's
    (ROCm's, which runs on torch's `cuda` device) both run CUDA's device only."""
    split = [(p, p.replace("\\", "/").removeprefix("./").split("/")) for p in paths]
    children: dict[tuple[str, ...], set[str]] = {}
    for _, parts in split:
        for i in range(len(parts) - 1):
            children.setdefault(tuple(parts[:i]), set()).add(parts[i])
    out: dict[str, tuple[str, tuple[str, ...]]] = {}
    stems: dict[tuple[str, ...], set[str]] = {}  # folder -> its modules' names (`cuda`, `xpu`)
    for _, parts in split:
        if parts[-1].endswith(".py"):
            stems.setdefault(tuple(parts[:-1]), set()).add(parts[-1][:-3])
    for path, parts in split:
        family = _module_family(parts, stems, children) or _folder_family(parts, children)
        if family is not None:
            out[path] = family
    return out


def _module_family(
    parts: list[str], stems: dict[tuple[str, ...], set[str]], children: dict[tuple[str, ...], set[str]]
) -> tuple[str, tuple[str, ...]] | None:
    """A module per device (vLLM's `platforms/cuda.py`, `rocm.py` beside `xpu.py`, `cpu.py`,
    `tpu.py`): CUDA's implementation of a per-device family, as a folder is."""
    stem = parts[-1][:-3] if parts[-1].endswith(".py") else ""
    if stem.lower() not in CUDA_FOLDERS:
        return None
    folder = tuple(parts[:-1])
    siblings = stems.get(folder, set()) | children.get(folder, set())
    others = sorted(c for c in siblings if c.lower() in DEVICES | VENDORS and c.lower() not in CUDA_FOLDERS)
    return ("/".join(parts), tuple(others)) if others else None


def _folder_family(parts: list[str], children: dict[tuple[str, ...], set[str]]) -> tuple[str, tuple[str, ...]] | None:
    """The first folder on the path named for CUDA (or a GPU vendor on its device) whose parent
    holds folders named for other devices."""
    for i in range(len(parts) - 1):
        if parts[i].lower() not in CUDA_FOLDERS:
            continue
        others = sorted(
            c
            for c in children.get(tuple(parts[:i]), ())
            if c.lower() in DEVICES | VENDORS and c.lower() != parts[i].lower()
        )
        if others:
            return "/".join(parts[: i + 1]) + "/", tuple(others)
    return None


def _names_in(sources: Iterable[str], module: str) -> set[str]:
    """The file names beside `module` (a path) among `sources`' paths."""
    folder = module.replace("\\", "/").rpartition("/")[0]
    return {
        p.replace("\\", "/").rpartition("/")[2] for p in sources if p.replace("\\", "/").rpartition("/")[0] == folder
    }


_T = TypeVar("_T")

# a path's facts while they are gathered: (None, name, kind, evidence)
_Gathered = dict[str, list[tuple[str | None, str, str, tuple[str, ...]]]]


def cuda_backend_facts(files: Iterable[tuple[str, bytes]]) -> dict[str, Facts]:
    """path -> ((None, CUDA class, BackendKind.BACKEND, (why, sibling, ...)), ...) for each file that defines
    CUDA's class of a per-device family, and ((None, member, ACCESSOR, (why,)), ...) for each
    file that reads a member of it that answers "cuda" and compares with "cuda"."""
    files = list(files)
    out: _Gathered = {}
    sources = dict(files)
    accessors = _class_family_facts(files, sources, out)
    _folder_family_facts(sources, out)
    if accessors:
        _accessor_facts(files, accessors, out)
    evidence = abstraction(files)
    if evidence is not None:
        _abstraction_facts(files, evidence, out)
    discarded = discarded_params(files)
    if discarded:
        calls = {name: re.compile(rb"\b%s\(" % re.escape(name.rpartition(".")[2].encode())) for name in discarded}
        for path, source in files:
            if b"nccl" in source:
                for name, why in discarded.items():
                    if calls[name].search(source):
                        out.setdefault(path, []).append((None, name, BackendKind.DISCARDED, why))
    return {path: tuple(sorted(set(facts))) for path, facts in out.items()}


def _class_family_facts(files: list[tuple[str, bytes]], sources: dict[str, bytes], out: _Gathered) -> dict[str, str]:
    """CUDA's class of each per-device family of classes (BackendKind.BACKEND, in its file); returns its
    members that answer "cuda" (member -> why), for ACCESSOR facts where they are read."""
    accessors: dict[str, str] = {}  # member -> why
    for members in families(files):
        cuda = next(c for c in members if c.device == "cuda")
        others = sorted((c for c in members if c is not cuda), key=lambda c: c.name)
        base = next(b for b in cuda.bases if all(b in c.bases for c in members))
        why = f"one of {len(members)} classes per device under `{base}`"
        siblings = tuple(f"{c.device}={c.name}@{c.path}" for c in others)
        out.setdefault(cuda.path, []).append((None, cuda.name, BackendKind.BACKEND, (why, *siblings)))
        for member in _accessors(sources.get(cuda.path, b""), cuda.name):
            accessors.setdefault(
                member, f"`{cuda.name}.{member}` answers CUDA's own name ({cuda.path}), and each class {why} its own"
            )
    return accessors


# whose code a folder (or module) of a per-device family named for a GPU vendor holds; other
# names of CUDA's (`cuda`) hold CUDA's
_WHOSE = {
    "nvidia": "NVIDIA's",
    "amd": "AMD's (ROCm, on torch's `cuda` device)",
    "rocm": "ROCm's (on torch's `cuda` device)",
    "hip": "ROCm's (on torch's `cuda` device)",
}


def _folder_family_facts(sources: dict[str, bytes], out: _Gathered) -> None:
    """Each module of CUDA's folder (or CUDA's module) of a per-device family (MODULE)."""
    for path, (folder, folders) in folder_families(sources).items():
        module = folder.endswith(".py")
        shown = ", ".join(
            f"`{o}/`" if not module or o + ".py" not in _names_in(sources, folder) else f"`{o}.py`" for o in folders
        )
        whose = _WHOSE.get(folder.rstrip("/").rpartition("/")[2].removesuffix(".py").lower(), "CUDA's")
        if module:
            why = f"`{folder}` is {whose} module of a per-device family of modules (beside {shown})"
        else:
            why = f"a module of `{folder}`, {whose} folder of a per-device family (beside {shown})"
        out.setdefault(path, []).append((None, path, BackendKind.MODULE, (why, *folders)))


def _accessor_facts(files: list[tuple[str, bytes]], accessors: dict[str, str], out: _Gathered) -> None:
    """Each file that reads a member answering "cuda" and names CUDA (ACCESSOR)."""
    probe = re.compile(rb"\.(%s)\b" % b"|".join(re.escape(a.encode()) for a in sorted(accessors)))
    for path, source in files:
        if b"cuda" not in source:
            continue
        for member in sorted({m.group(1).decode() for m in probe.finditer(source)}):
            out.setdefault(path, []).append((None, member, BackendKind.ACCESSOR, (accessors[member],)))


def _abstraction_facts(files: list[tuple[str, bytes]], evidence: tuple[str, ...], out: _Gathered) -> None:
    """The project's device abstraction for every file (ABSTRACTION), and the calls, in files that
    name CUDA, of a function that makes its parameter CUDA's index (CUDA_INDEX) or passes a closed
    device switch's key (SWITCH_KEY)."""
    for path, _ in files:
        out.setdefault(path, []).append((None, "project", BackendKind.ABSTRACTION, evidence))
    _call_facts(files, cuda_index_params(files), BackendKind.CUDA_INDEX, out)
    _call_facts(files, switch_keys(files), BackendKind.SWITCH_KEY, out)


def _call_facts(
    files: list[tuple[str, bytes]], table: Mapping[str, tuple[str, ...]], kind: str, out: _Gathered
) -> None:
    """A fact of `kind` for each function of `table` that a file naming CUDA calls."""
    if not table:
        return
    calls = {name: re.compile(rb"\b%s\(" % re.escape(name.encode())) for name in table}
    for path, source in files:
        if b"cuda" not in source:
            continue
        for name, why in table.items():
            if calls[name].search(source):
                out.setdefault(path, []).append((None, name, kind, why))


def switch_keys(files: Iterable[tuple[str, bytes]]) -> dict[str, tuple[str, str]]:
    """name -> (why, the parameter's position among the call's arguments) for each function
    (or method) whose parameter is the key of a closed `if/elif` over device names that has
    no place for another: its branches test `param == "cuda"` and `param == "cpu"` (or
    another device) and its `else` raises, or who hands a parameter on to such a key
    (`_handing_on`). The names a caller passes there are that function's keys, not devices;
    a name defined twice with different answers is left out."""
    files = list(files)
    found: dict[str, tuple[str, str] | None] = {}
    for path, fn, params, method in _functions(files, _KEY_TEST):
        for stmt in fn.body:
            param = _closed_switch(stmt)
            if param is None or param not in params:
                continue
            position = params.index(param) - (1 if method else 0)
            why = (
                f"`{fn.name}({param})` ({path}:{stmt.lineno}) takes it as the key of a closed switch over "
                "device names whose `else` raises"
            )
            _answer(found, fn.name, (why, str(position)))
    keys = {k: v for k, v in found.items() if v is not None}
    pending = dict(keys)
    while pending:  # the functions that hand their parameter on to a key, then theirs ...
        pending = _handing_on(files, pending, keys)
        keys.update(pending)
    return keys


def _handing_on(
    files: list[tuple[str, bytes]], keys: Mapping[str, tuple[str, str]], known: Mapping[str, tuple[str, str]]
) -> dict[str, tuple[str, str]]:
    """name -> (why, position) for each function not in `known` that passes one of its
    parameters, unchanged, as the key of a call of a function of `keys` (ColossalAI's
    `next_period_non_model_data_usage(device_type)` → `non_model_data_list(device_type)`):
    what its callers pass there is that switch's key too."""
    probe = re.compile(rb"\b(?:%s)\(" % b"|".join(re.escape(k.encode()) for k in sorted(keys)))
    found: dict[str, tuple[str, str] | None] = {}
    for path, fn, params, method in _functions(files, probe):
        if fn.name in known:
            continue
        own = list(_own_nodes(fn))
        stored = {n.id for n in own if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
        for node in own:
            callee = called_name(node) if isinstance(node, ast.Call) else None
            if callee is None or callee not in keys:
                continue
            assert isinstance(node, ast.Call)
            at = int(keys[callee][1])
            args = node.args[: at + 1]
            if len(args) <= at or any(isinstance(a, ast.Starred) for a in args):
                continue
            arg = args[at]
            if not (isinstance(arg, ast.Name) and arg.id in params and arg.id not in stored):
                continue
            position = params.index(arg.id) - (1 if method else 0)
            why = f"`{fn.name}({arg.id})` ({path}:{node.lineno}) hands it on to `{callee}`: " + keys[callee][0]
            _answer(found, fn.name, (why, str(position)))
            break
    return {k: v for k, v in found.items() if v is not None}


def _own_nodes(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.AST]:
    """The nodes of `fn`'s body, not those of the functions, lambdas and classes it defines."""
    todo: list[ast.AST] = list(fn.body)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))


def _functions(
    files: Iterable[tuple[str, bytes]], probe: re.Pattern[bytes]
) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, list[str], bool]]:
    """(path, function, its positional parameters, whether it is a method) for each function of
    the files that `probe` finds in (a cheap test before parsing)."""
    for path, source in files:
        if not probe.search(source):
            continue
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
                yield path, fn, params, bool(params) and params[0] in ("self", "cls")


def _answer(found: dict[str, _T | None], name: str, entry: _T) -> None:
    """Record a function's answer; a name defined twice with different answers has none."""
    if name not in found:
        found[name] = entry
    elif found[name] != entry:
        found[name] = None


# `f"cuda:{index}"`: a CUDA device made from a name (cheap test before parsing)
_INDEX_FORMAT = re.compile(rb"""f["']cuda:\{\w+\}["']""")


def cuda_index_params(files: Iterable[tuple[str, bytes]]) -> dict[str, tuple[str, str, str]]:
    """name -> (why, the parameter's position among the call's arguments, its name) for each
    function whose parameter becomes a CUDA device's index (`torch.device(f"cuda:{p}")`,
    ColossalAI's `colo_model_data_tensor_move_inline(t, target_device)`); a name defined twice
    with different answers is left out."""
    found: dict[str, tuple[str, str, str] | None] = {}
    for path, fn, params, method in _functions(files, _INDEX_FORMAT):
        for node in ast.walk(fn):
            # (the f-string form of `_indexed` only: the byte probe admits no `"cuda:{}".format(p)`)
            if not (isinstance(node, ast.JoinedStr) and _indexed(node, set(params))):
                continue
            part = node.values[1]
            assert isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name)
            param = part.value.id
            position = params.index(param) - (1 if method else 0)
            why = f'`{fn.name}({param})` ({path}:{node.lineno}) makes `f"cuda:{{{param}}}"` of it, a CUDA device'
            _answer(found, fn.name, (why, str(position), param))
            break
    return {k: v for k, v in found.items() if v is not None}


_NCCL_DEFAULT = re.compile(rb"""=\s*['"]nccl['"]""")


def discarded_params(files: Iterable[tuple[str, bytes]]) -> dict[str, tuple[str, str, str]]:
    """qualified name -> (why, the parameter's position among the call's arguments, its name)
    for each function whose parameter defaulting to "nccl" is overwritten before it is read, or
    never read (ColossalAI's `launch(..., backend="nccl")`, whose body sets `backend =
    get_accelerator().communication_backend` first): what its callers pass there selects
    nothing. A function is named by its module and, where its package's `__init__.py` imports
    it (`from .initialize import launch`), by the package too."""
    files = list(files)
    found: dict[str, tuple[str, str, str] | None] = {}
    for path, fn, params, method in _functions(files, _NCCL_DEFAULT):
        positional = [*fn.args.posonlyargs, *fn.args.args]
        defaults = dict(zip(positional[len(positional) - len(fn.args.defaults) :], fn.args.defaults))
        defaults.update((a, d) for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults) if d is not None)
        answer: tuple[str, str, str] = ("", "", "")  # read: what a caller passes is used
        for arg, default in defaults.items():
            if not (isinstance(default, ast.Constant) and default.value == "nccl"):
                continue
            line = _discarded_at(fn, arg.arg)
            if line is not None:
                position = params.index(arg.arg) - (1 if method else 0) if arg.arg in params else -1
                what = f"sets it again at line {line} before reading it" if line else "never reads it"
                answer = (f"`{fn.name}` ({path}:{fn.lineno}) {what}", str(position), arg.arg)
            break
        else:
            continue
        _answer(found, f"{module_name(path)}.{fn.name}", answer)
    if not any(found.values()):
        return {}
    for path, source in files:
        if path.replace("\\", "/").endswith("__init__.py") and b"import" in source:
            package = module_name(path)
            for module, name in _relative_imports(source):
                entry = found.get(f"{package}.{module}.{name}")
                if entry is not None:
                    _answer(found, f"{package}.{name}", entry)
    return {k: v for k, v in found.items() if v is not None and v[0]}


def _relative_imports(source: bytes) -> list[tuple[str, str]]:
    """(module, name) of each `from .module import name` at the top of an `__init__.py`."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return [
        (stmt.module, alias.name)
        for stmt in tree.body
        if isinstance(stmt, ast.ImportFrom) and stmt.level == 1 and stmt.module
        for alias in stmt.names
        if alias.asname is None
    ]


def _discarded_at(fn: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> int | None:
    """The line of the statement of `fn`'s body that sets `param` again before anything reads
    it (0 where nothing reads it at all), else None."""

    def reads(node: ast.AST) -> bool:
        return any(isinstance(n, ast.Name) and n.id == param and isinstance(n.ctx, ast.Load) for n in ast.walk(node))

    for stmt in fn.body:
        if (
            isinstance(stmt, (ast.Assign, ast.AnnAssign))
            and any(
                isinstance(t, ast.Name) and t.id == param
                for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
            )
            and stmt.value is not None
            and not reads(stmt.value)
        ):
            return stmt.lineno
        if reads(stmt):
            return None
    return 0


def _closed_switch(stmt: ast.stmt) -> str | None:
    """The name an `if x == "cuda": ... elif x == "cpu": ... else: raise` chain compares."""
    names: set[str] = set()
    values: set[str] = set()
    node: ast.stmt | None = stmt
    while isinstance(node, ast.If):
        test = node.test
        if not (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)
            and isinstance(test.left, ast.Name)
            and isinstance(test.comparators[0], ast.Constant)
            and isinstance(test.comparators[0].value, str)
        ):
            return None
        names.add(test.left.id)
        values.add(test.comparators[0].value)
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            node = node.orelse[0]
            continue
        if not (node.orelse and isinstance(node.orelse[-1], ast.Raise)):
            return None
        node = None
    if len(names) != 1 or "cuda" not in values or len(values) < 2:
        return None
    return names.pop()


def part(source: bytes) -> bytes:
    """What the analysis reads of one file: its class statements with a device word, and the
    lines that name `cuda` (where a member of CUDA's class is compared with "cuda"); with a
    switch over "cuda" (`switch_keys`), its `def` lines too. (The lines that may hand a
    parameter on to a switch are `handed_on_lines`.)"""
    lines = b"\0".join(_CUDA_LINE.findall(source)) if b"cuda" in source else b""
    if lines and (_KEY_TEST.search(source) or _INDEX_FORMAT.search(source)):
        lines += b"\3" + b"\0".join(_DEF_LINE.findall(source))
    if _ACCELERATOR_STRING.search(source):
        lines += b"\2" + b"\0".join(_ACCELERATOR_LINE.findall(source))
    if not _HINT.search(source):
        return lines
    if b"inductor" in source:  # what CUDA's class of a family names its compile backend (`_answers`)
        lines += b"\4" + b"\0".join(_INDUCTOR_LINE.findall(source))
    return (
        b"\0".join(text for text, name, _ in class_statements(source) if device_word(name.decode()) is not None)
        + b"\1"
        + lines
    )


def handed_on_lines(source: bytes) -> bytes:
    """The signatures of a file that names a device (`device`, `cuda`) and its lines that
    pass a parameter's name on (`self._memstats.non_model_data_list(device_type)`): what
    `_handing_on` reads of it. (A file that names no device hands no device key on.)"""
    if b"def" not in source or not (b"device" in source or b"cuda" in source):
        return b""
    signatures = _SIGNATURE.findall(source)
    params = {p for s in signatures for p in _PARAM.findall(s, s.find(b"("))} - {b"self", b"cls"}
    starts = {source.rfind(b"\n", 0, m.start()) + 1 for m in _BARE_ARG.finditer(source) if m.group(1) in params}
    if not starts:
        return b""
    lines = [source[s : source.find(b"\n", s) % (len(source) + 1)] for s in sorted(starts)]
    return b"\0".join(signatures) + b"\1" + b"\0".join(lines)
