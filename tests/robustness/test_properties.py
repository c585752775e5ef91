"""Property tests: rewrite never crashes, its output parses, a second run is a no-op, and a
module without CUDA tokens comes back byte-identical."""

from __future__ import annotations

import hypothesmith
import libcst as cst
from hypothesis import HealthCheck, given, settings, strategies as st

from porter.pipeline.port import port_source
from porter.core.findings import FileStatus
from porter.analysis.prefilter import admits
from porter.config.settings import Settings

TARGETS = [Settings(target=t) for t in ("xla", "neuron", "tpu")]

SNIPPETS = [
    "x = x.cuda()",
    "x = x.cuda(non_blocking=True)",
    'device = "cuda" if torch.cuda.is_available() else "cpu"',
    'y = torch.zeros(3, device="cuda:1")',
    "torch.cuda.synchronize()",
    "torch.cuda.manual_seed_all(0)",
    "n = torch.cuda.device_count()",
    'state = torch.load(p, map_location="cuda")',
    "if t.is_cuda:\n    pass",
    "model = model.to(0)",
    'with torch.autocast(device_type="cuda", dtype=torch.float16):\n    y = m(x)',
    'path = "runs/cuda_baseline/"',
    "# a comment that mentions cuda",
    "z = x + 1",
    "def f(a, b=2):\n    return a * b",
    "for i in range(3):\n    loss.backward()\n    opt.step()",
]

module_text = st.lists(st.sampled_from(SNIPPETS), min_size=1, max_size=8).map(
    lambda parts: "import torch\n\n" + "\n".join(parts) + "\n"
)
line_endings = st.sampled_from(["\n", "\r\n"])


def _parses(source: bytes) -> bool:
    try:
        cst.parse_module(source)
    except (cst.ParserSyntaxError, UnicodeDecodeError, RecursionError):
        return False
    return True


def _check(source: bytes, s: Settings) -> None:
    """Output parses, a second run changes nothing, and a source libcst parses is never an
    error (porter refuses only what it cannot read)."""
    first = port_source(source, "prop.py", s)
    if first.status is FileStatus.ERROR:
        assert not _parses(source), first.reason
    if first.status is FileStatus.CHANGED:
        cst.parse_module(first.new_source)
        second = port_source(first.new_source, "prop.py", s)
        assert second.status is not FileStatus.CHANGED, second.new_source  # idempotent
    else:
        assert first.new_source is None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(module_text, line_endings, st.sampled_from(TARGETS))
def test_cuda_snippets_port_idempotently(text, eol, s):
    _check(text.replace("\n", eol).encode(), s)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=400))
def test_arbitrary_bytes_never_crash(data):
    for s in TARGETS[:1]:
        result = port_source(b"import torch\nx.cuda()\n" + data, "b.py", s)
        assert result.new_source is None or cst.parse_module(result.new_source)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_grammar())
def test_generated_python_round_trips(code):
    source = code.encode("utf-8", "surrogatepass")
    s = TARGETS[0]
    result = port_source(source, "gen.py", s)
    if not admits(source, s):
        assert result.status is FileStatus.SKIPPED and result.new_source is None
    _check(source, s)
    # with CUDA code appended the file still ports to something that parses
    _check(source + b"\nimport torch\nx = torch.zeros(1).cuda()\n", s)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_node())
def test_generated_modules_without_cuda_tokens_are_byte_identical(code):
    source = code.encode("utf-8", "surrogatepass")
    s = TARGETS[1]
    result = port_source(source, "gen.py", s)
    if not admits(source, s):
        assert result.status is FileStatus.SKIPPED and result.new_source is None
    else:
        _check(source, s)
