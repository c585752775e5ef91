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
