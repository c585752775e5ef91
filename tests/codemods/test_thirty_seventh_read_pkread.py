"""The thirty-seventh read's real packages (pkread): mosaicml (composer) 0.32.1, speechbrain 1.1.2, torchmetrics
1.9.0, monai 1.6.1, torch-geometric 2.8.1 and colossalai 0.5.0 end to end, checked against the packages' own
sources and torch itself. The excerpts below are cut down from the packages named in each test."""

from __future__ import annotations

from tests.deps import need


def _port(tmp_path, text, target="xla"):
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    (tmp_path / "m.py").write_text(text)
    result = next(
        r for r in run([tmp_path], Settings(target=target), jobs=1, cache=False)[0] if str(r.path).endswith("m.py")
    )
    new = (result.new_source or result.original_source or b"").decode()
    return new, [(f.code, f.start.line, f.message) for f in result.findings]


# speechbrain 1.1.2, speechbrain/utils/distributed.py `infer_device` (cut down)
INFER_DEVICE = """import torch


def infer_device(local_rank):
    if torch.accelerator.is_available():
        device = str(torch.accelerator.current_accelerator())
        if local_rank is not None:
            device += f":{local_rank}"
    else:
        device = "cpu"
    return device


def named(rank):
    return f"{torch.accelerator.current_accelerator()}:{rank}"


def model_device():
    return torch.accelerator.current_accelerator()
"""


def test_the_current_accelerator_read_as_text_names_no_index_on_xla(tmp_path):
    """speechbrain 1.1.2 `utils/distributed.py:82` (`infer_device`): `str(torch.accelerator.current_accelerator())`
    is "cuda" on CUDA (a device type, no index) and the function appends `f":{local_rank}"`. DEV012 made it
    `str(torch_xla.device())`, "xla:0", so under torchrun (LOCAL_RANK=0) the device was "xla:0:0": torch's own
    parser raises "Invalid device string: 'xla:0:0'" (torch_xla 2.9, PJRT_DEVICE=CPU, the same). Read as text
    (`str(...)`, an f-string) it is now the device type; used as a device (the control) it stays
    `torch_xla.device()`."""
    torch = need("torch")
    new, found = _port(tmp_path, INFER_DEVICE)
    assert "device = str(torch_xla.device().type)\n" in new
    assert 'return f"{torch_xla.device().type}:{rank}"\n' in new
    assert "    return torch_xla.device()\n" in new  # the control
    assert [c for c, line, _ in found if c == "DEV012" and line == 6]
    # torch's device parser, on the ported function with torch_xla's answers (`torch_xla.device()` is xla:0)
    fake = type("M", (), {"device": staticmethod(lambda: torch.device("xla", 0))})
    runtime = type("R", (), {"global_runtime_device_count": staticmethod(lambda: 1)})
    body = new.split("def infer_device", 1)[1].split("\n\n\n")[0]
    scope = {"torch_xla": fake, "xr": runtime}
    exec(compile("def infer_device" + body, "<ported>", "exec"), scope)
    for rank in (None, 0, 3):
        assert torch.device(scope["infer_device"](rank)).type == "xla"


# speechbrain 1.1.2, speechbrain/integrations/numba/transducer_loss.py (cut down: one numba CUDA kernel)
TRANSDUCER = """import torch
from numba import cuda
from torch.autograd import Function
from torch.nn import Module


@cuda.jit()
def cu_kernel_forward(log_probs, alpha):
    b = cuda.blockIdx.x
    alpha[b] = log_probs[b, 0]


class Transducer(Function):
    @staticmethod
    def forward(ctx, log_probs, blank):
        alpha = torch.zeros(log_probs.shape[0], device=log_probs.device)
        cu_kernel_forward[log_probs.shape[0], 1](log_probs, alpha)
        return -alpha.mean()


class TransducerLoss(Module):
    def __init__(self, blank=0):
        super().__init__()
        self.blank = blank
        self.loss = Transducer.apply

    def forward(self, logits, labels):
        if all(t.is_cuda for t in (logits, labels)):
            log_probs = logits.log_softmax(-1)
            return self.loss(log_probs, self.blank)
        else:
            raise ValueError(f"Found {logits.device} while needed to be on a 'cuda' device to use the transducer loss.")


class Plain(Module):
    def __init__(self):
        super().__init__()
        self.loss = torch.nn.functional.mse_loss

    def forward(self, x, y):
        if x.is_cuda:
            return self.loss(x, y)
        return self.loss(x.float(), y.float())
"""


def test_a_device_test_in_front_of_an_attribute_bound_to_cuda_only_code_stays_cuda(tmp_path):
    """speechbrain 1.1.2 `integrations/numba/transducer_loss.py:346`: `TransducerLoss.__init__` binds `self.loss =
    Transducer.apply` (an autograd Function whose `forward` launches `@numba.cuda.jit` kernels: GUARD003 said so),
    and `forward` runs it under `if all(t.is_cuda for t in (...)):`, else raises. DEV004 made the test
    `t.device.type == "xla"`: on XLA the branch launched numba's CUDA kernels on XLA tensors, on CUDA the loss
    raised "needed to be on a 'cuda' device". `Transducer.apply(...)` written out was already kept (GUARD001);
    through the attribute it now is too. An attribute bound to `torch.nn.functional.mse_loss` (the control)
    still has its test ported."""
    for target in ("xla", "tpu", "neuron"):
        new, found = _port(tmp_path, TRANSDUCER, target)
        assert "        if all(t.is_cuda for t in (logits, labels)):\n" in new, target
        guard = [m for c, line, m in found if c == "GUARD001" and line == 28]
        assert guard and "self.loss" in guard[0], (target, found)
        assert "        if x.is_cuda:\n" not in new, target  # the control


# speechbrain 1.1.2, speechbrain/core.py `Brain.__init__` (cut down; inference/interfaces.py has the same switch)
BRAIN = """import torch


class Brain:
    def __init__(self, device):
        self.device = device
        if self.device == "cpu":
            self.device_type = "cpu"
        elif "cuda" in self.device:
            self.device_type = "cuda"
            try:
                _, device_index = self.device.split(":")
                torch.cuda.set_device(int(device_index))
            except ValueError:
                torch.cuda.set_device(0)
        else:
            self.device_type = self.device.split(":")[0]


class Logged:
    def __init__(self, device):
        self.device = device
        if self.device == "cpu":
            self.kind = "cpu"
        elif "cuda" in self.device:
            self.kind = "cuda"
            torch.cuda.set_device(0)
        else:
            message = f"{self.device} is not supported, using the CPU"
            self.kind = "cpu"
"""


def test_cudas_branch_beside_a_fallback_that_takes_every_device_by_its_name_stays(tmp_path):
    """speechbrain 1.1.2 `core.py:304` (`Brain.__init__`) and `inference/interfaces.py:283`: `elif "cuda" in
    self.device: self.device_type = "cuda"; torch.cuda.set_device(...)`, `else: self.device_type =
    self.device.split(":")[0]`. The `else` already serves every other device by its own name ("xla:0" gives
    "xla"). The port renamed CUDA's branch to the target's and dropped its `set_device`: the target took CUDA's
    branch, and a CUDA user of the library lost `set_device` (its branch no longer matched "cuda:1"). In a package
    such a branch now stays CUDA's (BACK002) and the target takes the `else`, as the original did there. A
    fallback that only names the device in a message and picks the CPU (the control) takes nothing by its name:
    CUDA's branch is ported as before."""
    (tmp_path / "__init__.py").write_text("")
    for target in ("xla", "tpu"):
        new, found = _port(tmp_path, BRAIN, target)
        brain = new.split("class Logged")[0]
        assert '        elif "cuda" in self.device:\n            self.device_type = "cuda"\n' in brain, target
        assert brain.count("torch.cuda.set_device(") == 2, target
        assert [m for c, line, m in found if c == "BACK002" and line == 9], (target, found)
        # the original's `else`, run on the target's device string, gives the target's device type
        scope: dict = {}
        exec(compile(new.split("\n\n\nclass Logged")[0], "<ported>", "exec"), scope)
        assert scope["Brain"](f"{target}:0").device_type == target
        logged = new.split("class Logged")[1]
        assert f'elif "{target}" in self.device:' in logged, target  # the control
