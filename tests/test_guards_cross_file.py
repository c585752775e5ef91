"""CUDA-only code imported from another module of the project (torchtitan 0.3.0's
minimal_async_ep: `api.py` registers custom ops over Triton launchers from `kernels.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from porter.analysis import cuda_only_index
from porter.analysis.kinds import CudaOnlyTag
from porter.pipeline.runner import run
from porter.config.settings import Settings
from tests.helpers import port_files, write_files

KERNELS = """
import torch
import triton
import triton.language as tl


@triton.jit
def _invert_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    pass


def invert_flat_indices_kernel(indices, num_rows):
    out = torch.empty_like(indices)
    _invert_kernel[(triton.cdiv(num_rows, 128),)](indices, out, num_rows, BLOCK=128)
    return out


def pad_rows(x, rows):
    return torch.nn.functional.pad(x, (0, 0, 0, rows))
"""

API = """
import torch

from pkg.ep.kernels import invert_flat_indices_kernel, pad_rows


@torch.library.custom_op("ep::dispatch", mutates_args=(), device_types="cuda")
def dispatch_op(rows: torch.Tensor, num_rows: int) -> torch.Tensor:
    return invert_flat_indices_kernel(rows, num_rows=num_rows)


@torch.library.custom_op("ep::pad", mutates_args=(), device_types="cuda")
def pad_op(x: torch.Tensor, rows: int) -> torch.Tensor:
    return pad_rows(x, rows)


def permute(rows, num_rows):
    if not rows.is_cuda:
        return torch.argsort(rows)
    return invert_flat_indices_kernel(rows, num_rows)
"""

# the same, imported relatively and under another name
API_RELATIVE = API.replace(
    "from pkg.ep.kernels import invert_flat_indices_kernel, pad_rows",
    "from .kernels import invert_flat_indices_kernel as invert, pad_rows",
).replace("return invert_flat_indices_kernel(", "return invert(")


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def _port(root: Path, target: str, **kw) -> dict[str, object]:
    results, _ = run([root], Settings(target=target), jobs=1, **kw)
    return {r.path: r for r in results}


def _code(result) -> str:
    return (result.new_source or result.original_source).decode()


@pytest.mark.parametrize("target", ["neuron", "tpu", "xla"])
@pytest.mark.parametrize("api", [API, API_RELATIVE], ids=["absolute", "relative"])
def test_custom_op_and_guard_over_an_imported_triton_launcher_stay_cuda(tmp_path, target, api):
    write_files(tmp_path / "pkg", {"__init__.py": "", "ep/__init__.py": "", "ep/kernels.py": KERNELS, "ep/api.py": api})
    out = _port(tmp_path / "pkg", target, cache=False)["pkg/ep/api.py"]
    code = _code(out)
    assert '@torch.library.custom_op("ep::dispatch", mutates_args=(), device_types="cuda")' in code
    assert "if not rows.is_cuda:" in code
    kern = [f for f in out.findings if f.code == "KERN005"]
    assert len(kern) == 1 and "(uses `triton`), in pkg/ep/kernels.py" in kern[0].message
    # the portable helper from the same Triton module is not CUDA-only: its op is ported
    assert '@torch.library.custom_op("ep::pad", mutates_args=(), device_types="cuda")' not in code


def test_the_facts_are_cached_and_go_stale_with_the_kernel_module(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    write_files(tmp_path / "pkg", {"__init__.py": "", "ep/__init__.py": "", "ep/kernels.py": KERNELS, "ep/api.py": API})
    first = _port(tmp_path / "pkg", "neuron", cache=True, cache_dir=cache)["pkg/ep/api.py"]
    assert 'device_types="cuda"' in _code(first)

    def no_scan(*args, **kwargs):
        raise AssertionError("a warm run read the project for CUDA-only imports")

    with monkeypatch.context() as m:
        m.setattr(cuda_only_index, "cuda_only_imports", no_scan)
        warm = _port(tmp_path / "pkg", "neuron", cache=True, cache_dir=cache)["pkg/ep/api.py"]
    assert _code(warm) == _code(first)
    # the launcher becomes plain PyTorch: api.py (unchanged) is ported again, op and guard
    write_files(
        tmp_path / "pkg",
        {
            "ep/kernels.py": "import torch\n\n\ndef invert_flat_indices_kernel(indices, num_rows):\n    return torch.argsort(indices)\n\n\ndef pad_rows(x, rows):\n    return x\n"
        },
    )
    after = _code(_port(tmp_path / "pkg", "neuron", cache=True, cache_dir=cache)["pkg/ep/api.py"])
    assert 'device_types="cuda"' not in after and "rows.is_cuda" not in after


def test_porter_kernels_lists_the_op_over_an_imported_launcher(tmp_path):
    """`porter kernels` run inside the package (`from pkg.ep.kernels import` while the
    paths it reads start at `ep/`) lists the op with the chain into the other module."""
    from porter.kernels.inventory import scan

    write_files(tmp_path / "pkg", {"__init__.py": "", "ep/__init__.py": "", "ep/kernels.py": KERNELS, "ep/api.py": API})
    ops = {k.name: k for k in scan(tmp_path / "pkg").kernels if k.kind == "custom-op"}
    assert set(ops) == {"ep::dispatch"}
    assert "(uses `triton`), in ep/kernels.py" in ops["ep::dispatch"].detail


def test_editing_a_body_elsewhere_keeps_the_cached_facts(tmp_path, monkeypatch):
    """The facts are keyed by what the pass reads: files that may hold CUDA-only code whole,
    only the `from ... import` lines of the others."""
    cache = tmp_path / "cache"
    util = "import math\n\n\ndef area(r):\n    return math.pi * r * r\n"
    write_files(tmp_path / "pkg", {"ep/kernels.py": KERNELS, "ep/api.py": API, "util.py": util})
    _port(tmp_path / "pkg", "neuron", cache=True, cache_dir=cache)
    write_files(tmp_path / "pkg", {"util.py": util.replace("r * r", "r ** 2")})

    def no_scan(*args, **kwargs):
        raise AssertionError("the facts were worked out again")

    monkeypatch.setattr(cuda_only_index, "cuda_only_imports", no_scan)
    again = _port(tmp_path / "pkg", "neuron", cache=True, cache_dir=cache)["pkg/ep/api.py"]
    assert 'device_types="cuda"' in _code(again)
    write_files(tmp_path / "pkg", {"util.py": "from pkg.ep.kernels import pad_rows\n" + util})
    with pytest.raises(AssertionError, match="worked out again"):
        _port(tmp_path / "pkg", "neuron", cache=True, cache_dir=cache)


# shaped like trl 1.16.0: the package `kernels/__init__.py` re-exports a Triton launcher under
# an availability test, `trainer/utils.py` imports it from the package and decides with a
# predicate that sets a flag over a tuple of the devices the kernel runs on and returns it
REEXPORT = {
    "__init__.py": "",
    "kernels/__init__.py": """
        from transformers.utils import is_triton_available

        if is_triton_available():
            from .fused import fused_logprob
        """,
    "kernels/fused.py": KERNELS.replace(
        "def invert_flat_indices_kernel(indices, num_rows):", "def fused_logprob(indices, num_rows):"
    ),
    "trainer/__init__.py": "",
    "trainer/utils.py": """
        import torch
        from transformers.utils import is_triton_available

        if is_triton_available():
            from ..kernels import fused_logprob as _fused_logprob


        def _supports_kernel(logits, index=None):
            supported = (
                logits.device.type in ("cuda", "xpu")
                and logits.stride(-1) == 1
            )
            if index is not None:
                supported = supported and index.device == logits.device
            return supported


        def selective_log_softmax(logits, index):
            if is_triton_available() and _supports_kernel(logits, index):
                return _fused_logprob(logits, index)
            return torch.gather(logits.log_softmax(-1), -1, index.unsqueeze(-1)).squeeze(-1)
        """,
}


@pytest.mark.parametrize("target", ["neuron", "tpu", "xla"])
def test_a_launcher_re_exported_by_a_package_keeps_its_device_tuple(tmp_path, target):
    write_files(tmp_path / "pkg", REEXPORT)
    out = _port(tmp_path / "pkg", target, cache=False)["pkg/trainer/utils.py"]
    code = _code(out)
    assert 'logits.device.type in ("cuda", "xpu")\n' in code
    assert code == out.original_source.decode()
    guards = [f for f in out.findings if f.code == "GUARD001"]
    assert len(guards) == 1
    assert "through `_supports_kernel()` in `selective_log_softmax`" in guards[0].message
    assert "uses `fused_logprob` (uses `triton`), in pkg/kernels/fused.py" in guards[0].message
    assert not any(f.code in ("BACK001", "DEV002") for f in out.findings)


def test_re_exports_are_followed_through_two_packages():
    files = [
        ("pkg/kernels/fused.py", KERNELS.encode()),
        ("pkg/kernels/__init__.py", b"from .fused import invert_flat_indices_kernel\n"),
        ("pkg/__init__.py", b"from .kernels import invert_flat_indices_kernel as invert\n"),
        ("app.py", b"from pkg import invert\n"),
    ]
    facts = cuda_only_index.cuda_only_imports(files, "neuron")
    assert {f[1] for f in facts["app.py"]} == {"invert"}
    assert all(f[3][1:] == (CudaOnlyTag.RUNS,) for f in facts["app.py"])
    assert facts["app.py"][0][3][0].endswith("in pkg/kernels/fused.py")


FLAG_MODULE = """
import torch

_SUPPORTS_FLEX_ATTENTION = torch.cuda.is_available() and torch.cuda.get_device_capability() >= (7, 5)
"""

FLAG_USER = """
import torch

from pkg.guard import _SUPPORTS_FLEX_ATTENTION


def packed_mask(ids):
    if _SUPPORTS_FLEX_ATTENTION:
        ids = ids.to("cuda")
        return ids
    return ids.to("cuda")
"""


def test_the_branch_behind_an_imported_cuda_flag_is_cuda_only(tmp_path):
    """torchtune's `_SUPPORTS_FLEX_ATTENTION`, set from a CUDA capability query in another
    module: true only on CUDA, so the flex path stays CUDA's; the target takes the other one."""
    write_files(tmp_path / "pkg", {"__init__.py": "", "guard.py": FLAG_MODULE, "attn.py": FLAG_USER})
    out = _port(tmp_path / "pkg", "neuron", cache=False)["pkg/attn.py"]
    code = _code(out)
    assert code == FLAG_USER.lstrip().replace('return ids.to("cuda")', 'return ids.to("neuron")'), code
    said = [f for f in out.findings if f.code == "GUARD003"]
    assert said and "_SUPPORTS_FLEX_ATTENTION" in said[0].message and "DEV002" in said[0].message


def test_a_cuda_device_tested_beside_an_imported_capability_question_stays(tmp_path):
    """torchao's tensor conversion: `_is_device("cuda", t.device) and is_sm_at_least_90()` asks for
    a CUDA GPU of an architecture (sm90); the device string the chain tests became the target's."""
    write_files(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/utils.py": """
                import torch


                def _is_device(target, device):
                    return torch.device(device).type == target


                def is_sm_at_least_90():
                    return torch.cuda.is_available() and torch.cuda.get_device_capability() >= (9, 0)
            """,
            "pkg/api.py": """
                from pkg.utils import _is_device, is_sm_at_least_90


                def convert(tensor, ok):
                    if ok and _is_device("cuda", tensor.device) and is_sm_at_least_90():
                        return tensor * 2
                    if _is_device("cuda", tensor.device):
                        return tensor
                    return None
            """,
        },
    )
    code, findings = port_files(tmp_path, "neuron")["pkg/api.py"]
    assert 'if ok and _is_device("cuda", tensor.device) and is_sm_at_least_90():' in code, code
    assert 'if _is_device("neuron", tensor.device):' in code, code
    assert any(f.code == "GUARD001" and "is_sm_at_least_90()" in f.message for f in findings)
