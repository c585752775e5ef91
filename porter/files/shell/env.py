"""Environment variables of CUDA, NCCL and NVIDIA's runtime, set or read anywhere (ENV rules).

Every kind that sets variables (a shell assignment, `export`, a Makefile's, a Dockerfile's
`ENV`/`ARG`, a compose service's `environment:`, Jupyter's `%env`) hands the name and value
here with their places. Only `CUDA_VISIBLE_DEVICES` on neuron has a documented counterpart
(`NEURON_RT_VISIBLE_CORES`, in AWS's Neuron Runtime configuration guide); the rest is reported.
"""

from __future__ import annotations

import re

from porter.files.deps.indexes import INSTALLER_VARIABLES, installer_variable, variable_index_sites
from porter.files.facts import environment
from porter.files.sites import Site
from porter.files.shell.names import LIBRARIES
from porter.files.shell.native import defines

VISIBLE = "CUDA_VISIBLE_DEVICES"
# a name with NCCL, CUDA, cuDNN, NVIDIA or a CUDA library as one of its words (`NCCL_DEBUG`,
# `CUDA`, `CUDA_HOME`, `TORCH_CUDA_ARCH_LIST`, `PYTORCH_NVML_BASED_CUDA_CHECK`), or NCCL, CUDA,
# cuDNN or NVIDIA at the start of one, glued to what follows: CMake's own `CUDAARCHS`,
# `CUDACXX`, `CUDAFLAGS`, `CUDAHOSTCXX`, a workflow's `CUDAVER` (not the libraries' short
# names: `NVTEST`, `CURANDOM` are no CUDA settings)
_NCCL = re.compile(r"(?:[A-Z0-9]+_)*NCCL[A-Z0-9]*(?:_[A-Z0-9]+)*")
_CUDA = re.compile(rf"(?:[A-Z0-9]+_)*(?:(?:CUDA|CUDNN|NVIDIA)[A-Z0-9]*|{LIBRARIES})(?:_[A-Z0-9]+)*")
_CUDA_PATH = re.compile(r"/usr/local/cuda(?:-[\d.]+)?\b|/cuda/(?:lib|bin|include)|/opt/nvidia\b|/usr/local/nvidia\b")
_INDEXES = re.compile(r"\d+(?:,\d+)*")


def rule_of(name: str) -> str | None:
    """The ENV rule of a variable name, or None for a variable that is no CUDA setting."""
    if name == VISIBLE:
        return "ENV001"
    if _NCCL.fullmatch(name):
        return "ENV002"
    if _CUDA.fullmatch(name):
        return "ENV003"
    return None


def checked(name: str) -> bool:
    """Whether an assignment of `name` has checks: a CUDA setting (`rule_of`), or a variable pip or uv take
    a package index or torch's backend from (DEP002: a workflow's `env:`, a compose service's `environment:`
    set it for the installs run under them, as a Dockerfile's `ENV` does)."""
    return rule_of(name) is not None or installer_variable(name) in INSTALLER_VARIABLES


def visible_cores(value: str) -> str | None:
    """`CUDA_VISIBLE_DEVICES`'s value as `NEURON_RT_VISIBLE_CORES` takes it (one index or a
    range `first-last`), or None when it is no unbroken list of indexes."""
    value = value.strip()
    if not _INDEXES.fullmatch(value):
        return None
    indexes = [int(v) for v in value.split(",")]
    if len(indexes) == 1:
        return str(indexes[0])
    if indexes != list(range(indexes[0], indexes[0] + len(indexes))):
        return None
    return f"{indexes[0]}-{indexes[-1]}"


def assignment(
    text: str, target: str, name: str, name_span: tuple[int, int], value: str | None, value_span: tuple[int, int] | None
) -> list[Site]:
    """The sites of `name=value`. `value`: the literal value (quotes taken off), None when it is
    no literal (an expansion); `value_span`: where the value is written, quotes included."""
    out: list[Site] = []
    rule = rule_of(name)
    end = value_span[1] if value_span is not None else name_span[1]
    if rule == "ENV001":
        out.append(_visible(text, target, name_span, value, value_span))
    elif rule is not None:
        out.append(
            Site(
                rule,
                name_span[0],
                end,
                None,
                message=f"`{name}` configures {_what(rule)}, which the target does not run",
            )
        )
    raw = text[value_span[0] : value_span[1]] if value_span is not None else ""
    if value_span is not None:
        out.extend(variable_index_sites(text, target, name, value_span))
    if value_span is not None and "-D" in raw:
        out.extend(defines(raw, value_span[0]))
    path = _CUDA_PATH.search(raw)
    if path is not None and value_span is not None:
        out.append(
            Site(
                "ENV004",
                value_span[0],
                value_span[1],
                None,
                message=f"`{name}` names CUDA's install: `{path.group(0)}`",
            )
        )
    return out


def read(name: str, span: tuple[int, int]) -> Site | None:
    """The site of a place that reads `$NAME` (or names the variable: `unset NAME`)."""
    rule = rule_of(name)
    if rule is None:
        return None
    return Site(rule, span[0], span[1], None, message=f"reads `{name}`, a setting of {_what(rule)}")


def _what(rule: str) -> str:
    return {"ENV001": "CUDA's device list", "ENV002": "NCCL, CUDA's collectives"}.get(rule, "CUDA or NVIDIA's runtime")


def _visible(
    text: str, target: str, name_span: tuple[int, int], value: str | None, value_span: tuple[int, int] | None
) -> Site:
    env = environment(target)
    new_name = env.get("visible_devices")
    end = value_span[1] if value_span is not None else name_span[1]
    cores = visible_cores(value) if value is not None else None
    if not new_name or cores is None or value_span is None:
        why = (
            ""
            if new_name and value is not None and cores is not None
            else (
                f": the value `{value}` is no unbroken list of indexes"
                if new_name and value is not None
                else ": its value is not written here"
                if new_name
                else ""
            )
        )
        return Site("ENV001", name_span[0], end, None, message=f"`{VISIBLE}` chooses NVIDIA GPUs{why}")
    assert value is not None  # (cores came from it)
    raw = text[value_span[0] : value_span[1]]
    at = raw.find(value.strip())
    new_value = raw[:at] + cores + raw[at + len(value.strip()) :]
    replacement = new_name + text[name_span[1] : value_span[0]] + new_value
    return Site(
        "ENV001",
        name_span[0],
        end,
        replacement,
        message=f"`{VISIBLE}={value.strip()}` becomes `{new_name}={cores}` (one NeuronCore index or a range)",
        unedited=f"`{VISIBLE}={value.strip()}` is `{new_name}={cores}` on the target (one NeuronCore index or a range)",
    )
