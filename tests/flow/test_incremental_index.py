"""An edit followed by a lint: the project index's answers after it are a cold run's.

The cross-file facts (a device value handed from one module into another, a function that
returns an index, a module that becomes CUDA-only) are cached with the project's files; an
edit to one file must change the findings of the unchanged files that depend on it exactly
as a cold run does, and a folder holding several projects indexes (and re-indexes) each on
its own."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from porter.analysis.index import ProjectIndex
from porter.config.settings import Settings
from porter.pipeline import runner
from porter.pipeline.runner import run
from tests.helpers import write_files

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "libraries" / "multibackend" / "src"

TRAINER = """
import torch

from helper import pick_device


class Trainer:
    def __init__(self, model, gpu_id):
        self.gpu_id = gpu_id
        self.model = model.to(gpu_id)

    def step(self, batch):
        return batch.to(self.gpu_id)


def place(x):
    dev = pick_device()
    return x.to(dev)
"""

MAIN = """
import torch

from trainer import Trainer


def main(device):
    return Trainer(torch.nn.Linear(2, 2), device)


if __name__ == "__main__":
    device = 0
    main(device)
"""

HELPER = """
def pick_device():
    return "cpu"
"""

API = """
import torch

from kernels import scale


@torch.library.custom_op("mb::scale", mutates_args=(), device_types="cuda")
def scale_op(x: torch.Tensor) -> torch.Tensor:
    return scale(x)
"""

KERNELS = """
import torch


def scale(x):
    return x * 2
"""

KERNELS_TRITON = """
import torch
import triton
import triton.language as tl


@triton.jit
def _scale_kernel(src, dst, n, BLOCK: tl.constexpr):
    pass


def scale(x):
    out = torch.empty_like(x)
    _scale_kernel[(1,)](x, out, x.numel(), BLOCK=128)
    return out
"""

SYNC = """
import torch


def sync(x):
    if x.device.type == "cuda":
        torch.cuda.synchronize()
    return x
"""

# each edit changes what an unchanged file's findings depend on
EDITS = [
    ("main.py", MAIN.replace("device = 0", 'device = "cpu"')),  # the value handed into Trainer
    ("helper.py", HELPER.replace('"cpu"', "0")),  # pick_device() becomes a function returning an index
    ("kernels.py", KERNELS_TRITON),  # a module becoming CUDA-only
    ("main.py", MAIN),  # and back
    ("kernels.py", KERNELS),
]


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def _findings(paths: list[Path], target: str, **kw) -> dict[str, list[tuple]]:
    results, _ = run(paths, Settings(target=target), jobs=1, **kw)
    return {
        r.path: [(f.code, f.start.line, f.start.column, f.message, f.replacement) for f in r.findings]
        + [("new", (r.new_source or b"").decode())]
        for r in results
    }


@pytest.mark.parametrize("target", ["xla", "neuron"])
def test_an_edit_then_a_warm_lint_gives_the_cold_findings(tmp_path, target):
    root = tmp_path / "proj"
    write_files(
        root, {"trainer.py": TRAINER, "main.py": MAIN, "helper.py": HELPER, "api.py": API, "kernels.py": KERNELS}
    )
    cache = tmp_path / "cache"
    before = _findings([root], target, cache=True, cache_dir=cache)
    assert before == _findings([root], target, cache=False)
    reached = []
    for name, text in EDITS:
        write_files(root, {name: text})
        warm = _findings([root], target, cache=True, cache_dir=cache)
        cold = _findings([root], target, cache=False)
        assert warm == cold, name
        reached.append(sorted(f for f in cold if f != f"proj/{name}" and cold[f] != before[f]))
        before = cold
    # every edit changed the findings of a file that was not edited: the device value handed
    # into trainer.py, pick_device()'s index in trainer.py, the CUDA-only module into api.py
    assert reached == [["proj/trainer.py"], ["proj/trainer.py"], ["proj/api.py"], ["proj/trainer.py"], ["proj/api.py"]]


def test_an_edit_re_answers_only_the_files_that_read_it(tmp_path, monkeypatch):
    """After an edit to helper.py the index works out the answers of helper.py and of
    trainer.py (which follows `pick_device()` into it) again, keeps main.py's and sync.py's
    from the last run, and the findings are a cold run's."""
    root = tmp_path / "proj"
    write_files(root, {"trainer.py": TRAINER, "main.py": MAIN, "helper.py": HELPER, "sync.py": SYNC})
    answered: list[str] = []
    own = ProjectIndex.own

    def counted(index, path):
        answered.append(path)
        return own(index, path)

    monkeypatch.setattr(ProjectIndex, "own", counted)
    cache = tmp_path / "cache"
    _findings([root], "xla", cache=True, cache_dir=cache)
    assert sorted(answered) == ["proj/helper.py", "proj/main.py", "proj/sync.py", "proj/trainer.py"]
    answered.clear()
    write_files(root, {"helper.py": HELPER.replace('"cpu"', "0")})
    warm = _findings([root], "xla", cache=True, cache_dir=cache)
    assert sorted(answered) == ["proj/helper.py", "proj/trainer.py"]
    answered.clear()
    assert warm == _findings([root], "xla", cache=False)
    answered.clear()
    _findings([root], "xla", cache=True, cache_dir=cache)
    assert answered == []


def _project(root: Path) -> None:
    write_files(
        root,
        {
            "pyproject.toml": "[project]\nname = 'p'\n",
            "trainer.py": TRAINER,
            "main.py": MAIN,
            "helper.py": HELPER,
            "sync.py": SYNC,
            "run.sh": "export CUDA_VISIBLE_DEVICES=0\npython main.py\n",
        },
    )


def test_a_folder_of_projects_indexes_each_on_its_own(tmp_path, monkeypatch):
    """A library with backends of its own beside a training script: the script's findings are
    those it has alone (its launcher's CUDA_VISIBLE_DEVICES is ported, not kept as the CUDA
    deployment of the library's device abstraction), and an edit in the script's project
    re-indexes only it."""
    shutil.copytree(FIXTURES, tmp_path / "all" / "lib")
    _project(tmp_path / "all" / "app")
    alone = {
        **_findings([Path("all/lib")], "neuron", cache=False),
        **_findings([Path("all/app")], "neuron", cache=False),
    }
    assert alone["all/app/run.sh"][-1] == ("new", "export NEURON_RT_VISIBLE_CORES=0\npython main.py\n")
    assert "BACK008" not in {f[0] for f in alone["all/app/sync.py"]}
    assert _findings([Path("all")], "neuron", cache=False) == alone

    indexed: list[list[str]] = []
    real = runner._answered

    def counted(wanted, previous):
        if wanted:  # (the dependency files' own pass has no Python file to index)
            indexed.append(sorted(name for name, _ in wanted))
        return real(wanted, previous)

    monkeypatch.setattr(runner, "_answered", counted)
    cache = tmp_path / "cache"
    assert _findings([Path("all")], "neuron", cache=True, cache_dir=cache) == alone
    assert len(indexed) == 2  # cold: one index per project
    indexed.clear()
    write_files(tmp_path / "all" / "app", {"helper.py": HELPER.replace('"cpu"', "0")})
    warm = _findings([Path("all")], "neuron", cache=True, cache_dir=cache)
    assert indexed == [["all/app/helper.py", "all/app/main.py", "all/app/sync.py", "all/app/trainer.py"]]
    assert warm == _findings([Path("all")], "neuron", cache=False)


@pytest.mark.parametrize(
    ("analysis", "name", "edit"),
    [
        ("_answered", "main.py", MAIN.replace("device = 0", 'device = "cpu"')),  # the device values
        ("_cuda_only", "kernels.py", KERNELS_TRITON),  # the CUDA-only facts
    ],
)
def test_a_file_edited_while_the_index_reads_it_does_not_poison_the_cache(tmp_path, monkeypatch, analysis, name, edit):
    """The project index scans the files, finds no answers cached for their bytes, then reads
    them again to work the answers out: a file saved in between (an editor, a checkout) filed
    the new bytes' answers under the old bytes' key, and after an undo every warm run gave them
    (trainer.py's two DEV008 lost; seventeenth read). They are filed under the bytes read."""
    root = tmp_path / "proj"
    files = {"trainer.py": TRAINER, "main.py": MAIN, "helper.py": HELPER, "api.py": API, "kernels.py": KERNELS}
    write_files(root, files)
    real = getattr(runner, analysis)

    def racing(*args):
        write_files(root, {name: edit})
        return real(*args)

    cache = tmp_path / "cache"
    monkeypatch.setattr(runner, analysis, racing)
    _findings([root], "xla", cache=True, cache_dir=cache)
    monkeypatch.setattr(runner, analysis, real)
    write_files(root, {name: files[name]})  # undone
    cold = _findings([root], "xla", cache=False)
    assert _findings([root], "xla", cache=True, cache_dir=cache) == cold
    assert _findings([root], "xla", cache=True, cache_dir=cache) == cold


def test_which_files_one_index_covers(tmp_path):
    """A folder given that is a project is one (its nested examples too); under one that is
    not, each outermost project is one, and the files in none are one more with the files
    given by name."""
    from porter.pipeline import projects
    from porter.pipeline.discover import discover

    write_files(
        tmp_path,
        {
            "lib/setup.py": "",
            "lib/pkg/a.py": "",
            "lib/examples/demo/setup.py": "",
            "lib/examples/demo/run.py": "",
            "wheel/pkg-1.0.dist-info/METADATA": "",
            "wheel/pkg/b.py": "",
            "loose.py": "",
            "other/c.py": "",
        },
    )

    def groups(*given: str) -> list[tuple[str | None, list[str]]]:
        paths = [Path(g) for g in given]
        return [
            (
                None if folder is None else folder.as_posix(),
                sorted(c.path.as_posix() for c in cands if c.path.suffix == ".py"),
            )
            for folder, cands in projects.split(list(discover(paths)), paths)
        ]

    assert groups("lib") == [
        ("lib", ["lib/examples/demo/run.py", "lib/examples/demo/setup.py", "lib/pkg/a.py", "lib/setup.py"])
    ]
    assert sorted(groups("."), key=str) == sorted(
        [
            ("lib", ["lib/examples/demo/run.py", "lib/examples/demo/setup.py", "lib/pkg/a.py", "lib/setup.py"]),
            ("wheel", ["wheel/pkg/b.py"]),
            (None, ["loose.py", "other/c.py"]),
        ],
        key=str,
    )
    assert groups("loose.py", "other/c.py") == [(None, ["loose.py", "other/c.py"])]


@pytest.mark.parametrize(
    ("top", "where"),
    [
        (".", "a.py"),
        (".", "x/y/z.py"),
        ("proj", "proj/a.py"),
        ("proj", "proj/x/y.py"),
        ("proj", "projx/a.py"),
        ("proj", "other/proj/a.py"),
        ("/", "/a/b.py"),
        ("/abs/p", "/abs/p/q/r.py"),
        ("/abs/p", "/abs/pq/r.py"),
        ("../up", "../up/a/b.py"),
        ("../up", "up/a/b.py"),
    ],
)
def test_the_folders_between_a_top_and_a_file_are_read_off_their_names(top, where):
    """`projects` finds a file's folders below the top the run was given from the walk's
    string (a warm run makes no Path per file): the answer is `Path.relative_to`'s."""
    from porter.pipeline.projects import _folders_below

    try:
        expected: list[str] | None = list(Path(where).relative_to(Path(top)).parts[:-1])
    except ValueError:
        expected = None
    assert _folders_below(Path(top), where) == expected
