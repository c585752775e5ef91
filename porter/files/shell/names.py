"""Which names are CUDA's: the words of CUDA and its libraries (porter.files.shell.env reads
variables with them, porter.files.shell.native build defines)."""

from __future__ import annotations

import re

LIBRARIES = "CUDA|CUDNN|NVIDIA|CUBLAS|CUBLASLT|NVTE|CUFFT|CURAND|CUSPARSE|NVSHMEM|NVML"
# a define's name: the words as they are (`-DWITH_CUDAX` is no CUDA define)
_CUDA_WORD = re.compile(rf"(?:[A-Z0-9]+_)*(?:{LIBRARIES})(?:_[A-Z0-9]+)*")


def cuda_name(name: str) -> bool:
    """Whether `name` (a define's) has CUDA, cuDNN, NVIDIA or a CUDA library as one of its words."""
    return _CUDA_WORD.fullmatch(name) is not None
