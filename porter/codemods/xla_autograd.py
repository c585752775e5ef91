"""Autograd helpers of CUDA programs that torch_xla 2.9 does not run (XLA006, XLA007, rules/xla.toml).

- XLA006 `torch.utils.checkpoint.checkpoint` / `checkpoint_sequential`: torch saves the RNG
  state of the inputs' device through `torch.xla`, which torch_xla does not register
  (`AttributeError: module 'torch' has no attribute 'xla'`, reentrant or not). Not
  `checkpoint_sequential(fns, 1, x)`: one segment is run without a checkpoint.
- XLA007 `torch.inference_mode()` (a `with`, a decorator, called or not): a module's forward
  under it raises `Cannot set version_counter for inference tensor`; `inference_mode(False)`
  turns the mode off and is left alone.

Both seen on XLA:CPU (torch 2.9, torch_xla 2.9). Findings with advice, no fix: the working
spellings (torch_xla's reentrant checkpoint, `torch.no_grad()`) change what some programs do.
No evidence that TorchNeuron or TorchTPU fail on either, so the rules are xla's only.
"""

from __future__ import annotations

import libcst as cst

from porter.codemods.family import Family

CHECKPOINT = "torch.utils.checkpoint.checkpoint"
SEQUENTIAL = "torch.utils.checkpoint.checkpoint_sequential"
INFERENCE_MODE = "torch.inference_mode"


def _turns_off(call: cst.Call) -> bool:
    """`inference_mode(False)` / `inference_mode(mode=False)`: the mode off, nothing to port."""
    for arg in call.args:
        if arg.keyword is None or arg.keyword.value == "mode":
            return isinstance(arg.value, cst.Name) and arg.value.value == "False"
    return False


def _one_segment(call: cst.Call) -> bool:
    """`checkpoint_sequential(fns, 1, x)`: its last segment runs without a checkpoint, so one
    segment checkpoints nothing (it runs on XLA:CPU)."""
    args = [a for a in call.args if a.keyword is None][1:2] or [
        a for a in call.args if a.keyword is not None and a.keyword.value == "segments"
    ]
    return bool(args) and isinstance(args[0].value, cst.Integer) and args[0].value.value == "1"


class XlaAutogradFamily(Family):
    name = "xla-autograd"
    # every spelling of torch's checkpoint names `utils.checkpoint` or imports from `torch.utils`;
    # a bare `checkpoint` is in a fifth of real files (saving a model's), which the prefilter then
    # sent to libcst: cold lint of the 1.2M-line corpus took 87.6 CPU s where it took 71
    tokens = (b"utils.checkpoint", b"torch.utils import", b"inference_mode")

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.target.name != "xla":
            return
        qual = self.ctx.qualname(node.func)
        if qual == CHECKPOINT or (qual == SEQUENTIAL and not _one_segment(node)):
            self.ctx.report(
                "XLA006",
                node,
                f"`{qual.rpartition('.')[2]}` from torch.utils.checkpoint raises on XLA tensors with torch_xla 2.9 "
                "(`module 'torch' has no attribute 'xla'`)",
            )
        elif qual == INFERENCE_MODE and not _turns_off(node):
            self._inference_mode(node)

    def visit_Decorator(self, node: cst.Decorator) -> None:
        """`@torch.inference_mode` without a call (the call form is visit_Call's)."""
        if self.ctx.target.name == "xla" and self.ctx.qualname(node.decorator) == INFERENCE_MODE:
            self._inference_mode(node.decorator)

    def _inference_mode(self, node: cst.CSTNode) -> None:
        self.ctx.report(
            "XLA007",
            node,
            "a module's forward under `torch.inference_mode()` raises on XLA with torch_xla 2.9 "
            "(`Cannot set version_counter for inference tensor`)",
        )
