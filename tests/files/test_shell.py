"""Shell scripts, Slurm batch files and Makefiles, read with tree-sitter."""

from __future__ import annotations

import pytest

from porter.files import errors
from porter.files.shell import parse
from tests.files.conftest import codes, outside_edits_unchanged, port_file, ported

SCRIPT = """\
#!/bin/bash
#SBATCH --gres=gpu:8
#SBATCH --gpus-per-node 8
set -euo pipefail
export CUDA_VISIBLE_DEVICES=0,1,2,3
export NCCL_DEBUG=INFO
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi
COUNT=$(nvidia-smi -L | wc -l)
for i in $(seq 0 3); do CUDA_VISIBLE_DEVICES=$i python eval.py --device cuda & done
torchrun --nproc_per_node=gpu train.py \\
    --backend=nccl
echo "CUDA devices: $CUDA_VISIBLE_DEVICES"
[[ -n "${X:-}" ]] && echo $(( 1 + 2 ))
case "$1" in a) nsys profile python x.py ;; esac
pip install "torch==2.14.0+cu121" --index-url https://download.pytorch.org/whl/cu121
docker run --gpus all --rm img
CUDA_VISIBLE_DEVICES=0,2 python odd.py
"""


def test_a_script_on_neuron():
    r = port_file("train.sh", SCRIPT, "neuron")
    found = sorted((f.code, f.start.line, f.applied) for f in r.findings)
    assert ("ENV001", 5, True) in found and ("ENV001", 18, False) in found  # 0,2 is no range
    assert ("ENV001", 10, False) in found and ("ENV001", 13, False) in found  # $i; a read
    assert ("LCH001", 8, True) in found and ("LCH001", 9, False) in found  # its output is read by `wc`
    assert {
        ("LCH003", 2, False),
        ("LCH003", 3, False),
        ("LCH002", 11, False),
        ("LCH005", 10, False),
        ("LCH005", 12, False),
        ("LCH004", 15, False),
        ("ENV002", 6, False),
        ("ENV004", 7, False),
        ("CTR002", 17, False),
    } <= set(found)
    new = ported("train.sh", SCRIPT, "neuron")
    assert "export NEURON_RT_VISIBLE_CORES=0-3\n" in new and "\nneuron-ls\n" in new
    assert 'pip install "torch==2.14.0+cpu" --index-url https://download.pytorch.org/whl/cpu\n' in new
    assert outside_edits_unchanged(SCRIPT, new)
    assert ported("train.sh", new, "neuron") == new  # a second run changes nothing


def test_a_script_on_xla_and_tpu():
    xla = ported("train.sh", SCRIPT, "xla")
    assert (
        "\ntpu-info\n" in xla and "export CUDA_VISIBLE_DEVICES=0,1,2,3\n" in xla
    )  # no documented counterpart: reported
    assert 'pip install "torch==2.14.0"\n' in xla  # the CUDA index goes: PyPI's torch
    tpu = ported("train.sh", SCRIPT, "tpu")
    assert "\nnvidia-smi\n" in tpu  # TorchTPU does not install tpu-info: reported


def test_a_script_that_does_not_parse_is_reported_not_rewritten():
    r = port_file("bad.sh", "if then fi (\nnvidia-smi\n", "neuron")
    assert r.status.value == "error" and "does not parse as bash" in r.reason and r.new_source is None


def test_makefile_recipes_and_variables():
    text = "GPUS ?= 8\nexport CUDA_VISIBLE_DEVICES=0,1\n\ntrain:\n\t@nvidia-smi\n\t-CUDA_VISIBLE_DEVICES=0 torchrun --nproc_per_node=$(GPUS) t.py \\\n\t  --device cuda\n"
    new = ported("Makefile", text, "neuron")
    assert (
        new
        == "GPUS ?= 8\nexport NEURON_RT_VISIBLE_CORES=0-1\n\ntrain:\n\t@neuron-ls\n\t-NEURON_RT_VISIBLE_CORES=0 torchrun --nproc_per_node=$(GPUS) t.py \\\n\t  --device cuda\n"
    )
    assert {"LCH002", "LCH005"} <= set(codes(port_file("Makefile", text, "neuron")))


def test_without_the_shell_extra_a_script_is_skipped_saying_how_to_install_it(monkeypatch):
    def missing(grammar):
        raise errors.NeedsExtra(f"reading shell needs tree-sitter: {parse.EXTRA}")

    monkeypatch.setattr(parse, "_parser", missing)
    r = port_file("train.sh", SCRIPT, "neuron")
    assert r.status.value == "skipped" and "pip install 'porter[shell]'" in r.reason


@pytest.mark.parametrize("name", ["run.sh", "Makefile"])
def test_suppression_comments(name):
    line = "nvidia-smi  # porter: ignore[LCH001]\n" if name == "run.sh" else "x:\n\tnvidia-smi  # noqa: LCH001\n"
    r = port_file(name, line, "neuron")
    assert not r.findings and [f.code for f in r.suppressed] == ["LCH001"] and r.new_source is None


# llama.cpp's Makefile (vendored in llama-cpp-python 0.2.90's sdist): GNU make reads
# parentheses inside quotes in `$(shell ...)`, tree-sitter-make does not
UNPARSED_MAKEFILE = """\
export CUDA_VISIBLE_DEVICES=0

ifdef GGML_CUDA
CUDA_VERSION := $(shell $(NVCC) --version | grep -oP 'release (\\K[0-9]+\\.[0-9])')
MK_NVCCFLAGS += -DGGML_CUDA_FORCE_MMQ
endif

gpus:
\tnvidia-smi
"""


def test_a_makefile_tree_sitter_does_not_read_is_still_read_and_only_reported():
    assert parse.error_lines(parse.parse(UNPARSED_MAKEFILE.encode(), "make").root_node)  # the grammar's gap
    r = port_file("Makefile", UNPARSED_MAKEFILE, "neuron")
    assert r.status.value == "unchanged" and r.new_source is None
    found = sorted((f.code, f.start.line) for f in r.findings)
    # the line that did not parse is read as an assignment, the rest as before; nothing applied
    assert ("ENV003", 4) in found and ("ENV001", 1) in found and ("LCH001", 9) in found
    assert ("LCH006", 5) in found
    assert not any(f.applied for f in r.findings)


def test_a_cuda_define_of_a_native_build_is_reported():
    sh = port_file(
        "build.sh",
        "cmake -B build -DGGML_CUDA=ON -DLLAMA_CURL=ON -DCMAKE_CUDA_ARCHITECTURES=native .\nGGML_CUDA=1 make -j\n",
        "xla",
    )
    found = sorted((f.code, f.start.line, f.start.column) for f in sh.findings)
    assert found == [("ENV003", 2, 0), ("LCH006", 1, 15), ("LCH006", 1, 46)]  # -DLLAMA_CURL is no CUDA define
    docker = port_file(
        "Dockerfile", 'FROM python:3.12-slim\nRUN CMAKE_ARGS="-DGGML_CUDA=on" pip install llama-cpp-python\n', "tpu"
    )
    assert [(f.code, f.message) for f in docker.findings] == [
        ("LCH006", "`-DGGML_CUDA` builds native code with its CUDA backend")
    ]
    make = port_file("Makefile", 'build.cuda:\n\tCMAKE_ARGS="-DGGML_CUDA=on" python3 -m pip install -e .\n', "neuron")
    assert sorted(codes(make)) == ["LCH006", "LCH008"] and make.new_source is None  # (the rule named for CUDA: LCH008)
    assert (
        codes(port_file("build.sh", "cmake -DUSE_OPENMP=ON -DGGML_CUDA=OFF -DWITH_CUDAX=1 .\n")) == []
    )  # off; no CUDA word


def test_a_variable_with_cuda_glued_to_its_name_is_a_cuda_setting():
    """CMake's `CUDAARCHS`/`CUDACXX`, a workflow's `CUDAVER`: CUDA at the start of a word."""
    from porter.files.shell.env import rule_of

    assert [rule_of(n) for n in ("CUDAVER", "CUDACXX", "MY_CUDAARCHS", "NCCLX_DEBUG")] == [
        "ENV003",
        "ENV003",
        "ENV003",
        "ENV002",
    ]
    assert [rule_of(n) for n in ("BARRACUDA", "NVTEST", "CURANDOM", "XCUDA")] == [None] * 4  # no word starts with it
    r = port_file("build.sh", 'export CUDACXX=/usr/bin/nvcc\necho "$CUDAVER"\n', "xla")
    assert sorted((f.code, f.start.line) for f in r.findings) == [("ENV003", 1), ("ENV003", 2)]


def test_files_of_nvidias_driver_named_or_written_by_a_command():
    script = (
        'mkdir -p /etc/OpenCL/vendors && echo "libnvidia-opencl.so.1" > /etc/OpenCL/vendors/nvidia.icd\n'
        "ln -s /usr/local/cuda/lib64/stubs/libcuda.so /usr/lib/libcuda.so.1\n"
        "docker run --device /dev/nvidia0 img\n"
        'echo "install libcuda.so first"\n'  # a message: nothing
        "apt-get install -y libcudnn8\n"  # a system package: CTR003's
        "export LD_LIBRARY_PATH=/usr/local/nvidia/lib64\n"  # a variable's value: ENV004's
        "cp -r src/ggml-cuda/ out/\n"  # the project's own folder: no driver file
    )
    r = port_file("setup.sh", script, "neuron")
    found = sorted((f.code, f.start.line) for f in r.findings)
    assert found == [("CTR003", 5), ("ENV004", 6), ("LCH007", 1), ("LCH007", 2), ("LCH007", 3)]
    assert "writes `/etc/OpenCL/vendors/nvidia.icd`" in next(f.message for f in r.findings if f.start.line == 1)
    assert r.new_source is None  # reported, never rewritten


MAKE_TARGETS = """\
.PHONY: \\
\tbuild \\
\tbuild.cuda
all: build.cuda docs
build.cuda:
\tpython3 -m pip install -e .
build.metal:
\tpython3 -m pip install -e .
ggml/src/ggml-cuda/%.o: \\
\tggml/src/ggml-cuda/%.cu \\
\tggml/src/ggml.h
\t$(CXX) -c $< -o $@
"""


def test_make_rules_for_cuda_are_reported_where_they_are_defined():
    r = port_file("Makefile", MAKE_TARGETS, "xla")
    found = sorted((f.code, f.start.line, f.end.line) for f in r.findings)
    # `all` needs the CUDA build; `build.cuda` is named for it; the object rule's header (all
    # three lines) compiles CUDA sources; `.PHONY` only declares names; `build.metal` is none
    assert found == [("LCH008", 4, 4), ("LCH008", 5, 5), ("LCH008", 9, 11)]
    assert r.new_source is None
