"""The Hugging Face stack's records (rules/api/{transformers,accelerate,peft,trl}.json) against
the pinned packages themselves: rebuilt from the installed releases (the `hf` extra) and compared
with the checked-in files, so a record that drifts from the package fails here. The packages
must be installed at the pinned versions: a missing or other version fails, never skips."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from porter.apidata.libraries import PACKAGES, library_api
from tests.deps import require_distributions

ROOT = Path(__file__).resolve().parents[1]
PINS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["hf"]


def _checked_in(package: str) -> dict:
    return json.loads((ROOT / "rules" / "api" / f"{package}.json").read_text())


def test_the_pins_are_the_recorded_versions():
    pinned = dict(p.split("==") for p in PINS)
    assert sorted(pinned) == sorted(PACKAGES)
    for package in PACKAGES:
        assert _checked_in(package)["source"]["version"] == pinned[package], package


@pytest.mark.slow
def test_records_rebuilt_from_the_pinned_packages_match(tmp_path):
    require_distributions(*PINS)
    out = tmp_path / "records.json"
    # a process of its own: importing transformers, trl and every model class costs ~15 s of
    # CPU and leaves torch_xla loaded; the test process stays as it was
    code = "import json, sys; from porter.apidata.hf import build_all; json.dump(build_all(), open(sys.argv[1], 'w'))"
    proc = subprocess.run(
        [sys.executable, "-c", code, str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        env={"PJRT_DEVICE": "CPU", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rebuilt = json.loads(out.read_text())
    for package in PACKAGES:
        recorded = _checked_in(package)
        recorded["source"].pop("generated")
        assert rebuilt[package] == recorded, (
            f"rules/api/{package}.json differs from {package}: run `python -m porter.apidata.build hf`"
        )


def test_what_the_rules_rely_on_is_recorded():
    lib = library_api()
    args = lib.callable("transformers.TrainingArguments")
    assert args is not None and args.closed
    assert "neuron" not in args.choices("ddp_backend") and "nccl" in args.choices("ddp_backend")
    assert "adamw_torch" in args.choices("optim") and "adamw_torch_fused" in args.choices("optim")
    assert args.param("optim")["default_value"] == lib.default_optim == "adamw_torch_fused"
    assert lib.callable("transformers.training_args.TrainingArguments") == args  # by where it is defined
    assert lib.is_training_arguments("trl.SFTConfig") and lib.is_trainer("trl.SFTTrainer")
    assert lib.callable("accelerate.Accelerator").choices("mixed_precision") == ("bf16", "fp16", "fp8", "no")
    assert lib.quantization_configs["transformers.BitsAndBytesConfig"] == "bitsandbytes"
    assert lib.supports_sdpa("LlamaForCausalLM") is True and lib.supports_sdpa("BloomForCausalLM") is False
    assert lib.supports_sdpa("AutoModelForCausalLM") is None
    assert (
        "static" in lib.keyword_values["cache_implementation"] and "sdpa" in lib.keyword_values["attn_implementation"]
    )
    assert "tpu" not in lib.records["accelerate"]["distributed_backends"]  # HF006 / HF009 say so
    assert lib.records["accelerate"]["distributed_backends"]["neuron"] == "neuron"
