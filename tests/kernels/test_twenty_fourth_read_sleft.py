"""The twenty-third read's scaffold leftovers, closed by the twenty-fourth read's "sleft" (issue 24):
each failed on 9d8198a."""

from __future__ import annotations

import os

from porter.kernels.inventory import scan

HEADER = """#pragma once
__global__ void scale_kernel(float* out, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] * 2.0f;
}
"""
LAUNCH = """#include "k.h"
void run(float* o, const float* x, int n) { scale_kernel<<<(n + 255) / 256, 256>>>(o, x, n); }
"""


def test_a_header_the_tree_holds_under_two_names_is_read_once(tmp_path):
    """A link to a kernel header beside it (and to a .cu) is one file to the compiler: its kernel was
    listed once per name, each given every launch (two scaffolds of one kernel)."""
    (tmp_path / "k.h").write_text(HEADER)
    (tmp_path / "a.cu").write_text(LAUNCH)
    os.symlink("k.h", tmp_path / "alias.h")
    os.symlink("a.cu", tmp_path / "a_link.cu")
    kernels = [(k.name, k.path, len(k.calls)) for k in scan(tmp_path).kernels]
    assert kernels == [("scale_kernel", "k.h", 1)]
