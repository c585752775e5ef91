"""The thirtieth read's helper on the scaffold leftovers (sleft, issue 24): each test failed on 34fb428."""

from __future__ import annotations

from pathlib import Path

from porter.analysis import native_ops
from porter.kernels.inventory import scan

_CUDA_FOO = b'TORCH_LIBRARY_IMPL(ns, CUDA, m) { m.impl("foo", &foo_cuda); }\n'


def _keys(source: bytes, name: str = "a.cu") -> list[str]:
    return sorted(key for ns, op, key in native_ops.registrations(source, Path(name)) if op == "foo")


def _cuda_only(source: bytes, name: str = "a.cu") -> bool:
    return "foo" in native_ops.cuda_only_ops([(name, source)]).get("ns", {})


def test_a_block_comment_closed_through_a_line_splice_ends_there(tmp_path):
    # `/* old *\` then `/` on the next line: the compiler splices the lines first, so `*/` closes the
    # comment there (twenty-ninth scaffold read's leftover); porter read the comment on to the next
    # `*/`, and the kernel between was listed nowhere, its launch dropped
    (tmp_path / "k.cu").write_text(
        "/* an old note *\\\n/\n__global__ void shown_k(float* x) { x[0] = 1; }\n"
        "/* another */\nvoid go(float* x) { shown_k<<<1, 1>>>(x); }\n"
        # (and a splice between a comment's `/` and `*` opens one: `hidden_k` is commented out)
        "/\\\n* __global__ void hidden_k(float* x) { x[0] = 2; } */\n"
    )
    inventory = scan(tmp_path)
    assert [(k.name, [c.line for c in k.calls]) for k in inventory.kernels] == [("shown_k", [5])]
    # the registration reader reads comments so too: a CPU kernel after such a comment is one
    source = b"/* was CUDA only *\\\n/\n" + _CUDA_FOO + b'TORCH_LIBRARY_IMPL(ns, CPU, m) { m.impl("foo", &f); }\n/* */\n'
    assert _keys(source) == ["CPU", "CUDA"]
    assert not _cuda_only(source)
