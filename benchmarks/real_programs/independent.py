"""A parity comparison written independently of porter's verifier: the check that porter's
`parity-check` verdicts are measured against (docs/parity-evidence.md).

    python independent.py compare --original DIR --ported DIR --losses N [--json OUT] -- python _porter_driver.py

It imports nothing from porter. Each side runs in its own process, its own way:

* the original: CUDA requests go to the CPU through this file's own small device mapping (a
  TorchFunctionMode), and `torch.cuda` / `torch.accelerator` say "one GPU" to the program's own
  files, so the program takes its GPU branch; USE_TORCH_XLA=0 keeps Hugging Face's libraries off
  XLA, and a run whose losses were not all on the CPU is no reference (an error, no verdict);
* the port: as it is, on PyTorch/XLA's CPU client (PJRT_DEVICE=CPU);
* on both sides, the same random numbers: a draw that would happen on a device is made on the
  CPU and moved, and dropout is replaced on both sides by one that draws its keep-mask with
  `torch.rand` on the CPU (the two sides then share every mask, whatever their devices'
  dropout kernels would draw);
* every outermost one-element `backward()` records its loss; the run stops after N.

The original runs twice: as it is, and with another thread count and its weights scaled by
1 ± 2^-16 after every optimizer step (the size of the differences two backends' arithmetic
leaves). Verdict: PASS when the port's losses equal the original's under
`torch.testing.assert_close` (rtol 1e-4, atol 1e-5), or, for a program that drifts from
itself, when every step is within 4 times the running maximum of the original's own drift
between its two runs, and when the gradient norms before each optimizer step (before clipping,
where the program clips) agree the same way (rtol 1e-3); FAIL otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

RTOL, ATOL = 1e-4, 1e-5
NORM_RTOL, NORM_ATOL = 1e-3, 1e-5
NOISE_FACTOR = 4.0
XLA_ENV = {"PJRT_DEVICE": "CPU", "XLA_FLAGS": "--xla_backend_optimization_level=0"}


class StopProgram(BaseException):
    """Raised once enough losses were recorded (BaseException: programs catch Exception)."""


def _from_tree(tree: str, depth: int = 2) -> bool:
    frame = sys._getframe(depth)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    return frame is not None and frame.f_code.co_filename.startswith(tree)


def cuda_on_cpu(torch, tree: str) -> None:
    """The original's GPU branch, run on the CPU."""
    from torch.overrides import TorchFunctionMode

    def cpu_if_cuda(dev):
        if isinstance(dev, int) and not isinstance(dev, bool):
            return "cpu"
        if isinstance(dev, (str, torch.device)) and str(dev).startswith("cuda"):
            return "cpu"
        return dev

    class CudaOnCpu(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if func is torch.Tensor.cuda or func is torch.Tensor.pin_memory:
                return args[0]
            if getattr(func, "__self__", None) is torch._C.TensorBase.is_cuda:
                return True
            if "device" in kwargs:
                kwargs["device"] = cpu_if_cuda(kwargs["device"])
            kwargs.pop("pin_memory", None)
            if func is torch.Tensor.to:
                args = (args[0], *[cpu_if_cuda(a) for a in args[1:]])
            return func(*args, **kwargs)

    real_available = torch.cuda.is_available
    real_acc = torch.accelerator.current_accelerator

    def gpu_here() -> bool:
        return _from_tree(tree, 3)

    torch.cuda.is_available = lambda: gpu_here() or real_available()
    torch.cuda.device_count = lambda: 1
    torch.cuda.current_device = lambda: 0
    torch.cuda.set_device = lambda *a, **k: None
    torch.cuda.synchronize = lambda *a, **k: None
    torch.cuda.empty_cache = lambda: None
    torch.cuda.get_device_name = lambda *a, **k: "cpu"
    torch.cuda.manual_seed = torch.cuda.manual_seed_all = lambda s: torch.default_generator.manual_seed(int(s))
    torch.accelerator.is_available = lambda: gpu_here() or False
    torch.accelerator.current_accelerator = lambda *a, **k: torch.device("cuda") if gpu_here() else real_acc(*a, **k)
    torch.accelerator.device_count = lambda: 1
    torch.accelerator.synchronize = lambda *a, **k: None
    real_autocast = torch.autocast

    class autocast(real_autocast):  # noqa: N801 - torch's name
        def __init__(self, device_type, *args, **kwargs):
            super().__init__("cpu" if device_type == "cuda" else device_type, *args, **kwargs)

    torch.autocast = torch.amp.autocast = autocast
    real_scaler = torch.amp.GradScaler
    torch.amp.GradScaler = lambda device="cuda", *a, **k: real_scaler("cpu", *a, **k)
    CudaOnCpu().__enter__()


def same_random_numbers(torch) -> None:
    """Device draws made on the CPU; dropout masks from torch.rand on the CPU, on both sides."""
    import torch.nn.functional as F
    from torch.overrides import TorchFunctionMode

    factories = {torch.randn, torch.rand, torch.randint, torch.randperm, torch.normal}
    like = {torch.rand_like, torch.randn_like, torch.randint_like}
    in_place = {
        torch.Tensor.normal_,
        torch.Tensor.uniform_,
        torch.Tensor.bernoulli_,
        torch.Tensor.random_,
        torch.Tensor.exponential_,
    }
    values = {torch.bernoulli, torch.multinomial, torch.Tensor.multinomial, torch.Tensor.bernoulli}

    def device_tensor(t) -> bool:
        return isinstance(t, torch.Tensor) and t.device.type != "cpu"

    class CpuDraws(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if func in factories and kwargs.get("device") is not None and torch.device(kwargs["device"]).type != "cpu":
                dev = kwargs.pop("device")
                return func(*args, **kwargs).to(dev)
            if func in like and args and device_tensor(args[0]):
                return func(torch.empty(args[0].shape, dtype=args[0].dtype), *args[1:], **kwargs).to(args[0].device)
            if func in in_place and args and device_tensor(args[0]):
                host = torch.empty(args[0].shape, dtype=args[0].dtype)
                func(host, *args[1:], **kwargs)
                return args[0].copy_(host)
            if func in values and args and device_tensor(args[0]):
                return func(args[0].cpu(), *args[1:], **kwargs).to(args[0].device)
            return func(*args, **kwargs)

    def masked(features: bool):
        def dropout(input, p=0.5, training=True, inplace=False):
            if not training or p == 0:
                return input
            # one keep/drop draw per element, or per channel for the feature (1d/2d/3d) kinds
            shape = list(input.shape)
            if features:
                shape = shape[:2] + [1] * (len(shape) - 2) if input.dim() > 2 else shape[:1] + [1]
            keep = (torch.rand(shape) >= p).to(input.dtype).to(input.device) / (1 - p)
            return input.mul_(keep) if inplace else input * keep

        return dropout

    F.dropout = masked(False)
    F.dropout1d = F.dropout2d = F.dropout3d = masked(True)
    CpuDraws().__enter__()


def ranks_on_gloo(torch, side: str) -> None:
    """torchrun ranks: every collective through gloo on CPU tensors. The original's nccl and the
    port's xla backends become gloo; the port's DDP becomes a plain wrapper that broadcasts rank
    0's parameters and averages each gradient over the ranks as soon as backward has
    accumulated it (copied to the CPU, summed with gloo, divided), which is what DDP computes."""
    import torch.distributed as dist
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel

    real_init, real_all_reduce = dist.init_process_group, dist.all_reduce

    def init_process_group(backend=None, init_method=None, *args, **kwargs):
        if init_method == "xla://":
            init_method = "env://"
        return real_init("gloo", init_method, *args, **kwargs)

    def all_reduce(tensor, op=dist.ReduceOp.SUM, group=None, async_op=False):
        host = tensor.detach().cpu()
        average = op == dist.ReduceOp.AVG
        real_all_reduce(host, op=dist.ReduceOp.SUM if average else op, group=group)
        if average:
            host /= dist.get_world_size(group)
        with torch.no_grad():
            tensor.copy_(host)

    dist.init_process_group = init_process_group
    dist.all_reduce = all_reduce
    if side == "original":
        real_ddp_init = DistributedDataParallel.__init__

        def ddp_init(self, module, device_ids=None, output_device=None, *args, **kwargs):
            real_ddp_init(self, module, None, None, *args, **kwargs)

        DistributedDataParallel.__init__ = ddp_init
        return

    def average(p):
        """After a parameter's gradient is accumulated in a backward that syncs: the mean over
        the ranks, as DDP has it before anything reads the gradients (clipping, the step)."""
        if not getattr(p, "_independent_sync", True):
            return
        host = p.grad.detach().cpu()
        real_all_reduce(host)
        with torch.no_grad():
            p.grad.copy_(host / dist.get_world_size())

    class AveragedGrads(nn.Module):
        def __init__(self, module, *args, **kwargs):
            super().__init__()
            self.module = module
            with torch.no_grad():
                for p in module.parameters():
                    host = p.detach().cpu()
                    dist.broadcast(host, 0)
                    p.copy_(host)
                    p.register_post_accumulate_grad_hook(average)

        def __setattr__(self, name, value):
            if name == "require_backward_grad_sync":  # gradient accumulation without a sync
                for p in self.module.parameters():
                    p._independent_sync = value
            super().__setattr__(name, value)

        def forward(self, *args, **kwargs):
            return self.module(*args, **kwargs)

    torch.nn.parallel.DistributedDataParallel = AveragedGrads
    import torch.nn.parallel.distributed as ddp_module

    ddp_module.DistributedDataParallel = AveragedGrads


def jitter_weights(torch) -> None:
    """The second run of the original: after every optimizer step each weight is scaled by
    1 ± 2^-16 (signs from a generator of its own), the size of the differences two backends'
    arithmetic leaves in a model's state; how far the losses then drift is the program's own
    sensitivity."""
    gen = torch.Generator().manual_seed(1234)

    def jitter(opt, args, kwargs):
        with torch.no_grad():
            for group in opt.param_groups:
                for p in group["params"]:
                    if p.is_floating_point():
                        sign = (torch.rand(p.shape, generator=gen) < 0.5).to(p.dtype) * 2 - 1
                        p.mul_(1 + 2.0**-16 * sign.to(p.device))

    from torch.optim.optimizer import register_optimizer_step_post_hook

    register_optimizer_step_post_hook(jitter)


def record_grad_norms(torch, norms: list) -> None:
    """Before every optimizer step, the L2 norm of all the gradients it is about to apply; where
    the program clipped them since the last step, the norm `clip_grad_norm_` measured before
    clipping (a clipped norm is the clipping threshold, whatever the gradients were). Losses
    alone cannot see every change: GRPO's loss with one update per batch is a function of the
    rewards only."""
    import functools

    import torch.nn.utils as nn_utils
    import torch.nn.utils.clip_grad as clip_module
    from torch.optim.optimizer import register_optimizer_step_pre_hook

    measured: list = []
    real_clip, real_clip_with = nn_utils.clip_grad_norm_, nn_utils.clip_grads_with_norm_

    @functools.wraps(real_clip)  # torch_xla checks the signature of what it patches
    def clip_grad_norm_(*args, **kwargs):
        total = real_clip(*args, **kwargs)
        measured.append(total.detach().clone())
        return total

    @functools.wraps(real_clip_with)
    def clip_grads_with_norm_(parameters, max_norm, total_norm, *args, **kwargs):
        # accelerate measures the norm itself (get_total_norm), then clips with it
        measured.append(torch.as_tensor(total_norm).detach().clone())
        return real_clip_with(parameters, max_norm, total_norm, *args, **kwargs)

    nn_utils.clip_grad_norm_ = clip_module.clip_grad_norm_ = clip_grad_norm_
    nn_utils.clip_grads_with_norm_ = clip_module.clip_grads_with_norm_ = clip_grads_with_norm_

    def before_step(opt, args, kwargs):
        if measured:
            norms.append(measured[-1])
            measured.clear()
            return
        with torch.no_grad():
            grads = [
                p.grad.detach().float().norm() for g in opt.param_groups for p in g["params"] if p.grad is not None
            ]
            norms.append(torch.stack(grads).norm() if grads else torch.zeros(()))

    register_optimizer_step_pre_hook(before_step)


def record_losses(torch, limit: int, losses: list) -> None:
    original = torch.Tensor.backward
    depth = [0]

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


def run_side(args) -> int:
    import numpy as np
    import torch

    tree = str(Path(args.tree).resolve()) + "/"
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.side == "original":
        cuda_on_cpu(torch, tree)
    same_random_numbers(torch)
    rank = int(os.environ.get("RANK", 0))
    if int(os.environ.get("WORLD_SIZE", 1)) > 1:
        ranks_on_gloo(torch, args.side)
    losses: list = []
    record_losses(torch, args.losses, losses)
    if args.side == "port":
        import torch_xla  # noqa: F401 - it replaces clip_grad_norm_ when imported: wrap its own
    norms: list = []
    record_grad_norms(torch, norms)
    if args.jitter:
        jitter_weights(torch)
    random.seed(rank)
    np.random.seed(rank)
    torch.manual_seed(rank)
    script, *argv = args.command[1:]
    sys.argv = [script, *argv]
    sys.path.insert(0, tree)
    error = None
    try:
        runpy.run_path(script, run_name="__main__")
        if len(losses) < args.losses:
            error = f"the program ended after {len(losses)} losses"
    except StopProgram:
        pass
    except BaseException as exc:  # noqa: BLE001 - the program's failure is the result
        import traceback

        error = "".join(traceback.format_exception(exc))[-4000:]
    if any(t.device.type == "xla" for t in losses):
        import torch_xla

        torch_xla.sync()
    out = (
        Path(args.out)
        if rank == 0 and int(os.environ.get("WORLD_SIZE", 1)) == 1
        else Path(args.out).with_suffix(f".rank{rank}.json")
    )
    out.write_text(
        json.dumps(
            {
                "losses": [float(t.float().cpu()) for t in losses],
                "grad_norms": [float(t.float().cpu()) for t in norms],
                "devices": sorted({t.device.type for t in losses}),
                "error": error,
                "threads": torch.get_num_threads(),
            }
        )
    )
    sys.stdout.flush()
    os._exit(0)


def _spawn(
    side: str,
    tree: Path,
    losses: int,
    command: list[str],
    out: Path,
    threads: int | None,
    timeout: float,
    nproc: int = 1,
) -> dict:
    """One run, in a fresh copy of `tree` (programs write next to themselves, and some refuse
    to run where an earlier run left its outputs)."""
    fresh = out.with_suffix(".tree")
    if fresh.exists():
        shutil.rmtree(fresh)
    shutil.copytree(tree, fresh, symlinks=True)
    tree = fresh
    env = dict(os.environ, PYTHONHASHSEED="0", CUDA_VISIBLE_DEVICES="")
    if side == "port":
        env.update(XLA_ENV)
    else:
        # the original is the CUDA program: transformers and accelerate would train on XLA
        # whenever torch_xla is importable (as it is here), and torch would autoload it
        env.update(USE_TORCH_XLA="0", TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    launcher = (
        [sys.executable]
        if nproc == 1
        else [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(nproc)]
    )
    cmd = (
        [*launcher, __file__, "run", "--side", side, "--tree", str(tree), "--losses", str(losses), "--out", str(out)]
        + (["--threads", str(threads), "--jitter"] if threads else [])
        + ["--", *command]
    )
    try:
        proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"losses": [], "error": f"timed out after {timeout:g} s"}
    if nproc > 1:  # one result per rank, put side by side: rank 0's losses, then rank 1's …
        parts = [out.with_suffix(f".rank{r}.json") for r in range(nproc)]
        if not all(p.is_file() for p in parts):
            return {"losses": [], "error": f"exited {proc.returncode}: {proc.stderr[-2000:]}"}
        runs = [json.loads(p.read_text()) for p in parts]
        merged = {
            "losses": [x for r in runs for x in r["losses"]],
            "per_rank": runs,
            "grad_norms": [x for r in runs for x in r.get("grad_norms", [])],
            "devices": sorted({d for r in runs for d in r["devices"]}),
            "error": next((f"rank {i}: {r['error']}" for i, r in enumerate(runs) if r["error"]), None),
            "threads": runs[0]["threads"],
        }
        out.write_text(json.dumps(merged))
        return merged
    if not out.is_file():
        return {"losses": [], "error": f"exited {proc.returncode}: {proc.stderr[-2000:]}"}
    return json.loads(out.read_text())


def verdict(original: list[float], again: list[float], port: list[float], n: int) -> dict:
    import torch

    res = {"verdict": "fail", "max_rel_diff": None, "noise_floor": None, "how": ""}
    if len(port) != n or len(original) != n:
        res["how"] = f"losses recorded: original {len(original)}, port {len(port)} (wanted {n})"
        return res
    a = torch.tensor(original, dtype=torch.float64)
    p = torch.tensor(port, dtype=torch.float64)
    res["max_rel_diff"] = float(((p - a).abs() / a.abs().clamp_min(1e-12)).max())
    if len(again) == n:
        drift = (torch.tensor(again, dtype=torch.float64) - a).abs()
        res["noise_floor"] = float(drift.max())
        allowed = NOISE_FACTOR * torch.cummax(drift, 0).values
    else:
        allowed = torch.zeros_like(a)
    try:
        torch.testing.assert_close(p, a, rtol=RTOL, atol=ATOL)
        res.update(verdict="pass", how="torch.testing.assert_close(rtol=1e-4, atol=1e-5)")
    except AssertionError as exc:
        ok = ((p - a).abs() <= torch.maximum(ATOL + RTOL * a.abs(), allowed)).all()
        if bool(ok):
            res.update(verdict="pass", how=f"within {NOISE_FACTOR:g}x the original's own drift")
        else:
            res["how"] = str(exc).splitlines()[0] + "; " + " ".join(str(exc).split())[:300]
    return res


def norm_verdict(original: list[float], again: list[float], port: list[float]) -> dict:
    """The gradient norms before each optimizer step: rtol 1e-3 (a norm sums many rounded
    squares), or within 4 times the original's own drift."""
    import torch

    if not original and not port:
        return {
            "verdict": "not measured",
            "how": "no torch.optim optimizer stepped on either side (the program's own optimizer class): not compared",
        }
    if len(original) != len(port):
        return {"verdict": "fail", "how": f"optimizer steps with gradients: original {len(original)}, port {len(port)}"}
    a, p = torch.tensor(original, dtype=torch.float64), torch.tensor(port, dtype=torch.float64)
    allowed = torch.zeros_like(a)
    if len(again) == len(original):
        allowed = NOISE_FACTOR * torch.cummax((torch.tensor(again, dtype=torch.float64) - a).abs(), 0).values
    diff = (p - a).abs()
    ok = diff <= torch.maximum(NORM_ATOL + NORM_RTOL * a.abs(), allowed)
    rel = float((diff / a.abs().clamp_min(1e-12)).max())
    if bool(ok.all()):
        return {"verdict": "pass", "max_rel_diff": rel, "how": "within rtol 1e-3 or the original's own drift"}
    i = int((~ok).nonzero()[0])
    return {
        "verdict": "fail",
        "max_rel_diff": rel,
        "how": f"step {i + 1}: original {float(a[i]):.6g}, port {float(p[i]):.6g}",
    }


def compare(args) -> int:
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    n = args.losses
    if args.reuse_original and (work / "original.json").is_file():
        orig = json.loads((work / "original.json").read_text())
        again = json.loads((work / "original2.json").read_text())
    else:
        orig = _spawn(
            "original", Path(args.original), n, args.command, work / "original.json", None, args.timeout, args.nproc
        )
        threads = 1 if (orig.get("threads") or 1) > 1 else 2
        again = _spawn(
            "original", Path(args.original), n, args.command, work / "original2.json", threads, args.timeout, args.nproc
        )
    port = _spawn(
        "port", Path(args.ported), n, args.command, work / f"{args.name}.json", None, args.timeout, args.nproc
    )
    res = {"original": orig, "original_again": again, "port": port}
    if orig.get("error"):
        res["result"] = {"verdict": "error", "how": "the original failed: " + orig["error"][-500:]}
    elif orig.get("devices") != ["cpu"] or (again.get("losses") and again.get("devices") != ["cpu"]):
        res["result"] = {
            "verdict": "error",
            "how": f"the original computed its losses on {orig.get('devices')} "
            f"(and again on {again.get('devices')}), not on the CPU: it is no reference",
        }
    elif port.get("error"):
        res["result"] = {"verdict": "error", "how": "the port failed: " + port["error"][-500:]}
    elif port.get("devices") != ["xla"]:
        res["result"] = {"verdict": "fail", "how": f"the port computed its losses on {port.get('devices')}"}
    else:
        res["result"] = verdict(orig["losses"], again.get("losses", []), port["losses"], n * args.nproc)
        if res["result"]["verdict"] == "pass":
            norms = norm_verdict(orig.get("grad_norms", []), again.get("grad_norms", []), port.get("grad_norms", []))
            res["result"]["grad_norms"] = norms
            if norms["verdict"] == "fail":
                res["result"].update(verdict="fail", how=f"gradient norms: {norms['how']}")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1))
    print(json.dumps(res["result"]))
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run")
    run.add_argument("--side", choices=["original", "port"], required=True)
    run.add_argument("--tree", required=True)
    run.add_argument("--losses", type=int, required=True)
    run.add_argument("--threads", type=int)
    run.add_argument("--jitter", action="store_true", help="the noise run: weights jittered after each step")
    run.add_argument("--out", required=True)
    cmp = sub.add_parser("compare")
    cmp.add_argument("--original", required=True)
    cmp.add_argument("--ported", required=True)
    cmp.add_argument("--losses", type=int, default=6)
    cmp.add_argument("--work", required=True)
    cmp.add_argument("--name", default="port")
    cmp.add_argument("--reuse-original", action="store_true")
    cmp.add_argument("--timeout", type=float, default=900)
    cmp.add_argument("--nproc", type=int, default=1, help="ranks: run each side under torchrun")
    cmp.add_argument("--json")
    for p in (run, cmp):
        p.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.command and args.command[0] == "--":
        args.command = args.command[1:]
    return run_side(args) if args.cmd == "run" else compare(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
