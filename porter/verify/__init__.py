"""porter parity-check: run the original and the ported model side by side, each in its own
process, and report whether they compute the same thing and what will make the port slow.

This executes user code (the factory and inputs functions and everything they import).
Tensors cross between processes only as files read with torch.load(weights_only=True).
Nothing in this package imports torch at import time: the CLI stays usable without it.
"""

from porter.verify.config import DEFAULT_TOLERANCES, ParityConfig, build_config

__all__ = ["ParityConfig", "build_config", "DEFAULT_TOLERANCES", "run_parity"]


def run_parity(cfg: ParityConfig, workdir=None, keep: bool = False):
    from porter.verify.check import run_parity as _run

    return _run(cfg, workdir=workdir, keep=keep)
