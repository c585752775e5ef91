"""The twenty-ninth read's second wave on the recorder and the compare (helper `trace2`,
docs/reads/47-trace2-attempts.md): what the first wave added, the parameter groups an
`add_param_group` adds after step 1 above all. torch.testing.assert_close on the program's own
weights, taken without porter, is the oracle of each verdict."""

from __future__ import annotations

from tests.deps import need

STEP1 = {"param_groups": [["0.weight", "0.bias"]]}  # step 1's one group, named on both sides
TOLS = ((1e-4, 1e-5), (1e-3, 1e-5))


def _added_later(torch, seed: int, added: list[tuple[int, float]]) -> list:
    """Two Linears, SGD on the first; before step 3's update the second's parameters are added one
    group each (`added`: which parameter, 0 its weight or 1 its bias, at which rate, in order)."""
    torch.manual_seed(seed)
    a, b = torch.nn.Linear(4, 8), torch.nn.Linear(8, 2)
    opt = torch.optim.SGD(a.parameters(), lr=0.1)
    x = torch.randn(16, 4)
    for step in range(1, 5):
        opt.zero_grad()
        b(torch.tanh(a(x))).pow(2).mean().backward()
        if step == 3:
            for which, lr in added:
                opt.add_param_group({"params": [list(b.parameters())[which]], "lr": lr})
        opt.step()
    return [p.detach().clone() for p in (*a.parameters(), *b.parameters())]


def _alike(torch, one: list, other: list) -> bool:
    try:
        torch.testing.assert_close(one, other)
    except AssertionError:
        return False
    return True


def _rows(ref_lrs: list[float], port_lrs: list[float]) -> list[dict]:
    from porter.verify.tracecmp import _group_pairs, _step_row

    pairs = _group_pairs(STEP1, STEP1)
    a = {"loss": 1.0, "grad_norm": 1.0, "lr": ref_lrs}
    b = {"loss": 1.0, "grad_norm": 1.0, "lr": port_lrs}
    return [_step_row(2, a, b, None, TOLS, pairs)]


def test_groups_added_after_step_one_in_another_order_are_not_said_to_differ():
    """The merge of `_lrs_close` read the groups no pair holds as unnamed ones and took their None
    (the same rates in another order: not to be paired by order) as "not alike": a faithful port
    that added the unfrozen layer's bias group before its weight group failed on "the learning rate
    differs" (reference [0.1, 0.01, 0.02], ported [0.1, 0.02, 0.01]), though its weights are the
    reference's. The same rates lists come of an unfaithful port (each rate on the other parameter),
    so neither verdict is the traces' to give: not compared, said why (added after step 1)."""
    torch = need("torch")
    from porter.verify.tracecmp import _unpaired_groups

    for seed in (2960, 2961):
        reference = _added_later(torch, seed, [(0, 0.01), (1, 0.02)])
        assert _alike(torch, _added_later(torch, seed, [(1, 0.02), (0, 0.01)]), reference)  # faithful
        assert not _alike(torch, _added_later(torch, seed, [(1, 0.01), (0, 0.02)]), reference)  # not
    rows = _rows([0.1, 0.01, 0.02], [0.1, 0.02, 0.01])
    assert rows[0]["lr_ok"] is None
    said = _unpaired_groups(rows, STEP1, STEP1)
    assert len(said) == 1 and "added after step 1" in said[0] and "[0.01, 0.02]" in said[0], said
    assert "older porter" not in said[0]
    # what held: a rate on one side only, a group on one side only, the same rate split in two
    assert _rows([0.1, 0.01, 0.02], [0.1, 0.01, 0.5])[0]["lr_ok"] is False
    assert _rows([0.1, 0.01], [0.1])[0]["lr_ok"] is False
    assert _rows([0.1, 0.01], [0.1, 0.01, 0.01])[0]["lr_ok"] is True
    assert _rows([0.2, 0.01], [0.1, 0.01])[0]["lr_ok"] is False


def test_groups_added_after_step_one_paired_by_their_order_are_said_so():
    """Groups added after step 1 at the same rates in the same order were passed silently: a port
    that put each rate on the other parameter (weight 0.02, bias 0.01 where the reference has
    weight 0.01, bias 0.02) has other weights (the oracle) and passed unsaid, though the traces
    cannot tell it from a faithful one. Now said, as for an older porter's unnamed groups."""
    torch = need("torch")
    from porter.verify.tracecmp import _groups_by_order

    reference = _added_later(torch, 2962, [(0, 0.01), (1, 0.02)])
    assert not _alike(torch, _added_later(torch, 2962, [(0, 0.02), (1, 0.01)]), reference)
    rows = _rows([0.1, 0.01, 0.02], [0.1, 0.01, 0.02])
    assert rows[0]["lr_ok"] is True
    said = _groups_by_order(rows, STEP1, STEP1)
    assert len(said) == 1 and "paired by their order" in said[0] and "added after step 1" in said[0], said
    # one group added (nothing to pair otherwise), and one rate for all: nothing said
    assert _groups_by_order(_rows([0.1, 0.01], [0.1, 0.01]), STEP1, STEP1) == []
    assert _groups_by_order(_rows([0.1, 0.1, 0.1], [0.1, 0.1, 0.1]), STEP1, STEP1) == []


def test_the_watched_generator_classes_pickle_as_their_public_names(tmp_path):
    """`numpy.random.RandomState` (watched since the first wave) and `torch.Generator` are local
    classes under `porter trace record`: a program that pickled the class itself (a spawn DataLoader
    worker's `worker_init_fn=partial(RandomState, seed)`, a config dict `torch.save`d) failed under
    porter only, "Can't pickle local object". The class now pickles by its public name: the watched
    class where porter runs, numpy's and torch's own in a process without porter."""
    torch, numpy = need("torch"), need("numpy")
    import functools
    import pickle
    import subprocess
    import sys

    from porter.verify.rng import ProgramSeeds

    watch = ProgramSeeds(str(tmp_path))
    watch.install()
    try:
        data = pickle.dumps({"make": functools.partial(numpy.random.RandomState, 2963), "gen": torch.Generator})
        again = pickle.loads(data)
        assert again["gen"] is torch.Generator and again["make"].func is numpy.random.RandomState
        again["make"]()
    finally:
        watch.uninstall()
    assert [(c["call"], c["seed"]) for c in watch.calls] == [("numpy.random.RandomState", 2963)], watch.calls
    assert b"porter" not in data
    oracle = numpy.random.RandomState(2963).randint(1 << 30)
    code = (
        "import pickle, sys; d = pickle.loads(sys.stdin.buffer.read()); print(d['make']().randint(1 << 30), d['gen'])"
    )
    out = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True, check=True).stdout.decode()
    assert out.split() == [str(oracle), "<class", "'torch._C.Generator'>"], out


def _adamw(torch, split: bool) -> list:
    """A model without biases trained by AdamW, its parameters in a decay and a no_decay group (the
    latter empty: nothing is a bias) or in one group: the same update."""
    torch.manual_seed(2964)
    m = torch.nn.Sequential(torch.nn.Linear(4, 8, bias=False), torch.nn.Tanh(), torch.nn.Linear(8, 2, bias=False))
    decay = [p for n, p in m.named_parameters() if "bias" not in n]
    no_decay = [p for n, p in m.named_parameters() if "bias" in n]
    groups = [{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups if split else m.parameters(), lr=1e-2, weight_decay=0.01)
    x, y = torch.randn(32, 4), torch.randn(32, 2)
    for _ in range(4):
        opt.zero_grad()
        torch.nn.functional.mse_loss(m(x), y).backward()
        opt.step()
    return [p.detach().clone() for p in m.parameters()]


def test_an_empty_parameter_group_is_no_group_to_compare():
    """The merge read every group no pair holds as added after step 1: a reference whose `no_decay`
    group is empty (a model without biases; the weight-decay split of most training scripts) and a
    port with one group failed on "the learning rate differs at step 1: reference [0.01, 0.01],
    ported [0.01]" (seen on a recorded pair: docs/reads/47-trace2-tools/emptygroup.sh.txt), though
    their weights are alike. A group step 1 holds empty moves nothing: it is left out."""
    torch = need("torch")
    from porter.verify.tracecmp import _group_pairs, _groups_by_order, _step_row, _unpaired_groups

    assert _alike(torch, _adamw(torch, True), _adamw(torch, False))
    split, one = {"param_groups": [["0.weight", "2.weight"], []]}, {"param_groups": [["0.weight", "2.weight"]]}

    def rows(rm: dict, pm: dict, ref_lrs: list[float], port_lrs: list[float]) -> list[dict]:
        a = {"loss": 1.0, "grad_norm": 1.0, "lr": ref_lrs}
        b = {"loss": 1.0, "grad_norm": 1.0, "lr": port_lrs}
        return [_step_row(1, a, b, None, TOLS, _group_pairs(rm, pm))]

    assert rows(split, one, [0.01, 0.01], [0.01])[0]["lr_ok"] is True
    assert rows(one, split, [0.01], [0.01, 0.5])[0]["lr_ok"] is True
    assert rows(split, split, [0.01, 0.01], [0.01, 0.5])[0]["lr_ok"] is True
    assert _unpaired_groups(rows(split, one, [0.01, 0.01], [0.01]), split, one) == []
    assert _groups_by_order(rows(split, one, [0.01, 0.01], [0.01]), split, one) == []
    # what held: the named group's own rate, and a group added later beside the empty one
    assert rows(split, one, [0.01, 0.01], [0.02])[0]["lr_ok"] is False
    assert rows(split, one, [0.01, 0.01, 0.001], [0.01, 0.001])[0]["lr_ok"] is True
    assert rows(split, one, [0.01, 0.01, 0.001], [0.01, 0.005])[0]["lr_ok"] is False


_SCALED = """\
import json, sys, torch
torch.manual_seed(2965)
m = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(m.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
x, y, w = torch.randn(8, 4), torch.randn(8, 1), torch.full((8,), 1 / 8)
own = []
for step in range(3):
    opt.zero_grad()
    per = (m(x) - y).pow(2).squeeze(1)
    own.append(float((per * w).sum()))
    if sys.argv[1] == "weights":
        scaler.scale(per).backward(w)
    else:
        torch.autograd.backward(scaler.scale([(per[:4] * w[:4]).sum(), (per[4:] * w[4:]).sum()]))
    scaler.step(opt)
    scaler.update()
json.dump(own, open("own.json", "w"))
"""


def test_a_scaled_loss_given_its_weights_or_listed_is_recorded_unscaled(tmp_path):
    """The first wave recorded the loss of `per_sample.backward(weights)` and of
    `torch.autograd.backward([l1, l2])`, but a `GradScaler`'s were recorded scaled: 144152 where the
    program's loss was 2.1996 (65536 times), so a port that dropped the scaler (bf16 on a TPU) failed
    on "the loss curves part". Each is now recorded as the program computed it (its own values, the
    oracle)."""
    torch = need("torch")
    import json
    import sys

    from porter.verify.procs import WorkerSet
    from porter.verify.script import ScriptConfig, record
    from porter.verify.tracefile import read_trace

    (tmp_path / "train.py").write_text(_SCALED)
    for mode in ("weights", "list"):
        out = tmp_path / f"{mode}.safetensors"
        cfg = ScriptConfig(ported=None, command=(sys.executable, "train.py", mode))
        with WorkerSet() as workers:
            record("reference", tmp_path, cfg, out, tmp_path / f"work-{mode}", workers)
        losses = [s["loss"] for s in read_trace(out).manifest["steps"]]
        own = json.loads((tmp_path / "own.json").read_text())
        torch.testing.assert_close(torch.tensor(losses), torch.tensor(own), rtol=1e-6, atol=0.0)
