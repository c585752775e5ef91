"""porter parity-check: run the original and the ported model side by side, each in its own
process, and report whether they compute the same thing and what will make the port slow.

This executes user code (the factory and inputs functions and everything they import).
Tensors cross between processes only as files read with torch.load(weights_only=True).
Nothing in this package imports torch at import time: the CLI stays usable without it.
"""

import os

from porter.verify.config import DEFAULT_TOLERANCES, ParityConfig, build_config

# porter's package folder as its code objects name their files (`co_filename`: the path it was
# imported by, links not resolved), the one place porter's own frames are told by: it was taken
# three ways (resolved, the verify folder only, from `porter.__file__`), and with porter imported
# through a link its own frames were taken for the program's compiled frames
OWN = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

__all__ = ["ParityConfig", "build_config", "DEFAULT_TOLERANCES", "run_parity"]


def run_parity(cfg: ParityConfig, workdir=None, keep: bool = False):
    from porter.verify.check import run_parity as _run

    return _run(cfg, workdir=workdir, keep=keep)
