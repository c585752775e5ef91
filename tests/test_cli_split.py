"""`porter rewrite --split DIR`: the port as an ordered series of patches, one per area and kind
of change. Each patch applies with `git apply` on top of the ones before it, every state between
two patches is still Python, and the whole series makes the tree `--diff` makes."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.test_cli_rewrite import porter, snapshot

FILES = {
    "run.py": 'import torch\n\ndevice = "cuda" if torch.cuda.is_available() else "cpu"\n',
    "pkg_a/train.py": (
        "import torch\nimport torch.distributed as dist\n\n\n"
        "def setup(rank):\n"
        '    dist.init_process_group(backend="nccl")\n'
        "    torch.cuda.set_device(rank)\n\n\n"
        "def step(model, x, opt):\n"
        "    x = x.cuda()\n"
        "    with torch.cuda.amp.autocast(dtype=torch.bfloat16):\n"
        "        loss = model(x).sum()\n"
        "    loss.backward()\n"
        "    opt.step()\n"
        "    torch.cuda.synchronize()\n"
        "    return loss\n"
    ),
    "pkg_b/flags.py": (
        "import torch\n\ntorch.backends.cudnn.benchmark = True\n\n\n"
        "def compiled(model):\n"
        '    return torch.compile(model, mode="max-autotune")\n'
    ),
    "pkg_b/norm.py": "from apex.normalization import FusedLayerNorm\n\n\ndef make(n):\n    return FusedLayerNorm(n)\n",
    "pkg_b/plain.py": "def add(a, b):\n    return a + b\n",
    "tests/test_train.py": "import torch\n\n\ndef test_ones():\n    assert torch.ones(2).cuda().sum().item() == 2\n",
}
# (area, kind) of each patch, in series order
EXPECTED = [
    ("", "devices"),
    ("pkg_a", "devices"),
    ("pkg_a", "distributed"),
    ("pkg_a", "amp"),
    ("pkg_b", "runtime"),
    ("pkg_b", "kernels"),
    ("tests", "tests"),
]


def _git(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _python_states(tree: Path) -> dict[str, str]:
    return {p.relative_to(tree).as_posix(): p.read_text() for p in tree.rglob("*.py")}


def test_series_applies_in_order_and_equals_the_diff(project, tmp_path):
    before = snapshot(project)
    out = porter("rewrite", ".", "--target", "neuron", "--split", str(tmp_path / "series"), cwd=project)
    assert out.returncode == 0, out.stderr
    assert snapshot(project) == before  # the originals stay untouched
    assert "written as 7 patches" in out.stdout

    index = json.loads((tmp_path / "series" / "index.json").read_text())
    assert [(p["area"], p["kind"]) for p in index["patches"]] == EXPECTED
    assert [p["file"] for p in index["patches"]] == sorted(p.name for p in (tmp_path / "series").glob("*.patch"))
    by_kind = {(p["area"], p["kind"]): p for p in index["patches"]}
    assert by_kind[("pkg_a", "distributed")]["ported"] == {"DIST001": 1}
    assert by_kind[("pkg_a", "amp")]["ported"] == {"AMP001": 1}
    assert by_kind[("pkg_b", "kernels")]["files"] == ["pkg_b/norm.py"]
    assert by_kind[("tests", "tests")]["ported"] == {"DEV001": 1}
    # (the area is a folder's name, escaped as Markdown text: `pkg\_a` renders as pkg_a)
    assert (
        "| 3 | 0003-pkg_a-distributed.patch | pkg\\_a | distributed | 1 | 1 | DIST001 |"
        in (tmp_path / "series" / "index.md").read_text()
    )

    # apply them one by one on a copy: each applies, and every state is still Python
    work = tmp_path / "by-series"
    shutil.copytree(project, work)
    _git("init", "-q", cwd=work)
    for entry in index["patches"]:
        applied = _git("apply", "--whitespace=nowarn", str(tmp_path / "series" / entry["file"]), cwd=work)
        assert applied.returncode == 0, (entry["file"], applied.stderr)
        for name, text in _python_states(work).items():
            ast.parse(text, filename=f"{name} after {entry['file']}")

    # the same tree as --diff makes
    diff = porter("rewrite", ".", "--target", "neuron", "--diff", "-q", cwd=project)
    assert diff.returncode == 1
    whole = tmp_path / "by-diff"
    shutil.copytree(project, whole)
    _git("init", "-q", cwd=whole)
    (tmp_path / "whole.patch").write_text(diff.stdout)
    assert _git("apply", str(tmp_path / "whole.patch"), cwd=whole).returncode == 0
    assert _python_states(work) == _python_states(whole)

    # porting the port changes nothing: an empty series
    again = porter("rewrite", ".", "--target", "neuron", "--split", str(tmp_path / "again"), cwd=work)
    assert again.returncode == 0 and "written as 0 patches" in again.stdout
    assert json.loads((tmp_path / "again" / "index.json").read_text())["patches"] == []


def test_a_large_folder_is_split_by_its_subfolders(tmp_path):
    from porter.report import series

    files = [
        series.PortedFile(f"big/sub{i % 3}/m{i}.py", b"import torch\nx = 1\n", b"import torch\nx = 2\n", ())
        for i in range(9)
    ]
    files.append(series.PortedFile("big/top.py", b"y = 1\n", b"y = 2\n", ()))
    files.append(series.PortedFile("small/a.py", b"z = 1\n", b"z = 2\n", ()))
    planned = series.plan(files, max_area_hunks=5)
    assert [p.area for p in planned.patches] == ["big", "big/sub0", "big/sub1", "big/sub2", "small"]
    assert planned.patches[0].files == ["big/top.py"]


def test_usage_errors(project, tmp_path):
    target = tmp_path / "series"
    out = porter("rewrite", ".", "--target", "neuron", "--split", str(target), "--diff", cwd=project)
    assert out.returncode == 2 and "without --diff" in out.stderr
    (tmp_path / "afile").write_text("x")
    out = porter("rewrite", ".", "--target", "neuron", "--split", str(tmp_path / "afile"), cwd=project)
    assert out.returncode == 2 and "afile is not a folder" in out.stderr
    target.mkdir()
    (target / "0099-old-devices.patch").write_text("stale\n")
    (target / "notes.txt").write_text("mine\n")
    out = porter("rewrite", ".", "--target", "neuron", "--split", str(target), cwd=project)
    assert out.returncode == 2 and "not empty" in out.stderr
    # --force replaces the series there, and nothing else
    out = porter("rewrite", ".", "--target", "neuron", "--split", str(target), "--force", cwd=project)
    assert out.returncode == 0, out.stderr
    assert not (target / "0099-old-devices.patch").exists() and (target / "notes.txt").read_text() == "mine\n"
    assert (target / "0001-top-level-devices.patch").exists()


def test_portable_series_defines_the_device_helper_before_any_patch_calls_it(project, tmp_path):
    out = porter("rewrite", ".", "--target", "neuron", "--portable", "--split", str(tmp_path / "series"), cwd=project)
    assert out.returncode == 0, out.stderr
    index = json.loads((tmp_path / "series" / "index.json").read_text())
    work = tmp_path / "by-series"
    shutil.copytree(project, work)
    _git("init", "-q", cwd=work)
    for entry in index["patches"]:
        assert _git("apply", str(tmp_path / "series" / entry["file"]), cwd=work).returncode == 0, entry["file"]
        for name, text in _python_states(work).items():
            tree = ast.parse(text)
            calls = any(
                isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "_device_type"
                for n in ast.walk(tree)
            )
            defines = any(isinstance(n, ast.FunctionDef) and n.name == "_device_type" for n in tree.body)
            assert defines or not calls, f"{name} calls _device_type() before it is defined, after {entry['file']}"
    assert "def _device_type() -> str:" in (work / "pkg_a" / "train.py").read_text()
