"""Regenerate `rules/api/*.json`: the target APIs porter may emit, read from the packages.

Run once per environment that has the package (each pins its own torch), e.g.:

    python -m porter.apidata.build torch            # the running torch: torch.accelerator, ...
    python -m porter.apidata.build xla              # torch_xla (with torch 2.9)
    TPU_SKIP_MDS_QUERY=1 python -m porter.apidata.build tpu   # torch-tpu (with torch 2.13)
    python -m porter.apidata.build neuron --source DIR --origin "REPO@COMMIT"
    python -m porter.apidata.build hf               # transformers, accelerate, peft, trl (the `hf` extra)
    python -m porter.apidata.build torch-wheel --wheel torch-2.15.0-...whl   # read, not imported

`neuron` reads TorchNeuron's Python source with `ast` (the package is not installable here);
the others import the package and use `inspect`. This module imports torch: the engine never
imports it (it reads the JSON through `porter.apidata`).
"""

from __future__ import annotations

import argparse
import ast
import datetime as _dt
import importlib
import inspect
import json
import re
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[2] / "rules" / "api"

# namespaces whose whole public listing is recorded (a name not listed does not exist)
TORCH_COMPLETE = ["torch.accelerator"]
# names porter emits from torch itself, with their signatures
TORCH_SIGNATURES = {
    "torch": [
        "autocast",
        "compile",
        "manual_seed",
        "seed",
        "initial_seed",
        "set_float32_matmul_precision",
        "OutOfMemoryError",
    ],
    "torch.profiler": ["record_function"],
    "torch.distributed": ["init_process_group"],
    "torch.nn.functional": ["scaled_dot_product_attention"],
}
XLA_MODULES = [
    "torch_xla",
    "torch_xla.core.xla_model",
    "torch_xla.runtime",
    "torch_xla.distributed.parallel_loader",
    "torch_xla.distributed.xla_backend",
    "torch_xla.debug.profiler",
    "torch_xla.debug.metrics",
    "torch_xla.amp",
    "torch_xla.experimental.custom_kernel",
]


def _today() -> str:
    return _dt.datetime.now(_dt.timezone.utc).date().isoformat()


def _annotation(ann) -> str | None:
    if ann is inspect.Parameter.empty:
        return None
    if isinstance(ann, str):
        return ann
    text = inspect.formatannotation(ann)
    return text.replace("typing.", "")


def _params(sig: inspect.Signature, drop_first: bool = False) -> list[dict]:
    params = list(sig.parameters.values())
    if drop_first and params:
        params = params[1:]
    out = []
    for p in params:
        entry: dict[str, Any] = {"name": p.name, "kind": p.kind.name}
        if p.default is not inspect.Parameter.empty:
            entry["default"] = True
        ann = _annotation(p.annotation)
        if ann:
            entry["annotation"] = ann
        out.append(entry)
    return out


def describe(obj) -> dict:
    """`{"kind": ..., "params": [...]}` for a function, class or other attribute."""
    if inspect.ismodule(obj):
        return {"kind": "module"}
    if inspect.isclass(obj):
        entry: dict = {"kind": "class"}
        try:
            entry["params"] = _params(inspect.signature(obj.__init__), drop_first=True)
        except (TypeError, ValueError):
            pass
        return entry
    if callable(obj):
        entry = {"kind": "function"}
        try:
            entry["params"] = _params(inspect.signature(obj))
        except (TypeError, ValueError):
            pass
        return entry
    return {"kind": "attribute"}


def _public(module) -> list[str]:
    names = getattr(module, "__all__", None) or dir(module)
    return sorted(n for n in names if not n.startswith("_"))


def _module_entry(module, complete: bool, signatures: list[str] | None = None) -> dict:
    names = _public(module)
    members = {}
    for n in signatures if signatures is not None else names:
        try:
            members[n] = describe(getattr(module, n))
        except Exception as exc:  # noqa: BLE001 - a lazy attribute that needs a device
            members[n] = {"kind": "attribute", "note": f"not resolved here: {type(exc).__name__}"}
    entry = {"complete": complete, "members": members}
    if not complete or signatures is not None:
        entry["names"] = names
    return entry


def build_torch() -> dict:
    import torch
    import torch._dynamo
    import torch.distributed

    modules = {name: _module_entry(importlib.import_module(name), True) for name in TORCH_COMPLETE}
    for name, wanted in TORCH_SIGNATURES.items():
        modules[name] = _module_entry(importlib.import_module(name), False, wanted)
    return {
        "source": {
            "package": "torch",
            "version": torch.__version__,
            "how": "imported; inspect.signature",
            "generated": _today(),
        },
        "modules": modules,
        "compile_backends": sorted(torch._dynamo.list_backends(exclude_tags=())),
        "dist_backends": sorted(torch.distributed.Backend.backend_list),
    }


def build_xla() -> dict:
    import torch
    import torch._dynamo
    import torch.distributed
    import torch_xla

    modules = {name: _module_entry(importlib.import_module(name), True) for name in XLA_MODULES}
    return {
        "source": {
            "package": "torch_xla",
            "version": torch_xla.__version__,
            "torch": torch.__version__,
            "how": "imported (PJRT_DEVICE=CPU); inspect.signature",
            "generated": _today(),
        },
        "modules": modules,
        "compile_backends": sorted(torch._dynamo.list_backends(exclude_tags=())),
        "dist_backends": sorted(torch.distributed.Backend.backend_list),
        "device_types": ["xla"],
    }


def _tpu_member(target: str) -> tuple[dict, str | None]:
    """Describe `pkg.mod:Class.attr` without running descriptors (some need a TPU)."""
    module_path, qualname = target.split(":", 1)
    *owner_path, attr = qualname.split(".")
    owner = importlib.import_module(module_path)
    for part in owner_path:
        owner = getattr(owner, part)
    try:
        raw = inspect.getattr_static(owner, attr)
    except AttributeError:  # provided by a metaclass `__getattr__`
        try:
            raw = getattr(owner, attr)
        except Exception as exc:  # noqa: BLE001 - resolving it needs a TPU
            return {"kind": "attribute", "note": f"not resolved without a TPU: {type(exc).__name__}"}, None
    is_method = isinstance(raw, (classmethod, staticmethod))
    fn = raw.__func__ if is_method else raw
    if inspect.isfunction(fn) or inspect.isclass(fn):
        entry = describe(fn)
        if isinstance(raw, classmethod) and entry.get("params"):
            entry["params"] = entry["params"][1:]
    elif hasattr(fn, "__get__") and not callable(fn):
        entry = {"kind": "attribute"}
    else:
        entry = describe(fn)
    stage = getattr(fn, "__tt_api_stage__", None)
    if stage:
        entry["stage"] = stage
    prefer = getattr(fn, "__tt_api_prefer__", None)
    return entry, (prefer if stage == "Internal" else None)


def build_tpu() -> dict:
    import torch
    import torch._dynamo
    import torch.distributed
    import torch_tpu
    from torch_tpu._internal import public_api

    modules: dict[str, dict] = {}
    twins: dict[str, str] = {}
    for name, spec in public_api._PUBLIC_MODULES.items():
        members = {}
        for attr, target in spec.exports.items():
            if isinstance(target, str):
                entry, prefer = _tpu_member(target)
            else:  # a Property: a settable module attribute
                entry, prefer = {"kind": "attribute"}, None
            members[attr] = entry
            if prefer:
                twins[f"{name}.{attr}"] = prefer
        modules[name] = {"complete": True, "members": members}
    for name in list(modules):  # child namespaces are members of their parent
        parent, _, child = name.rpartition(".")
        if parent in modules:
            modules[parent]["members"].setdefault(child, {"kind": "module"})
    # the device as it registers on a TPU host (no TPU needed to register it)
    torch_tpu._loader._init_device("tpu")
    return {
        "source": {
            "package": "torch-tpu",
            "version": _dist_version("torch-tpu"),
            "torch": torch.__version__,
            "how": "imported (TPU_SKIP_MDS_QUERY=1); public table torch_tpu._internal.public_api._PUBLIC_MODULES; "
            "twins: stage 'Internal' with a `prefer` (raise unless TORCH_TPU_ALLOW_LEGACY_DEVICE_APIS=1); "
            "device registered by hand with torch_tpu._loader._init_device('tpu')",
            "generated": _today(),
        },
        "modules": modules,
        "twins": dict(sorted(twins.items())),
        "compile_backends": sorted(torch._dynamo.list_backends(exclude_tags=())),
        "dist_backends": sorted(torch.distributed.Backend.backend_list),
        "device_types": ["tpu"],
        "tensor_attrs": sorted(a for a in ("is_tpu", "tpu") if hasattr(torch.Tensor, a)),
        "autocast_default_dtype": str(torch.get_autocast_dtype("tpu")),
    }


def _dist_version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


# -- TorchNeuron from its source ------------------------------------------------------------


def _ast_params(args: ast.arguments, drop_first: bool = False) -> list[dict]:
    out: list[dict] = []
    positional = [(a, "POSITIONAL_ONLY") for a in args.posonlyargs] + [(a, "POSITIONAL_OR_KEYWORD") for a in args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for (a, kind), default in zip(positional, defaults):
        out.append(_ast_param(a, kind, default is not None))
    if args.vararg:
        out.append(_ast_param(args.vararg, "VAR_POSITIONAL", False))
    for a, default in zip(args.kwonlyargs, args.kw_defaults):
        out.append(_ast_param(a, "KEYWORD_ONLY", default is not None))
    if args.kwarg:
        out.append(_ast_param(args.kwarg, "VAR_KEYWORD", False))
    return out[1:] if drop_first else out


def _ast_param(a: ast.arg, kind: str, has_default: bool) -> dict:
    entry: dict[str, Any] = {"name": a.arg, "kind": kind}
    if has_default:
        entry["default"] = True
    if a.annotation is not None:
        entry["annotation"] = ast.unparse(a.annotation)
    return entry


def _ast_module(path: Path) -> dict[str, dict]:
    """Top-level public functions, classes and imported names of one source file."""
    tree = ast.parse(path.read_text())
    members: dict[str, dict] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            members[node.name] = {"kind": "function", "params": _ast_params(node.args)}
        elif isinstance(node, ast.ClassDef):
            entry: dict = {"kind": "class"}
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    entry["params"] = _ast_params(item.args, drop_first=True)
            members[node.name] = entry
        elif isinstance(node, ast.ImportFrom) and node.level == 1:
            for alias in node.names:
                members[alias.asname or alias.name] = {"kind": "module" if node.module is None else "imported"}
        elif isinstance(node, ast.ImportFrom) and node.module == "torch_neuronx":
            for alias in node.names:
                members[alias.asname or alias.name] = {"kind": "module"}
    return {k: v for k, v in sorted(members.items()) if not k.startswith("_")}


def build_neuron(source: Path, origin: str) -> dict:
    pkg = source / "torch_neuronx"
    init = _ast_module(pkg / "__init__.py")
    hop = _ast_module(pkg / "nki_hop.py")
    for name in ("nki_op", "wrap_nki"):  # re-exported by torch_neuronx/__init__.py
        if init.get(name, {}).get("kind") == "imported":
            init[name] = hop[name]
    text = (pkg / "__init__.py").read_text()
    device = re.search(r'rename_privateuse1_backend\("(\w+)"\)', text)
    return {
        "source": {
            "package": "torch-neuronx (TorchNeuron)",
            "version": "source",
            "origin": origin,
            "files": ["torch_neuronx/__init__.py", "torch_neuronx/neuron.py", "torch_neuronx/nki_hop.py"],
            "how": "read with ast from the published source (the package is not installable here); "
            "backends from the vendor documentation (shared/targets.md)",
            "generated": _today(),
        },
        "modules": {
            "torch.neuron": {"complete": True, "members": _ast_module(pkg / "neuron.py")},
            "torch_neuronx": {"complete": False, "members": init},
            "torch_neuronx.nki_hop": {"complete": False, "members": hop},
        },
        "device_types": [device.group(1)] if device else [],
        # [doc] torch/index: compile backend and process-group backend are both "neuron"
        "compile_backends": ["neuron"],
        "dist_backends": ["neuron"],
        "tensor_attrs": ["is_neuron"] if "generate_methods_for_privateuse1_backend" in text else [],
    }


# -- torch from its wheel, read with ast (any platform's wheel: the Python is the same) -------

# where each name porter checks is defined in torch's source (a C builtin: its .pyi stub)
_TORCH_SOURCES = {
    "torch": ["torch/__init__.py", "torch/random.py", "torch/amp/autocast_mode.py", "torch/_C/__init__.pyi"],
    "torch.profiler": ["torch/autograd/profiler.py", "torch/profiler/__init__.py"],
    "torch.distributed": ["torch/distributed/distributed_c10d.py"],
    "torch.nn.functional": ["torch/nn/functional.py", "torch/_C/_nn.pyi"],
}


def _defs(tree: ast.Module) -> dict[str, dict]:
    """Top-level functions and classes of a module (the first definition of each name)."""
    out: dict[str, dict] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(getattr(d, "id", getattr(d, "attr", None)) == "overload" for d in node.decorator_list):
                continue  # a typing stub: the implementation's parameters are what binds
            out[node.name] = {"kind": "function", "params": _ast_params(node.args)}
        elif isinstance(node, ast.ClassDef) and node.name not in out:
            entry: dict = {"kind": "class"}
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    entry["params"] = _ast_params(item.args, drop_first=True)
            out[node.name] = entry
    return out


def _all(tree: ast.Module) -> list[str] | None:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            try:
                return [str(x) for x in ast.literal_eval(node.value)]
            except ValueError:
                return None
    return None


def build_torch_wheel(wheel: Path) -> dict:
    """A torch record read from a wheel's Python source: `torch.accelerator` whole (its
    `__all__`, each name's signature from the file that defines it), the few names porter
    emits from torch itself, and the compile and distributed backends torch registers."""
    whl = _Wheel(wheel)
    version = next(m.group(1) for n in whl.files if (m := re.fullmatch(r"torch-(.+)\.dist-info/METADATA", n)))
    modules: dict[str, dict] = {"torch.accelerator": {"complete": True, "members": _accelerator_members(whl)}}
    for module, wanted in TORCH_SIGNATURES.items():
        found: dict[str, dict] = {}
        for path in _TORCH_SOURCES.get(module, []):
            t = whl.tree(path)
            if t is not None:
                for n, entry in _defs(t).items():
                    found.setdefault(n, entry)
        modules[module] = {
            "complete": False,
            "members": {
                n: found.get(n, {"kind": "attribute", "note": "not found in the Python source"}) for n in wanted
            },
        }
    return {
        "source": {
            "package": "torch",
            "version": version,
            "wheel": wheel.name,
            "how": "read with ast from the wheel's Python source (.py and .pyi); not imported",
            "generated": _today(),
        },
        "modules": modules,
        "compile_backends": sorted(_compile_backends(whl)),
        "dist_backends": sorted(_dist_backends(whl)),
    }


class _Wheel:
    """A wheel's files, parsed on demand (nothing is imported)."""

    def __init__(self, wheel: Path) -> None:
        import zipfile

        self.zf = zipfile.ZipFile(wheel)
        self.files = set(self.zf.namelist())
        self.name = wheel

    def tree(self, name: str) -> ast.Module | None:
        return ast.parse(self.zf.read(name)) if name in self.files else None


def _accelerator_members(whl: _Wheel) -> dict[str, dict]:
    """Every public name of `torch.accelerator` with its signature, followed into the
    submodules it imports from (`from .memory import empty_cache, ...`)."""
    accel = whl.tree("torch/accelerator/__init__.py")
    assert accel is not None, f"{whl.name}: no torch/accelerator"
    names = _all(accel) or sorted(n for n in _defs(accel) if not n.startswith("_"))
    defined = _defs(accel)
    for node in accel.body:  # `from .memory import empty_cache, ...`
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            sub = whl.tree(f"torch/accelerator/{node.module.replace('.', '/')}.py")
            if sub is not None:
                subdefs = _defs(sub)
                for alias in node.names:
                    if alias.name in subdefs:
                        defined.setdefault(alias.asname or alias.name, subdefs[alias.name])
    return {
        n: defined.get(n, {"kind": "attribute", "note": "not defined in Python (a C binding or an alias)"})
        for n in names
    }


_REGISTERS = {"register_backend", "register_debug_backend", "register_experimental_backend"}


def _compile_backends(whl: _Wheel) -> set[str]:
    """The names torch._dynamo registers compile backends under: a bare `@register_backend`
    decorator registers its function's name; a call with `name=` (or a first argument) that name."""
    compile_backends: set[str] = set()
    for name in sorted(whl.files):
        if name.startswith("torch/_dynamo/") and name.endswith(".py"):
            for seen_node in ast.walk(ast.parse(whl.zf.read(name))):
                if isinstance(seen_node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    if any(_bare_register(deco) for deco in seen_node.decorator_list):
                        compile_backends.add(seen_node.name)  # `@register_backend`: the function's name
                elif (
                    isinstance(seen_node, ast.Call)
                    and getattr(seen_node.func, "id", getattr(seen_node.func, "attr", None)) in _REGISTERS
                ):
                    named = [k.value for k in seen_node.keywords if k.arg == "name"] or seen_node.args[:1]
                    if named and isinstance(named[0], ast.Constant) and isinstance(named[0].value, str):
                        compile_backends.add(named[0].value)
    return compile_backends


def _bare_register(deco: ast.expr) -> bool:
    """A registering decorator that names no backend (the function's name is the backend's)."""
    target = deco.func if isinstance(deco, ast.Call) else deco
    return getattr(target, "id", getattr(target, "attr", None)) in _REGISTERS and not (
        isinstance(deco, ast.Call) and (deco.args or any(k.arg == "name" for k in deco.keywords))
    )


def _dist_backends(whl: _Wheel) -> set[str]:
    """The string constants of torch.distributed's `Backend` class (NCCL = "nccl", ...)."""
    dist_backends: set[str] = set()
    c10d = whl.tree("torch/distributed/distributed_c10d.py")
    for cls in ast.walk(c10d) if c10d is not None else ():
        if isinstance(cls, ast.ClassDef) and cls.name == "Backend":
            for item in cls.body:
                if (
                    isinstance(item, ast.Assign)
                    and len(item.targets) == 1
                    and isinstance(item.targets[0], ast.Name)
                    and item.targets[0].id.isupper()
                    and isinstance(item.value, ast.Constant)
                    and isinstance(item.value.value, str)
                ):
                    dist_backends.add(item.value.value)
    return dist_backends


def write(name: str, data: dict) -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}.json"
    path.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["torch", "torch-wheel", "xla", "tpu", "neuron", "hf"])
    parser.add_argument(
        "--wheel", type=Path, help="torch-wheel: a torch wheel of any platform (its Python source is read)"
    )
    parser.add_argument("--source", type=Path, help="neuron: a checkout of TorchNeuron's source")
    parser.add_argument("--origin", default="", help="neuron: where the source came from (repo@commit, date)")
    args = parser.parse_args(argv)
    if args.what == "torch":
        import torch

        path = write(f"torch-{torch.__version__.split('+')[0].rsplit('.', 1)[0]}", build_torch())
    elif args.what == "torch-wheel":
        if args.wheel is None:
            parser.error("torch-wheel needs --wheel FILE")
        data = build_torch_wheel(args.wheel)
        path = write(f"torch-{data['source']['version'].split('+')[0].rsplit('.', 1)[0]}", data)
    elif args.what == "xla":
        path = write("torch_xla", build_xla())
    elif args.what == "tpu":
        path = write("torch_tpu", build_tpu())
    elif args.what == "hf":
        from porter.apidata.hf import build_all

        for name, record in build_all().items():
            record["source"]["generated"] = _today()
            print(write(name, record))
        return 0
    else:
        if args.source is None:
            parser.error("neuron needs --source DIR")
        path = write("torch_neuronx", build_neuron(args.source, args.origin))
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
