"""Verdicts a user can trust, on hand-made traces (no subprocess): initial weights compared by
value, the program's own noise floor, the code path each side took, random draws named as a
divergence's cause, runs of several ranks compared rank by rank, tables off a terminal."""

from __future__ import annotations

import io
import math

import pytest

torch = compare_traces = read_trace = write_trace = merge_ranks = None


@pytest.fixture(autouse=True)
def _imports():
    """torch, and what imports it, when a test runs (tests/deps.py: it may still be installing)."""
    global torch, compare_traces, read_trace, write_trace, merge_ranks
    import torch
    from porter.verify.tracecmp import compare_traces
    from porter.verify.tracefile import merge_ranks, read_trace, write_trace


def _stats(x):
    x = x.double().reshape(-1)
    return torch.stack(
        [
            x.mean(),
            x.std(unbiased=False),
            x.min(),
            x.max(),
            x.abs().max(),
            x.norm(),
            torch.zeros((), dtype=torch.float64),
            torch.zeros((), dtype=torch.float64),
        ]
    )


def trace(
    path,
    losses,
    *,
    weight=None,
    stats_weight=None,
    checksum=0,
    act=None,
    devices=None,
    side=None,
    rng=None,
    floor=None,
    all_values=True,
):
    weight = weight if weight is not None else torch.linspace(-1, 1, 12).reshape(3, 4)
    act = act if act is not None else torch.linspace(-1, 1, 32)
    tensors = {
        "steps.loss": torch.tensor(losses, dtype=torch.float64),
        "steps.grad_norm": torch.ones(len(losses), dtype=torch.float64),
        "m0.0.stats": _stats(act),
        "m0.0.sample": act,
        "p0.stats": _stats(stats_weight if stats_weight is not None else weight),
        "p0.sample": weight.reshape(-1),
    }
    manifest = {
        "side": side or {"label": "cpu (reference; CUDA shim)", "kind": "cpu", "shim": "cuda->cpu"},
        "steps": [
            {"step": i + 1, "loss": v, "grad_norm": 1.0, "lr": [1e-3], "step_time_s": 0.01}
            for i, v in enumerate(losses)
        ],
        "modules": [
            {
                "key": "fc",
                "type": "Linear",
                "outputs": [{"shape": [32], "dtype": "float32", "stats": "m0.0.stats", "sample": "m0.0.sample"}],
            }
        ],
        "parameters": [
            {
                "name": "fc.weight",
                "shape": [3, 4],
                "dtype": "float32",
                "stats": "p0.stats",
                "sample": "p0.sample",
                "sample_stride": 1 if all_values else 2,
                "all_values": all_values,
                "bits_checksum": checksum,
            }
        ],
        "tied": [],
        "precision": {"regime": "float32"},
        "perf": {},
        "devices": devices or {"parameters": {"cpu": 1}, "losses": ["cpu"], "requested": {"cuda": 3}},
        "rng": rng or {"redirected": True, "device_draws": None, "generator": "the CPU's"},
    }
    if floor is not None:
        manifest["noise_floor"] = floor
    return read_trace(write_trace(path, manifest, tensors))


XLA = {"label": "xla (CPU PJRT, emulated)", "kind": "xla", "emulated": True}
ON_XLA = {"parameters": {"xla": 1}, "losses": ["xla"], "requested": None}


def test_weights_are_compared_by_value_never_by_their_norm(tmp_path):
    ref = trace(tmp_path / "r", [2.0, 1.5])
    # the same values, a norm that differs by reduction order: no weight warning
    same = trace(
        tmp_path / "s", [2.0, 1.5], stats_weight=torch.linspace(-1, 1, 12) * (1 + 3e-6), side=XLA, devices=ON_XLA
    )
    r = compare_traces(ref, same)
    assert r.verdict == "pass" and not r.parameters["differing"]
    assert r.parameters["summary_only"] and "by" in r.parameters
    # two ulps off: within the dtype's tolerance
    w = torch.linspace(-1, 1, 12).reshape(3, 4)
    near = trace(
        tmp_path / "n", [2.0, 1.5], weight=torch.nextafter(torch.nextafter(w, w + 1), w + 1), side=XLA, devices=ON_XLA
    )
    assert compare_traces(ref, near).verdict == "pass"
    # one element really differs: FAIL, naming the parameter, the element and both values
    w2 = w.clone()
    w2[1, 2] += 0.25
    off = trace(tmp_path / "o", [2.0, 1.5], weight=w2, side=XLA, devices=ON_XLA)
    r = compare_traces(ref, off)
    assert r.verdict == "fail"
    (d,) = r.parameters["differing"]
    assert d["element"] == [1, 2] and d["abs_diff"] == pytest.approx(0.25)
    text = " ".join(r.reasons)
    assert "did not start from the same weights" in text and "fc.weight[1, 2]" in text
    assert "same seeded CPU generator" in text  # not "initialise on the CPU"


def test_a_sampled_parameter_fails_on_its_bit_checksum(tmp_path):
    ref = trace(tmp_path / "r", [2.0], checksum=11, all_values=False)
    same = trace(tmp_path / "s", [2.0], checksum=11, all_values=False, side=XLA, devices=ON_XLA)
    assert compare_traces(ref, same).verdict == "pass"
    other = trace(tmp_path / "o", [2.0], checksum=12, all_values=False, side=XLA, devices=ON_XLA)
    r = compare_traces(ref, other)
    assert r.verdict == "fail" and "elements outside the sample differ" in " ".join(r.reasons)


def test_the_noise_floor_widens_each_step_and_is_printed(tmp_path):
    from porter.verify import noise

    ref = trace(tmp_path / "r", [2.0, 1.8, 1.6, 1.5])
    again = trace(tmp_path / "a", [2.0, 1.8, 1.62, 1.45])  # the program drifts from itself
    floor = noise.measure(ref, again, "another thread count")
    assert floor["loss_envelope"] == pytest.approx([0.0, 0.0, 0.02, 0.05])
    assert floor["max_loss_step"] == 4 and floor["noisy_from_step"] is None
    floored = trace(tmp_path / "f", [2.0, 1.8, 1.6, 1.5], floor=dict(floor, measured=True))
    # within 4 times the floor up to each step: PASS, with both numbers printed
    port = trace(tmp_path / "p", [2.0, 1.8, 1.65, 1.62], side=XLA, devices=ON_XLA)
    r = compare_traces(floored, port)
    assert r.verdict == "pass", r.reasons
    assert any(x.startswith("noise floor: another thread count") for x in r.reasons)
    assert r.steps[3]["noise_allowed"] == pytest.approx(0.2)
    # a fixed tolerance alone would have failed it
    assert compare_traces(ref, port).verdict == "fail"
    # beyond the floor: FAIL at the step it parts
    far = trace(tmp_path / "x", [2.0, 1.8, 1.75, 1.5], side=XLA, devices=ON_XLA)
    r = compare_traces(floored, far)
    assert r.verdict == "fail" and r.parted_at == 3
    # the floor never excuses step 1 of a run that starts equal
    first = trace(tmp_path / "1", [2.01, 1.8, 1.6, 1.5], side=XLA, devices=ON_XLA)
    assert compare_traces(floored, first).parted_at == 1


def test_the_sides_code_paths_are_said(tmp_path):
    from porter.verify.causes import made_on

    ref = trace(tmp_path / "r", [2.0])
    assert made_on(ref.manifest).startswith("cuda, run on the CPU by the CUDA shim (3 CUDA")
    # the reference asked for no CUDA device: its CPU branch ran, the port its device branch
    cpu_branch = trace(
        tmp_path / "c", [2.0], devices={"parameters": {"cpu": 1}, "losses": ["cpu"], "requested": {"cpu": 2}}
    )
    port = trace(tmp_path / "p", [2.0], side=XLA, devices=ON_XLA)
    r = compare_traces(cpu_branch, port)
    assert "its CPU branch" in r.made_on["reference"]
    assert any("may follow different code paths" in x for x in r.reasons)
    # a port that never reached its device fails, whatever its numbers
    stayed = trace(
        tmp_path / "s", [2.0], side=XLA, devices={"parameters": {"cpu": 1}, "losses": ["cpu"], "requested": None}
    )
    r = compare_traces(ref, stayed)
    assert r.verdict == "fail" and "the port computed on the CPU, not on its xla device" in r.reasons[0]


def test_no_verdict_when_the_reference_ran_on_the_targets_device(tmp_path):
    """A reference that trained on XLA (transformers does, whenever torch_xla is importable)
    agrees with the port to the bit: comparing them would PASS the port against itself."""
    port = trace(tmp_path / "p", [2.0, 1.8], side=XLA, devices=ON_XLA)
    on_xla = trace(
        tmp_path / "x", [2.0, 1.8], devices={"parameters": {"xla": 1}, "losses": ["xla"], "requested": {"cpu": 3}}
    )
    r = compare_traces(on_xla, port)
    assert r.verdict == "error" and r.exit_code == 2
    assert "the reference computed on xla" in r.reasons[0] and "no verdict" in r.reasons[0]
    # a loss on the target's device is enough, whatever the parameters say
    loss_only = trace(
        tmp_path / "l", [2.0, 1.8], devices={"parameters": {"cpu": 1}, "losses": ["xla"], "requested": {"cuda": 3}}
    )
    assert compare_traces(loss_only, port).verdict == "error"


def test_no_verdict_when_both_sides_ran_on_one_device_type(tmp_path):
    ref = trace(tmp_path / "r", [2.0, 1.8])
    # no target runtime: the port ran on the CPU like the reference, with the same numbers
    on_cpu = trace(
        tmp_path / "c",
        [2.0, 1.8],
        side={"label": "cpu (no target runtime installed)", "kind": "cpu"},
        devices={"parameters": {"cpu": 1}, "losses": ["cpu"], "requested": None},
    )
    r = compare_traces(ref, on_cpu)
    assert r.verdict == "error" and "both sides computed on cpu" in r.reasons[0]
    assert "install torch_xla" in r.reasons[0]
    # a side that does not say where its tensors were made (an older trace) gets no verdict either
    unknown = trace(tmp_path / "u", [2.0, 1.8], side=XLA, devices={"parameters": {}, "losses": []})
    r = compare_traces(ref, unknown)
    assert r.verdict == "error" and "where the port's tensors were made is not recorded" in r.reasons[0]


def test_outputs_the_port_padded_further_are_compared_on_the_reference_region(tmp_path):
    """accelerate pads each batch to 128 tokens under XLA, to the longest sequence elsewhere: the
    port records its output on the reference's region (padded_from says it did)."""
    ref = trace(tmp_path / "r", [2.0, 1.8])

    def port(name, act, shape, padded_from=None):
        t = trace(tmp_path / name, [2.0, 1.8], act=act, side=XLA, devices=ON_XLA)
        out = t.manifest["modules"][0]["outputs"][0]
        out["shape"] = shape
        if padded_from:
            out["padded_from"] = padded_from
        return read_trace(write_trace(tmp_path / f"{name}.safetensors", t.manifest, t.tensors))

    region = port("a", None, [32], padded_from=[128])
    r = compare_traces(ref, region)
    assert r.verdict == "pass" and r.modules[0]["padded_from"] == [128]
    assert any("compared on the reference's region" in x for x in r.reasons)
    # the same region with other values still fails, naming the module
    r = compare_traces(ref, port("b", torch.linspace(-1, 1, 32) * 1.1, [32], padded_from=[128]))
    assert r.verdict == "fail" and r.first_divergence["module"] == "fc"
    # other shapes that cannot be lined up (no region recorded): not compared, never a pass row
    r = compare_traces(ref, port("c", None, [64]))
    assert not r.modules[0]["compared"] and r.modules[0]["problem"].startswith("other shapes")
    assert any("were not compared" in x for x in r.reasons)
    # shapes that do not hold one another fail
    r = compare_traces(ref, port("d", None, [4, 8]))
    assert r.verdict == "fail" and "shape differs" in r.first_divergence["problem"]


def test_a_divergence_at_a_device_draw_is_named(tmp_path):
    ref = trace(tmp_path / "r", [2.0, 1.8])
    own = {
        "redirected": False,
        "device_draws": 2,
        "before_step_1": 2,
        "generator": "each device's own",
        "first": [{"call": "torch.randn", "location": "train.py:12", "after_step": 0, "device": "xla:0"}],
    }
    port = trace(tmp_path / "p", [2.0, 1.7], act=torch.linspace(-1, 1, 32) * 1.5, side=XLA, devices=ON_XLA, rng=own)
    r = compare_traces(ref, port)
    text = " ".join(r.reasons)
    assert r.verdict == "fail" and "the divergence starts at a random draw on the ported side's device" in text
    assert "torch.randn at train.py:12, before step 1" in text and "without --device-rng" in text
    assert any("each device's own" in x for x in r.rng)


def test_ranks_are_compared_rank_by_rank(tmp_path):
    def run(name, rank1, port=True):
        where = {"side": XLA, "devices": ON_XLA} if port else {}
        parts = [trace(tmp_path / f"{name}0", [2.0, 1.8, 1.6], **where), trace(tmp_path / f"{name}1", rank1, **where)]
        for t in parts:
            t.manifest["steps"][0]["collectives"] = {"all_reduce": 3}
        return merge_ranks(parts, tmp_path / f"{name}.safetensors")

    ref = read_trace(run("r", [2.1, 1.9, 1.7], port=False).path)
    assert ref.world_size == 2 and ref.rank(1).manifest["steps"][0]["loss"] == 2.1
    same = run("s", [2.1, 1.9, 1.7])
    r = compare_traces(ref, same)
    assert r.verdict == "pass" and r.reasons[0].startswith("2 ranks, compared rank by rank")
    assert r.ranks[1]["collectives"][0]["reference"] == {"all_reduce": 3}
    parted = run("p", [2.1, 1.95, 1.7])
    r = compare_traces(ref, parted)
    assert r.verdict == "fail" and r.reasons[0].startswith("rank 1 parts first, at step 2")
    assert r.ranks[0]["verdict"] == "pass" and r.ranks[1]["parted_at"] == 2


def test_tables_off_a_terminal_are_plain_and_unsqueezed():
    from rich.console import Console

    from porter.verify.report import print_sections

    out = io.StringIO()
    wide = "x" * 150
    print_sections(
        "parity-check (script): PASS",
        "pass",
        [("Sides", ["side", "device"], [["reference", wide], ["ported", "xla"]], ["a note"])],
        Console(file=out),
    )
    text = out.getvalue()
    assert wide in text and "porte d" not in text
    assert not any(ch in text for ch in "│┃┏━")
    assert "reference  " + wide in text and "  a note" in text


def test_torchrun_commands_are_split_into_launcher_and_script():
    from porter.verify.script import launch_of

    plain = launch_of(["python", "train.py", "--lr", "1"])
    assert plain.nproc == 1 and plain.script == ("train.py", "--lr", "1")
    tr = launch_of(["torchrun", "--nproc-per-node", "2", "train.py", "--lr", "1"])
    assert tr.nproc == 2 and tr.script == ("train.py", "--lr", "1")
    assert "--standalone" in tr.options and "train.py" not in tr.options
    mod = launch_of(
        ["python", "-m", "torch.distributed.run", "--nproc_per_node=2", "--master-port", "29511", "-m", "pkg.train"]
    )
    assert mod.script == ("-m", "pkg.train") and "--standalone" not in mod.options
    with pytest.raises(ValueError, match="one node"):
        launch_of(["torchrun", "--nnodes", "2", "--nproc-per-node", "2", "train.py"])


def test_weight_tolerance_follows_the_dtype():
    from porter.verify.tracecmp import weight_tolerance

    assert weight_tolerance("float32") == pytest.approx(8 * 2**-23)
    assert weight_tolerance("bfloat16") == pytest.approx(8 * 2**-7)
    assert weight_tolerance("int64") == 0.0
    assert math.isfinite(weight_tolerance("float16"))
