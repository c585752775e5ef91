"""Run one side of a real-program check, in its own process:

    python benchmarks/real_programs/side.py JOB.json

`cpu` runs the original CUDA program on the CPU under porter's CUDA shim (its CUDA path is
taken: `torch.cuda.is_available()` answers True to the program and the libraries it calls;
torch_xla cannot be imported there, as on a GPU host); `cuda` runs a tree as it is on a real GPU
(cuda_check.py: the original, and `--portable` ports that must still take CUDA; with
`cuda_like_cpu`, random tensors drawn on the CPU and TF32 off, to measure how far the CPU
reference is from CUDA computing the same thing); `xla` runs porter's port unmodified
(PJRT_DEVICE=CPU comes from the environment). The noise-floor run of the original (`threads`,
`jitter`) runs on another thread count with its weights jittered after every step. Both sides
get the same test environment, which is the only thing this driver adds to the program:

* argv, working directory and synthetic data (torchvision data sets replaced by a small
  deterministic one; a program-specific setup may write data files);
* for libraries that still call torch-xla APIs removed in 2.9 (pytorch-ignite), those names
  restored as aliases of their replacements (on the port's side: the original has no XLA);
* dropout off when the manifest asks (the XLA and CPU random streams differ);
* where the manifest asks, one shuffle order for both sides (`fixed_shuffle`: accelerate
  reseeds shuffling samplers under XLA) and accelerate's `gather_object` as the identity in a
  single process (`accelerate_single_process`: it raises under XLA; HF010);
* random tensors a program draws on the XLA device are drawn on the CPU and moved, for the
  same reason (the CPU side draws them on the CPU already);
* every one-element `Tensor.backward()` records its loss; at the (N+1)-th the run stops; the
  gradient norm before each optimizer step (before clipping) is recorded too.

It writes JSON: the losses, the device type each loss lived on, and the error if any.
"""

from __future__ import annotations

import json
import os
import random
import runpy
import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import progenv  # noqa: E402 - found through the sys.path entry above


class StopProgram(BaseException):
    """Raised once enough losses were recorded (BaseException: programs catch Exception)."""


def _install_rng_parity(torch, device_type: str = "xla") -> None:
    from torch.overrides import TorchFunctionMode

    factories = {torch.randn, torch.rand, torch.randint, torch.randperm, torch.normal}
    like = {
        torch.rand_like,
        torch.randn_like,
        torch.randint_like,
        torch.bernoulli,
        torch.multinomial,
        torch.Tensor.multinomial,
        torch.Tensor.bernoulli,
    }
    in_place = {
        torch.Tensor.normal_,
        torch.Tensor.uniform_,
        torch.Tensor.bernoulli_,
        torch.Tensor.random_,
        torch.Tensor.exponential_,
    }

    def on_xla(t) -> bool:
        return isinstance(t, torch.Tensor) and t.device.type == device_type

    class RngOnCpu(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if func in like and args and on_xla(args[0]):
                with torch._C.DisableTorchFunction():
                    host = func(args[0].to("cpu"), *args[1:], **kwargs)
                return host.to(args[0].device)
            if func in in_place and args and on_xla(args[0]):
                with torch._C.DisableTorchFunction():
                    host = args[0].to("cpu")
                    func(host, *args[1:], **kwargs)
                    return args[0].copy_(host)
            if func in factories:
                dev = kwargs.get("device")
                if dev is not None and torch.device(dev).type == device_type:
                    kwargs["device"] = "cpu"
                    with torch._C.DisableTorchFunction():
                        host = func(*args, **kwargs)
                    return host.to(dev)
            return func(*args, **kwargs)

    RngOnCpu().__enter__()


def _record_losses(torch, limit: int, losses: list) -> None:
    original = torch.Tensor.backward
    depth = [0]  # torch-function modes re-enter Tensor.backward: record the outermost call only

    def backward(self, *args, **kwargs):
        if depth[0] == 0 and self.numel() == 1:
            if len(losses) >= limit:
                raise StopProgram
            losses.append(self.detach().clone())
        depth[0] += 1
        try:
            return original(self, *args, **kwargs)
        finally:
            depth[0] -= 1

    torch.Tensor.backward = backward


def main(job_path: str) -> int:
    job = json.loads(Path(job_path).read_text())
    out = Path(job["out"])
    root = Path(job["root"]).resolve()
    losses: list = []
    result: dict = {"side": job["side"], "losses": [], "devices": [], "error": None}
    if job["side"] in ("cpu", "cuda"):
        from porter.verify.devices import keep_reference_off_targets

        keep_reference_off_targets()  # a CUDA run, real or under the shim: no XLA, as on a GPU host
    import numpy as np
    import torch

    if job.get("threads"):
        torch.set_num_threads(job["threads"])
    if job["side"] == "cpu":
        from porter.verify.shim import install_cuda_shim

        install_cuda_shim(str(root)).__enter__()
    if job.get("jitter"):
        from independent import jitter_weights

        jitter_weights(torch)  # the noise-floor run: rounding-sized changes after every step
    _install_rng_parity(torch)
    if job.get("deterministic"):  # cuda_check.py: CUDA's run-to-run variation off, to compare trees
        torch.use_deterministic_algorithms(True, warn_only=True)
        torch.backends.cudnn.benchmark = False
    if job.get("cuda_like_cpu"):  # cuda_check.py: CUDA computing what the CPU reference computes
        _install_rng_parity(torch, "cuda")
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
    if job.get("xla_compat"):
        progenv.xla_compat()
    if job.get("no_dropout"):
        progenv.no_dropout(torch)
    if job.get("fake_datasets"):
        progenv.fake_datasets(job["fake_datasets"], job.get("dataset_size", 256))
    if job.get("fixed_shuffle"):
        progenv.fixed_shuffle(torch)
    if job.get("accelerate_single_process"):
        progenv.accelerate_single_process(torch)
    _record_losses(torch, job["losses"], losses)
    if job["side"] == "xla":
        import torch_xla  # noqa: F401 - it replaces clip_grad_norm_ when imported: wrap its own
    from independent import record_grad_norms

    norms: list = []
    record_grad_norms(torch, norms)
    workdir = Path(job["cwd"])
    workdir.mkdir(parents=True, exist_ok=True)
    os.chdir(workdir)
    if job.get("setup"):
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import setups

        getattr(setups, job["setup"])(root, workdir)
    for extra in job.get("sys_path", []):
        sys.path.insert(0, str(root / extra))
    if job.get("call"):  # a library's entry point: the library is imported from root
        entry = Path(job["call"])
        sys.path.insert(0, str(root))
    else:
        entry = root / job["entry"]
        sys.path.insert(0, str(entry.parent))
    sys.argv = [str(entry), *job.get("argv", [])]
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    try:
        runpy.run_path(str(entry), run_name="__main__")
        if len(losses) < job["losses"]:
            result["error"] = f"the program ended after {len(losses)} losses (wanted {job['losses']})"
    except StopProgram:
        pass
    except BaseException as exc:  # noqa: BLE001 - the program's failure is the result
        result["error"] = "".join(traceback.format_exception(exc))[-6000:]
    if any(t.device.type == "xla" for t in losses):
        import torch_xla

        torch_xla.sync()
    result["losses"] = [float(t.float().cpu()) for t in losses]
    result["grad_norms"] = [float(t.float().cpu()) for t in norms]
    result["devices"] = sorted({t.device.type for t in losses})
    result["threads"] = torch.get_num_threads()
    out.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
