"""Dependency files: CUDA builds, indexes, the target's packages, packages with no build for it."""

from __future__ import annotations


from porter.config.settings import Settings
from porter.pipeline.runner import run
from tests.files.conftest import codes, outside_edits_unchanged, port_file, ported

REQS = """\
# CUDA builds
--extra-index-url https://download.pytorch.org/whl/cu121
torch==2.14.0+cu121   # pinned
torchvision==0.19.0+cu121 ; python_version >= "3.10"
numpy>=1.24 \\
    --hash=sha256:abc
flash-attn==2.6.3
-r other.txt
"""


def test_requirements_per_target():
    neuron = ported("requirements.txt", REQS, "neuron", imported_after_port=())
    assert "--extra-index-url https://download.pytorch.org/whl/cpu\n" in neuron
    assert "torch==2.14.0+cpu   # pinned\n" in neuron  # the comment and its spacing stay
    assert "torch==2.14.0+cpu   # pinned\n--extra-index-url https://pip.repos.neuron.amazonaws.com\ntorch-neuronx==2.14.*\nneuronx-cc==2.*\nnki\n" in neuron
    assert 'torchvision==0.19.0+cpu ; python_version >= "3.10"\n' in neuron
    assert "flash-attn" not in neuron and "numpy>=1.24 \\\n    --hash=sha256:abc\n" in neuron and "-r other.txt\n" in neuron
    xla = ported("requirements.txt", REQS, "xla", imported_after_port=())
    assert "download.pytorch.org" not in xla  # torch-xla's install line takes PyPI's torch
    assert "torch==2.14.0   # pinned\ntorch-xla[tpu]==2.9.0\n" in xla
    r = port_file("requirements.txt", REQS, "xla", imported_after_port=())
    assert "DEP003" in codes(r)  # torch 2.14 is no torch-xla 2.9 torch: reported, not rewritten
    assert outside_edits_unchanged(REQS, xla)


def test_a_package_still_imported_after_the_port_stays():
    r = port_file("requirements.txt", "flash-attn==2.6.3\n", "xla", imported_after_port=("flash_attn",))
    assert r.new_source is None
    [f] = [f for f in r.findings if f.code == "DEP005"]
    assert "still imports `flash_attn`" in f.message and not f.applied
    alone = port_file("requirements.txt", "flash-attn==2.6.3\n", "xla")  # nothing known: kept
    assert alone.new_source is None and "DEP005" in codes(alone)


def test_the_run_decides_from_the_ported_python(tmp_path):
    (tmp_path / "requirements.txt").write_text("torch==2.9.0\ntorch-xla[tpu]==2.9.0\nflash-attn\nxformers\n")
    (tmp_path / "attn.py").write_text("import xformers.ops as xops\n\ndef f(q, k, v):\n    return xops.memory_efficient_attention(q, k, v)\n")
    (tmp_path / "train.py").write_text("import torch\nx = torch.zeros(1).cuda()\n")
    for want_source in (True, False):  # lint (findings only) and rewrite decide the same
        results, _ = run([tmp_path], Settings(target="xla", want_source=want_source), cache=False, jobs=1)
        req = next(r for r in results if r.path.endswith("requirements.txt"))
        found = {f.message.split("`")[1]: f.applied for f in req.findings if f.code == "DEP005"}
        assert found == {"flash-attn": True, "xformers": False}, (want_source, found)
        if want_source:
            assert req.new_source == b"torch==2.9.0\ntorch-xla[tpu]==2.9.0\nxformers\n"


def test_pyproject_edits_strings_and_lines_only():
    text = '''[build-system]
requires = ["setuptools", 'torch==2.13.0+cu121']

[project]
name = "x"
dependencies = [
    "torch>=2.13",  # core
    "flash-attn>=2.5",
    "numpy",
]
[project.optional-dependencies]
gpu = ["bitsandbytes", "cupy-cuda12x"]

[[tool.uv.index]]
name = "pytorch-cu124"
url = "https://download.pytorch.org/whl/cu124"
'''
    new = ported("pyproject.toml", text, "tpu", imported_after_port=())
    assert "'torch==2.13.0+cpu'" in new and 'url = "https://download.pytorch.org/whl/cpu"' in new
    assert '    "torch>=2.13",  # core\n    "numpy",\n]' in new  # the removed item's line only
    assert 'gpu = ["bitsandbytes", "cupy-cuda12x"]' in new  # an inline array item is reported
    r = port_file("pyproject.toml", text, "tpu", imported_after_port=())
    dep004 = [f for f in r.findings if f.code == "DEP004"]
    assert dep004 and not dep004[0].applied and "optional extra" in dep004[0].advice
    assert outside_edits_unchanged(text, new)


def test_setup_cfg_and_setup_py():
    cfg = "[options]\ninstall_requires =\n    torch==2.4.0+cu121\n    flash-attn\n[options.extras_require]\nmon = pynvml\n"
    new = ported("setup.cfg", cfg, "xla", imported_after_port=())
    assert new == "[options]\ninstall_requires =\n    torch==2.4.0\n[options.extras_require]\nmon = pynvml\n"
    py = 'from setuptools import setup\nREQS = ["torch==2.4.0+cu121"]\nsetup(install_requires=REQS, extras_require={"fa": ["flash-attn"]})\n'
    r = port_file("setup.py", py, "neuron")
    assert r.new_source is None  # setup.py's requirement strings are reported: its text is Python's
    assert {"DEP001", "DEP003", "DEP004", "DEP005"} <= set(codes(r))
    assert [f.start.line for f in r.findings if f.code == "DEP001"] == [2]


def test_conda_environment():
    env = """\
name: x
channels:
  - pytorch
  - nvidia
dependencies:
  - pytorch=2.1.0=py3.10_cuda12.1_cudnn8.9.2_0
  - pytorch-cuda=12.1
  - pip:
      - torch==2.9.0+cu121  # from pip
      - "flash-attn"
"""
    new = ported("environment.yml", env, "xla", imported_after_port=())
    assert new.endswith("  - pip:\n      - torch==2.9.0  # from pip\n      - torch-xla[tpu]==2.9.0\n")
    r = port_file("environment.yml", env, "xla", imported_after_port=())
    manual = sorted((f.code, f.start.line) for f in r.findings if not f.applied)
    assert manual == [("DEP001", 6), ("DEP002", 4), ("DEP005", 7)]


def test_a_file_with_no_cuda_token_is_not_read():
    r = port_file("requirements.txt", "numpy\npandas\n")
    assert r.status.value == "skipped"


def test_select_ignore_and_noqa():
    text = "torch==2.14.0+cu121  # noqa: DEP001\ntorchaudio==2.14.0+cu121\n"
    r = port_file("requirements.txt", text, "neuron")
    assert [(f.code, f.start.line) for f in r.suppressed] == [("DEP001", 1)]
    assert ported("requirements.txt", text, "neuron", ignore=("DEP004",)) == "torch==2.14.0+cu121  # noqa: DEP001\ntorchaudio==2.14.0+cpu\n"
    only = port_file("requirements.txt", text, "neuron", select=("DEP004",))
    assert codes(only) == ["DEP004"]


def test_crlf_and_no_final_newline_keep_their_bytes():
    text = "torch==2.9.0+cu121\r\nnumpy"
    new = ported("requirements.txt", text, "xla", imported_after_port=())
    assert new == "torch==2.9.0\r\ntorch-xla[tpu]==2.9.0\r\nnumpy"
