"""`--portable` (issue 11, point 5): one codebase for CUDA, the CPU and the target through
`torch.accelerator`. Unit checks on the spellings, and the fixture projects' portable ports
run on the CPU with the losses of the originals."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from porter.cli import app
from porter.config.settings import Settings
from tests.helpers import port, port_tree
from tests.programs import run_programs

ROOT = Path(__file__).resolve().parent.parent
PROJECTS = ROOT / "fixtures" / "projects"
ACC_TYPE = 'torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"'
ACC = "torch.accelerator.current_accelerator(check_available=True)"


def src(code: str) -> str:
    return textwrap.dedent(code).lstrip("\n")


def portable(code: str, target: str = "neuron"):
    return port(src(code), target, portable=True)


HELPER = (
    "def _device_type() -> str:\n"
    '    """The accelerator\'s device type ("cuda", "neuron", "tpu", ...), or "cpu" without one."""\n'
    f"    return {ACC_TYPE}\n"
)


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_device_idioms_go_through_one_named_device(target):
    """Issue 21, point 7: a module that needs the device more than once defines it once, after
    its imports, and names it at every site."""
    new, findings = portable(
        """
        import torch
        device = "cuda" if torch.cuda.is_available() else "cpu"
        dev = torch.device("cuda")
        m = model.cuda()
        x = torch.zeros(2, device="cuda:1")
        r = f"cuda:{rank}"
        kind = "cuda" if "cuda" in device else "cpu"
    """,
        target,
    )
    assert new.startswith(f"import torch\n\n\n{HELPER}\n\ndevice = _device_type()\n")
    assert "dev = torch.device(_device_type())\n" in new
    assert "m = model.to(_device_type())\n" in new
    assert 'x = torch.zeros(2, device=f"{_device_type()}:1")\n' in new
    assert 'r = f"{_device_type()}:{rank}"\n' in new
    assert "kind = torch.device(device).type\n" in new
    assert new.count("torch.accelerator") == 2  # in the helper, nowhere else
    assert target not in new.replace(HELPER, "")  # no target-only spelling
    assert {"DEV009", "DEV001", "DEV002"} <= {f.code for f in findings}
    again, _ = port(new, target, portable=True)
    assert again == new


def test_one_site_keeps_the_expression_where_it_is():
    new, _ = portable("""
        import torch
        m = model.cuda()
    """)
    assert new == f"import torch\nm = model.to({ACC})\n"
    new, _ = portable("""
        import torch
        r = f"cuda:{rank}"
    """)
    assert new == 'import torch\nr = f"{' + ACC_TYPE.replace('"cpu"', "'cpu'") + '}:{rank}"\n'
    new, _ = portable("""
        import torch
        def f():
            return ("cuda" if torch.cuda.is_available() else "cpu"), None
    """)
    assert f"return ({ACC_TYPE}), None" in new


def test_the_helper_goes_after_the_imports_and_keeps_its_name_free():
    new, _ = portable('''
        """A module."""
        import os

        import torch

        try:
            import apex
        except ImportError:
            apex = None
        _device_type = "mine"
        DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


        def move(x):
            return x.cuda()
    ''')
    helper = HELPER.replace("_device_type", "_accelerator_type")
    assert "    apex = None\n\n\n" + helper + '\n\n_device_type = "mine"\nDEVICE = _accelerator_type()\n' in new
    assert "return x.to(_accelerator_type())" in new
    again, _ = port(new, "neuron", portable=True)
    assert again == new


def test_a_second_run_reuses_the_helper():
    partly = f"import torch\n\n\n{HELPER}\n\nd = _device_type()\nm = model.cuda()\nn = model.cuda()\n"
    new, _ = port(partly, "neuron", portable=True)
    assert new.count("def _device_type") == 1
    assert new.endswith("m = model.to(_device_type())\nn = model.to(_device_type())\n")


def test_cuda_api_takes_the_accelerator_column_or_stays_reported():
    new, findings = portable("""
        import torch
        torch.cuda.set_device(local_rank)
        torch.cuda.synchronize()
        n = torch.cuda.device_count()
        state = torch.cuda.get_rng_state()
        ok = torch.cuda.is_bf16_supported()
    """)
    assert "torch.accelerator.set_device_index(local_rank)" in new
    assert "torch.accelerator.synchronize()" in new and "torch.accelerator.device_count()" in new
    # torch.neuron.* and constants answering a CUDA question are not portable: kept, reported
    assert "torch.cuda.get_rng_state()" in new and "torch.cuda.is_bf16_supported()" in new
    manual = {f.code for f in findings if not f.applied}
    assert {"CUDA004", "CUDA007"} <= manual


def test_distributed_nccl_becomes_the_device_default():
    new, _ = portable("""
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        dist.init_process_group(backend="nccl")
        dist.init_process_group("nccl", init_method="env://")
        backend = "nccl"
        model = DDP(model, device_ids=[local_rank], output_device=local_rank)
    """)
    assert "dist.init_process_group()\n" in new
    assert 'dist.init_process_group(init_method="env://")\n' in new
    assert f"backend = torch.distributed.get_default_backend_for_device({ACC_TYPE})\n" in new
    assert "model = DDP(model)\n" in new


def test_autocast_compile_flags_and_guards():
    new, findings = portable("""
        import torch
        torch.backends.cudnn.benchmark = True
        with torch.cuda.amp.autocast(dtype=torch.bfloat16):
            y = model(x)
        m = torch.compile(model)
        if x.is_cuda and x.device.type == "cuda":
            y = triton_kernel(x)
    """)
    assert "torch.backends.cudnn.benchmark = True" in new  # harmless off CUDA: kept
    assert f"with torch.autocast({ACC_TYPE}, dtype=torch.bfloat16):" in new
    assert "m = torch.compile(model)\n" in new  # inductor on CUDA/CPU; the target's backend is reported
    assert 'if x.is_cuda and x.device.type == "cuda":' in new  # CUDA-only stays CUDA-only
    comp = [f for f in findings if f.code == "COMP001"]
    assert comp and not comp[0].applied and 'backend="neuron"' in comp[0].advice


def test_xla_has_no_portable_mode():
    with pytest.raises(ValueError, match="torch.accelerator"):
        Settings(target="xla", portable=True)


def test_cli_refuses_portable_xla(tmp_path):
    f = tmp_path / "a.py"
    f.write_text("import torch\nx = torch.zeros(1).cuda()\n")
    result = CliRunner().invoke(app, ["rewrite", str(f), "--target", "xla", "--portable", "--diff"])
    assert result.exit_code == 2 and "torch.accelerator" in result.stderr


def test_portable_port_is_idempotent():
    code = (ROOT / "fixtures" / "cases" / "portable.in.py").read_text()
    once, _ = port(code, "tpu", portable=True)
    assert once != code
    twice, _ = port(once, "tpu", portable=True)
    assert twice == once


# -- the fixture projects' portable ports run on the CPU -----------------------------------


def _run(runs: list[tuple[Path, list[str]]], tmp_path: Path) -> None:
    """Each (script, args) in turn, in one process on the CPU (torch loads once)."""
    for (script, _), run in zip(runs, run_programs([(script, args, tmp_path) for script, args in runs], tmp_path)):
        assert run.rc == 0, (str(script), run.stdout[-2000:] + run.stderr[-4000:])


def _ported(project: str, tmp_path: Path, target: str = "neuron") -> Path:
    out = port_tree(
        PROJECTS / project / "src", tmp_path / f"{project}-portable-{target}", target, "--portable", "--no-cache"
    )
    changed = [p.name for p in out.glob("*.py") if p.read_bytes() != (PROJECTS / project / "src" / p.name).read_bytes()]
    assert changed, "the portable port changed nothing"
    return out


@pytest.mark.torch
@pytest.mark.slow
def test_portable_gpt_trainer_runs_on_cpu_with_the_original_losses(tmp_path):
    args = ["--no-compile", "--max-iters", "3", "--eval-iters", "1", "--dtype", "float32"]
    scripts = {"original": PROJECTS / "gpt_trainer" / "src" / "train.py"}
    scripts.update({target: _ported("gpt_trainer", tmp_path, target) / "train.py" for target in ("neuron", "tpu")})
    _run([(script, [*args, "--out", str(tmp_path / f"{name}.json")]) for name, script in scripts.items()], tmp_path)
    o = json.loads((tmp_path / "original.json").read_text())
    for target in ("neuron", "tpu"):
        p = json.loads((tmp_path / f"{target}.json").read_text())
        assert p["device"] == "cpu" and len(p["losses"]) == 3, target
        assert p["losses"] == o["losses"], target  # same program on the same CPU: bit-identical


@pytest.mark.torch
@pytest.mark.slow
def test_portable_cnn_trainer_runs_on_cpu_with_the_original_losses(tmp_path):
    ported = _ported("cnn_trainer", tmp_path)
    common = ["-b", "16", "--val-size", "32", "--train-size", "64", "--epochs", "1", "--steps-per-epoch", "2"]
    _run(
        [
            (ported / "train.py", [*common, "--output-dir", str(tmp_path / "cp"), "--out", str(tmp_path / "p.json")]),
            (
                PROJECTS / "cnn_trainer" / "src" / "train.py",
                [*common, "--output-dir", str(tmp_path / "co"), "--out", str(tmp_path / "o.json")],
            ),
        ],
        tmp_path,
    )
    p, o = (json.loads((tmp_path / n).read_text()) for n in ("p.json", "o.json"))
    assert len(p["losses"]) == 2 and p["losses"] == o["losses"]


@pytest.mark.torch
@pytest.mark.slow
def test_portable_infer_bench_runs_on_cpu(tmp_path):
    ported = _ported("infer_bench", tmp_path)
    _run(
        [
            (
                ported / "bench.py",
                ["--warmup", "1", "--iters", "2", "--batch-size", "4", "--out", str(tmp_path / "b.json")],
            )
        ],
        tmp_path,
    )
    data = json.loads((tmp_path / "b.json").read_text())
    assert data["device"] == "cpu" and len(data["latency_ms"]) == 2


def test_cuda_prefix_test_stays_in_portable_mode():
    new, _ = portable("""
        import torch
        def select(device):
            if device.startswith("cuda:"):
                torch.cuda.set_device(device)
    """)
    assert 'device.startswith("cuda:")' in new and "torch.accelerator.set_device_index(device)" in new
