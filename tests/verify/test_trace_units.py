"""The trace file format and the trace comparison on hand-made traces (no subprocess)."""

from __future__ import annotations

import json
import math
import re

import pytest

torch = loss_chart_svg = to_html = to_markdown = compare_traces = META_KEY = TraceError = read_trace = write_trace = (
    None
)


@pytest.fixture(autouse=True)
def _imports():
    """torch, and what imports it, when a test runs, not at collection: .ci/run may still be
    installing torch while the suite starts (tests/deps.py)."""
    global torch, loss_chart_svg, to_html, to_markdown, compare_traces, META_KEY, TraceError, read_trace, write_trace
    import torch
    from porter.verify.scriptreport import loss_chart_svg, to_html, to_markdown
    from porter.verify.tracecmp import compare_traces
    from porter.verify.tracefile import META_KEY, TraceError, read_trace, write_trace


def _stats(x: torch.Tensor) -> torch.Tensor:
    x = x.double().reshape(-1)
    return torch.stack(
        [
            x.mean(),
            x.std(unbiased=False),
            x.min(),
            x.max(),
            x.abs().max(),
            x.norm(),
            torch.tensor(0.0, dtype=torch.float64),
            torch.tensor(0.0, dtype=torch.float64),
        ]
    )


PORT = "xla (CPU PJRT, emulated)"


def make_trace(path, losses, *, lr=None, act=None, regime="float32", label="cpu (reference; CUDA shim)"):
    """A reference's trace, or with label=PORT a port's (its tensors made on XLA)."""
    kind = "xla" if label == PORT else "cpu"
    lr = lr or [1e-3 * (i + 1) for i in range(len(losses))]
    act = act if act is not None else torch.linspace(-1, 1, 32)
    w = torch.linspace(0, 1, 16)
    tensors = {
        "steps.loss": torch.tensor(losses, dtype=torch.float64),
        "steps.grad_norm": torch.ones(len(losses), dtype=torch.float64),
        "m0.0.stats": _stats(act),
        "m0.0.sample": act,
        "p0.stats": _stats(w),
        "p0.sample": w,
    }
    manifest = {
        "side": {"label": label, "kind": kind, "hardware": False, "emulated": kind == "xla", "versions": {}},
        "devices": {"parameters": {kind: 1}, "losses": [kind]},
        "host": {"hostname": "h"},
        "command": ["python", "train.py"],
        "stopped": "steps reached",
        "steps_recorded": len(losses),
        "steps": [
            {
                "step": i + 1,
                "loss": loss,
                "backward_calls": 1,
                "backward_losses": [loss],
                "grad_norm": 1.0,
                "lr": [lr[i]],
                "step_time_s": 0.01,
            }
            for i, loss in enumerate(losses)
        ],
        "modules": [
            {
                "key": "fc",
                "type": "Linear",
                "outputs": [{"shape": [32], "dtype": "float32", "stats": "m0.0.stats", "sample": "m0.0.sample"}],
            }
        ],
        "parameters": [
            {"name": "fc.weight", "shape": [16], "dtype": "float32", "stats": "p0.stats", "sample": "p0.sample"}
        ],
        "tied": [],
        "ops": [],
        "precision": {"regime": regime},
        "perf": {"step_times_s": []},
        "error": None,
        "note": float("nan"),
    }
    return read_trace(write_trace(path, manifest, tensors))


def test_a_port_that_ties_parameters_the_reference_keeps_apart_is_told_so(tmp_path):
    """The reference's head a copy of its embedding that starts equal, the port's head the
    embedding itself (`head.weight = emb.weight`): it trains the two as one parameter. The
    port failed on "parameters on one side only" (the one name it records a tied group by) and
    a parting put to the optimizer or the data, the tie unsaid (twenty-eighth read). Said now,
    as an untie is."""
    ref = make_trace(tmp_path / "r.safetensors", [2.0, 1.5])
    port = make_trace(tmp_path / "p.safetensors", [2.0, 1.4], label=PORT)
    weight = ref.manifest["parameters"][0]
    ref.manifest["parameters"] = [{**weight, "name": n} for n in ("emb.weight", "head.weight")]
    port.manifest["parameters"] = [{**weight, "name": "emb.weight"}]
    port.manifest["tied"] = [["emb.weight", "head.weight"]]
    r = compare_traces(ref, port)
    assert r.verdict == "fail"
    assert any("tied in the port are separate" in f and "emb.weight, head.weight" in f for f in r.reasons), r.reasons
    # a group the reference ties too (with a third name) is no new tie
    ref.manifest["tied"] = [["emb.weight", "head.weight", "lm.weight"]]
    assert not any("tied in the port are separate" in f for f in compare_traces(ref, port).reasons)


@pytest.mark.parametrize("tied_side", ["ported", "reference"])
def test_a_tied_group_s_names_are_said_by_the_tie_line_not_as_parameters_on_one_side_only(tmp_path, tied_side):
    """A tie on one side only is recorded by the group's first name: its other names were listed
    under "parameters on one side only" beside the tie's line, the one change said twice
    (twenty-eighth trace read's leftover). They are said by the tie line only; a parameter on
    one side for another reason is still listed."""
    ref = make_trace(tmp_path / "r.safetensors", [2.0, 1.5])
    port = make_trace(tmp_path / "p.safetensors", [2.0, 1.4], label=PORT)
    weight = ref.manifest["parameters"][0]
    untied, tied = (port, ref) if tied_side == "reference" else (ref, port)
    untied.manifest["parameters"] = [{**weight, "name": n} for n in ("emb.weight", "head.weight")]
    tied.manifest["parameters"] = [{**weight, "name": n} for n in ("adapter.weight", "emb.weight")]
    tied.manifest["tied"] = [["emb.weight", "head.weight"]]
    r = compare_traces(ref, port)
    one_side = [f for f in r.reasons if f.startswith("parameters on one side only")]
    assert r.verdict == "fail" and any("emb.weight, head.weight" in f for f in r.reasons), r.reasons
    assert len(one_side) == 1 and "head.weight" not in one_side[0] and "adapter.weight" in one_side[0], one_side
    tied.manifest["parameters"] = [{**weight, "name": "emb.weight"}]
    assert not [f for f in compare_traces(ref, port).reasons if f.startswith("parameters on one side only")]


def test_parameters_only_the_port_has_are_named_in_the_order_it_recorded_them(tmp_path):
    """The parameters of a module only the port has were listed alphabetically, so the "first"
    five named were not the first the port made (a 40-layer adapter showed `layers.10.` before
    `layers.2.`; twenty-first read's leftover): they keep the trace's order, as the reference's
    missing ones do."""
    from porter.verify.tracecmp import compare_parameters

    ref = make_trace(tmp_path / "r.safetensors", [2.0, 1.5])
    port = make_trace(tmp_path / "p.safetensors", [2.0, 1.5], label=PORT)
    extra = [f"adapter.layers.{i}.weight" for i in (0, 1, 2, 10, 11, 20)]
    port.manifest["parameters"] += [
        {"name": n, "shape": [16], "dtype": "float32", "stats": "p0.stats", "sample": "p0.sample"} for n in extra
    ]
    assert compare_parameters(ref, port)["only_in_port"] == extra
    r = compare_traces(ref, port)
    assert any(f"ported {extra[:5]}" in f for f in r.reasons), r.reasons


def test_roundtrip_is_safetensors_with_a_json_manifest(tmp_path):
    t = make_trace(tmp_path / "a.safetensors", [2.0, 1.5])
    assert t.manifest["schema"] == "porter.trace/1" and math.isnan(t.manifest["note"])
    from safetensors import safe_open

    with safe_open(str(tmp_path / "a.safetensors"), framework="pt") as fh:
        assert json.loads(fh.metadata()[META_KEY])["steps_recorded"] == 2  # plain JSON inside


def test_foreign_or_newer_files_are_refused(tmp_path):
    from safetensors.torch import save_file

    save_file({"x": torch.zeros(1)}, str(tmp_path / "plain.safetensors"))
    with pytest.raises(TraceError, match="without a porter trace manifest"):
        read_trace(tmp_path / "plain.safetensors")
    save_file(
        {"x": torch.zeros(1)},
        str(tmp_path / "new.safetensors"),
        metadata={META_KEY: json.dumps({"schema": "porter.trace/9"})},
    )
    with pytest.raises(TraceError, match="newer"):
        read_trace(tmp_path / "new.safetensors")
    (tmp_path / "junk.safetensors").write_bytes(b"\x80\x04pickle?")
    with pytest.raises(TraceError):
        read_trace(tmp_path / "junk.safetensors")


def test_equal_runs_pass_and_a_later_step_parting_fails(tmp_path):
    ref = make_trace(tmp_path / "r.safetensors", [2.0, 1.8, 1.6, 1.5])
    same = make_trace(tmp_path / "s.safetensors", [2.0, 1.8, 1.6, 1.5], label=PORT)
    r = compare_traces(ref, same)
    assert r.verdict == "pass" and r.exit_code == 0 and r.parted_at is None
    assert any("tolerances (float32)" in x for x in r.reasons)
    off = make_trace(tmp_path / "o.safetensors", [2.0, 1.8, 1.7, 1.65], label=PORT)
    r = compare_traces(ref, off)
    assert r.verdict == "fail" and r.parted_at == 3
    assert any("the loss curves part at step 3" in x for x in r.reasons)
    svg = loss_chart_svg(r)
    assert svg.count("<polyline") == 2 and "parts at step 3" in svg
    assert "<svg" in to_html(r) and "part at step 3" in to_markdown(r)


def test_schedule_activation_and_precision(tmp_path):
    ref = make_trace(tmp_path / "r.safetensors", [2.0, 1.8])
    lr = make_trace(tmp_path / "l.safetensors", [2.0, 1.8], lr=[1e-3, 1e-3], label=PORT)
    r = compare_traces(ref, lr)
    assert r.verdict == "fail" and any("learning rate differs at step 2" in x for x in r.reasons)
    act = make_trace(tmp_path / "a.safetensors", [2.0, 1.8], act=torch.linspace(-1, 1, 32) * 1.01, label=PORT)
    r = compare_traces(ref, act)
    assert r.first_divergence["module"] == "fc"
    # the same 1% activation difference is within bfloat16 autocast's tolerance
    bf = make_trace(
        tmp_path / "b.safetensors", [2.0, 1.8], act=torch.linspace(-1, 1, 32) * 1.01, regime="bfloat16", label=PORT
    )
    r = compare_traces(ref, bf)
    assert r.regime == "bfloat16" and r.verdict == "pass" and r.tolerances["modules"] == [5e-2, 1e-2]


def test_a_port_in_another_precision_regime_than_the_reference_is_said(tmp_path):
    """A port that added bfloat16 autocast to a float32 program passed at bfloat16's tolerances
    (50 times float32's), the verdict naming only "tolerances (bfloat16 autocast)": nothing said
    the port, not the program, chose them (a real program recorded on both sides, twenty-second
    read)."""
    ref = make_trace(tmp_path / "r.safetensors", [2.0, 1.8])
    port = make_trace(tmp_path / "p.safetensors", [2.0, 1.8], regime="bfloat16", label=PORT)
    res = compare_traces(ref, port)
    assert res.verdict == "pass" and res.tolerances["regime"] == "bfloat16"
    said = [w for w in res.warnings if "other precision regimes" in w]
    assert said and "reference float32, port bfloat16" in said[0], res.warnings
    same = compare_traces(ref, make_trace(tmp_path / "q.safetensors", [2.0, 1.8], label=PORT))
    assert not any("precision regimes" in w for w in same.warnings)


def test_step_time_is_reported_as_a_labelled_gap(tmp_path):
    from porter.verify.tracecmp import side_summary, step_time_gap

    ref = side_summary(make_trace(tmp_path / "r.safetensors", [2.0]), "reference")
    port = side_summary(make_trace(tmp_path / "p.safetensors", [2.0], label=PORT), "ported")
    assert step_time_gap(ref, port, 0) == []  # not measured: no gap invented
    ref.perf, port.perf = {"steady_step_s": 0.01}, {"steady_step_s": 0.03}
    port.emulated = True
    (gap,) = step_time_gap(ref, port, 2)
    assert gap.rank == 3 and gap.kind == "step_time" and "(×3.00)" in gap.title
    assert "not a hardware speed" in gap.evidence[0]


def test_complex_outputs_and_weights_are_compared_by_both_parts(tmp_path):
    """A module that returns a complex tensor (an FFT layer): its sample was cast to float64,
    which drops the imaginary part with a torch warning on the terminal, and was compared as
    integers (complex is not `is_floating_point`), so a faithful port on XLA failed on a
    4.8e-7 rounding while a port that conjugated the output passed (seventeenth read)."""
    import warnings

    from porter.verify.recorder import bits_checksum, tensor_stats
    from porter.verify.tracecmp import compare_parameter

    z = torch.complex(torch.linspace(-1, 1, 32), torch.linspace(0.5, 2, 32))

    def with_output(path, out, label=None):
        t = make_trace(path, [2.0, 1.8], **({"label": label} if label else {}))
        t.tensors["m0.0.stats"], t.tensors["m0.0.sample"] = tensor_stats(out, 64)
        t.tensors["p0.stats"], t.tensors["p0.sample"] = tensor_stats(out[:16], 64)
        return t

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "discards the imaginary part" on the terminal
        ref = with_output(tmp_path / "r.safetensors", z)
        rounded = with_output(
            tmp_path / "s.safetensors", z + torch.complex(torch.tensor(4.8e-7), torch.tensor(-3e-7)), PORT
        )
        assert compare_traces(ref, rounded).verdict == "pass"
        conj = with_output(tmp_path / "c.safetensors", z.conj(), PORT)
        r = compare_traces(ref, conj)
        assert r.verdict == "fail" and (r.first_divergence or {}).get("module") == "fc", r.reasons
        p = ref.manifest["parameters"][0]
        assert compare_parameter(p, p, ref, conj) is not None  # a weight's imaginary part decides too
        assert compare_parameter(p, p, ref, rounded) is None or "8 ulps" in compare_parameter(p, p, ref, rounded)["why"]
        stats, _ = tensor_stats(z, 64)
        assert float(stats[4]) == pytest.approx(float(torch.view_as_real(z).abs().max()))  # absmax of both parts
        assert bits_checksum(z) != bits_checksum(z.conj())


def test_statistics_that_are_complex_are_not_a_trace_porter_wrote(tmp_path):
    """porter writes a module's statistics as float64: complex ones ended in a TypeError
    ("must be real number") in the comparison, after a torch warning line."""
    t = make_trace(tmp_path / "a.safetensors", [2.0, 1.8])
    from safetensors.torch import save_file

    tensors = dict(t.tensors)
    tensors["m0.0.stats"] = tensors["m0.0.stats"].to(torch.complex64)
    save_file(tensors, str(tmp_path / "b.safetensors"), metadata={META_KEY: json.dumps(t.manifest, default=str)})
    with pytest.raises(TraceError, match="statistics"):
        read_trace(tmp_path / "b.safetensors")


def _one_output_pair(tmp_path, ref_values, port_values, grad_norm=1.0):
    """Two traces whose one module output is `ref_values` / `port_values` (float32)."""
    from porter.verify.recorder import tensor_stats

    traces = []
    for name, values in (("r", ref_values), ("p", port_values)):
        x = torch.tensor(values, dtype=torch.float32)
        t = make_trace(tmp_path / f"{name}.safetensors", [2.0, 1.8], act=x, label=PORT if name == "p" else None)
        t.tensors["m0.0.stats"], t.tensors["m0.0.sample"] = tensor_stats(x, 64)
        t.manifest["modules"][0]["outputs"][0]["shape"] = [len(values)]
        for st in t.manifest["steps"]:
            st["grad_norm"] = grad_norm
        traces.append(t)
    return compare_traces(*traces)


def test_equal_outputs_holding_infinities_and_an_equal_infinite_gradient_norm_agree(tmp_path):
    """Two runs whose module output holds -inf at the same places (a masked log-softmax), or
    whose gradient norm is infinite alike: each statistic and the norm were compared by their
    difference, and inf - inf is NaN, so equal runs failed ("min, max, abs-max, L2 differ";
    "the gradient norm differs at step 1: reference inf, ported inf")."""
    values = [0.5, float("-inf"), -1.25, float("-inf"), 2.0, 0.0, -0.0, 3.0]
    res = _one_output_pair(tmp_path, values, values, grad_norm=float("inf"))
    assert res.modules[0]["passed"], res.modules[0]
    assert res.verdict == "pass", res.reasons
    worse = _one_output_pair(tmp_path, values, [*values[:-1], 3.1])
    assert not worse.modules[0]["passed"]


@pytest.mark.parametrize("inf", [float("inf"), float("-inf")])
def test_outputs_holding_an_infinity_alike_and_other_values_within_the_tolerance_agree(tmp_path, inf):
    """Attention scores masked with -inf (or an output holding +inf) at the same places, every
    finite value within the tolerance (as torch.testing.assert_close says): the largest
    magnitude was infinite, so the finite max (min) was allowed `atol` alone and a faithful port
    failed on it (found against assert_close with generated outputs, twenty-second read)."""
    ref = [-40.0, inf, 25.5, 3.0, inf, -7.25, 0.5, 31.0]
    port = [v * (1 + 0.5e-4 * (-1) ** i) for i, v in enumerate(ref)]
    r, p = torch.tensor(ref), torch.tensor(port)
    torch.testing.assert_close(p, r, rtol=1e-4, atol=1e-5)
    res = _one_output_pair(tmp_path, ref, port)
    assert res.modules[0]["passed"], res.modules[0]
    far = _one_output_pair(tmp_path, ref, [v * 1.01 for v in ref])
    assert not far.modules[0]["passed"] and set(far.modules[0]["stats_differ"]) & {"min", "max"}


@pytest.mark.parametrize(
    "ref, port",
    [
        ([0.0] * 8, [0.9e-5] * 8),  # every value within atol: the L2 norm moved sqrt(8) times it
        ([100.0 + i * 1e-3 for i in range(8)], [(100.0 + i * 1e-3) * (1 + 0.8e-4 * (-1) ** i) for i in range(8)]),
    ],
    ids=["l2", "std"],
)
def test_an_output_whose_every_value_is_within_the_tolerance_passes_on_its_statistics(tmp_path, ref, port):
    """A port whose every output value is within the module tolerance printed with the verdict
    (rtol=1e-4 atol=1e-5, as torch.testing.assert_close says) failed on its statistics: the L2
    norm was allowed `atol`, where values each within `atol` move it by up to `atol * sqrt(n)`,
    and the standard deviation `rtol * std`, where values far from 0 move it by up to
    `rtol * rms` (found against assert_close over random perturbations)."""
    r, p = torch.tensor(ref, dtype=torch.float32), torch.tensor(port, dtype=torch.float32)
    torch.testing.assert_close(p, r, rtol=1e-4, atol=1e-5)
    res = _one_output_pair(tmp_path, ref, port)
    assert res.modules[0]["passed"], res.modules[0]
    far = _one_output_pair(tmp_path, ref, [v + 1e-3 * (1 + abs(v)) * (-1) ** i for i, v in enumerate(port)])
    assert not far.modules[0]["passed"]


def test_outputs_and_parameters_of_one_key_are_paired_in_their_order(tmp_path):
    """A trace may hold a module key or a parameter name more than once (two heads a program
    keeps in a plain list were both `<Linear>`, in traces porter wrote): the port's were looked up
    in a dict, so both of the reference's met the port's last and a faithful port failed."""
    from porter.verify.recorder import tensor_stats

    a, b = torch.linspace(-1, 1, 32), torch.linspace(3, 5, 32)
    traces = []
    for name in ("r", "p"):
        t = make_trace(tmp_path / f"{name}.safetensors", [2.0, 1.8], label=PORT if name == "p" else None)
        for i, x in enumerate((a, b)):
            t.tensors[f"m{i}.0.stats"], t.tensors[f"m{i}.0.sample"] = tensor_stats(x, 64)
            t.tensors[f"p{i}.stats"], t.tensors[f"p{i}.sample"] = tensor_stats(x, 64)
        out = {"shape": [32], "dtype": "float32"}
        t.manifest["modules"] = [
            {
                "key": "<Linear>",
                "type": "Linear",
                "outputs": [{**out, "stats": f"m{i}.0.stats", "sample": f"m{i}.0.sample"}],
            }
            for i in range(2)
        ]
        t.manifest["parameters"] = [
            {"name": "<Linear>.weight", **out, "stats": f"p{i}.stats", "sample": f"p{i}.sample"} for i in range(2)
        ]
        traces.append(t)
    res = compare_traces(*traces)
    assert [m["passed"] for m in res.modules] == [True, True], res.modules
    assert res.parameters["differing"] == [] and res.parameters["compared"] == 2, res.parameters
    assert res.verdict == "pass", res.reasons
    # the port's two in the other order: both differ, each against its own
    traces[1].manifest["modules"].reverse()
    assert [m["passed"] for m in compare_traces(*traces).modules] == [False, False]


def _two_calls(tmp_path, name, first, second):
    """A trace whose module `p` was called twice, on outputs `first` then `second` (2-D, 3-D)."""
    from porter.verify.recorder import tensor_stats

    t = make_trace(tmp_path / f"{name}.safetensors", [2.0, 1.8], label=PORT if name != "r" else None)
    t.manifest["modules"] = []
    for i, x in enumerate((first, second)):
        t.tensors[f"m{i}.0.stats"], t.tensors[f"m{i}.0.sample"] = tensor_stats(x, 64)
        out = {"shape": list(x.shape), "dtype": "float32", "stats": f"m{i}.0.stats", "sample": f"m{i}.0.sample"}
        t.manifest["modules"].append({"key": "p" if i == 0 else "p#2", "type": "Linear", "outputs": [out]})
    return t


def test_the_calls_of_a_shared_module_made_in_another_order_are_paired_by_their_shapes(tmp_path):
    """A port that calls one module on its two inputs the other way round (two independent
    calls, the same values): the calls were paired by number, so a faithful port failed with
    "p: shape differs: reference [4, 8], ported [2, 4, 8]" (found with a real program recorded
    on both sides, twenty-second read)."""
    a, b = torch.linspace(-1, 1, 32).reshape(4, 8), torch.linspace(3, 5, 64).reshape(2, 4, 8)
    ref = _two_calls(tmp_path, "r", a, b)
    res = compare_traces(ref, _two_calls(tmp_path, "p", b, a))
    assert [m["passed"] for m in res.modules] == [True, True], res.modules
    assert res.verdict == "pass", res.reasons
    assert any("the port's call of the same output shapes" in w for w in res.warnings), res.warnings
    # paired so, a change is still found at the call it changed
    res = compare_traces(ref, _two_calls(tmp_path, "q", b * 1.01, a))
    assert [m["passed"] for m in res.modules] == [True, False] and res.verdict == "fail"
    # shapes no call of the port has: a shape that differs, as before
    res = compare_traces(ref, _two_calls(tmp_path, "s", b, a.reshape(2, 2, 8)))
    assert not res.modules[0]["passed"] and "shape differs" in res.modules[0]["problem"]


def test_buffers_after_the_first_forward_are_compared_when_both_traces_hold_them(tmp_path):
    """A port that trains alike but updates BatchNorm's running statistics otherwise (another
    momentum) was passed: buffers were not recorded. They are compared as module outputs are,
    when both traces hold them (a trace of an older porter has none: nothing to compare)."""
    from porter.verify.recorder import tensor_stats

    traces = []
    for name, mean in (("r", torch.linspace(0, 1, 8)), ("p", torch.linspace(0, 2, 8))):
        t = make_trace(tmp_path / f"{name}.safetensors", [2.0, 1.8], label=PORT if name == "p" else None)
        t.tensors["b0.stats"], t.tensors["b0.sample"] = tensor_stats(mean, 64)
        out = {"shape": [8], "dtype": "float32", "stats": "b0.stats", "sample": "b0.sample"}
        t.manifest["buffers"] = [{"key": "bn.running_mean", "type": "buffer", "outputs": [out]}]
        traces.append(t)
    res = compare_traces(*traces)
    assert res.verdict == "fail" and res.first_divergence["module"] == "bn.running_mean", res.first_divergence
    del traces[1].manifest["buffers"]
    assert compare_traces(*traces).verdict == "pass"


def test_a_running_var_that_alone_differs_on_xla_is_said_to_be_the_backend_s(tmp_path):
    """torch_xla 2.9's BatchNorm moves running_var by the biased batch variance (CPU and CUDA:
    the unbiased one), so a faithful XLA port of a BatchNorm model fails there; the FAIL says the
    cause, but only where the same module's running_mean agreed (another momentum moves both)."""
    from porter.verify.recorder import tensor_stats

    def traces_with(var_scale, mean_scale):
        traces = []
        for name in ("r", "p"):
            t = make_trace(tmp_path / f"{name}.safetensors", [2.0, 1.8], label=PORT if name == "p" else None)
            buffers = []
            for i, (key, v) in enumerate((("bn.running_mean", mean_scale), ("bn.running_var", var_scale))):
                value = torch.linspace(0.5, 1, 8) * (v if name == "p" else 1.0)
                t.tensors[f"b{i}.stats"], t.tensors[f"b{i}.sample"] = tensor_stats(value, 64)
                out = {"shape": [8], "dtype": "float32", "stats": f"b{i}.stats", "sample": f"b{i}.sample"}
                buffers.append({"key": key, "type": "buffer", "outputs": [out]})
            t.manifest["buffers"] = buffers
            traces.append(t)
        return compare_traces(*traces)

    res = traces_with(63 / 64, 1.0)
    assert res.verdict == "fail" and res.first_divergence["module"] == "bn.running_var"
    assert any("biased batch variance" in r for r in res.reasons), res.reasons
    res = traces_with(63 / 64, 1.5)  # another momentum: the mean differs first, no backend cause
    assert res.verdict == "fail" and res.first_divergence["module"] == "bn.running_mean"
    assert not any("biased" in r for r in res.reasons), res.reasons


def test_a_faithful_large_output_summed_in_another_order_passes_on_its_l2_norm_and_an_unfaithful_one_fails():
    """The same 1M float32 values, reduced as the CPU reference reduces them and as a device
    does (partial sums of 1,024 chunks, then their sum): torch's float32 L2 norm on the CPU
    erred 3.6e-4 relative there, the chunked one 7e-9, so a faithful port FAILED on L2 at the
    default float32 tolerance (rtol 1e-4; twentieth read's leftover). The recorder now takes its
    reductions in float64; a port whose values all moved by 3 * rtol still fails."""
    from porter.verify.recorder import block_sums, tensor_stats
    from porter.verify.tracecmp import _blocks_cmp, _stats_cmp

    rtol, atol = 1e-4, 1e-5
    g = torch.Generator().manual_seed(0)
    x = torch.rand(1 << 20, generator=g) * 1e-3 + 1.0

    def as_a_device(v: torch.Tensor) -> torch.Tensor:
        chunks = v.reshape(1024, -1)  # float32 partial sums a chunk, then their sum, in float32
        mean = chunks.sum(1).sum() / v.numel()
        l2 = (chunks * chunks).sum(1).sum().sqrt()
        std = ((chunks - mean) ** 2).sum(1).sum().div(v.numel()).sqrt()
        return torch.stack([mean, std, v.min(), v.max(), v.abs().max(), l2, v.new_zeros(()), v.new_zeros(())]).double()

    ref, _ = tensor_stats(x, 64)
    assert _stats_cmp(ref, as_a_device(x), rtol, atol, numel=x.numel()) == []
    assert "l2" in _stats_cmp(ref, as_a_device(x * (1 + 3 * rtol)), rtol, atol, numel=x.numel())
    blocks = block_sums(x, 64)
    device_blocks = torch.stack([x.reshape(64, -1).sum(1), x.reshape(64, -1).abs().sum(1)]).double()
    assert _blocks_cmp(blocks, device_blocks, rtol, atol, x.numel())


def test_a_faithful_port_s_gradient_norm_over_a_large_gradient_agrees_and_an_unfaithful_one_does_not():
    """The recorder's gradient norm of a 16M-value gradient against a device's (float32 partial
    sums of 1,024 chunks, then their sum): reduced in float32 on the CPU it erred 1.3% relative,
    the chunked one 1e-7, so a faithful port FAILED on the gradient norm at its float32 tolerance
    (rtol 1e-3; twentieth read's leftover). It is now taken in float64; a gradient 3 * rtol larger
    still fails."""
    from porter.verify.recorder import _grad_norm
    from porter.verify.tracecmp import GRAD_NORM_TOLERANCES, _close

    rtol, atol = GRAD_NORM_TOLERANCES["float32"]
    g = torch.full((1 << 24,), 0.3)
    device = float((g.reshape(1024, -1) ** 2).sum(1).sum().sqrt())
    reference = float(_grad_norm(g))
    assert _close(reference, device, rtol, atol), (reference, device)
    assert not _close(reference, device * (1 + 3 * rtol), rtol, atol)


def test_recording_a_large_output_takes_its_float64_reductions_a_piece_at_a_time():
    """Recording one output of 32M float32 values (128 MB): its statistics and block sums in
    float64 made a float64 copy of the whole output and of its temporaries, +1.15 GB of peak
    memory at 64M values (twentieth read's leftover); they are now taken `WIDE_CHUNK` values at
    a time, so the peak grows by less than the output's own size. Measured in a fresh process
    (the peak resident size), with the statistics the whole-tensor float64 reductions give."""
    import subprocess
    import sys

    code = (
        "import resource, torch\n"
        "from porter.verify.recorder import block_sums, tensor_stats\n"
        "torch.manual_seed(0)\n"
        "x = torch.rand(1 << 25) * 2 - 0.5\n"
        "tensor_stats(x[:100], 64)\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "s, _ = tensor_stats(x, 64)\n"
        "b = block_sums(x, 64)\n"
        "extra = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before\n"
        "d = x.double()\n"
        "want = [d.mean(), d.std(unbiased=False), torch.linalg.vector_norm(d)]\n"
        "err = max(abs(float(a) - float(w)) / abs(float(w)) for a, w in zip(s[[0, 1, 5]], want))\n"
        "berr = float((b[0] - d.reshape(64, -1).sum(1)).abs().max())\n"
        "print(extra * 1024, x.numel() * 4, err, berr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    extra, size, err, berr = int(out[0]), int(out[1]), float(out[2]), float(out[3])
    assert extra < size, f"recording a {size >> 20} MB output took {extra >> 20} MB more at its peak"
    assert err < 1e-12 and berr < 1e-6, (err, berr)


def test_the_ranks_of_a_run_write_no_more_tensors_together_than_a_trace_file_holds():
    """Each rank records at most its share of outputs (3 tensors each: statistics, sample, block
    sums) and parameters or buffers (2 each), plus 2 step tensors; the merged file must stay
    within `MAX_TRACE_TENSORS`, which `read_trace` refuses past. A floor of 64 of each let 622 or
    more ranks pass it (twentieth read's leftover): their run's trace could not be read."""
    from porter.verify.tracefile import MAX_TRACE_PROCESSES, MAX_TRACE_TENSORS, process_limits

    for world in range(1, MAX_TRACE_PROCESSES + 1):
        outputs, params = process_limits(world)
        assert outputs >= 1 and params >= 1
        assert world * (3 * outputs + 2 * params + 2) <= MAX_TRACE_TENSORS, world


def test_module_outputs_only_the_port_recorded_are_named_in_one_line_that_does_not_decide_the_verdict(tmp_path):
    """The module table follows the reference: a module only the port calls (a wrapper it added)
    was in no row and no line of `trace compare` (twentieth read's leftover). They are now
    counted in one line, the first 5 named; the verdict is the steps' and the reference's
    modules' as before."""
    ref = make_trace(tmp_path / "r.safetensors", [2.0, 1.8])
    port = make_trace(tmp_path / "p.safetensors", [2.0, 1.8], label=PORT)
    first = port.manifest["modules"][0]
    port.manifest["modules"] += [{**first, "key": f"wrapper.extra{i}"} for i in range(7)]
    res = compare_traces(ref, port)
    assert res.verdict == "pass", res.reasons
    line = [r for r in res.reasons if "only the port recorded" in r]
    assert line == [
        "7 module output(s) at step 1 only the port recorded, not compared: wrapper.extra0, wrapper.extra1, "
        "wrapper.extra2, wrapper.extra3, wrapper.extra4 and 2 more"
    ], res.reasons
    assert not any("only the port recorded" in r for r in compare_traces(ref, ref).reasons)


@pytest.mark.parametrize(
    "field, value, said",
    [
        ("loss", True, "`steps[2].loss` is not a number"),
        ("loss", "x", "`steps[2].loss` is not a number"),
        ("grad_norm", None, "`steps[2].grad_norm` is not a number"),
        ("lr", [1e-3, False], "`steps[2].lr[1]` is not a number"),
        ("lr", 0.1, "`steps[2].lr` is not a list"),
        ("step_time_s", "1", "`steps[2].step_time_s` is not a number"),
    ],
)
def test_a_step_field_of_another_type_is_named_as_the_general_check_names_it(field, value, said):
    """The steps (objects of numbers) are checked in one loop, not a call a field (reading
    100,000 steps: 0.9 s -> 0.3 s); the first step that is not as it should be is then checked by
    the general check, for the same message as before."""
    from porter.verify.tracefile import _MANIFEST, _check

    steps = [{"loss": 1.0, "grad_norm": 2, "lr": [1e-3], "step_time_s": None} for _ in range(4)]
    manifest = {"schema": "porter.trace/1", "steps": steps}
    _check(manifest, _MANIFEST, "", {})
    steps[2][field] = value
    with pytest.raises(TraceError, match=re.escape(said)):
        _check(manifest, _MANIFEST, "", {})
    steps[2] = {"grad_norm": 2, "lr": [1e-3]}
    with pytest.raises(TraceError, match=re.escape("`steps[2].loss` is missing")):
        _check(manifest, _MANIFEST, "", {})


def test_a_module_output_with_no_tensor_on_either_side_is_not_compared_rather_than_passed(tmp_path):
    """A module whose output held no tensor porter reads (a generator) was a "pass" row having
    compared nothing; it is "not compared", and the verdict says how many such rows there were."""
    traces = []
    for name in ("r", "p"):
        t = make_trace(tmp_path / f"{name}.safetensors", [2.0, 1.8], label=PORT if name == "p" else None)
        t.manifest["modules"].insert(0, {"key": "gen", "type": "Gen", "outputs": []})
        traces.append(t)
    res = compare_traces(*traces)
    row = next(m for m in res.modules if m["module"] == "gen")
    assert not row["compared"] and row["problem"] == "no tensor in its output on either side", row
    assert res.verdict == "pass" and any("held no tensor porter reads" in w for w in res.warnings), res.warnings


def test_a_port_none_of_whose_module_keys_the_reference_has_is_said_to_be_renamed_or_wrapped(tmp_path):
    """A trace naming a wrapped model `module.*` (an earlier porter, or a wrapper on one side
    only) against one naming it bare: every row is "not called on the ported side"; the FAIL
    says the likely cause instead of leaving the user to hunt for N missing modules."""
    traces = []
    for name in ("r", "p"):
        t = make_trace(tmp_path / f"{name}.safetensors", [2.0, 1.8], label=PORT if name == "p" else None)
        t.manifest["modules"].append(dict(t.manifest["modules"][0], key="act"))
        if name == "r":
            for m in t.manifest["modules"]:
                m["key"] = "module." + m["key"]
        traces.append(t)
    res = compare_traces(*traces)
    assert res.verdict == "fail" and any("wrapped on one side only" in w for w in res.warnings), res.warnings
    # as real traces are: the root is `(model)` on both sides (an earlier porter's DataParallel
    # trace against a port that dropped it: the root paired, and nothing was said)
    for t in traces:
        t.manifest["modules"].append(dict(t.manifest["modules"][0], key="(model)"))
    res = compare_traces(*traces)
    said = [w for w in res.warnings if "wrapped on one side only" in w]
    assert res.verdict == "fail" and len(said) == 1, res.warnings
    assert said[0].startswith("none of the reference's 2 module outputs below its root (model) has its key"), said
    # its parameters did not pair either: 0 compared and "differing: none" was all the table said
    for t in traces[:1]:
        for q in t.manifest["parameters"]:
            q["name"] = "module." + q["name"]
    from porter.verify.scriptreport import sections

    res = compare_traces(*traces)
    rows = {row[0]: row[1] for name, _, rows, _ in sections(res) if name.startswith("Initial weights") for row in rows}
    assert rows["parameters compared before step 1"] == "0", rows
    first = traces[0].manifest["parameters"][0]["name"]
    assert rows["not paired by name"].startswith(
        f"{len(traces[0].manifest['parameters'])} only in the reference (first: {first}); "
    ), rows


def test_a_complex_output_is_close_by_its_modulus_as_assert_close_says(tmp_path):
    """Complex samples were compared part by part, each part against `atol + rtol * |part|`: a
    faithful port of an FFT layer whose small real part erred by a fraction of `|z|`'s tolerance
    failed (35 of 47 generated faithful complex outputs, seed 7, twenty-third read). torch.isclose, and
    torch.testing.assert_close, take `|p - r| <= atol + rtol * |r|` of the complex values."""
    from porter.verify.recorder import tensor_stats

    z = torch.complex(torch.full((32,), 1e-3), torch.linspace(1, 2, 32))
    off = torch.complex(torch.full((32,), 5e-5), torch.zeros(32))  # |off| = 5e-5 < 1e-5 + 1e-4 * |z|

    def with_output(path, out, label=None):
        t = make_trace(path, [2.0, 1.8], **({"label": label} if label else {}))
        t.tensors["m0.0.stats"], t.tensors["m0.0.sample"] = tensor_stats(out, 64)
        return t

    ref = with_output(tmp_path / "r.safetensors", z)
    for port, close in ((z + off, True), (z + 4 * off, False)):
        assert (torch.isclose(port, z, rtol=1e-4, atol=1e-5).all()) == close  # the oracle's own verdict
        r = compare_traces(ref, with_output(tmp_path / "p.safetensors", port, PORT))
        assert r.verdict == ("pass" if close else "fail"), r.reasons


def test_curves_that_part_with_every_recorded_output_agreeing_say_the_loss_or_the_update(tmp_path):
    """A port that changed only its loss function (the curves part at step 1, every module output
    agreeing), or only its optimizer's settings (they part at step 2, step 1's loss, gradient norm
    and learning rate agreeing), failed on the curves alone with nothing said of where to look
    (twenty-fifth read's recorded pairs). Where a module diverges it is named, as before."""

    def trace(name, losses, act=None):
        t = make_trace(tmp_path / f"{name}.safetensors", losses, act=act, label=None if name == "r" else PORT)
        t.manifest["modules"][0]["key"] = "(model)"
        return t

    ref = trace("r", [2.0, 1.8, 1.6])
    loss = " ".join(compare_traces(ref, trace("loss", [2.1, 1.9, 1.7])).reasons)
    assert "part at step 1" in loss and "every module output at step 1 agrees" in loss, loss
    update = " ".join(compare_traces(ref, trace("optim", [2.0, 1.7, 1.5])).reasons)
    assert "part at step 2" in update and "step 1's loss, gradient norm and learning rate agree" in update, update
    moved = torch.linspace(-1, 1, 32) * 1.1
    named = " ".join(compare_traces(ref, trace("module", [2.1, 1.9, 1.7], moved)).reasons)
    assert "first diverging module at step 1: (model)" in named and "every module output" not in named, named


def test_curves_that_part_after_the_model_was_evaluated_in_step_1_do_not_blame_the_loss(tmp_path):
    """Two validation batches (gradients off) before the first training forward, as Lightning's
    sanity check runs: the step-1 rows held the evaluations' calls, and a port fed other training
    data (a reshuffled loader) was told "every module output at step 1 agrees, the model's own
    among them: the loss is made from it otherwise" (twenty-sixth read, a recorded pair). Each
    side's evaluations are now said, and that lead is not given."""
    ref = make_trace(tmp_path / "r.safetensors", [2.0, 1.8])
    ref.manifest["modules"][0]["key"] = "(model)"
    for ref_n, n, line in ((2, 2, "both sides"), (None, 2, "the ported side"), (0, 0, None), (None, None, None)):
        port = make_trace(tmp_path / "p.safetensors", [2.1, 1.9], label=PORT)
        port.manifest["modules"][0]["key"] = "(model)"
        ref.manifest["model_nograd_calls"], port.manifest["model_nograd_calls"] = ref_n, n
        said = " ".join(compare_traces(ref, port).reasons)
        assert "part at step 1" in said, said
        assert ("the loss is made from it otherwise" in said) is (line is None), said
        assert line is None or f"{line} called the model 2 time(s) with gradients off in step 1" in said, said
        assert said.count("with gradients off") == (line is not None), said


def test_a_faithful_complex_output_larger_than_its_sample_passes_on_its_block_sums(tmp_path):
    """127 complex128 values, the port's each within assert_close's `atol + rtol * |r|` (its real
    part moved by 0.9 of it): the block sums split values across blocks and allowed a block
    float32's bound for one value, its parts two or three, so a faithful port failed on "block
    sums" (4 of 60 generated faithful complex outputs, seed 409, twenty-fifth read). One value
    moved by 0.1, off the strided sample, still fails there."""
    from porter.verify.recorder import block_sums, tensor_stats

    rtol, atol = 1e-4, 1e-5
    g = torch.Generator().manual_seed(3)
    z = torch.complex(
        torch.randn(127, generator=g, dtype=torch.float64), torch.randn(127, generator=g, dtype=torch.float64)
    )
    u = torch.rand(127, generator=g, dtype=torch.float64) * 2 - 1

    def with_output(path, out, label=None):
        t = make_trace(path, [2.0, 1.8], **({"label": label} if label else {}))
        t.tensors["m0.0.stats"], t.tensors["m0.0.sample"] = tensor_stats(out, 64)
        t.tensors["m0.0.blocks"] = block_sums(out, 64)
        t.manifest["modules"][0]["outputs"][0].update(shape=[127], dtype="complex128", blocks="m0.0.blocks")
        return t

    faithful = z + 0.9 * u * (atol + rtol * z.abs())
    moved = z.clone()
    moved[100] += 0.1  # past the sample (the first 64 values), in the last block (64 values)
    ref = with_output(tmp_path / "r.safetensors", z)
    for port, close in ((faithful, True), (moved, False)):
        assert bool(torch.isclose(port, z, rtol=rtol, atol=atol).all()) == close  # the oracle's own verdict
        r = compare_traces(ref, with_output(tmp_path / "p.safetensors", port, PORT))
        assert r.verdict == ("pass" if close else "fail"), r.reasons
        assert close or ("block sums" in r.modules[0]["stats_differ"] and r.modules[0]["max_abs"] == 0.0), r.modules


@pytest.mark.parametrize("kind", ["int64", "bool"])
def test_an_index_or_mask_output_changed_outside_its_sample_fails_on_its_block_sums(tmp_path, kind):
    """4,096 argmax indices (or a mask of 4,096 flags), one changed off the strided sample: an
    integer output had no block sums and its statistics were held to the float tolerance, so
    the port passed where assert_close (exact for integers) fails (twenty-sixth read). The
    equal output still passes, and its int32 twin (values equal) too."""
    from porter.verify.recorder import block_sums, tensor_stats

    g = torch.Generator().manual_seed(11)
    ref_out = torch.randint(0, 1000, (4096,), generator=g)
    ref_out = ref_out > 500 if kind == "bool" else ref_out

    def with_output(path, out, label=None):
        t = make_trace(path, [2.0, 1.8], **({"label": label} if label else {}))
        t.tensors["m0.0.stats"], t.tensors["m0.0.sample"] = tensor_stats(out, 64)
        entry = t.manifest["modules"][0]["outputs"][0]
        entry.update(shape=[4096], dtype=str(out.dtype).removeprefix("torch."))
        sums = block_sums(out, 64)
        if sums is not None:
            t.tensors["m0.0.blocks"] = sums
            entry["blocks"] = "m0.0.blocks"
        return t

    changed = ref_out.clone()
    changed[100] = ~changed[100] if kind == "bool" else changed[100] + 1  # the sample: every 64th value
    ref = with_output(tmp_path / "r.safetensors", ref_out)
    ports = [(ref_out.clone(), True), (changed, False)]
    if kind == "int64":
        ports.append((ref_out.to(torch.int32), True))
    for port, equal in ports:
        try:  # the oracle: assert_close's defaults (integers and bools exact)
            torch.testing.assert_close(port, ref_out, check_dtype=False)
            assert equal
        except AssertionError:
            assert not equal
        r = compare_traces(ref, with_output(tmp_path / "p.safetensors", port, PORT))
        assert r.verdict == ("pass" if equal else "fail"), r.reasons
        assert equal or "block sums" in r.modules[0]["stats_differ"], r.modules


@pytest.mark.parametrize("kind", ["int64", "bool"])
def test_two_indices_or_flags_swapped_inside_one_block_fail_on_its_place_weighted_sums(tmp_path, kind):
    """4,096 indices (or flags), two unequal ones off the sample swapped inside one block of 64:
    the block's sum and absolute sum do not move, and the port passed where assert_close fails
    (twenty-sixth read). A faithful port passes, also against a reference of two rows (an older
    porter's trace), where a value changed still fails."""
    from porter.verify.recorder import block_sums, tensor_stats

    g = torch.Generator().manual_seed(12)
    ref_out = torch.randint(0, 1000, (4096,), generator=g)
    ref_out = ref_out > 500 if kind == "bool" else ref_out

    def with_output(path, out, label=None, rows=3):
        t = make_trace(path, [2.0, 1.8], **({"label": label} if label else {}))
        t.tensors["m0.0.stats"], t.tensors["m0.0.sample"] = tensor_stats(out, 64)
        entry = t.manifest["modules"][0]["outputs"][0]
        entry.update(shape=[4096], dtype=str(out.dtype).removeprefix("torch."), blocks="m0.0.blocks")
        t.tensors["m0.0.blocks"] = block_sums(out, 64)[:rows]
        # as a recording writes it: the file's reader takes three rows
        return read_trace(write_trace(path, t.manifest, {k: t.tensors[k] for k in t.tensors}))

    i = next(k for k in range(129, 191) if ref_out[k] != ref_out[k + 1])  # block 2, off the sample
    swapped, changed = ref_out.clone(), ref_out.clone()
    swapped[i], swapped[i + 1] = ref_out[i + 1], ref_out[i]
    changed[i] = ~changed[i] if kind == "bool" else changed[i] + 1
    for port, rows, equal in [(ref_out, 3, True), (swapped, 3, False), (ref_out, 2, True), (changed, 2, False)]:
        try:  # the oracle: assert_close's defaults (integers and bools exact)
            torch.testing.assert_close(port, ref_out)
            assert equal
        except AssertionError:
            assert not equal
        ref = with_output(tmp_path / "r.safetensors", ref_out, rows=rows)
        r = compare_traces(ref, with_output(tmp_path / "p.safetensors", port.clone(), PORT))
        assert r.verdict == ("pass" if equal else "fail"), (rows, r.reasons)
        assert equal or "block sums" in r.modules[0]["stats_differ"], r.modules


def test_a_state_set_a_numpy_default_rng_and_a_device_seeding_are_watched_and_said(tmp_path):
    """`torch.set_rng_state` and `numpy.random.default_rng(seed)` were not watched, and device
    seedings (`torch.cuda.manual_seed`) were kept but said nowhere: a port that set another state
    or seeded its default_rng otherwise passed unsaid (twenty-seventh read's leftover). Each is a
    line where the sides differ; torch's own state set back (`fork_rng`) is not the program's."""
    from porter.verify.rng import ProgramSeeds
    from tests.deps import need

    numpy = need("numpy")

    def program(rng_seed: int, state_seed: int, cuda_seed: int) -> tuple[list[dict], torch.Tensor, torch.Tensor]:
        torch.manual_seed(state_seed)
        state = torch.get_rng_state()
        torch.manual_seed(0)  # porter's own, before the program
        watch = ProgramSeeds(str(tmp_path))
        watch.install()
        try:
            drawn = torch.from_numpy(numpy.random.default_rng(rng_seed).random(4))
            torch.set_rng_state(state)
            with torch.random.fork_rng():
                torch.rand(2)
            made = torch.rand(4)
            torch.cuda.manual_seed(cuda_seed)
        finally:
            watch.uninstall()
        return watch.calls, drawn, made

    ref_calls, ref_np, ref_t = program(1, 5, 7)
    assert [c["call"] for c in ref_calls] == [
        "numpy.random.default_rng",
        "torch.set_rng_state",
        "torch.cuda.manual_seed",
    ], ref_calls
    _, np2, _ = program(2, 5, 7)
    _, _, t6 = program(1, 6, 7)
    for other, ref_draws in ((np2, ref_np), (t6, ref_t)):  # the oracle: the draws differ
        with pytest.raises(AssertionError):
            torch.testing.assert_close(other, ref_draws)

    def with_seeds(path, calls, label=None):
        t = make_trace(path, [2.0, 1.8], **({"label": label} if label else {}))
        t.manifest["program_seeds"] = calls
        return read_trace(write_trace(path, t.manifest, {k: t.tensors[k] for k in t.tensors}))

    ref = with_seeds(tmp_path / "r.safetensors", ref_calls)
    for seeds, said in (
        ((1, 5, 7), None),
        ((2, 5, 7), "seeds numpy's default_rng Generators otherwise"),
        ((1, 6, 7), "seeds torch otherwise"),
        ((1, 5, 8), "device seedings are not compared: reference torch.cuda.manual_seed(7)"),
    ):
        r = compare_traces(ref, with_seeds(tmp_path / "p.safetensors", program(*seeds)[0], PORT))
        assert r.verdict == "pass", r.reasons
        lines = [w for w in r.warnings if "otherwise on the two sides" in w or "device seedings" in w]
        assert len(lines) == (said is not None) and (said is None or said in lines[0]), (seeds, r.warnings)


def test_a_port_that_seeds_torch_after_making_its_model_passes_with_that_said(tmp_path):
    """Porter seeds both sides before the program starts, so a port that calls
    `torch.manual_seed(0)` after making its model drew the reference's weights and passed,
    unsaid (twenty-sixth read): run alone its weights are not the reference's. The program's
    seedings are watched (`rng.ProgramSeeds`) and a line says where they differ."""
    from porter.verify.rng import ProgramSeeds

    def program(seed_first: bool, porter_seed: int | None) -> tuple[list[dict], torch.Tensor]:
        if porter_seed is not None:
            torch.manual_seed(porter_seed)  # porter's own, before the program
        watch = ProgramSeeds(str(tmp_path))
        watch.install()
        try:
            if seed_first:
                torch.manual_seed(0)
            weight = torch.nn.Linear(4, 4).weight.detach().clone()
            if not seed_first:
                torch.manual_seed(0)
        finally:
            watch.uninstall()
        return watch.calls, weight

    (ref_calls, ref_w), (port_calls, port_w) = program(True, 0), program(False, 0)  # porter --seed 0
    torch.testing.assert_close(port_w, ref_w)  # under porter: the same weights
    with pytest.raises(AssertionError):  # the oracle: run alone (another porter seed), they differ
        torch.testing.assert_close(program(False, 8)[1], ref_w)
    assert [(c["seed"], c["drawn"]) for c in ref_calls] == [(0, False)]
    assert [(c["seed"], c["drawn"]) for c in port_calls] == [(0, True)]

    def with_seeds(path, calls, label=None):
        t = make_trace(path, [2.0, 1.8], **({"label": label} if label else {}))
        t.manifest["program_seeds"] = calls
        return read_trace(write_trace(path, t.manifest, {k: t.tensors[k] for k in t.tensors}))

    ref = with_seeds(tmp_path / "r.safetensors", ref_calls)
    for calls, said in [(ref_calls, False), (port_calls, True)]:
        r = compare_traces(ref, with_seeds(tmp_path / "p.safetensors", calls, PORT))
        assert r.verdict == "pass", r.reasons
        lines = [w for w in r.warnings if "seeds torch otherwise" in w]
        assert bool(lines) == said, r.warnings
    assert "port torch.manual_seed(0) at ? after drawing from the generator" in lines[0], lines


@pytest.mark.parametrize("kind", ["int64", "bool"])
def test_three_or_more_integer_moves_that_keep_a_block_s_place_weighted_sum_fail(tmp_path, kind):
    """Indices moved +1, -2, +1 in a row (or flags 1, 0, 0, 1 made 0, 1, 1, 0) inside one block of
    64, off the sample: the block's sum, absolute sum and place-weighted sum (weights 1, 2, ...)
    all hold, and the port passed where assert_close fails (twenty-seventh read). The fourth
    row's hashed weights move; a faithful port passes."""
    from porter.verify.recorder import block_sums, tensor_stats

    g = torch.Generator().manual_seed(13)
    ref_out = torch.randint(10, 1000, (4096,), generator=g)
    i = 140  # block 2 (128 .. 191), places 140 .. 143 off the strided sample
    if kind == "bool":
        ref_out = ref_out > 500
        ref_out[i : i + 4] = torch.tensor([True, False, False, True])
    moved = ref_out.clone()
    if kind == "bool":
        moved[i : i + 4] = torch.tensor([False, True, True, False])
    else:
        moved[i : i + 3] += torch.tensor([1, -2, 1])
    with pytest.raises(AssertionError):  # the oracle: assert_close's defaults (exact)
        torch.testing.assert_close(moved, ref_out)
    assert torch.equal(block_sums(moved, 64)[:3], block_sums(ref_out, 64)[:3])  # the three rows hold

    def with_output(path, out, label=None):
        t = make_trace(path, [2.0, 1.8], **({"label": label} if label else {}))
        t.tensors["m0.0.stats"], t.tensors["m0.0.sample"] = tensor_stats(out, 64)
        entry = t.manifest["modules"][0]["outputs"][0]
        entry.update(shape=[4096], dtype=str(out.dtype).removeprefix("torch."), blocks="m0.0.blocks")
        t.tensors["m0.0.blocks"] = block_sums(out, 64)
        return read_trace(write_trace(path, t.manifest, {k: t.tensors[k] for k in t.tensors}))

    ref = with_output(tmp_path / "r.safetensors", ref_out)
    for port, verdict in [(ref_out.clone(), "pass"), (moved, "fail")]:
        r = compare_traces(ref, with_output(tmp_path / "p.safetensors", port, PORT))
        assert r.verdict == verdict, r.reasons
    assert "block sums" in r.modules[0]["stats_differ"], r.modules


def test_a_generator_the_cuda_shim_makes_on_the_cpu_pickles(monkeypatch):
    """The shim's `torch.Generator(device="cuda")` is a class local to `generators_on_cpu`:
    pickling one (`torch.save` of a sampler's generator) raised "Can't pickle local object"
    (twenty-seventh read). It pickles as torch's own Generator, its state kept."""
    import pickle

    from porter.verify.shim import generators_on_cpu

    monkeypatch.setattr(torch, "Generator", torch.Generator)  # restored after the test
    generators_on_cpu({"cuda"})
    gen = torch.Generator(device="cuda")
    gen.manual_seed(9)
    back = pickle.loads(pickle.dumps(gen))
    assert torch.equal(back.get_state(), gen.get_state()) and back.device.type == "cpu"


def _seeded_program(root: str, family: str, porter_seed: int, late: bool, drop: bool = False):
    """A program's draw from one generator and its own seeding of it (before the draw, after it,
    or none), under porter's seeding and `rng.ProgramSeeds`: the seedings watched, the draw."""
    import random

    import numpy

    from porter.verify.launch import seed_everything
    from porter.verify.rng import ProgramSeeds

    seed_everything(porter_seed)
    watch = ProgramSeeds(root)
    watch.install()
    try:
        gen = torch.Generator() if family == "generator" else None
        draw = {
            "numpy": lambda: torch.tensor(numpy.random.rand(4)),
            "random": lambda: torch.tensor([random.random() for _ in range(4)]),
            "generator": lambda: torch.rand(4, generator=gen),
            "default": lambda: torch.rand(4),
        }[family]
        seed = {
            "numpy": lambda: numpy.random.seed(0),
            "random": lambda: random.seed(0),
            "generator": lambda: gen.manual_seed(5),
            "default": lambda: torch.random.default_generator.manual_seed(5),
        }[family]
        if not late and not drop:
            seed()
        drawn = draw()
        if late and not drop:
            seed()
    finally:
        watch.uninstall()
    return watch.finish(), drawn


@pytest.mark.parametrize("family", ["numpy", "random", "generator", "default"])
def test_a_port_that_moves_or_drops_a_numpy_random_or_generator_seeding_is_said(tmp_path, family):
    """Only `torch.manual_seed` was watched (twenty-sixth read): a port that moved
    `numpy.random.seed`, `random.seed` or a `torch.Generator`'s seeding after its first draw,
    or dropped `torch.random.default_generator.manual_seed`, passed unsaid under porter's own
    seeding. Each is said now (the default generator's by its seed only: where, not known)."""
    root = str(tmp_path)
    ref_calls, ref_draw = _seeded_program(root, family, late=False, porter_seed=0)
    kinds = {"dropped": {"late": False, "drop": True}, "moved": {"late": True}}
    if family == "default":  # where it is made is not known: only a dropped one is said
        del kinds["moved"]
    ports = {how: _seeded_program(root, family, porter_seed=0, **kind) for how, kind in kinds.items()}
    for kind in kinds.values():
        with pytest.raises(AssertionError):  # the oracle: run alone (another porter seed), its draw differs
            torch.testing.assert_close(_seeded_program(root, family, porter_seed=8, **kind)[1], ref_draw)
    torch.testing.assert_close(_seeded_program(root, family, late=False, porter_seed=8)[1], ref_draw)

    def with_seeds(path, calls, label=None):
        t = make_trace(path, [2.0, 1.8], **({"label": label} if label else {}))
        t.manifest["program_seeds"] = calls
        return read_trace(write_trace(path, t.manifest, {k: t.tensors[k] for k in t.tensors}))

    ref = with_seeds(tmp_path / "r.safetensors", ref_calls)
    same = compare_traces(ref, with_seeds(tmp_path / "p.safetensors", ref_calls, PORT))
    assert not [w for w in same.warnings if "otherwise on the two sides" in w], same.warnings
    for how, (calls, _) in ports.items():
        r = compare_traces(ref, with_seeds(tmp_path / "p.safetensors", calls, PORT))
        lines = [w for w in r.warnings if "otherwise on the two sides" in w]
        assert len(lines) == 1, (how, r.warnings)
        assert ("port none" in lines[0]) == (how == "dropped"), lines


def test_a_device_seeding_is_kept_not_compared_and_torch_s_own_not_counted(tmp_path):
    """`torch.manual_seed` seeds CUDA through `torch.cuda.manual_seed_all`: that inner call is
    not the program's (not kept); the program's own `torch.cuda.manual_seed` is kept, and a
    port that seeds its device through its own API (not watched) is not told it differs.
    `random.seed()` with no seed (from the clock) is kept as seeded by None; a watched
    Generator pickles (its class is local to the watch)."""
    import pickle
    import random

    from porter.verify.rng import ProgramSeeds

    watch = ProgramSeeds(str(tmp_path))
    watch.install()
    try:
        torch.manual_seed(3)
        torch.cuda.manual_seed(3)
        random.seed()  # from the clock: no seed to keep, and no TypeError
        gen = torch.Generator().manual_seed(4)
        back = pickle.loads(pickle.dumps(gen))  # as `torch.save` of a sampler's state pickles it
        assert torch.equal(back.get_state(), gen.get_state())
    finally:
        watch.uninstall()
    calls = watch.finish()
    assert [(c["call"], c["seed"]) for c in calls[:2]] == [("torch.manual_seed", 3), ("torch.cuda.manual_seed", 3)]
    assert [(c["call"], c["seed"]) for c in calls[2:]] == [("random.seed", None), ("torch.Generator.manual_seed", 4)]
    ref = make_trace(tmp_path / "r.safetensors", [2.0, 1.8])
    port = make_trace(tmp_path / "p.safetensors", [2.0, 1.8], label=PORT)
    ref.manifest["program_seeds"], port.manifest["program_seeds"] = calls, calls[:1] + calls[2:]
    assert not [w for w in compare_traces(ref, port).warnings if "otherwise on the two sides" in w]


def test_an_output_the_port_holds_in_another_dtype_is_said_and_its_values_decide(tmp_path):
    """A port that turned a float64 buffer into float32 (values that agree within the tolerance)
    passed with the change said nowhere: the module rows compared values only (twenty-third
    read). The verdict stays the values'; one line now names the dtype change."""
    ref = make_trace(tmp_path / "r.safetensors", [2.0, 1.8])
    port = make_trace(tmp_path / "p.safetensors", [2.0, 1.8], label=PORT)
    ref.manifest["modules"][0]["outputs"][0]["dtype"] = "float64"
    r = compare_traces(ref, port)
    assert r.verdict == "pass"
    said = [x for x in r.reasons if "another dtype" in x]
    assert said == [
        "1 module output(s) or buffer(s) have another dtype in the port (first: fc: reference float64, "
        "ported float32): compared by value at the tolerance, so the change passes where its values agree; "
        "where the port did not mean to change it, restore the dtype"
    ]
    plain = make_trace(tmp_path / "q.safetensors", [2.0, 1.8])
    r = compare_traces(plain, port)
    assert r.verdict == "pass" and not any("another dtype" in x for x in r.reasons)


def test_outputs_the_port_s_autocast_made_are_left_to_the_precision_line_a_real_change_still_said(tmp_path):
    """A port that added bfloat16 autocast changes every output's dtype: the dtype line said so
    beside the precision line that already does, and advised "restore the dtype" (twenty-third
    read). It now leaves out outputs in the dtype the port's autocast makes, and still names a
    float64 buffer the port made float32."""
    from porter.verify.recorder import tensor_stats

    traces = []
    for name, buffer_dtype in (("r", "float64"), ("p", "float32")):
        t = make_trace(tmp_path / f"{name}.safetensors", [2.0, 1.8], label=PORT if name == "p" else None)
        t.tensors["b0.stats"], t.tensors["b0.sample"] = tensor_stats(torch.linspace(0, 1, 8), 64)
        out = {"shape": [8], "dtype": buffer_dtype, "stats": "b0.stats", "sample": "b0.sample"}
        t.manifest["buffers"] = [{"key": "bn.running_mean", "type": "buffer", "outputs": [out]}]
        traces.append(t)
    ref, port = traces
    port.manifest["precision"] = {"regime": "bfloat16", "autocast_dtypes": ["bfloat16"]}
    port.manifest["modules"][0]["outputs"][0]["dtype"] = "bfloat16"
    res = compare_traces(ref, port)
    assert res.verdict == "pass", res.reasons
    assert any("other precision regimes (reference float32, port bfloat16)" in w for w in res.warnings)
    said = [w for w in res.warnings if "another dtype" in w]
    assert said == [
        "1 module output(s) or buffer(s) have another dtype in the port (first: bn.running_mean: reference "
        "float64, ported float32): compared by value at the tolerance, so the change passes where its values "
        "agree; where the port did not mean to change it, restore the dtype"
    ]
    out["dtype"] = "float64"  # the port's buffer as the reference's: autocast explains the rest
    assert not any("another dtype" in w for w in compare_traces(ref, port).warnings)
    out["dtype"] = "bfloat16"  # autocast never casts float64: the port's own change
    said = [w for w in compare_traces(ref, port).warnings if "another dtype" in w]
    assert len(said) == 1 and "(first: bn.running_mean: reference float64, ported bfloat16)" in said[0], said
    ref.manifest["precision"] = {"regime": "bfloat16", "autocast_dtypes": ["bfloat16"]}  # fc outside it there
    said = [w for w in compare_traces(ref, port).warnings if "another dtype" in w]
    assert len(said) == 1 and "(first: fc: reference float32, ported bfloat16)" in said[0], said


def test_a_hand_cast_beside_the_port_s_autocast_is_said_with_the_precision_line(tmp_path):
    """Outputs in the dtype the port's added autocast makes are left to the precision line, even
    where the port also cast them by hand (twenty-third read's leftover): the line cannot tell
    the two apart. The port's own casts to that dtype, recorded by line, are now said beside it,
    where the reference does not make as many."""
    ref = make_trace(tmp_path / "r.safetensors", [2.0, 1.8])
    port = make_trace(tmp_path / "p.safetensors", [2.0, 1.8], label=PORT)
    port.manifest["precision"] = {"regime": "bfloat16", "autocast_dtypes": ["bfloat16"]}
    port.manifest["modules"][0]["outputs"][0]["dtype"] = "bfloat16"
    assert not any("by hand" in w for w in compare_traces(ref, port).warnings)  # autocast alone
    row = {"call": "cast to bfloat16", "location": "train.py:12", "count": 2, "per_step": 2.0}
    port.manifest["perf"]["syncs"] = {"host_syncs": [], "dynamic_shape_ops": [], "casts": [row]}
    res = compare_traces(ref, port)
    assert res.verdict == "pass", res.reasons
    assert any("other precision regimes (reference float32, port bfloat16)" in w for w in res.warnings)
    said = [w for w in res.warnings if "by hand" in w]
    assert said == [
        "the port also casts to bfloat16 by hand (train.py:12), the dtype its added autocast makes: 1 module "
        "output(s) it holds in that dtype are left to the precision line, which cannot tell these casts from "
        "autocast's; where the port did not mean to cast, remove the cast"
    ], res.warnings
    ref.manifest["perf"]["syncs"] = {"host_syncs": [], "dynamic_shape_ops": [], "casts": [dict(row, per_step=2.0)]}
    assert not any("by hand" in w for w in compare_traces(ref, port).warnings)  # the reference's own casts
    ref.manifest["perf"].pop("syncs")
    row["call"] = "cast to float16"  # not the dtype autocast made
    assert not any("by hand" in w for w in compare_traces(ref, port).warnings)


def _stopped_early(tmp_path, name, error, label=PORT):
    """A side that stopped before its first optimizer step, as `trace record` writes it: no step,
    no module, no parameter, its device lists empty, and its error if it raised."""
    t = make_trace(tmp_path / f"{name}.safetensors", [], label=label)
    t.manifest.update(modules=[], parameters=[], devices={"parameters": {}, "losses": []}, steps_recorded=0)
    t.manifest.update(stopped="error" if error else "script ended", error=error)
    return _recorded_now(t)


def _recorded_now(t):
    """What a trace of this porter holds beside make_trace's: its random-number source, and a
    reference's noise floor (or why not)."""
    t.manifest["rng"] = {"redirected": True, "device_draws": None, "generator": "the CPU's default generator"}
    if t.manifest["steps"] and t.manifest["side"]["kind"] == "cpu":
        t.manifest["noise_floor"] = {"measured": False, "why": "recorded with --no-noise-floor"}
    return t


@pytest.mark.parametrize(
    "error, said",
    [
        (
            {"type": "RuntimeError", "message": "boom\nmore", "location": "train.py:7"},
            "ported side stopped before its first optimizer step: RuntimeError at train.py:7: boom",
        ),
        (
            {"type": "SystemExit", "message": "3", "location": "train.py:9"},
            "ported side stopped before its first optimizer step: exit status 3 (sys.exit at train.py:9)",
        ),
        (None, "the port stopped before its first optimizer step (script ended): no tensor of it was recorded"),
    ],
)
def test_a_side_that_stopped_before_its_first_step_is_said_to_have_stopped_there(tmp_path, error, said):
    """A port whose program raised (or exited) before its first optimizer step: its ERROR also
    said "where the port's tensors were made is not recorded (a trace from an older porter?)"
    and, under the loss curves, "the curves do not part within tolerance" (twenty-second read's
    leftover). The reasons say which side stopped, where, and how; the curves line says that no
    step was compared."""
    ref = _recorded_now(make_trace(tmp_path / "r.safetensors", [2.0, 1.8]))
    res = compare_traces(ref, _stopped_early(tmp_path, "p", error))
    assert res.verdict == "error", res.reasons
    assert any(r.startswith(said) for r in res.reasons), res.reasons
    text = to_markdown(res)
    assert "older porter" not in text and "the curves do not part" not in text, text
    assert "the reference recorded 2 step(s), the port 0: no step to compare" in text
    # the other way round: the reference stopped, and its noise floor is not an older porter's
    res = compare_traces(
        _stopped_early(tmp_path, "q", error, label=None), _recorded_now(make_trace(tmp_path / "s", [2.0], label=PORT))
    )
    assert res.verdict == "error" and "older porter" not in to_markdown(res), to_markdown(res)
    assert "the reference recorded 0 step(s), the port 1: no step to compare" in to_markdown(res)
    # a reference that called os._exit(3) before its first step (no exception to record)
    early = _stopped_early(tmp_path, "o", None, label=None)
    early.manifest["stopped"] = "the program called os._exit(3)"
    res = compare_traces(early, _recorded_now(make_trace(tmp_path / "t", [2.0], label=PORT)))
    assert res.verdict == "error" and any("(the program called os._exit(3))" in r for r in res.reasons), res.reasons


def _modules_called(tmp_path, name, calls, label=PORT):
    """A trace whose modules `calls` ((key, output), in call order) each gave one output."""
    from porter.verify.recorder import tensor_stats

    t = make_trace(tmp_path / f"{name}.safetensors", [2.0, 1.8], label=label)
    t.manifest["modules"] = []
    for i, (key, x) in enumerate(calls):
        t.tensors[f"m{i}.0.stats"], t.tensors[f"m{i}.0.sample"] = tensor_stats(x, 64)
        out = {"shape": list(x.shape), "dtype": "float32", "stats": f"m{i}.0.stats", "sample": f"m{i}.0.sample"}
        t.manifest["modules"].append({"key": key, "type": "Linear", "outputs": [out]})
    return t


def test_the_first_diverging_module_is_the_first_the_port_called_and_the_reference_s_first_is_said(tmp_path):
    """A port that runs a ModuleDict's modules sorted (`d.a` then `d.z`) where the original runs
    them in insertion order (`d.z` then `d.a`), each feeding the next: both outputs differ, and
    the first diverging module was the reference's first, `d.z`, which the port called after
    `d.a` had already departed (twenty-second read's leftover). It is now the first the port
    called, and the reason says the reference's order would name `d.z`."""
    x = torch.linspace(-1, 1, 32)
    ref = _modules_called(tmp_path, "r", [("d.z", x * 2), ("d.a", x * 2 + 1), ("head", x)], label=None)
    port = _modules_called(tmp_path, "p", [("d.a", x + 1), ("d.z", (x + 1) * 2), ("head", x)])
    res = compare_traces(ref, port)
    assert res.verdict == "fail" and res.first_divergence["module"] == "d.a", res.first_divergence
    line = next(r for r in res.reasons if r.startswith("first diverging module"))
    assert line.startswith("first diverging module at step 1, in the port's call order: d.a: "), line
    assert "in the reference's order d.z differs first" in line, line
    assert "first diverging module (the first the port called of those that differ): d.a" in to_markdown(res)
    # the same order on both sides: named as before, one module
    port = _modules_called(tmp_path, "q", [("d.z", x * 2), ("d.a", x * 2 + 1.5), ("head", x)])
    res = compare_traces(ref, port)
    assert res.first_divergence["module"] == "d.a" and "reference_first" not in res.first_divergence
    assert any(r.startswith("first diverging module at step 1: d.a: ") for r in res.reasons), res.reasons
    # a module the port never called, before one it called that differs: the one not called
    port = _modules_called(tmp_path, "s", [("d.a", x * 2 + 1.5), ("head", x)])
    assert compare_traces(ref, port).first_divergence["module"] == "d.z"


def test_the_modules_of_a_port_that_stopped_before_its_first_step_are_not_listed_as_its_own(tmp_path):
    """A port that raised inside its first forward (a Llama under bfloat16 autocast on XLA:CPU,
    SDPA's query float32 and value bfloat16) recorded 6 module outputs, each named as a model of
    its own (`<LlamaRMSNorm>`, `<Linear 2>`: modules are named at the end of step 1), and the
    verdict listed 5 as "only the port recorded" (twenty-third read). It now says why they are
    not compared."""
    ref = _recorded_now(make_trace(tmp_path / "r.safetensors", [2.0, 1.8]))
    port = _stopped_early(tmp_path, "p", {"type": "RuntimeError", "message": "dtype", "location": None})
    port.manifest["modules"] = [{"key": "<Linear 2>", "type": "Linear", "outputs": []}]
    res = compare_traces(ref, port)
    assert res.verdict == "error" and not any("only the port recorded" in w for w in res.warnings), res.warnings
    said = "the port stopped before its first optimizer step: its 1 module output(s) could not be named"
    assert any(w.startswith(said) for w in res.warnings), res.warnings


def test_the_port_s_region_lookup_reads_no_shape_of_an_output_porter_does_not_sample():
    """The port's regions are looked up by an output's shape (`Recorder._regions`); a nested
    tensor's shape raises (`NestedTensorImpl doesn't support sizes`), which inside the hook would
    raise into the program's forward: such an output gets no region (and is noted, as before)."""
    from types import SimpleNamespace

    from porter.verify.recorder import Recorder

    rec = Recorder(
        1, SimpleNamespace(kind="cpu"), ".", ops=False, syncs=False, reference_shapes=[("m", [[2, 3]], "Linear")]
    )
    nested = torch.nested.nested_tensor([torch.ones(2, 3), torch.ones(4, 3)])
    assert rec._regions(torch.nn.Linear(1, 1), 1, [nested]) == [{}]
    assert rec._regions(torch.nn.Linear(1, 1), 1, [torch.ones(2, 5)]) == [{(2, 3): {"m"}}]


def test_a_failing_port_that_ran_compiled_code_is_told_its_compiled_draws_are_not_redirected(tmp_path):
    """A faithful port compiled with "openxla" whose model holds a Dropout failed at it ("max
    abs error 2.98") with nothing said, where `--eager` passes: porter's redirect of the
    device's draws is a Python mode, which a compiled region does not call per operator
    (twenty-fourth read's leftover; `parity-check` of that program: docs/reads/43-tleft-attempts.md).
    A failing side that compiled frames and drew on its device is said to have draws porter
    did not redirect; not where it passes, compiled nothing, drew nothing (a compiled port with
    GELU for ReLU), or kept its device's generator (--device-rng)."""
    said = "whose random draws porter does not redirect"
    ref = make_trace(tmp_path / "r.st", [2.0, 1.8])
    for losses, frames, redirected, draws, says in (
        ([2.0, 1.7], 2, True, 2, True),
        ([2.0, 1.8], 2, True, 2, False),
        ([2.0, 1.7], 0, True, 2, False),
        ([2.0, 1.7], None, True, 2, False),
        ([2.0, 1.7], 2, True, 0, False),
        ([2.0, 1.7], 2, False, 2, False),
    ):
        port = make_trace(tmp_path / "p.st", losses, label=PORT)
        port.manifest.update(compiled_frames=frames, rng={"redirected": redirected, "device_draws": draws})
        res = compare_traces(ref, port)
        lines = [r for r in res.reasons if said in r]
        assert res.verdict == ("fail" if losses[1] != 1.8 else "pass") and bool(lines) is says, res.reasons
    port.manifest.update(compiled_frames=2, rng={"redirected": True, "device_draws": 2})
    [line] = [r for r in compare_traces(ref, port).reasons if said in r]
    assert line.startswith("the ported side drew 2 time(s) on its device and ran 2 torch.compile'd frame(s)")
    assert "rerun with --eager" in line


def test_a_failing_comparison_says_a_side_whose_hardware_ran_float32_products_with_fewer_bits(tmp_path):
    """A reference recorded on a CUDA GPU with TF32 allowed (`set_float32_matmul_precision("high")`,
    cuDNN's default for convolutions), or a port on a TPU under torch_xla's default
    mat_mul_precision (one bfloat16 pass), rounds float32 products to 10 or 8 mantissa bits,
    about 1e-3 relative, past float32's 1e-4: a faithful port failed with nothing said
    (twenty-sixth read). The trace now records the settings; a failure names them, not where
    the side was emulated or the CUDA shim, nor where the settings are full float32."""
    from porter.verify import recorder

    said = "may round float32 products to fewer mantissa bits"
    before = torch.backends.fp32_precision
    try:
        torch.backends.fp32_precision = "tf32"
        assert recorder.matmul_settings("cpu")["cuda_matmul"] == "tf32"
    finally:
        torch.backends.fp32_precision = before
    for role, kind, hardware, settings, losses, says in (
        ("reference", "cuda", True, {"cuda_matmul": "tf32", "cudnn_conv": "ieee"}, [2.0, 1.7], "TF32 matmuls"),
        ("reference", "cuda", True, {"cuda_matmul": "ieee", "cudnn_conv": "tf32"}, [2.0, 1.7], "TF32 convolutions"),
        ("reference", "cuda", True, {"cuda_matmul": "ieee", "cudnn_conv": "tf32"}, [2.0, 1.7], None),  # no Conv
        ("reference", "cuda", True, {"cuda_matmul": "ieee", "cudnn_conv": "ieee"}, [2.0, 1.7], None),
        ("reference", "cuda", True, {"cuda_matmul": "tf32"}, [2.0, 1.8], None),
        ("reference", "cpu", False, {"cuda_matmul": "tf32"}, [2.0, 1.7], None),
        ("ported", "xla", True, {"xla_mat_mul": "default"}, [2.0, 1.7], "mat_mul_precision"),
        ("ported", "xla", False, {"xla_mat_mul": "default"}, [2.0, 1.7], None),
        ("ported", "xla", True, {"xla_mat_mul": "highest"}, [2.0, 1.7], None),
    ):
        ref = make_trace(tmp_path / "r.st", [2.0, 1.8])
        port = make_trace(tmp_path / "p.st", losses, label=PORT)
        if says == "TF32 convolutions":  # both sides recorded a convolution
            for t in (ref, port):
                t.manifest["modules"][0]["type"] = "Conv2d"
        side = ref if role == "reference" else port
        side.manifest["side"].update(kind=kind, hardware=hardware, emulated=not hardware)
        side.manifest["precision"] = {"regime": "float32", "matmul": settings}
        res = compare_traces(ref, port)
        lines = [r for r in res.reasons if said in r]
        assert res.verdict == ("fail" if losses[1] != 1.8 else "pass"), res.reasons
        assert (lines == []) if says is None else (len(lines) == 1 and says in lines[0]), res.reasons
        assert says is None or lines[0].startswith(f"the {role} side ran on hardware")
    for field, value in (
        ("precision", {"regime": "float32", "matmul": {"cuda_matmul": ["tf32"]}}),
        ("model_nograd_calls", "2"),
    ):  # refused when read, the field named, not a traceback in the comparison
        with pytest.raises(TraceError, match=field):
            read_trace(write_trace(tmp_path / "bad.st", {**port.manifest, field: value}, port.tensors))


def test_the_compiled_draws_line_is_said_where_the_draws_were_in_compiled_frames_only(tmp_path):
    """The line above was said of every failing side that compiled a frame and drew on its
    device: an unfaithful compiled port (GELU for ReLU) that drew in its eager loop, not in its
    compiled model, was pointed at draws that were the CPU's (twenty-fifth read's leftover). The
    trace now counts the draws dynamo traced (`compiled_draws`): said where they are more than
    0 (a faithful port whose Dropout was compiled), not where the draws were all eager."""
    said = "whose random draws porter does not redirect"
    ref = make_trace(tmp_path / "r.st", [2.0, 1.8])
    for compiled, says in ((2, True), (0, False)):
        port = make_trace(tmp_path / "p.st", [2.0, 1.7], label=PORT)
        port.manifest.update(compiled_frames=1, rng={"redirected": True, "device_draws": 2, "compiled_draws": compiled})
        res = compare_traces(ref, port)
        lines = [r for r in res.reasons if said in r]
        assert res.verdict == "fail" and bool(lines) is says, res.reasons
    assert lines == [] and any("first diverging" in r or "loss" in r for r in res.reasons), res.reasons
    port.manifest["rng"]["compiled_draws"] = 2
    [line] = [r for r in compare_traces(ref, port).reasons if said in r]
    assert line.startswith("the ported side drew 2 time(s) on its device inside torch.compile'd frame(s)")


def test_the_redirect_mode_counts_the_draws_dynamo_traces_apart_from_eager_ones():
    """`compiled_draws`: a draw the mode meets while dynamo traces it (a compiled frame's) is
    counted apart; the same draw in eager code is not (the evidence `causes.compiled_draws`
    reads, twenty-fifth read)."""
    from porter.verify.rng import DeviceRngMode

    torch._dynamo.reset()
    mode = DeviceRngMode(".")

    def draw(x):
        mode._seen("F.dropout", x.device)
        return x + 1

    torch.compile(draw, backend="eager")(torch.ones(2))
    draw(torch.ones(2))
    counted = mode.to_dict()
    assert counted["device_draws"] == 2 and counted["compiled_draws"] == 1, counted


def test_each_of_ten_calls_of_one_type_gets_its_own_region_behind_three_added_modules():
    """Ten Linears on ten lengths, the port padded to 12 rows and calling three modules more
    before them (a cast, a padding, a mask): at 4 regions a call number, the fifth and sixth
    call's own regions were past both the bound and the window of nearest calls, and those two
    were "not compared" (twenty-fourth read's leftover; `parity-check` of this program:
    docs/reads/43-tleft-attempts.md). Every call now has its own region."""
    from types import SimpleNamespace

    from porter.verify.recorder import Recorder

    reference = [(f"ls.{i}", [[i + 1, 8]], "Linear") for i in range(10)] + [("(model)", [[]], "Ten")]
    rec = Recorder(1, SimpleNamespace(kind="cpu"), ".", ops=False, syncs=False, reference_shapes=reference)
    port_output = torch.ones(12, 8)
    for _ in range(3):
        rec._regions(torch.nn.Identity(), 1, [port_output])
        rec.calls.append((0, 1, []))
    missing = []
    for i in range(10):
        [regions] = rec._regions(torch.nn.Linear(8, 8), 1, [port_output])
        rec.calls.append((0, 1, []))
        if f"ls.{i}" not in regions.get((i + 1, 8), set()):
            missing.append(f"ls.{i}")
    assert missing == [], missing


@pytest.mark.parametrize("layout", ["this torch's", "another"])
def test_the_step_s_keyword_data_is_read_from_torch_s_call_frame_or_said_unread(tmp_path, monkeypatch, layout):
    """The keyword arguments of a model's call are read from torch's `Module._call_impl` frame
    (global hooks get none); on a torch laid out otherwise the step's data fell back to the
    first positional tensors (the first submodule's input, the labels lost) with nothing said
    (twenty-fourth trace read's leftover). Another layout is simulated by another file name."""
    from types import SimpleNamespace

    from porter.verify import recorder as R

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 2)

        def forward(self, x, labels=None):
            return (self.fc(x) - labels).pow(2).mean()

    if layout == "another":
        monkeypatch.setattr(R, "_MODULE_PY", "torch/nn/modules/module_v3.py")
    rec = R.Recorder(1, SimpleNamespace(kind="cpu"), str(tmp_path), ops=False, syncs=False)
    model = Model()
    handle = torch.nn.modules.module.register_module_forward_pre_hook(rec.on_input)
    try:
        model(x=torch.ones(3, 4), labels=torch.zeros(3, 2))
    finally:
        handle.remove()
    [(module, outputs)] = rec.inputs
    said = [n for n in rec.notes if "keyword arguments of the model's calls could not be read" in n]
    if layout == "another":
        assert module is model.fc and len(outputs) == 1 and len(said) == 1, (module, rec.notes)
    else:
        # in the order of `forward`'s parameters, `x` then `labels` (by name before the
        # thirty-seventh read: `labels` first, so `model(x, labels)` and `model(x=x, labels=y)` parted)
        assert module is model and [o[-3] for o in outputs] == [[3, 4], [3, 2]] and not said, rec.notes


def test_traces_recorded_with_two_seeds_are_said_to_be_seeded_apart_not_from_one_generator(tmp_path):
    """`trace record --seed 0` against `--seed 1` of a program that does not seed itself: the
    weights differed "though both sides drew from the same seeded CPU generator", and the report
    said both sides were seeded the same way (twenty-fourth read). The seeds are said."""
    ref = _recorded_now(make_trace(tmp_path / "r.safetensors", [1.0, 0.9]))
    port = _recorded_now(make_trace(tmp_path / "p.safetensors", [1.0, 0.9], label=PORT))
    ref.manifest["seed"], port.manifest["seed"] = 0, 1
    ref.tensors["p0.sample"] = torch.linspace(0, 2, 16)  # the weights the other seed drew
    ref.tensors["p0.stats"] = _stats(ref.tensors["p0.sample"])
    res = compare_traces(ref, port)
    said = "\n".join(res.reasons)
    assert res.verdict == "fail" and "did not start from the same weights" in said, said
    assert "recorded with different seeds (reference --seed 0, ported --seed 1)" in said, said
    assert "same seeded CPU generator" not in said, said
    assert "reference --seed 0, ported --seed 1" in to_markdown(res)
    port.manifest["seed"] = 0
    assert "different seeds" not in "\n".join(compare_traces(ref, port).reasons)


def test_traces_recorded_by_other_porter_code_are_said_only_where_both_say_which(tmp_path):
    """`porter` is 0.1.0 in every build (porter/__init__.py), so a trace could not tell which
    porter made it (twenty-fourth trace read's leftover). A trace holds the digest of porter's
    `.py` files; two traces whose digests differ are said to come from other porter code, and
    nothing is said where either lacks one (it cannot be told)."""
    import shutil
    from pathlib import Path

    import porter
    from porter.verify.tracefile import source_digest

    copy = tmp_path / "porter"
    shutil.copytree(Path(porter.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = source_digest(copy)
    assert before == source_digest(Path(porter.__file__).parent) and re.fullmatch("[0-9a-f]{16}", before)
    (copy / "__init__.py").write_text((copy / "__init__.py").read_text() + "\n")
    after = source_digest(copy)
    assert after != before
    (copy / "__init__.py").rename(copy / "_init.py")
    assert source_digest(copy) not in (before, after)
    said = "the traces were recorded by other porter code"
    for ref_source, port_source, says in ((before, after, True), (before, before, False), (None, after, False)):
        res = compare_traces(*_sourced(tmp_path, ref_source, port_source))
        assert res.verdict == "pass" and any(said in w for w in res.warnings) is says, res.warnings
    line = next(w for w in compare_traces(*_sourced(tmp_path, before, after)).warnings if said in w)
    assert f"source {before} and {after}" in line, line


def test_a_trace_records_the_versions_of_the_libraries_the_program_imported(monkeypatch):
    """Read when the trace is written, not when the side starts: transformers is imported by
    the program (the side's `versions` never held it; twenty-fourth trace read's leftover)."""
    import sys
    from types import SimpleNamespace

    from porter.verify.devices import library_versions

    monkeypatch.setitem(sys.modules, "transformers", SimpleNamespace(__version__="4.57.1"))
    monkeypatch.setitem(sys.modules, "torch_xla", None)  # the reference's blocked runtime
    monkeypatch.setitem(sys.modules, "peft", SimpleNamespace(__version__=None))
    found = library_versions()
    assert found["transformers"] == "4.57.1" and found["torch"] == torch.__version__, found
    assert "torch_xla" not in found and "peft" not in found and found["python"] == sys.version.split()[0]


def test_a_trace_records_the_installed_libraries_whose_code_uses_torch(tmp_path, monkeypatch):
    """The recorded libraries were a fixed list of ten: a kernel library the program imported
    (flash-attn, xformers, deepspeed) was not recorded, and two traces of its other releases
    compared unsaid (twenty-fifth read). Now also each installed distribution's package whose
    modules hold torch: a fake `fake-attn` (its version from its metadata, as no `__version__`),
    not an installed package that does not use torch, nor the program's own module that does."""
    import importlib
    import sys

    from porter.verify.devices import library_versions

    for name, body, dist in (
        ("fakeattn", "import torch.nn as nn\n", "fake_attn-2.7.4"),
        ("fakeplain", "__version__ = '1.0'\n", "fakeplain-1.0"),
        ("mymodel", "import torch\n__version__ = '0.1'\n", None),
    ):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(body)
        if dist:
            info = tmp_path / f"{dist}.dist-info"
            info.mkdir()
            project, version = dist.split("-")
            (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project}\nVersion: {version}\n")
            (info / "top_level.txt").write_text(f"{name}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("fakeattn", "fakeplain", "mymodel"):
        monkeypatch.setitem(sys.modules, name, importlib.import_module(name))  # removed after the test
    found = library_versions()
    assert found.get("fakeattn") == "2.7.4" and found["torch"] == torch.__version__, found
    assert "fakeplain" not in found and "mymodel" not in found, found


def test_libraries_reached_through_another_library_are_recorded_and_those_past_the_cap_said(tmp_path, monkeypatch):
    """An installed library that uses torch only through another one (its modules hold
    `fakeattn`'s, not torch's) was not recorded, and the libraries past `MAX_FOUND_LIBRARIES`
    were dropped unsaid (twenty-fifth read's leftovers). Now the first is recorded; the program's
    `__main__` (which holds torch, and which dill holds) carries nothing; those past the cap are
    named in a note."""
    import importlib
    import sys

    from porter.verify import devices

    for name, body, dist in (
        ("fakeattn", "import torch.nn as nn\n", "fake_attn-2.7.4"),
        ("fakewrap", "import fakeattn\n", "fake_wrap-0.3.0"),
        ("fakemain", "import __main__\n", "fake_main-1.0"),
    ):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(body)
        info = tmp_path / f"{dist}.dist-info"
        info.mkdir()
        project, version = dist.split("-")
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project}\nVersion: {version}\n")
        (info / "top_level.txt").write_text(f"{name}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys.modules["__main__"], "torch", torch, raising=False)
    for name in ("fakeattn", "fakewrap", "fakemain"):
        monkeypatch.setitem(sys.modules, name, importlib.import_module(name))  # removed after the test
    found = devices.library_versions()
    assert found.get("fakewrap") == "0.3.0" and found.get("fakeattn") == "2.7.4", found
    assert "fakemain" not in found and devices.libraries_recorded() == (found, None), found
    names = sorted(devices.torch_libraries()[0])
    monkeypatch.setattr(devices, "MAX_FOUND_LIBRARIES", len(names) - 1)
    found, note = devices.libraries_recorded()
    assert (
        names[-1] not in found
        and note is not None
        and note.startswith(f"1 further imported library that uses torch ({names[-1]})")
    ), note


def test_traces_recorded_with_other_library_releases_are_said_and_do_not_decide(tmp_path):
    """The source digest covers porter's code, not the libraries': two traces recorded with
    other transformers or torch compared with nothing said (twenty-fourth trace read's
    leftover). A release that differs in a library both traces hold is said; a build tag
    (`+cu128` against `+cpu`) is not another release, and a trace written before `libraries` is
    read by its side's `versions`."""
    said = "the traces were recorded with other library versions"
    cases = (
        ({"torch": "2.9.0+cu128", "transformers": "4.57.1"}, {"torch": "2.9.0+cpu", "transformers": "4.46.0"}, True),
        ({"torch": "2.9.0+cu128", "transformers": "4.57.1"}, {"torch": "2.9.0+cpu", "transformers": "4.57.1"}, False),
        ({"torch": "2.9.0", "torch_xla": "2.9.0"}, {"torch": "2.9.0", "torch_xla": "2.8.1"}, True),
        ({"torch": "2.9.0"}, {"torch_xla": "2.8.1", "transformers": "4.46.0"}, False),  # none both hold
    )
    for ref_libs, port_libs, says in cases:
        ref, port = _sourced(tmp_path, None, None)
        ref.manifest["libraries"], port.manifest["libraries"] = ref_libs, port_libs
        res = compare_traces(ref, port)
        assert res.verdict == "pass" and any(said in w for w in res.warnings) is says, (ref_libs, res.warnings)
    line = next(w for w in _library_warnings(tmp_path, cases[0]) if said in w)
    assert "transformers 4.57.1 and 4.46.0" in line and "torch " not in line, line
    ref, port = _sourced(tmp_path, None, None)  # traces written before `libraries`: their side's versions
    ref.manifest["side"]["versions"], port.manifest["side"]["versions"] = {"torch": "2.9.0"}, {"torch": "2.13.0"}
    [line] = [w for w in compare_traces(ref, port).warnings if said in w]
    assert "torch 2.9.0 and 2.13.0" in line, line


def _library_warnings(tmp_path, case):
    ref, port = _sourced(tmp_path, None, None)
    ref.manifest["libraries"], port.manifest["libraries"] = case[0], case[1]
    return compare_traces(ref, port).warnings


def _sourced(tmp_path, ref_source, port_source):
    ref, port = make_trace(tmp_path / "r.st", [1.0, 0.5]), make_trace(tmp_path / "p.st", [1.0, 0.5], label=PORT)
    ref.manifest.update(porter="0.1.0", porter_source=ref_source)
    port.manifest.update(porter="0.1.0", porter_source=port_source)
    return ref, port


def test_porter_s_own_frames_are_told_by_one_path_with_porter_imported_through_a_link(tmp_path):
    """porter's package folder was taken three ways (`launch._OWN` resolved links,
    `probes._PORTERS` held the verify folder only, `run.package` `porter.__file__`'s): with porter
    imported through a link, `co_filename` names the link, and porter's own frames were taken for
    the program's compiled frames (twenty-fifth read's review). One path, as code names its files:
    porter's frames are left out through the link too, and a program's frame is kept."""
    import subprocess
    import sys
    from pathlib import Path

    import porter

    link = tmp_path / "linked"
    link.symlink_to(Path(porter.__file__).resolve().parents[1], target_is_directory=True)
    probe = (
        "from porter.verify import launch\n"
        "launch._frame_compiled(launch._frame_compiled.__code__, None)\n"
        "launch._frame_compiled(compile('x = 1', '/elsewhere/train.py', 'exec'), None)\n"
        "print(sorted(f[0] for f in launch._FRAMES))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        env={"PYTHONPATH": str(link), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['/elsewhere/train.py']", out.stdout


def test_the_compiled_frames_a_trace_holds_are_the_program_s_each_counted_once(monkeypatch):
    """A 3-layer model compiled with "openxla" held `compiled_frames` 159 over 2 steps: dynamo's
    count of the frames it converted, which holds each frame a graph break hands back to it,
    porter's own hooks' (whose `sys._getframe` breaks the graph) and each recompile's. The
    trace now holds the distinct frames of the program's dynamo compiled (twenty-fifth read)."""
    from types import SimpleNamespace

    from porter.verify import launch, probes

    torch._dynamo.reset()
    monkeypatch.setattr(launch, "_COMPILED", [])
    monkeypatch.setattr(launch, "_FRAMES", set(), raising=False)
    program = SimpleNamespace(compile=torch.compile)
    launch._note_compile(program)

    def step(x):
        y = x * 2
        probes.user_location(".")  # porter's code inside the compiled frame, as the recorder's hooks are
        return y + 1

    compiled = program.compile(step, backend="eager")
    for n in (2, 3, 4, 4):  # a recompile for the second shape, none after
        torch.testing.assert_close(compiled(torch.ones(n)), torch.full((n,), 3.0))
    assert launch._compiled_frames() == 2
    names = sorted(name for _, _, name in launch._FRAMES)
    assert {file for file, _, _ in launch._FRAMES} == {__file__}, launch._FRAMES
    assert names[0] == "step" and names[1].startswith("torch_dynamo_resume_in_step"), names


def test_tensors_of_a_trace_no_manifest_entry_names_are_said_and_do_not_decide(tmp_path):
    """A tensor no manifest entry names is never read: a file with one added (by hand, by
    another tool) was compared with nothing said (twenty-fifth trace read's leftover). It is
    said, naming the side and the tensors, and the verdict is the one the named tensors give;
    a trace porter wrote (its steps' losses and gradient norms too) has none."""
    from porter.verify.tracefile import unnamed_tensors

    ref = make_trace(tmp_path / "r.st", [1.0, 0.5])
    port = make_trace(tmp_path / "p.st", [1.0, 0.5], label=PORT)
    assert unnamed_tensors(ref) == [] and unnamed_tensors(port) == []
    assert not any("no manifest entry names" in w for w in compare_traces(ref, port).warnings)
    extra = {"zz.unknown": torch.randn(5), "m999.sample": torch.randn(3, 3), "rank1.m0.0.sample": torch.zeros(2)}
    edited = read_trace(write_trace(tmp_path / "e.st", port.manifest, {**port.tensors, **extra}))
    assert sorted(unnamed_tensors(edited)) == sorted(extra)
    res = compare_traces(ref, edited)
    [line] = [w for w in res.warnings if "no manifest entry names" in w]
    assert res.verdict == "pass" and line in res.reasons, res.reasons
    assert line.startswith("the ported trace holds 3 tensor(s)") and "'zz.unknown'" in line, line
    edited_ref = read_trace(write_trace(tmp_path / "er.st", ref.manifest, {**ref.tensors, "zz.unknown": torch.ones(1)}))
    res = compare_traces(edited_ref, port)
    assert res.verdict == "pass" and any(w.startswith("the reference trace holds 1") for w in res.warnings)


def _blocks_cut_before(t, blocks):
    """`recorder.block_sums` as porter before the twenty-fifth read cut a complex output: its
    real and imaginary parts in runs of `2n // blocks`, a value's parts in two blocks."""
    parts = torch.view_as_real(t).reshape(-1).double()
    per = parts.numel() // blocks
    body, tail = parts[: per * blocks].reshape(blocks, per), parts[per * blocks :]
    sums = torch.stack([body.sum(1), body.abs().sum(1)])
    sums[0, -1] += tail.sum()
    sums[1, -1] += tail.abs().sum()
    return sums


def test_a_complex_output_s_blocks_cut_by_an_older_porter_give_no_wrong_verdict_against_a_new_trace(tmp_path):
    """A trace of a porter before the twenty-fifth read cut a complex output's parts into
    blocks of `2n // blocks` (127 values, 64 blocks: 3 parts a block), a new one whole values
    (2 parts): the same output's blocks summed other values, and a faithful port failed on
    "block sums" against the older trace. Blocks cut otherwise are compared on their totals
    (which no cut changes), said beside the other porter code; a value moved by 0.1 off the
    sample still fails there, as torch.testing.assert_close says it should."""
    from porter.verify.recorder import _stored, block_sums, tensor_stats

    rtol, atol = 1e-4, 1e-5
    g = torch.Generator().manual_seed(5)
    z = torch.complex(
        torch.randn(127, generator=g, dtype=torch.float64), torch.randn(127, generator=g, dtype=torch.float64)
    )
    u = torch.rand(127, generator=g, dtype=torch.float64) * 2 - 1
    faithful, moved = z + 0.9 * u * (atol + rtol * z.abs()), z.clone()
    moved[100] += 0.1  # past the sample (the first 64 values)

    def with_output(path, out, old, label=None):
        t = make_trace(path, [2.0, 1.8], **({"label": label} if label else {}))
        stats, sample = tensor_stats(out, 64)
        sums = _blocks_cut_before(out, 64) if old else block_sums(out, 64)
        entry = _stored(t.tensors, "m0.0", stats, sample, sums, [127], "complex128")
        if old:  # (an older porter wrote no `blocks_cut`)
            entry.pop("blocks_cut", None)
        t.manifest["modules"][0]["outputs"][0] = entry
        t.manifest.update(porter="0.1.0", porter_source="0ld0ld0ld0ld0ld0" if old else "fedcba9876543210")
        return t

    assert not torch.equal(_blocks_cut_before(z, 64), block_sums(z, 64))  # the two cuts differ here
    for old_side in ("reference", "ported"):
        ref = with_output(tmp_path / "r.st", z, old_side == "reference")
        for port, close in ((faithful, True), (moved, False)):
            try:
                torch.testing.assert_close(port, z, rtol=rtol, atol=atol)
                oracle = True
            except AssertionError:
                oracle = False
            assert oracle == close
            res = compare_traces(ref, with_output(tmp_path / "p.st", port, old_side == "ported", PORT))
            assert res.verdict == ("pass" if close else "fail"), (old_side, res.reasons)
            assert any("other porter code" in w for w in res.warnings), res.warnings
            assert any("block sums cut another way" in w for w in res.warnings), res.warnings
    new = compare_traces(with_output(tmp_path / "r.st", z, False), with_output(tmp_path / "p.st", moved, False, PORT))
    assert new.verdict == "fail" and not any("cut another way" in w for w in new.warnings)


def test_blocks_cut_two_ways_are_compared_on_the_boundaries_both_cuts_share_not_only_their_totals(tmp_path):
    """300 complex values in 64 blocks: 9 parts a block as porters before the twenty-fifth read
    cut them, 8 as now; compared on their totals only, a value moved by 0.03 off the sample
    passed (11 of 200 such moves, seeds 701, 702). Every 72 parts (the lcm: 36 values) both
    cuts have a boundary: compared there, the move fails, as torch.testing.assert_close says. A trace of 47d9d02 (whole values, its cut unsaid)
    may be either: a faithful port passes against it whichever it holds."""
    from porter.verify.recorder import _stored, block_sums, tensor_stats

    rtol, atol = 1e-4, 1e-5
    g = torch.Generator().manual_seed(7)
    z = torch.complex(
        torch.randn(300, generator=g, dtype=torch.float64), torch.randn(300, generator=g, dtype=torch.float64)
    )
    u = torch.rand(300, generator=g, dtype=torch.float64) * 2 - 1
    faithful, moved = z + 0.9 * u * (atol + rtol * z.abs()), z.clone()
    moved[101] += 0.03  # off the sample (asserted below)

    def with_output(path, out, cut, label=None):
        t = make_trace(path, [2.0, 1.8], **({"label": label} if label else {}))
        stats, sample = tensor_stats(out, 64)
        sums = _blocks_cut_before(out, 64) if cut == "parts" else block_sums(out, 64)
        entry = _stored(t.tensors, "m0.0", stats, sample, sums, [300], "complex128")
        if cut != "said":
            entry.pop("blocks_cut", None)
        t.manifest["modules"][0]["outputs"][0] = entry
        t.manifest.update(porter="0.1.0", porter_source="0ld0ld0ld0ld0ld0" if cut != "said" else "fedcba9876543210")
        return t

    assert torch.equal(tensor_stats(z, 64)[1], tensor_stats(moved, 64)[1])
    for port, close in ((moved, False), (faithful, True)):
        try:
            torch.testing.assert_close(port, z, rtol=rtol, atol=atol)
            oracle = True
        except AssertionError:
            oracle = False
        assert oracle == close
        for older in ("parts", "unsaid values"):
            for old_side in ("reference", "ported"):
                ref = with_output(tmp_path / "r.st", z, older if old_side == "reference" else "said")
                res = compare_traces(
                    ref, with_output(tmp_path / "p.st", port, older if old_side == "ported" else "said", PORT)
                )
                assert res.verdict == ("pass" if close else "fail"), (older, old_side, res.reasons)
                if not close:
                    assert "block sums" in res.modules[0]["stats_differ"], res.modules[0]
                assert any("boundaries both cuts share" in w for w in res.warnings), res.warnings


def test_a_complex_output_whose_largest_part_moves_within_its_value_s_tolerance_passes_on_its_statistics(tmp_path):
    """A complex output's statistics are its parts', and its largest part's move was held to
    `atol + rtol * |that part|`: assert_close allows a value `atol + rtol * |value|`, up to
    sqrt(2) times more, so a faithful port failed on "max, absmax" (1 of 100 generated faithful
    outputs, `43-trace2-tools/oldcut.py.txt 701`, twenty-fifth read). A move past the value's own
    bound still fails."""
    from porter.verify.recorder import tensor_stats

    rtol, atol = 1e-4, 1e-5
    z = torch.complex(torch.linspace(-1, 1, 32, dtype=torch.float64), torch.linspace(1, -1, 32, dtype=torch.float64))
    z[7] = complex(3.0, 3.0)  # the largest part, in a value of modulus 3 * sqrt(2)
    bound = atol + rtol * abs(z[7])
    for move, close in ((0.9 * bound, True), (1.2 * bound, False)):
        port = z.clone()
        port[7] += float(move)
        try:
            torch.testing.assert_close(port, z, rtol=rtol, atol=atol)
            oracle = True
        except AssertionError:
            oracle = False
        assert oracle == close
        traces = []
        for name, out, label in (("r.st", z, None), ("p.st", port, PORT)):
            t = make_trace(tmp_path / name, [2.0, 1.8], **({"label": label} if label else {}))
            t.tensors["m0.0.stats"], t.tensors["m0.0.sample"] = tensor_stats(out, 64)
            t.manifest["modules"][0]["outputs"][0].update(shape=[32], dtype="complex128")
            traces.append(t)
        res = compare_traces(*traces)
        assert res.verdict == ("pass" if close else "fail"), (move, res.reasons)


def test_the_json_parity_report_holds_no_ci_log_command_from_the_traces(tmp_path):
    """The new lines of the twenty-sixth read (libraries past the cap, tensors no manifest entry
    names) and the other library versions carry a manifest's strings; the Markdown and HTML
    reports escaped a `##vso[` in them, the JSON report wrote it raw, and `cat parity.json` in an
    Azure step set a variable (twenty-sixth read). Written `\\u0023`: the same data to a reader."""
    from porter.verify.scriptreport import to_json

    cmd = "##vso[task.setvariable variable=v]x"
    ref = make_trace(tmp_path / "r.st", [2.0, 1.8])
    port = make_trace(tmp_path / "p.st", [2.0, 1.6], label=PORT)
    for t, version in ((ref, "2.9.0"), (port, "2.13.0")):
        t.manifest.update(libraries={f"lib{cmd}": version}, notes=[f"1 further imported library ({cmd})"])
        t.tensors[f"orphan{cmd}"] = torch.zeros(2)
        t = read_trace(write_trace(tmp_path / f"{version}.st", t.manifest, t.tensors))
        ref, port = (t, port) if version == "2.9.0" else (ref, t)
    res = compare_traces(ref, port)
    text = to_json(res)
    read = json.loads(text)
    assert "##vso[" not in text and "##vso[" not in to_markdown(res) and "##vso[" not in to_html(res), text
    said = [w for w in read["warnings"] if cmd in w]
    assert any("library versions" in w for w in said), read["warnings"]
    assert sum("no manifest entry names" in w for w in said) == 2, said
    assert cmd in json.dumps(read), "the notes past the libraries' cap"


def test_a_limits_field_of_another_type_is_refused_naming_it_not_raised_in_every_comparison(tmp_path):
    """`limits` was read by no check of the reader; the twenty-sixth read's line on step 1's
    evaluations reads it in every comparison, so a trace whose `limits` was a list could be
    compared with no one (AttributeError: "a field is not what porter writes", no field named),
    and a text `module_calls` was said as the count of calls recorded (twenty-sixth term2 read)."""
    ref = make_trace(tmp_path / "r.st", [2.0, 1.8])
    port = make_trace(tmp_path / "p.st", [2.0, 1.8], label=PORT)
    assert compare_traces(ref, port).verdict == "pass"
    for value in (["module_calls"], {"module_calls": "all of them"}):
        with pytest.raises(TraceError, match="limits"):
            read_trace(write_trace(tmp_path / "bad.st", {**ref.manifest, "limits": value}, ref.tensors))
    fine = read_trace(write_trace(tmp_path / "ok.st", {**ref.manifest, "limits": {"module_calls": 2}}, ref.tensors))
    assert compare_traces(fine, port).verdict == "pass"


def test_a_gradient_norm_that_differs_before_the_curves_part_is_said_first(tmp_path):
    """A recorded port that dropped `clip_grad_norm_(..., 0.05)` (AdamW: its update hides the
    gradient's scale) had norms 0.66 against 0.05 from step 1 and its loss part at step 3, and
    one that dropped `zero_grad()` differed at step 2: each failed on the curves alone, the norm
    that differed first left out because the curves part (twenty-seventh read's recorded pairs)."""

    def trace(name, losses, norms, act=None):
        t = make_trace(tmp_path / f"{name}.safetensors", losses, act=act, label=None if name == "r" else PORT)
        t.manifest["modules"][0]["key"] = "(model)"
        for st, n in zip(t.manifest["steps"], norms):
            st["grad_norm"] = n
        return t

    ref = trace("r", [0.87, 0.31, 1.905], [0.05, 0.05, 0.05])
    clip = " ".join(compare_traces(ref, trace("clip", [0.87, 0.31, 1.923], [0.66, 0.45, 2.09])).reasons)
    assert "part at step 3" in clip and "the gradient norm differs at step 1: reference 0.05, ported 0.66" in clip
    assert "before the loss curves part" in clip and "clipping" in clip, clip
    late = " ".join(compare_traces(ref, trace("late", [0.87, 0.31, 1.923], [0.05, 0.05, 2.09])).reasons)
    assert "part at step 3" in late and "gradient norm differs" not in late, late  # it differs with the loss
    moved = torch.linspace(-1, 1, 32) * 1.1
    named = " ".join(compare_traces(ref, trace("m", [0.87, 0.33, 1.95], [0.66, 0.45, 2.09], moved)).reasons)
    assert "first diverging module at step 1" in named and "gradient norm differs at step 1" in named, named
    assert "before the loss curves part" not in named, named  # the module is the lead


def test_sides_recorded_with_other_step_counts_get_no_verdict_a_port_that_stops_early_fails(tmp_path):
    """A faithful port recorded with `--steps 2` beside a reference recorded with `--steps 3`
    (both stopped at the steps asked for) failed with "the reference recorded 3 optimizer
    step(s), the port 2": the recording's choice blamed on the port (twenty-seventh read, a
    recorded pair). A port whose own script ended after 2 of the 3 steps asked still fails."""
    ref = make_trace(tmp_path / "r.safetensors", [2.0, 1.8, 1.6])
    ref.manifest["steps_requested"] = 3
    for asked, stopped, verdict in ((2, "steps reached", "error"), (3, "script ended", "fail")):
        port = make_trace(tmp_path / "p.safetensors", [2.0, 1.8], label=PORT)
        port.manifest["steps_requested"], port.manifest["stopped"] = asked, stopped
        res = compare_traces(ref, port)
        said = " ".join(res.reasons)
        assert res.verdict == verdict, said
        assert ("recorded with --steps 3, the port with --steps 2" in said) is (verdict == "error"), said
        assert ("the reference recorded 3 optimizer step(s), the port 2" in said) is (verdict == "fail"), said


def test_a_model_output_dict_built_in_another_key_order_is_recorded_alike_and_a_changed_value_is_not(tmp_path):
    """A recorded port whose model built its output dict as `{"out": ..., "o2": ...}` where the
    reference built `{"o2": ..., "out": ...}` failed at `(model)` (twenty-seventh read, a recorded
    pair): the dict's tensors were recorded in insertion order and paired by place, where
    torch.testing.assert_close pairs them by key and passes. Module mode's `flatten` the same."""
    import types

    from porter.verify.capture import flatten
    from porter.verify.recorder import Recorder

    class _DictHead(torch.nn.Module):
        """A model returning a dict, built in the order `keys` names (the same tensors by key)."""

        def __init__(self, keys, scale=2.0):
            super().__init__()
            self.fc, self.keys, self.scale = torch.nn.Linear(4, 3), keys, scale

        def forward(self, x):
            y = self.fc(x)
            made = {"out": y, "o2": y * self.scale}
            return {k: made[k] for k in self.keys}

    torch.manual_seed(0)
    x, weights = torch.randn(5, 4), torch.nn.Linear(4, 3).state_dict()
    recorded, flat = [], []
    for keys, scale in ((("o2", "out"), 2.0), (("out", "o2"), 2.0), (("out", "o2"), 2.5)):
        model = _DictHead(keys, scale)
        model.fc.load_state_dict(weights)
        out = model(x)
        rec = Recorder(2, types.SimpleNamespace(kind="cpu"), str(tmp_path), ops=False, syncs=False)
        rec.on_forward_hooked(model, (x,), out)
        recorded.append([r[:2] for r in rec.calls[0][2]])
        flat.append([t for _, t in flatten(out)])
    ref, same, changed = recorded
    first, second = _DictHead(("o2", "out")), _DictHead(("out", "o2"))
    second.load_state_dict(first.state_dict())
    torch.testing.assert_close(second(x), first(x))  # the oracle pairs a dict's tensors by key
    assert all(torch.equal(a, b) for ra, rb in zip(ref, same) for a, b in zip(ra, rb)), "order decided"
    assert not all(torch.equal(a, b) for ra, rb in zip(ref, changed) for a, b in zip(ra, rb))
    assert all(torch.equal(a, b) for a, b in zip(flat[0], flat[1]))


def test_a_port_that_merged_parameter_groups_of_one_rate_agrees_on_the_learning_rate(tmp_path):
    """A port that put the reference's two AdamW parameter groups of one rate (0.01) into one
    group updates alike, and failed with "the learning rate differs at step 1: reference [0.01,
    0.01], ported [0.01]" (twenty-seventh read). Groups of other rates and counts that no trace
    names the parameters of (an older porter's) cannot be paired: said, not compared."""
    ref = make_trace(tmp_path / "r.safetensors", [2.0, 1.8])
    for two, one, verdict in (([0.01, 0.01], [0.01], "pass"), ([0.01, 0.02], [0.01], "unpaired")):
        for st in ref.manifest["steps"]:
            st["lr"] = two
        port = make_trace(tmp_path / "p.safetensors", [2.0, 1.8], label=PORT)
        for st in port.manifest["steps"]:
            st["lr"] = one
        res = compare_traces(ref, port)
        said = " ".join(res.reasons)
        assert res.verdict == "pass" and "the learning rate differs" not in said, said
        unpaired = [w for w in res.warnings if "cannot be paired" in w]
        assert len(unpaired) == (verdict == "unpaired"), res.warnings


def _groups_compared(tmp_path, groups, lrs, verdict, bound):
    """SGD steps the reference's two groups and the port's `groups` at `lrs` from one start: their
    weights after it, by assert_close, are the oracle for `verdict`. Each side's traces name its
    groups as the recorder does (`_group_names` under `bound`) and are compared: (the reference's
    groups, the port's, the comparison)."""
    from porter.verify.recorder import _group_names

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2))
    named = {id(p): [n] for n, p in model.named_parameters()}
    by_name = dict(model.named_parameters())
    start = {n: p.detach().clone() for n, p in by_name.items()}

    def stepped(gs, rates):
        opt = torch.optim.SGD([{"params": [by_name[n] for n in g], "lr": r} for g, r in zip(gs, rates)])
        model.zero_grad()
        model(torch.ones(5, 4)).pow(2).sum().backward()
        opt.step()
        after = {n: p.detach().clone() for n, p in by_name.items()}
        with torch.no_grad():
            for n, p in by_name.items():
                p.copy_(start[n])
        return _group_names(opt, named, bound), after

    ref_groups, ref_after = stepped([["0.weight", "0.bias"], ["1.weight", "1.bias"]], [0.1, 0.01])
    port_groups, port_after = stepped(groups, lrs)
    if verdict == "pass":
        torch.testing.assert_close(port_after, ref_after)
    else:
        with pytest.raises(AssertionError):
            torch.testing.assert_close(port_after, ref_after)
    ref = make_trace(tmp_path / "r.safetensors", [2.0, 1.8])
    port = make_trace(tmp_path / "p.safetensors", [2.0, 1.8], label=PORT)
    for trace, gs, rates in ((ref, ref_groups, [0.1, 0.01]), (port, port_groups, lrs)):
        trace.manifest["param_groups"] = gs
        for st in trace.manifest["steps"]:
            st["lr"] = rates
    return ref_groups, port_groups, compare_traces(ref, port)


@pytest.mark.parametrize(
    "groups, lrs, verdict",
    [
        ([["0.weight", "0.bias"], ["1.weight", "1.bias"]], [0.1, 0.01], "pass"),  # the reference's
        ([["0.weight"], ["0.bias"], ["1.weight", "1.bias"]], [0.1, 0.1, 0.01], "pass"),  # split
        ([["1.weight", "1.bias"], ["0.weight", "0.bias"]], [0.01, 0.1], "pass"),  # reordered
        ([["1.weight", "1.bias"], ["0.weight", "0.bias"]], [0.1, 0.01], "fail"),  # rates swapped
        ([["0.weight", "0.bias", "1.weight", "1.bias"]], [0.1], "fail"),  # merged at one rate
    ],
)
def test_parameter_groups_are_paired_by_the_parameters_they_hold(tmp_path, groups, lrs, verdict):
    """Groups were paired by count: a port that split a group of the reference's two of other
    rates failed on the rate, and one that swapped the two groups' rates passed (twenty-seventh
    read's leftover). The recorder names each group's parameters (`_group_names`) and each
    parameter's rate is compared; SGD's weights after a step, by assert_close, are the oracle."""
    _, port_groups, res = _groups_compared(tmp_path, groups, lrs, verdict, 100)
    assert sorted(map(sorted, port_groups)) == sorted(map(sorted, groups))
    said = " ".join(res.reasons)
    assert res.verdict == verdict and ("the learning rate differs" in said) is (verdict == "fail"), said
    assert not [w for w in res.warnings if "cannot be paired" in w], res.warnings


@pytest.mark.parametrize(
    "groups, lrs, verdict",
    [
        ([["1.weight", "1.bias"], ["0.weight", "0.bias"]], [0.01, 0.1], "pass"),  # reordered
        ([["0.weight", "0.bias"], ["1.weight", "1.bias"]], [0.1, 0.05], "fail"),  # the second's rate
    ],
)
def test_parameter_groups_past_the_bound_are_named_in_name_order(tmp_path, groups, lrs, verdict):
    """Under the parameters' bound the groups named their first `bound` parameters in the
    optimizer's order: a port that listed its groups in another order named other parameters
    (paired by count: failed), and a group the bound left out was named by nothing (its rate not
    compared: passed). Named in name order, each group by one at least (twenty-eighth trace2
    read); SGD's weights after a step, by assert_close, are the oracle."""
    ref_groups, port_groups, res = _groups_compared(tmp_path, groups, lrs, verdict, 2)
    assert all(ref_groups) and all(port_groups), (ref_groups, port_groups)
    said = " ".join(res.reasons)
    assert res.verdict == verdict and ("the learning rate differs" in said) is (verdict == "fail"), said


def test_a_dict_inside_a_namedtuple_output_is_recorded_by_key_as_assert_close_pairs_it(tmp_path):
    """A model returning a namedtuple holding a dict (`Out(logits, aux={...})`): the plain dicts
    were put in key order only inside plain tuples and lists, so this dict was recorded in the
    order the program built it and a faithful port building it in another order failed, where
    torch.testing.assert_close pairs it by key (twenty-seventh trace2 read)."""
    import collections
    import types

    from porter.verify.recorder import Recorder

    Out = collections.namedtuple("Out", "logits aux")

    class _Head(torch.nn.Module):
        def __init__(self, keys, scale=2.0):
            super().__init__()
            self.fc, self.keys, self.scale = torch.nn.Linear(4, 3), keys, scale

        def forward(self, x):
            y = self.fc(x)
            made = {"a": y[:, :1], "b": y * self.scale}
            return Out(y, {k: made[k] for k in self.keys})

    torch.manual_seed(0)
    x, weights = torch.randn(5, 4), torch.nn.Linear(4, 3).state_dict()
    recorded, outs = [], []
    for keys, scale in ((("b", "a"), 2.0), (("a", "b"), 2.0), (("a", "b"), 2.5)):
        model = _Head(keys, scale)
        model.fc.load_state_dict(weights)
        out = model(x)
        rec = Recorder(2, types.SimpleNamespace(kind="cpu"), str(tmp_path), ops=False, syncs=False)
        rec.on_forward_hooked(model, (x,), out)
        recorded.append([r[:2] for r in rec.calls[0][2]])
        outs.append(out)
    ref, same, changed = recorded
    torch.testing.assert_close(outs[1], outs[0])  # the oracle pairs the dict's tensors by key
    with pytest.raises(AssertionError):
        torch.testing.assert_close(outs[2], outs[0])
    assert len(ref) == len(same) == 3
    assert all(torch.equal(a, b) for ra, rb in zip(ref, same) for a, b in zip(ra, rb)), "order decided"
    assert not all(torch.equal(a, b) for ra, rb in zip(ref, changed) for a, b in zip(ra, rb))
