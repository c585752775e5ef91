"""The generated kernel scaffolds register as torch ops the way each target's API says.

TorchTPU: each `K_tpu.py` is imported under the real torch-tpu wheel (torch 2.13 + jax) and
its op must exist. It needs that second environment: `PORTER_TPU_PYTHON`, else the
repository's `.venv-tpu` (`.ci/run` builds it); the test fails when neither exists. TorchNeuron is not installable: `nki_op` is rebuilt
from its published source (custom_op + infer_schema, torch_neuronx/nki_hop.py) with the
signature recorded in rules/api/torch_neuronx.json, and the NKI scaffold must register
through it.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from porter.apidata import target_api
from porter.kernels.inventory import scan
from porter.kernels.scaffold import write_scaffolds
from tests.deps import need, tpu_python
from tests.helpers import conformance
from tests.kernels.test_inventory import project  # noqa: F401  (fixture)


def _scaffold(project: Path, tmp_path: Path, target: str) -> Path:  # noqa: F811
    out = tmp_path / f"scaffold-{target}"
    write_scaffolds(scan(project), out, target)
    return out


@pytest.mark.parametrize("target", ["neuron", "tpu", "xla"])
def test_scaffolds_pass_the_target_api_lint(project, tmp_path, target):  # noqa: F811
    out = _scaffold(project, tmp_path, target)
    for path in _modules(out, target):
        assert not conformance(path.read_bytes(), target), path.name


def _modules(out: Path, target: str) -> list[Path]:
    """The target's kernel modules of a scaffold: the glob `*_TARGET.py` takes exactly them."""
    return sorted(out.glob(f"*_{target}.py"))


def _tpu_scaffold_of(tmp_path: Path, name: str, source: str) -> Path:
    """The TorchTPU scaffold of a source folder holding one file `name`."""
    src = tmp_path / "src"
    src.mkdir()
    (src / name).write_text(source)
    out = tmp_path / "out"
    write_scaffolds(scan(src), out, "tpu")
    return out


def _under_torch_tpu(python: str, driver: str, out: Path) -> subprocess.CompletedProcess[str]:
    """`driver` run by the TorchTPU environment's `python` in the scaffold folder `out`."""
    env = {**os.environ, "TPU_SKIP_MDS_QUERY": "1", "PYTHONPATH": str(out)}
    return subprocess.run(
        [python, "-W", "ignore", "-c", driver], cwd=out, env=env, capture_output=True, text=True, timeout=600
    )


_REGISTER_ALL = """
import importlib, pathlib, sys, torch
names = [p.stem for p in sorted(pathlib.Path('.').glob('*_tpu.py'))]
assert names, 'no scaffold'
for name in names:
    importlib.import_module(name)  # jax_op registers the op at import
    op = getattr(torch.ops.porter_kernels, name[: -len('_tpu')] + '_pallas')
    print(name, op.default._schema)
"""


@pytest.mark.slow  # torch 2.13 + jax + torch-tpu imported in a second python
@pytest.mark.tpu
def test_tpu_scaffolds_register_under_torch_tpu(project, tmp_path):  # noqa: F811
    python = tpu_python()
    out = _scaffold(project, tmp_path, "tpu")
    proc = _under_torch_tpu(python, _REGISTER_ALL, out)
    assert proc.returncode == 0, proc.stderr[-4000:]
    registered = [line for line in proc.stdout.splitlines() if "porter_kernels::" in line]
    assert len(registered) == len(_modules(out, "tpu")), proc.stdout
    # every argument (the Pallas op returns what the kernel writes, and may read it first: nineteenth read)
    assert any(
        "scale_kernel_pallas(Tensor x_ptr, Tensor out_ptr, SymInt n, float alpha) -> Tensor" in line
        for line in registered
    ), proc.stdout


def _nki_op_from_source(torch):
    """`nki_op` as torch_neuronx/nki_hop.py defines it (the parts that run at import)."""
    from torch._library.infer_schema import infer_schema

    def nki_op(name, fn=None, mutates_args={}):  # noqa: B006 - the source's own default
        def dec(fn):
            result = torch.library.custom_op(
                name, fn, mutates_args=mutates_args, schema=infer_schema(fn, mutates_args=mutates_args)
            )
            result.register_fake(fn)
            return result

        return dec if fn is None else dec(fn)

    return nki_op


@pytest.mark.torch
def test_nki_scaffold_registers_through_nki_op(project, tmp_path, monkeypatch):  # noqa: F811
    torch = need("torch")
    nki_op = _nki_op_from_source(torch)
    recorded = target_api("neuron").lookup("torch_neuronx.nki_op").member.signature
    assert [(p.name, p.kind, p.default is p.empty) for p in inspect.signature(nki_op).parameters.values()] == [
        (p.name, p.kind, p.default is p.empty) for p in recorded.parameters.values()
    ]
    nki = types.ModuleType("nki")
    nki.jit = lambda f: f
    runtime = types.ModuleType("torch_neuronx")
    runtime.nki_op = nki_op
    runtime.wrap_nki = lambda kernel: kernel
    for name, mod in {
        "nki": nki,
        "nki.isa": types.ModuleType("nki.isa"),
        "nki.language": types.ModuleType("nki.language"),
        "torch_neuronx": runtime,
    }.items():
        monkeypatch.setitem(sys.modules, name, mod)
    out = _scaffold(project, tmp_path, "neuron")
    monkeypatch.syspath_prepend(str(out))
    for path in _modules(out, "neuron"):
        __import__(path.stem)
        op = getattr(torch.ops.porter_kernels, path.stem[: -len("_neuron")] + "_nki")
        assert op.default._schema is not None
    schema = str(torch.ops.porter_kernels.scale_kernel_nki.default._schema)
    assert schema == "porter_kernels::scale_kernel_nki(Tensor x_ptr, Tensor(a1!) out_ptr, SymInt n, float alpha) -> ()"


_CUSTOM_OP = """from typing import List, Optional
import torch


@torch.library.triton_op("mylib::fancy18", mutates_args=())
def fancy18(x: torch.Tensor, mode: str, dims: List[int], xs: 'list[torch.Tensor]', scale: float = 1.0,
            flag: bool = False, out: Optional[torch.Tensor] = None, dt: torch.dtype = torch.float32) -> torch.Tensor:
    return x
"""


@pytest.mark.slow  # torch 2.13 + jax + torch-tpu imported in a second python
@pytest.mark.tpu
def test_a_custom_op_s_pallas_op_keeps_its_parameter_types_and_defaults(tmp_path):
    """The Pallas op of a custom op typed `mode: str`, `dims: List[int]` and `dt: torch.dtype` as
    `jax.Array` (and `flag: bool` an int), dropped the defaults, and passed the string to its kernel
    as an array; the torch op kept them since the seventeenth read (eighteenth read of issue 24)."""
    python = tpu_python()
    out = _tpu_scaffold_of(tmp_path, "ops.py", _CUSTOM_OP)
    proc = _under_torch_tpu(python, _REGISTER_ALL, out)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert (
        "porter_kernels::mylib__fancy18_pallas(Tensor x, str mode, SymInt[] dims, Tensor[] xs, float scale=1., "
        "bool flag=False, Tensor? out=None, ScalarType dt=" in proc.stdout
    ), proc.stdout
    assert (
        "pl.pallas_call(functools.partial(mylib__fancy18_pallas_kernel, mode=mode, dims=dims, scale=scale, "
        "flag=flag, dt=dt), out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x, xs, out)"
        in (out / "mylib__fancy18_tpu.py").read_text()
    )


_PALLAS_KERNELS = """import triton
import triton.language as tl


@triton.jit
def relu19_(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, tl.maximum(x, 0.0), mask=offs < n)


@triton.jit
def scale19(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * alpha, mask=offs < n)
"""

# each Pallas kernel's body written as a user writes it (the kernel only), the op's JAX function run
# under Pallas's interpreter, compared with the derived reference
_RUN_PALLAS = """import functools, importlib.util, torch, torch_tpu, jax.numpy as jnp, numpy as np
from jax.experimental import pallas as pl
import relu19_tpu, scale19_tpu, relu19_op, scale19_op
registered = {n: str(getattr(torch.ops.porter_kernels, n + "_pallas").default._schema) for n in ("relu19", "scale19")}
torch.tpu.pallas.jax_op = lambda name: (lambda f: f)  # the JAX functions themselves, loaded again
def raw(name):
    spec = importlib.util.spec_from_file_location(name + "_raw", name + "_tpu.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.pl = type("P", (), {"pallas_call": staticmethod(functools.partial(pl.pallas_call, interpret=True))})
    return module
relu, scale = raw("relu19"), raw("scale19")
relu.relu19_pallas_kernel = lambda x, o, *, n: o.__setitem__(..., jnp.maximum(x[...], 0.0))
scale.scale19_pallas_kernel = lambda x, out, o, *, n, alpha: o.__setitem__(..., x[...] * alpha)
x = torch.randn(1024)
want = x.clone()
relu19_op.relu19_reference(want, 1024)
got = relu.relu19_pallas(jnp.asarray(x.numpy()), 1024)
out = torch.empty(1024)
scale19_op.scale19_reference(x, out, 1024, 0.5)
got2 = scale.scale19_pallas(jnp.asarray(x.numpy()), jnp.zeros(1024, jnp.float32), 1024, 0.5)
print(registered, float(np.abs(np.asarray(got) - want.numpy()).max()), float(np.abs(np.asarray(got2) - out.numpy()).max()))
"""


@pytest.mark.slow  # torch 2.13 + jax + torch-tpu imported in a second python
@pytest.mark.tpu
def test_the_pallas_op_gives_its_kernel_what_the_triton_kernel_reads(tmp_path):
    """An in-place kernel's Pallas op took none of the tensor it updates (`relu19_pallas(n)`, its kernel
    given one output ref), and no kernel got the op's scalars (`alpha`): neither could be written.
    Now each tensor is passed in (the written ones also come back) and the rest reach the kernel as
    keywords; filled in as a user would and run by Pallas's interpreter, both equal their derived
    references (nineteenth read of issue 24)."""
    python = tpu_python()
    out = _tpu_scaffold_of(tmp_path, "k.py", _PALLAS_KERNELS)
    proc = _under_torch_tpu(python, _RUN_PALLAS, out)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert proc.stdout.split("}")[-1].split() == ["0.0", "0.0"], proc.stdout
    assert "porter_kernels::relu19_pallas(Tensor x_ptr, SymInt n) -> Tensor" in proc.stdout, proc.stdout
    assert (
        "porter_kernels::scale19_pallas(Tensor x_ptr, Tensor out_ptr, SymInt n, float alpha) -> Tensor" in proc.stdout
    )
