"""A GradScaler the removal cannot follow is reported where it is named, never left in silence
(fastai's `@delegates(GradScaler)`, ignite's `isinstance(x, GradScaler)` were)."""

from porter.config.settings import Settings
from porter.pipeline.port import port_source

SOURCE = b"""import torch
from torch.cuda.amp import GradScaler


def delegates(to):
    return lambda f: f


@delegates(GradScaler)
def make(**kwargs):
    return GradScaler(**kwargs)


def check(s: GradScaler) -> bool:
    pairs = (GradScaler(enabled=False), 1)
    return isinstance(s, torch.cuda.amp.GradScaler) and bool(pairs)


scaler = GradScaler()
"""


def _amp003(target: str) -> list[tuple[int, str]]:
    res = port_source(SOURCE, "m.py", Settings(target=target))
    return [(f.start.line, f.applicability.value) for f in res.findings if f.code == "AMP003"]


def test_every_reference_is_reported_once_and_the_binding_as_before():
    for target in ("neuron", "tpu", "xla"):
        found = _amp003(target)
        # the decorator, the unbound call, the one in a tuple, the isinstance check; the binding
        # keeps its own (unsafe) finding; the import and the annotation do nothing at run time
        assert found == [(9, "manual"), (11, "manual"), (15, "manual"), (16, "manual"), (19, "unsafe")], (target, found)


def test_a_bound_scaler_gets_no_extra_finding():
    src = b"import torch\nscaler = torch.cuda.amp.GradScaler()\nscaler.scale(loss).backward()\nscaler.step(opt)\nscaler.update()\n"
    res = port_source(src, "m.py", Settings(target="neuron"))
    assert [f.start.line for f in res.findings if f.code == "AMP003"] == [2]
