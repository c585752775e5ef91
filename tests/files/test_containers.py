"""Dockerfiles and compose files."""

from __future__ import annotations

from tests.files.conftest import outside_edits_unchanged, port_file, ported

DOCKERFILE = """\
# syntax=docker/dockerfile:1
ARG CUDA=12.1
FROM nvidia/cuda:${CUDA}.0-devel-ubuntu22.04 AS build
ENV CUDA_VISIBLE_DEVICES=0 \\
    NCCL_DEBUG=INFO
ENV NVIDIA_DRIVER_CAPABILITIES compute,utility
LABEL com.nvidia.volumes.needed="nvidia_driver"
RUN apt-get update && \\
    # a comment inside the instruction
    apt-get install -y libcudnn8 python3-pip && \\
    nvidia-smi
RUN --mount=type=cache,target=/root/.cache pip install torch==2.14.0+cu121 --extra-index-url https://download.pytorch.org/whl/cu121
RUN <<SETUP
pip install flash-attn
nvidia-smi
SETUP
CMD ["python", "train.py", "--device", "cuda"]
"""


def test_dockerfile():
    r = port_file("Dockerfile", DOCKERFILE, "neuron")
    found = sorted((f.code, f.start.line, f.applied) for f in r.findings)
    assert {
        ("CTR001", 3, False),
        ("ENV001", 4, True),
        ("ENV002", 5, False),
        ("ENV003", 6, False),
        ("CTR002", 7, False),
        ("CTR003", 10, False),
        ("LCH001", 11, True),
        ("DEP001", 12, True),
        ("DEP002", 12, True),
        ("DEP005", 14, False),
        ("LCH001", 15, True),
        ("LCH005", 17, False),
    } <= set(found)
    new = ported("Dockerfile", DOCKERFILE, "neuron")
    assert "ENV NEURON_RT_VISIBLE_CORES=0 \\\n" in new and "    neuron-ls\n" in new and "neuron-ls\nSETUP\nCMD" in new
    assert "pip install torch==2.14.0+cpu --extra-index-url https://download.pytorch.org/whl/cpu\n" in new
    assert 'CMD ["python", "train.py", "--device", "cuda"]' in new  # the exec form is reported (JSON)
    assert outside_edits_unchanged(DOCKERFILE, new)
    assert ported("Dockerfile", new, "neuron") == new


def test_images():
    r = port_file("Dockerfile", "FROM python:3.12-slim\nRUN echo cuda\n", "xla")
    assert not r.findings  # a Python base image; a message that mentions CUDA
    for image in (
        "pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime",
        "nvcr.io/nvidia/pytorch:24.01-py3",
        "nvidia/cuda:12.1.0-base-ubuntu22.04",
    ):
        [f] = port_file("Dockerfile", f"FROM {image}\n", "xla").findings
        assert (
            f.code == "CTR001"
            and "us-central1-docker.pkg.dev/tpu-pytorch-releases/docker/xla:r2.9.0_3.10_tpuvm" in f.message
        )


COMPOSE = """\
services:
  train:
    image: nvcr.io/nvidia/pytorch:24.01-py3
    runtime: nvidia
    environment:
      - CUDA_VISIBLE_DEVICES=0,1   # two GPUs
      - NCCL_DEBUG=INFO
    command: ["nvidia-smi"]
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              capabilities: [gpu]
  eval:
    environment:
      CUDA_VISIBLE_DEVICES: "0"
    devices:
      - /dev/nvidia0
"""


def test_compose():
    r = port_file("docker-compose.yml", COMPOSE, "neuron")
    found = sorted((f.code, f.start.line, f.applied) for f in r.findings)
    assert found == [
        ("CTR001", 3, False),
        ("CTR002", 4, False),
        ("CTR002", 13, False),
        ("CTR002", 19, False),
        ("ENV001", 6, True),
        ("ENV001", 17, True),
        ("ENV002", 7, False),
        ("LCH001", 8, True),
    ]
    new = ported("docker-compose.yml", COMPOSE, "neuron")
    assert "      - NEURON_RT_VISIBLE_CORES=0-1   # two GPUs\n" in new and '      NEURON_RT_VISIBLE_CORES: "0"\n' in new
    assert '    command: ["neuron-ls"]\n' in new
    assert outside_edits_unchanged(COMPOSE, new)


def test_an_instruction_is_cut_where_docker_cuts_it():
    """Docker ends an instruction's line at LF only: a form feed or U+2028 inside one is part of
    it. Cut there (str.splitlines), the rest of the instruction was hidden: `RUN echo hi<U+2028>
    && pip install cupy-cuda12x` had no DEP005, `ENV A=1<FF> CUDA_VISIBLE_DEVICES=0` no ENV001
    (adversarial read 12)."""
    plain = "FROM python:3.11\nRUN echo hi && pip install cupy-cuda12x\nENV A=1 CUDA_VISIBLE_DEVICES=0\n"
    hidden = "FROM python:3.11\nRUN echo hi\u2028 && pip install cupy-cuda12x\nENV A=1\x0c CUDA_VISIBLE_DEVICES=0\n"
    found = [(f.code, f.start.line) for f in port_file("Dockerfile", hidden, "neuron").findings]
    assert found == [(f.code, f.start.line) for f in port_file("Dockerfile", plain, "neuron").findings], found
    assert {"DEP005", "ENV001"} <= {code for code, _ in found}
