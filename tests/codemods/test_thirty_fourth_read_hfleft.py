"""The thirty-fourth read's leftovers of hfread (hfleft): FlexAttention on PyTorch/XLA, and imports
that rules/cuda_only/ holds evidence for but KERN003's library table had no row for, each checked
against the real package (its wheel, its build files) or torch_xla itself."""

from __future__ import annotations

import pytest


def _port(tmp_path, text, target="xla"):
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    (tmp_path / "m.py").write_text(text)
    results = run([tmp_path], Settings(target=target), jobs=1, cache=False)[0]
    result = next(r for r in results if r.path.endswith("m.py"))
    return [(f.code, f.start.line) for f in result.findings]


FLEX = """import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention
import torch.nn.attention.flex_attention as fa

compiled = torch.compile(flex_attention, backend="openxla")


def attend(q, k, v, causal):
    mask = create_block_mask(causal, 1, 1, q.shape[-2], k.shape[-2], device=q.device)
    return flex_attention(q, k, v, block_mask=mask)


def other(q, on_xla):
    if on_xla:
        return torch.nn.functional.scaled_dot_product_attention(q, q, q)
    else:
        return fa.flex_attention(q, q, q)
"""


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_flex_attention_is_reported_on_xla_only(tmp_path, target):
    """torch 2.9's `flex_attention` raises `ValueError: FlexAttention is only supported on CUDA, CPU
    or HPU devices` on an XLA tensor, eager and under `torch.compile(..., backend="openxla")`, and
    `create_block_mask` on the XLA device fails too (seen on XLA:CPU, torch_xla 2.9): lint said
    nothing. Now XLA008 on xla, at the calls and where it is passed on; not the import, not the
    branch an earlier test for XLA did not take. torch_tpu 0.2.0 patches FlexAttention for `tpu`
    tensors and TorchNeuron runs it, so tpu and neuron (the controls) get nothing."""
    found = [line for code, line in _port(tmp_path, FLEX, target) if code == "XLA008"]
    assert found == ([5, 9, 10] if target == "xla" else [])


@pytest.mark.parametrize(
    "statement",
    [
        "import mslk",
        "from smdistributed.modelparallel import torch as smp",
        "import smdistributed.dataparallel.torch.torch_smddp",
        "import nixl_ep",
        "import nccl",
        "from nccl import ep",
        "import cuda",
        "from cuda import nvrtc",
        "import cuda.pathfinder",
        "import hybrid_ep",
        "import hybrid_ep_cpp",
        "from lmcache.v1.gpu_connector.gpu_connectors import VLLMPagedMemGPUConnectorV2",
        "from lmcache.v1.gpu_connector import VLLMPagedMemLayerwiseGPUConnector",
    ],
)
def test_an_import_of_a_cuda_only_package_with_evidence_is_kern003(tmp_path, statement):
    """Each has its evidence in rules/cuda_only/ (read again from its wheel where PyPI has one:
    nccl4py 0.6.0's `nccl.core` takes `cuda.core`'s Device and Stream; nixl 1.5.2's `nixl_ep` loads
    only `nixl_ep_cu12`/`_cu13`; cuda-python 13.4.4 is cuda-bindings, cuda-core, cuda-pathfinder;
    lmcache 0.5.6 defines the connectors in `gpu_connectors.py`, 0.3.3 in `gpu_connector.py`), yet
    the import alone got no finding. KERN003 now; `from deep_ep import Buffer` (the control) always was."""
    found = _port(tmp_path, f"{statement}\nfrom deep_ep import Buffer\n", "tpu")
    assert ("KERN003", 2) in found
    assert ("KERN003", 1) in found


def test_lmcache_itself_and_its_device_dispatch_are_not_cuda_only(tmp_path):
    """LMCache has connectors for xpu, hpu and musa and a TorchNeuron platform: `import lmcache` and
    its dispatching `CreateGPUConnector` stay unreported (the control of the rows above)."""
    text = "import lmcache\nfrom lmcache.v1.gpu_connector import CreateGPUConnector\n"
    assert [c for c, _ in _port(tmp_path, text, "neuron") if c == "KERN003"] == []


def test_the_lmcache_evidence_names_the_path_its_version_defines():
    """rules/cuda_only/documented.toml read lmcache 0.5.6 but named 0.3.3's paths only
    (`lmcache.v1.gpu_connector.VLLMPagedMemGPUConnectorV2`): in 0.5.6 the classes are in
    `gpu_connector/gpu_connectors.py`, so the guard analysis' seeds missed the real import."""
    from porter.config.cuda_packages import cuda_packages

    imports = {m for p in cuda_packages() for m in p.imports}
    assert "lmcache.v1.gpu_connector.gpu_connectors.VLLMPagedMemGPUConnectorV3" in imports
    assert "lmcache.v1.gpu_connector.VLLMPagedMemGPUConnectorV2" in imports


SWITCH = """import lightning as L
import torch


def pick():
    if torch.cuda.is_available():
        accelerator = "cuda"
    elif torch.backends.mps.is_available():
        accelerator = "mps"
    else:
        accelerator = "cpu"
    return torch.zeros(2, device=torch.device(accelerator))


def moved(x):
    if torch.cuda.is_available():
        accelerator = "cuda"
    elif torch.backends.mps.is_available():
        accelerator = "mps"
    else:
        accelerator = "cpu"
    return x.to(f"{accelerator}:0")


def make():
    if torch.cuda.is_available():
        accelerator = "cuda"
    elif torch.backends.mps.is_available():
        accelerator = "mps"
    else:
        accelerator = "cpu"
    return L.Fabric(accelerator=accelerator, devices=1)
"""


@pytest.mark.parametrize("target", ["tpu", "neuron", "xla"])
def test_a_switch_whose_accelerator_is_given_to_torch_as_a_device_gets_its_branch(tmp_path, target):
    """hfread's D4 read a switch by the name it sets: `accelerator = "cuda"` / `"mps"` / `"cpu"`
    was "a name in the vocabulary of `accelerator=` (Lightning's accelerators), not a torch device"
    even where the function gives it to `torch.device(accelerator)` or `x.to(f"{accelerator}:0")`,
    and got no target branch: a wrong verdict. Where the name goes to torch as a device the switch
    gets its branch (BACK002 says so); litgpt's `L.Fabric(accelerator=accelerator)` (the control)
    is still reported with no branch."""
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    (tmp_path / "m.py").write_text(SWITCH)
    result = run([tmp_path], Settings(target=target), jobs=1, cache=False)[0][0]
    new = (result.new_source or b"").decode()
    messages = {f.start.line: f.message for f in result.findings if f.code == "BACK002"}
    assert "vocabulary" not in messages[6] and "vocabulary" not in messages[16]
    assert "vocabulary" in messages[26]
    assert new.count("elif ") == 5  # mps in each, and a target branch in pick() and moved(), none in make()


GUARD = """import torch

_SUPPORTS_FLEX_ATTENTION = torch.cuda.is_available() and torch.cuda.get_device_capability() >= (7, 5)
"""
TORCHTUNE = """import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

from pkg.utils._import_guard import _SUPPORTS_FLEX_ATTENTION


def packed_block_causal_mask(document_ids, mask_mod):
    if _SUPPORTS_FLEX_ATTENTION:
        document_ids = document_ids.to("cuda")
        return create_block_mask(mask_mod, 1, None, 64, 64, device="cuda")
    return torch.ones(64, 64, dtype=torch.bool).tril()


attend = torch.compile(flex_attention, dynamic=False)
"""


def test_flex_attention_in_code_that_only_runs_on_cuda_is_left_to_the_guard(tmp_path):
    """torchtune 0.6.1 (`modules/attention_utils.py`) makes its BlockMask only where
    `_SUPPORTS_FLEX_ATTENTION` (`utils/_import_guard.py`: CUDA and compute capability 7.5) holds, with
    `document_ids.to("cuda")`: code XLA never runs (GUARD003 says so), where XLA008 said it raises on
    XLA. It stays out of it now; the unguarded line (the control) is reported."""
    from tests.helpers import port_files, write_files

    write_files(tmp_path, {"pkg/__init__.py": "", "pkg/utils/__init__.py": "", "pkg/utils/_import_guard.py": GUARD})
    write_files(tmp_path, {"pkg/attention_utils.py": TORCHTUNE})
    found = [(f.code, f.start.line) for f in port_files(tmp_path, "xla")["pkg/attention_utils.py"][1]]
    assert [line for code, line in found if code == "XLA008"] == [14]
    assert ("GUARD003", 8) in found
