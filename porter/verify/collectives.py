"""Distributed runs in parity checks: one process per rank (torchrun), on machines without the
hardware the program was written for.

Neither side can use its real backend here: the reference has no NCCL without GPUs, and the
port's `xla` backend is silently wrong on XLA's CPU client with several processes (each sees a
world of one; targets.md). Both sides therefore run their collectives through
:class:`HostGroup`, a process group that performs each one with gloo on the host (tensors on a
device are copied to the CPU and back), counts them per optimizer step, and reports the
backend it stands in for. On the reference the shim maps `nccl`; on the emulated port, the
target's own backend (`xla`, `neuron`, `tpu`) and `init_method="xla://"`. A backend the target
does not provide (gloo with XLA tensors, say) is left alone, so it fails there as it would on
the hardware. torch_xla's in-graph collectives (`xm.all_reduce`, `xm.optimizer_step`'s gradient
reduction) go through the same group, since on a one-device client they would reduce over
one replica.
"""

from __future__ import annotations

import os
from collections import Counter
from datetime import timedelta

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import ProcessGroup

BACKEND = "porter_host_gloo"
COUNTS: Counter = Counter()  # collective -> calls since the recorder last read them


def _done(result):
    fut: torch.futures.Future = torch.futures.Future()
    fut.set_result(result)
    return torch._C._distributed_c10d._create_work_from_future(fut)


def _host(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    return [t.detach().to("cpu").contiguous() if t.device.type != "cpu" else t for t in tensors]


def _back(tensors: list[torch.Tensor], host: list[torch.Tensor]) -> None:
    with torch.no_grad():
        for t, h in zip(tensors, host):
            if t is not h:
                t.copy_(h)


class HostGroup(ProcessGroup):
    """Collectives with gloo on the host, whatever device the tensors are on; counted."""

    def __init__(self, store, rank: int, size: int, timeout: timedelta):
        # the (rank, size) constructor Python process groups use (torch_xla's too); the stubs
        # name only the C++ one
        super().__init__(rank, size)  # type: ignore[call-arg]
        self.inner = dist.ProcessGroupGloo(store, rank, size, timeout)

    def getBackendName(self) -> str:
        return BACKEND

    def allreduce(self, tensors, opts=None):
        COUNTS["all_reduce"] += 1
        opts = opts or dist.AllreduceOptions()
        host = _host(tensors)
        average = opts.reduceOp == dist.ReduceOp.AVG  # gloo has no AVG: sum, then divide
        if average:
            opts = dist.AllreduceOptions()
            opts.reduceOp = dist.ReduceOp.SUM
        self.inner.allreduce(host, opts).wait()
        if average:
            for h in host:
                h.div_(self.size())
        _back(tensors, host)
        return _done(tensors)

    def allreduce_coalesced(self, tensors, opts=None):
        for t in tensors:
            self.allreduce([t], None if opts is None else _allreduce_opts(opts.reduceOp))
        return _done(tensors)

    def broadcast(self, tensors, opts=None):
        COUNTS["broadcast"] += 1
        host = _host(tensors)
        self.inner.broadcast(host, opts or dist.BroadcastOptions()).wait()
        _back(tensors, host)
        return _done(tensors)

    def allgather(self, output_lists, inputs, opts=None):
        COUNTS["all_gather"] += 1
        host_out = [_host(lst) for lst in output_lists]
        self.inner.allgather(host_out, _host(inputs), opts or dist.AllgatherOptions()).wait()
        for lst, hl in zip(output_lists, host_out):
            _back(lst, hl)
        return _done([t for lst in output_lists for t in lst])

    def _allgather_base(self, output, input, opts=None):
        COUNTS["all_gather"] += 1
        (host_out,), (host_in,) = _host([output]), _host([input])
        self.inner._allgather_base(host_out, host_in, opts or dist.AllgatherOptions()).wait()
        _back([output], [host_out])
        return _done([output])

    def reduce_scatter(self, outputs, input_lists, opts=None):
        COUNTS["reduce_scatter"] += 1
        host_out = _host(outputs)
        self.inner.reduce_scatter(
            host_out, [_host(lst) for lst in input_lists], opts or dist.ReduceScatterOptions()
        ).wait()
        _back(outputs, host_out)
        return _done(outputs)

    def _reduce_scatter_base(self, output, input, opts=None):
        COUNTS["reduce_scatter"] += 1
        (host_out,), (host_in,) = _host([output]), _host([input])
        self.inner._reduce_scatter_base(host_out, host_in, opts or dist.ReduceScatterOptions()).wait()
        _back([output], [host_out])
        return _done([output])

    def reduce(self, tensors, opts=None):
        COUNTS["reduce"] += 1
        host = _host(tensors)
        self.inner.reduce(host, opts or dist.ReduceOptions()).wait()
        _back(tensors, host)
        return _done(tensors)

    def barrier(self, opts=None):
        COUNTS["barrier"] += 1
        self.inner.barrier(opts or dist.BarrierOptions()).wait()
        return _done([])


def _allreduce_opts(op) -> dist.AllreduceOptions:
    o = dist.AllreduceOptions()
    o.reduceOp = op
    return o


def _create(store, rank, size, timeout):
    return HostGroup(store, rank, size, timeout)


def world() -> tuple[int, int, int]:
    """(rank, local rank, world size) from the launcher's environment."""
    return (int(os.environ.get("RANK", 0)), int(os.environ.get("LOCAL_RANK", 0)), int(os.environ.get("WORLD_SIZE", 1)))


def install(stands_for: set[str], init_methods: dict[str, str] | None = None) -> None:
    """`init_process_group(backend=B)` for B in `stands_for` runs on HostGroup instead (the
    program's own backend is recorded). `init_methods` maps init methods (xla://) to env://."""
    if BACKEND.upper() not in dir(dist.Backend):
        dist.Backend.register_backend(BACKEND, _create, devices=["cpu", "cuda", "xla", "neuron", "tpu"])
    original = dist.init_process_group
    replaced: list[str] = []

    def init_process_group(backend=None, init_method=None, *args, **kwargs):
        if isinstance(backend, str) and backend.split(":")[-1] in stands_for:
            replaced.append(backend)
            backend = BACKEND
        if init_method in (init_methods or {}):
            init_method = (init_methods or {})[init_method]
        return original(backend, init_method, *args, **kwargs)

    init_process_group.replaced = replaced  # type: ignore[attr-defined]
    dist.init_process_group = init_process_group
    import torch.distributed.distributed_c10d as c10d

    c10d.init_process_group = init_process_group


def ddp_on_cpu() -> None:
    """The reference's `DDP(model, device_ids=[rank], output_device=rank)`: its module is on the
    CPU here, where DDP takes no device ids."""
    from torch.nn.parallel import DistributedDataParallel as DDP

    original = DDP.__init__

    def __init__(self, module, device_ids=None, output_device=None, *args, **kwargs):
        if device_ids is not None and all(p.device.type == "cpu" for p in module.parameters()):
            device_ids, output_device = None, None
        original(self, module, device_ids, output_device, *args, **kwargs)

    DDP.__init__ = __init__  # type: ignore[method-assign]


def xla_runtime_world() -> None:
    """On XLA's CPU client each process is a world of one: the runtime's world answers and its
    in-graph collectives are made to follow the launcher's processes instead."""
    import torch_xla.core.xla_model as xm
    import torch_xla.runtime as xr

    rank, local, size = world()
    xr.world_size = lambda: size
    xr.global_ordinal = lambda: rank
    xr.local_ordinal = lambda: local
    xr.process_count = lambda: size
    xr.process_index = lambda: rank
    xr.addressable_device_count = lambda: 1

    def all_reduce(reduce_type, inputs, scale=1.0, groups=None, pin_layout=True):
        if groups:
            raise NotImplementedError(
                "porter's emulation of several XLA processes does not "
                "emulate xm.all_reduce over groups: run on the target"
            )
        ops = {
            xm.REDUCE_SUM: dist.ReduceOp.SUM,
            xm.REDUCE_MAX: dist.ReduceOp.MAX,
            xm.REDUCE_MIN: dist.ReduceOp.MIN,
            xm.REDUCE_MUL: dist.ReduceOp.PRODUCT,
        }
        tensors = [inputs] if isinstance(inputs, torch.Tensor) else list(inputs)
        for t in tensors:
            dist.all_reduce(t, op=ops[reduce_type])
            if scale != 1.0:
                t.mul_(scale)
        return inputs

    xm.all_reduce = all_reduce


__all__ = ["HostGroup", "BACKEND", "COUNTS", "install", "ddp_on_cpu", "xla_runtime_world", "world"]
