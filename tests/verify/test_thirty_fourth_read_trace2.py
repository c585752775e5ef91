"""The thirty-fourth read's second wave on the recorder and trace compare (helper `trace2`,
docs/reads/52-trace2-attempts.md): each test failed on 862af2d1 on the wrong outcome. The recorded
programs write their own losses (torch.testing.assert_close is the oracle)."""

import importlib.util
import sys

import pytest

from tests.deps import need


def _raised_from(tmp_path, body: str, call: str = "run"):
    """The exception `body`'s `call()` raises, `body` run as the program's train.py under `tmp_path`."""
    (tmp_path / "train.py").write_text(body)
    spec = importlib.util.spec_from_file_location("trace2_train_34", tmp_path / "train.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(Exception) as info:
        getattr(module, call)()
    sys.modules.pop("trace2_train_34", None)
    return info.value


def test_an_exception_porter_s_own_code_raises_is_said_as_porter_s(tmp_path):
    """An exception raised by porter's own code while the program ran (its recorder's
    `recorder.pending[-1]`, the thirty-fourth trace read's IndexError) was described at the
    program's line that called into porter, `in_user_code: True`: the user was sent to their own
    correct `loss.backward()`. It is said at porter's frame, as porter's defect."""
    from porter.verify.worker import describe_exception

    exc = _raised_from(
        tmp_path, "from porter.verify.listed import listed_prefixes\ndef run():\n    listed_prefixes(None)\n"
    )
    said = describe_exception(exc, str(tmp_path))
    assert said["in_user_code"] is False, said
    assert said["location"].startswith("porter/verify/listed.py:"), said
    assert "porter's own code" in said["message"] and "train.py:3" in said["message"], said


def test_the_program_s_exceptions_through_porter_stay_the_program_s(tmp_path):
    """What porter raises on purpose (a `raise` statement: its word on the program) and what the
    program's own code raises under porter's frames stay the program's, at its line."""
    from porter.verify.worker import describe_exception

    body = (
        "from porter.verify.launch import run_user_command\n"
        "def run():\n    run_user_command([])\n"
        "def own():\n    run_user_command(['-c', '[][1]'])\n"
    )
    said = describe_exception(_raised_from(tmp_path, body), str(tmp_path))
    assert (said["location"], said["in_user_code"], said["message"]) == ("train.py:3", True, "no Python command to run")
    said = describe_exception(_raised_from(tmp_path, body, "own"), str(tmp_path))
    assert (said["location"], said["in_user_code"]) == ("train.py:5", True), said
    assert said["type"] == "IndexError" and "porter" not in said["message"], said


# one optimizer over the model, or PyTorch's recipe fusing the step into the backward (one `Adam`
# a parameter, stepped and zeroed by the parameter's post-accumulate-grad hook): the same updates
FUSED = """\
import json, sys, torch
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
OPT
g = torch.Generator().manual_seed(3201)
own = []
for i in range(3):
    x, y = torch.randn(4, 6, generator=g), torch.randn(4, 3, generator=g)
    loss = ((m(x) - y) ** 2).mean()
    ZERO
    loss.backward()
    norm = torch.linalg.vector_norm(torch.stack(NORMS)).item()
    own.append([loss.item(), norm])
    STEP
if len(sys.argv) > 1: json.dump(own, open(sys.argv[1], "w"))
"""
ONE = {"OPT": "opt = torch.optim.Adam(m.parameters(), lr=LR)", "ZERO": "opt.zero_grad()", "STEP": "opt.step()"}
HOOKED = {
    "OPT": "opts = {p: torch.optim.Adam([p], lr=LR) for p in m.parameters()}\n"
    "norms = []\n"
    "def hook(p):\n"
    "    norms.append(torch.linalg.vector_norm(p.grad))\n"
    "    opts[p].step()\n"
    "    opts[p].zero_grad()\n"
    "for p in m.parameters():\n"
    "    p.register_post_accumulate_grad_hook(hook)",
    "ZERO": "norms.clear()",
    "STEP": "pass",
}


def _fused(form: dict, lr: str) -> str:
    body = FUSED
    for k, v in form.items():
        body = body.replace(k, v)
    norms = "[torch.linalg.vector_norm(p.grad) for p in m.parameters()]" if form is ONE else "norms"
    return body.replace("NORMS", norms).replace("LR", lr)


def test_optimizers_a_backward_steps_one_a_parameter_are_one_step(tmp_path, monkeypatch):
    """The optimizer step fused into the backward (one optimizer a parameter, stepped by its hook)
    against one optimizer over the model, the same updates: only the largest parameter's
    optimizer was counted, its gradient norm one parameter's, and the port FAILed "the gradient
    norm differs at step 1". The step's norm is every optimizer's that backward steps; the
    program's own norms are the oracle, and the fused port at another rate still FAILs."""
    need("torch")
    need("safetensors")
    import torch

    from tests.verify.recording import compared, recorded

    ref, own_ref = recorded(tmp_path, _fused(ONE, "1e-2"), 3, "one")
    port, own = recorded(tmp_path, _fused(HOOKED, "1e-2"), 3, "fused")
    torch.testing.assert_close(torch.tensor(own), torch.tensor(own_ref))
    norms = [s["grad_norm"] for s in port.trace.manifest["steps"]]
    torch.testing.assert_close(torch.tensor(norms, dtype=torch.float64), torch.tensor(own, dtype=torch.float64)[:, 1])
    for a, b in ((ref, port), (port, ref)):
        res, reasons = compared(monkeypatch, a.trace, b.trace)
        assert res.verdict == "pass", reasons
    bad, _ = recorded(tmp_path, _fused(HOOKED, "2e-2"), 3, "fusedbad")
    res, reasons = compared(monkeypatch, ref.trace, bad.trace)
    assert res.verdict == "fail", reasons


WALKED = """\
import json, sys, torch
torch.manual_seed(0)
m = torch.nn.MODEL(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3)ARGS)
opt = torch.optim.Adam(m.parameters(), lr=LR)
g = torch.Generator().manual_seed(3202)
own = []
for i in range(3):
    x, y = torch.randn(4, 6, generator=g), torch.randn(4, 3, generator=g)
    loss = ((CALL - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    own.append([loss.item()])
    opt.step()
if len(sys.argv) > 1: json.dump(own, open(sys.argv[1], "w"))
"""


def _walked_program(model: str, call: str, lr: str = "1e-2") -> str:
    args = ("(", ")") if model == "Sequential" else ("([", "])")
    body = WALKED.replace("MODEL(", model + args[0]).replace("ARGS)", args[1])
    return body.replace("CALL", call).replace("LR", lr)


def test_a_port_walking_its_list_and_applying_its_head_by_a_function_passes(tmp_path, monkeypatch):
    """The merge of two fixes: a port holding its layers in a top-level `ModuleList` walked by
    hand and applying the last one's weights by `F.linear` (a fused linear cross-entropy's form)
    had the head's parameters `<optimizer>.param0` in the list's naming too, and FAILed
    "parameters on one side only: reference ['0.weight', ..., '2.weight', '2.bias'], ported
    ['weight', 'bias', '<optimizer>.param0', '<optimizer>.param1']" against the reference calling
    the `Sequential` of the same layers, the same losses; then "2: not called on the ported side".
    The head's output is not compared (the port never makes it), said; the loss, gradient norm
    and weights are, and the same port at another rate FAILs on it."""
    need("torch")
    need("safetensors")
    import torch

    from tests.verify.recording import compared, recorded

    head = "torch.nn.functional.linear(m[1](m[0](x)), m[2].weight, m[2].bias)"
    ref, own_ref = recorded(tmp_path, _walked_program("Sequential", "m(x)"), 3, "seq")
    port, own = recorded(tmp_path, _walked_program("ModuleList", head), 3, "listed")
    torch.testing.assert_close(torch.tensor(own), torch.tensor(own_ref))
    res, reasons = compared(monkeypatch, ref.trace, port.trace)
    said = "(first: 2): never called in the port, its parameters applied by a function"
    assert res.verdict == "pass" and said in reasons, reasons
    res, reasons = compared(monkeypatch, port.trace, ref.trace)
    assert res.verdict == "pass" and "only the port recorded, not compared: 2, (model)" in reasons, reasons
    bad, _ = recorded(tmp_path, _walked_program("ModuleList", head, "2e-2"), 3, "listedbad")
    res, reasons = compared(monkeypatch, ref.trace, bad.trace)
    assert res.verdict == "fail" and "learning rate" in reasons, reasons


def _headed_trace(path, label: str, modules: tuple, groups: list, without_grad: int):
    """A two-step trace of a model with modules `modules` (each a Linear with one output), its
    parameters `fc.weight` and `head.weight`, stepped in `groups`."""
    import torch

    from porter.verify.tracefile import read_trace, write_trace

    act, w = torch.linspace(-1, 1, 32), torch.linspace(0, 1, 16)

    def stats(x):
        zero = torch.tensor(0.0)
        return torch.stack([x.mean(), x.std(unbiased=False), x.min(), x.max(), x.abs().max(), x.norm(), zero, zero])

    tensors = {
        "steps.loss": torch.tensor([2.0, 1.5], dtype=torch.float64),
        **{f"{k}.stats": stats(act).double() for k in modules},
        **{f"{k}.sample": act.clone() for k in modules},
        **{f"{n}.stats": stats(w).double() for n in ("fc.weight", "head.weight")},
        **{f"{n}.sample": w.clone() for n in ("fc.weight", "head.weight")},
        "steps.grad_norm": torch.ones(2, dtype=torch.float64),
    }
    kind = "xla" if label.startswith("xla") else "cpu"
    step = {"backward_calls": 1, "grad_norm": 1.0, "lr": [1e-3], "step_time_s": 0.01, "without_grad": without_grad}
    out = {"shape": [32], "dtype": "float32"}
    param = {"shape": [16], "dtype": "float32"}
    manifest = {
        "side": {"label": label, "kind": kind, "hardware": False, "emulated": kind == "xla", "versions": {}},
        "devices": {"parameters": {kind: 1}, "losses": [kind]},
        "host": {"hostname": "h"},
        "command": ["python", "train.py"],
        "stopped": "steps reached",
        "steps_recorded": 2,
        "steps": [{**step, "step": i + 1, "loss": x, "backward_losses": [x]} for i, x in enumerate([2.0, 1.5])],
        "modules": [
            {"key": k, "type": "Linear", "outputs": [{**out, "stats": f"{k}.stats", "sample": f"{k}.sample"}]}
            for k in modules
        ],
        "parameters": [
            {**param, "name": n, "stats": f"{n}.stats", "sample": f"{n}.sample"} for n in ("fc.weight", "head.weight")
        ],
        "param_groups": groups,
        "tied": [],
        "ops": [],
        "precision": {"regime": "float32"},
        "perf": {"step_times_s": []},
        "error": None,
    }
    return read_trace(write_trace(path, manifest, tensors))


def test_a_module_whose_weights_the_port_applies_by_a_function_is_not_compared_said(tmp_path):
    """A reference's module (`head`) the port never calls, doing its work by a function on its
    weights (`F.linear(h, m.head.weight)`): it FAILed "head: not called on the ported side"
    though the losses agree. Where the port holds and steps every parameter of it, each with a
    gradient, its output is not compared, said; a port leaving a parameter without a gradient,
    or not stepping it, still FAILs there."""
    need("torch")
    need("safetensors")
    from porter.verify.tracecmp import compare_traces

    both = [["fc.weight", "head.weight"]]
    ref = _headed_trace(tmp_path / "r.safetensors", "cpu (reference; CUDA shim)", ("fc", "head"), both, 0)
    port = _headed_trace(tmp_path / "p.safetensors", "xla (CPU PJRT, emulated)", ("fc",), both, 0)
    res = compare_traces(ref, port)
    row = next(m for m in res.modules if m["module"] == "head")
    assert res.verdict == "pass" and not row["compared"] and row.get("weights_applied"), (res.reasons, row)
    assert any("(first: head): never called in the port, its parameters applied" in w for w in res.warnings)
    for groups, without in ((both, 1), ([["fc.weight"]], 0)):
        port = _headed_trace(tmp_path / "q.safetensors", "xla (CPU PJRT, emulated)", ("fc",), groups, without)
        res = compare_traces(ref, port)
        row = next(m for m in res.modules if m["module"] == "head")
        assert res.verdict == "fail" and row["problem"] == "not called on the ported side", (groups, without, row)


LAYER_BY_LAYER = """\
import json, sys, torch
torch.manual_seed(0)
m = torch.nn.ModuleList([torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3)])
params = {k: v.detach().clone().requires_grad_() for k, v in m.named_parameters()}
def own(i):
    return {k.split(".", 1)[1]: v for k, v in params.items() if k.startswith(f"{i}.")}
opt = torch.optim.Adam(params.values(), lr=1e-2)
g = torch.Generator().manual_seed(3202)
out = []
for i in range(3):
    x, y = torch.randn(4, 6, generator=g), torch.randn(4, 3, generator=g)
    h = x
    for j, layer in enumerate(m):
        h = torch.func.functional_call(layer, own(j), (h,))
    loss = ((h - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    out.append([loss.item()])
    opt.step()
if len(sys.argv) > 1: json.dump(out, open(sys.argv[1], "w"))
"""


def test_a_list_walked_layer_by_layer_through_functional_call_passes(tmp_path, monkeypatch):
    """A port walking its `ModuleList` by hand, each layer called by `torch.func.functional_call`
    on tensors the port trains: no root held a stepped parameter (the given tensors are not the
    layers' own), so the list was not sought, and the pair FAILed "parameters on one side only:
    reference ['0.weight', ..., '2.bias'], ported ['weight', 'bias', '<Linear>.weight', ...]"
    against the reference calling the `Sequential` of the same layers, the same losses."""
    need("torch")
    need("safetensors")
    import torch

    from tests.verify.recording import compared, recorded

    ref, own_ref = recorded(tmp_path, _walked_program("Sequential", "m(x)"), 3, "seq")
    port, own = recorded(tmp_path, LAYER_BY_LAYER, 3, "functional")
    torch.testing.assert_close(torch.tensor(own), torch.tensor(own_ref))
    for a, b in ((ref, port), (port, ref)):
        res, reasons = compared(monkeypatch, a.trace, b.trace)
        assert res.verdict == "pass", reasons
