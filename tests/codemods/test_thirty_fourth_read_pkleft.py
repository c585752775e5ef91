"""The thirty-fourth read's leftovers of real packages (pkleft): torchtitan 0.3.0's Helion RoPE on tpu,
mmengine 0.10.7's autocast dtype, a random generator on a device from a variable on xla, checked against
the libraries' own sources (helion 1.5.1, torch 2.9, torch_xla 2.9)."""

from __future__ import annotations

import pytest


def _port(tmp_path, text, target="tpu"):
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    (tmp_path / "m.py").write_text(text)
    result = run([tmp_path], Settings(target=target), jobs=1, cache=False)[0][0]
    new = (result.new_source or result.original_source or b"").decode()
    return new, [(f.code, f.start.line, f"{f.message} {f.advice}") for f in result.findings]


# torchtitan 0.3.0 overrides/helion_rope.py, cut down: Helion imported as an optional dependency,
# its kernel wrapped in a custom op registered for CUDA, the op reached past an `is_cuda` gate
HELION_ROPE = """from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    import helion
    import helion.language as hl
else:
    try:
        import helion
        import helion.language as hl

        _HELION_IMPORT_ERROR = None
    except ImportError as e:
        _HELION_IMPORT_ERROR = e

if _HELION_IMPORT_ERROR is None:

    @helion.kernel(config=helion.Config(block_sizes=[1, 16], num_warps=8), static_shapes=True)
    def _scale(x: torch.Tensor) -> torch.Tensor:
        out = torch.empty(x.size(), device=x.device, dtype=x.dtype)
        for tile in hl.tile(x.size()):
            out[tile] = x[tile] * 2
        return out

    @torch.library.custom_op("ns::scale", mutates_args=(), device_types="cuda")
    def scale(x: torch.Tensor) -> torch.Tensor:
        return _scale(x)


def _eligible(x: torch.Tensor, y: torch.Tensor) -> bool:
    return x.is_cuda and y.is_cuda and x.device == y.device


if _HELION_IMPORT_ERROR is None:

    def apply(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor | None:
        if not _eligible(x, y):
            return None
        return scale(x)
"""


@pytest.mark.parametrize("imports", ["optional", "plain"])
def test_a_helion_kernel_that_names_no_pallas_backend_stays_cuda_on_tpu(tmp_path, imports):
    """Helion 1.5.1 reaches TorchTPU only through its Pallas backend, which a kernel must ask for
    (`backend="pallas"` or HELION_BACKEND=pallas; `Settings.backend` defaults to "triton"). porter
    counted the package's `torch_tpu` import as a path for every kernel: on tpu torchtitan's custom
    ops became `device_types="tpu"` and their `is_cuda` gate `is_tpu`, sending TorchTPU tensors into
    Triton. Now the module stays as it is, as on xla, and KERN003 says how to take the Pallas path."""
    text = HELION_ROPE
    if imports == "plain":
        _, _, rest = text.partition("        _HELION_IMPORT_ERROR = e\n")
        text = "import torch\nimport helion\nimport helion.language as hl\n\n_HELION_IMPORT_ERROR = None\n" + rest
    new, findings = _port(tmp_path, text, "tpu")
    assert new == text
    said = [m for code, _, m in findings if code == "KERN003"]
    assert said and all('backend="pallas"' in m for m in said)


def test_a_helion_module_on_neuron_and_xla_is_unchanged_as_before(tmp_path):
    """The control: on neuron and xla the module was kept before the fix too."""
    for target in ("neuron", "xla"):
        new, _ = _port(tmp_path, HELION_ROPE, target)
        assert new == HELION_ROPE


# mmengine 0.10.7 runner/amp.py, cut down: a switch over the device type that picks autocast's dtype
MMENGINE_AMP = """from contextlib import contextmanager

import torch

from ..device import get_device


@contextmanager
def autocast(device_type=None, dtype=None, enabled=True):
    device = get_device()
    device_type = device if device_type is None else device_type
    if device_type == 'cuda':
        if dtype is None:
            dtype = torch.get_autocast_gpu_dtype()
    elif device_type == 'cpu':
        if dtype is None:
            dtype = torch.bfloat16
    elif device_type == 'npu':
        pass
    else:
        if enabled is False:
            yield
            return
        else:
            raise ValueError(device_type)
    with torch.autocast(device_type=device_type, enabled=enabled, dtype=dtype):
        yield
"""


def _port_package(tmp_path, text, target):
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    pkg = tmp_path / "pkg" / "runner"
    pkg.mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "amp.py").write_text(text)
    results = run([tmp_path], Settings(target=target), jobs=1, cache=False)[0]
    result = next(r for r in results if str(r.path).endswith("amp.py"))
    new = (result.new_source or result.original_source or b"").decode()
    return new, [(f.code, f.message) for f in result.findings]


@pytest.mark.parametrize("target", ["tpu", "neuron", "xla"])
def test_cudas_branch_that_reads_cudas_autocast_dtype_is_not_copied_for_the_target(tmp_path, target):
    """mmengine 0.10.7: BACK002 copied CUDA's `if dtype is None: dtype = torch.get_autocast_gpu_dtype()`
    into an added `elif device_type == 'tpu'`, so the target's autocast got CUDA's dtype (float16 by
    default; torch 2.9 and 2.13: `get_autocast_gpu_dtype()` is `get_autocast_dtype("cuda")`). The
    branch is no longer copied; BACK002 says why and where the target's goes."""
    new, findings = _port_package(tmp_path, MMENGINE_AMP, target)
    assert "get_autocast_gpu_dtype" not in new.replace("dtype = torch.get_autocast_gpu_dtype()", "", 1)
    said = [m for code, m in findings if code == "BACK002"]
    assert said and "`torch.get_autocast_gpu_dtype`, CUDA's autocast state" in said[0]


def test_cudas_branch_with_no_autocast_state_is_still_copied(tmp_path):
    """The control: the same switch whose CUDA branch picks a dtype of its own gets the target's branch."""
    text = MMENGINE_AMP.replace("torch.get_autocast_gpu_dtype()", "torch.bfloat16")
    new, findings = _port_package(tmp_path, text, "tpu")
    assert "elif device_type == 'tpu':" in new


def test_the_recompile_evidence_shows_the_shapes_that_changed():
    """parity-check's report said "`.detach()` at train.py:26 changed its output from [[8], [32], [8, 32]]
    to [[8], [32], [8, 32]]": a line's shapes were cut to the first three (shortest first) on each
    side, so a change past the third showed as none. The shapes one side has and the other lacks
    come first now, and "…" says where more were left out."""
    import itertools
    from pathlib import Path

    import torch

    from porter.verify.gaps import _shape_evidence
    from porter.verify.shapes import ShapeLog

    counter = itertools.count()
    log = ShapeLog(str(Path(__file__).parent), lambda: next(counter), device_type="cpu")
    with log:
        for n in (4, 5):
            outs = [torch.ones(s) for s in ((8,), (32,), (8, 32), (n, 8, 32), (2, n, 8, 32))]
            log.executed()
    assert len(outs) == 5
    (entry,) = log.end_step()
    assert entry["before"] != entry["last"]
    assert entry["before"][:2] == [[4, 8, 32], [2, 4, 8, 32]] and entry["last"][:2] == [[5, 8, 32], [2, 5, 8, 32]]
    assert entry["last"][-1] == "…"
    said = _shape_evidence("step 1", entry)
    assert "from [[4, 8, 32], [2, 4, 8, 32], [8], …] to [[5, 8, 32], [2, 5, 8, 32], [8], …]" in said
