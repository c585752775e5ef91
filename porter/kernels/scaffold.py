"""`porter kernels --scaffold DIR`: per kernel, a reference op, a target kernel skeleton and a
parity test stub.

For kernel `K` it writes:
- `K_op.py`: `torch.library.custom_op("porter_kernels::K")` whose body is a plain-PyTorch
  reference (derived from the Triton source where `triton_ref` can; otherwise a TODO that raises
  — never a silent identity), and a `register_fake` implementation for `torch.compile`.
- `K_<target>.py`: an `@nki.jit` kernel called from an annotated PyTorch function that
  `nki_op` registers, for neuron; a JAX function with annotated arguments that returns its
  outputs, registered with `@torch.tpu.pallas.jax_op`, for tpu; a Pallas kernel through
  `torch_xla.experimental.custom_kernel.make_kernel_from_pallas` for xla. Each body is a TODO.
- `test_K.py`: runs the reference on the CPU, and compares kernel and reference where the
  target runtime is installed (skipped elsewhere).

The reference op lets the ported model run before any kernel is written. Existing files are
never overwritten.
"""

from __future__ import annotations

import re
from pathlib import Path

from porter.kernels.inventory import Inventory, Kernel
from porter.kernels.triton_ref import Translation, translate, why_not

_INT_NAME = re.compile(r"(^n$|^n_|_n$|stride|size|numel|num|count|len|rows|cols|^[NMK]$|dim|elements)", re.I)


def safe_name(name: str) -> str:
    return re.sub(r"\W", "_", name).strip("_") or "kernel"


def _typed(params: list[str], pointers: set[str]) -> list[str]:
    return [f"{p}: {_TORCH_TYPE[kind]}" for p, kind in _kinds(params, pointers).items()]


def _op_source(k: Kernel, n: str, tr: Translation | None, reason: str | None) -> tuple[str, list[str], list[str]]:
    """The op module's source, its parameter names and the names it mutates."""
    head = [
        f'"""Reference op for {k.kind} kernel `{k.name}` ({k.path}:{k.line}), scaffolded by porter.',
        "",
        "Call `" + f"torch.ops.porter_kernels.{n}" + "` where the original kernel was launched; the body is",
        "plain PyTorch, so the ported model runs on any device before the target kernel exists.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "import torch",
        "",
    ]
    if tr is not None:
        params = tr.params
        mutates = tr.stored
        typed = ", ".join(_typed(params, set(tr.stored) | set(tr.loaded)))
        ref = tr.source(f"{n}_reference")
        body = [
            ref,
            "",
            f'@torch.library.custom_op("porter_kernels::{n}", mutates_args={tuple(mutates)!r})',
            f"def {n}({typed}) -> None:",
            f"    {n}_reference({', '.join(params)})",
            "",
            "",
            f"@{n}.register_fake",
            f"def _({typed}) -> None:",
            f"    return None  # writes {', '.join(mutates)} in place: nothing new to allocate",
            "",
        ]
        return "\n".join(head + body), params, mutates
    if k.kind in ("triton", "custom-op"):  # a custom op: its implementation's parameters
        params = [p.split(":")[0] for p in k.params if "constexpr" not in p]
    else:
        count = max((len(c.args) for c in k.calls), default=1)
        params = [f"arg{i}" for i in range(count)]
    why = reason or "porter cannot derive its math from the source"
    typed = ", ".join(f"{p}: torch.Tensor" for p in params)
    body = [
        f"def {n}_reference({', '.join(params)}):",
        f'    """TODO(porter): write `{k.name}` in plain PyTorch ({why})."""',
        f'    raise NotImplementedError("TODO(porter): reference body of {k.name}: {why.replace(chr(34), chr(39))}")',
        "",
        "",
        "# TODO(porter): check the parameter types and what the kernel writes (mutates_args).",
        f'@torch.library.custom_op("porter_kernels::{n}", mutates_args=())',
        f"def {n}({typed}) -> torch.Tensor:",
        f"    return {n}_reference({', '.join(params)})",
        "",
        "",
        f"@{n}.register_fake",
        f"def _({typed}) -> torch.Tensor:",
        f'    raise NotImplementedError("TODO(porter): return an empty tensor with the output\'s shape and dtype, e.g. {params[0]}.new_empty(...)")',
        "",
    ]
    return "\n".join(head + body), params, []


def _nki_source(k: Kernel, n: str, params: list[str], kinds: dict[str, str], mutates: list[str], todo: str) -> str:
    """`nki_op` (torch_neuronx/nki_hop.py) registers an annotated PyTorch function through
    torch's `infer_schema`; that function calls the `@nki.jit` kernel through `wrap_nki`."""
    args = ", ".join(params)
    typed = ", ".join(f"{p}: {_TORCH_TYPE[kinds[p]]}" for p in params)
    mutated = "{" + ", ".join(f'"{m}"' for m in mutates) + "}" if mutates else "{}"
    returns = "None" if mutates else "torch.Tensor"
    call = f"wrap_nki({n}_nki_kernel)({args})"
    return "\n".join([
        f'"""NKI kernel skeleton for `{k.name}` (TorchNeuron): an `@nki.jit` kernel, called from a',
        'type-annotated PyTorch function that `torch_neuronx.nki_op` registers as a torch op."""',
        "",
        "import nki",
        "import nki.isa as nisa",
        "import nki.language as nl",
        "import torch",
        "from torch_neuronx import nki_op, wrap_nki",
        "",
        "",
        "@nki.jit",
        f"def {n}_nki_kernel({args}):",
        f"    # {todo}",
        "    # Tiles: load HBM → SBUF with nisa.dma_copy, compute with nisa / nl, copy back.",
        f'    raise NotImplementedError("{todo}")',
        "",
        "",
        f'@nki_op("porter_kernels::{n}_nki", mutates_args={mutated})',
        f"def {n}_nki({typed}) -> {returns}:",
        f"    {call}" if mutates else "    # TODO(porter): allocate the output, pass it to the kernel, return it",
        *([] if mutates else [f"    return {call}"]),
        "",
    ])


def _pallas_source(k: Kernel, n: str, params: list[str], kinds: dict[str, str], mutates: list[str], todo: str) -> str:
    """`torch.tpu.pallas.jax_op` needs every argument annotated (ValueError at import
    otherwise) and returns the outputs: a JAX function cannot write into an argument, so
    the kernel's out-arguments become its results."""
    inputs = [p for p in params if p not in mutates]
    outputs = mutates or ["out"]
    typed = ", ".join(f"{p}: {_JAX_TYPE[kinds[p]]}" for p in inputs)
    tensors = [p for p in inputs if kinds[p] == "tensor"]
    like = tensors[0] if tensors else None
    shape = f"jax.ShapeDtypeStruct({like}.shape, {like}.dtype)" if like else "jax.ShapeDtypeStruct((...), jnp.float32)"
    out_shape = shape if len(outputs) == 1 else "(" + ", ".join(shape for _ in outputs) + ")"
    returns = "jax.Array" if len(outputs) == 1 else "tuple[" + ", ".join("jax.Array" for _ in outputs) + "]"
    refs = ", ".join([f"{p}_ref" for p in tensors] + [f"{o}_ref" for o in outputs])
    return "\n".join([
        f'"""Pallas kernel skeleton for `{k.name}` (TorchTPU): `torch.tpu.pallas.jax_op` registers a',
        "JAX function with annotated arguments as a torch op; it returns its outputs"
        + (f" ({', '.join(outputs)}, written in place by the original kernel)." if mutates else "."),
        '"""',
        "",
        "import jax",
        "import jax.numpy as jnp",
        "from jax.experimental import pallas as pl",
        "import torch",
        "import torch_tpu  # noqa: F401  (registers torch.tpu)",
        "",
        "",
        f"def {n}_pallas_kernel({refs}):",
        f"    # {todo}",
        f'    raise NotImplementedError("{todo}")',
        "",
        "",
        f'@torch.tpu.pallas.jax_op("porter_kernels::{n}_pallas")',
        f"def {n}_pallas({typed}) -> {returns}:",
        "    # TODO(porter): the output shapes and the grid",
        f"    return pl.pallas_call({n}_pallas_kernel, out_shape={out_shape})({', '.join(tensors)})",
        "",
    ])


_TORCH_TYPE = {"tensor": "torch.Tensor", "int": "int", "float": "float"}
_JAX_TYPE = {"tensor": "jax.Array", "int": "int", "float": "float"}


def _kinds(params: list[str], pointers: set[str] | None) -> dict[str, str]:
    """tensor / int / float per parameter (every parameter is a tensor when nothing is known)."""
    if pointers is None:
        return {p: "tensor" for p in params}
    return {p: "tensor" if p in pointers else ("int" if _INT_NAME.search(p) else "float") for p in params}


def _kernel_source(target: str, k: Kernel, n: str, params: list[str], mutates: list[str], kinds: dict[str, str]) -> str:
    todo = f"TODO(porter): port `{k.name}` ({k.path}:{k.line}); {n}_op.{n}_reference is the math to match."
    args = ", ".join(params)
    if target == "neuron":
        return _nki_source(k, n, params, kinds, mutates, todo)
    if target == "tpu":
        return _pallas_source(k, n, params, kinds, mutates, todo)
    return "\n".join([
        f'"""Pallas kernel skeleton for `{k.name}` (PyTorch/XLA on TPU), wrapped for torch tensors by',
        '`torch_xla.experimental.custom_kernel.make_kernel_from_pallas`."""',
        "",
        "import jax",
        "from jax.experimental import pallas as pl",
        "from torch_xla.experimental.custom_kernel import make_kernel_from_pallas",
        "",
        "",
        f"def {n}_pallas_kernel(*refs):",
        f"    # {todo}",
        f'    raise NotImplementedError("{todo}")',
        "",
        "",
        f"def {n}_output_shapes({args}):",
        "    # TODO(porter): [(shape, dtype)] of each output",
        f'    raise NotImplementedError("{todo}")',
        "",
        "",
        f"{n}_xla = make_kernel_from_pallas({n}_pallas_kernel, {n}_output_shapes)",
        "",
    ])


_RUNTIME = {"neuron": "torch_neuronx", "tpu": "torch_tpu", "xla": "torch_xla"}
_KERNEL_FN = {"neuron": "{n}_nki", "tpu": "{n}_pallas", "xla": "{n}_xla"}
_DEVICE = {"neuron": '"neuron"', "tpu": '"tpu"', "xla": "torch_xla.device()"}


def _test_source(target: str, k: Kernel, n: str, params: list[str], tr: Translation | None) -> str:
    kernel_fn = _KERNEL_FN[target].format(n=n)
    lines = [
        f'"""Parity of `{k.name}`: the target kernel against the plain-PyTorch reference."""',
        "",
        "import pytest",
        "import torch",
        "",
        f"from {n}_op import {n}_reference",
        "",
        "",
        "def make_inputs(device='cpu'):",
    ]
    if tr is not None:
        lines.append("    # TODO(porter): inputs shaped as the call sites pass them" + (f" (e.g. {k.calls[0].describe()})" if k.calls else ""))
        for p in tr.params:
            if p in tr.loaded or p in tr.stored:
                lines.append(f"    {p} = torch.randn(4, 256, device=device)")
            else:
                lines.append(f"    {p} = 256  # TODO(porter): the value the call site passes")
        lines.append(f"    return [{', '.join(tr.params)}]")
    else:
        lines.append(f"    raise NotImplementedError('TODO(porter): inputs for {k.name}')")
    lines += [
        "",
        "",
        "def test_reference_runs_on_cpu():",
        "    args = make_inputs()",
        f"    {n}_reference(*args)",
        "",
        "",
        f'@pytest.mark.skipif(__import__("importlib").util.find_spec("{_RUNTIME[target]}") is None, reason="{_RUNTIME[target]} is not installed")',
        "def test_kernel_matches_reference():",
    ]
    if target == "xla":
        lines.append("    import torch_xla")
    lines += [
        f"    from {n}_{target} import {kernel_fn}",
        "",
        "    want = make_inputs()",
        f"    got = [a.to({_DEVICE[target]}) if isinstance(a, torch.Tensor) else a for a in want]",
        f"    out_ref = {n}_reference(*want)",
    ]
    if target == "tpu":
        # the Pallas op takes the inputs and returns what the original kernel wrote in place
        mutated = list(tr.stored) if tr is not None else []
        lines += [
            f"    mutated = {mutated!r}",
            f"    names = {params!r}",
            f"    out = {kernel_fn}(*[a for name, a in zip(names, got) if name not in mutated])",
            "    outs = out if isinstance(out, tuple) else (out,)",
            "    wanted = [b for name, b in zip(names, want) if name in mutated] if out_ref is None else [out_ref]",
            "    for a, b in zip(outs, wanted, strict=True):",
            "        torch.testing.assert_close(a.cpu(), b, rtol=1e-3, atol=1e-3)",
            "",
        ]
        return "\n".join(lines)
    lines += [
        f"    out = {kernel_fn}(*got)",
        "    if out_ref is None:  # in-place kernel: compare the written tensors",
        "        for a, b in zip(got, want):",
        "            if isinstance(a, torch.Tensor):",
        "                torch.testing.assert_close(a.cpu(), b, rtol=1e-3, atol=1e-3)",
        "    else:",
        "        torch.testing.assert_close(out.cpu(), out_ref, rtol=1e-3, atol=1e-3)",
        "",
    ]
    return "\n".join(lines)


def write_scaffolds(inv: Inventory, out_dir: Path, target: str) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    seen: set[str] = set()
    for k in inv.kernels:
        if k.kind == "cuda-extension":
            continue  # its ops are listed one by one from its sources
        n = safe_name(k.name)
        if n in seen:
            continue
        seen.add(n)
        tr = translate(k.source, k.name) if k.kind == "triton" else None
        reason = why_not(k.source, k.name) if k.kind == "triton" and tr is None else None
        op_src, params, mutates = _op_source(k, n, tr, reason)
        kinds = _kinds(params, set(tr.stored) | set(tr.loaded) if tr is not None else None)
        files = {
            f"{n}_op.py": op_src,
            f"{n}_{target}.py": _kernel_source(target, k, n, params, mutates, kinds),
            f"test_{n}.py": _test_source(target, k, n, params, tr),
        }
        for name, text in files.items():
            path = out_dir / name
            if path.exists():
                continue
            path.write_text(text)
            written.append(path)
    return written
