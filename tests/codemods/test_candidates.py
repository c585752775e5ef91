"""The candidate pass (porter.codemods.candidates) changes which files libcst parses, never
what porter says: each file is ported with the pass and without it (every admitted file
parsed), and the results must be the same, finding for finding and byte for byte. The run
with the pass also prints only the statements that hold a finding or a replaced node (for
positions and a findings-only run's CHANGED: apply.UNIT_TEXT) and walks the families without
libcst's copy of every node (apply.COPY_FREE_WALK), the run without it the whole module and
libcst's walk, as before these were made. The corpus:
every rule's examples, the fixtures, and, where bench_lint_real.py has downloaded it, a sample of
its real library code (transformers, deepspeed, timm, ...)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

import porter.codemods.apply as apply
from porter.codemods.apply import port_python
from porter.config.ruledata import all_rules
from porter.config.settings import Settings
from tests.helpers import rule_example_files

ROOT = Path(__file__).resolve().parents[2]


def _check(files: list[tuple[str, bytes]], settings: list[Settings], monkeypatch) -> int:
    """Both paths on every file and settings; returns how many runs the pass spared libcst."""
    spared = 0
    parse = apply.cst.parse_module
    calls: list[int] = []

    def counting(*a, **k):
        calls.append(1)
        return parse(*a, **k)

    monkeypatch.setattr(apply.cst, "parse_module", counting)
    for name, source in files:
        for s in settings:
            out, parses = [], []
            for on in (True, False):
                monkeypatch.setattr(apply, "CANDIDATE_PASS", on)
                monkeypatch.setattr(apply, "UNIT_TEXT", on)
                monkeypatch.setattr(apply, "COPY_FREE_WALK", on)
                calls.clear()
                r = port_python(source, name, s)
                parses.append(len(calls))
                out.append(repr((r.status, r.reason, r.error_line, r.findings, r.suppressed, r.new_source)))
            assert out[0] == out[1], f"{name} ({s.target}, want_source={s.want_source}): the pass changed the result"
            spared += parses[0] < parses[1]
            _reporters_are_candidates(name, source, s, r.findings)
    return spared


def _reporters_are_candidates(name: str, source: bytes, settings: Settings, findings) -> None:
    """Each family that reported in the file held a candidate there: its own condition, not
    only the union the pass asks (a family answering True for every file hides the others).
    XLA005's switch for a move another family ported needs that family's site (its docstring)."""
    from porter.codemods import FAMILIES
    from porter.codemods.candidates import Gate
    from porter.codemods.xla_params import MOVES
    from porter.core.suppressions import scan

    gate = Gate(name, settings, scan(source), source)
    owner = {code: cls for cls in FAMILIES for code in cls.codes()}
    applied = {f.code for f in findings if f.applied}
    for code in {f.code for f in findings}:
        cls = owner.get(code)
        if cls is None or (code == "XLA005" and applied & MOVES):
            continue
        assert cls.wanted(gate, source) and cls.candidate(gate, source), (
            f"{name}: {code} reported, {cls.__name__} held no candidate"
        )


def test_rule_examples_come_out_the_same(monkeypatch):
    files = rule_example_files()
    assert len(files) > 200
    for name, source, s in files:
        _check(
            [(name, source)],
            [s, replace(s, select=(), extend_select=(s.select[0],), want_source=False)],
            monkeypatch,
        )


def test_fixtures_come_out_the_same(monkeypatch):
    files = [
        (str(p.relative_to(ROOT)), p.read_bytes())
        for p in sorted((ROOT / "fixtures").rglob("*.py"))
        if ".out." not in p.name and not {"__pycache__", "expected"} & set(p.parts)
    ]
    assert len(files) > 30
    settings = [Settings(target="neuron"), Settings(target="xla", want_source=False, extend_select=("PERF",))]
    _check(files, settings, monkeypatch)


def _corpus() -> Path | None:
    root = Path(os.environ.get("PORTER_BENCH_CACHE", Path.home() / ".cache" / "porter-bench")) / "corpus-v2"
    return root if (root / ".ok").exists() else None


@pytest.mark.skipif(_corpus() is None, reason="bench_lint_real.py's corpus is not downloaded")
def test_real_library_code_comes_out_the_same(monkeypatch):
    root = _corpus()
    assert root is not None
    paths = sorted(p for p in root.rglob("*.py") if p.is_file())[::58]
    files = [(str(p.relative_to(root)), p.read_bytes()) for p in paths]
    settings = [Settings(target="xla", want_source=False), Settings(target="neuron")]
    spared = _check(files, settings, monkeypatch)
    assert spared > len(files) // 10  # the pass does spare real files their parse


# files in which only the device family (and the xla-params family it moves modules for)
# could have a site: its candidate reads strings, names, int devices, loads and the project
# index's facts (porter.codemods.device.DeviceFamily.candidate)
_DEVICE_SITES = {
    "ints.py": "def f(x, y):\n    return x.to(0), torch.ones(2, device=1), y.to(non_blocking=True)\n",
    "pieces.py": 'dev = ("cuda"\n       ":0")\nname = "kernels_" "cuda"\nm.to(dev)\n',
    "doc.py": '"""Moves tensors to cuda when asked."""\nimport torch\nx = t.to(device)\n',
    "fstring.py": 'def place(m, rank):\n    return m.to(f"cuda:{rank}")\n',
    "legacy.py": "from torch.cuda import FloatTensor\nimport torch as T\n\nok = isinstance(x, FloatTensor) or isinstance(x, T.cuda.HalfTensor)\ndevice = None\n",
    "loads.py": "from torch import load as L\nimport torch\n\nsd = L(path, where)\nsd2 = torch.load(path, map_location=loc)\ndevice = None\n",
    "load_rest.py": "import torch\n\nsd = torch.load(path, *rest).to(dev)\n",
    # (libcst's second argument, `**kwargs`, read as the location: DEV007 on xla)
    "load_kwargs.py": "import torch\n\ndef f(path, **kwargs):\n    return torch.load(path, **kwargs).to(dev)\n",
    "load_kw_first.py": "import torch\n\nsd = torch.load(f=path, *rest).to(dev)\n",
    "is_cuda.py": "def f(x, device):\n    if x.is_cuda:\n        return x.to(device)\n",
    "vocabulary.py": 'import argparse\n\np = argparse.ArgumentParser()\np.add_argument("--gpu_arch", default="cuda", choices=["cuda", "rocm"])\n',
    "enum.py": 'import enum\n\n\nclass Kind(enum.Enum):\n    CUDA = "cuda"\n    XLA = "xla"\n',
    "origin.py": 'import os\n\ndef place(model, distributed):\n    if distributed:\n        device = int(os.environ["LOCAL_RANK"])\n    else:\n        device = "cpu"\n    return model.to(device)\n',
    "tied.py": "from torch import nn\n\nclass GPT(nn.Module):\n    def __init__(self, v, d):\n        super().__init__()\n        self.wte = nn.Embedding(v, d)\n        self.head = nn.Linear(d, v)\n        self.wte.weight = self.head.weight\n\nmodel = GPT(5, 7)\nmodel.to(device)\n",
    "stale.py": "import torch\nmodel = Net()\nopt = torch.optim.AdamW(model.parameters())\nmodel.to(device)\n",
}
# ... and files in which it has none (its tokens `.to(`, `device=` show): spared
_NO_DEVICE_SITE = {
    "moves.py": "def f(model, x, device):\n    model.to(device)\n    return torch.zeros(2, device=device), x.to(x.dtype)\n",
    "cpu_load.py": 'import torch\n\ndef f(path, device):\n    return torch.load(path, map_location="cpu").to(device)\n',
    "comment.py": "# runs on the gpu or the cpu\ndef f(t, device):\n    return t.to(device=device)\n",
}


def _settings(name: str, source: bytes) -> list[Settings]:
    """xla (also without XLA005, which otherwise keeps tied and taken parameters in place of
    DEV011/DEV013) and neuron, with the file's own index (flow None), with it handed on as the
    project index's facts, and with no facts (flow ())."""
    from porter.analysis.index import ProjectIndex

    facts = ProjectIndex.build([(name, source)]).facts(name)
    out = []
    for flow in (None, facts, ()):
        out.append(Settings(target="xla", flow=flow))
        out.append(Settings(target="xla", flow=flow, ignore=("XLA005",), want_source=False))
        out.append(Settings(target="neuron", flow=flow))
    return out


def test_device_family_sites_come_out_the_same(monkeypatch):
    for name, text in _DEVICE_SITES.items():
        source = text.encode()
        _check([(name, source)], _settings(name, source), monkeypatch)
    for name, text in _NO_DEVICE_SITE.items():
        source = text.encode()
        settings = _settings(name, source)
        assert _check([(name, source)], settings, monkeypatch) == len(settings), name


def test_device_facts_from_another_file_keep_the_parse(monkeypatch):
    """`model.to(r)` shows no device token of its own: the project index's fact (an int
    handed on by another module) is the family's only reason to parse the file."""
    from porter.analysis.index import ProjectIndex

    caller = b'import os\nfrom b import place\n\ndef main(model):\n    rank = int(os.environ["LOCAL_RANK"])\n    place(model, rank)\n'
    callee = b"def place(model, r):\n    return model.to(r)\n"
    facts = ProjectIndex.build([("a.py", caller), ("b.py", callee)]).facts("b.py")
    assert facts and {f[2] for f in facts} == {"index"}
    with_facts = [Settings(target=t, flow=facts) for t in ("xla", "neuron")]
    assert _check([("b.py", callee)], with_facts, monkeypatch) == 0
    assert port_python(callee, "b.py", with_facts[0]).findings[0].code == "DEV008"
    # (on neuron no rule's token admits the file without the fact: the prefilter skips it)
    assert _check([("b.py", callee)], [Settings(target="xla", flow=())], monkeypatch) == 1


# (family, path, snippet, whether the family holds a candidate): sites each family's
# condition must see (the findings must come out the same) and look-alikes it must not
def _family_cases():
    from porter.codemods.accelerator import AcceleratorFamily
    from porter.codemods.amp import AmpFamily
    from porter.codemods.compile import CompileFamily
    from porter.codemods.distributed import DistributedFamily
    from porter.codemods.frameworks import FrameworksFamily
    from porter.codemods.hf import HfFamily
    from porter.codemods.kernels import KernelsFamily
    from porter.codemods.library_api import LibraryApiFamily
    from porter.codemods.optim import OptimizerFamily
    from porter.codemods.perf import PerfFamily
    from porter.codemods.xla_loop import XlaLoopFamily
    from porter.codemods.runtime import RuntimeFamily
    from porter.codemods.target_api import TargetApiFamily

    return [
        # KERN003: an import row, unless the file is the library's own; a use row's reference
        (KernelsFamily, "train.py", "import cupy\n", True),
        (KernelsFamily, "train.py", "from deepspeed.ops.adam import FusedAdam\n", True),
        (KernelsFamily, "deepspeed/ops/adam/fused_adam.py", "import deepspeed.ops.op_builder\n", False),
        (KernelsFamily, "deepspeed/runtime/engine.py", "import deepspeed.ops.adam\n", True),
        (KernelsFamily, "a.py", "import numba\n\n@numba.cuda.jit\ndef k(x):\n    pass\n", True),
        (KernelsFamily, "a.py", "import bitsandbytes as bnb\n\nq = bnb.nn.Linear8bitLt(1, 2)\n", True),
        (KernelsFamily, "a.py", "import flax.linen as nn\nfrom flax import struct\n", False),
        (KernelsFamily, "a.py", "import deepspeed\n\nx = deepspeed.comm.get_rank()\n", False),
        # hf: a call `call_kind` knows; a loader only with a keyword `_loader` reads
        (HfFamily, "a.py", "from transformers import AutoModel\n\nm = AutoModel.from_pretrained('x')\n", False),
        (
            HfFamily,
            "a.py",
            "import torch\nfrom transformers import AutoModel\n\nm = AutoModel.from_pretrained('x', torch_dtype=torch.float16)\n",
            True,
        ),
        (HfFamily, "a.py", "import transformers as T\n\nargs = T.TrainingArguments(output_dir='o', fp16=True)\n", True),
        (HfFamily, "a.py", "from transformers import BertModel\n\nm = BertModel(config)\n", False),
        (HfFamily, "a.py", "import bitsandbytes\nimport transformers\n", True),
        (
            HfFamily,
            "a.py",
            "# needs bitsandbytes\nfrom transformers import AutoModel\n\nm = AutoModel.from_pretrained('x')\n",
            False,
        ),
        # frameworks: Lightning's accelerator names, a CUDA request check, a framework's import
        (FrameworksFamily, "a.py", "import lightning as L\n\nt = L.Trainer(accelerator='gpu')\n", True),
        (
            FrameworksFamily,
            "a.py",
            "import torch\n\ndef f(device):\n    if device == 'cuda' and not torch.cuda.is_available():\n        raise ValueError\n",
            True,
        ),
        (FrameworksFamily, "a.py", "def f(trainer):\n    return trainer.accelerator == 'cuda'\n", False),
        # library-api: a keyword the recorded signature lacks, or one it checks the value of
        (
            LibraryApiFamily,
            "a.py",
            "from transformers import TrainingArguments\n\nargs = TrainingArguments(output_dir='o', evaluation_strategy='steps')\n",
            True,
        ),
        (
            LibraryApiFamily,
            "a.py",
            "from transformers import TrainingArguments\n\nargs = TrainingArguments('o')\n",
            False,
        ),
        # runtime: a move, then a later statement of the same body initialising the moved name
        (
            RuntimeFamily,
            "a.py",
            "import torch\n\nmodel = Net().to(device)\ntorch.nn.init.normal_(model.fc.weight)\n",
            True,
        ),
        (RuntimeFamily, "a.py", "def f(m, device):\n    m.cuda()\n    m.apply(init_weights)\n", True),
        (RuntimeFamily, "a.py", "import torch\n\nm = Net().cuda()\ntorch.nn.init.normal_(tensor=m.fc.weight)\n", True),
        (
            RuntimeFamily,
            "a.py",
            "import torch\n\ndef f(h, w):\n    h = h.to(w.dtype)\n    torch.nn.init.normal_(w)\n",
            False,
        ),
        (RuntimeFamily, "a.py", "def f(self, w):\n    self.m = self.m.to(w)\n    self.m.normal_()\n", False),
        # amp: torch's float16 through any import, CUDA autocast; not jax's float16
        (AmpFamily, "a.py", "import torch as T\n\nx = T.zeros(2, dtype=T.float16)\n", True),
        (AmpFamily, "a.py", "from torch.cuda.amp import autocast\n\nwith autocast():\n    y = m(x)\n", True),
        (AmpFamily, "a.py", "def f(m):\n    return m.half()\n", True),
        (AmpFamily, "a.py", "import jax.numpy as jnp\n\nx = jnp.zeros(2, dtype=jnp.float16)\n", False),
        # target-api: a name under the checked modules, compile/init_process_group/autocast
        (TargetApiFamily, "a.py", "import torch\n\nn = torch.accelerator.device_count()\n", True),
        (TargetApiFamily, "a.py", "from torch import accelerator\n\nn = accelerator.device_count(1)\n", True),
        (TargetApiFamily, "a.py", "import torch_xla.core.xla_model as xm\n\nd = xm.xla_device(n=1)\n", True),
        (TargetApiFamily, "a.py", "import torch\n\nm = torch.compile(m, backend='inductor2')\n", True),
        (TargetApiFamily, "a.py", "import torch\n\ntorch.distributed.init_process_group(backend='nccl2')\n", True),
        (TargetApiFamily, "a.py", "import torch\n\ndef f(trainer):\n    return trainer.accelerator\n", False),
        (TargetApiFamily, "a.py", "import torch\n\nm = torch.compile(m)\nbackend = 'x'\n", False),
        # optim: `fused=` of a torch optimizer or a dict, or a fused-flag fact of the index
        (OptimizerFamily, "a.py", "import torch\n\nopt = torch.optim.AdamW(p, fused=True)\n", True),
        (OptimizerFamily, "a.py", "kw = dict(lr=1e-3, fused=True)\n", True),
        (
            OptimizerFamily,
            "a.py",
            "import torch\n\ndef make(p, fused):\n    return Adam(p, fused=fused)\n\nopt = make(p, torch.cuda.is_available())\n",
            True,  # (Adam is no torch optimizer porter knows: the index's fact holds it)
        ),
        (OptimizerFamily, "a.py", "def f(x, fused):\n    return g(x, fused=fused)\n", False),
        # accelerator (xla): the generic selection calls, however imported
        (AcceleratorFamily, "a.py", "import torch as T\n\nok = T.accelerator.is_available()\n", True),
        (
            AcceleratorFamily,
            "a.py",
            "from torch._utils import _get_available_device_type as t\n\nd = t() or 'cpu'\n",
            True,
        ),
        (AcceleratorFamily, "a.py", "def f(trainer):\n    return trainer.accelerator.setup_device(d)\n", False),
        # perf (PERF007, PERF008) and xla-loop (XLA004): torch's cat of itself in a loop; a
        # sync of a loop's element
        (PerfFamily, "a.py", "import torch\n\nfor i in range(3):\n    x = torch.cat((x, y))\n    print(x)\n", True),
        (
            PerfFamily,
            "a.py",
            "import tensorflow as tf\n\nfor i in range(3):\n    x = tf.concat([x, y], 0)\n    f(x)\n",
            False,
        ),
        (PerfFamily, "a.py", "for v in t:\n    s += v.item()\n", True),
        (PerfFamily, "a.py", "for i in range(n):\n    s += t[i, :].item()\n", True),
        (PerfFamily, "a.py", "out = [rest.tolist() for a, *rest in t]\n", True),
        (PerfFamily, "a.py", "for v in t:\n    s += total.item() + t[v:].item()\n", False),
        (XlaLoopFamily, "a.py", "import torch as T\n\nwhile n:\n    idx = T.cat(tensors=[idx, nxt], dim=1)\n", True),
        (XlaLoopFamily, "a.py", "import numpy as np\n\nwhile n:\n    idx = np.concatenate((idx, nxt))\n", False),
        # xla-loop: a DataLoader iterated by name, a step (however imported), `pin_memory`
        (
            XlaLoopFamily,
            "a.py",
            "from torch.utils.data import DataLoader\n\nloader = DataLoader(ds)\nfor b in loader:\n    f(b)\n",
            True,
        ),
        (
            XlaLoopFamily,
            "a.py",
            "from torch.utils.data import DataLoader\n\nloader = DataLoader(ds)\nfor i, b in enumerate(iterable=loader):\n    f(b)\n",
            True,
        ),
        (
            XlaLoopFamily,
            "a.py",
            "from torch.utils.data import DataLoader\n\ndef make(ds):\n    return DataLoader(ds)\n",
            False,
        ),
        (
            XlaLoopFamily,
            "a.py",
            "from torch_xla.core.xla_model import optimizer_step as ostep\n\nfor b in loader:\n    ostep(opt)\n",
            True,
        ),
        (XlaLoopFamily, "a.py", "class L:\n    def optimizer_step(self, loader):\n        return loader\n", False),
        (XlaLoopFamily, "a.py", "def f(ds):\n    return g(ds, pin_memory=True)\n", True),
        (XlaLoopFamily, "a.py", "PIN = 'pin_memory'\nloader = None\n", False),
        # xla-loop: a step where `_sync` / `_step_function` reads one, not elsewhere
        (XlaLoopFamily, "a.py", "class Opt:\n    def step(self):\n        self.optimizer.step()\n", False),
        (XlaLoopFamily, "a.py", "def step(model, opt, x):\n    model(x).backward()\n    opt.step()\n", True),
        (
            XlaLoopFamily,
            "a.py",
            "def f(opt, data):\n    for b in data:\n        def g():\n            opt.step()\n",
            False,
        ),
        (XlaLoopFamily, "a.py", "def f(opt, data):\n    for b in data:\n        if b:\n            opt.step()\n", True),
        (XlaLoopFamily, "a.py", "async def f(loss, data):\n    async for b in data:\n        loss.backward()\n", True),
        (XlaLoopFamily, "a.py", "def f(loss, data):\n    for b in data:\n        pass\n    loss.backward()\n", False),
        (
            XlaLoopFamily,
            "a.py",
            "import torch_xla.core.xla_model as xm\n\nfor b in loader:\n    xm.optimizer_step(o)\n",
            True,
        ),
        # xla-loop: a loop over a name assigned a `...DataLoader(...)`; `pin_memory` not False
        (
            XlaLoopFamily,
            "a.py",
            "from torch.utils.data import DataLoader\n\nasync def f(ds):\n    loader = DataLoader(ds)\n"
            "    async for b in loader:\n        g(b)\n",
            True,
        ),
        (
            XlaLoopFamily,
            "a.py",
            "from torch.utils.data import DataLoader\n\nloader: DataLoader = DataLoader(ds)\nfor b in loader:\n    f(b)\n",
            True,
        ),
        (
            XlaLoopFamily,
            "a.py",
            "from torch.utils.data import DataLoader\n\nloader = DataLoader(ds)\nfor b in batches:\n    f(b)\n",
            False,
        ),
        (XlaLoopFamily, "a.py", "def f(ds):\n    return g(ds, pin_memory=False)\n", False),
        (XlaLoopFamily, "a.py", "def f(ds):\n    return g(ds, pin_memory=0)\n", True),
        (XlaLoopFamily, "a.py", "def f(t):\n    return get_accelerator().pin_memory(t)\n", False),
        (XlaLoopFamily, "a.py", "def f(t):\n    t.pin_memory()\n    return t\n", True),
        # compile: a name the imports make `torch.compile`, called or a bare decorator
        (CompileFamily, "a.py", "import torch\n\nm = torch.compile(m, mode='max-autotune')\n", True),
        (CompileFamily, "a.py", "from torch import compile\n\n@compile\ndef f(x):\n    return x\n", True),
        (CompileFamily, "a.py", "import torch\n\n@torch.compile\ndef f(x):\n    return x\n", True),
        (CompileFamily, "a.py", "# torch.compile breaks this\nimport torch\nx = torch.ones(2)\n", False),
        (CompileFamily, "a.py", "import re\nimport torch\n\n# torch.compile\np = re.compile('x')\n", False),
        # distributed: a string naming NCCL or CUDA, `Backend.NCCL`, or a call of INIT, DDP, DataParallel
        (
            DistributedFamily,
            "a.py",
            "from torch.nn.parallel import DistributedDataParallel\n\ndef unwrap(m):\n"
            "    return m.module if isinstance(m, DistributedDataParallel) else m\n",
            False,
        ),
        (DistributedFamily, "a.py", "# DDP strategy\nclass DDPStrategy:\n    pass\n", False),
        (DistributedFamily, "a.py", "def init_process_groups(n):\n    return n\n", False),
        (
            DistributedFamily,
            "a.py",
            "import torch\n\nm = torch.nn.parallel.DistributedDataParallel(m, device_ids=[0])\n",
            True,
        ),
        (DistributedFamily, "a.py", "from torch.nn import DataParallel as DP\n\nm = DP(m)\n", True),
        (DistributedFamily, "a.py", "import torch.distributed as dist\n\ndist.init_process_group()\n", True),
        (
            DistributedFamily,
            "a.py",
            "import torch.distributed as d\n\nis_nccl = d.get_backend() == d.Backend.NCCL\n",
            True,
        ),
        (DistributedFamily, "a.py", "# DDP\nBACKENDS = {'cuda': 'x', 'cpu': 'y'}\n", True),
        (DistributedFamily, "a.py", "# DDP\nos.environ['NCCL_DEBUG'] = 'INFO'\n", True),
        (DistributedFamily, "a.py", "def init(backend='n' 'ccl'):\n    init_process_group(backend)\n", True),
    ]


def test_family_conditions(monkeypatch):
    from porter.codemods.candidates import Gate
    from porter.core.suppressions import scan

    for cls, path, text, holds in _family_cases():
        source = text.encode()
        for target in ("xla", "neuron", "tpu"):
            s = Settings(target=target, unsafe_fixes=True)
            gate = Gate(path, s, scan(source), source)
            if cls.wanted(gate, source):
                assert cls.candidate(gate, source) == holds, f"{cls.__name__} on {text!r} ({target})"
            else:
                assert not holds or target != "xla", f"{cls.__name__} not wanted on {text!r}"
            _check([(path, source)], [s, replace(s, want_source=False)], monkeypatch)


def _candidate_before(cls, gate, source: bytes) -> bool:
    """xla-loop's, compile's and distributed's conditions as they were before each was narrowed
    to where its family reads a site (a step anywhere, a DataLoader call beside any loop over
    a name, any `pin_memory`; compile's and distributed's rule tokens alone)."""
    from porter.codemods.family import Family
    from porter.codemods.xla_loop import OPT_STEPS

    if cls.name != "xla-loop":
        return Family.candidate.__func__(cls, gate, source)
    found = gate.sites()
    if found is None:
        return True
    if gate.enabled("XLA003") and ("pin_memory" in found.keywords or "pin_memory" in found.callees):
        return True
    steps = found.steps or any(q in OPT_STEPS for name in found.dotted_calls for q in found.qualified(name))
    if steps and (gate.enabled("XLA001") or gate.enabled("XLA002")):
        return True
    if gate.enabled("XLA002") and found.loop_names and any(c.endswith("DataLoader") for c in found.callees):
        return True
    return gate.enabled("XLA004") and found.grows()


@pytest.mark.skipif(_corpus() is None, reason="bench_lint_real.py's corpus is not downloaded")
def test_narrowed_conditions_spare_only_files_without_a_site(monkeypatch):
    """Every corpus file in which the narrowed xla-loop, compile or distributed condition says
    no where the old one said yes (the files the narrowing spares a walk or a parse), ported
    with the pass and without it: identical (and a family that reports held its candidate)."""
    from porter.analysis.prefilter import admits
    from porter.codemods.candidates import Gate
    from porter.codemods.compile import CompileFamily
    from porter.codemods.distributed import DistributedFamily
    from porter.codemods.xla_loop import XlaLoopFamily
    from porter.core.suppressions import scan

    root = _corpus()
    assert root is not None
    xla = Settings(target="xla", want_source=False)
    flipped: list[tuple[str, bytes]] = []
    for p in sorted(p for p in root.rglob("*.py") if p.is_file()):
        source = p.read_bytes()
        if not admits(source, xla):
            continue
        gate = Gate(str(p.relative_to(root)), xla, scan(source), source)
        for cls in (XlaLoopFamily, CompileFamily, DistributedFamily):
            if cls.wanted(gate, source) and _candidate_before(cls, gate, source) and not cls.candidate(gate, source):
                flipped.append((gate.path, source))
                break
    assert len(flipped) > 50, len(flipped)  # (100 at h2-cand: 48 xla-loop, 19 compile, 44 distributed)
    _check(flipped, [xla, Settings(target="neuron")], monkeypatch)


def test_per_element_walk_takes_the_statements_the_scan_flags():
    """PERF008's libcst walk visits only the top-level statements its `ast` scan flags: `a; b`
    lines (two `ast` statements, one libcst line) must not shift which ones."""
    source = (
        b"import torch\nx = 1; y = 2\nfor v in t:\n    s += v.item()\n\n"
        b"def f(t):\n    n = t.item()\n    return [e.tolist() for e in t]\n\n"
        b"class A:\n    def g(self, n):\n        for i in range(n):\n            a = self.t[i, :].item(); b = 2\n"
    )
    found = port_python(source, "a.py", Settings(target="xla", want_source=False)).findings
    assert [(f.code, f.start.line) for f in found] == [("PERF008", 4), ("PERF008", 8), ("PERF008", 13)]


def _reference_sites(tree):
    """`candidates.sites` as it was: every node of `ast.walk`, each read by its type."""
    import ast

    from porter.codemods import candidates as c

    out = c.Sites()
    two_args: set[str] = set()
    for node in ast.walk(tree):
        kind = type(node)
        if kind is ast.Call:
            c._call(out, node, two_args)
        elif kind is ast.Constant:
            c._constant(out, node, two_args)
        elif kind is ast.Attribute:
            c._attribute(out, node, two_args)
        elif kind is ast.Import:
            c._import(out, node, two_args)
        elif kind is ast.ImportFrom:
            c._import_from(out, node, two_args)
        elif kind is ast.Assign:
            c._assign(out, node, two_args)
        elif kind is ast.AnnAssign:
            c._ann_assign(out, node, two_args)
        elif kind in (ast.For, ast.AsyncFor, ast.While):
            c._loop(out, node, two_args)
        elif kind is ast.Expr:
            out.moves = out.moves or c._move(node.value)
    out.loads = out.loads or any("torch.load" in out.imported.get(name, ()) for name in two_args)
    return out


def _facts_in_order(found) -> list:
    """Every field of a Sites, its sets and dicts as lists in their order (which the order
    the nodes are read in decides)."""
    import dataclasses

    def seen(v):
        if isinstance(v, dict):
            return [(k, seen(x)) for k, x in v.items()]
        return list(v) if isinstance(v, set) else v

    return [(f.name, seen(getattr(found, f.name))) for f in dataclasses.fields(found)]


def _trees(*more: bytes):
    """The `ast` trees of the fixtures, every 9th corpus file (where downloaded), the rule
    examples and `more`: those that parse."""
    import ast
    import warnings

    paths = [p for p in sorted((ROOT / "fixtures").rglob("*.py")) if "__pycache__" not in p.parts]
    root = _corpus()
    if root is not None:
        paths += sorted(p for p in root.rglob("*.py") if p.is_file())[::9]
    sources = [p.read_bytes() for p in paths]
    sources += [ex.before.encode() for rule in all_rules().values() for ex in rule.examples]
    for source in [*sources, *more]:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(source)
        except SyntaxError:
            continue
        yield tree


def test_the_sites_walk_reads_what_ast_walk_meets():
    """`sites` skips the nodes it reads nothing of (`Load`, `Name`, operators, ...) and reads
    each type's fields from the grammar: it must find what reading every node of `ast.walk`
    finds, in the same order, over the fixtures, the rule examples and every 9th corpus file."""

    from porter.codemods.candidates import sites

    walked = 0
    for tree in _trees(b"d = {**a, 'k': 'cuda'}\nmatch x:\n    case P(k=1, *r): f(y=2).to(0)\n"):
        assert _facts_in_order(sites(tree)) == _facts_in_order(_reference_sites(tree))
        walked += 1
    assert walked > 100


def test_the_sites_walk_reads_every_node_types_fields_from_the_grammar():
    """Every node type `ast.parse` makes has its fields read from its grammar line (a type
    whose doc cannot be read falls back to every field: correct, slower)."""
    import ast

    from porter.codemods.candidates import _plan

    kinds, todo = [], [ast.AST]
    while todo:
        kind = todo.pop()
        todo.extend(kind.__subclasses__())
        if kind._fields and not kind.__subclasses__() and not (kind.__doc__ or "").startswith("Deprecated"):
            kinds.append(kind)  # (not `ast.Num`, `ast.Str`, ...: `ast.parse` makes none)
    assert len(kinds) > 60
    unread = [k.__name__ for k in kinds if any(many is None for _, many in _plan(k))]
    assert unread == []
    assert _plan(ast.Attribute) == (("value", False),)
    assert _plan(ast.Call) == (("func", False), ("args", True), ("keywords", True))


def _reference_per_element(top) -> bool:
    """perf._per_element as it was: every child of every node, by `ast.iter_child_nodes`."""
    import ast

    from porter.codemods.perf import _LOOPS, _bound, _element

    stack = [(top, frozenset())]
    while stack:
        node, names = stack.pop()
        kind = type(node)
        if (
            names
            and kind is ast.Call
            and type(node.func) is ast.Attribute
            and node.func.attr in ("item", "tolist")
            and not node.args
            and not node.keywords
            and _element(node.func.value, names)
        ):
            return True
        if kind in (ast.For, ast.AsyncFor):
            names = names | _bound(node.target)
        elif kind in _LOOPS:
            names = names.union(*(_bound(g.target) for g in node.generators))
        stack.extend((child, names) for child in ast.iter_child_nodes(node))
    return False


def test_the_per_element_scan_answers_as_a_walk_of_every_node():
    """PERF008's `ast` scan (perf._per_element) walks only the fields that can hold a node:
    it answers as a walk of every child does, for every statement of the fixtures, the rule
    examples and every 9th corpus file (and it does find some: 4 without the corpus, which a
    fresh machine has not downloaded)."""
    import ast

    from porter.codemods.perf import _per_element

    found = 0
    for tree in _trees():
        for stmt in (n for n in ast.walk(tree) if isinstance(n, ast.stmt)):
            answer = _per_element(stmt)
            assert answer == _reference_per_element(stmt), ast.unparse(stmt)[:200]
            found += answer
    assert found >= (10 if _corpus() else 3)


def test_the_move_scan_answers_as_ast_walk():
    """runtime._used_after_move walks `candidates.nodes` (no names, operators, contexts):
    it answers as its walk by `ast.walk` did over the fixtures, the rule examples and every
    9th corpus file, and on moves used later (it does find some)."""
    import ast

    from porter.codemods import runtime
    from porter.codemods.candidates import first_argument

    def reference(tree) -> bool:
        bodies = [tree.body] + [n.body for n in ast.walk(tree) if type(n) in (ast.FunctionDef, ast.AsyncFunctionDef)]
        for body in bodies:
            moved: set[str] = set()
            for stmt in body:
                if moved:
                    for node in ast.walk(stmt):
                        if type(node) is not ast.Call:
                            continue
                        func = node.func
                        last = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None
                        if last not in runtime._USES:
                            continue
                        if type(func) is ast.Attribute and runtime._ast_root(func.value) in moved:
                            return True
                        first = first_argument(node)
                        if first is not None and runtime._ast_root(first) in moved:
                            return True
                holder = runtime._ast_holder(stmt)
                if holder is not None:
                    moved.add(holder)
        return False

    found = 0
    for tree in _trees(
        b"model.cuda()\nmodel.apply(init)\n",
        b"def f(m):\n    m = m.to(d)\n    if x:\n        torch.nn.init.normal_(m.weight)\n",
        b"class A:\n    def f(self, m):\n        m.to(d)\n        def g():\n            m.fc.weight.uniform_()\n",
    ):
        answer = runtime._used_after_move(tree)
        assert answer == reference(tree), ast.unparse(tree)[:200]
        found += answer
    assert found >= 3


def test_in_package_searches_a_script_once(tmp_path, monkeypatch):
    """literals.in_package, asked of every function of a file outside a package folder (a
    script's), searches its source for a relative import once, and answers as the search."""
    from types import SimpleNamespace

    from porter.codemods import literals

    searched: list[bytes] = []
    pattern = literals._RELATIVE_IMPORT

    class Counting:
        def search(self, source):
            searched.append(source)
            return pattern.search(source)

    monkeypatch.setattr(literals, "_RELATIVE_IMPORT", Counting())
    literals._imports_relatively.cache_clear()
    script = tmp_path / "run.py"
    for source, expected in ((b"import torch\n\nx = 1\n", False), (b"import os\n  from .m import f\n", True)):
        ctx = SimpleNamespace(path=str(script), source=source, settings=SimpleNamespace(package=None))
        assert [literals.in_package(ctx) for _ in range(5)] == [expected] * 5
    assert len(searched) == 2
    literals._imports_relatively.cache_clear()
