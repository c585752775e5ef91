"""Which files a run reads besides Python, by name alone, and the switch that narrows it."""

from __future__ import annotations


from pathlib import Path

import pytest

from porter.config.settings import Settings
from porter.core.findings import FileStatus
from porter.core.kinds import discovered, kind_of
from porter.pipeline.discover import discover
from porter.pipeline.runner import run

NAMES = {
    "requirements.txt": "requirements",
    "requirements-dev.txt": "requirements",
    "dev-requirements.txt": "requirements",
    "constraints.txt": "requirements",
    "requirements/base.txt": "requirements",
    "requirements.in": "requirements",
    "pyproject.toml": "pyproject",
    "setup.cfg": "setup-cfg",
    "setup.py": "setup-py",
    "environment.yml": "conda",
    "environment-gpu.yaml": "conda",
    "Dockerfile": "dockerfile",
    "Dockerfile.gpu": "dockerfile",
    "train.Dockerfile": "dockerfile",
    "docker-compose.yml": "compose",
    "compose.yaml": "compose",
    "train.sh": "shell",
    "job.slurm": "shell",
    "job.sbatch": "shell",
    "Makefile": "makefile",
    "rules.mk": "makefile",
    "configs/train.yaml": "yaml",
    "ds_config.json": "json",
    "conf.toml": "toml",
    "tutorial.ipynb": "notebook",
    "model.py": "python",
}


@pytest.mark.parametrize("name,kind", sorted(NAMES.items()))
def test_kind_by_name(name, kind):
    assert kind_of(name) == kind


@pytest.mark.parametrize(
    "name", ["README.md", "notes.txt", "pkg.egg-info/requires.txt", "LICENSE", "data.csv", "model.pt"]
)
def test_files_porter_does_not_read(name):
    assert kind_of(name) is None
    assert not discovered(name.rsplit("/", 1)[-1], name.rsplit("/", 1)[0] if "/" in name else "")


def test_discovery_walks_them_beside_the_python(tmp_path):
    for name in (
        "a.py",
        "requirements.txt",
        "Dockerfile",
        "scripts/run.sh",
        "cfg/x.yaml",
        "nb.ipynb",
        "README.md",
        "requirements/dev.txt",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x\n")
    found = sorted(c.path.relative_to(tmp_path).as_posix() for c in discover([tmp_path]))
    assert found == [
        "Dockerfile",
        "a.py",
        "cfg/x.yaml",
        "nb.ipynb",
        "requirements.txt",
        "requirements/dev.txt",
        "scripts/run.sh",
    ]


@pytest.mark.parametrize("value", ["requirement", "Shell,requirements", "python, dockerfiles"])
def test_a_name_in_porter_file_kinds_that_is_no_kind_is_said(tmp_path, monkeypatch, value):
    """`PORTER_FILE_KINDS=requirement` (a typo) read Python alone and said nothing; the name
    that is no kind is said once after the run (twenty-eighth cache2 read)."""
    from porter.pipeline import discover as discovery

    (tmp_path / "requirements.txt").write_text("torch\n")
    monkeypatch.setenv("PORTER_FILE_KINDS", value)
    discovery.forget()
    list(discover([tmp_path]))
    list(discover([tmp_path]))
    said = [n for n in discovery.NOTES if "PORTER_FILE_KINDS" in n]
    wrong = sorted({k.strip() for k in value.split(",")} - {"python", "requirements"})
    assert len(said) == 1 and f"no kind porter reads: {', '.join(wrong)} (" in said[0], discovery.NOTES
    monkeypatch.setenv("PORTER_FILE_KINDS", "python,requirements")
    discovery.forget()
    list(discover([tmp_path]))
    assert not [n for n in discovery.NOTES if "PORTER_FILE_KINDS" in n]


def test_a_file_named_whose_kind_porter_file_kinds_leaves_out_is_said_unread(tmp_path, monkeypatch):
    """A requirements.txt or a Dockerfile named on the command line under
    `PORTER_FILE_KINDS=python` was read as Python: the requirements file passed unsaid ("All
    checks passed!"), the Dockerfile was a syntax error (exit 1). Each is a note that says why
    it was not read; a setup.py is still Python (twenty-eighth cache2 read)."""
    (tmp_path / "requirements.txt").write_text("cupy-cuda12x\ntorch\n")
    (tmp_path / "Dockerfile").write_text("FROM nvidia/cuda:12.1.0-base\n")
    (tmp_path / "setup.py").write_text("import torch\nx = torch.ones(1).cuda()\n")
    monkeypatch.setenv("PORTER_FILE_KINDS", "python")
    names = [tmp_path / n for n in ("requirements.txt", "Dockerfile", "setup.py")]
    results, _ = run(names, Settings(target="xla"), jobs=1, cache=False)
    by_name = {Path(r.path).name: r for r in results}
    for name, kind in (("requirements.txt", "requirements"), ("Dockerfile", "dockerfile")):
        assert by_name[name].status is FileStatus.SKIPPED, by_name[name]
        assert f"PORTER_FILE_KINDS=python leaves out `{kind}`" in (by_name[name].reason or "")
    assert "DEV001" in [f.code for f in by_name["setup.py"].findings]
    monkeypatch.delenv("PORTER_FILE_KINDS")
    results, _ = run(names[:1], Settings(target="xla"), jobs=1, cache=False)
    assert "DEP005" in [f.code for r in results for f in r.findings]


def test_porter_file_kinds_narrows_discovery(tmp_path, monkeypatch):
    for name in ("a.py", "requirements.txt", "run.sh"):
        (tmp_path / name).write_text("x\n")
    monkeypatch.setenv("PORTER_FILE_KINDS", "python")
    assert sorted(c.path.name for c in discover([tmp_path])) == ["a.py"]
    monkeypatch.setenv("PORTER_FILE_KINDS", "shell")
    assert sorted(c.path.name for c in discover([tmp_path])) == ["a.py", "run.sh"]
