"""The leftovers of the twenty-first read of the scaffold writers, closed in the twenty-second
("sleft", issue 24): each test failed on c17e310."""

from __future__ import annotations

from porter.kernels.inventory import scan
from porter.kernels.scaffold import write_scaffolds

KERNEL = """import triton
import triton.language as tl

@triton.jit
def scale(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * alpha, mask=m)
"""


def _package(tmp_path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_a_triton_launch_through_an_imported_module_s_attribute_is_a_call_of_its_kernel(tmp_path):
    # `ops.scale[grid](...)`: no call evidence, so `alpha` was typed by its name (a float by
    # guess) and make_inputs gave `n = 256` under a TODO, though the launch shows both
    _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/ops/__init__.py": "",
            "pkg/ops/scale.py": KERNEL,
            "pkg/use.py": "from .ops import scale as ops\n\ndef run(x, out):\n"
            "    ops.scale[(1,)](x, out, x.numel(), 0.5, BLOCK=64)\n",
            "pkg/other.py": "import pkg.ops.scale as kernels\n\ndef run(x, out):\n"
            "    kernels.scale[(1,)](x, out, out.numel(), 2, BLOCK=64)\n",
        },
    )
    inv = scan(tmp_path)
    (k,) = inv.kernels
    assert sorted((c.path, c.line) for c in k.calls) == [("pkg/other.py", 4), ("pkg/use.py", 4)]
    out = tmp_path / "out"
    write_scaffolds(inv, out, "xla")
    test = (out / "test_scale_xla_parity.py").read_text()
    assert "n = out_ptr.numel()  # as the launch at pkg/other.py:4 passes it" in test
    assert "alpha: int" in (out / "scale_op.py").read_text()  # the first launch read passes `2`


def test_an_attribute_launch_runs_the_module_it_names_not_the_file_s_own_kernel_of_that_name(tmp_path):
    # a file that defines `scale` and launches `fast.scale[...]` of another module: the launch is
    # that module's kernel's
    other = KERNEL.replace("alpha, BLOCK", "alpha, beta, BLOCK")
    _package(
        tmp_path,
        {
            "fast.py": other,
            "main.py": KERNEL + "\nimport fast\n\ndef run(x, out):\n"
            "    fast.scale[(1,)](x, out, x.numel(), 2.0, 3.0, BLOCK=64)\n",
        },
    )
    calls = {k.path: [c.line for c in k.calls] for k in scan(tmp_path).kernels}
    assert calls == {"fast.py": [13], "main.py": []}


def test_a_launch_through_self_reads_the_kernel_assigned_to_it_or_says_it_cannot(tmp_path):
    # `self._kernel = scale` then `self._kernel[grid](...)`: a call of `scale`; `self.k[grid]`
    # never assigned here gives its kernel's scaffold a TODO that says so, not silence
    text = KERNEL + (
        "\n\nclass Op:\n    def __init__(self):\n        self._kernel = scale\n\n"
        "    def forward(self, x, out):\n        self._kernel[(1,)](x, out, x.numel(), 2.0, BLOCK=64)\n"
        "        self.scale[(1,)](x, out, 7, 2.0, BLOCK=64)\n"
    )
    _package(tmp_path, {"k.py": text})
    inv = scan(tmp_path)
    (k,) = inv.kernels
    assert [c.line for c in k.calls] == [16]
    out = tmp_path / "out"
    write_scaffolds(inv, out, "xla")
    test = (out / "test_scale_xla_parity.py").read_text()
    assert "# TODO(porter): launched as `self.scale[...](...)` at k.py:17, whose module porter cannot" in test


def test_a_utf16_or_utf32_cu_file_is_named_as_not_read(tmp_path):
    # nvcc 13.0 (error: unrecognized token), gcc and clang compile no such file; porter decoded it
    # as UTF-8, found no kernel in it, and said nothing
    source = "__global__ void k(float* x) { x[0] = 1; }\n"
    (tmp_path / "a.cu").write_bytes(source.encode("utf-16"))
    (tmp_path / "b.cuh").write_bytes(source.encode("utf-32"))
    (tmp_path / "c.cu").write_bytes(b"\xef\xbb\xbf" + source.encode())  # UTF-8's mark: read
    inv = scan(tmp_path)
    assert [(k.name, k.path) for k in inv.kernels] == [("k", "c.cu")]
    assert sorted(p.split(":")[0] for p in inv.problems if "UTF-16/UTF-32 text" in p) == ["a.cu", "b.cuh"]
    assert len(inv.problems) == 2
