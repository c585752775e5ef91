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
    assert (
        "torch==2.14.0+cpu   # pinned\n--extra-index-url https://pip.repos.neuron.amazonaws.com\ntorch-neuronx==2.14.*\nneuronx-cc==2.*\nnki\n"
        in neuron
    )
    assert 'torchvision==0.19.0+cpu ; python_version >= "3.10"\n' in neuron
    assert (
        "flash-attn" not in neuron
        and "numpy>=1.24 \\\n    --hash=sha256:abc\n" in neuron
        and "-r other.txt\n" in neuron
    )
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
    (tmp_path / "attn.py").write_text(
        "import xformers.ops as xops\n\ndef f(q, k, v):\n    return xops.memory_efficient_attention(q, k, v)\n"
    )
    (tmp_path / "train.py").write_text("import torch\nx = torch.zeros(1).cuda()\n")
    for want_source in (True, False):  # lint (findings only) and rewrite decide the same
        results, _ = run([tmp_path], Settings(target="xla", want_source=want_source), cache=False, jobs=1)
        req = next(r for r in results if r.path.endswith("requirements.txt"))
        found = {f.message.split("`")[1]: f.applied for f in req.findings if f.code == "DEP005"}
        assert found == {"flash-attn": True, "xformers": False}, (want_source, found)
        if want_source:
            assert req.new_source == b"torch==2.9.0\ntorch-xla[tpu]==2.9.0\nxformers\n"


def test_pyproject_edits_strings_and_lines_only():
    text = """[build-system]
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
"""
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
    assert (
        ported("requirements.txt", text, "neuron", ignore=("DEP004",))
        == "torch==2.14.0+cu121  # noqa: DEP001\ntorchaudio==2.14.0+cpu\n"
    )
    only = port_file("requirements.txt", text, "neuron", select=("DEP004",))
    assert codes(only) == ["DEP004"]


def test_crlf_and_no_final_newline_keep_their_bytes():
    text = "torch==2.9.0+cu121\r\nnumpy"
    new = ported("requirements.txt", text, "xla", imported_after_port=())
    assert new == "torch==2.9.0\r\ntorch-xla[tpu]==2.9.0\r\nnumpy"


def test_cr_only_line_ends_are_lines_as_pip_reads_them():
    """pip splits a requirements file as str.splitlines does: a file saved with lone CRs (old Mac
    line ends) is three requirements, not one line porter cannot read."""
    text = "torch==2.9.0+cu121\rflash-attn==2.6.3\rnumpy\r"
    r = port_file("requirements.txt", text, "xla", imported_after_port=())
    assert [(f.code, f.start.line) for f in r.findings if f.code == "DEP005"] == [("DEP005", 2)]
    assert ported("requirements.txt", text, "xla", imported_after_port=()) == (
        "torch==2.9.0\rtorch-xla[tpu]==2.9.0\rnumpy\r"
    )


def test_a_byte_order_mark_hides_no_line_of_a_requirements_file_or_dockerfile():
    """pip (auto_decode) and BuildKit skip a UTF-8 byte-order mark before the first line; porter
    read it as part of the line, so `\\ufefftorch==2.1.0+cu121` and `\\ufeffFROM nvidia/cuda:...`
    had no finding, and a fix of another line was "left unchanged": the rewrite did not parse
    (adversarial read 12). The mark is read as a space and kept."""
    bom = "\ufeff"
    reqs = "torch==2.9.0+cu121\n--extra-index-url https://download.pytorch.org/whl/cu121\n"
    plain, marked = (port_file("requirements.txt", t, "xla", imported_after_port=()) for t in (reqs, bom + reqs))
    assert [(f.code, f.start.line) for f in marked.findings] == [(f.code, f.start.line) for f in plain.findings]
    assert "DEP001" in codes(marked)
    assert ported("requirements.txt", bom + reqs, "xla", imported_after_port=()) == bom + ported(
        "requirements.txt", reqs, "xla", imported_after_port=()
    )
    docker = "FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04\nRUN echo hi\n"
    assert codes(port_file("Dockerfile", bom + docker, "neuron")) == codes(port_file("Dockerfile", docker, "neuron"))
    assert "CTR001" in codes(port_file("Dockerfile", bom + docker, "neuron"))


def test_a_setup_cfg_setuptools_cannot_read_is_an_error_not_a_pass():
    """setuptools reads setup.cfg with configparser, which stops at a byte-order mark before the
    first section (`\\ufeff[options]`) or text before any section; porter's line scan found no
    section there and passed the file with no finding and no error (adversarial read 12)."""
    cfg = "[options]\ninstall_requires =\n    torch==2.1.0+cu121\n    cupy-cuda12x\n"
    assert "DEP001" in codes(port_file("setup.cfg", cfg, "neuron"))
    for bad in ("\ufeff" + cfg, "name = x\n" + cfg):
        r = port_file("setup.cfg", bad, "neuron")
        assert r.status.value == "error" and "setuptools" in (r.reason or "") and r.error_line == 1, r


def test_utf16_text_is_an_error_not_a_pass(tmp_path):
    """pip, YAML and JSON readers take UTF-16 with a byte-order mark; porter reads UTF-8, so such a
    file is reported as not checked instead of passing the prefilter in silence."""
    (tmp_path / "requirements.txt").write_bytes("torch==2.9.0+cu121\ncupy-cuda12x\n".encode("utf-16"))
    results, _ = run([tmp_path], Settings(target="neuron", want_source=False), cache=False, jobs=1)
    [r] = results
    assert r.status.value == "error" and "UTF-16" in (r.reason or "")


BUILD_READS = {
    "setup.py": (
        "from setuptools import setup\n\n\ndef fetch_requirements(path):\n    with open(path) as fd:\n"
        "        return [r.strip() for r in fd.readlines()]\n\n\n"
        "setup(name='pkg', install_requires=fetch_requirements('requirements/requirements.txt'))\n"
    ),
    "requirements/requirements.txt": "numpy\ntorch>=2.1\n",
    "requirements/env.txt": "torch>=2.1\npytest\n",
    "pkg/m.py": "import torch\nx = torch.zeros(2, device='cuda')\n",
}


def test_a_requirements_file_the_build_reads_gets_no_option_lines(tmp_path):
    """DeepSpeed's setup.py turns every line of requirements/requirements.txt into
    install_requires: an `--extra-index-url` line there breaks the build everywhere. The
    file is left and the target's packages reported; a file no build code reads still gets them."""
    for name, text in BUILD_READS.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    results, _ = run([tmp_path], Settings(target="neuron"), cache=False, jobs=1)
    by = {
        r.path.replace("\\", "/").rsplit("/", 2)[-2] + "/" + r.path.replace("\\", "/").rsplit("/", 1)[-1]: r
        for r in results
    }
    read = by["requirements/requirements.txt"]
    assert read.new_source is None or read.new_source.decode() == BUILD_READS["requirements/requirements.txt"]
    dep = [f for f in read.findings if f.code == "DEP004"]
    assert dep and not dep[0].applied and "torch-neuronx" in dep[0].message and "extra" in (dep[0].advice or "")
    env = by["requirements/env.txt"]
    assert env.new_source is not None and "--extra-index-url" in env.new_source.decode()


def test_build_read_evidence():
    from porter.files.deps.build_read import read_by_build

    texts = {
        "p/setup.py": b"setup(install_requires=fetch(os.path.join('requirements', 'requirements.txt')))",
        "p/setup.cfg": b"[options]\ninstall_requires = file: reqs.txt\n",
        "q/pyproject.toml": b"[project]\ndynamic = ['dependencies']\n[tool.setuptools.dynamic]\ndependencies = {file = ['requirements.txt']}\n",
    }
    names = [
        *texts,
        "p/requirements/requirements.txt",
        "p/reqs.txt",
        "p/requirements-dev.txt",
        "q/requirements.txt",
        "r/requirements.txt",
    ]
    got = read_by_build(names, lambda n: texts.get(n))
    assert got == ("p/requirements/requirements.txt", "p/reqs.txt", "q/requirements.txt")


def test_portable_leaves_the_files_that_build_cuda_hosts():
    """`--portable` code runs on CUDA too: the requirements that build CUDA's environment keep
    their CUDA torch and get no target packages; each fix is reported with what it would be."""
    text = "torch==2.14.0+cu121\nnumpy\n"
    r = port_file("requirements.txt", text, "neuron", imported_after_port=(), portable=True)
    assert r.new_source is None
    found = {f.code: f for f in r.findings}
    assert {"DEP001", "DEP004"} <= set(found) and not any(f.applied for f in r.findings)
    assert "`requirements-neuron.txt`" in found["DEP004"].message and "torch-neuronx" in found["DEP004"].message
    alone = ported("requirements.txt", text, "neuron", imported_after_port=())
    assert "torch-neuronx" in alone  # without --portable the port is for the target
