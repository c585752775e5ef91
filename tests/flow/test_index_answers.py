"""The project index kept from one run to the next (`porter.analysis.index.answers`): after any
sequence of edits its answers are a cold index's, and an edit re-answers only the files whose
answers read what changed."""

from __future__ import annotations

import ast
import hashlib
import textwrap

from hypothesis import HealthCheck, given, settings, strategies as st

from porter.analysis import index as index_module
from porter.analysis.index import ProjectIndex, answers
from porter.analysis.summary import is_spawn

# pieces of modules m0..m3 that hand device values, classes, options, fused flags, own
# `is_cuda`s and parameter attributes to one another (each names the others by module)
PIECES = [
    "def pick():\n    return 0\n",
    'def pick():\n    return "cpu"\n',
    "from m0 import pick\n\ndef go(x):\n    d = pick()\n    return x.to(d)\n",
    "import m0\n\ndef go2(x):\n    return x.to(m0.pick())\n",
    "def run(x, gpu_id):\n    return x.to(gpu_id)\n",
    "from m1 import run\n\ndef main(x):\n    device = 0\n    run(x, device)\n",
    'from m1 import run\n\ndef main2(x):\n    device = "cpu"\n    return run(x, device)\n',
    "from m2 import run\n\ndef main3(x, local_rank):\n    return run(x, local_rank)\n",
    (
        "class Trainer:\n    def __init__(self, model, gpu_id):\n        self.gpu_id = gpu_id\n"
        "        self.model = model.to(gpu_id)\n\n    def step(self, b):\n        return b.to(self.gpu_id)\n"
    ),
    "from m3 import Trainer\n\ndef fit(model):\n    return Trainer(model, 0)\n",
    "from m0 import Trainer\n\ndef fit2(model, rank):\n    return Trainer(model, rank)\n",
    'import argparse\n\np = argparse.ArgumentParser()\np.add_argument("--gpu", type=int, default=0)\n',
    "def use(args, x):\n    return x.to(args.gpu)\n",
    (
        "def setup(local_rank, x):\n    if local_rank >= 0:\n        device = local_rank\n"
        '    else:\n        device = "cpu"\n    run(x, device)\n'
    ),
    (
        "import torch\n\ndef opt(model, device):\n    use_fused = device == 'cuda'\n"
        "    return torch.optim.AdamW(model.parameters(), fused=use_fused)\n"
    ),
    "from m1 import opt\n\ndef make(model):\n    return opt(model, 'cuda')\n",
    "class W:\n    def is_cuda(self):\n        return True\n",
    "def check(t, x):\n    if t.is_cuda:\n        return x.to(0)\n    return x\n",
    (
        "def mark(model, device):\n    for n, p in model.named_parameters():\n        p.infshape = 1\n"
        "    model.to(device)\n"
    ),
    "def tie(self):\n    self.head.weight = self.emb.weight\n",
    "def helper(x, d):\n    return x.to(d)\n",
    # a cycle across two modules: what one evaluation cuts, the other must not inherit
    "from m2 import pong\n\ndef ping(x, d):\n    x.to(d)\n    return pong(x, d)\n",
    "from m1 import ping\n\ndef pong(x, d):\n    x.to(d)\n    return ping(x, d)\n",
    "from m1 import ping\n\ndef start(x):\n    device = 0\n    return ping(x, device)\n",
    "from m3 import run\n\ndef far(x):\n    rank = 1\n    return run(x, rank)\n",
    "def broken(:\n    device = 0\n",
    "x = 1\n",
    # processes: `mp.spawn(fn, args=...)` and a helper that spawns the function it is handed
    "import torch.multiprocessing as mp\n\ndef work(rank, x):\n    return x.to(rank)\n\nmp.spawn(work, args=(1,))\n",
    "def launch(fn, n):\n    mp.spawn(fn, args=(n,))\n",
    "from m0 import launch\n\ndef job(rank, x):\n    x.to(rank)\n\nlaunch(job, 2)\n",
    "import m1\n\ndef go3(x):\n    m1.launch(m1.work, 0)\n    return m1.run(x, 0)\n",
    # a method called on self, a class without __init__, a name that is no call of `run`
    "class Loop:\n    def run(self, x, gpu_id):\n        return x.to(gpu_id)\n\n    def step(self, x):\n        return self.run(x, 3)\n",
    "class Trainer:\n    pass\n\ndef build():\n    run = 'device'\n    return Trainer()\n",
]
NAMES = ["m0.py", "m1.py", "m2.py", "pkg/m3.py"]

# a project (each module absent or a few pieces), then edits: a module's new pieces, or none
pieces = st.none() | st.lists(st.sampled_from(range(len(PIECES))), min_size=1, max_size=3)
edits = st.lists(st.tuples(st.sampled_from(NAMES), pieces), min_size=1, max_size=6)


def _files(project: dict[str, list[int] | None]) -> list[tuple[str, bytes]]:
    return [(name, "\n".join(PIECES[i] for i in pieces).encode()) for name, pieces in project.items() if pieces]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.fixed_dictionaries({name: pieces for name in NAMES}), edits)
def test_answers_after_edits_are_a_cold_index(project, changes):
    facts, state, _ = answers(_files(project))
    for name, edited in changes:
        project[name] = edited
        files = _files(project)
        facts, state, _ = answers(files, state)
        cold, _, redone = answers(files)
        assert facts == cold
        _assert_callers_from_summaries(files, state)
        assert redone == [name for name, source in files if ProjectIndex.wants(source)]
        # each answer is worked out on its own: asked in any order, the same
        index = ProjectIndex.build(files)
        assert {name: index.facts(name) for name, _ in reversed(files) if name in cold} == cold


def _ast_callers(index: ProjectIndex, fn):
    """The calls of `fn` as the index found them from the files' `ast` before summaries: every
    call of every module resolved with `function_of`, relayed spawns and spawns included."""
    out = []
    for path in index._sources:
        mod = index.module(path)
        for scope in mod.scopes.values() if mod is not None else ():
            for call in scope.calls:
                target = index.function_of(call.func, scope)
                if target is not None:
                    g, skip = target
                    if g is fn:
                        out.append((call, scope, skip))
                    for j, arg in enumerate(call.args):
                        if not isinstance(arg, (ast.Name, ast.Attribute)) or j + skip >= len(g.params):
                            continue
                        for inner in g.calls:
                            if is_spawn(inner) and isinstance(inner.args[0], ast.Name):
                                if inner.args[0].id == g.params[j + skip]:
                                    passed = index.function_of(arg, scope)
                                    if passed is not None and passed[0] is fn:
                                        out.append((inner, g, -1))
                if is_spawn(call):
                    spawned = index.function_of(call.args[0], scope)
                    if spawned is not None and spawned[0] is fn:
                        out.append((call, scope, -1))
    return out


def _assert_callers_from_summaries(files, state):
    """Every function's callers, resolved from the summaries kept in `state` (each the summary
    of the bytes it names), are the ones the files' `ast` shows; and the summaries kept are
    those the files give now."""
    index = ProjectIndex.build(files)
    kept = index_module._loaded(state)[2]
    shas = {p: hashlib.sha256(s).hexdigest() for p, s in index._sources.items()}
    index._summaries.update((p, s) for p, (sha, s) in kept.items() if shas.get(p) == sha)
    assert kept.keys() <= shas.keys()
    fresh = ProjectIndex.build(files)
    for path in kept:
        assert index._summaries[path] == fresh.summary(path)
    for path in index._sources:
        mod = index.module(path)
        for fn in mod.scopes.values() if mod is not None else ():
            found = [(id(c), id(s), k) for c, s, k in index.callers(fn)]
            assert found == [(id(c), id(s), k) for c, s, k in _ast_callers(index, fn)], (path, fn.qual)


CYCLE = [
    ("m1.py", "from m2 import pong\n\ndef ping(x, d):\n    x.to(d)\n    return pong(x, d)\n"),
    ("m2.py", "from m1 import ping\n\ndef pong(x, d):\n    x.to(d)\n    return ping(x, d)\n"),
    ("m0.py", "from m1 import ping\n\ndef start(x):\n    device = 0\n    return ping(x, device)\n"),
]


def test_an_answer_does_not_depend_on_the_answers_asked_before():
    """`ping` and `pong` hand `d` to each other: following one cuts the cycle at the other. An
    index that kept the cut values between answers told m2.py nothing when m1.py was asked
    first and an integer when it was asked first itself; each answer is worked out on its own."""
    files = [(n, t.encode()) for n, t in CYCLE]
    forward = ProjectIndex.build(files)
    backward = ProjectIndex.build(files)
    answered = {n: forward.facts(n) for n, _ in files}
    assert answered == {n: backward.facts(n) for n, _ in reversed(files)}
    assert answered["m1.py"] and answered["m2.py"]


TRAINER = """
from helper import pick_device


class Trainer:
    def __init__(self, model, gpu_id):
        self.gpu_id = gpu_id
        self.model = model.to(gpu_id)

    def place(self, x):
        dev = pick_device()
        return x.to(dev)
"""

MAIN = """
from trainer import Trainer


def main(model):
    device = 0
    return Trainer(model, device)
"""

HELPER = """
def pick_device():
    return "cpu"
"""

ALONE = """
def alone(x, device):
    return x.to(device)
"""


def test_an_edit_re_answers_what_read_it():
    """An edit to helper.py re-answers it and trainer.py (which follows `pick_device()` into
    it), not main.py or alone.py; an edit to alone.py re-answers it only."""
    files = {"trainer.py": TRAINER, "main.py": MAIN, "helper.py": HELPER, "alone.py": ALONE}

    def run(state):
        return answers([(n, textwrap.dedent(t).encode()) for n, t in files.items()], state)

    facts, state, redone = run(None)
    assert redone == ["trainer.py", "main.py", "helper.py", "alone.py"]
    files["helper.py"] = HELPER.replace('"cpu"', "0")
    after, state, redone = run(state)
    assert redone == ["trainer.py", "helper.py"]
    assert after != facts and after == run(None)[0]
    files["alone.py"] = ALONE + "\n\ndef more(x):\n    return x.to(1)\n"
    _, state, redone = run(state)
    assert redone == ["alone.py"]
    _, _, redone = run(state)
    assert redone == []


def test_an_edit_parses_the_callers_not_every_file_naming_the_function(monkeypatch):
    """worker.py's answer follows `gpu_id` to the callers of `run`: 12 files name a `run` of
    their own and call nothing. After an edit to caller.py the answer is worked out again from
    the summaries the last run kept: worker.py and caller.py are parsed, not the 12 (each was,
    when the callers were found from the files' `ast`)."""
    files = {
        "worker.py": "def run(x, gpu_id):\n    return x.to(gpu_id)\n",
        "caller.py": "from worker import run\n\ndef main(x):\n    device = 0\n    return run(x, device)\n",
    }
    for i in range(12):
        files[f"other{i}.py"] = "def run(device):\n    return device\n"
    parsed = []
    module = ProjectIndex.module

    def counted(index, path):
        if path not in index._parsed and path in index._sources:
            parsed.append(path)
        return module(index, path)

    monkeypatch.setattr(ProjectIndex, "module", counted)
    facts, state, _ = answers([(n, t.encode()) for n, t in files.items()])
    assert facts["worker.py"] and len(parsed) == 14
    files["caller.py"] = files["caller.py"].replace("device = 0", 'device = "cpu"')
    parsed.clear()
    after, _, redone = answers([(n, t.encode()) for n, t in files.items()], state)
    assert redone == ["worker.py", "caller.py"]
    assert sorted(parsed) == ["caller.py", "worker.py"]
    assert after == answers([(n, t.encode()) for n, t in files.items()])[0] and after != facts
