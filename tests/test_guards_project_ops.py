"""The project's own compiled ops that have a CUDA kernel only (vLLM 0.34.0: `csrc/` registers
`sm100_cutlass_mla_decode` in a `STABLE_TORCH_LIBRARY_IMPL(_C, CUDA, m)` block and nowhere
else, `vllm/_custom_ops.py` wraps `torch.ops._C.sm100_cutlass_mla_decode`, and the CUTLASS MLA
backend calls `ops.sm100_cutlass_mla_decode` after `import vllm._custom_ops as ops`), and the
class whose instances only that code uses (its workspace, allocated on "cuda")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from porter.analysis import native_ops
from porter.config.settings import Settings
from porter.pipeline.runner import run
from tests.helpers import write_files

CUDA_BINDINGS = """
#include <torch/library.h>

TORCH_LIBRARY_FRAGMENT(_C, ops) {
  ops.def("mla_decode(Tensor! out, Tensor q, Tensor workspace) -> ()");
  ops.def("rms_norm(Tensor! out, Tensor x, float eps) -> ()");
  ops.def("workspace_size(int batch) -> int");
}

TORCH_LIBRARY_IMPL(_C, CUDA, ops) {
  ops.impl("rms_norm", &rms_norm);
}
"""

MLA_KERNEL = """
void mla_decode(torch::Tensor& out, torch::Tensor const& q, torch::Tensor const& workspace) {}

STABLE_TORCH_LIBRARY_IMPL(_C, CUDA, m) {
  m.impl("mla_decode", TORCH_BOX(&mla_decode));
}

STABLE_TORCH_LIBRARY_IMPL(_C, CompositeExplicitAutograd, m) {
  m.impl("workspace_size", TORCH_BOX(&workspace_size));
}
"""

# the CPU build names its library by a macro: its registrations count for every namespace
CPU_BINDINGS = """
TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("rms_norm(Tensor! out, Tensor x, float eps) -> ()");
  ops.impl("rms_norm", torch::kCPU, &rms_norm);
}
"""

CUSTOM_OPS = """
import torch


def mla_decode(out, q, workspace):
    torch.ops._C.mla_decode(out, q, workspace)


def rms_norm(out, x, eps):
    torch.ops._C.rms_norm(out, x, eps)


def workspace_size(batch):
    return torch.ops._C.workspace_size(batch)
"""

BACKEND = """
import torch

import pkg._custom_ops as ops


class Workspace:
    def __init__(self, size):
        self._buf = torch.empty(size, device="cuda", dtype=torch.uint8)

    def get_buf(self):
        return self._buf

    def ensure_size(self, batch):
        size = ops.workspace_size(batch)
        if self._buf.shape[0] < size:
            self._buf.resize_(size)


g_workspace = Workspace(128 * 1024 * 1024)


class Impl:
    def __init__(self, scale):
        self.scale = scale
        self._workspace = g_workspace

    def _decode(self, q, workspace):
        out = torch.empty_like(q)
        ops.mla_decode(out, q, workspace)
        return out

    def forward(self, q):
        self._workspace.ensure_size(q.shape[0])
        return self._decode(q, self._workspace.get_buf())
"""


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def _project(tmp_path: Path, backend: str = BACKEND) -> None:
    write_files(
        tmp_path,
        {
            "csrc/torch_bindings.cpp": CUDA_BINDINGS,
            "csrc/attention/mla_kernel.cu": MLA_KERNEL,
            "csrc/cpu/torch_bindings.cpp": CPU_BINDINGS,
            "pkg/__init__.py": "",
            "pkg/_custom_ops.py": CUSTOM_OPS,
            "pkg/backend.py": backend,
        },
    )


def _port(target: str):
    results, _ = run([Path(".")], Settings(target=target), jobs=1, cache=False)
    return {r.path: r for r in results}


def _code(result) -> str:
    return (result.new_source or result.original_source).decode()


def test_registrations_are_read_with_their_dispatch_keys():
    assert native_ops.registrations(MLA_KERNEL.encode()) == [
        ("_C", "mla_decode", "CUDA"),
        ("_C", "workspace_size", "CompositeExplicitAutograd"),
    ]
    assert native_ops.registrations(CPU_BINDINGS.encode()) == [(None, "rms_norm", "CPU")]
    ops = native_ops.cuda_only_ops(
        [("a.cpp", CUDA_BINDINGS.encode()), ("b.cu", MLA_KERNEL.encode()), ("c.cpp", CPU_BINDINGS.encode())]
    )
    # rms_norm has the CPU build's kernel too; workspace_size runs on every device
    assert list(ops) == ["_C"] and list(ops["_C"]) == ["mla_decode"]
    assert "registered for CUDA in b.cu" in ops["_C"]["mla_decode"]


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_a_workspace_only_a_cuda_only_op_uses_stays_on_cuda(tmp_path, target):
    _project(tmp_path)
    out = _port(target)["pkg/backend.py"]
    code = _code(out)
    assert 'torch.empty(size, device="cuda", dtype=torch.uint8)' in code
    kept = [f for f in out.findings if f.code == "GUARD004"]
    assert len(kept) == 1 and "class `Workspace` only serves CUDA-only code" in kept[0].message
    assert "`Impl.forward` (through `self._workspace`)" in kept[0].message
    assert "`_C::mla_decode` has a CUDA kernel only" in kept[0].message


def test_a_workspace_for_an_op_with_a_cpu_kernel_is_ported(tmp_path):
    # the same backend over rms_norm, which the CPU build registers too: not CUDA-only
    _project(tmp_path, BACKEND.replace("ops.mla_decode(out, q, workspace)", "ops.rms_norm(out, q, workspace)"))
    out = _port("neuron")["pkg/backend.py"]
    assert 'torch.empty(size, device="neuron", dtype=torch.uint8)' in _code(out)
    assert not [f for f in out.findings if f.code == "GUARD004"]


def test_a_workspace_also_used_outside_cuda_only_code_is_ported(tmp_path):
    # another method reads the workspace on every device: the class does not serve CUDA alone
    _project(tmp_path, BACKEND + "\n    def reset(self):\n        self._workspace.get_buf().zero_()\n")
    out = _port("neuron")["pkg/backend.py"]
    assert 'torch.empty(size, device="neuron", dtype=torch.uint8)' in _code(out)


PLATFORM_LAYER = """
import torch
from pkg.platforms import current_platform


class SwigluClamp(torch.nn.Module):
    def __init__(self, limit):
        super().__init__()
        self.limit = limit
        if current_platform.is_cuda_alike():
            self.op = torch.ops._C.mla_decode
"""

# a device abstraction of the project's own: a class per device under one base
COMMUNICATORS = """
class DeviceCommunicatorBase:
    pass


class CudaCommunicator(DeviceCommunicatorBase):
    pass


class CpuCommunicator(DeviceCommunicatorBase):
    pass
"""


def test_a_platform_test_over_a_cuda_only_op_is_still_reported(tmp_path):
    # the guards do not judge a platform's own test: it stays CUDA's case, said (BACK008), not silent
    _project(tmp_path)
    write_files(tmp_path, {"pkg/layer.py": PLATFORM_LAYER, "pkg/communicators.py": COMMUNICATORS})
    out = _port("neuron")["pkg/layer.py"]
    assert "if current_platform.is_cuda_alike():" in _code(out)
    assert [f.code for f in out.findings if f.code.startswith(("BACK", "GUARD"))] == ["BACK008"]


def test_a_warm_run_reads_no_unchanged_native_source_and_sees_an_edit(tmp_path, monkeypatch):
    """The stat index keeps each C++/CUDA source's sha256 and whether it registers ops, so a
    warm run keys the CUDA-only facts without reading them (the 1.2M-line benchmark's 414);
    an edit that gives the op a CPU kernel is seen, as a run without a cache sees it."""
    from porter.pipeline import runner, statindex

    monkeypatch.setattr(statindex, "RACY_NS", 0)  # trust the files just written
    _project(tmp_path)
    cache = tmp_path.parent / f"{tmp_path.name}-cache"

    def port() -> str:
        results, _ = run([Path(".")], Settings(target="neuron"), jobs=1, cache_dir=cache)
        return _code(next(r for r in results if r.path == "pkg/backend.py"))

    assert 'device="cuda"' in port()
    real = runner.read_regular_stat

    def refuse(path, *a, **k):
        if str(path).endswith(native_ops.SUFFIXES):
            pytest.fail(f"a warm run read {path}")
        return real(path, *a, **k)

    with monkeypatch.context() as m:
        m.setattr(native_ops, "read", lambda *a: pytest.fail("a warm run read the native sources"))
        m.setattr(runner, "read_regular_stat", refuse)
        assert 'device="cuda"' in port()
    cpu = tmp_path / "csrc/cpu/torch_bindings.cpp"
    cpu.write_text(CPU_BINDINGS.replace("}", '  ops.impl("mla_decode", torch::kCPU, &mla_decode);\n}'))
    assert 'device="neuron"' in port()
    assert 'device="neuron"' in _code(_port("neuron")["pkg/backend.py"])


@pytest.mark.parametrize("folder", [b"csrc\xff", b"c\\src"])
@pytest.mark.parametrize("cache", [False, True])
def test_a_native_source_in_a_folder_named_with_odd_bytes_is_read(tmp_path, folder, cache):
    """The sources are named as every output shows a name (`\\xNN` for a byte that is not UTF-8,
    a backslash doubled), and were read under that name, which names no file: the CUDA-only op
    was not seen and the workspace was ported (DEV002 where GUARD004 keeps it), in silence
    (seventeenth read). With the stat index too."""
    try:
        (tmp_path / os.fsdecode(folder)).mkdir()
    except OSError:
        pytest.skip("this file system refuses the name")
    _project(tmp_path)
    (tmp_path / "csrc" / "attention" / "mla_kernel.cu").rename(tmp_path / os.fsdecode(folder) / "mla_kernel.cu")
    store = tmp_path.parent / f"{tmp_path.name}-cache"
    for _ in range(2 if cache else 1):  # cold, then warm
        results, _ = run([Path(".")], Settings(target="neuron"), jobs=1, cache=cache, cache_dir=store)
        out = next(r for r in results if r.path == "pkg/backend.py")
        assert 'device="cuda"' in _code(out)
        assert [f.code for f in out.findings] == ["GUARD004"], [f.message for f in out.findings]


GUARDED = "import torch\n{imp}\n\n\ndef fwd(out, q):\n    return {call}(out, q, q)\n\n\ndef model(out, q):\n    if q.is_cuda:\n        return fwd(out, q)\n    return q + 1\n"


def test_each_import_form_of_a_project_op_guards_in_one_wording(tmp_path):
    # `import pkg._custom_ops` then `pkg._custom_ops.mla_decode(...)` was no CUDA-only use: `q.is_cuda`
    # became `q.device.type == "xla"`, sending XLA tensors to a CUDA-only op (the aliased form, `import
    # pkg._custom_ops as ops`, and `from pkg import _custom_ops` were guarded); the `→` wording of the
    # aliased and the `torch.ops._C.op` forms was pinned by no test (twenty-fifth read's leftover)
    forms = {
        "alias": ("import pkg._custom_ops as ops", "ops.mla_decode"),
        "from_import": ("from pkg import _custom_ops", "_custom_ops.mla_decode"),
        "dotted": ("import pkg._custom_ops", "pkg._custom_ops.mla_decode"),
        "named": ("from pkg._custom_ops import mla_decode", "mla_decode"),
        "torch_ops": ("", "torch.ops._C.mla_decode"),
    }
    _project(tmp_path)
    write_files(tmp_path, {f"pkg/{n}.py": GUARDED.format(imp=i, call=c) for n, (i, c) in forms.items()})
    ported = _port("xla")
    op = "(the project's op `_C::mla_decode` has a CUDA kernel only: registered for CUDA in csrc/attention/mla_kernel.cu, for no other device)"
    wrapped = f"`mla_decode` (uses `torch.ops._C.mla_decode` {op}), in pkg/_custom_ops.py"
    for name in forms:
        result = ported[os.path.join("pkg", f"{name}.py")]
        (finding,) = result.findings
        used = f"`torch.ops._C.mla_decode` {op}" if name == "torch_ops" else wrapped
        assert finding.code == "GUARD001", (name, finding.message)
        assert f"keeps CUDA-only code (uses `fwd` → {used}) away" in finding.message, (name, finding.message)
        assert "if q.is_cuda:" in _code(result), name


# torch's older registration API (torch-sparse 0.6.18's `csrc/spmm.cpp`), chained, and with options
OLD_API = """
static auto registry = torch::RegisterOperators()
                           .op("torch_sparse::spmm_sum", &spmm_sum)
                           .op("torch_sparse::spmm_mean", &spmm_mean);
static auto cuda_only = torch::RegisterOperators().op(
    torch::RegisterOperators::options().schema("torch_sparse::fused(Tensor x) -> Tensor")
        .kernel<decltype(fused), &fused>(c10::DispatchKey::CUDA));
"""
CUDA_SUM = """
TORCH_LIBRARY_IMPL(torch_sparse, CUDA, m) {
  m.impl("spmm_sum", &spmm_sum_cuda);
}
"""


def test_the_old_registration_api_is_read():
    # `RegisterOperators().op("ns::op", &fn)` was not read: `spmm_sum`, which it gives a kernel every
    # device runs, was "a CUDA kernel only" beside a CUDA implementation, and `fused` (its options'
    # `DispatchKey::CUDA`) was no op's
    assert native_ops.registrations(OLD_API.encode()) == [
        ("torch_sparse", "spmm_sum", "any"),
        ("torch_sparse", "spmm_mean", "any"),
        ("torch_sparse", "fused", "CUDA"),
    ]
    ops = native_ops.cuda_only_ops([("spmm.cpp", OLD_API.encode()), ("spmm_cuda.cu", CUDA_SUM.encode())])
    assert {ns: list(found) for ns, found in ops.items()} == {"torch_sparse": ["fused"]}


@pytest.mark.parametrize(
    "text",
    [
        "// registered with torch::RegisterOperators, see ops.cpp\n",
        "static auto r = torch::RegisterOperators().op(kSchema, &fn);\n",  # a schema not spelled here
    ],
)
def test_a_registeroperators_statement_of_no_op_porter_reads_is_none(tmp_path, monkeypatch, text):
    # a strict zip of its ops (none) and their ends (one) raised ValueError: lint said "internal
    # error", rewrite and kernels printed a traceback (twenty-seventh read)
    from typer.testing import CliRunner

    from porter.cli import app

    assert native_ops.registrations(text.encode()) == []
    write_files(tmp_path, {"csrc/ops.cpp": text, "m.py": "import torch\ny = torch.ops.ns.op(torch.zeros(1))\n"})
    monkeypatch.chdir(tmp_path)
    for args in (["lint", "-t", "xla", "--no-cache", "."], ["kernels", "."]):
        out = CliRunner().invoke(app, args)
        assert out.exit_code == 0 and "internal error" not in out.output, out.output  # (a traceback: exit 1)
