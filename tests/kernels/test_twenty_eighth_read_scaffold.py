"""The twenty-eighth read of the scaffold writers (issue 24): each test failed on 110255d."""

from __future__ import annotations

from porter.kernels.inventory import scan

RAW = (
    "static const char* kSrc = R\"(\n"
    "extern \"C\" __global__ void jit_k(float* q) { q[0] = 1; }\n"
    "/* a comment opener in the NVRTC source\n"
    ")\";\n"
    "static const char* kQuote = u8R\"x(a quote \" and \"( )\" inside)x\";\n"
    "__global__ void real_k(float* x, int n) { x[0] = n; }\n"
    "void go(float* x, int n) { real_k<<<1, 1>>>(x, n); }\n"
    "const char* FOOR = \"(\"; __global__ void after_k(float* x) { x[0] = 1; }\n"
)


def test_a_raw_string_literal_is_one_literal_to_its_delimiter(tmp_path):
    # a raw string (`R"(...)"`: an NVRTC source) was read as a plain string: its `/*` opened a
    # comment that blanked every kernel after it (real_k, its launch: listed nowhere), and the
    # `__global__` quoted in it was listed as a kernel of the file
    (tmp_path / "k.cu").write_text(RAW)
    inventory = scan(tmp_path)
    assert [(k.name, k.line) for k in inventory.kernels] == [("real_k", 6), ("after_k", 8)]
    assert [(c.line, c.args) for c in inventory.kernels[0].calls] == [(7, ["x", "n"])]
