"""The thirty-sixth read's trace leftovers, the thirty-seventh read's helper on them (helper
`trleft`, docs/reads/55-trleft-attempts.md): each defect's test failed on e4e00db6 by its
assertion (the controls pass there too). The recorded programs write their own losses and their
parameters after each step (tests/verify/recording.same_training, torch.testing.assert_close, is
the oracle)."""

import pytest

from tests.deps import need
from tests.verify.recording import compared, recorded, same_training

# weights w1 (8, 6), a (8), b (8), w2 (3, 8): a the first layer's bias, b added after its tanh;
# held in CONTAINER, read by the keys KW1, KA, KB, KW2; a and b start at VA0 and VB0
RENAMED = """\
import json, sys, torch
Z = lambda *s: torch.nn.Parameter(torch.zeros(*s))
class PD(torch.nn.Module):
    def __init__(s):
        super().__init__(); s.p = CONTAINER
    def forward(s, x):
        h = torch.tanh(torch.nn.functional.linear(x, s.p[KW1], s.p[KA]))
        return torch.nn.functional.linear(torch.tanh(2 * h + s.p[KB]), s.p[KW2])
m = PD()
with torch.no_grad():
    m.p[KW1].copy_(torch.randn(8, 6, generator=torch.Generator().manual_seed(1780000)) * 0.3)
    m.p[KW2].copy_(torch.randn(3, 8, generator=torch.Generator().manual_seed(1780001)) * 0.3)
    m.p[KA].fill_(VA0); m.p[KB].fill_(VB0)
opt = torch.optim.Adam(m.parameters(), lr=1e-2)
g = torch.Generator().manual_seed(1780002)
own, weights = [], []
for i in range(3):
    x, y = torch.randn(4, 6, generator=g), torch.randn(4, 3, generator=g)
    opt.zero_grad()
    loss = ((m(x) - y) ** 2).mean()
    loss.backward()
    own.append(loss.item())
    opt.step()
    weights.append(torch.cat([m.p[k].detach().flatten() for k in (KW1, KA, KB, KW2)]).tolist())
if len(sys.argv) > 1: json.dump({"loss": own, "weights": weights}, open(sys.argv[1], "w"))
"""
DICT = 'torch.nn.ParameterDict({"w1": Z(8, 6), "a": Z(8), "b": Z(8), "w2": Z(3, 8)})'
LIST = "torch.nn.ParameterList([Z(8, 6), Z(8), Z(8), Z(3, 8)])"


def _renamed_body(container: str, keys: tuple[str, ...], a0: float) -> str:
    body = RENAMED.replace("CONTAINER", container).replace("VA0", repr(a0)).replace("VB0", "0.0")
    for k, v in zip(("KW1", "KW2", "KA", "KB"), keys):
        body = body.replace(k, v)
    return body


@pytest.fixture(scope="module")
def renamed(tmp_path_factory):
    """The weights in a ParameterDict (w1, a, b, w2) and in a ParameterList whose port put b's
    weight before a's ([w1, b, a, w2]): a and b both zeros (`zeros`), or a starting at 0.1
    (`apart`)."""
    need("torch")
    need("safetensors")
    where = tmp_path_factory.mktemp("renamed")
    forms = {
        "dict_zeros": (DICT, ('"w1"', '"w2"', '"a"', '"b"'), 0.0),
        "list_zeros": (LIST, ("0", "3", "2", "1"), 0.0),
        "dict_apart": (DICT, ('"w1"', '"w2"', '"a"', '"b"'), 0.1),
        "list_apart": (LIST, ("0", "3", "2", "1"), 0.1),
    }
    return {name: recorded(where, _renamed_body(*form), 3, name) for name, form in forms.items()}


def test_renamed_parameters_of_equal_initial_values_are_not_paired_by_recording_order(renamed, monkeypatch):
    """Item 6 (54-trace2's Left): `_renamed` paired each renamed parameter with the first of the
    other side's of its shape and initial values; two zero vectors (a bias and a shift), the port
    holding b's before a's, were said "'p.a' as 'p.1'" (the port's code reads a as p.2: the pair
    untrue). They are said as a group now, the order not recorded; the FAIL is kept."""
    (d, d_own), (lst, lst_own) = renamed["dict_zeros"], renamed["list_zeros"]
    assert same_training(d_own, lst_own)  # the oracle: the same training, a as p.2, b as p.1
    res, said = compared(monkeypatch, d.trace, lst.trace)
    assert res.verdict == "fail", said
    assert "parameters renamed in the port: 4 parameter(s)" in said, said
    assert "'p.a' as 'p.1'" not in said and "'p.b' as 'p.2'" not in said, said
    assert "'p.a', 'p.b' as 'p.1', 'p.2' in an order not recorded" in said, said
    assert "'p.w1' as 'p.0'" in said, said


def test_renamed_parameters_of_other_initial_values_are_still_paired_one_by_one(renamed, monkeypatch):
    """The control: a starting at 0.1, b at 0: each pair named, in the port's order (a as p.2)."""
    (d, d_own), (lst, lst_own) = renamed["dict_apart"], renamed["list_apart"]
    assert same_training(d_own, lst_own)
    res, said = compared(monkeypatch, d.trace, lst.trace)
    assert res.verdict == "fail", said
    assert "parameters renamed in the port: 4 parameter(s)" in said, said
    assert "'p.a' as 'p.2'" in said and "'p.b' as 'p.1'" in said and "order not recorded" not in said, said


# LAYERS `Linear(4, 4)` of one `ModuleList` walked by hand, the reference calling `ls[i]` on the
# first i + 1 rows; the port pads (every layer on all the rows, its loss reading the first i + 1),
# in the other order (54-trleft2's `rev`, with more layers than its regions' bound)
LISTED = """\
import json, sys, torch
PAD, REV, LAYERS = FLAGS
torch.manual_seed(0)
ls = torch.nn.ModuleList(torch.nn.Linear(4, 4) for _ in range(LAYERS))
opt = torch.optim.SGD(ls.parameters(), lr=0.1)
g = torch.Generator().manual_seed(1780010)
own, weights = [], []
for it in range(3):
    x = torch.randn(LAYERS, 4, generator=g)
    opt.zero_grad()
    loss = 0
    for i in (reversed(range(LAYERS)) if REV else range(LAYERS)):
        h = ls[i](x if PAD else x[: i + 1])
        loss = loss + (h[: i + 1] ** 2).mean()
    loss.backward()
    own.append(loss.item())
    opt.step()
    weights.append(torch.cat([p.detach().flatten() for p in ls.parameters()]).tolist())
if len(sys.argv) > 1: json.dump({"loss": own, "weights": weights}, open(sys.argv[1], "w"))
"""


def _parity(tmp_path, monkeypatch, program: str, ref_flags: tuple, rev_flags: tuple) -> tuple:
    """parity-check's result on `program` run with `ref_flags` (the reference) and `rev_flags` (the
    port), its reasons and warnings joined, and both programs' own records."""
    import json
    import subprocess
    import sys

    from porter.verify import causes
    from porter.verify.script import ScriptConfig, run_script

    trees = {}
    for side, flags in (("ref", ref_flags), ("rev", rev_flags)):
        tree = tmp_path / side
        tree.mkdir(parents=True)
        (tree / "train.py").write_text(program.replace("FLAGS", repr(flags)))
        subprocess.run([sys.executable, "train.py", "own.json"], cwd=tree, check=True, timeout=300)
        trees[side] = tree
    monkeypatch.setattr(causes, "device_findings", lambda rm, pm: ([], []))  # (both on the CPU)
    cfg = ScriptConfig(
        ported=trees["rev"],
        original=trees["ref"],
        command=(sys.executable, "train.py"),
        steps=3,
        timeout=300,
        noise_floor=False,
        ops=False,
    )
    res = run_script(cfg)
    own = [json.loads((trees[s] / "own.json").read_text()) for s in ("ref", "rev")]
    return res, " | ".join(res.reasons + res.warnings), own


def _parity_listed(tmp_path, monkeypatch, layers: int) -> tuple:
    """parity-check's result on the reference (unpadded, in order) and the padded port in the
    other order, as it records them (the reference's shapes and list naming handed to the port),
    its reasons joined, and both programs' own records."""
    return _parity(tmp_path, monkeypatch, LISTED, (False, False, layers), (True, True, layers))


def test_a_padded_port_past_the_regions_bound_is_not_said_padded_differently(tmp_path, monkeypatch):
    """Item 3 (54-trleft2's Left): past 64 shapes of one call number the port's recorder keeps
    no region for the later layers; their outputs, compared whole, were said "the program fed its
    model inputs padded differently on each side" (untrue: the port pads to the reference's
    regions; the oracle: the same training). Said as the region not kept now; the layers whose
    region was kept are compared as before."""
    need("torch")
    need("safetensors")
    res, said, (own_ref, own_rev) = _parity_listed(tmp_path, monkeypatch, 70)
    assert same_training(own_ref, own_rev)
    assert res.verdict == "pass", said
    # (only the list's input is padded differently: the port feeds every layer all the rows)
    assert "1 module output(s) had other shapes on the two sides and were not compared (first: 0 (input)" in said
    assert "5 module output(s) were larger on the ported side and were not compared" in said, said
    layers = [m for m in res.modules if m.get("type") == "Linear"]
    assert sum(1 for m in layers if m["compared"]) == 65, layers  # 64 regions kept, the last layer unpadded


# 54-trace2's evaluation program: the model evaluated under `no_grad` on a batch of the training
# batch's shape (seeded EVAL_SEED) before each training forward; the training batch moved by SHIFT
EVALUATED = """\
import json, sys, torch
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
opt = torch.optim.Adam(m.parameters(), lr=1e-2)
g = torch.Generator().manual_seed(1780020)
own, weights = [], []
for i in range(3):
    x, y = torch.randn(4, 6, generator=g), torch.randn(4, 3, generator=g)
    x = x + SHIFT
    with torch.no_grad():
        m(torch.randn(4, 6, generator=torch.Generator().manual_seed(EVAL_SEED)))
    opt.zero_grad()
    loss = ((m(x) - y) ** 2).mean()
    loss.backward()
    own.append(loss.item())
    opt.step()
    weights.append(torch.cat([p.detach().flatten() for p in m.parameters()]).tolist())
if len(sys.argv) > 1: json.dump({"loss": own, "weights": weights}, open(sys.argv[1], "w"))
"""


@pytest.fixture(scope="module")
def evaluations(tmp_path_factory):
    """The evaluation on one batch (`a`), on another (`b`), and on another with the training
    batch moved (`b_moved`, unfaithful)."""
    need("torch")
    need("safetensors")
    where = tmp_path_factory.mktemp("evaluations")
    forms = {"a": ("0.0", "1780021"), "b": ("0.0", "1780022"), "b_moved": ("0.05", "1780022")}
    return {
        name: recorded(where, EVALUATED.replace("SHIFT", shift).replace("EVAL_SEED", seed), 3, name)
        for name, (shift, seed) in forms.items()
    }


def test_evaluations_on_other_batches_are_said_as_such(evaluations, monkeypatch):
    """Item 5 (54-trace2's Left): both sides evaluating on other batches, the same training, FAILed
    "first diverging module at step 1: 0" with nothing said of the evaluation. The FAIL stays (the
    program's evaluation numbers differ); the row is said as an evaluation's whose training agrees."""
    (a, a_own), (b, b_own) = evaluations["a"], evaluations["b"]
    assert same_training(a_own, b_own)
    for ref, port in ((a, b), (b, a)):
        res, said = compared(monkeypatch, ref.trace, port.trace)
        assert res.verdict == "fail", said
        assert "a call made with gradients off on both sides, an evaluation" in said, said
        assert "module output(s) computed with gradients on agree" in said, said


def test_evaluations_on_other_batches_with_the_training_changed_are_not_said_to_agree(evaluations, monkeypatch):
    """The control: the training batch moved too (the training differs): FAIL, no such clause."""
    (a, a_own), (b, b_own) = evaluations["a"], evaluations["b_moved"]
    assert not same_training(a_own, b_own)
    for ref, port in ((a, b), (b, a)):
        res, said = compared(monkeypatch, ref.trace, port.trace)
        assert res.verdict == "fail", said
        assert "computed with gradients on agree" not in said, said


# twelve `Linear(8, 8)` of a `ModuleList` walked by the model's own forward (both sides named by the
# model), the reference on the first i + 1 rows, the port padding in the other order; layer 9's
# output moved by EPS (a hook: porter records the output its caller gets)
OWN = """\
import json, sys, torch
PAD, REV, EPS = FLAGS
torch.manual_seed(0)
class M(torch.nn.Module):
    def __init__(s):
        super().__init__(); s.ls = torch.nn.ModuleList(torch.nn.Linear(8, 8) for _ in range(12))
        if EPS:
            s.ls[9].register_forward_hook(lambda m, a, out: out * (1 + EPS))
    def forward(s, x):
        loss = 0
        for i in (reversed(range(12)) if REV else range(12)):
            h = s.ls[i](x if PAD else x[: i + 1])
            loss = loss + (h[: i + 1] ** 2).mean()
        return loss
m = M()
opt = torch.optim.SGD(m.parameters(), lr=0.1)
g = torch.Generator().manual_seed(1780040)
own, weights = [], []
for it in range(3):
    x = torch.randn(12, 8, generator=g)
    opt.zero_grad()
    loss = m(x)
    loss.backward()
    own.append(loss.item())
    opt.step()
    weights.append(torch.cat([p.detach().flatten() for p in m.parameters()]).tolist())
if len(sys.argv) > 1: json.dump({"loss": own, "weights": weights}, open(sys.argv[1], "w"))
"""


def _parity_own(tmp_path, monkeypatch, eps: float) -> tuple:
    """parity-check's result on OWN's reference and its padded port in the other order (moved by
    `eps`), its reasons and warnings joined, and both programs' own records."""
    return _parity(tmp_path, monkeypatch, OWN, (False, False, 0.0), (True, True, eps))


def test_a_padded_port_whose_model_walks_its_layers_in_another_order_has_each_layer_compared(tmp_path, monkeypatch):
    """Item 4 (54-trleft2's Left): the port kept 8 regions of a call number (the reference's
    first eight layers'), so layers 8-10 were not compared and layer 9 moved by 2e-4 (the
    oracle differs) PASSed on the loss. Where the reference called more than 8 modules of the
    port's type at that number, 64 are kept: each layer compared, the move FAILs at `ls.9`."""
    need("torch")
    need("safetensors")
    res, said, (own_ref, own_rev) = _parity_own(tmp_path / "a", monkeypatch, 0.0)
    assert same_training(own_ref, own_rev)
    assert res.verdict == "pass", said
    layers = [m for m in res.modules if m.get("type") == "Linear"]
    assert len(layers) == 12 and all(m["compared"] and m["passed"] for m in layers), layers
    res, said, (own_ref, own_bad) = _parity_own(tmp_path / "b", monkeypatch, 2e-4)
    assert not same_training(own_ref, own_bad)
    assert res.verdict == "fail", said
    assert (res.first_divergence or {}).get("module") == "ls.9", said
