"""The thirty-fifth read's dependency leftovers (cdleft): what the thirty-fourth read's cache, cache2 and cdleft
helpers left, each read against the tool that runs it (uv 0.13.9's torch backends and its `UV_FIND_LINKS`, pip
23.2.1's `PIP_<OPTION>` lists, POSIX `sh -c`, a compose service's `command:`, a workflow's `run:`)."""

from __future__ import annotations

import pytest

from tests.safety.test_thirty_third_read_cache2 import _run


def _codes(result, code):
    return [f for f in result.findings if f.code == code]


@pytest.mark.parametrize(
    ("name", "text", "index"),
    [
        ("uv.toml", 'torch-backend = "rocm6.2"\n', "https://download.pytorch.org/whl/rocm6.2"),
        (
            "pyproject.toml",
            '[project]\nname = "a"\nversion = "1"\n[tool.uv]\ntorch-backend = "xpu"\n',
            "https://download.pytorch.org/whl/xpu",
        ),
        ("requirements.txt", "--index-url https://download.pytorch.org/whl/rocm6.2\ntorch\n", "/whl/rocm6.2"),
        ("run.sh", "uv pip install --torch-backend rocm6.1 torch\n", "https://download.pytorch.org/whl/rocm6.1"),
        ("Dockerfile", "FROM python:3.11\nRUN pip install torch -i https://download.pytorch.org/whl/xpu\n", "/whl/xpu"),
    ],
)
def test_uvs_rocm_and_xpu_torch_backends_and_their_indexes_are_reported(tmp_path, name, text, index):
    """uv 0.13.9 takes torch from `https://download.pytorch.org/whl/<backend>` for `torch-backend = "rocm6.2"` or
    `"xpu"` (its `TorchMode`): a build for AMD's or Intel's GPUs, as wrong for tpu and neuron (the CPU build) and
    xla (PyPI's torch) as a CUDA build. porter said nothing. Now DEP002, naming the GPU, with the CPU index."""
    for target in ("tpu", "xla"):
        results = _run(tmp_path / target, {name: text}, target=target)
        [found] = _codes(results[name], "DEP002")
        assert index in found.message and ("ROCm builds" in found.message or "XPU builds" in found.message), found
        if target == "tpu":
            assert found.replacement == "cpu" or found.replacement.endswith("/whl/cpu"), found
        else:
            assert "PyPI's torch" in found.message, found


def test_uvs_auto_and_cpu_torch_backends_are_left_alone(tmp_path):
    """Guards: `auto` takes the CPU build on a machine with no NVIDIA, AMD or Intel GPU (the target's), `cpu` is
    the CPU index; PyTorch's CPU index in a requirements file is what the target takes."""
    results = _run(
        tmp_path,
        {
            "uv.toml": 'torch-backend = "auto"\n',
            "sub/uv.toml": 'torch-backend = "cpu"\n',
            "requirements.txt": "--extra-index-url https://download.pytorch.org/whl/cpu\ntorch\n",
        },
    )
    assert not any(_codes(result, "DEP002") for result in results.values()), results


def test_uvs_find_links_variable_is_a_list_at_commas(tmp_path):
    """uv reads `UV_FIND_LINKS` as a comma-separated list (its environment reference), its other index variables
    and pip's `PIP_<OPTION>` at whitespace. A Dockerfile's `ENV UV_FIND_LINKS=<cu121 index>,<another>` was read
    as one URL (`...cu121,https://...`): no finding. Now each item is read."""
    text = "FROM python:3.11\nENV UV_FIND_LINKS=https://download.pytorch.org/whl/cu121,https://example.org/w\n"
    results = _run(tmp_path, {"Dockerfile": text})
    [found] = _codes(results["Dockerfile"], "DEP002")
    assert found.replacement == "https://download.pytorch.org/whl/cpu", found
    assert (found.start.line, found.start.column, found.end.column) == (2, 18, 56), found


def test_a_pip_variables_value_with_a_comma_is_one_url_as_pip_reads_it(tmp_path):
    """Hatch's `env-vars` were split at commas too, the shell's never: `PIP_EXTRA_INDEX_URL =
    "<cu121 index>,https://pypi.org/simple"` got DEP002 and a fix to `/whl/cpu,https://...`, though pip splits
    at whitespace only and asks `.../cu121,https://pypi.org/simple/torch/` (no index of CUDA builds). One rule
    now: the same value in a Dockerfile and in Hatch gives the same (no) finding; Hatch's `UV_FIND_LINKS` list at
    commas is read."""
    value = "https://download.pytorch.org/whl/cu121,https://pypi.org/simple"
    hatch = (
        f'[project]\nname = "a"\nversion = "1"\n[tool.hatch.envs.default.env-vars]\nPIP_EXTRA_INDEX_URL = "{value}"\n'
    )
    results = _run(
        tmp_path / "a", {"pyproject.toml": hatch, "Dockerfile": f"FROM x\nENV PIP_EXTRA_INDEX_URL={value}\n"}
    )
    assert not _codes(results["pyproject.toml"], "DEP002"), results["pyproject.toml"].findings
    assert not _codes(results["Dockerfile"], "DEP002"), results["Dockerfile"].findings
    uv = '[project]\nname = "a"\nversion = "1"\n[tool.hatch.envs.default]\ninstaller = "uv"\n'
    uv += f'[tool.hatch.envs.default.env-vars]\nUV_FIND_LINKS = "{value}"\n'
    results = _run(tmp_path / "b", {"pyproject.toml": uv})
    assert len(_codes(results["pyproject.toml"], "DEP002")) == 1, results["pyproject.toml"].findings


_SH_C = "pip install torch --index-url https://download.pytorch.org/whl/cu121 && python m.py"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("docker-compose.yml", f'services:\n  app:\n    image: python:3.11\n    command: sh -c "{_SH_C}"\n'),
        ("docker-compose.yml", f'services:\n  app:\n    image: python:3.11\n    command: ["sh", "-c", "{_SH_C}"]\n'),
        (
            "compose.yaml",
            f"services:\n  app:\n    image: python:3.11\n    entrypoint:\n      - bash\n      - -ec\n      - {_SH_C}\n",
        ),
        ("Dockerfile", f"FROM python:3.11\nRUN bash -lc '{_SH_C}'\n"),
        ("run.sh", f'sh -c "{_SH_C}"\n'),
    ],
)
def test_the_script_a_shell_runs_with_c_is_read(tmp_path, name, text):
    """POSIX `sh -c command_string` runs the string as a script; compose's `command: sh -c "pip install ...
    --index-url .../cu121"` (and its list form), a Dockerfile's `RUN bash -lc '...'`: the string was never read,
    so "All checks passed!". Now it is read as shell, its index edited in place."""
    results = _run(tmp_path, {name: text})
    [found] = _codes(results[name], "DEP002")
    assert found.replacement == "https://download.pytorch.org/whl/cpu", found
    line = text.splitlines()[found.start.line - 1]
    assert line[found.start.column :].startswith("https://download.pytorch.org/whl/cu121 "), (line, found)


def test_python_c_and_a_shells_other_options_are_no_script(tmp_path):
    """Guards: `python -c '...'` is Python, `sh script.sh` runs a file, and `sh -c "$CMD" '...'` runs `$CMD` (the
    word after it is the script's `$0`); none of the strings is read as shell."""
    text = (
        "python -c 'pip install torch --index-url https://download.pytorch.org/whl/cu121'\n"
        "sh -c \"$CMD\" 'pip install torch --index-url https://download.pytorch.org/whl/cu121'\n"
        "sh script.sh 'pip install torch --index-url https://download.pytorch.org/whl/cu121'\n"
    )
    results = _run(tmp_path, {"run.sh": text})
    assert not _codes(results["run.sh"], "DEP002"), results["run.sh"].findings


def test_a_compose_file_whose_only_cuda_sign_is_a_cuda_build_in_a_command_is_read(tmp_path):
    """`command: pip install torch==2.4.0+cu121`: DEP001's kinds lacked compose (and YAML), so the file was
    skipped: "All checks passed!". Now DEP001 with the CPU build, as in a Dockerfile's RUN; a workflow's `run:` too."""
    results = _run(
        tmp_path,
        {
            "docker-compose.yml": "services:\n  app:\n    image: python:3.11\n    command: pip install torch==2.4.0+cu121\n",
            ".github/workflows/t.yml": "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n"
            "      - run: pip install torch==2.4.0+cu121\n",
        },
    )
    [found] = _codes(results["docker-compose.yml"], "DEP001")
    assert found.replacement == "+cpu", found
    assert _codes(results[".github/workflows/t.yml"], "DEP001"), results[".github/workflows/t.yml"].findings


def test_a_workflows_install_from_an_index_of_gpu_builds_is_read_without_a_cuda_word(tmp_path):
    """A workflow's `run: pip install torch --extra-index-url .../whl/cu118` was read as shell only where the line
    named CUDA (`cuda`, `nvidia`, `+cu1`): no finding. Now an index of PyTorch's or NVIDIA's, or uv's
    `--torch-backend`, makes the line shell."""
    text = (
        "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: pip install torch --extra-index-url https://download.pytorch.org/whl/cu118\n"
        "      - run: uv pip install torch --torch-backend rocm6.2\n"
        "      - run: pip install torch --extra-index-url https://download.pytorch.org/whl/cpu\n"
    )
    results = _run(tmp_path, {".github/workflows/t.yml": text})
    found = _codes(results[".github/workflows/t.yml"], "DEP002")
    assert sorted(f.start.line for f in found) == [6, 7], found
    assert not _codes(results[".github/workflows/t.yml"], "CFG005"), results[".github/workflows/t.yml"].findings


def test_a_pins_file_matched_by_file_name_only_is_said_so(tmp_path):
    """Two `requirements-pins.txt`, in deps/ and other/; the Dockerfile runs `pip install -c
    deps/requirements-pins.txt`. porter matches a command line's `-c` by file name (it does not follow the
    command's working folder: `WORKDIR`, `COPY`), so both get DEP004 with no edit, the safe side; but both were
    told "Dockerfile:4 names this file with `-c`", untrue of other/. Now the file the path names from the
    command's folder is told so, the other that the command names `deps/requirements-pins.txt`, matched by its
    file name."""
    results = _run(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.11\nWORKDIR /app\nCOPY . .\nRUN pip install -c deps/requirements-pins.txt torch\n",
            "deps/requirements-pins.txt": "torch==2.9.0\n",
            "other/requirements-pins.txt": "torch==2.9.0\n",
            "m.py": "import torch\nx = torch.zeros(2).cuda()\n",
        },
        target="xla",
    )
    [named] = _codes(results["deps/requirements-pins.txt"], "DEP004")
    [other] = _codes(results["other/requirements-pins.txt"], "DEP004")
    assert named.replacement is None, named
    assert "Dockerfile:4 names this file with `-c`" in named.advice, named.advice
    # (since cache2, the thirty-fifth read: `WORKDIR /app` and `COPY . .` are followed, and other/'s file, which
    # nothing names, gets the target's packages)
    assert other.replacement is not None and "names" not in (other.advice or ""), other


def test_a_dockerfiles_exec_form_shell_script_is_read(tmp_path):
    """`RUN ["/bin/bash", "-c", "pip install ... --index-url .../cu121"]`: the exec form's script was not read
    either ("All checks passed!"). Now DEP002, reported (a JSON string's characters are not edited)."""
    text = 'FROM python:3.11\nRUN ["/bin/bash", "-c", "pip install torch --index-url https://download.pytorch.org/whl/cu121"]\n'
    results = _run(tmp_path, {"Dockerfile": text})
    [found] = _codes(results["Dockerfile"], "DEP002")
    assert (found.start.line, found.start.column) == (2, 55), found
