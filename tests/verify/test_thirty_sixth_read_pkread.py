"""The thirty-sixth read's real packages (pkread, docs/reads/54-pkread-attempts.md): open_clip_torch 3.2.0's tiny
CLIP (TextTransformer + VisionTransformer, AdamW) through `parity-check` on PyTorch/XLA (PJRT_DEVICE=CPU); torch_xla's
own metric (TransferFromDeviceTime: 3 transfers over 4 steps) the oracle of its host-sync count."""

from types import SimpleNamespace

from tests.deps import need


def _perf(tmp_path, kind):
    """The worker's perf probe on a side of `kind`, its step an AdamW step on CPU tensors (torch.optim's step
    counters are CPU tensors on every device: `_get_value(step_t)` reads them with `.item()`)."""
    torch = need("torch")
    from porter.verify.worker import Worker

    torch.manual_seed(1500002)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Linear(8, 2))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=False)

    def step():
        opt.zero_grad()
        loss = model(torch.randn(3, 4)).pow(2).mean()
        loss.backward()
        opt.step()
        return loss

    stub = SimpleNamespace(
        loss_fn=None,
        opt_factory=None,
        make_step=lambda: step,
        side=SimpleNamespace(kind=kind, sync=lambda: None, hardware=False),
        job={"warmup": 0, "repeats": 1},
        meta={"perf_step": "step"},
        root=str(tmp_path),
        model=model,
        reset_weights=lambda: None,
    )
    Worker.perf(stub)
    return stub.meta["perf"]["syncs"]


def test_a_cpu_tensor_s_item_on_an_accelerator_side_is_no_host_sync(tmp_path):
    """parity-check of the tiny CLIP on XLA said "62.75 host sync call(s) per step in your code" (a warning gap:
    "each .item() ... forces a device→host barrier"), while torch_xla counted 0.75 device→host transfers a step:
    62 of them were AdamW's `.item()` of its CPU step counters (one per parameter), which wait for no device.
    On a side whose device is not the CPU, a CPU tensor's `.item()` is not counted; on a CPU side (the reference
    standing in for CUDA, the control) it still is."""
    assert _perf(tmp_path, "tpu")["host_syncs_per_step"] == 0
    assert _perf(tmp_path, "cpu")["host_syncs_per_step"] == 4  # 4 parameters, one step counter each
