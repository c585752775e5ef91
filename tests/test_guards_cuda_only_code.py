"""Code that only ever runs on CUDA is left byte for byte on every target (GUARD003, issue 11):
CUDA-graph wrappers, functions that launch a Triton kernel on every run, the branch behind a
check GUARD001 keeps on CUDA. Code that only asks about the device (a capability check in a
trainer) is still ported, and so is a function that only calls CUDA-only code under a flag."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from porter.config.settings import Settings
from porter.pipeline.runner import run
from tests.helpers import port

TARGETS = ["neuron", "tpu", "xla"]


def _src(text: str) -> str:
    return textwrap.dedent(text).lstrip()


# a wrapper that replays a captured graph: warm-up on a side stream, capture once, replay
GRAPH_WRAPPER = _src("""
    import torch


    class ReplayStep:
        def __init__(self, fn, warmup=2):
            self.fn = fn
            self.warmup = warmup
            self.graph = None
            self.side = None

        def __call__(self, *inputs):
            if self.warmup:
                self.warmup -= 1
                self.side = self.side or torch.cuda.Stream()
                self.side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(self.side):
                    out = self.fn(*inputs)
                torch.cuda.current_stream().wait_stream(self.side)
                return out
            if self.graph is None:
                self.static = inputs
                self.graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(self.graph):
                    self.result = self.fn(*inputs)
                torch.cuda.synchronize(torch.cuda.current_device())
            self.graph.replay()
            return self.result
""")

TRITON_LAUNCH = _src("""
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _double_kernel(src, dst, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(dst + i, tl.load(src + i, mask=i < n) * 2, mask=i < n)


    def double(x):
        out = torch.empty_like(x)
        stream = torch.cuda.current_stream()
        with torch.cuda.stream(stream):
            _double_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
        torch.cuda.synchronize()
        return out


    def double_everywhere(x):
        if x.is_cuda:
            return double(x)
        return (x * 2).cpu()
""")

TRAINER = _src("""
    import torch


    class Trainer:
        def __init__(self, model, use_graphs=False):
            self.model = model.cuda()
            self.bf16 = torch.cuda.get_device_capability()[0] >= 8
            self.graph = None
            if use_graphs:
                self.graph = torch.cuda.CUDAGraph()

        def step(self, batch):
            batch = batch.cuda(non_blocking=True)
            loss = self.model(batch).sum()
            loss.backward()
            torch.cuda.synchronize()
            return loss

        def capture(self, batch):
            with torch.cuda.graph(self.graph):
                self.static_loss = self.model(batch.cuda()).sum()
            torch.cuda.synchronize()
""")


@pytest.mark.parametrize("target", TARGETS)
def test_a_cuda_graph_wrapper_class_is_left_as_it_is(target):
    new, findings = port(GRAPH_WRAPPER, target)
    assert new == GRAPH_WRAPPER
    left = [f for f in findings if f.code == "GUARD003"]
    assert len(left) == 1 and "`class ReplayStep`" in left[0].message
    assert "self.graph" in left[0].message and "torch.cuda.CUDAGraph" in left[0].message
    assert not any(f.applied for f in findings)


@pytest.mark.parametrize("target", TARGETS)
def test_a_function_that_launches_a_triton_kernel_is_left_and_its_kernel_still_reported(target):
    new, findings = port(TRITON_LAUNCH, target)
    assert new == TRITON_LAUNCH  # `current_stream()` and `synchronize()` in `double` stay CUDA
    left = [f for f in findings if f.code == "GUARD003"]
    assert [f.start.line for f in left] == [12]  # `def double`, not the dispatcher below it
    assert "(uses `triton`)" in left[0].message and "CUDA003" in left[0].message.split("fixes not applied there: ")[1]
    assert {f.code for f in findings} >= {"KERN002", "GUARD001"}  # `porter kernels` still lists the kernel


@pytest.mark.parametrize("target", TARGETS)
def test_a_trainer_that_asks_for_the_capability_is_still_ported(target):
    new, findings = port(TRAINER, target)
    init, step, capture = new.split("    def ")[1:]
    assert ".cuda()" not in init and "torch.cuda.is_available() and torch.cuda.get_device_capability()" in init
    assert "torch.cuda.CUDAGraph()" in init  # (the object is made only under the flag; not a device)
    assert ".cuda(" not in step and "torch.cuda.synchronize" not in step
    # the method that captures a graph only runs on CUDA: left as it is
    assert capture == TRAINER.split("    def ")[3]
    left = [f for f in findings if f.code == "GUARD003"]
    assert len(left) == 1 and "`def capture`" in left[0].message


@pytest.mark.parametrize("target", TARGETS)
def test_a_function_that_calls_cuda_only_code_under_a_flag_is_ported(target):
    code = (
        GRAPH_WRAPPER
        + "\n\n"
        + _src("""
        def make_step(fn, args, x):
            if args.graphs:
                return ReplayStep(fn)
            return lambda *inputs: fn(*(t.cuda() for t in inputs))
    """)
    )
    new, findings = port(code, target)
    assert (
        "class ReplayStep" + new.split("class ReplayStep")[1].split("def make_step")[0]
        == "class ReplayStep" + GRAPH_WRAPPER.split("class ReplayStep")[1] + "\n\n"
    )
    assert "t.cuda()" not in new.split("def make_step")[1]


NUMA = _src("""
    import torch
    from torch._utils import _get_available_device_type


    def bind_to_gpu_node(index, device_type):
        if device_type != "cuda":
            return
        from torch.numa.binding import _maybe_apply_numa_binding_to_current_process, NumaOptions

        _maybe_apply_numa_binding_to_current_process(device_index=index, numa_options=NumaOptions())
        torch.cuda.set_device(index)


    def warm_graphs(step, device_type):
        if device_type == "cuda" and torch.cuda.is_available():
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                step()
            return graph
        return None


    def setup():
        device_type = _get_available_device_type() or "cuda"
        return device_type
""")


@pytest.mark.parametrize("target", TARGETS)
def test_device_type_checks_in_front_of_numa_and_graph_code_stay_cuda(target):
    new, findings = port(NUMA, target)
    bind, warm = new.split("def bind_to_gpu_node")[1].split("def warm_graphs")
    assert bind == NUMA.split("def bind_to_gpu_node")[1].split("def warm_graphs")[0]
    assert warm.split("def setup")[0] == NUMA.split("def warm_graphs")[1].split("def setup")[0]
    kept = [f for f in findings if f.code == "GUARD001"]
    assert len(kept) >= 2
    assert any("torch.numa.binding" in f.message for f in kept)


@pytest.mark.parametrize("target", TARGETS)
def test_the_rest_of_a_function_after_an_early_exit_on_other_devices_is_left(target):
    code = _src("""
        import torch
        import triton


        @triton.jit
        def _neg_kernel(x_ptr, n):
            pass


        def negate(x):
            x = x.cuda() if x.device.type == "cpu" else x
            if not x.is_cuda:
                return -x
            torch.cuda.synchronize()
            _neg_kernel[(1,)](x, x.numel())
            return x
    """)
    new, findings = port(code, target)
    head, rest = new.split("if not x.is_cuda:")
    assert ".cuda()" not in head  # before the check: runs on the target, ported
    assert rest == code.split("if not x.is_cuda:")[1]
    assert any(f.code == "GUARD003" and "x.is_cuda" in f.message for f in findings)


@pytest.mark.parametrize("target", TARGETS)
def test_ignoring_guard003_ports_the_insides_and_ports_are_idempotent(target):
    new, findings = port(GRAPH_WRAPPER, target, ignore=("GUARD003",))
    assert "torch.cuda.synchronize(" not in new
    assert not any(f.code == "GUARD003" for f in findings)
    for code in (GRAPH_WRAPPER, TRITON_LAUNCH, TRAINER, NUMA):
        once, _ = port(code, target)
        again, _ = port(once, target)
        assert again == once


KERNELS = _src("""
    import torch
    import triton


    @triton.jit
    def _fill_kernel(x_ptr, n):
        pass


    def fill(x):
        _fill_kernel[(1,)](x, x.numel())
        return x


    def fill_any(x):
        if not x.is_cuda:
            return x.fill_(1)
        return fill(x)
""")

USER = _src("""
    import torch

    from pkg.kernels import fill, fill_any


    def fused_init(x):
        torch.cuda.synchronize()
        return fill(x.cuda())


    def init(x):
        torch.cuda.synchronize()
        return fill_any(x.cuda())
""")


@pytest.mark.parametrize("target", TARGETS)
def test_a_function_that_calls_an_imported_triton_launcher_is_left(tmp_path, monkeypatch, target):
    monkeypatch.chdir(tmp_path)
    for name, text in {"pkg/__init__.py": "", "pkg/kernels.py": KERNELS, "pkg/user.py": USER}.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    results, _ = run([Path("pkg")], Settings(target=target), jobs=1, cache=False)
    out = {r.path: r for r in results}["pkg/user.py"]
    code = (out.new_source or out.original_source).decode()
    fused, plain = code.split("def fused_init")[1].split("def init")
    assert fused == USER.split("def fused_init")[1].split("def init")[0]
    assert ".cuda()" not in plain and "torch.cuda.synchronize" not in plain  # fill_any has a path for other devices
    assert any(f.code == "GUARD003" and "pkg/kernels.py" in f.message for f in out.findings)


@pytest.mark.parametrize("target", TARGETS)
def test_a_table_that_names_a_triton_function_does_not_make_its_users_cuda_only(target):
    """A dict of activations that holds a Triton-backed one (as in flash-linear-attention's
    `ACT2FN`) runs nothing when a model reads it: the model, and its check, are ported."""
    code = _src("""
        import torch
        import triton


        @triton.jit
        def _act_kernel(x_ptr, n):
            pass


        def fast_act(x):
            _act_kernel[(1,)](x, x.numel())
            return x


        ACTIVATIONS = {"fast": fast_act, "relu": torch.relu}


        class Block(torch.nn.Module):
            def __init__(self, act):
                super().__init__()
                self.act = ACTIVATIONS[act]
                self.scale = torch.ones(4).cuda()

            def forward(self, x):
                if "cuda" in x.device.type:
                    return self.act(x) * self.scale
                return torch.relu(x) * self.scale
    """)
    new, findings = port(code, target)
    assert ".cuda()" not in new.split("class Block")[1]
    assert not any(f.code == "GUARD003" for f in findings)


# vLLM's CUTLASS MLA decode: asserts fp16 / bf16 inputs, then runs a Triton kernel on every run
FP16_ASSERT = _src("""
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _decode_kernel(x_ptr, n):
        pass


    def decode(q):
        assert q.dtype in (torch.float16, torch.bfloat16), q.dtype
        q = q.to(torch.float16)  # a choice of precision (the assert's dtype test is none: no AMP002)
        _decode_kernel[(1,)](q, q.numel())
        torch.cuda.synchronize()
        return q
""")


@pytest.mark.parametrize("unsafe", [False, True])
def test_a_fix_left_in_cuda_only_code_is_not_offered_there(unsafe):
    # AMP002's fix (`torch.float16` -> `torch.bfloat16`, an unsafe one) is wrong in code the target
    # never runs whether or not unsafe fixes are on: GUARD003 says it left it, AMP002 offers nothing
    new, findings = port(FP16_ASSERT, "neuron", unsafe=unsafe)
    assert new == FP16_ASSERT
    assert not [f for f in findings if f.code == "AMP002"], [f.message for f in findings]
    (left,) = [f for f in findings if f.code == "GUARD003"]
    assert "AMP002" in left.message
