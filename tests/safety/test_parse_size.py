"""A Python file past the size porter parses (`reading.MAX_PARSE_BYTES`) is parsed by no reader:
its porter says it once ("larger than porter parses"), and the project index (the device values
and the CUDA-only pass that lint and rewrite build before any file is ported), the generic
selection and the imports still used after the port all pass it over. Twentieth read: a 10 MB
file imported by small ones cost the project index 30 s and 3.4 GB (the index parsed it with
`ast`, twice), and was then reported as not read. The test asserts by construction: no parse
of the main process is handed the large file's text."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from typer.testing import CliRunner

from porter.cli import app
from porter.core.reading import MAX_PARSE_BYTES

SMALL = b"import torch\nfrom big import make_device\n\n\ndef run(device):\n    return torch.nn.Linear(2, 2).to(device)\n\n\nrun(make_device(0))\n"
# a device value the index would follow into it, a CUDA token, and one long comment past the limit
BIG_HEAD = b"import torch\nfrom small import run\n\n\ndef make_device(gpu):\n    return torch.device('cuda', gpu)\n\n\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "small.py").write_bytes(SMALL)
    (root / "other.py").write_bytes(b"import torch\nfrom big import make_device\n\nx = torch.zeros(2).cuda()\n")
    (root / "requirements.txt").write_bytes(b"torch\n")  # the imports still used after the port are read
    (root / "big.py").write_bytes(BIG_HEAD + b"# " + b"x" * MAX_PARSE_BYTES + b"\n")
    return root


@pytest.fixture
def parsed(monkeypatch) -> list[int]:
    """The sizes of the texts `ast.parse` is handed in this process (the project index's parse)."""
    sizes: list[int] = []
    original = ast.parse

    def spy(source, *args, **kwargs):
        sizes.append(len(source))
        return original(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", spy)
    return sizes


@pytest.mark.parametrize("command", [["lint"], ["rewrite", "--diff"]])
def test_a_file_past_the_parse_limit_is_said_once_and_never_parsed(tree, parsed, monkeypatch, command):
    monkeypatch.setenv("PORTER_NO_CACHE", "1")
    monkeypatch.setenv("PORTER_JOBS", "1")
    result = CliRunner().invoke(app, [command[0], str(tree), "--target", "neuron", *command[1:]])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    lines = result.output.splitlines()
    said = [line for line in lines if "big.py" in line and "skipped 1:" not in line]
    assert len(said) == 1 and "larger than porter parses" in said[0], result.output  # the usual note, once
    # rewrite's summary names it under its reason, as a failed file (twenty-fourth term read)
    assert len([line for line in lines if "skipped 1:" in line and "big.py" in line]) <= 1, result.output
    assert "other.py" in result.output, result.output  # the run went on: the small files' findings
    assert parsed, "the project index parsed nothing: the small files were not read either"
    assert max(parsed) < MAX_PARSE_BYTES, sorted(parsed)[-3:]


def test_the_kernel_inventory_says_it_and_parses_nothing_of_it(tree, parsed):
    from porter.kernels.inventory import scan

    (tree / "big.py").write_bytes(b"import triton\n" + BIG_HEAD + b"# " + b"x" * MAX_PARSE_BYTES + b"\n")
    inv = scan(tree)
    said = [p for p in inv.problems if "larger than porter parses" in p]
    assert len(said) == 1 and "big.py" in said[0], inv.problems
    assert all(size < MAX_PARSE_BYTES for size in parsed), sorted(parsed)[-3:]


def test_a_cuda_source_past_the_parse_limit_is_said_once_and_not_read(tmp_path):
    """A .cu file had no parse limit: `porter kernels` read and scanned one of up to 64 MiB (the
    largest .cu/.cuh of the corpus libraries is 151 KiB, vllm 0.34.0's attention_kernels.cuh)."""
    from porter.kernels.inventory import scan

    kernel = b"__global__ void %s(float* x, int n) { x[0] = n; }\n"
    (tmp_path / "small.cu").write_bytes(kernel % b"small_k")
    (tmp_path / "big.cu").write_bytes(kernel % b"big_k" + b"// " + b"x" * MAX_PARSE_BYTES + b"\n")
    inv = scan(tmp_path)
    said = [p for p in inv.problems if "big.cu" in p]
    assert len(said) == 1 and "larger than porter parses (2 MiB" in said[0], inv.problems
    assert [k.name for k in inv.kernels] == ["small_k"]


@pytest.mark.parametrize("command", [["lint"], ["rewrite", "--diff"]])
def test_lint_reads_a_cuda_source_to_the_limit_porter_kernels_reads_it_to(tmp_path, monkeypatch, command):
    """Lint's registered-ops pass (`native_ops`) read a .cu/.cuh of up to 64 MiB (the file
    bound) while `porter kernels` stops at the parse limit: one limit for both, said once as
    for a Python file (a 60 MB generated .cu: lint 153 MB peak before, 52 MB after)."""
    from porter.analysis import native_ops

    monkeypatch.setenv("PORTER_NO_CACHE", "1")
    monkeypatch.setenv("PORTER_JOBS", "1")
    root = tmp_path / "proj"
    (root / "csrc").mkdir(parents=True)
    (root / "use.py").write_bytes(b"import torch\n\n\ndef f(x):\n    return torch.ops._C.gen_op(x)\n")
    register = b'TORCH_LIBRARY_IMPL(_C, CUDA, m) { m.impl("gen_op", &gen); }\n'
    (root / "csrc" / "gen.cu").write_bytes(register + b"// " + b"x" * MAX_PARSE_BYTES + b"\n")
    (root / "csrc" / "small.cu").write_bytes(register.replace(b"gen_op", b"small_op"))
    monkeypatch.chdir(root)
    result = CliRunner().invoke(app, [command[0], ".", "--target", "neuron", *command[1:]])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    said = [line for line in result.output.splitlines() if "gen.cu" in line]
    assert len(said) == 1 and "larger than porter parses (2 MiB" in said[0], result.output
    read = native_ops.read(["csrc/gen.cu", "csrc/small.cu"])
    assert [name for name, _ in read] == ["csrc/small.cu"], [name for name, _ in read]
