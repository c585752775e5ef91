"""No silence: every CUDA construct a port keeps is covered by a finding at its line.

Runs benchmarks/no_silence.py's check (an `ast` scan of the port, lines mapped back to the
original) over porter's fixture projects and every rule example, on each target. The same check
on any tree: `python benchmarks/no_silence.py PATH`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from porter.config.ruledata import all_rules
from porter.config.settings import Settings
from porter.pipeline.port import port_source
from porter.pipeline.runner import run

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from no_silence import cuda_constructs, file_constructs, kind_of, uncovered  # noqa: E402 - found through the sys.path entry above

TARGETS = ("neuron", "tpu", "xla")
PROJECTS = sorted(p for p in (ROOT / "fixtures" / "projects").glob("*/src") if p.is_dir())


def _report(missing) -> str:
    return "\n".join(f"  line {c.line} {c.kind}{' (introduced)' if new else ''}: {c.text}" for c, new in missing)


@pytest.mark.parametrize("target", TARGETS)
def test_fixture_projects_say_what_they_keep(target):
    results, _ = run(PROJECTS, Settings(target=target), cache=False, jobs=1)
    checked = 0
    for res in results:
        if res.original_source is None or res.status.value not in ("changed", "unchanged"):
            continue
        original = res.original_source.decode()
        ported = res.new_source.decode() if res.new_source is not None else None
        checked += 1
        missing = uncovered(original, ported, [f.to_dict() for f in res.findings], kind_of(res.path))
        assert not missing, f"{res.path} on {target}: CUDA code left without a finding:\n{_report(missing)}"
    assert checked >= len(PROJECTS)


def _examples():
    for rule in all_rules().values():
        for i, ex in enumerate(rule.examples):
            yield pytest.param(rule, ex, id=f"{rule.code}-{ex.target}-{i}")


@pytest.mark.parametrize("rule,example", list(_examples()))
def test_rule_examples_say_what_they_keep(rule, example):
    before = example.before.lstrip("\n")
    extra = {"extend_select": (rule.code,)} if not rule.default else {}
    if example.imported_after_port is not None:
        extra["imported_after_port"] = example.imported_after_port
    settings = Settings(target=example.target, unsafe_fixes=example.unsafe_fixes, portable=example.portable, **extra)
    path = example.file or "example.py"
    res = port_source(before.encode(), path, settings)
    ported = res.new_source.decode() if res.new_source is not None else None
    missing = uncovered(before, ported, [f.to_dict() for f in res.findings], kind_of(path))
    assert not missing, f"CUDA code left without a finding:\n{_report(missing)}"


# -- the check itself ----------------------------------------------------------------------------


def test_constructs_are_found_through_aliases_and_not_in_prose():
    src = '''import torch as t
from torch.cuda import amp
from torch.backends import cudnn
import triton
from torch.profiler import ProfilerActivity
"""Runs on cuda; see the nccl docs."""

x = t.zeros(1).cuda()
if x.is_cuda:
    t.cuda.synchronize()
scaler = amp.GradScaler()
cudnn.benchmark = True
d = f"cuda:{0}"
b = "nccl"
a = [ProfilerActivity.CUDA]
os_env = "CUDA_VISIBLE_DEVICES"
label = "cudas"


def step(scaler: amp.GradScaler | None) -> amp.GradScaler:
    x: t.cuda.Stream = None
'''
    kinds = {(c.line, c.kind) for c in cuda_constructs(src)}
    assert kinds == {
        (2, "import torch.cuda"),
        (3, "import torch.backends.cudnn"),
        (4, "import triton"),
        (8, ".cuda()"),
        (9, ".is_cuda"),
        (10, "torch.cuda.synchronize"),
        (11, "GradScaler"),
        (12, "torch.backends.cudnn"),
        (13, '"cuda"'),
        (14, '"nccl"'),
        (15, "ProfilerActivity.CUDA"),
        (16, '"CUDA_*" variable'),
    }


def test_a_construct_is_covered_only_at_its_line():
    original = "import torch\n\nx = 1\ny = torch.zeros(1).cuda()\nz = torch.cuda.current_stream()\n"
    ported = "import torch\nimport torch_xla\n\nx = 1\ny = torch.zeros(1).to(torch_xla.device())\nz = torch.cuda.current_stream()\n"
    finding = {"start": {"line": 5, "column": 4}, "end": {"line": 5, "column": 30}}
    assert uncovered(original, ported, [finding]) == []
    elsewhere = {"start": {"line": 3, "column": 0}, "end": {"line": 4, "column": 10}}
    [(c, introduced)] = uncovered(original, ported, [elsewhere])
    assert (c.kind, c.line, introduced) == ("torch.cuda.current_stream", 6, False)
    # a line porter wrote is reported as introduced
    [(c, introduced)] = uncovered(original, ported + 'w = "cuda"\n', [finding])
    assert introduced and c.kind == '"cuda"'
    # a finding over a whole function speaks only for its first line
    body = "def f(x):\n" + "    pass\n" * 12 + "    torch.cuda.synchronize()\n"
    long = {"start": {"line": 1, "column": 0}, "end": {"line": 14, "column": 0}}
    assert [c.kind for c, _ in uncovered(body, None, [long])] == ["torch.cuda.synchronize"]


def test_what_speaks_for_a_construct_besides_its_line():
    src = (
        "import torch\nimport triton\n\n\n@triton.jit\ndef k(x):\n    pass\n\n\n"
        "if torch.cuda.is_available():\n    a = torch.profiler.ProfilerActivity.CUDA\n"
    )
    at = lambda line: {"start": {"line": line, "column": 0}, "end": {"line": line, "column": 9}}  # noqa: E731
    # the kernel's finding (on its `def` line) covers the import its decorator uses; the
    # finding on the `if` test covers the branch it keeps
    assert uncovered(src, None, [at(6), at(10)]) == []
    assert {c.kind for c, _ in uncovered(src, None, [at(10)])} == {"import triton"}
    assert {c.kind for c, _ in uncovered(src, None, [at(6)])} == {"torch.cuda.is_available", "ProfilerActivity.CUDA"}


def test_the_files_around_the_python_are_audited():
    """The scan of the files that are not Python finds their CUDA lines, not prose or comments,
    and a line no finding covers is reported."""
    slurm = (ROOT / "fixtures/projects/gpt_trainer/src/scripts/train.slurm").read_text()
    assert {c.line for c in file_constructs("shell", slurm)} == {4, 7, 8, 9, 11, 12}
    assert not file_constructs("yaml", "# on cuda\ndescription: Runs on CUDA GPUs\ndocs: https://docs.nvidia.com/x\n")
    assert [c.line for c in file_constructs("yaml", "device: cuda\nuse_cudnn: true\n")] == [1, 2]
    assert [c.line for c in file_constructs("shell", 'echo "on CUDA"\nnvidia-smi\n')] == [2]
    [(c, introduced)] = uncovered("export NCCL_DEBUG=INFO\n", None, [], "shell")
    assert c.line == 1 and not introduced


def test_a_makefiles_declarations_and_a_configs_gpu_settings():
    """`.PHONY: build.cuda` is covered by the finding on the rule it declares; an `echo` written
    into NVIDIA's files is no message; `accelerator: gpu` and `gres: gpu:1` are settings."""
    make = ".PHONY: \\\n\tbuild \\\n\tbuild.cuda\nbuild.cuda:\n\tpip install -e .\n"
    phony = next(c for c in file_constructs("makefile", make) if c.line == 3)
    assert phony.also == (4,)
    at_rule = [{"start": {"line": 4}, "end": {"line": 4}}]
    assert uncovered(make, None, at_rule, "makefile") == []
    assert [c.line for c, _ in uncovered(make, None, [], "makefile")] == [3, 4]
    assert [c.line for c in file_constructs("shell", 'echo x > /etc/OpenCL/vendors/nvidia.icd\necho "on cuda"\n')] == [
        1
    ]
    config = "trainer:\n  accelerator: gpu\n  accelerator: cpu\nlauncher:\n  gres: gpu:1\n# accelerator: gpu\n"
    assert [c.line for c in file_constructs("yaml", config)] == [2, 5]


def test_the_real_files_table_is_rendered_from_a_run():
    from real_files import markdown

    run = [
        {
            "target": t,
            "dist": "llama_cpp_python==0.2.90",
            "by_kind": {
                "makefile": {"files": 2, "findings": 3, "rewritten": 0, "constructs": 5},
                "python": {"files": 1, "findings": 1, "rewritten": 1 if t == "xla" else 0, "constructs": 1},
            },
            "uncovered": [{"path": "/x/vendor/llama.cpp/Makefile", "line": 3, "text": "$(NVCC)"}],
            "vendored_uncovered": 1,
        }
        for t in TARGETS
    ]
    table = markdown(run).splitlines()
    assert table[0].startswith("| distribution | kind | files | findings (neuron / tpu / xla) |")
    assert table[2] == "| llama_cpp_python 0.2.90 | makefile | 2 | 3 | 0 | 5 | 0 |"  # the vendored line counted apart
    assert table[3] == "|  | python (counted apart) | 1 | 1 | 0 / 0 / 1 | 1 | 0 |"
    assert table[4].endswith("| 1 |") and "vendored (vendor/" in table[4]


def test_a_chain_that_has_a_branch_for_the_target_needs_nothing_there():
    """trl's env report: `if ... == "cuda": ... elif ... == "neuron": ...` already serves neuron;
    its CUDA branch is nothing to port on neuron (covered), but it still counts on tpu."""
    src = (
        "import torch\n\n"
        "kind = torch.accelerator.current_accelerator().type\n"
        'if kind == "cuda":\n    name = torch.cuda.get_device_name()\n'
        'elif kind == "neuron":\n    name = "trainium"\n'
        "else:\n    name = None\n"
    )
    assert uncovered(src, None, [], target="neuron") == []
    assert {c.kind for c, _ in uncovered(src, None, [], target="tpu")} == {'"cuda"', "torch.cuda.get_device_name"}
    assert {c.kind for c, _ in uncovered(src, None, [])} == {'"cuda"', "torch.cuda.get_device_name"}


def test_a_libraries_own_is_cuda_method_is_no_tensor_property():
    src = "import torch\n\nif current_platform.is_cuda():\n    pass\nif x.is_cuda:\n    pass\n"
    assert [(c.kind, c.line) for c in cuda_constructs(src)] == [(".is_cuda", 5)]
