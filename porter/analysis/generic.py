"""Whether a project already picks its device generically.

torchtitan-style code asks torch which accelerator is there
(`torch._utils._get_available_device_type()`, `torch.accelerator.current_accelerator()`,
`_get_device_module(device_type)`, `getattr(torch, device_type)`) instead of naming CUDA. On a
target that keeps that selection (neuron and tpu implement `torch.accelerator`), the port goes
on running on CUDA too, so settings that are harmless off CUDA (cuDNN and TF32 switches, an
SDPA kernel preference, inductor as the compile default) stay as they are: rewriting them
changes the CUDA run and gives the target nothing. A bytes scan: the engine never imports torch.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from porter.core.reading import MAX_PARSE_BYTES, read_regular
from porter.config.settings import PORTABLE_TARGETS, Settings

SELECTION = re.compile(
    rb"_get_available_device_type\s*\("
    rb"|accelerator\.current_accelerator\s*\("
    rb"|_get_device_module\s*\("
    rb"|getattr\(\s*torch\s*,\s*device_type\s*\)"
)


def keeps_generic_selection(settings: Settings) -> bool:
    """The target leaves generic selection as it is (xla ports it: its device is no
    `torch.accelerator`); --portable has its own rules."""
    return settings.target in PORTABLE_TARGETS and not settings.portable


_WORDS = (b"_get_available_device_type", b"current_accelerator", b"_get_device_module", b"device_type)")


def selects_generically(source: bytes) -> bool:
    # substring tests first: a regex with alternatives scans every file ten times slower
    return any(w in source for w in _WORDS) and SELECTION.search(source) is not None


def project_selects_generically(paths: Iterable[Path]) -> bool:
    """True when any file of the run picks its device generically (stops at the first)."""
    for path in paths:
        try:
            # (a file past the size porter parses is not ported: it decides nothing for the others)
            if selects_generically(read_regular(path, MAX_PARSE_BYTES)):
                return True
        except OSError:
            continue
    return False
