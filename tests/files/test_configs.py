"""YAML, JSON and TOML configs: accelerate, Lightning, DeepSpeed, and any CUDA value."""

from __future__ import annotations

import json

from tests.files.conftest import codes, outside_edits_unchanged, port_file, ported

ACCELERATE = """\
compute_environment: LOCAL_MACHINE
distributed_type: "MULTI_GPU"   # eight of them
gpu_ids: all
mixed_precision: 'fp16'
"""


def test_accelerate_config():
    assert ported("accelerate.yaml", ACCELERATE, "xla") == ACCELERATE  # unsafe fixes: not without --unsafe-fixes
    new = ported("accelerate.yaml", ACCELERATE, "xla", unsafe_fixes=True)
    assert new == ACCELERATE.replace('"MULTI_GPU"', '"XLA"').replace("'fp16'", "'bf16'")
    neuron = port_file("accelerate.yaml", ACCELERATE, "neuron", unsafe_fixes=True)
    assert [(f.code, f.replacement) for f in neuron.findings if f.code == "CFG001"] == [
        ("CFG001", None),
        ("CFG001", None),
    ]


def test_lightning_config_and_generic_values():
    text = "trainer:\n  accelerator: gpu\n  precision: 16-mixed\nmodel:\n  device: cuda:0\n  use_cuda: true\n  name: cuda-lstm model\n"
    new = ported("config.yaml", text, "xla", unsafe_fixes=True)
    assert "  accelerator: tpu\n  precision: bf16-mixed\n" in new and "  device: cuda:0\n" in new
    r = port_file("config.yaml", text, "xla", unsafe_fixes=True)
    assert sorted(codes(r)) == ["CFG002", "CFG003", "CFG005", "CFG005"]  # prose (`name`) is no setting
    assert outside_edits_unchanged(text, new)


def test_deepspeed_json():
    text = '{\n  "train_micro_batch_size_per_gpu": 4,\n  "fp16": {"enabled": true},\n  "device": "cuda"\n}\n'
    r = port_file("ds_config.json", text, "tpu")
    assert sorted((f.code, f.start.line) for f in r.findings) == [("CFG002", 3), ("CFG004", 1), ("CFG005", 4)]
    assert r.new_source is None


def test_json_number_becomes_a_string_and_stays_json():
    text = '{"trainer": {"accelerator": "cuda", "precision": 16}}'
    new = ported("trainer.json", text, "xla", unsafe_fixes=True)
    assert json.loads(new) == {"trainer": {"accelerator": "tpu", "precision": "bf16-mixed"}}


def test_toml_config():
    text = '[system]\ndevice = "cuda"  # the GPU\n\n[trainer]\naccelerator = "gpu"\nprecision = 16\n'
    new = ported("train.toml", text, "xla", unsafe_fixes=True)
    assert new == '[system]\ndevice = "cuda"  # the GPU\n\n[trainer]\naccelerator = "tpu"\nprecision = "bf16-mixed"\n'


def test_kubernetes_env_and_gpu_resources():
    text = 'spec:\n  containers:\n    - env:\n        - name: CUDA_VISIBLE_DEVICES\n          value: "0,1"\n      resources:\n        limits:\n          nvidia.com/gpu: 2\n'
    r = port_file("job.yaml", text, "neuron")
    assert sorted((f.code, f.start.line) for f in r.findings) == [("CTR002", 8), ("ENV001", 4)]


def test_bad_yaml_is_an_error_naming_why():
    r = port_file("x.yaml", "device: cuda\n  bad: [\n", "neuron")
    assert r.status.value == "error" and "not valid YAML" in r.reason


def test_a_hydra_trainer_configs_strategy_and_a_launchers_slurm_request():
    """proteinworkshop 0.2.5's `config/trainer/ddp.yaml` and `config/launcher/csd3_ampere.yaml`."""
    ddp = "strategy: ddp_find_unused_parameters_true\naccelerator: gpu\ndevices: 4\n"
    r = port_file("config/trainer/ddp.yaml", ddp, "xla", unsafe_fixes=True)
    assert sorted((f.code, f.start.line, f.applied) for f in r.findings) == [("CFG003", 1, False), ("CFG003", 2, True)]
    assert r.new_source.decode() == ddp.replace("gpu", "tpu")  # the strategy is reported, not rewritten
    cpu = port_file("config/trainer/ddp_cpu.yaml", "strategy: ddp\naccelerator: cpu\ndevices: 4\n", "xla")
    assert codes(cpu) == []  # DDP over gloo on CPUs: nothing CUDA
    launcher = (
        "hydra:\n  launcher:\n    gres: gpu:1\n    gpus_per_node: 4\n    gpus_per_task: null\n    partition: ampere\n"
    )
    found = sorted((f.code, f.start.line) for f in port_file("config/launcher/slurm.yaml", launcher, "neuron").findings)
    assert found == [("LCH003", 3), ("LCH003", 4)]  # `null` asks for nothing
    assert codes(port_file("config/model.yaml", "gpus_per_node: 4\n", "neuron")) == []  # not a launcher's


def test_one_line_commands_and_lists_of_them_are_read_as_shell():
    """GitLab's `script:` list, Buildkite's `commands:`, a one-line `run:`; a launcher sized in
    GPUs is read though it names no CUDA (vllm 0.34.0's .buildkite/test_areas/distributed.yaml)."""
    text = (
        "test:\n  script:\n    - export CUDA_VISIBLE_DEVICES=0\n    - nvidia-smi\n    - echo done\n"
        "steps:\n  - commands:\n    - 'torchrun --nproc-per-node=4 t.py'\n    - torchrun t.py\n    command: nvidia-smi -L\n"
        "  - label: on cuda\n    run: python eval.py\n"
    )
    r = port_file("ci.yaml", text, "neuron")
    found = sorted((f.code, f.start.line) for f in r.findings)
    # `torchrun t.py` starts one process: nothing; a label that names CUDA is prose
    assert found == [("ENV001", 3), ("LCH001", 4), ("LCH001", 10), ("LCH002", 8)]
    assert r.new_source is None  # reported: a config's shell lines are not rewritten
