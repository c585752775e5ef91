"""The Hugging Face family beyond its rule examples: the values it claims are never ported as
torch devices or backends by the other families, and what it writes the libraries accept."""

from __future__ import annotations

import pytest

from tests.helpers import conformance, port

TARGETS = ("neuron", "tpu", "xla")


def codes(findings) -> set[str]:
    return {f.code for f in findings}


@pytest.mark.parametrize("target", TARGETS)
def test_ddp_backend_never_becomes_a_target_backend(target):
    """The issue's first defect: `ddp_backend="nccl"` became `"neuron"`, which transformers rejects."""
    src = 'from transformers import TrainingArguments\nargs = TrainingArguments(output_dir="o", ddp_backend="nccl", optim="adamw_torch")\n'
    new, findings = port(src, target)
    assert "ddp_backend" not in new and "DIST001" not in codes(findings)
    assert not conformance(new, target)
    # what porter used to write is what the library-API lint rejects
    bad = src.replace('"nccl"', f'"{ {"neuron": "neuron", "tpu": "tpu", "xla": "xla"}[target] }"')
    assert any("API006" in line for line in conformance(bad, target))


@pytest.mark.parametrize("target", TARGETS)
def test_loader_dtype_is_reported_once(target):
    src = "import torch\nfrom transformers import AutoModel\nm = AutoModel.from_pretrained(p, dtype=torch.float16)\n"
    _, findings = port(src, target)
    assert [f.code for f in findings if f.code in ("HF007", "AMP002")] == ["HF007"]


def test_trl_parser_over_a_tuple_made_above():
    src = (
        "from trl import ModelConfig, ScriptArguments, SFTConfig, TrlParser\n"
        "dataclass_types = (ScriptArguments, SFTConfig, ModelConfig)\n"
        "parser = TrlParser(dataclass_types)\n"
    )
    _, findings = port(src, "xla")
    (hit,) = [f for f in findings if f.code == "HF004"]
    assert "--optim adamw_torch" in hit.message and "SFTConfig" in hit.message


def test_notebook_launcher_mixed_precision():
    src = 'from accelerate import notebook_launcher\nnotebook_launcher(train, (), num_processes=2, mixed_precision="fp16")\n'
    new, findings = port(src, "neuron", unsafe=True)
    assert 'mixed_precision="bf16"' in new and "HF003" in codes(findings)


def test_bitsandbytes_imported_for_side_effects_is_said():
    src = "import accelerate\n\ndef check():\n    import bitsandbytes as bnb  # noqa: F401\n    launch()\n"
    _, findings = port(src, "tpu")
    assert "HF002" in codes(findings)
    used = "import accelerate\nimport bitsandbytes as bnb\nlayer = bnb.nn.Linear8bitLt(4, 4)\n"
    _, findings = port(used, "tpu")
    assert "HF002" not in codes(findings) and "KERN003" in codes(findings)


def test_accelerate_prepared_loader_gets_no_sync_nor_device_loader():
    """accelerate wraps a prepared loader for XLA itself (MpDeviceLoaderWrapper: a graph cut per
    batch): XLA001's sync and XLA002's MpDeviceLoader would do it twice."""
    src = (
        "from accelerate import Accelerator\n"
        "from torch.utils.data import DataLoader\n"
        "accelerator = Accelerator()\n"
        "dl = DataLoader(ds, batch_size=4)\n"
        "model, optimizer, dl = accelerator.prepare(model, optimizer, dl)\n"
        "for step, batch in enumerate(dl):\n"
        "    loss = model(**batch).loss\n"
        "    accelerator.backward(loss)\n"
        "    optimizer.step()\n"
    )
    new, findings = port(src, "xla")
    assert new == src and not {"XLA001", "XLA002"} & codes(findings)
    plain = src.replace("model, optimizer, dl = accelerator.prepare(model, optimizer, dl)\n", "")
    new, findings = port(plain, "xla")
    assert {"XLA001", "XLA002"} <= codes(findings)


@pytest.mark.parametrize("target", TARGETS)
def test_generate_outside_the_hf_stack_is_not_hf008(target):
    src = "class Sampler:\n    def generate(self):\n        pass\n\nSampler().generate()\n"
    _, findings = port(src, target)
    assert "HF008" not in codes(findings)


def test_device_map_auto_on_xla_is_an_unsafe_fix_and_kept_elsewhere():
    src = 'from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained(p, device_map="auto")\n'
    new, findings = port(src, "xla", unsafe=True)
    assert "device_map=torch_xla.device()" in new and "HF005" in codes(findings)
    new, findings = port(src, "neuron")
    assert new == src and "HF005" not in codes(findings)


_GATHER = "from accelerate.utils import gather_object\n\n\ndef log(prompts):\n    return gather_object(prompts)\n"


@pytest.mark.parametrize("target", ("neuron", "tpu"))
def test_gather_object_works_on_the_native_targets(target):
    """accelerate gathers objects on neuron (its neuron path) and TorchTPU has no XLA state: no HF011."""
    new, findings = port(_GATHER, target)
    assert new == _GATHER and "HF011" not in codes(findings)


def test_gather_object_on_xla_keeps_several_processes_and_is_idempotent():
    new, findings = port(_GATHER, "xla")
    assert "prompts if accelerate.PartialState().num_processes == 1 else gather_object(prompts)" in new
    assert "HF011" in codes(findings)
    again, findings = port(new, "xla")
    assert again == new and "HF011" not in codes(findings)
    # a guard the author wrote is left alone, whatever state it reads
    guarded = _GATHER.replace(
        "return gather_object(prompts)",
        "return prompts if self.accelerator.num_processes == 1 else gather_object(prompts)",
    )
    assert port(guarded, "xla")[0] == guarded


def test_gather_object_with_other_arguments_is_reported_not_rewritten():
    src = "from accelerate.utils import gather_object\nout = gather_object(*parts)\n"
    new, findings = port(src, "xla")
    assert new == src and "HF011" in codes(findings)


# HF012: activation checkpointing asked of the Trainer (the stop-40 note's leftover: unflagged)
CHECKPOINTING = """\
from transformers import Seq2SeqTrainingArguments, TrainingArguments
from trl import GRPOConfig, SFTConfig, TrlParser

a = TrainingArguments(output_dir="o", gradient_checkpointing=True, optim="adamw_torch")
b = Seq2SeqTrainingArguments(output_dir="o", activation_checkpointing=True, optim="adamw_torch")
c = SFTConfig(output_dir="o", optim="adamw_torch")
d = SFTConfig(output_dir="o", gradient_checkpointing=flag, optim="adamw_torch")
e = TrainingArguments(output_dir="o", optim="adamw_torch")
f = SFTConfig(output_dir="o", gradient_checkpointing=False, optim="adamw_torch")
g = GRPOConfig(output_dir="o", activation_checkpointing=False, gradient_checkpointing=True, optim="adamw_torch")
h = SFTConfig(output_dir="o", **kwargs)
parser = TrlParser((SFTConfig,))
"""


def test_trainer_checkpointing_is_reported_on_xla():
    _, findings = port(CHECKPOINTING, "xla")
    found = [f for f in findings if f.code == "HF012"]
    # True by keyword (either name), trl's default, a value that may be true, the parser of a trl
    # config; not False, not where `activation_checkpointing=False` wins, not `**kwargs`, not the
    # transformers default (off)
    assert [f.start.line for f in found] == [4, 5, 6, 7, 12]
    assert "no attribute 'xla'" in found[0].message
    assert "by default (trl 1.16.0)" in found[2].message
    assert "`gradient_checkpointing=flag`, if true," in found[3].message
    assert "--gradient_checkpointing false" in found[4].message
    assert all("gradient_checkpointing=False" in (f.advice or "") for f in found)
    for target in ("neuron", "tpu"):
        assert "HF012" not in codes(port(CHECKPOINTING, target)[1])


@pytest.mark.xla
@pytest.mark.slow
def test_trainer_checkpointing_fails_on_xla_cpu(tmp_path):
    """What HF012 says, seen: the Trainer with `gradient_checkpointing=True`, or trl's config left at
    its default, fails its first step on XLA:CPU; with it off the same run trains."""
    import json

    from tests.deps import require
    from tests.programs import run_programs

    require("transformers")
    require("trl")
    script = tmp_path / "trainer.py"
    script.write_text(
        """\
import json, sys, warnings
warnings.filterwarnings("ignore")
import torch, torch_xla
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments
from trl import SFTConfig

data = [{"input_ids": torch.randint(0, 64, (16,)), "labels": torch.randint(0, 64, (16,))} for _ in range(4)]
out = {}
for name, cls, kw in [
    ("args_on", TrainingArguments, {"gradient_checkpointing": True}),
    ("sft_default", SFTConfig, {}),
    ("sft_off", SFTConfig, {"gradient_checkpointing": False}),
]:
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_head=2, n_embd=16, vocab_size=64, n_positions=32))
    args = cls(output_dir="out", max_steps=1, per_device_train_batch_size=2, report_to=[], save_strategy="no",
               optim="adamw_torch", bf16=False, **kw)
    try:
        trainer = Trainer(model=model, args=args, train_dataset=data)
        out[name] = [str(next(trainer.model.parameters()).device), trainer.train().training_loss]
    except Exception as e:
        out[name] = repr(e)
json.dump(out, open(sys.argv[1], "w"))
"""
    )
    result = tmp_path / "out.json"
    (run,) = run_programs([(script, [str(result)], tmp_path)], tmp_path, xla=True)
    assert run.rc == 0, run.stdout[-2000:] + run.stderr[-4000:]
    out = json.loads(result.read_text())
    for name in ("args_on", "sft_default"):
        assert "has no attribute 'xla'" in out[name], (name, out[name])
    assert out["sft_off"][0].startswith("xla"), out["sft_off"]


# HF013: switches of the Trainer's arguments that only CUDA honours (passed silently before)
SWITCHES = """\
from transformers import TrainingArguments
from trl import SFTConfig

args = TrainingArguments(output_dir=out, tf32=True, optim="adamw_torch", report_to=[])
config = SFTConfig(output_dir=out, use_liger_kernel=True, gradient_checkpointing=False, optim="adamw_torch")
kept = TrainingArguments(output_dir=out, tf32=False, use_liger_kernel=False, optim="adamw_torch", report_to=[])
"""


@pytest.mark.parametrize("target", TARGETS)
def test_cuda_only_trainer_switches_are_removed(target):
    new, findings = port(SWITCHES, target)
    found = [f for f in findings if f.code == "HF013"]
    assert [(f.start.line, f.message.split("`")[1]) for f in found] == [(4, "tf32=True"), (5, "use_liger_kernel=True")]
    assert all(f.applied for f in found)
    assert "tf32=True" not in new and "use_liger_kernel=True" not in new
    assert "tf32=False, use_liger_kernel=False" in new  # False asks nothing of CUDA
    assert not conformance(new, target)


def test_tf32_arguments_cannot_be_built_without_cuda_and_the_port_can(tmp_path):
    """The evidence: transformers 5.24 refuses `tf32=True` where torch sees no CUDA GPU (as on every
    target); the ported arguments build."""
    from tests.deps import require

    require("transformers")
    import torch

    assert not torch.cuda.is_available()
    src = f"from transformers import TrainingArguments\nargs = TrainingArguments(output_dir={str(tmp_path)!r}, tf32=True)\n"
    with pytest.raises(ValueError, match="--tf32 requires Ampere"):
        exec(compile(src, "before.py", "exec"), {})
    new, _ = port(src, "xla")
    scope: dict = {}
    exec(compile(new, "after.py", "exec"), scope)
    assert scope["args"].tf32 is None


# HF012 after the arguments are built (rleft's leftover): what the Trainer reads is
# `args.activation_checkpointing` (trainer.py), so only what sets that name is reported
LATE = """\
import dataclasses
from dataclasses import replace
from transformers import TrainingArguments

args = TrainingArguments(output_dir="o", optim="adamw_torch")
args.gradient_checkpointing = True
args.activation_checkpointing = True
args.activation_checkpointing = False
a = dataclasses.replace(args, gradient_checkpointing=True)
b = replace(args, activation_checkpointing=True)
c = args.set_training(learning_rate=1e-4, gradient_checkpointing=True)
d = args.set_training(learning_rate=1e-4, activation_checkpointing=flag)
e = args.set_training(learning_rate=1e-4, gradient_checkpointing=False, activation_checkpointing=True)
f = args.set_training(learning_rate=1e-4)
other.activation_checkpointing = True
g = replace(other, activation_checkpointing=True)
"""


def test_checkpointing_switched_on_after_the_arguments_are_built():
    _, findings = port(LATE, "xla")
    found = [f for f in findings if f.code == "HF012"]
    # the attribute the Trainer reads, a copy that sets it, `set_training` (its alias winning); not the
    # alias set late (read by nothing), not False, not what porter cannot see is training arguments
    assert [f.start.line for f in found] == [7, 10, 11, 12]
    assert "`activation_checkpointing=flag`, if true," in found[3].message
    for target in ("neuron", "tpu"):
        assert "HF012" not in codes(port(LATE, target)[1])


def test_checkpointing_switched_on_late_is_what_the_arguments_hold():
    """The evidence for the lines above: what each form leaves in `activation_checkpointing`, the
    only name the Trainer reads (transformers 5.24, trainer.py); that name set true fails on
    XLA:CPU (test_trainer_checkpointing_fails_on_xla_cpu)."""
    import warnings

    from tests.deps import require

    require("transformers")
    import dataclasses

    other = dataclasses.make_dataclass("Other", [("activation_checkpointing", bool, False)])()
    scope: dict = {"flag": True, "other": other}
    held = []  # what the line's object holds right after it (set_training changes `args` itself)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lines = LATE.replace('"o"', "None").splitlines()
        exec("\n".join(lines[:4]), scope)
        for line in lines[4:]:
            exec(line, scope)
            held.append(scope[line.split()[0].split(".")[0]].activation_checkpointing)
    # lines 5-16: built off; alias set (off); set; unset; copy with the alias (off); copy setting
    # it; set_training's alias; its new name; the alias False winning; set_training's default
    assert held[:10] == [False, False, True, False, False, True, True, True, False, False]


# HF014: the Trainer's torch.compile on xla (rleft's leftover: passed silently)
COMPILE = """\
from transformers import TrainingArguments
from trl import SFTConfig

a = TrainingArguments(output_dir="o", torch_compile=True, optim="adamw_torch")
b = SFTConfig(output_dir="o", torch_compile_mode="max-autotune", gradient_checkpointing=False, optim="adamw_torch")
c = TrainingArguments(output_dir="o", torch_compile_backend="inductor", optim="adamw_torch")
d = TrainingArguments(output_dir="o", torch_compile=flag, optim="adamw_torch")
e = TrainingArguments(output_dir="o", torch_compile=True, torch_compile_backend="aot_eager", optim="adamw_torch")
f = TrainingArguments(output_dir="o", torch_compile=False, optim="adamw_torch")
g = TrainingArguments(output_dir="o", torch_compile=False, torch_compile_mode="default", optim="adamw_torch")
"""


def test_trainer_compile_with_inductor_is_removed_on_xla():
    new, findings = port(COMPILE, "xla")
    found = [f for f in findings if f.code == "HF014"]
    # True, a mode alone, inductor named, a value that may be true (kept), a mode turning False on;
    # not another backend named, not False alone
    assert [(f.start.line, f.applied) for f in found] == [(4, True), (5, True), (6, True), (7, False), (10, True)]
    assert "torch_compile=True, torch_compile_backend" in new and "torch_compile=flag" in new
    assert new.count("torch_compile") == 4  # d (1), e (2), f (1)
    assert not conformance(new, "xla")
    for target in ("neuron", "tpu"):
        assert "HF014" not in codes(port(COMPILE, target)[1])


@pytest.mark.xla
@pytest.mark.slow
def test_trainer_compile_fails_on_xla_cpu(tmp_path):
    """What HF014 says, seen: `torch_compile=True` fails the first step on XLA:CPU (inductor), torch_xla's
    backend cannot be named, and the ported arguments train."""
    import json

    from tests.deps import require
    from tests.programs import run_programs

    require("transformers")
    script = tmp_path / "trainer.py"
    script.write_text(
        """\
import json, sys, warnings
warnings.filterwarnings("ignore")
import torch, torch_xla
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

data = [{"input_ids": torch.randint(0, 64, (16,)), "labels": torch.randint(0, 64, (16,))} for _ in range(4)]
out = {}
for name, kw in [
    ("inductor", {"torch_compile": True}),
    ("openxla", {"torch_compile": True, "torch_compile_backend": "openxla"}),
    ("ported", {}),
]:
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_head=2, n_embd=16, vocab_size=64, n_positions=32))
    args = TrainingArguments(output_dir="out", max_steps=1, per_device_train_batch_size=2, report_to=[],
                             save_strategy="no", optim="adamw_torch", **kw)
    try:
        trainer = Trainer(model=model, args=args, train_dataset=data)
        out[name] = [str(next(trainer.model.parameters()).device), trainer.train().training_loss]
    except Exception as e:
        out[name] = type(e).__name__ + ": " + str(e)[:300]
json.dump(out, open(sys.argv[1], "w"))
"""
    )
    result = tmp_path / "out.json"
    (run,) = run_programs([(script, [str(result)], tmp_path)], tmp_path, xla=True)
    assert run.rc == 0, run.stdout[-2000:] + run.stderr[-4000:]
    out = json.loads(result.read_text())
    assert out["inductor"].startswith("InductorError: LoweringException"), out["inductor"]
    assert "'OPENXLA' is not a valid DynamoBackend" in out["openxla"], out["openxla"]
    assert out["ported"][0].startswith("xla"), out["ported"]


# HF015: an offloaded KV cache (rleft's leftover: passed silently; HF008's unsafe fix rewrote it unsaid)
OFFLOADED = """\
from transformers import AutoModelForCausalLM
model = AutoModelForCausalLM.from_pretrained("gpt2")
a = model.generate(ids, max_new_tokens=4, cache_implementation="offloaded")
b = model.generate(ids, max_new_tokens=4, cache_implementation='offloaded_static')
c = model.generate(ids, max_new_tokens=4, cache_implementation="static")
"""


@pytest.mark.parametrize("target", TARGETS)
def test_offloaded_kv_cache_is_kept_on_the_device(target):
    new, findings = port(OFFLOADED, target)
    found = [f for f in findings if f.code == "HF015"]
    assert [(f.start.line, f.applied) for f in found] == [(3, True), (4, True)]
    assert "offloaded" not in new and "cache_implementation='static'" in new
    assert 'cache_implementation="dynamic"' in new
    unsafe, _ = port(OFFLOADED, target, unsafe=True)  # HF008's own fix still applies after it
    assert "offloaded" not in unsafe and not conformance(unsafe, target)


@pytest.mark.xla
@pytest.mark.slow
def test_offloaded_kv_cache_fails_on_xla_cpu(tmp_path):
    """What HF015 says, seen: an offloaded cache fails on XLA:CPU where the ported ("dynamic") one generates."""
    import json

    from tests.deps import require
    from tests.programs import run_programs

    require("transformers")
    script = tmp_path / "generate.py"
    script.write_text(
        """\
import json, sys, warnings
warnings.filterwarnings("ignore")
import torch, torch_xla
from transformers import GPT2Config, GPT2LMHeadModel

model = GPT2LMHeadModel(GPT2Config(n_layer=1, n_head=2, n_embd=16, vocab_size=64, n_positions=32)).to("xla")
ids = torch.randint(0, 64, (1, 4)).to("xla")
out = {}
for impl in ("offloaded", "dynamic"):
    try:
        out[impl] = model.generate(ids, max_new_tokens=1, do_sample=False, pad_token_id=0,
                                   cache_implementation=impl).shape[1]
    except Exception as e:
        out[impl] = type(e).__name__ + ": " + str(e)[:200]
json.dump(out, open(sys.argv[1], "w"))
"""
    )
    result = tmp_path / "out.json"
    (run,) = run_programs([(script, [str(result)], tmp_path)], tmp_path, xla=True)
    assert run.rc == 0, run.stdout[-2000:] + run.stderr[-4000:]
    out = json.loads(result.read_text())
    assert isinstance(out["offloaded"], str) and out["offloaded"].startswith(("AcceleratorError", "RuntimeError")), out
    assert out["dynamic"] == 5, out


# HF016: the `kernels` hub on xla (rleft's leftover: passed silently, next to the device map porter writes)
KERNELS = """\
from transformers import AutoModelForCausalLM
a = AutoModelForCausalLM.from_pretrained("m", device_map="cuda", use_kernels=True)
b = AutoModelForCausalLM.from_pretrained("m", kernel_config=config)
c = AutoModelForCausalLM.from_pretrained("m", use_kernels=flag)
d = AutoModelForCausalLM.from_pretrained("m", use_kernels=False)
"""


def test_kernels_hub_is_left_off_on_xla():
    new, findings = port(KERNELS, "xla")
    found = [f for f in findings if f.code == "HF016"]
    assert [(f.start.line, f.applied) for f in found] == [(2, True), (3, True), (4, False)]
    assert "Unsupported device type 'xla'" in found[0].message
    assert new.count("use_kernels") == 2 and "kernel_config" not in new  # c and d kept
    assert not conformance(new, "xla")
    for target in ("neuron", "tpu"):
        assert "HF016" not in codes(port(KERNELS, target)[1])


# HF012/HF013 on arguments from a parser or `self.args` (the twenty-third rleft read): the same attribute
# the Trainer reads, on the arguments the parser returns at the training class's place
LATE_PARSED = """\
from dataclasses import dataclass
from transformers import HfArgumentParser, Trainer, TrainingArguments

def main():
    parser = HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    training_args.activation_checkpointing = True
    model_args.activation_checkpointing = True
    training_args.use_liger_kernel = True
    training_args.tf32 = True
    training_args.gradient_checkpointing = True
    m, t, rest = parser.parse_args_into_dataclasses(return_remaining_strings=True)
    t.activation_checkpointing = True

class MyTrainer(Trainer):
    def setup(self):
        self.args.activation_checkpointing = True
        self.args.use_liger_kernel = flag

class Other:
    def setup(self):
        self.args.activation_checkpointing = True
"""


def test_switches_set_on_parsed_arguments_and_self_args():
    _, findings = port(LATE_PARSED, "xla")
    found = [(f.code, f.start.line) for f in findings if f.code in ("HF012", "HF013")]
    # not the model's arguments, not `tf32` (read only as the arguments are built), not the alias, not
    # `self.args` outside a trainer
    assert found == [("HF012", 7), ("HF013", 9), ("HF012", 13), ("HF012", 17), ("HF013", 18)]
    for target in ("neuron", "tpu"):  # HF012 is xla's; Liger's Triton kernels run on no target
        assert [(f.code, f.start.line) for f in port(LATE_PARSED, target)[1] if f.code in ("HF012", "HF013")] == [
            ("HF013", 9),
            ("HF013", 18),
        ]
    subclass_only = "\n".join(LATE_PARSED.splitlines()[1:2] + LATE_PARSED.splitlines()[14:19]) + "\n"
    assert [(f.code, f.start.line) for f in port(subclass_only, "xla")[1] if f.code == "HF012"] == [("HF012", 4)]


def test_parsed_arguments_are_the_trainers_and_tf32_is_read_once():
    """The evidence for the lines above: the parser returns the training arguments at their class's
    place, the Trainer reads `activation_checkpointing` off them (trainer.py), and `tf32` set late
    changes nothing (transformers 5.24 reads it only in `__post_init__`)."""
    import dataclasses
    import warnings

    from tests.deps import require

    require("transformers")
    import torch
    from transformers import HfArgumentParser, TrainingArguments

    model_arguments = dataclasses.make_dataclass("ModelArguments", [("name", str, "m")])
    parser = HfArgumentParser((model_arguments, TrainingArguments))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, training_args = parser.parse_args_into_dataclasses(args=["--output_dir", "o", "--report_to", "none"])
    assert isinstance(training_args, TrainingArguments) and not training_args.activation_checkpointing
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        before = torch.backends.cuda.matmul.allow_tf32
        training_args.tf32 = True  # no ValueError (it raises only as the arguments are built), no effect
        assert torch.backends.cuda.matmul.allow_tf32 == before


# HF016 by hand (the twenty-third rleft read): kernels 0.18.3 on XLA:CPU refuses `device="xla"` (what the
# device port wrote for "cuda") and `set_use_kernels(True)` on an XLA model; `kernelize(model)` runs
KERNELS_BY_HAND = """\
from kernels import kernelize, Mode
from transformers import AutoModelForCausalLM
model = AutoModelForCausalLM.from_pretrained("m").cuda()
model = kernelize(model, mode=Mode.INFERENCE, device="cuda")
model = kernelize(model, mode=Mode.INFERENCE)
model.set_use_kernels(True)
model.use_kernels = True
model.set_use_kernels(False)
model.use_kernels = False
self.use_kernels = True
"""


def test_kernels_by_hand_on_xla():
    new, findings = port(KERNELS_BY_HAND, "xla")
    found = [(f.code, f.start.line, f.applied) for f in findings if f.code == "HF016"]
    assert found == [("HF016", 4, True), ("HF016", 6, False), ("HF016", 7, False)]
    assert 'device="xla"' not in new and "kernelize(model, mode=Mode.INFERENCE)\n" in new
    alone = "from transformers import AutoModelForCausalLM\nmodel = load()\nmodel.use_kernels = True\n"
    assert [(f.code, f.start.line) for f in port(alone, "xla")[1]] == [("HF016", 3)]
    for target in ("neuron", "tpu"):  # both are `kernels` devices: the device port's string stands
        new, findings = port(KERNELS_BY_HAND, target)
        assert f'device="{target}"' in new and "HF016" not in codes(findings)


# HF015 by hand (the twenty-third rleft read): the caches that offload, built by hand or named in a variable
OFFLOADED_BY_HAND = """\
from transformers import DynamicCache, GenerationConfig, OffloadedCache, OffloadedStaticCache, StaticCache
from transformers.cache_utils import DynamicCache as Dyn
a = DynamicCache(offloading=True)
b = StaticCache(config=cfg, max_cache_len=16, offloading=True, offload_only_non_sliding=False)
c = Dyn(config=cfg, offloading=flag)
d = DynamicCache(offloading=False)
e = OffloadedCache()
f = OffloadedStaticCache(cfg, max_cache_len=16)
g = GenerationConfig(max_new_tokens=4, cache_implementation="offloaded")
impl = "offloaded"
h = model.generate(ids, cache_implementation=impl, past_key_values=DynamicCache())
"""


@pytest.mark.parametrize("target", TARGETS)
def test_offloaded_caches_built_by_hand(target):
    new, findings = port(OFFLOADED_BY_HAND, target)
    found = [(f.code, f.start.line, f.applied) for f in findings if f.code == "HF015"]
    assert found == [
        ("HF015", 3, True),
        ("HF015", 4, True),
        ("HF015", 5, False),
        ("HF015", 7, False),
        ("HF015", 8, False),
        ("HF015", 9, True),
        ("HF015", 11, False),
    ]
    assert "a = DynamicCache()\n" in new and "b = StaticCache(config=cfg, max_cache_len=16)\n" in new
    assert 'cache_implementation="dynamic")' in new and "offloading=flag" in new
    assert (
        "`DynamicCache()` keeps the cache on the device" in findings[[f.start.line for f in findings].index(7)].message
    )


# HF017 (the twenty-third rleft read): GPTQ and AWQ load through gptqmodel, which has no kernels for a target
GPTQ = """\
import transformers
from transformers import AutoModelForCausalLM, AwqConfig, GPTQConfig
a = AutoModelForCausalLM.from_pretrained("m", quantization_config=GPTQConfig(bits=4, dataset="c4"))
config = AwqConfig(bits=4)
b = transformers.GPTQConfig(bits=4)
"""


@pytest.mark.parametrize("target", TARGETS)
def test_gptq_and_awq_configs_are_reported(target):
    new, findings = port(GPTQ, target)
    found = [f for f in findings if f.code == "HF017"]
    assert [(f.start.line, f.applied) for f in found] == [(3, False), (4, False), (5, False)]
    assert "gptqmodel" in found[0].message and "GPU is required" in found[0].message
    assert ("torch>=2.14.1" in found[1].message) == (target != "tpu")
    assert "Unsupported selector device family" in found[2].message or target == "neuron"
    assert new == GPTQ


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_an_import_of_gptqmodel_is_reported_by_hf017_not_as_cuda_only(target):
    """`import gptqmodel` alone (no transformers in the file; the twenty-fifth rleft read): its sdist is not
    CUDA-only (packages.json's `read_not_cuda_only`), so no KERN003; HF017 says why it does not run on the
    target (`[gptqmodel_on]`), once per import statement at the module's top level; an optional import
    inside a function's `if is_gptqmodel_available():` (peft's, on 41-rleft's tree) is left."""
    from porter.codemods.hf import gptqmodel_configs

    src = (
        "import os\nimport gptqmodel\nfrom gptqmodel import GPTQModel\nfrom gptqmodel.models import auto\n"
        "def optional():\n    if is_gptqmodel_available():\n        from gptqmodel import BACKEND\n"
    )
    found = [f for f in port(src, target)[1] if f.code.startswith(("HF", "KERN"))]
    assert [(f.code, f.start.line) for f in found] == [("HF017", 2), ("HF017", 3), ("HF017", 4)]
    assert all(gptqmodel_configs()[1][target] in f.message and "not CUDA-only" in f.message for f in found)


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_an_unchecked_import_of_gptqmodel_in_a_function_is_reported_and_a_guarded_one_is_not(target):
    """A function that imports gptqmodel whenever it is called needs it (twenty-fifth rleft2 read): HF017
    names the function, as a method's and a nested function's; the guarded forms seen in peft on 41-rleft's
    tree (under `if is_gptqmodel_available():`, after `if not is_gptqmodel_available(): return None`) and a
    `try` stay silent."""
    from porter.codemods.hf import gptqmodel_configs

    src = (
        "def load(path):\n"
        "    from gptqmodel import GPTQModel\n"
        "    return GPTQModel.load(path)\n"
        "class Loader:\n"
        "    def quant(self):\n"
        "        def inner():\n"
        "            import gptqmodel\n"
        "        import gptqmodel.utils\n"
        "def optional():\n"
        "    if is_gptqmodel_available():\n"
        "        from gptqmodel import BACKEND\n"
        "def early(config):\n"
        "    if not is_gptqmodel_available():\n"
        "        return None\n"
        "    from gptqmodel import BACKEND\n"
        "def tried():\n"
        "    try:\n"
        "        import gptqmodel\n"
        "    except ImportError:\n"
        "        gptqmodel = None\n"
    )
    found = [f for f in port(src, target)[1] if f.code.startswith(("HF", "KERN"))]
    assert [(f.code, f.start.line) for f in found] == [("HF017", 2), ("HF017", 7), ("HF017", 8)]
    names = ["`load`", "`inner`", "`quant`"]
    assert all(f"imported by {n}, unchecked" in f.message for n, f in zip(names, found))
    assert all(gptqmodel_configs()[1][target] in f.message for f in found)


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_gptqmodel_imports_under_with_and_after_raise_or_return_follow_one_reachability_rule(target):
    """One rule for every form (twenty-sixth rleft read): an import run whenever the module or a call runs past
    it is reported, under a `with` too (at the top level also) and after an `if` that raises (the call fails
    without gptqmodel either way); one under `contextlib.suppress`, or after any statement that may return (an
    `if`, a `try` whose handler returns, a `with` holding such an `if`), is optional and silent. On 0073c76:
    the `with` imports silent, those after the `try` and the `with` that may return reported."""
    src = (
        "import contextlib, warnings\n"
        "from contextlib import suppress\n"
        "def under_with():\n"
        "    with warnings.catch_warnings():\n"
        "        from gptqmodel import GPTQModel\n"
        "def one_line_with():\n"
        "    with warnings.catch_warnings(): import gptqmodel\n"
        "def suppressed():\n"
        "    with contextlib.suppress(ImportError):\n"
        "        import gptqmodel\n"
        "    with suppress(ImportError): import gptqmodel.utils\n"
        "def after_raise():\n"
        "    if not is_gptqmodel_available():\n"
        "        raise ImportError('pip install gptqmodel')\n"
        "    from gptqmodel import BACKEND\n"
        "def after_try_return():\n"
        "    try:\n"
        "        import optimum\n"
        "    except ImportError:\n"
        "        return None\n"
        "    import gptqmodel\n"
        "def after_with_return():\n"
        "    with warnings.catch_warnings():\n"
        "        if not is_gptqmodel_available():\n"
        "            return None\n"
        "    import gptqmodel.utils\n"
        "with warnings.catch_warnings():\n"
        "    import gptqmodel.models\n"
    )
    found = [f for f in port(src, target)[1] if f.code.startswith(("HF", "KERN"))]
    assert [(f.code, f.start.line) for f in found] == [("HF017", n) for n in (5, 7, 15, 28)]
    names = ["`under_with`", "`one_line_with`", "`after_raise`"]
    assert all(f"imported by {n}, unchecked" in f.message for n, f in zip(names, found))
    assert "gptqmodel is imported:" in found[3].message


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_kernelize_fallback_reads_finally_with_bodies_and_a_loop_s_else_as_python_runs_them(target):
    """A `finally`, a `with`'s body and a loop's `else` with no `break` of its own run whole whenever the code
    after them runs (twenty-seventh rleft read): a binding there ends the read as one written beside the call
    does, a handler's before the `finally` too; a loop's `else` with a `break`, and a `with` whose context
    manager the file shows swallowing, stay branches. On ec8b33c: `fin`, `fin_handler`, `with_body`, `loop_else`
    silent (read as branches beside `K.NONE`/`K.NO_DEVICE`) and `loop_with_before` reported (the `with` before
    the call rebinds `E` at every pass)."""
    code = (
        "from kernels import KernelizeFallback as K, kernelize\n"
        "import contextlib\n"
        "def fin(model):\n"
        "    try:\n"
        "        E = K.NONE\n"
        "    finally:\n"
        "        E = K.NO_LAYER\n"
        "    kernelize(model, use_fallback=E | K.CANNOT_LOAD)\n"
        "def fin_handler(model):\n"
        "    try:\n"
        "        E = K.NO_DEVICE\n"
        "    except ValueError:\n"
        "        E = K.ALL\n"
        "    finally:\n"
        "        E = K.NO_LAYER\n"
        "    kernelize(model, use_fallback=E)\n"
        "def with_body(model, lock):\n"
        "    E = K.NO_DEVICE\n"
        "    with lock:\n"
        "        E = K.NONE\n"
        "    kernelize(model, use_fallback=E)\n"
        "def loop_else(model, xs):\n"
        "    E = K.NO_DEVICE\n"
        "    for x in xs:\n"
        "        for y in x:\n"
        "            break\n"
        "    else:\n"
        "        E = K.NO_LAYER\n"
        "    kernelize(model, use_fallback=E)\n"
        "def loop_else_break(model, xs):\n"
        "    E = K.NO_DEVICE\n"
        "    while xs:\n"
        "        for y in xs:\n"
        "            pass\n"
        "        else:\n"
        "            break\n"
        "    else:\n"
        "        E = K.NONE\n"
        "    kernelize(model, use_fallback=E)\n"
        "def suppressed(model):\n"
        "    E = K.NO_DEVICE\n"
        "    with contextlib.suppress(KeyError):\n"
        "        E = K.NONE\n"
        "    kernelize(model, use_fallback=E)\n"
        "def fin_kept(model):\n"
        "    try:\n"
        "        E = K.NONE\n"
        "    finally:\n"
        "        E = K.NO_DEVICE\n"
        "    kernelize(model, use_fallback=E)\n"
        "def loop_with_before(models, lock):\n"
        "    for m in models:\n"
        "        with lock:\n"
        "            E = K.NO_DEVICE\n"
        "        kernelize(m, use_fallback=E)\n"
        "        E = K.NONE\n"
    )
    new, findings = port(code, target)
    assert [(f.code, f.start.line) for f in findings] == [("HF016", n) for n in (8, 16, 21, 29)]
    assert new == code
    assert "`use_fallback=E | K.CANNOT_LOAD`" in findings[0].message
    assert "(`K.NO_LAYER`, bound above)" in findings[1].message
    assert "(`K.NONE`, bound above; under `with lock`, whose context manager is not read here" in findings[2].message
    assert "(`K.NO_LAYER`, bound above)" in findings[3].message
    assert all(f"device type {target}" in f.message for f in findings)


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_gptqmodel_imports_under_a_context_manager_the_file_shows_swallowing_are_optional(target):
    """HF017's reachability with other context managers that may swallow an exception of their body (twenty-seventh
    rleft read): `pytest.raises(...)`, a class of the file whose `__exit__` returns true, a `contextmanager`
    generator whose `yield` is in a `try` with a handler that raises nothing: the body may stop at the import and
    the call go on (optional, silent). An `__exit__` returning false, a handler that re-raises, and a context
    manager defined elsewhere run the body (reported). On ec8b33c: all six reported."""
    src = (
        "import contextlib, pytest\n"
        "from contextlib import contextmanager\n"
        "from .util import quiet\n"
        "class Quiet:\n"
        "    def __enter__(self):\n"
        "        return self\n"
        "    def __exit__(self, *exc):\n"
        "        return exc[0] is ImportError\n"
        "class Loud:\n"
        "    def __exit__(self, *exc):\n"
        "        return False\n"
        "@contextmanager\n"
        "def optional():\n"
        "    try:\n"
        "        yield\n"
        "    except ImportError:\n"
        "        pass\n"
        "@contextlib.contextmanager\n"
        "def logged():\n"
        "    try:\n"
        "        yield\n"
        "    except ImportError:\n"
        "        raise\n"
        "def a():\n"
        "    with Quiet():\n"
        "        import gptqmodel\n"
        "def b():\n"
        "    with Loud():\n"
        "        import gptqmodel\n"
        "def c():\n"
        "    with optional():\n"
        "        import gptqmodel\n"
        "def d():\n"
        "    with logged():\n"
        "        import gptqmodel\n"
        "def e():\n"
        "    with pytest.raises(ImportError):\n"
        "        import gptqmodel\n"
        "def f():\n"
        "    with quiet():\n"
        "        import gptqmodel\n"
    )
    found = [f for f in port(src, target)[1] if f.code.startswith(("HF", "KERN"))]
    assert [(f.code, f.start.line) for f in found] == [("HF017", n) for n in (29, 35, 41)]
    assert all(f"imported by `{n}`, unchecked" in f.message for n, f in zip("bdf", found))


def test_gptqmodel_requirements_are_what_hf017_says():
    """The evidence HF017 reads, in the installed transformers: both quantizers need gptqmodel, and GPTQ
    without it (and without CUDA) raises that a GPU is required."""
    import inspect

    from tests.deps import require

    require("transformers")
    from transformers.quantizers import quantizer_awq, quantizer_gptq

    gptq, awq = inspect.getsource(quantizer_gptq), inspect.getsource(quantizer_awq)
    assert 'raise RuntimeError("GPU is required to quantize or run quantize model.")' in gptq
    assert "is_gptqmodel_available()" in gptq and "is_gptqmodel_available()" in awq


# The switches read late (the twenty-third rleft2 read): on CPU with a tiny GPT-2, the Trainer built on
# arguments changed after construction reads `torch_compile_backend` (accelerate's dynamo plugin: INDUCTOR)
# and `fp16_full_eval` (evaluation casts the model to float16), not `fp16`, `bf16`, `torch_compile` or
# `torch_compile_mode` (its mixed precision and backend are fixed in `__post_init__`)
LATE_COMPILE_FP16 = """\
from transformers import HfArgumentParser, Trainer, TrainingArguments
args = TrainingArguments(output_dir="out")
args.fp16 = True
args.bf16 = True
args.torch_compile = True
args.torch_compile_mode = "max-autotune"
args.torch_compile_backend = "inductor"
args.torch_compile_backend = "openxla"
args.fp16_full_eval = True
_, training_args = HfArgumentParser((M, TrainingArguments)).parse_args_into_dataclasses()
parser = HfArgumentParser((M, TrainingArguments))
_, training_args = parser.parse_args_into_dataclasses()
training_args.torch_compile_backend = "inductor"
training_args.fp16_full_eval = flag
"""


def test_compile_and_fp16_switches_set_late():
    found = [(f.code, f.start.line) for f in port(LATE_COMPILE_FP16, "xla")[1] if f.code in ("HF003", "HF014")]
    assert found == [("HF014", 7), ("HF003", 9), ("HF014", 13), ("HF003", 14)]
    for target in ("neuron", "tpu"):  # HF014 is xla's; fp16 evaluation is every target's
        findings = port(LATE_COMPILE_FP16, target)[1]
        assert [(f.code, f.start.line) for f in findings if f.code in ("HF003", "HF014")] == [
            ("HF003", 9),
            ("HF003", 14),
        ]


# HF015 set as an attribute (rleft2): on XLA:CPU with a tiny Llama, `model.generation_config.cache_implementation
# = "offloaded"` makes `generate` fail (`AcceleratorError: CUDA error`), `"dynamic"` generates
OFFLOADED_ATTRIBUTE = """\
from transformers import AutoModelForCausalLM, GenerationConfig
model = AutoModelForCausalLM.from_pretrained("m")
model.generation_config.cache_implementation = "offloaded"
config = GenerationConfig(max_new_tokens=4)
config.cache_implementation = "offloaded_static"
other.cache_implementation = "offloaded"
model.generation_config.cache_implementation = "static"
"""


@pytest.mark.parametrize("target", TARGETS)
def test_offloaded_cache_set_as_an_attribute(target):
    new, findings = port(OFFLOADED_ATTRIBUTE, target)
    assert [(f.code, f.start.line, f.applied) for f in findings if f.code == "HF015"] == [
        ("HF015", 3, True),
        ("HF015", 5, True),
    ]
    assert 'model.generation_config.cache_implementation = "dynamic"\n' in new
    assert 'config.cache_implementation = "static"\n' in new and 'other.cache_implementation = "offloaded"' in new


def test_a_late_switch_reads_the_names_last_binding():
    """The name's last binding in its scope decides (the statement walk goes from the end: the twenty-third
    rleft2 read found the first one read)."""
    parsed_last = """\
from transformers import HfArgumentParser, TrainingArguments
args = load()
parser = HfArgumentParser((M, TrainingArguments))
_, args = parser.parse_args_into_dataclasses()
args.activation_checkpointing = True
"""
    built_first = (
        'from transformers import TrainingArguments\nargs = TrainingArguments(output_dir="o")\nargs = load()\n'
    )
    assert [(f.code, f.start.line) for f in port(parsed_last, "xla")[1] if f.code == "HF012"] == [("HF012", 5)]
    rebound = built_first + "args.activation_checkpointing = True\n"
    assert "HF012" not in codes(port(rebound, "xla")[1])


def test_a_parsers_dataclass_tuple_is_read_at_its_last_binding():
    """`TrlParser(dataclass_types)` / `HfArgumentParser(types)` read the tuple's last binding in the scope,
    as `last_binding` reads a late switch's name (the twenty-third trlp read found the first one read)."""
    trl = "from trl import ModelConfig, ScriptArguments, SFTConfig, TrlParser\n"
    with_sft, without = "(ScriptArguments, SFTConfig, ModelConfig)", "(ScriptArguments, ModelConfig)"
    rebound_to_sft = (
        f"{trl}dataclass_types = {without}\ndataclass_types = {with_sft}\nparser = TrlParser(dataclass_types)\n"
    )
    assert [(f.code, f.start.line) for f in port(rebound_to_sft, "xla")[1] if f.code == "HF004"] == [("HF004", 4)]
    rebound_away = (
        f"{trl}dataclass_types = {with_sft}\ndataclass_types = {without}\nparser = TrlParser(dataclass_types)\n"
    )
    assert not {"HF004", "HF012"} & codes(port(rebound_away, "xla")[1])
    hf = (
        "from transformers import HfArgumentParser, TrainingArguments\n"
        "types = {}\ntypes = {}\nparser = HfArgumentParser(types)\n"
        "_, args = parser.parse_args_into_dataclasses()\nargs.activation_checkpointing = True\n"
    )
    rebound_to_training = hf.format("(M, N)", "(M, TrainingArguments)")
    assert [(f.code, f.start.line) for f in port(rebound_to_training, "xla")[1] if f.code == "HF012"] == [("HF012", 6)]
    rebound_away = hf.format("(M, TrainingArguments)", "(M, N)")
    assert not {"HF004", "HF012"} & codes(port(rebound_away, "xla")[1])


@pytest.mark.parametrize("target", TARGETS)
def test_a_late_switch_on_arguments_from_a_parser_built_inline(target):
    """`HfArgumentParser((M, TrainingArguments)).parse_args_into_dataclasses()` unpacked into names: the
    training arguments' place is read as from a parser bound to a name (the twenty-third trlp read)."""
    src = """\
from transformers import HfArgumentParser, TrainingArguments
model_args, args = HfArgumentParser((M, TrainingArguments)).parse_args_into_dataclasses()
args.activation_checkpointing = True
model_args.use_liger_kernel = True
args.use_liger_kernel = True
"""
    expected = [("HF012", 3), ("HF013", 5)] if target == "xla" else [("HF013", 5)]
    assert [(f.code, f.start.line) for f in port(src, target)[1] if f.code in ("HF012", "HF013")] == expected


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_a_late_switch_in_a_replaced_copy_of_the_arguments(target):
    """`dataclasses.replace(args, use_liger_kernel=True)` sets the switch on the copy the Trainer reads, as
    `args.use_liger_kernel = True` does (twenty-fourth rules4 read); a false value and a copy of something
    else stay silent."""
    src = """\
import dataclasses
from transformers import TrainingArguments
args = TrainingArguments(output_dir="o")
args = dataclasses.replace(args, use_liger_kernel=True, fp16_full_eval=True)
args = dataclasses.replace(args, use_liger_kernel=False)
other = dataclasses.replace(config, use_liger_kernel=True)
"""
    found = [(f.code, f.start.line, f.start.column) for f in port(src, target)[1] if f.code in ("HF003", "HF013")]
    assert found == [("HF013", 4, 33), ("HF003", 4, 56)]
    assert all("in a replaced copy" in f.message for f in port(src, target)[1] if f.code == "HF013")


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_a_replace_of_a_replace_and_switches_read_as_the_arguments_are_built(target):
    """`dataclasses.replace` builds the arguments anew (`__post_init__` again; seen with transformers 5.24:
    `tf32=True` raises, `fp16=True` makes the copy's mixed precision fp16, `torch_compile=True` its backend
    inductor), and a copy of a copy is still the training arguments (twenty-fifth rleft read): reported as
    `args.x = True` is; a false value and a copy of something else stay silent."""
    src = """\
import dataclasses
from dataclasses import replace
from transformers import TrainingArguments
args = TrainingArguments(output_dir="o")
a2 = dataclasses.replace(args, bf16=True)
a3 = replace(a2, use_liger_kernel=True, fp16=True, tf32=True, torch_compile=True)
a3 = replace(a3, fp16=False, tf32=False, torch_compile=False)
cfg = replace(config, fp16=True, tf32=True)
"""
    found = [(f.code, f.start.line, f.start.column) for f in port(src, target)[1] if f.code != "HF004"]
    compiled = [("HF014", 6, 62)] if target == "xla" else []
    assert found == [("HF013", 6, 17), ("HF003", 6, 40), ("HF013", 6, 51), *compiled]
    assert all("in a replaced copy of the arguments" in f.message for f in port(src, target)[1] if f.code != "HF004")


def test_parser_reads_take_the_binding_before_and_a_parser_from_another_module_is_said_unknown():
    """The parser and its dataclasses are read at the bindings that reach the statement that parses and the
    parser's call, not the scope's last (rebound after them); a parser an imported function returns
    (`from .args import make_parser`) is built in another module: its late switch is reported as not known
    here, as the project index keeps no parser's dataclasses (twenty-fifth rleft read). A callee porter
    cannot place (no import binds it) stays silent."""
    src = """\
from transformers import HfArgumentParser, TrainingArguments
from .args import make_parser
from config import ModelArguments, build
def main():
    parser = HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    parser = HfArgumentParser((TrainingArguments, ModelArguments))
    training_args.use_liger_kernel = True
def other():
    types = (ModelArguments, TrainingArguments)
    parser = HfArgumentParser(types)
    model_args, training_args = parser.parse_args_into_dataclasses()
    types = (TrainingArguments, ModelArguments)
    training_args.use_liger_kernel = True
def elsewhere():
    parser = make_parser()
    a, b = parser.parse_args_into_dataclasses()
    b.use_liger_kernel = True
    c, d = build().parse_args_into_dataclasses()
    d.use_liger_kernel = True
    e, f = unknown().parse_args_into_dataclasses()
    f.use_liger_kernel = True
"""
    found = [f for f in port(src, "tpu")[1] if f.code == "HF013"]
    assert [f.start.line for f in found] == [8, 14, 18, 20]
    assert all("not known here" not in f.message for f in found[:2])
    assert "`make_parser()` returns, built in another module" in found[2].message
    assert all("is not known here" in f.message for f in found[2:])


def test_a_parser_from_another_module_is_said_unknown_through_a_module_and_in_a_file_naming_no_library():
    """A parser another module builds (twenty-sixth rleft read): through an imported module (`from . import args`:
    `args.make_parser()`, `config.args.make_parser()`), an alias, or inline; also where the file names no library
    of the family and builds no parser (on 0073c76 such a file was never read: the family's prefilter and
    candidate skipped it). The project index keeps no parser's dataclasses, so each is said not known here."""
    src = """\
from . import args
from .args import make_parser as mp
import config.args
def a():
    parser = args.make_parser()
    x, y = parser.parse_args_into_dataclasses()
    y.use_liger_kernel = True
def b():
    x, y = mp().parse_args_into_dataclasses()
    y.use_liger_kernel = True
    u, v = config.args.make_parser().parse_args_into_dataclasses()
    v.use_liger_kernel = True
    w, z = self.make_parser().parse_args_into_dataclasses()
    z.use_liger_kernel = True
"""
    found = [f for f in port(src, "tpu")[1] if f.code == "HF013"]
    assert [f.start.line for f in found] == [7, 10, 12]
    callees = ["`args.make_parser()`", "`mp()`", "`config.args.make_parser()`"]
    assert all(f"the parser {c} returns, built in another module" in f.message for c, f in zip(callees, found))
    assert all("is not known here" in f.message for f in found)


def test_other_parse_methods_on_a_parser_from_another_module_are_read_in_a_file_naming_no_library():
    """`parse_dict`, `parse_json_file`, `parse_yaml_file` and trl's `parse_args_and_config` on a parser another
    module builds, in a file that names no library of the family (twenty-seventh rleft read): each opens the family
    as `parse_args_into_dataclasses` does, so the late switch is said not known here. On ec8b33c all four were
    silent (the family's tokens named `into_dataclasses` only)."""
    src = """\
from .args import make_parser
def main():
    parser = make_parser()
    (a,) = parser.parse_dict({})
    a.use_liger_kernel = True
    (b,) = parser.parse_json_file("b.json")
    b.use_liger_kernel = True
    (c,) = parser.parse_yaml_file("c.yaml")
    c.use_liger_kernel = True
    (d,) = parser.parse_args_and_config()
    d.use_liger_kernel = True
"""
    for method in ("parse_dict", "parse_json_file", "parse_yaml_file", "parse_args_and_config"):
        alone = "\n".join(line for line in src.splitlines() if "parse_" not in line or method in line) + "\n"
        found = [f for f in port(alone, "tpu")[1] if f.code == "HF013"]
        assert len(found) == 1 and "`make_parser()` returns, built in another module" in found[0].message, method
        assert "is not known here" in found[0].message


def test_a_late_switch_on_arguments_from_trl_parse_args_and_config():
    """trl's `TrlParser.parse_args_and_config()` returns the dataclasses in the parser's order, as
    `parse_args_into_dataclasses` does (trl 1.16, run: the twenty-third trlp read)."""
    src = """\
from trl import ModelConfig, ScriptArguments, SFTConfig, TrlParser
def main():
    parser = TrlParser((ScriptArguments, SFTConfig, ModelConfig))
    script_args, training_args, model_args = parser.parse_args_and_config()
    training_args.use_liger_kernel = True
    script_args.use_liger_kernel = True
"""
    assert [(f.code, f.start.line) for f in port(src, "tpu")[1] if f.code == "HF013"] == [("HF013", 5)]


# HF017 (the twenty-fourth rleft read): optimum's own GPTQ entry points go through gptqmodel too (optimum
# 2.3.0's optimum/gptq/quantizer.py, read from its wheel: `RuntimeError` without gptqmodel)
OPTIMUM_GPTQ = """\
from optimum.gptq import GPTQQuantizer, load_quantized_model
from optimum.gptq.quantizer import GPTQQuantizer as Quantizer
quantizer = GPTQQuantizer(bits=4, dataset="c4")
other = Quantizer(bits=4, dataset="c4")
model = load_quantized_model(model, save_folder="out")
"""


@pytest.mark.parametrize("target", TARGETS)
def test_optimums_gptq_quantizer_and_loader_are_reported(target):
    new, findings = port(OPTIMUM_GPTQ, target)
    found = [f for f in findings if f.code == "HF017"]
    assert [(f.start.line, f.applied) for f in found] == [(3, False), (4, False), (5, False)]
    assert "gptqmodel" in found[0].message and "torch.cuda.current_device()" in found[2].message
    assert new == OPTIMUM_GPTQ


def test_a_pre_quantized_checkpoint_is_said_to_be_unknown_not_guessed():
    """transformers decides a pre-quantized load from the checkpoint's config.json (`get_hf_quantizer`),
    which the source does not hold: HF017 says so in its docs and makes no finding from a model id."""
    import inspect

    from porter.config.ruledata import get_rule
    from tests.deps import require

    require("transformers")
    from transformers.quantizers import auto

    source = inspect.getsource(auto.get_hf_quantizer)
    assert 'getattr(config, "quantization_config", None)' in source and "pre_quantized =" in source
    covers = get_rule("HF017").covers
    assert "config.json" in covers and "only a name" in covers
    code = 'from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained("org/Llama-GPTQ")\n'
    assert [f for f in port(code, "xla")[1] if f.code == "HF017"] == []


# The parser's reads left by the twenty-third read (41-trlp, "Left"), the twenty-fourth rleft read: a parser
# returned by a function of the module (trl's scripts' `make_parser()`, with its `add_parser` branch), a
# tuple unpacked from one written out, one unpacked from a call (not known: said), and bindings in branches
MAKE_PARSER = """\
def make_parser(subparsers=None, prog=None):
    from trl import ModelConfig, ScriptArguments, SFTConfig, TrlParser

    dataclass_types = (ScriptArguments, SFTConfig, ModelConfig)
    if subparsers is not None:
        parser = subparsers.add_parser("sft", help="Run SFT", dataclass_types=dataclass_types)
    else:
        parser = TrlParser(dataclass_types, prog=prog)
    return parser


def other(flag):
    from transformers import HfArgumentParser, TrainingArguments
    if flag:
        return HfArgumentParser((M, TrainingArguments))
    return HfArgumentParser((TrainingArguments, M))


if __name__ == "__main__":
    parser = make_parser()
    script_args, training_args, model_args = parser.parse_args_and_config()
    training_args.use_liger_kernel = True
    model_args.use_liger_kernel = True
    a, b = other(True).parse_args_into_dataclasses()
    b.use_liger_kernel = True
"""
UNPACKED = """\
import sys
from transformers import HfArgumentParser, TrainingArguments
from mine import M, make_types

a, types = 1, (M, TrainingArguments)
model_args, args = HfArgumentParser(types).parse_args_into_dataclasses()
args.use_liger_kernel = True
name, unknown = make_types()
HfArgumentParser(unknown)
if sys.argv[1] == "train":
    branched = (M, TrainingArguments)
else:
    branched = (M,)
HfArgumentParser(branched)
"""


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (MAKE_PARSER, [("HF004", 8), ("HF004", 15), ("HF004", 16), ("HF013", 22)]),
        (UNPACKED, [("HF004", 6), ("HF013", 7), ("HF004", 9), ("HF004", 14)]),
    ],
    ids=["make_parser", "unpacked-and-branches"],
)
def test_a_parser_from_another_function_an_unpacked_tuple_and_branches_are_read(code, expected):
    _, findings = port(code, "neuron")
    found = [(f.code, f.start.line) for f in findings if f.code in ("HF004", "HF013")]
    assert found == expected, findings
    unknown = [f.message for f in findings if f.code == "HF004" and "not known here" in f.message]
    assert len(unknown) == (2 if code is UNPACKED else 0), unknown


@pytest.mark.parametrize("target", ["tpu", "neuron"])
def test_use_kernels_on_tpu_and_neuron_is_left_and_its_docs_say_why(target):
    """transformers 5.24 maps no hub kernel to tpu or neuron and kernelizes with every fallback on, so the
    model keeps its own layers there (the twenty-fourth rleft read): HF016 is xla's only, and says so."""
    import inspect

    from porter.config.ruledata import get_rule
    from tests.deps import require

    require("transformers")
    from transformers.integrations import hub_kernels

    source = inspect.getsource(hub_kernels)
    assert "use_fallback = KernelizeFallback.ALL" in inspect.getsource(hub_kernels.kernelize)
    assert '"tpu"' not in source and '"neuron"' not in source
    rule = get_rule("HF016")
    assert "not on tpu or neuron" in rule.covers and "KernelizeFallback.ALL" in rule.rationale
    code = (
        "from transformers import AutoModelForCausalLM\n"
        'm = AutoModelForCausalLM.from_pretrained("gpt2", use_kernels=True)\n'
    )
    new, findings = port(code, target)
    assert new == code and not [f for f in findings if f.code == "HF016"]


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_kernelize_without_fallback_is_reported_on_every_target(target):
    """kernels 0.18.3's `kernelize(..., use_fallback=False)` raises for a layer whose mapping names no kernel
    for the device (seen on CPU for tpu and neuron, on XLA:CPU for xla; twenty-fourth rules3 read): reported
    with the `[kernels_no_fallback]` reason, not fixed; a fallback that is on stays silent."""
    code = (
        "from kernels import KernelizeFallback, Mode, kernelize\n"
        "kernelize(model, mode=Mode.INFERENCE, use_fallback=False)\n"
        "kernelize(model, use_fallback=KernelizeFallback.NONE)\n"
        "kernelize(model, use_fallback=True)\n"
        "kernelize(model, use_fallback=KernelizeFallback.ALL)\n"
    )
    new, findings = port(code, target)
    found = [(f.code, f.start.line) for f in findings]
    assert found == [("HF016", 2), ("HF016", 3)]
    assert new == code
    assert all(f"device type {target}" in f.message and f.advice for f in findings)


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_kernelize_without_fallback_through_a_name_is_reported(target):
    """`use_fallback=FLAG`, `FLAG` bound in the function or the module to `False` or `KernelizeFallback.NONE`
    (twenty-fourth rules4 read): the binding is read and reported as the literal is; a name bound to `True`,
    one bound to both in branches, a parameter, and a `for` target stay silent."""
    code = (
        "from kernels import KernelizeFallback, kernelize\n"
        "STRICT = False\n"
        "LOOSE = True\n"
        "def strict(model):\n"
        "    flag = KernelizeFallback.NONE\n"
        "    kernelize(model, use_fallback=flag)\n"
        "    kernelize(model, use_fallback=STRICT)\n"
        "def loose(model, given=False):\n"
        "    kernelize(model, use_fallback=LOOSE)\n"
        "    kernelize(model, use_fallback=given)\n"
        "    if model:\n"
        "        either = False\n"
        "    else:\n"
        "        either = True\n"
        "    kernelize(model, use_fallback=either)\n"
        "    STRICT = True\n"
        "    kernelize(model, use_fallback=STRICT)\n"
        "    looped = False\n"
        "    for looped in (True,):\n"
        "        kernelize(model, use_fallback=looped)\n"
    )
    new, findings = port(code, target)
    assert [(f.code, f.start.line) for f in findings] == [("HF016", 6), ("HF016", 7)]
    assert new == code
    assert "(`KernelizeFallback.NONE`, bound above)" in findings[0].message
    assert "(`False`, bound above)" in findings[1].message
    assert all(f"device type {target}" in f.message and f.advice for f in findings)


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_kernelize_fallback_flags_and_a_name_rebound_after_the_call(target):
    """`use_fallback=` is read as kernels 0.18.3 reads it (twenty-fifth rleft read, run on CPU for tpu and
    neuron with a CUDA-only mapping): a `KernelizeFallback` without `NO_DEVICE` (`NO_LAYER`, `NO_LAYER |
    CANNOT_LOAD`, `ALL & ~NO_DEVICE`, `DEFAULT ^ NO_DEVICE`) raises, one with it (`NO_DEVICE`, `~NO_LAYER`) keeps
    the layer's own forward; a name is read at the bindings that reach the call, not one after it, nor one
    in the other branch of an `if`."""
    code = (
        "from kernels import KernelizeFallback as K, kernelize\n"
        "def strict(model, c):\n"
        "    F = False\n"
        "    kernelize(model, use_fallback=F)\n"
        "    F = True\n"
        "    G = K.NONE; kernelize(model, use_fallback=G); G = K.ALL\n"
        "    kernelize(model, use_fallback=K.NO_LAYER)\n"
        "    kernelize(model, use_fallback=K.NO_LAYER | K.CANNOT_LOAD)\n"
        "    kernelize(model, use_fallback=K.ALL & ~K.NO_DEVICE)\n"
        "    kernelize(model, use_fallback=K.DEFAULT ^ K.NO_DEVICE)\n"
        "def loose(model, c):\n"
        "    kernelize(model, use_fallback=K.NO_DEVICE)\n"
        "    kernelize(model, use_fallback=K.NO_LAYER | K.NO_DEVICE)\n"
        "    kernelize(model, use_fallback=~K.NO_LAYER)\n"
        "    F = True\n"
        "    kernelize(model, use_fallback=F)\n"
        "    F = False\n"
        "    H = True\n"
        "    if c:\n"
        "        H = False\n"
        "    else:\n"
        "        kernelize(model, use_fallback=H)\n"
    )
    new, findings = port(code, target)
    assert [(f.code, f.start.line) for f in findings] == [("HF016", n) for n in (4, 6, 7, 8, 9, 10)]
    assert new == code
    assert "(`False`, bound above)" in findings[0].message and "(`K.NONE`, bound above)" in findings[1].message
    assert all(
        "no `KernelizeFallback.NO_DEVICE`" in f.message and f"device type {target}" in f.message for f in findings
    )


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_kernelize_fallback_a_name_in_flags_a_loop_s_next_pass_and_a_call_inside_a_statement(target):
    """`use_fallback=` read where the call reads it (twenty-fifth rleft2 read): a name inside a flag
    combination at the bindings that reach the call; a binding after the call in a loop that holds it, at the
    loop's next pass (unless the loop's body binds the name before the call); a `kernelize(...)` inside a
    statement (`m = kernelize(...).eval()`, `return kernelize(...)`) at the bindings before that statement,
    not at the scope's end."""
    code = (
        "from kernels import KernelizeFallback as K, kernelize\n"
        "def combo(model):\n"
        "    F = K.NO_LAYER\n"
        "    kernelize(model, use_fallback=F | K.CANNOT_LOAD)\n"
        "    G = K.NO_DEVICE\n"
        "    kernelize(model, use_fallback=G | K.NO_LAYER)\n"
        "def looped(models):\n"
        "    F = True\n"
        "    for m in models:\n"
        "        kernelize(m, use_fallback=F)\n"
        "        F = False\n"
        "    H = True\n"
        "    for m in models:\n"
        "        H = True\n"
        "        kernelize(m, use_fallback=H)\n"
        "        H = False\n"
        "    J = K.NO_DEVICE\n"
        "    while models:\n"
        "        kernelize(models.pop(), use_fallback=J)\n"
        "        J = K.NONE\n"
        "def inside(model):\n"
        "    F = False\n"
        "    m = kernelize(model, use_fallback=F).eval()\n"
        "    F = True\n"
        "    G = True\n"
        "    n = kernelize(model, use_fallback=G).eval()\n"
        "    G = False\n"
        "    return kernelize(model, use_fallback=G)\n"
        "def returned(model):\n"
        "    F = True\n"
        "    return kernelize(model, use_fallback=F)\n"
        "    F = False\n"
    )
    new, findings = port(code, target)
    assert [(f.code, f.start.line) for f in findings] == [("HF016", n) for n in (4, 10, 19, 23, 28)]
    assert new == code
    assert "bound after the call in the loop that holds it" in findings[1].message
    assert "(`K.NONE`, bound after the call" in findings[2].message
    assert "(`False`, bound above)" in findings[3].message and "(`False`, bound above)" in findings[4].message
    assert all(f"device type {target}" in f.message for f in findings)


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_kernelize_fallback_names_in_a_bound_value_outer_loops_and_a_header_read_what_the_call_sees(target):
    """`use_fallback=` read as the call sees it (twenty-sixth rleft read): a name inside a bound value at that
    value's own statement (`G = F | K.CANNOT_LOAD`; `F` rebound after it does not count; a chain of names); a
    binding after the call in a loop outside the innermost one, at that loop's next pass; a call in an `if`,
    `while`, `for` or `with` header at the bindings before the header, not at the function's end (nor those in
    its own blocks, but a `while`'s at its next pass). On 0073c76: all six silent, and `header_kept`'s `with`
    reported (read at the function's end: `False`)."""
    code = (
        "from kernels import KernelizeFallback as K, kernelize\n"
        "def bound(model):\n"
        "    F = K.NO_LAYER\n"
        "    G = F | K.CANNOT_LOAD\n"
        "    kernelize(model, use_fallback=G)\n"
        "    F = K.NO_DEVICE\n"
        "    H = F | K.NO_LAYER\n"
        "    F = K.NONE\n"
        "    kernelize(model, use_fallback=H)\n"
        "def chain(model):\n"
        "    A = K.NONE\n"
        "    B = A | K.NO_LAYER\n"
        "    C = B\n"
        "    kernelize(model, use_fallback=C)\n"
        "def outer(groups):\n"
        "    J = K.NO_DEVICE\n"
        "    for ms in groups:\n"
        "        for m in ms:\n"
        "            kernelize(m, use_fallback=J)\n"
        "        J = K.NONE\n"
        "def headers(model):\n"
        "    F = False\n"
        "    if kernelize(model, use_fallback=F):\n"
        "        F = True\n"
        "    F = True\n"
        "    with kernelize(model, use_fallback=F) as k:\n"
        "        F = False\n"
        "    F = False\n"
        "    for x in kernelize(model, use_fallback=F):\n"
        "        F = True\n"
        "    F = True\n"
        "    while kernelize(model, use_fallback=F):\n"
        "        F = False\n"
        "def header_kept(model):\n"
        "    F = True\n"
        "    with kernelize(model, use_fallback=F):\n"
        "        pass\n"
        "    F = False\n"
    )
    new, findings = port(code, target)
    assert [(f.code, f.start.line) for f in findings] == [("HF016", n) for n in (5, 14, 19, 23, 29, 32)]
    assert new == code
    assert "(`F | K.CANNOT_LOAD`, bound above)" in findings[0].message and "(`B`, bound above)" in findings[1].message
    assert "(`K.NONE`, bound after the call in the loop" in findings[2].message
    assert "(`False`, bound above)" in findings[3].message and "(`False`, bound above)" in findings[4].message
    assert "(`False`, bound after the call in the loop" in findings[5].message
    assert all(f"device type {target}" in f.message for f in findings)


@pytest.mark.parametrize("target", ["tpu", "neuron"])
def test_kernelize_fallback_reads_the_file_s_own_kernel_mapping_for_the_target_device(target):
    """The file's own mapping, as kernels 0.18.3 reads it (twenty-sixth rleft read; run on CPU with
    `device="tpu"` / `"neuron"`): a layer whose entry names the target's device type (a string or
    `Device(type=...)`) goes on to load that kernel, so where every layer the file maps has one, `use_fallback=False`
    raises for no device and is not reported; a layer without one is named in the finding; a mapping porter cannot
    read (imported) leaves the finding as it was. On 0073c76: the first reported, the second without the names."""
    head = "from kernels import Device, LayerRepository, kernelize, register_kernel_mapping, use_kernel_mapping\n"
    head += "from kernels import KernelizeFallback as K\n"
    repo = "repo = LayerRepository(repo_id='kernels-community/activation', layer_name='SiluAndMul', version=1)\n"
    mapped = (
        f"MAPPING = {{'SiluAndMul': {{'cuda': repo, '{target}': repo}}, 'RMSNorm': {{Device(type='{target}'): repo}}}}\n"
        "def run(model):\n"
        "    with use_kernel_mapping(MAPPING):\n"
        "        kernelize(model, use_fallback=False)\n"
    )
    partly = (
        f"register_kernel_mapping({{'SiluAndMul': {{'cuda': repo, '{target}': repo}}, 'RMSNorm': {{'cuda': repo}}}})\n"
        "kernelize(model, use_fallback=False)\n"
    )
    unread = "from .maps import MAPPING\nregister_kernel_mapping(MAPPING)\nkernelize(model, use_fallback=False)\n"
    assert [f.code for f in port(head + repo + mapped.replace("False", "K.ALL"), target)[1] if f.code == "HF016"] == []
    found = [f for f in port(head + repo + partly, target)[1] if f.code == "HF016"]
    assert [f.start.line for f in found] == [5]
    assert found[0].message.endswith(f"this file's mapping names no `{target}` kernel for `RMSNorm`")
    found = [f for f in port(head + unread, target)[1] if f.code == "HF016"]
    assert [f.start.line for f in found] == [5] and "this file's mapping" not in found[0].message


@pytest.mark.parametrize("target", ["tpu", "neuron"])
@pytest.mark.parametrize(
    ("flags", "reported"),
    [("False", True), ("K.NO_LAYER", True), ("K.NO_LAYER | K.CANNOT_LOAD", False), ("K.ALL & ~K.NO_DEVICE", False)],
)
def test_kernelize_fallback_on_a_mapping_naming_the_target_says_the_hub_s_build_is_not_known_here(
    target, flags, reported
):
    """Where the file's mapping names the target's kernel for every layer (twenty-seventh rleft read): kernels 0.18.3
    loads each repository's build for the host's backend and raises `FileNotFoundError` where it has none unless
    `CANNOT_LOAD` is set (its source; run on CPU with a repository built for another backend only). Whether the hub
    repository has a tpu or neuron build is not in the file: reported as not known here without `CANNOT_LOAD` (`ALL`
    holds it). On ec8b33c all four were silent."""
    code = (
        "from kernels import KernelizeFallback as K, LayerRepository, kernelize, use_kernel_mapping\n"
        "repo = LayerRepository(repo_id='kernels-community/activation', layer_name='SiluAndMul', version=1)\n"
        f"with use_kernel_mapping({{'SiluAndMul': {{'{target}': repo}}}}):\n"
        f"    kernelize(model, use_fallback={flags})\n"
    )
    found = [f for f in port(code, target)[1] if f.code == "HF016"]
    if not reported:
        assert found == []
        return
    assert [f.start.line for f in found] == [4]
    assert "has no `KernelizeFallback.CANNOT_LOAD`" in found[0].message
    assert f"names a `{target}` kernel for every layer it maps" in found[0].message
    assert "Cannot find a build variant for this system" in found[0].message and "not known here" in found[0].message
    assert "CANNOT_LOAD" in found[0].advice


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_a_read_in_a_one_line_body_is_read_not_an_internal_error(target):
    """A `kernelize(..., use_fallback=name)` or a parse in a one-line body (`for m in ms: kernelize(...)`,
    `if c: parser = ...; a, b = parser.parse_args_into_dataclasses()`): the walk's statement there is the
    suite; on 1eb1184 the file was left unchecked (`TypeError: 'SimpleStatementSuite' object is not
    iterable`; twenty-fifth rleft2 read). Now the suite is the statement: read as an indented body is."""
    code = (
        "from kernels import KernelizeFallback as K, kernelize\n"
        "from transformers import HfArgumentParser, TrainingArguments\n"
        "from config import ModelArguments\n"
        "def looped(models):\n"
        "    G = K.NO_DEVICE\n"
        "    for m in models: kernelize(m, use_fallback=G); G = False\n"
        "    H = False\n"
        "    for m in models: H = True; kernelize(m, use_fallback=H)\n"
        "def parsed(c):\n"
        "    types = (ModelArguments, TrainingArguments)\n"
        "    if c: parser = HfArgumentParser(types); model_args, training_args = parser.parse_args_into_dataclasses()\n"
        "    training_args.use_liger_kernel = True\n"
    )
    findings = [f for f in port(code, target)[1] if f.code in ("HF016", "HF013")]
    assert [(f.code, f.start.line) for f in findings][:1] == [("HF016", 6)]
    assert "(`False`, bound after the call in the loop that holds it" in findings[0].message
    assert ("HF016", 8) not in [(f.code, f.start.line) for f in findings]


def test_a_local_pre_quantized_checkpoint_is_said_to_be_unread(tmp_path):
    """A checkpoint folder of the project whose config.json holds a `quantization_config` (twenty-fourth
    rules3 read): lint ports each file from its own bytes (cache, stat index) and transformers resolves a
    relative path against the working directory, so HF017 does not read it, says so, and finds nothing."""
    import json

    from porter.config.ruledata import get_rule
    from tests.helpers import write_files

    covers, rationale = get_rule("HF017").covers, get_rule("HF017").rationale
    assert "a local folder of the project" in covers and "the working directory's" in covers
    assert "os.path.isdir(pretrained_model_name_or_path)" in rationale and "stat index" in rationale
    config = {"model_type": "llama", "quantization_config": {"quant_method": "gptq", "bits": 4}}
    write_files(tmp_path, {"ckpt/config.json": json.dumps(config), "train.py": ""})
    code = 'from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained("./ckpt")\n'
    assert [f for f in port(code, "xla", path=str(tmp_path / "train.py"))[1] if f.code == "HF017"] == []


REBOUND_AFTER = """\
from transformers import TrainingArguments


def before_rebind():
    args = TrainingArguments(output_dir="o")
    args.use_liger_kernel = True
    args = other()


def after_rebind():
    args = other()
    args.use_liger_kernel = True
    args = TrainingArguments(output_dir="o")


def same_line():
    args = TrainingArguments(output_dir="o"); args.use_liger_kernel = True; args = other()
"""


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_a_late_switch_reads_the_binding_before_it_not_a_later_one(target):
    """A switch set on the built arguments is read from the binding the statement sees, not the scope's
    last (41-rleft's "Left", the twenty-fourth rules3 read): reported before a rebinding to another value,
    silent where only a later binding is training arguments."""
    found = [(f.code, f.start.line) for f in port(REBOUND_AFTER, target)[1] if f.code == "HF013"]
    assert found == [("HF013", 6), ("HF013", 17)]


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_kernelize_fallback_reads_code_after_a_return_in_a_try_as_dead(target):
    """Code after a statement that never ends normally never runs (twenty-eighth rleft read): after a `try` whose
    body returns (with no handler, or handlers that all return) the call is dead, whatever its `finally` binds; a
    binding after a `return` in its block never reaches a call. On 110255d: `fin_return`, `handlers_return`,
    `after_return` reported (the dead `finally`'s or line's `K.NONE` read at a call that never runs), and
    `dead_branch` silent (its dead `K.NO_DEVICE` read as a branch beside `K.NONE`)."""
    code = (
        "from kernels import KernelizeFallback as K, kernelize\n"
        "def fin_return(model):\n"
        "    E = K.NO_DEVICE\n"
        "    try:\n"
        "        return\n"
        "    finally:\n"
        "        E = K.NONE\n"
        "    kernelize(model, use_fallback=E)\n"
        "def handlers_return(model):\n"
        "    try:\n"
        "        return model\n"
        "    except KeyError:\n"
        "        raise\n"
        "    finally:\n"
        "        pass\n"
        "    kernelize(model, use_fallback=False)\n"
        "def after_return(model):\n"
        "    E = K.NO_DEVICE\n"
        "    return\n"
        "    E = K.NONE\n"
        "    kernelize(model, use_fallback=E)\n"
        "def dead_branch(model, c):\n"
        "    E = K.NONE\n"
        "    if c:\n"
        "        return\n"
        "        E = K.NO_DEVICE\n"
        "    kernelize(model, use_fallback=E)\n"
        "def handler_goes_on(model):\n"
        "    E = K.NO_DEVICE\n"
        "    try:\n"
        "        return\n"
        "    except KeyError:\n"
        "        pass\n"
        "    finally:\n"
        "        E = K.NONE\n"
        "    kernelize(model, use_fallback=E)\n"
    )
    new, findings = port(code, target)
    assert [(f.code, f.start.line) for f in findings] == [("HF016", n) for n in (27, 36)]
    assert new == code
    assert all("(`K.NONE`, bound above)" in f.message for f in findings)


@pytest.mark.parametrize("target", ["tpu", "neuron"])
@pytest.mark.parametrize(
    ("fallback", "reported"),
    [("", True), (", use_fallback=True", True), (", use_fallback=K.ALL", False), (", use_fallback=G", False)],
)
def test_kernelize_s_default_on_a_mapping_naming_the_target_says_the_hub_s_build_is_not_known_here(
    target, fallback, reported
):
    """kernels 0.18.3's default `use_fallback=True` is `KernelizeFallback.DEFAULT`, which has no `CANNOT_LOAD`
    (layer/layer.py: "raise on a loading error"; `kernelize_layer` re-raises the resolver's `FileNotFoundError`
    unless `CANNOT_LOAD` is set), so where the file's mapping names the target's kernel for a layer the default
    raises where the hub repository has no build for the target, as `False` does (twenty-eighth rleft read): said
    not known here, the layers named; `ALL` (or `DEFAULT | CANNOT_LOAD`) keeps the own forward. A mapping naming
    no target kernel falls back (`NO_DEVICE`): silent. On 110255d the default and `True` were silent."""
    code = (
        "from kernels import KernelizeFallback as K, LayerRepository, kernelize, use_kernel_mapping\n"
        "repo = LayerRepository(repo_id='kernels-community/activation', layer_name='SiluAndMul', version=1)\n"
        "G = K.DEFAULT | K.CANNOT_LOAD\n"
        f"with use_kernel_mapping({{'SiluAndMul': {{'{target}': repo}}, 'RMSNorm': {{'cuda': repo}}}}):\n"
        f"    kernelize(model{fallback})\n"
    )
    found = [f for f in port(code, target)[1] if f.code == "HF016"]
    cuda_only = [f for f in port(code.replace(f"'{target}': repo", "'cuda': repo"), target)[1] if f.code == "HF016"]
    assert cuda_only == []
    if not reported:
        assert found == []
        return
    assert [f.start.line for f in found] == [5]
    assert "has no `KernelizeFallback.CANNOT_LOAD`" in found[0].message
    assert f"names a `{target}` kernel for `SiluAndMul`:" in found[0].message
    assert "Cannot find a build variant for this system" in found[0].message and "not known here" in found[0].message
    assert ("the default, `True`" in found[0].message) == (fallback == "")


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_a_context_manager_defined_outside_the_file_is_said_not_known_here(target):
    """A `with` whose context manager is imported (or an instance bound to a name) is read as running its body, as
    Python runs it unless that manager's `__exit__` returns true, which lint does not read from here (twenty-eighth
    rleft read): HF016's binding and HF017's import under it are reported with that said, not known here; one
    the file defines and reads (`Loud`, whose `__exit__` returns None) is not. On 110255d neither was said."""
    code = (
        "from kernels import KernelizeFallback as K, kernelize\n"
        "from .utils import quiet\n"
        "class Loud:\n"
        "    def __exit__(self, *exc):\n"
        "        return None\n"
        "def imported_cm(model, lock):\n"
        "    E = K.NO_DEVICE\n"
        "    with quiet(), lock:\n"
        "        E = K.NONE\n"
        "    kernelize(model, use_fallback=E)\n"
        "def own_cm(model):\n"
        "    E = K.NO_DEVICE\n"
        "    with Loud():\n"
        "        E = K.NONE\n"
        "    kernelize(model, use_fallback=E)\n"
        "def load():\n"
        "    with quiet():\n"
        "        import gptqmodel\n"
        "def load_own():\n"
        "    with Loud():\n"
        "        import gptqmodel\n"
    )
    findings = port(code, target)[1]
    assert [(f.code, f.start.line) for f in findings] == [("HF016", 10), ("HF016", 15), ("HF017", 18), ("HF017", 21)]
    said = "whose context manager is not read here (not a class or generator of this file): read as running its body"
    assert f"under `with quiet(), lock`, {said}" in findings[0].message
    assert f"under `with quiet()`, {said}" in findings[2].message
    assert "not known here" not in findings[1].message + findings[3].message


LOOPS_AND_MATCHES = """from kernels import KernelizeFallback as K, kernelize
def matched(model, kind):
    match kind:
        case "a":
            return 1
        case _:
            raise ValueError(kind)
    kernelize(model, use_fallback=False)
def open_match(model, kind):
    match kind:
        case "a":
            return 1
        case other if model:
            return 2
    kernelize(model, use_fallback=False)
def forever(model, q):
    while True:
        if q.get():
            return model
    kernelize(model, use_fallback=False)
def forever_breaks(model, q):
    while True:
        if q.get():
            break
    kernelize(model, use_fallback=False)
def loop_else(model, xs):
    for x in xs:
        pass
    else:
        return
    kernelize(model, use_fallback=False)
def forever_else(model, q):
    while 1:
        if q.get():
            return
    else:
        kernelize(model, use_fallback=False)
def captured(model, kind):
    E = K.NO_DEVICE
    match kind:
        case "a":
            return 1
        case x:
            return x
    E = K.NONE
    kernelize(model, use_fallback=E)
"""


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_kernelize_fallback_reads_a_match_or_loop_that_never_ends_normally_as_python_runs_it(target):
    """Code after a `match` whose every case ends and one takes any subject (`case _:`, `case x:`), after a
    `while True:` with no `break`, after a loop whose `else` returns (no `break`), and in a `while True:`'s
    `else`, never runs (46-rleft's "Left", twenty-eighth rules2 read). On 45ebd98 all were read: the calls at
    lines 8, 20, 31, 37 reported, and `captured`'s dead `K.NONE` read at its call (46). Reached: a `match`
    whose catch-all has a guard (15), a `while True:` with a `break` (25)."""
    new, findings = port(LOOPS_AND_MATCHES, target)
    assert [(f.code, f.start.line) for f in findings] == [("HF016", 15), ("HF016", 25)]
    assert new == LOOPS_AND_MATCHES


READ_MANAGERS = """import contextlib
import unittest
from kernels import KernelizeFallback as K, kernelize


class T(unittest.TestCase):
    def test_missing(self):
        with self.assertRaises(ImportError):
            import gptqmodel

    def test_message(self):
        with self.assertRaisesRegex(ImportError, "gptq"):
            from gptqmodel import GPTQModel


def suppressed(model):
    with contextlib.suppress(KeyError):
        E = K.NONE
    kernelize(model, use_fallback=E)
"""


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_unittest_s_assert_raises_is_read_as_swallowing_and_a_read_manager_is_not_said_unread(target):
    """`with self.assertRaises(E):` (and `assertRaisesRegex`) swallows the exception it expects, as
    `pytest.raises` does: an import under it is optional (46-rleft's "Left", twenty-eighth rules2 read), and a
    binding under `contextlib.suppress(...)`, a manager porter reads, carries no "not read here" note. On
    45ebd98: HF017 at lines 9 and 13 (read as run on every call) and the note at line 19's finding."""
    new, findings = port(READ_MANAGERS, target)
    assert [(f.code, f.start.line) for f in findings] == [("HF016", 19)]
    assert "not read here" not in findings[0].message
    assert new == READ_MANAGERS


CONSTANT_TESTS = """from kernels import kernelize
def never(model):
    if False:
        kernelize(model, use_fallback=False)
    while 0:
        kernelize(model, use_fallback=False)
def always(model, q):
    if True:
        return
    else:
        kernelize(model, use_fallback=False)
    kernelize(model, use_fallback=False)
def forever_else(model, q):
    while True:
        if q:
            break
    else:
        kernelize(model, use_fallback=False)
    kernelize(model, use_fallback=False)
def or_catch_all(model, k):
    match k:
        case 1 | _:
            return
    kernelize(model, use_fallback=False)
def unknown(model, c):
    if c:
        return
    kernelize(model, use_fallback=False)
"""


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_kernelize_fallback_skips_the_branch_a_constant_test_never_takes(target):
    """A branch a constant test never takes never runs (`if False:`, `while 0:`, an `if True:`'s `else`, code
    after `if True: return`: CPython's compiler drops them, `dis` shows), nor a `while True:`'s `else` (with a
    `break` too), nor code after a `match` whose or-pattern holds `_` (twenty-eighth rules2 read, `dead_vs_dis`).
    On 45ebd98 lines 4, 6, 11, 12, 18 and 24 were reported. Reached: after the `break` (19), after a test
    porter cannot tell (28)."""
    new, findings = port(CONSTANT_TESTS, target)
    assert [(f.code, f.start.line) for f in findings] == [("HF016", 19), ("HF016", 28)]
    assert new == CONSTANT_TESTS


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_a_with_item_over_several_lines_is_quoted_on_one_line_and_short(target):
    """HF016's "under `with …`" quoted the item as written: its line breaks and comments went into the
    finding (`\\x0a` in concise, `%0A` in a GitHub annotation) and a long one all of its text (twenty-eighth
    read). Now one line of at most 60 characters, as other rules quote code."""
    code = (
        "from kernels import KernelizeFallback as K, kernelize\n"
        "from .utils import quiet\n"
        "def f(model):\n"
        "    E = K.NO_DEVICE\n"
        "    with quiet(\n"
        "        'a',  # a comment\n"
        f"        '{'Z' * 200}',\n"
        "    ):\n"
        "        E = K.NONE\n"
        "    kernelize(model, use_fallback=E)\n"
    )
    message = port(code, target)[1][0].message
    quoted = message.split("under `with ", 1)[1].split("`,", 1)[0]
    assert "\n" not in message and len(quoted) == 60, message
    assert quoted.startswith("quiet( 'a', # a comment 'ZZZ") and quoted.endswith("ZZZ..."), message
