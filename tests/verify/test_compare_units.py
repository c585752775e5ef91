"""In-process unit tests of the comparison, configuration and probe code (no subprocesses)."""

import math

import pytest

from porter.verify.config import ParityConfig, build_config

torch = ActivationRecorder = flatten = compare_tensor = first_divergence = first_nonfinite = SyncCounterMode = None


@pytest.fixture(autouse=True)
def _imports():
    """torch, and what imports it, when a test runs, not at collection: .ci/run may still be
    installing torch while the suite starts (tests/deps.py)."""
    global torch, ActivationRecorder, flatten, compare_tensor, first_divergence, first_nonfinite, SyncCounterMode
    import torch
    from porter.verify.capture import ActivationRecorder, flatten
    from porter.verify.compare import compare_tensor, first_divergence, first_nonfinite
    from porter.verify.probes import SyncCounterMode


TREE = __import__("pathlib").Path(__file__).parent / "models" / "dynamic"


def cfg(**kw):
    kw.setdefault("entry", "model:make_model")
    return ParityConfig(original=TREE, ported=TREE, **kw)


def test_tolerances_depend_on_dtype_and_user_overrides():
    assert cfg().tolerances("float32") == (1e-4, 1e-5)
    assert cfg().tolerances("bfloat16") == (5e-2, 1e-2)
    assert cfg(dtype="bf16").tolerances("float32") == (5e-2, 1e-2)
    assert cfg(rtol=1e-3).tolerances("bfloat16") == (1e-3, 1e-2)
    with pytest.raises(ValueError):
        cfg(dtype="float8")
    with pytest.raises(ValueError):
        cfg(entry="no_colon")


def test_compare_metrics_and_failures():
    ref = torch.tensor([1.0, 2.0, 3.0, 0.0])
    same = compare_tensor("o", ref, ref.clone(), cfg())
    assert same.passed and same.max_abs == 0.0 and same.cosine == pytest.approx(1.0)
    off = compare_tensor("o", ref, ref + torch.tensor([0.0, 0.0, 0.3, 0.0]), cfg())
    assert not off.passed and off.mismatched == 1
    assert off.max_abs == pytest.approx(0.3) and off.max_rel == pytest.approx(0.1)
    nan = compare_tensor("o", ref, torch.tensor([1.0, math.nan, 3.0, math.inf]), cfg())
    assert not nan.passed and nan.ported_nan == 1 and nan.ported_inf == 1 and nan.ref_nan == 0
    shape = compare_tensor("o", ref, ref[:3], cfg())
    assert not shape.passed and "shape differs" in shape.problem
    ints = compare_tensor("i", torch.tensor([1, 2]), torch.tensor([1, 3]), cfg())
    assert not ints.passed and ints.max_abs == 1.0
    low = compare_tensor("h", ref, (ref + 0.005).to(torch.bfloat16), cfg())
    assert low.passed and low.rtol == 5e-2  # bf16 output: bf16 tolerance


def test_first_divergence_follows_execution_order():
    a = {"l1": [torch.ones(2)], "l2": [torch.ones(2)], "l3": [torch.ones(2)]}
    b = {"l1": [torch.ones(2)], "l2": [torch.ones(2) * 2], "l3": [torch.ones(2) * 3]}
    first, compared, issues = first_divergence(a, b, ["l1", "l2", "l3"], cfg())
    assert first["module"] == "l2" and first["max_abs"] == 1.0 and compared == 3
    assert first_nonfinite({"x": [torch.tensor([math.nan])]}, ["x"]) == {"module": "x", "nan": 1, "inf": 0}


def test_recorder_keeps_values_before_inplace_ops_and_counts_repeat_calls():
    relu = torch.nn.ReLU(inplace=True)
    lin = torch.nn.Linear(3, 3)
    with torch.no_grad():
        lin.weight.copy_(torch.eye(3))
        lin.bias.zero_()
    seq = torch.nn.Sequential(lin, relu, relu)
    rec = ActivationRecorder(seq)
    out = seq(torch.tensor([[-1.0, 2.0, -3.0]]))
    rec.remove()
    assert rec.order == ["0", "1", "1#2"]
    assert torch.equal(rec.outputs["1#2"][0], out)
    # the in-place ReLU overwrote Linear's output tensor; the clone kept the negatives
    assert rec.outputs["0"][0].tolist() == [[-1.0, 2.0, -3.0]]
    assert out.tolist() == [[0.0, 2.0, 0.0]]
    assert [p for p, _ in flatten({"a": (torch.ones(1), [torch.zeros(1)])})] == ["out['a'][0]", "out['a'][1][0]"]


def test_sync_counter_attributes_calls_to_user_lines():
    here = __file__
    mode = SyncCounterMode(str(TREE.parent.parent))  # tests/verify/ holds this file
    x = torch.randn(5)
    with mode:
        x.sum().item()
        (x > 0).nonzero()
        _ = x[x > 0]
    rows = mode.to_dict(steps=1)
    locs = {r["call"]: r["location"] for r in rows["host_syncs"]}
    assert locs[".item()"].startswith(__import__("os").path.basename(here))
    dyn = {r["call"] for r in rows["dynamic_shape_ops"]}
    assert dyn == {".nonzero()", "boolean-mask indexing"}


def test_sync_counter_counts_the_program_s_own_half_casts_by_line_not_autocast_s():
    """Casts to float16/bfloat16 written in the program's code, by line (`tracecmp._hand_casts`
    says them beside an added autocast): autocast's own casts happen in the dispatcher, and a
    tensor already in the dtype is not cast."""
    mode = SyncCounterMode(str(TREE.parent.parent))
    lin, x = torch.nn.Linear(4, 4), torch.randn(2, 4)
    with mode, torch.autocast("cpu", dtype=torch.bfloat16):
        y = lin(x)  # autocast casts x and the weight: not the program's
        y.to(torch.bfloat16)  # bfloat16 already
        torch.nn.functional.layer_norm(y.float(), (4,)).to(torch.bfloat16)
        x.half()
        x.to(dtype=torch.bfloat16)
    rows = mode.to_dict(steps=1)["casts"]
    base = __import__("os").path.basename(__file__)
    assert sorted((r["call"], r["count"]) for r in rows) == [
        ("cast to bfloat16", 1),
        ("cast to bfloat16", 1),
        ("cast to float16", 1),
    ], rows
    assert all(r["location"].startswith(base) for r in rows), rows
    assert len({r["location"] for r in rows}) == 3, rows


def test_sync_counter_counts_casts_to_another_tensor_s_dtype_and_by_type_as_hand_casts():
    """`.to(other)`, `.type(dtype)`, `.type("torch.BFloat16Tensor")` and `.type_as(other)` cast as
    `.to(dtype)` does, and were not counted (the twenty-fourth tleft read's leftover); a cast to a
    wider dtype, or of a tensor already half, is still not one."""
    mode = SyncCounterMode(str(TREE.parent.parent))
    x, half = torch.randn(2, 4), torch.zeros(1, dtype=torch.bfloat16)
    with mode:
        made = [x.to(half), x.type(torch.float16), x.type("torch.BFloat16Tensor"), x.type_as(half), x.to(tensor=half)]
        x.to(x), x.type(torch.float64), half.type_as(x), x.type(), x.to("cpu", torch.float32)
    rows = mode.to_dict(steps=1)["casts"]
    assert sorted((r["call"], r["count"]) for r in rows) == [("cast to bfloat16", 4), ("cast to float16", 1)], rows
    # the oracle: each counted call made a half-precision copy of x's values
    for y in made:
        assert y.dtype in (torch.float16, torch.bfloat16)
        torch.testing.assert_close(y.float(), x, rtol=1e-2, atol=1e-2)


def test_pyproject_settings_and_cli_overrides(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        '[tool.porter.parity]\noriginal = "a"\nported = "b"\nentry = "m:f"\ntrain-steps = 4\ndtype = "bf16"\n'
    )
    c = build_config({"train_steps": None, "target": "tpu"}, start=tmp_path)
    assert c.original == (tmp_path / "a").resolve() and c.train_steps == 4
    assert c.dtype == "bfloat16" and c.target == "tpu"
    c2 = build_config({"train_steps": 1}, start=tmp_path)
    assert c2.train_steps == 1
    (tmp_path / "pyproject.toml").write_text("[tool.porter.parity]\nbogus = 1\n")
    with pytest.raises(ValueError, match="bogus"):
        build_config({}, start=tmp_path)


@pytest.mark.parametrize(
    "text",
    [
        "tool = 5",
        'tool = "x"',
        "tool.porter = 5",
        "tool.porter = []",
        "tool.porter.parity = 5",
        'tool.porter.parity = "x"',
        "tool.porter.parity = []",
        '[tool.porter.parity]\noriginal = 5\nported = "b"\nentry = "m:f"',
        '[tool.porter.parity]\noriginal = "a"\nported = ["b"]\nentry = "m:f"',
        '[tool.porter.parity]\noriginal = "a"\nported = "b"\nreport = 1979-05-27\nentry = "m:f"',
        '[tool.porter.parity]\noriginal = "a"\nported = "b"\nentry = 0',
        '[tool.porter.parity]\noriginal = "a"\nported = "b"\nentry = "m:f"\ninputs = ["m:g"]',
        '[tool.porter.parity]\noriginal = "a"\nported = "b"\nentry = "m:f"\ndtype = 16',
        '[tool.porter.parity]\noriginal = "a"\nported = "b"\nentry = "m:f"\ntarget = {a = 1}',
        '[tool.porter.parity]\noriginal = "a"\nported = "b"\nentry = "m:f"\ntrain-steps = "4"',
        '[tool.porter.parity]\noriginal = "a"\nported = "b"\nentry = "m:f"\nseed = true',
        '[tool.porter.parity]\noriginal = "a"\nported = "b"\nentry = "m:f"\nrtol = "0.1"',
        '[tool.porter.parity]\noriginal = "a"\nported = "b"\nentry = "m:f"\nexplain = "no"',
    ],
)
def test_a_parity_table_of_the_wrong_shape_is_a_value_error_naming_it(tmp_path, text):
    """`tool.porter = 5` (or `tool`, or the parity table, not a table) ended `parity-check` in an
    AttributeError traceback, and so did `entry = 0` or `dtype = 16`; a path setting of another
    type was "unsupported operand type(s) for /", naming neither the file nor the key
    (eighteenth read)."""
    (tmp_path / "pyproject.toml").write_text(text + "\n")
    with pytest.raises(ValueError, match="pyproject.toml: `"):
        build_config({}, start=tmp_path)


def test_a_report_name_parity_check_cannot_write_is_refused_before_the_run(tmp_path):
    """`--report x.txt` (or `report = ""` in `[tool.porter.parity]`) was refused only after both
    sides had run (minutes of training); the name is checked with the other settings."""
    (tmp_path / "a").mkdir()
    for report in ("x.txt", "", "x"):
        with pytest.raises(ValueError, match="use a .json, .md or .html"):
            build_config({"original": tmp_path / "a", "ported": tmp_path / "a", "entry": "m:f", "report": report})
    assert build_config({"original": tmp_path / "a", "ported": tmp_path / "a", "entry": "m:f", "report": "r.HTML"})


def test_complex_outputs_are_compared_by_both_parts():
    """A model whose output is complex (an FFT layer): cast to float64, its imaginary part was
    dropped with a torch warning on the terminal, and a port that conjugated it passed
    (seventeenth read; script mode had the same)."""
    import warnings

    z = torch.complex(torch.linspace(-1, 1, 16), torch.linspace(0.5, 2, 16))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not compare_tensor("out", z, z.conj(), cfg()).passed
        near = compare_tensor("out", z, z + torch.complex(torch.tensor(1e-7), torch.tensor(-1e-7)), cfg())
        assert near.passed and near.max_abs < 1e-6, near
    # close by the modulus, as torch.isclose: a small real part's error within |z|'s tolerance
    # failed when each part was held to its own (twenty-third read)
    w = torch.complex(torch.full((16,), 1e-3), torch.linspace(1, 2, 16))
    rtol, atol = cfg().tolerances("complex64")
    for port in (w + 3 * atol, w + 40 * atol):
        got = compare_tensor("out", w, port, cfg()).passed
        assert got == bool(torch.isclose(port, w, rtol=rtol, atol=atol).all()), (port - w)[:2]
    assert compare_tensor("out", w, w + 3 * atol, cfg()).passed


@pytest.mark.parametrize(
    "setting", [{"rtol": float("nan")}, {"atol": float("inf")}, {"atol": -1.0}, {"timeout": float("inf")}, {"seed": -1}]
)
def test_a_number_no_run_can_use_in_the_parity_settings_is_refused(setting):
    """`[tool.porter.parity]` in pyproject.toml (TOML has `nan` and `inf`) gives model mode the
    numbers the command line now refuses: a NaN tolerance or an infinite timeout ran both sides
    and then ended in a traceback or passed any port (seventeenth read)."""
    with pytest.raises(ValueError, match=next(iter(setting))):
        cfg(**setting)


def test_script_samples_compare_as_torch_isclose_says_of_any_dtype_and_shape():
    """`trace compare`'s samples are compared in NumPy (a quarter of torch's per-call cost at
    1,024 ranks x 40 modules): the verdict and both errors must be torch.isclose's, for every
    dtype a trace holds, non-finite values and 0-d samples."""
    import random
    import warnings

    from porter.verify.tracecmp import _quiet, _sample_cmp

    def reference(r, p, rtol, atol):  # the torch version it replaced (complex: by modulus, as isclose)
        if r.is_complex() or p.is_complex():
            rd, pd = (t.to(torch.complex128).resolve_conj() for t in (r, p))
        else:
            rd, pd = r.to(torch.float64), p.to(torch.float64)
        if not (r.is_floating_point() or r.is_complex() or p.is_floating_point() or p.is_complex()):
            diff = (rd - pd).abs()
            return bool((diff == 0).all()), float(diff.max()), 0.0
        ok = bool(torch.isclose(pd, rd, rtol=rtol, atol=atol, equal_nan=True).all())
        fin = rd.isfinite() & pd.isfinite()
        if not fin.any():
            return ok, 0.0, 0.0
        diff = (rd[fin] - pd[fin]).abs()
        big = rd[fin].abs() > atol
        return ok, float(diff.max()), float((diff[big] / rd[fin][big].abs()).max()) if big.any() else 0.0

    values = [0.0, -0.0, 1.0, -1.0, 1e-7, 1e308, -1e308, float("inf"), float("-inf"), float("nan"), 5e-324, 2.0]
    dtypes = [torch.float64, torch.float32, torch.bfloat16, torch.float16, torch.int64, torch.bool, torch.complex64]
    rng = random.Random(18)
    # (a complex error is a modulus: NumPy's and torch's hypot differ in the last bit)
    same = lambda a, b: math.isclose(a, b, rel_tol=1e-15) or (math.isnan(a) and math.isnan(b))  # noqa: E731
    with warnings.catch_warnings(), _quiet():
        warnings.simplefilter("error")
        for _ in range(3000):
            n, dtype = rng.randint(1, 5), rng.choice(dtypes)
            r, p = (torch.tensor([rng.choice(values) for _ in range(n)], dtype=torch.float64) for _ in "rp")
            if not dtype.is_floating_point and not dtype.is_complex:
                r, p = (torch.nan_to_num(t, 0.0, 0.0, 0.0).clamp(-1e9, 1e9) for t in (r, p))
            if dtype.is_complex:  # an imaginary part too (twenty-third read: they were all 0)
                r, p = (torch.complex(t, t.flip(0) * rng.choice([0.0, 1e-3, 1.0])) for t in (r, p))
            r, p = r.to(dtype), p.to(dtype)
            rtol, atol = rng.choice([0.0, 1e-5, 1.0]), rng.choice([0.0, 1e-6, 1.0])
            got, want = _sample_cmp(r, p, rtol, atol), reference(r, p, rtol, atol)
            assert got[0] == want[0] and same(got[1], want[1]) and same(got[2], want[2]), (r, p, rtol, atol, got, want)
        scalar = torch.tensor(1.5)
        assert _sample_cmp(scalar, scalar, 1e-5, 1e-6) == (True, 0.0, 0.0)
        assert not _sample_cmp(scalar, torch.tensor(2.5), 1e-5, 1e-6)[0]
