"""The recorder under another torch than porter's own: a program's interpreter may be any torch a
target accepts (TorchTPU 0.2.0 runs torch 2.13, porter's CI venv torch 2.9)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.deps import REPO, need, tpu_python


def test_the_cuda_shim_s_generator_takes_the_metaclass_torch_gives_its_generator(monkeypatch):
    """torch 2.13 makes `torch.Generator` with its own metaclass (`OpaqueBaseMeta`): the shim's
    generator class, made with a plain `type` metaclass, was "metaclass conflict" when the shim
    was installed, so every reference run under torch 2.13 ended before the program's first line."""
    torch = need("torch")
    from porter.verify import shim

    class OpaqueMeta(type):
        pass

    class Generator(metaclass=OpaqueMeta):  # torch 2.13's shape: a Generator with a metaclass of its own
        def __new__(cls, device="cpu"):
            made = super().__new__(cls)
            made.device = torch.device(device)
            return made

    monkeypatch.setattr(shim, "_RealGenerator", Generator)
    monkeypatch.setattr(torch, "Generator", Generator)
    made: list = []
    shim.generators_on_cpu({"cuda"}, made)
    g = torch.Generator(device="cuda")
    assert g.device.type == "cpu" and made == ["cuda"]
    assert isinstance(Generator(), torch.Generator)


def test_the_cuda_shim_s_generator_installs_under_the_torch_tpu_python():
    """The same under the real torch 2.13 (the TorchTPU python): the shim installs, a CUDA
    generator is made on the CPU and torch's default generator is still a `torch.Generator`."""
    code = (
        "import torch\n"
        "from porter.verify.shim import generators_on_cpu\n"
        "generators_on_cpu({'cuda'})\n"
        "g = torch.Generator(device='cuda')\n"
        "assert g.device.type == 'cpu', g.device\n"
        "assert isinstance(torch.default_generator, torch.Generator)\n"
        "print('ok', torch.__version__)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONWARNINGS": "ignore"}
    run = subprocess.run([tpu_python(), "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.startswith("ok 2.13"), run.stdout


def test_a_python_without_safetensors_is_one_line_before_the_run(tmp_path):
    """The TorchTPU python has torch 2.13 and no safetensors: `trace record` ran the whole
    program with it, then failed at the writing of the trace, the run lost (twentieth read's
    leftover). What the side needs is now looked up in the command's interpreter before the
    program runs: one line naming the interpreter and the package, exit 2 (a usage error), for
    `trace record` and `parity-check` alike."""
    python = tpu_python()
    (tmp_path / "train.py").write_text("open('ran', 'w').write('x')\n")
    (tmp_path / "port").mkdir()
    (tmp_path / "port" / "train.py").write_text("open('ran', 'w').write('x')\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    porter = [sys.executable, "-m", "porter"]
    for args, cwd in (
        (["trace", "record", "--no-noise-floor", "-o", "t.safetensors", "--", python, "train.py"], tmp_path),
        (["parity-check", "--original", str(tmp_path), "--ported", "port", "--", python, "train.py"], tmp_path),
    ):
        out = subprocess.run([*porter, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 2, (out.returncode, out.stdout[-2000:], out.stderr[-2000:])
        said = out.stderr.strip()
        assert len(said.splitlines()) == 1 and "Traceback" not in said, said
        assert f"{python} has no safetensors" in said, said
        assert not (tmp_path / "ran").exists() and not (tmp_path / "port" / "ran").exists()
        assert not (tmp_path / "t.safetensors").exists()
