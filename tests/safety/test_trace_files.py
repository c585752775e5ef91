"""Contracts 5 and 6 for trace files (`porter trace compare`, `trace ops`): a trace comes from
another machine, so a malformed one (not JSON, nested too deeply, fields of the wrong type,
a tensor it names but lacks, huge declared sizes, an unknown version) is a one-line error
(exit 2), never a traceback; and its strings reach the terminal as text, never as control
sequences."""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

import pytest

from tests.deps import need
from tests.safety.conftest import porter

pytestmark = pytest.mark.torch

ESC = "\x1b[2J\x1b]8;;https://evil.example\x07click\x1b]8;;\x07"


def _manifest(label: str = "cpu") -> dict:
    return {
        "side": {"label": label, "kind": "cpu", "notes": [], "versions": {}},
        "steps_recorded": 2,
        "steps": [{"step": i, "loss": 1.0 / i, "grad_norm": 0.5, "lr": [0.1], "step_time_s": 0.01} for i in (1, 2)],
        "modules": [
            {
                "key": "fc",
                "type": "Linear",
                "outputs": [{"shape": [2, 3], "stats": "m0.0.stats", "sample": "m0.0.sample"}],
            }
        ],
        "parameters": [{"name": "fc.weight", "shape": [3, 4], "stats": "p0.stats", "sample": "p0.sample"}],
        "tied": [],
        "ops": [{"op": "aten::addmm", "overload": "default", "dtypes": ["float32"], "devices": ["cpu"], "count": 2}],
        "ops_scope": "step 1",
        "precision": {"regime": "float32"},
        "perf": None,
        "notes": [],
    }


def _tensors(torch) -> dict:
    return {
        "m0.0.stats": torch.arange(8, dtype=torch.float32),
        "m0.0.sample": torch.ones(6),
        "p0.stats": torch.arange(8, dtype=torch.float32),
        "p0.sample": torch.ones(12),
        "steps.loss": torch.tensor([1.0, 0.5], dtype=torch.float64),
        "steps.grad_norm": torch.tensor([0.5, 0.5], dtype=torch.float64),
    }


def _write(path: Path, manifest, tensors: dict | None = None) -> Path:
    torch = need("torch")
    from safetensors.torch import save_file

    text = manifest if isinstance(manifest, str) else json.dumps(manifest)
    save_file(_tensors(torch) if tensors is None else tensors, str(path), metadata={"porter.trace": text})
    return path


def _one_line_error(out, *words: str) -> str:
    err = out.stderr.decode()
    assert out.returncode == 2, (out.returncode, err, out.stdout)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for w in words:
        assert w in err, err
    return err


def _sides(tmp_path: Path) -> tuple[Path, Path]:
    """A reference run on the CPU through the CUDA shim and a port on XLA, with equal numbers: two
    well-formed traces porter can give a verdict on (two traces of one device type get none)."""
    ref = {
        **_manifest(),
        "schema": "porter.trace/1",
        "side": {"label": "cuda", "kind": "cpu", "shim": "cuda->cpu", "notes": [], "versions": {}},
        "devices": {"losses": ["cpu"], "parameters": {"cpu": 1}, "requested": {"cuda": 1}},
    }
    port = {
        **_manifest(),
        "schema": "porter.trace/1",
        "side": {"label": "xla", "kind": "xla", "notes": [], "versions": {}},
        "devices": {"losses": ["xla"], "parameters": {"xla": 1}},
    }
    return _write(tmp_path / "ref.safetensors", ref), _write(tmp_path / "port.safetensors", port)


def test_well_formed_traces_compare(tmp_path):
    ref, port = _sides(tmp_path)
    out = porter("trace", "compare", str(ref), str(port), cwd=tmp_path)
    assert out.returncode == 0, (out.stdout, out.stderr)
    good = ref
    # off a terminal the tables are not squeezed to 80 columns: each row on one line
    ops = porter("trace", "ops", str(good), "--target", "xla", cwd=tmp_path, columns=False)
    assert ops.returncode in (0, 1) and b"addmm" in ops.stdout, ops.stderr
    [row] = [ln for ln in ops.stdout.decode().splitlines() if "addmm" in ln]
    assert len(row) > 80, ops.stdout.decode()
    compared = porter("trace", "compare", str(ref), str(port), cwd=tmp_path, columns=False).stdout.decode()
    assert max(len(ln) for ln in compared.splitlines()) > 80, compared


def test_optional_fields_may_be_absent(tmp_path):
    """What the reader's checks allow (a step without its time, a dynamic-shape op without its
    place) every reader takes: no KeyError at compare or in the report."""
    ref, port = _sides(tmp_path)
    for path in (ref, port):
        from safetensors import safe_open

        with safe_open(str(path), "pt") as f:
            manifest = json.loads(f.metadata()["porter.trace"])
        for step in manifest["steps"]:
            del step["step_time_s"]
        manifest["perf"] = {"syncs": {"host_syncs": [], "dynamic_shape_ops": [{"call": "torch.nonzero"}]}}
        # a module without its type (the sixteenth read: `None + str` in the modules' table, and
        # the comparison of two traces the reader took was refused)
        del manifest["modules"][0]["type"]
        _write(path, manifest)
    out = porter("trace", "compare", str(ref), str(port), "--report", str(tmp_path / "r.md"), cwd=tmp_path)
    assert out.returncode == 0, (out.stdout, out.stderr)
    assert "torch.nonzero at (library code): ?/step" in (tmp_path / "r.md").read_text()
    for report in ("r.html", "r.json"):
        again = porter("trace", "compare", str(ref), str(port), "--report", str(tmp_path / report), cwd=tmp_path)
        assert again.returncode == 0, (again.stdout, again.stderr)


def test_optional_xla_probe_fields_may_be_absent(tmp_path):
    """An XLA probe record with only its required fields (no `compiles_per_step`, no `source`,
    a fallback without its count) passed the checks, then the terminal table read them:
    a KeyError traceback after the comparison. And a field no check lists (`shape_changes`)
    holding the wrong type is a one-line error at worst, in the table or the report."""
    ref, port = _sides(tmp_path)
    xla = {
        "recompiles_after_warmup": 0,
        "device_to_host_transfers_per_step": 0,
        "cpu_fallback_ops": [{"op": "aten::x"}],
    }
    for path in (ref, port):
        from safetensors import safe_open

        with safe_open(str(path), "pt") as f:
            manifest = json.loads(f.metadata()["porter.trace"])
        manifest["perf"] = {"xla": xla}
        _write(path, manifest)
    out = porter("trace", "compare", str(ref), str(port), "--report", str(tmp_path / "r.md"), cwd=tmp_path)
    assert out.returncode in (0, 1) and b"Traceback" not in out.stderr, out.stderr.decode()[-3000:]
    assert "aten::x" in (tmp_path / "r.md").read_text()
    manifest["perf"] = {"xla": {**xla, "shape_changes": 5, "shape_changes_in_progress": [{"recompiles": "x"}]}}
    _write(port, manifest)
    out = porter("trace", "compare", str(ref), str(port), "--report", str(tmp_path / "r.html"), cwd=tmp_path)
    if out.returncode == 2:
        _one_line_error(out, "a field is not what porter writes")
    assert b"Traceback" not in out.stderr, out.stderr.decode()[-3000:]


def _bad_manifests() -> dict[str, object]:
    good = {**_manifest(), "schema": "porter.trace/1"}
    return {
        "not JSON": "{not json",
        "deep nesting": "[" * 50_000 + "]" * 50_000,
        "deep nesting of a field": json.dumps({**good, "notes": json.loads("[" * 200 + "]" * 200)}),
        "a list": [],
        "steps not a list": {**good, "steps": 3},
        "a loss that is text": {**good, "steps": [{"loss": "low", "grad_norm": 1.0, "lr": [0.1]}]},
        "a step without its loss": {**good, "steps": [{"grad_norm": 1.0, "lr": [0.1]}]},
        "a module output naming a missing tensor": {
            **good,
            "modules": [{"key": "fc", "outputs": [{"shape": [1], "stats": "nope", "sample": "nope"}]}],
        },
        "an op count that is text": {**good, "ops": [{"op": "aten::mm", "count": "many"}]},
        "side not an object": {**good, "side": "gpu"},
        "precision null": {**good, "precision": None},
        # read by the dtype line since the twenty-third read (a list was not hashable there)
        "autocast dtypes that are not text": {**good, "precision": {"regime": "bfloat16", "autocast_dtypes": [[1]]}},
        "an output dtype that is a list": {
            **good,
            "modules": [{"key": "fc", "outputs": [{**good["modules"][0]["outputs"][0], "dtype": ["float32"]}]}],
        },
        "perf of the wrong shape": {**good, "perf": {"xla": {"recompiles_after_warmup": "x"}}},
        "a schema from the future": {**good, "schema": "porter.trace/2"},
        "a huge version": {**good, "schema": "porter.trace/" + "9" * 5000},
        "a schema that is a number": {**good, "schema": 1},
        "another tool's schema": {**good, "schema": "other/1"},
    }


def _in_process(*args: str):
    """The command in this process (torch is imported once for all the cases)."""
    from typer.testing import CliRunner

    from porter.cli import app

    res = CliRunner().invoke(app, list(args))
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    return res


def test_malformed_manifests_are_one_line_errors(tmp_path):
    good = _write(tmp_path / "good.safetensors", {**_manifest(), "schema": "porter.trace/1"})
    for case, manifest in _bad_manifests().items():
        bad = _write(tmp_path / "bad.safetensors", manifest)
        for args in (("trace", "compare", str(good), str(bad)), ("trace", "ops", str(bad), "--target", "xla")):
            res = _in_process(*args)
            assert res.exit_code == 2, (case, args[1], res.output)
            err = res.stderr
            assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "bad.safetensors" in err, (
                case,
                err,
            )
    # and one of them as a user runs it
    _one_line_error(porter("trace", "ops", str(bad), "--target", "xla", cwd=tmp_path), "bad.safetensors")


def test_stats_of_the_wrong_size_are_an_error(tmp_path):
    torch = need("torch")
    good = _write(tmp_path / "good.safetensors", {**_manifest(), "schema": "porter.trace/1"})
    tensors = {**_tensors(torch), "m0.0.stats": torch.ones(3)}
    bad = _write(tmp_path / "bad.safetensors", {**_manifest(), "schema": "porter.trace/1"}, tensors)
    _one_line_error(porter("trace", "compare", str(good), str(bad), cwd=tmp_path), "bad.safetensors", "statistics")


def test_huge_declared_sizes_are_an_error_not_an_allocation(tmp_path):
    """A safetensors header that declares a tensor of 10^12 elements (or a header of 2^60
    bytes) the file does not hold."""
    header = json.dumps(
        {
            "__metadata__": {"porter.trace": json.dumps({**_manifest(), "schema": "porter.trace/1"})},
            "t": {"dtype": "F32", "shape": [1_000_000, 1_000_000], "data_offsets": [0, 4_000_000_000_000]},
        }
    ).encode()
    (tmp_path / "huge.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 16)
    (tmp_path / "header.safetensors").write_bytes(struct.pack("<Q", 2**60) + b"{}")
    # and one that holds what it declares: 300 MB of zeros (a sparse file), far past any trace
    elements = 75_000_000
    header = json.dumps(
        {
            "__metadata__": {"porter.trace": json.dumps({**_manifest(), "schema": "porter.trace/1"})},
            "t": {"dtype": "F32", "shape": [elements], "data_offsets": [0, 4 * elements]},
        }
    ).encode()
    with open(tmp_path / "large.safetensors", "wb") as fh:
        fh.write(struct.pack("<Q", len(header)) + header)
        fh.truncate(8 + len(header) + 4 * elements)
    for name in ("huge.safetensors", "header.safetensors"):
        _one_line_error(porter("trace", "ops", name, "--target", "xla", cwd=tmp_path), name)
    _one_line_error(
        porter("trace", "ops", "large.safetensors", "--target", "xla", cwd=tmp_path), "large.safetensors", "larger than"
    )


def test_manifest_strings_reach_the_terminal_as_text(tmp_path):
    good = _write(tmp_path / "good.safetensors", {**_manifest(), "schema": "porter.trace/1"})
    evil = _manifest(label="tpu " + ESC)
    evil["modules"][0]["key"] = "fc" + ESC
    evil["error"] = {"type": "Boom" + ESC, "message": "bad\x1b[31m news", "location": None}
    bad = _write(tmp_path / "evil.safetensors", {**evil, "schema": "porter.trace/1"})
    for args in (("trace", "compare", str(good), str(bad)), ("trace", "ops", str(bad), "--target", "xla")):
        out = porter(*args, cwd=tmp_path)
        shown = out.stdout + out.stderr
        assert b"\x1b" not in shown and b"\x07" not in shown, shown
        assert b"Traceback" not in shown, shown
        assert b"\\x1b" in shown  # the escape is shown, not obeyed


MARKUP = "[click](https://evil.example) ![i](https://evil.example/i.png) <img src=x> `a|b` \\[x](https://e.example)\n# Heading"


def _rendered_tags(markdown: str) -> set[str]:
    """The HTML tags a GitHub-flavoured renderer makes of `markdown` (tables on)."""
    import re

    from markdown_it import MarkdownIt

    return set(re.findall(r"<([a-z0-9]+)", MarkdownIt("commonmark").enable("table").render(markdown)))


def test_manifest_strings_in_markdown_reports_stay_text(tmp_path):
    """`trace ops --report x.md` and `trace compare --report x.md` (a PR comment): an operator
    name, a dtype, a version or a label from the trace makes no link, image, tag or heading —
    in a table cell too, where doubling `_inline`'s backslashes once turned `\\[x](url)` into a link."""
    ref, _ = _sides(tmp_path)
    port = {
        **_manifest(),
        "schema": "porter.trace/1",
        "side": {"label": "xla " + MARKUP, "kind": "xla", "notes": [], "versions": {"torch": MARKUP, MARKUP: "2"}},
        "devices": {"losses": ["xla"], "parameters": {"xla": 1}},
    }
    port["ops"][0].update(op="aten::mm" + MARKUP, dtypes=["float32" + MARKUP])
    port = _write(tmp_path / "port.safetensors", port)
    expected = {
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "p",
        "code",
        "h1",
        "h2",
        "h3",
        "strong",
        "em",
        "ul",
        "li",
        "br",
        "sub",
    }  # (the footer)
    for args, report in (
        (("trace", "ops", str(port), "--target", "tpu"), "ops.md"),
        (("trace", "compare", str(ref), str(port)), "compare.md"),
    ):
        res = _in_process(*args, "--report", str(tmp_path / report))
        assert res.exit_code in (0, 1), (args, res.output)
        text = (tmp_path / report).read_text()
        assert "evil.example" in text  # the strings are there, as text
        tags = _rendered_tags(text)
        assert tags <= expected, (report, tags - expected)
        assert not [ln for ln in text.splitlines() if ln.startswith("# Heading")], report


def test_a_trace_of_more_tensors_than_porter_writes_is_refused_before_any_is_made(tmp_path):
    """250,000 empty tensors (16 MB, well within the 256 MiB bound) once cost `trace compare`
    27-55 s and 1.5-1.8 GB in safetensors' load before the manifest was looked at: a file of
    more tensors than a trace holds is refused from its header, in one line naming the count."""
    entries = ",".join(f'"m{i}.0.stats":{{"dtype":"F32","shape":[0],"data_offsets":[0,0]}}' for i in range(250_000))
    meta = json.dumps({"porter.trace": json.dumps({**_manifest(), "schema": "porter.trace/1"})})
    header = f'{{"__metadata__":{meta},{entries}}}'.encode()
    (tmp_path / "many.safetensors").write_bytes(struct.pack("<Q", len(header)) + header)
    for args in (
        ("trace", "ops", "many.safetensors", "--target", "xla"),
        ("trace", "compare", "many.safetensors", "many.safetensors"),
    ):
        _one_line_error(porter(*args, cwd=tmp_path), "many.safetensors", "250000 tensors", "at most")


def test_a_tensor_count_is_not_hidden_by_a_json_escape_in_the_header(tmp_path):
    """The count above was taken from the header's bytes (`"data_offsets"`); the same key written
    `"data\\u005foffsets"` (one JSON escape, the same name to safetensors) counted none, and
    250,000 empty tensors cost `trace ops` 13 s and 1.1 GB before it was refused for another
    reason. The entries of the parsed header are counted too, before any tensor is made."""
    entries = ",".join(
        f'"m{i}.0.stats":{{"dtype":"F32","shape":[0],"data\\u005foffsets":[0,0]}}' for i in range(250_000)
    )
    meta = json.dumps({"porter.trace": json.dumps({**_manifest(), "schema": "porter.trace/1"})})
    header = f'{{"__metadata__":{meta},{entries}}}'.encode()
    (tmp_path / "many.safetensors").write_bytes(struct.pack("<Q", len(header)) + header)
    _one_line_error(
        porter("trace", "ops", "many.safetensors", "--target", "xla", cwd=tmp_path),
        "many.safetensors",
        "250000 tensors",
        "at most",
    )


MANY_OUTPUTS = """
import torch, torch.nn as nn
class Many(nn.Module):
    def forward(self, x):
        return tuple(x[:, :1] * i for i in range(40))
class M(nn.Module):
    def __init__(self):
        super().__init__(); self.fc = nn.Linear(4, 3); self.many = Many()
    def forward(self, x):
        return sum(self.many(self.fc(x)))
torch.manual_seed(0)
model = M()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    loss = model(torch.ones(2, 4)).pow(2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
"""


@pytest.mark.slow
def test_a_module_that_returns_many_tensors_is_recorded_within_the_bound(tmp_path):
    """A module's output is recorded by at most `outputs_per_call` tensors (a module returning
    500,000 made a trace porter could not read back in a minute), and the manifest's notes say
    what the bound left out."""
    need("torch")
    (tmp_path / "train.py").write_text(MANY_OUTPUTS)
    out = porter(
        "trace", "record", "-o", "t.safetensors", "--steps", "2", "--", sys.executable, "train.py", cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    from porter.verify.tracefile import read_trace

    manifest = read_trace(tmp_path / "t.safetensors").manifest
    outputs = {m["key"]: len(m["outputs"]) for m in manifest["modules"]}
    assert outputs == {"fc": 1, "many": 16, "(model)": 1}, outputs
    assert any("returned 40" in n and "(16)" in n for n in manifest["notes"]), manifest["notes"]


class _CountedTensors(dict):
    """The file's tensors, counting how many are visited."""

    visited = 0

    def items(self):
        for item in dict.items(self):
            _CountedTensors.visited += 1
            yield item


def test_a_trace_of_many_ranks_is_read_in_one_pass_over_its_tensors(tmp_path, monkeypatch):
    """Each rank's tensors were found by a pass over all the file's tensors: a trace of 20,000
    (empty) rank manifests and 150,000 tensors kept `trace ops` busy past two minutes, and
    `trace compare` did it again per rank."""
    torch = need("torch")
    import safetensors.torch

    from porter.verify.tracefile import read_trace

    ranks = 300
    tensors = {**_tensors(torch), **{f"rank{r}.x{i}": torch.zeros(0) for r in range(1, ranks + 1) for i in range(3)}}
    _write(tmp_path / "t.safetensors", {**_manifest(), "schema": "porter.trace/1", "ranks": [{}] * ranks}, tensors)
    load = safetensors.torch.load
    monkeypatch.setattr(safetensors.torch, "load", lambda data: _CountedTensors(load(data)))
    _CountedTensors.visited = 0
    trace = read_trace(tmp_path / "t.safetensors")
    assert trace.world_size == ranks + 1
    views = [trace.rank(r) for r in range(trace.world_size)]
    assert [sorted(v.tensors) for v in views[1:3]] == [["x0", "x1", "x2"]] * 2
    assert sorted(views[0].tensors) == sorted(_tensors(torch))
    # once to check the manifests and once for the views (before: once per rank, each time)
    assert _CountedTensors.visited <= 3 * len(tensors), (_CountedTensors.visited, len(tensors))


def test_manifest_control_characters_do_not_reach_an_html_report(tmp_path):
    """`trace compare --report x.html`: a label with ESC and a C1 CSI from the other machine's
    trace was written raw into the page's text and its loss chart (`cat x.html` obeyed it)."""
    ref, _ = _sides(tmp_path)
    port = {
        **_manifest(),
        "schema": "porter.trace/1",
        "side": {"label": "xla " + ESC + "\u009b2J", "kind": "xla", "notes": [ESC], "versions": {"torch": ESC}},
        "devices": {"losses": ["xla"], "parameters": {"xla": 1}},
    }
    port = _write(tmp_path / "port.safetensors", port)
    porter("trace", "compare", str(ref), str(port), "--report", "c.html", cwd=tmp_path)
    page = (tmp_path / "c.html").read_text()
    assert "\\x1b" in page
    assert not [c for c in page if (ord(c) < 32 and c not in "\t\n\r") or 0x7F <= ord(c) < 0xA0], "raw controls"


@pytest.mark.parametrize(
    "command",
    [
        ("trace", "ops", "{bad}", "--target", "xla", "--report", "o.json"),
        ("trace", "ops", "{bad}", "--target", "neuron", "--report", "o.md"),
        ("trace", "compare", "{good}", "{bad}", "--report", "c.html"),
        ("trace", "compare", "{bad}", "{bad}", "--report", "c.md"),
    ],
)
def test_a_lone_surrogate_in_a_manifest_string_is_shown_escaped(tmp_path, command):
    """JSON holds any lone surrogate (`"\\ud800"`), UTF-8 encodes none: a label, a note or an
    operator's name holding one was a UnicodeEncodeError traceback in `trace ops` and "a field is
    not what porter writes" (no report) in `trace compare --report x.html`."""
    lone = "a\ud800b\udfffc"
    good, _ = _sides(tmp_path)
    evil = {**_manifest(label="xla" + lone), "schema": "porter.trace/1", "notes": ["n" + lone], "ops_scope": lone}
    evil["side"]["notes"] = [lone]
    evil["side"]["versions"] = {"torch" + lone: lone}
    evil["ops"][0]["op"] = "aten::x" + lone
    evil["precision"] = {"regime": "f" + lone}
    evil["devices"] = {"losses": ["xla"], "parameters": {"xla": 1}}
    bad = _write(tmp_path / "bad.safetensors", evil)
    out = porter(*(a.format(good=good, bad=bad) for a in command), cwd=tmp_path)
    shown = out.stdout + out.stderr
    assert b"Traceback" not in shown and b"not what porter writes" not in shown, shown
    assert out.returncode in (0, 1, 2), shown
    assert b"\\ud800" in out.stdout, out.stdout  # shown as an escape
    report = tmp_path / command[-1]
    assert report.is_file(), shown
    assert "\\ud800" in report.read_text(encoding="utf-8")


@pytest.mark.parametrize("command", ["ops", "compare"])
@pytest.mark.parametrize("where", ["afile/x.{suffix}", "/proc/x.{suffix}"])
def test_a_report_that_cannot_be_written_is_one_line(tmp_path, command, where):
    """`trace ops --report` under a file, or in /proc, ended in an OSError traceback (lint,
    rewrite, parity-check and `trace compare` said it in one line)."""
    good, port = _sides(tmp_path)
    (tmp_path / "afile").write_text("x")
    suffix = "json" if command == "ops" else "md"
    args = ["ops", str(port), "--target", "xla"] if command == "ops" else ["compare", str(good), str(port)]
    out = porter("trace", *args, "--report", where.format(suffix=suffix), cwd=tmp_path)
    err = _one_line_error(out, "cannot write --report")
    if where.startswith("afile"):  # "File exists" (mkdir's), which named neither afile nor why
        assert f"cannot write --report {where.format(suffix=suffix)}: afile is not a folder" in err, err
    assert (tmp_path / "afile").read_text() == "x"


@pytest.mark.parametrize("command", ["ops", "compare"])
@pytest.mark.parametrize("how", ["same", "link", "hardlink"])
def test_a_report_naming_a_trace_read_is_refused_and_the_trace_kept(tmp_path, command, how):
    """A trace named with a report's suffix (`run.md`, `run.json`: `trace record -o` takes any
    name) was overwritten by its own report: `trace compare ref run.md --report run.md`."""
    import os

    good, port = _sides(tmp_path)
    suffix = "json" if command == "ops" else "md"
    trace = port.rename(tmp_path / f"run.{suffix}")
    kept = trace.read_bytes()
    report = {"same": trace, "link": tmp_path / f"r.{suffix}", "hardlink": tmp_path / f"h.{suffix}"}[how]
    if how == "link":
        report.symlink_to(trace.name)
    elif how == "hardlink":
        os.link(trace, report)
    args = ["ops", trace.name, "--target", "xla"] if command == "ops" else ["compare", good.name, trace.name]
    out = porter("trace", *args, "--report", report.name, cwd=tmp_path)
    _one_line_error(out, "is the trace", "itself")
    assert trace.read_bytes() == kept


def test_a_text_field_that_reads_nan_or_inf_stays_text(tmp_path):
    """JSON has no NaN: porter writes a non-finite number as the string "nan" / "inf" and reads
    such strings back as numbers. Read back everywhere, a run whose script raised
    `RuntimeError("nan")` (its error message), a module or parameter named `inf`, or a label
    "-inf" left a trace porter refused ("`error.message` is not of type str"): parity-check lost
    that side's trace, and `trace compare` could not read it. Numbers still come back."""
    torch = need("torch")
    from porter.verify.tracefile import read_trace, write_trace

    ref, port = _sides(tmp_path)
    manifest = read_trace(port).manifest
    manifest["error"] = {"type": "RuntimeError", "message": "nan", "location": "inf"}
    manifest["modules"][0]["key"] = "inf"
    manifest["parameters"][0]["name"] = "nan"
    manifest["side"]["label"] = "-inf"
    manifest["steps"][0]["loss"] = float("nan")
    manifest["steps"][1]["step_time_s"] = float("inf")
    written = write_trace(tmp_path / "text.safetensors", manifest, _tensors(torch))
    back = read_trace(written).manifest
    assert back["error"] == {"type": "RuntimeError", "message": "nan", "location": "inf"}
    assert (back["modules"][0]["key"], back["parameters"][0]["name"], back["side"]["label"]) == ("inf", "nan", "-inf")
    assert back["steps"][0]["loss"] != back["steps"][0]["loss"] and back["steps"][1]["step_time_s"] == float("inf")
    out = porter("trace", "compare", str(ref), str(written), cwd=tmp_path)  # exit 2: the side's own error
    assert b"not a trace porter wrote" not in out.stderr and b"RuntimeError" in out.stdout, out.stderr.decode()


def test_a_command_argument_folder_or_host_that_reads_nan_or_inf_stays_text(tmp_path):
    """The command's own arguments (`python train.py --max-grad-norm inf`), the folder it ran
    in and the host's name were read back as numbers: `trace compare` of such a run's trace
    ended in "a field is not what porter writes (TypeError: sequence item 3: expected str
    instance, float found)" (found recording a real program run with `inf` in its argv,
    twenty-second read)."""
    torch = need("torch")
    from porter.verify.tracefile import read_trace, write_trace

    ref, port = _sides(tmp_path)
    manifest = read_trace(port).manifest
    manifest["command"] = ["python", "train.py", "--max-grad-norm", "inf", "--floor", "-inf", "nan"]
    manifest["tree"] = "nan"
    manifest["host"] = {"hostname": "inf", "platform": "Linux", "machine": "x86_64"}
    written = write_trace(tmp_path / "argv.safetensors", manifest, _tensors(torch))
    back = read_trace(written).manifest
    assert back["command"] == manifest["command"] and back["tree"] == "nan" and back["host"]["hostname"] == "inf"
    out = porter("trace", "compare", str(ref), str(written), cwd=tmp_path)
    assert out.returncode in (0, 1), out.stderr.decode()
    assert b"--max-grad-norm inf --floor -inf nan" in out.stdout


def test_a_manifest_of_more_processes_than_porter_records_is_refused_before_it_is_walked(tmp_path):
    """Tensors were bounded, ranks were not: a 4 MB trace of a million empty rank manifests (far
    inside the 256 MiB bound) ran `trace compare` past two minutes and 4 GB, growing with the
    file. porter records one node's processes; a manifest of more is refused in one line."""
    from porter.verify.tracefile import MAX_TRACE_PROCESSES

    manifest = {**_manifest(), "schema": "porter.trace/1", "ranks": [{}] * 1_000_000}
    big = _write(tmp_path / "big.safetensors", manifest)
    for args in (("trace", "compare", str(big), str(big)), ("trace", "ops", str(big), "--target", "xla")):
        out = porter(*args, cwd=tmp_path, timeout=60)
        _one_line_error(out, "1000001 processes", f"at most {MAX_TRACE_PROCESSES}")
    # a world porter does record is read as before
    fits = _write(tmp_path / "fits.safetensors", {**manifest, "ranks": [{}] * (MAX_TRACE_PROCESSES - 1)})
    assert porter("trace", "ops", str(fits), "--target", "xla", cwd=tmp_path).returncode in (0, 1)


def test_a_torchrun_world_larger_than_a_trace_holds_is_a_usage_error():
    from porter.verify.script import launch_of

    assert launch_of(["torchrun", "--nproc-per-node", "8", "train.py"]).nproc == 8
    for n in ("0", "100000"):
        with pytest.raises(ValueError, match="porter records 1 to"):
            launch_of(["torchrun", "--nproc-per-node", n, "train.py"])


def test_a_tensor_of_a_dtype_torch_has_no_type_for_is_one_line(tmp_path):
    """safetensors reads dtypes its torch mapping lacks (`F8_E8M0`, a float8 scale format): the
    load ended in a KeyError traceback in `trace ops` and `trace compare` (seventeenth read)."""
    manifest = json.dumps({**_manifest(), "schema": "porter.trace/1"})
    entries, body = {}, b""
    for name, n in (("m0.0.stats", 8), ("m0.0.sample", 6), ("p0.stats", 8), ("p0.sample", 12)):
        entries[name] = {"dtype": "F32", "shape": [n], "data_offsets": [len(body), len(body) + 4 * n]}
        body += b"\0" * 4 * n
    entries["m0.0.sample"] = {"dtype": "F8_E8M0", "shape": [24], "data_offsets": entries["m0.0.sample"]["data_offsets"]}
    header = json.dumps({"__metadata__": {"porter.trace": manifest}, **entries}).encode()
    (tmp_path / "e8m0.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + body)
    for args in (
        ("trace", "ops", "e8m0.safetensors", "--target", "xla"),
        ("trace", "compare", "e8m0.safetensors", "e8m0.safetensors"),
    ):
        _one_line_error(porter(*args, cwd=tmp_path), "e8m0.safetensors", "F8_E8M0")


def _strict_json(text: str):
    """JSON as RFC 8259 (and JavaScript's JSON.parse, Go, serde) reads it: no NaN, no Infinity."""

    def refuse(token):
        raise ValueError(f"{token} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_a_json_report_of_a_loss_that_went_nan_is_json(tmp_path):
    """A port whose loss went NaN (the commonest failure a parity check reports) gave a
    `--report x.json` holding `NaN` and `Infinity` tokens: Python reads them, JSON readers
    (JSON.parse in a CI dashboard) refuse the file. Non-finite numbers are written as the trace
    manifest writes them, the strings "nan", "inf", "-inf" (seventeenth read)."""
    torch = need("torch")
    from safetensors import safe_open

    ref, port = _sides(tmp_path)
    with safe_open(str(port), "pt") as f:
        manifest = json.loads(f.metadata()["porter.trace"])
    manifest["steps"][1]["loss"] = "nan"
    manifest["steps"][0]["grad_norm"] = "inf"
    tensors = {**_tensors(torch), "steps.loss": torch.tensor([1.0, float("nan")], dtype=torch.float64)}
    _write(port, manifest, tensors)
    out = porter("trace", "compare", str(ref), str(port), "--report", "r.json", cwd=tmp_path)
    assert out.returncode == 1, out.stderr.decode()
    data = _strict_json((tmp_path / "r.json").read_text())
    [row] = [s for s in data["steps"] if s["step"] == 2]
    assert row["ported_loss"] == "nan" and row["abs_diff"] == "nan", row
    assert data["steps"][0]["ported_grad_norm"] == "inf"
    # and the model-mode report (`parity-check --entry`), whose errors are as often infinite
    from porter.verify.report import to_json
    from porter.verify.result import ParityResult

    model = ParityResult("fail", [], {}, None, None, first_divergence={"max_abs": float("inf"), "m": float("nan")})
    assert _strict_json(to_json(model))["first_divergence"] == {"max_abs": "inf", "m": "nan"}


def test_the_module_mode_json_parity_report_holds_no_ci_log_command():
    """`parity-check`'s module-mode JSON report wrote a reason's `##vso[` (a module's name, an
    error) raw, as the script mode's did (twenty-sixth term2 read): `\\u0023` now, the same data."""
    from porter.verify.report import to_json
    from porter.verify.result import ParityResult

    said = "first diverging module: ##vso[task.setvariable variable=v]x"
    text = to_json(ParityResult("fail", [said], {}, None, None))
    assert "##vso[" not in text and _strict_json(text)["reasons"] == [said], text


def test_trace_record_writes_its_output_whole_never_through_a_link(tmp_path):
    """`trace record -o FILE` is a file named for output: the contract writes it whole and
    never through a link. The name was resolved and the run wrote the link's target (a
    repository shipping `trace.safetensors -> ~/.bashrc` had it overwritten by a CI step's
    `trace record -o trace.safetensors`); and an -o that cannot be written (a folder, a name
    under a file) was found only after the whole run, with the launcher's traceback
    (seventeenth read)."""
    need("torch")
    (tmp_path / "train.py").write_text("open('ran', 'w').write('x')\n")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (tmp_path / "t.safetensors").symlink_to(victim)
    out = porter("trace", "record", "-o", "t.safetensors", "--", sys.executable, "train.py", cwd=tmp_path)
    assert b"Traceback" not in out.stdout + out.stderr, (out.stdout + out.stderr).decode()[-3000:]
    assert victim.read_text() == "precious\n"
    assert not (tmp_path / "t.safetensors").is_symlink()
    from porter.verify.tracefile import read_trace

    assert read_trace(tmp_path / "t.safetensors").manifest["stopped"] == "script ended"
    (tmp_path / "ran").unlink()
    (tmp_path / "folder.safetensors").mkdir()
    (tmp_path / "afile").write_text("x")
    for name in ("folder.safetensors", "afile/t.safetensors"):
        out = porter("trace", "record", "-o", name, "--", sys.executable, "train.py", cwd=tmp_path)
        _one_line_error(out, name)
        assert not (tmp_path / "ran").exists(), name  # refused before the command ran


FAKE = "\n# verdict: PASS (exit 0)\r"


@pytest.mark.parametrize("terminal", [False, True], ids=["off-a-terminal", "on-a-terminal"])
def test_a_line_break_in_a_manifest_string_makes_no_line_of_its_own(tmp_path, terminal):
    """A title or a note is one line: a label or an operator scope from the trace holding a
    line break printed a line of the trace's own making (`# verdict: PASS (exit 0)` under
    `trace ops`'s title, in bold green on a terminal), and off a terminal its carriage return
    was written raw (a terminal or a CI log then overwrites the line) (seventeenth read)."""
    from tests.safety.test_terminal_env import _on_a_terminal

    good, _ = _sides(tmp_path)
    evil = {**_manifest(label="xla" + FAKE), "schema": "porter.trace/1", "ops_scope": "step 1" + FAKE}
    evil["devices"] = {"losses": ["xla"], "parameters": {"xla": 1}}
    evil["side"]["versions"] = {"torch": "2.9" + FAKE}
    evil["command"] = ["python", "train.py" + FAKE]
    evil["error"] = {"type": "E" + FAKE, "message": "m", "location": "x.py:1" + FAKE}
    bad = _write(tmp_path / "bad.safetensors", evil)
    for args in (["trace", "ops", str(bad), "--target", "tpu"], ["trace", "compare", str(good), str(bad)]):
        if terminal:
            _, shown = _on_a_terminal(args, tmp_path)
            shown = shown.replace("\r\n", "\n")  # the terminal's own line ends
        else:
            out = porter(*args, cwd=tmp_path)
            shown = (out.stdout + out.stderr).decode()
        import re

        plain = re.sub(r"\x1b\[[0-9;]*m", "", shown)  # a terminal's colours
        assert "verdict: PASS" in plain, plain  # the text is shown
        assert not [line for line in plain.splitlines() if line.lstrip(" │").startswith("# verdict")], (args[1], plain)
        assert "\r" not in shown, (args[1], shown)


def _without_dac_override() -> list[str]:
    """A command prefix that runs as root without the right to read or write past file modes
    (`setpriv` dropping CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH), as a user other than the
    files' owner runs; [] where that cannot be done (not root, no setpriv)."""
    import os
    import shutil

    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return []
    drop = "-dac_override,-dac_read_search"
    return ["setpriv", f"--bounding-set={drop}", f"--inh-caps={drop}"]


def test_an_output_folder_or_program_porter_cannot_use_is_one_line_and_said_before_the_run(tmp_path):
    """Tried without root's right past file modes (nineteenth read's leftover, "untried"): an
    `-o` in a folder of mode 555 ran the whole command, then said "the run did not finish: …
    cannot write the trace" (the run lost); a program of mode 000, or in a folder of mode 000,
    ended in the launcher's own traceback under the line. The folder is now tried before the
    command runs (one line, exit 2); a program that cannot be read is one line, as `python`
    says it, with no traceback of porter's."""
    need("torch")
    import os
    import subprocess

    prefix = _without_dac_override()
    if not prefix:
        pytest.skip("needs root and setpriv to run without CAP_DAC_OVERRIDE")
    (tmp_path / "train.py").write_text("open('ran', 'w').write('x')\n")
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o555)
    ro.chmod(0o555)
    (tmp_path / "closed").mkdir()
    (tmp_path / "closed" / "train.py").write_text("print('hi')\n")
    (tmp_path / "noread.py").write_text("print('hi')\n")
    (tmp_path / "noread.py").chmod(0)
    (tmp_path / "closed").chmod(0)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    cmd = [*prefix, sys.executable, "-m", "porter", "trace", "record", "--no-noise-floor", "-o"]
    try:
        out = subprocess.run(
            [*cmd, "ro/t.safetensors", "--", sys.executable, "train.py"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            timeout=300,
        )
        _one_line_error(out, "ro/t.safetensors")
        assert "cannot write -o ro/t.safetensors: Permission denied" in out.stderr.decode(), out.stderr.decode()
        assert not (tmp_path / "ran").exists()  # said before the command ran
        for program in ("noread.py", "closed/train.py"):
            out = subprocess.run(
                [*cmd, "t.safetensors", "--", sys.executable, program],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                timeout=300,
            )
            shown = (out.stdout + out.stderr).decode()
            assert out.returncode == 2, shown
            assert f"can't open file '{program}': Permission denied" in shown, shown
            assert "Traceback" not in shown, shown
    finally:
        (tmp_path / "closed").chmod(0o755)
        ro.chmod(0o755)


def test_an_output_that_is_not_a_trace_is_refused_before_the_run(tmp_path):
    """`trace record -o train.py` ran the script, then wrote its trace over it; `-o /dev/full`
    ran the command, then failed to write (seventeenth read). A file that is there is replaced
    only when it is a trace porter wrote; anything else is one line, before the command runs."""
    need("torch")
    import os

    (tmp_path / "train.py").write_text("open('ran', 'w').write('x')\n")
    names = ["train.py", *(["/dev/full"] if os.path.exists("/dev/full") else [])]
    for name in names:
        out = porter("trace", "record", "-o", name, "--", sys.executable, "train.py", cwd=tmp_path)
        _one_line_error(out, name)
        assert "is not a porter trace" in out.stderr.decode(), out.stderr.decode()
        assert not (tmp_path / "ran").exists(), name  # refused before the command ran
    assert (tmp_path / "train.py").read_text() == "open('ran', 'w').write('x')\n"
    out = porter("trace", "record", "-o", "t.safetensors", "--", sys.executable, "train.py", cwd=tmp_path)
    assert out.returncode == 0, (out.stdout + out.stderr).decode()[-3000:]
    (tmp_path / "ran").unlink()
    out = porter("trace", "record", "-o", "t.safetensors", "--", sys.executable, "train.py", cwd=tmp_path)
    assert out.returncode == 0 and (tmp_path / "ran").exists(), (out.stdout + out.stderr).decode()[-3000:]


@pytest.mark.parametrize(
    "option, value",
    [
        ("--timeout", "nan"),
        ("--timeout", "inf"),
        ("--timeout", "1e20"),
        ("--timeout", "-5"),
        ("--max-output", "nan"),
        ("--max-output", "inf"),
        ("--max-output", "-1"),
        ("--max-memory", "inf"),
        ("--max-memory", "1e30"),
        ("--max-memory", "0"),
        ("--seed", "-1"),
        ("--seed", "99999999999999999999999"),
        ("--rtol", "nan"),
        ("--rtol", "-1"),
        ("--atol", "inf"),
        ("--atol", "-inf"),
    ],
)
def test_a_number_no_run_can_use_is_a_usage_error_before_anything_runs(tmp_path, option, value):
    """The numbers of `trace record`, `trace compare` and `parity-check`: a NaN, infinite, huge
    or negative timeout, output cap, memory limit or seed ran the whole command first and then
    ended in a traceback (OverflowError, numpy's "Seed must be between 0 and 2**32 - 1",
    setrlimit's SubprocessError); `--rtol -1` was blamed on the traces ("a field is not what
    porter writes"); `--atol inf` passed any port (seventeenth read)."""
    good, port = _sides(tmp_path)
    (tmp_path / "train.py").write_text("open('ran', 'w').write('x')\n")
    run = ("--", sys.executable, "train.py")
    commands = {
        "--rtol": [
            ("trace", "compare", str(good), str(port)),
            ("parity-check", "--ported", ".", "--original", ".", *run),
        ],
        "--atol": [
            ("trace", "compare", str(good), str(port)),
            ("parity-check", "--ported", ".", "--original", ".", *run),
        ],
    }.get(
        option,
        [("trace", "record", "-o", "t.safetensors", *run), ("parity-check", "--ported", ".", "--original", ".", *run)],
    )
    import os

    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        for args in commands:
            at = args.index("--") if "--" in args else len(args)
            res = _in_process(*args[:at], option, value, *args[at:])
            assert res.exit_code == 2, (args, res.output)
            assert option in res.output and "Traceback" not in res.output, res.output
            assert not (tmp_path / "ran").exists(), args  # refused before the command ran
    finally:
        os.chdir(old)


@pytest.mark.parametrize(
    "ref_losses, port_losses",
    [([1e308, -1e308], [-1e308, 1e308]), ([1e308, 1e308], [1e308, 1e308]), ([5e-324, 0.0], [0.0, 5e-324])],
    ids=["span-past-the-floats", "flat-at-1e308", "subnormal"],
)
def test_the_loss_chart_draws_both_curves_at_any_finite_loss(tmp_path, ref_losses, port_losses):
    """The HTML report's loss chart: losses spanning ±1e308 (a span past the largest float) drew
    no curve at all (a NaN coordinate: the seventeenth read's leftover); a flat curve at 1e308
    (1e308 + 0.5 is 1e308) ended `trace compare --report r.html` in a ZeroDivisionError, blamed
    on the traces (eighteenth read). Halving every value instead underflows 5e-324."""
    import re

    torch = need("torch")
    ref, port = _sides(tmp_path)
    for path, losses in ((ref, ref_losses), (port, port_losses)):
        from safetensors import safe_open

        with safe_open(str(path), "pt") as f:
            manifest = json.loads(f.metadata()["porter.trace"])
        for step, loss in zip(manifest["steps"], losses):
            step["loss"] = loss
        _write(path, manifest, {**_tensors(torch), "steps.loss": torch.tensor(losses, dtype=torch.float64)})
    out = porter("trace", "compare", str(ref), str(port), "--report", "r.html", cwd=tmp_path)
    assert out.returncode in (0, 1) and not out.stderr, out.stderr.decode()
    svg = (tmp_path / "r.html").read_text().split("<svg", 1)[1].split("</svg>", 1)[0]
    lines = re.findall(r'points="([^"]*)"', svg)
    assert len(lines) == 2 and all(len(pts.split()) == 2 for pts in lines), lines
    assert "nan" not in svg and "inf" not in svg, svg


def test_a_log_tail_shows_a_progress_bar_as_the_terminal_left_it(tmp_path):
    """A run's log tail (shown when it did not finish) with a progress bar's carriage returns:
    `trace record` printed it through rich, which dropped them (a hundred states of the bar run
    together on one line: the seventeenth read's leftover), and parity-check's plain output
    wrote them raw, going back over its own text. Both now show each line as the terminal left
    it (the bar's last state); a backspace steps back; other controls stay escapes."""
    from tests.safety.test_terminal_env import _on_a_terminal

    need("torch")
    (tmp_path / "train.py").write_text(
        "import sys\n"
        "for i in range(0, 101, 25):\n"
        "    sys.stdout.write(f'\\rtraining: {i:3d}%'); sys.stdout.flush()\n"
        "print('\\nbackX\\bY bell\\x07 crlf\\r')\n"
        "raise SystemExit('boom')\n"
    )
    record = ["trace", "record", "-o", "t.safetensors", "--no-noise-floor", "--", sys.executable, "train.py"]
    check = ["parity-check", "--original", ".", "--ported", ".", "--no-noise-floor", "--", sys.executable, "train.py"]
    for args in (record, check):
        out = porter(*args, cwd=tmp_path)
        shown = (out.stdout + out.stderr).decode()
        assert out.returncode == 2 and "boom" in shown, shown[-3000:]
        assert "training: 100%" in shown and "training:   0%" not in shown, shown[-3000:]
        assert "\r" not in shown and "backX" not in shown and "\\x08" not in shown, shown[-3000:]
        assert "backY bell\\x07 crlf\n" in shown, shown[-3000:]
    _, shown = _on_a_terminal(record, tmp_path)
    assert "training: 100%" in shown and "training:  25%" not in shown, shown[-3000:]


def test_a_full_disk_when_the_trace_is_written_is_one_line_and_keeps_the_file_there(tmp_path, monkeypatch):
    """`trace record` wrote the reference's trace twice: the side wrote it, then porter added
    the measured noise floor, and a full disk at the second write ended in an OSError traceback
    (eighteenth read). porter now writes it once, with its floor, when the run is over (the
    side writes in porter's own folder: twenty-second read); a full disk there is one line,
    exit 2, and the file at -o is kept as it was."""
    import errno
    import os

    from typer.testing import CliRunner

    from porter.cli import app

    need("torch")
    (tmp_path / "train.py").write_text(
        "import torch\nm = torch.nn.Linear(4, 2)\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
        "for i in range(3):\n    loss = m(torch.ones(3, 4)).sum()\n    opt.zero_grad(); loss.backward(); opt.step()\n"
    )
    replace = os.replace

    def full(a, b, *args, **kw):  # the side's own write (another process) is not reached
        if str(b).endswith(".safetensors"):
            raise OSError(errno.ENOSPC, "No space left on device", str(a))
        return replace(a, b, *args, **kw)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(os, "replace", full)
    earlier, _ = _sides(tmp_path)
    for kept in (None, earlier.read_bytes()):
        if kept is not None:
            (tmp_path / "t.safetensors").write_bytes(kept)
        res = CliRunner().invoke(app, ["trace", "record", "-o", "t.safetensors", "--", sys.executable, "train.py"])
        assert res.exit_code == 2 and isinstance(res.exception, SystemExit), (res.output, res.exception)
        assert "cannot write the trace" in res.output and "No space left on device" in res.output, res.output
        assert res.output.count("\n") == 1, res.output
        there = tmp_path / "t.safetensors"
        assert (there.read_bytes() if there.exists() else None) == kept
        assert not list(tmp_path.glob(".t.safetensors*"))  # no temporary left beside it


def test_a_manifest_is_walked_for_non_finite_numbers_only_when_a_string_may_read_one(tmp_path, monkeypatch):
    """Reading a trace walked every value of its manifest to read "nan"/"inf" strings back as
    numbers: with the spec walk, the depth walk and a torch call chain per sample it made
    `trace compare` of 1,024 ranks x 40 modules take 42 s (11.5 s of CPU; seventeenth read's
    leftover, now 7.2 s). A manifest whose text holds no string that can read so, plainly or
    through `\\u` escapes, is used as parsed; one that does is still read back."""
    torch = need("torch")
    from porter.verify import tracefile

    walked = []
    walk = tracefile._numbers_read_back
    monkeypatch.setattr(tracefile, "_numbers_read_back", lambda v, s: walked.append(1) or walk(v, s))
    ref, _ = _sides(tmp_path)
    assert tracefile.read_trace(ref).manifest["steps"][0]["loss"] == 1.0 and not walked
    for text in ('"nan"', '"n\\u0061n"', '"\\u006e\\u0061\\u006e"'):
        manifest = json.dumps({**_manifest(), "schema": "porter.trace/1"}).replace('"loss": 1.0', f'"loss": {text}')
        path = _write(tmp_path / "n.safetensors", manifest, _tensors(torch))
        walked.clear()
        loss = tracefile.read_trace(path).manifest["steps"][0]["loss"]
        assert walked and loss != loss, (text, loss)  # NaN, read back


@pytest.mark.parametrize("empty_side", ["reference", "ported"])
def test_samples_of_different_sizes_for_one_output_are_the_file_s_fault_not_a_pass(tmp_path, empty_side):
    """Both manifests say the output is [2, 3]; one file's sample holds no value. With the
    reference's empty, the module passed unseen (an empty sample was "all close"), whatever the
    port's values were: a wrong verdict from a malformed trace (eighteenth read). Samples of
    different sizes are now one line, as other fields past the reader's checks are."""
    torch = need("torch")
    ref, port = _sides(tmp_path)
    from safetensors import safe_open

    path = ref if empty_side == "reference" else port
    with safe_open(str(path), "pt") as f:
        manifest = f.metadata()["porter.trace"]
    tensors = {**_tensors(torch), "m0.0.sample": torch.zeros(0)}
    _write(path, manifest, tensors)
    other = port if empty_side == "reference" else ref
    with safe_open(str(other), "pt") as f:
        other_manifest = f.metadata()["porter.trace"]
    _write(other, other_manifest, {**_tensors(torch), "m0.0.sample": torch.full((6,), 100.0)})
    out = porter("trace", "compare", str(ref), str(port), cwd=tmp_path)
    _one_line_error(out, "samples of", "not what porter writes")


def test_a_trace_another_run_writes_at_the_same_output_meanwhile_is_not_taken_for_the_run_s(tmp_path, monkeypatch):
    """Two `trace record -o t.safetensors` at once: each run wrote its trace at -o and porter
    read it back from there, so a run reported the other's ("2 step(s)" for a run of 3) and
    added its noise floor to it (two real runs, twenty-second read). Here the other run's
    write lands between the run's end and porter's reading of its trace."""
    from typer.testing import CliRunner

    import porter.verify.script as script
    from porter.cli import app
    from porter.verify.tracefile import read_trace

    need("torch")
    other, _ = _sides(tmp_path)  # 2 steps, one module `fc`
    (tmp_path / "train.py").write_text(
        "import torch\nm = torch.nn.Linear(4, 2)\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
        "for i in range(5):\n    loss = m(torch.ones(3, 4)).sum()\n    opt.zero_grad(); loss.backward(); opt.step()\n"
    )
    dest = tmp_path / "t.safetensors"
    read_side = script._read_side

    def meanwhile(*args, **kw):
        dest.write_bytes(other.read_bytes())  # the other run finishes now
        return read_side(*args, **kw)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(script, "_read_side", meanwhile)
    args = ["trace", "record", "-o", "t.safetensors", "--steps", "3", "--no-noise-floor", "--"]
    res = CliRunner().invoke(app, [*args, sys.executable, "train.py"])
    assert res.exit_code == 0, res.output
    assert "3 step(s)" in res.output, res.output
    manifest = read_trace(dest).manifest
    assert manifest["steps_recorded"] == 3 and [m["type"] for m in manifest["modules"]] == ["Linear"]


def test_a_sigterm_while_the_run_goes_on_is_said_as_sigterm(tmp_path):
    """SIGTERM to `trace record` (or parity-check) while the command runs: the workers' own
    handler ended porter with exit 143, and porter said "interrupted (SIGINT)" (eighteenth
    read). The old trace at -o stays whole."""
    import os
    import signal
    import subprocess
    import time

    need("torch")
    ref, _ = _sides(tmp_path)
    (tmp_path / "t.safetensors").write_bytes(ref.read_bytes())
    (tmp_path / "train.py").write_text("import time\nopen('started', 'w').close()\ntime.sleep(120)\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "porter", "trace", "record", "-o", "t.safetensors", "--", sys.executable, "train.py"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        for _ in range(600):
            if (tmp_path / "started").exists():
                break
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 143 and err.decode().strip() == "porter: interrupted (SIGTERM).", (proc.returncode, err)
    assert (tmp_path / "t.safetensors").read_bytes() == ref.read_bytes()


def test_a_trace_s_tensors_are_made_when_read_and_a_comparison_holds_one_rank_s_at_a_time(tmp_path, monkeypatch):
    """`trace compare` of 1,024 ranks peaked near 920 MB: every tensor of both files was made
    when they were read (175 MB a trace of 86,000 tensors) and every rank's result was held to
    the end (eighteenth read's leftover). A file's tensors are now made when read and let go;
    the comparison goes rank by rank."""
    import gc

    import torch

    from porter.verify import tracecmp
    from porter.verify.tracefile import read_trace, write_trace

    def trace(path, ranks):
        tensors, manifests = {}, []
        for r in range(ranks):
            pre = f"rank{r}." if r else ""
            mods = []
            for k in range(10):
                tensors[f"{pre}m{k}.0.sample"] = torch.full((8,), float(k))
                tensors[f"{pre}m{k}.0.stats"] = torch.zeros(8)
                mods.append(
                    {"key": f"l{k}", "outputs": [{"shape": [8], "stats": f"m{k}.0.stats", "sample": f"m{k}.0.sample"}]}
                )
            tensors[f"{pre}steps.loss"] = torch.ones(2, dtype=torch.float64)
            steps = [{"loss": 1.0, "grad_norm": 1.0, "lr": [0.1]}] * 2
            manifests.append({"schema": "porter.trace/1", "steps": steps, "modules": mods})
        write_trace(path, {**manifests[0], "ranks": manifests[1:]}, tensors)
        return read_trace(path)

    def alive() -> int:
        return sum(1 for o in gc.get_objects() if issubclass(type(o), torch.Tensor))

    gc.collect()
    before = alive()
    ref, port = trace(tmp_path / "r.safetensors", 40), trace(tmp_path / "p.safetensors", 40)
    gc.collect()
    assert alive() - before < 50, "the files' 1,680 tensors were made when they were read"
    peak = []
    real = tracecmp._compare_one

    def counted(*args, **kwargs):
        gc.collect()
        peak.append(alive() - before)
        return real(*args, **kwargs)

    monkeypatch.setattr(tracecmp, "_compare_one", counted)
    res = tracecmp.compare_traces(ref, port)
    assert len(res.ranks) == 40 and len(peak) == 40
    assert max(peak) < 100, f"{max(peak)} tensors held while comparing a rank"


def test_a_platform_without_anonymous_memory_files_reads_traces_whole(tmp_path, monkeypatch):
    """Where `os.memfd_create` is refused (a seccomp sandbox) or missing, a trace is read as
    before, every tensor made at once: never an OSError traceback."""
    import errno
    import os

    import torch

    from porter.verify import tracefile

    path = tracefile.write_trace(tmp_path / "t.safetensors", {"steps": []}, {"steps.loss": torch.ones(2)})

    def refused(*args):
        raise OSError(errno.EPERM, "Operation not permitted")

    for patch in (refused, None):
        if patch is None:
            monkeypatch.delattr(os, "memfd_create")
        else:
            monkeypatch.setattr(os, "memfd_create", patch)
        t = tracefile.read_trace(path)
        assert torch.equal(t.tensors["steps.loss"], torch.ones(2))


def test_a_manifest_naming_one_tensor_twice_is_refused_in_one_line(tmp_path):
    """Module entries that all name the same two tensors: the file's tensor bound did not bound
    them (700,000 of them, an 83 MB file, cost `trace compare` 100 s and 2.2 GB). Porter names
    each tensor once; a manifest that names one twice is not one it wrote."""
    manifest = {**_manifest(), "schema": "porter.trace/1"}
    manifest["modules"] = [{**manifest["modules"][0], "key": f"fc{i}"} for i in range(3)]
    shared = {**manifest, "modules": manifest["modules"][:1]}
    shared["parameters"] = [{**shared["parameters"][0], "stats": "m0.0.stats"}]
    for name, m in (("modules", manifest), ("parameter", shared)):
        path = _write(tmp_path / f"{name}.safetensors", m)
        for args in (("trace", "compare", str(path), str(path)), ("trace", "ops", str(path), "--target", "xla")):
            res = _in_process(*args)
            assert res.exit_code == 2, (name, args[1], res.output)
            err = res.stderr
            assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
            assert "named twice" in err and "m0.0.stats" in err, err


def test_a_manifest_of_more_operator_entries_than_porter_writes_is_refused_in_one_line(tmp_path):
    """Operator entries name no tensor, so the file's tensor bound did not bound them: 700,000
    (a 66 MB file) cost `trace ops` 18 s of CPU, 2.1 GB and 95 MB of terminal rows. A trace
    porter writes holds at most 200,000, its ranks' together, counted before any is read."""
    manifest = {**_manifest(), "schema": "porter.trace/1"}
    manifest["ops"] = [{"op": f"aten::o{i}", "count": 1} for i in range(200_001)]
    path = _write(tmp_path / "t.safetensors", manifest)
    for args in (("trace", "ops", str(path), "--target", "xla"), ("trace", "compare", str(path), str(path))):
        res = _in_process(*args)
        assert res.exit_code == 2, (args[1], res.output[-500:])
        err = res.stderr
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
        assert "200001 operator entries" in err and "at most 200000" in err, err


def test_compare_for_another_target_than_the_port_was_recorded_for_says_so(tmp_path):
    """`trace compare --target neuron` of a port recorded for XLA printed what `--target xla`
    did and said nothing of it (twenty-fourth trace read's leftover). Without --target, the
    target is the one the port's trace names (its JSON report says it)."""
    from safetensors import safe_open

    ref, port = _sides(tmp_path)
    manifest = json.loads(safe_open(str(port), "pt").metadata()["porter.trace"])
    _write(port, {**manifest, "target": "xla"})
    said = "--target neuron, but the port's trace was recorded for --target xla and ran on xla"
    asked = porter("trace", "compare", str(ref), str(port), "--target", "neuron", cwd=tmp_path, columns=False)
    assert asked.returncode == 0 and said in asked.stdout.decode(), (asked.stdout, asked.stderr)
    for args in ((), ("--target", "xla")):
        out = porter("trace", "compare", str(ref), str(port), *args, "--report", "r.json", cwd=tmp_path, columns=False)
        assert out.returncode == 0 and "but the port's trace" not in out.stdout.decode(), (out.stdout, out.stderr)
        assert json.loads((tmp_path / "r.json").read_text())["config"]["target"] == "xla"
    _write(port, {**manifest, "target": "neuron"})
    out = porter("trace", "compare", str(ref), str(port), "--report", "r.json", cwd=tmp_path, columns=False)
    assert out.returncode == 0 and "but the port's trace" not in out.stdout.decode(), (out.stdout, out.stderr)
    assert json.loads((tmp_path / "r.json").read_text())["config"]["target"] == "neuron"


def test_trace_ops_says_the_tensors_no_manifest_entry_names(tmp_path):
    """`trace ops` reads a trace's operators only; a tensor the file holds that no manifest
    entry names was said by `trace compare` but not by `trace ops` (twenty-fifth trace read's
    leftover): now a note there and `unread` in its JSON report. A trace porter wrote has none."""
    torch = need("torch")
    ref, _ = _sides(tmp_path)
    plain = porter("trace", "ops", str(ref), "--target", "xla", cwd=tmp_path, columns=False).stdout.decode()
    assert "no manifest entry names" not in plain, plain
    manifest = {**_manifest(), "schema": "porter.trace/1"}
    edited = _write(tmp_path / "edited.safetensors", manifest, {**_tensors(torch), "zz.unknown": torch.ones(2)})
    report = tmp_path / "ops.json"
    out = porter("trace", "ops", str(edited), "--target", "xla", "--report", str(report), cwd=tmp_path, columns=False)
    assert out.returncode in (0, 1), out.stderr
    assert "holds 1 tensor(s) no manifest entry names ('zz.unknown')" in out.stdout.decode(), out.stdout.decode()
    [line] = json.loads(report.read_text())["unread"]
    assert line.startswith("the trace holds 1 tensor(s)") and "'zz.unknown'" in line, line
