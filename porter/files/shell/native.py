"""A native build switched to CUDA by a define (LCH006): `cmake -DGGML_CUDA=ON`,
`CMAKE_ARGS="-DGGML_CUDA=on" pip install llama-cpp-python`, `-DCMAKE_CUDA_ARCHITECTURES=native`,
`NVCCFLAGS += -DGGML_CUDA_FORCE_MMQ`.

The define is a word `-D<NAME>[=value]` whose NAME has CUDA (or cuDNN, cuBLAS, NVIDIA) as one of
its words, as porter.files.shell.env reads variable names. Where it is written (a command's
argument, an assigned value that a build reads) does not matter: it builds the package's CUDA
kernels, which the target cannot run (`=OFF`, `=0` build without them: no finding). Reported, never
rewritten: which backend the package builds instead (its CPU build, or one for the target) is the package's choice.
"""

from __future__ import annotations

import re

from porter.files.shell.names import cuda_name
from porter.files.sites import Site

_DEFINE = re.compile(r"(?<![\w-])-D([A-Za-z_][A-Za-z0-9_]*)(?:=([^\s\"';]*))?")
_OFF = frozenset({"off", "0", "false", "no", "n"})  # `-DGGML_CUDA=OFF` builds without CUDA


def defines(raw: str, base: int) -> list[Site]:
    """The LCH006 sites of the CUDA defines in `raw`, which starts at character `base`."""
    return [
        Site(
            "LCH006",
            base + m.start(),
            base + m.end(),
            None,
            message=f"`-D{m.group(1)}` builds native code with its CUDA backend",
        )
        for m in _DEFINE.finditer(raw)
        if cuda_name(m.group(1)) and (m.group(2) or "").lower() not in _OFF
    ]
