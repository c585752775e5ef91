"""Package indexes of GPU builds: PyTorch's `/whl/cuXXX` (and `/whl/rocmX.Y`, `/whl/xpu`) indexes and NVIDIA's own
(DEP002)."""

from __future__ import annotations

import re

from porter.files.facts import environment
from porter.files.sites import REMOVED, Site

# PyTorch's indexes of GPU builds, by the name uv's torch backend and the index's path share, and the GPU their torch
# needs (uv 0.13.9's `TorchMode`: `cu126`, `rocm6.2`, `xpu`, each `https://download.pytorch.org/whl/<name>`; `cpu`
# and `auto` are none: on the target's machine `auto` finds no GPU and takes `cpu`). A ROCm or XPU build is as wrong
# for the target as a CUDA build: tpu and neuron take the CPU build, xla PyPI's.
GPU_BUILDS: dict[str, str] = {"CUDA": r"cu\d+", "ROCm": r"rocm\d+(?:\.\d+)*", "XPU": r"xpu"}
GPU_BACKEND = re.compile("|".join(f"(?:{pattern})" for pattern in GPU_BUILDS.values()))
_GPU_BUILD = {gpu: re.compile(pattern) for gpu, pattern in GPU_BUILDS.items()}
_TORCH_GPU_INDEX = re.compile(
    rf"(https?://download\.pytorch\.org/whl/(?:nightly/|test/)?)(?:{GPU_BACKEND.pattern})(?=/|$|\s|['\"])"
)
_NVIDIA_INDEX = re.compile(r"https?://pypi(?:\.ngc)?\.nvidia\.com[^\s'\"]*")
# another project's index of CUDA builds (`.../whl/cu118/`: auto-gptq's, a vendor's)
_OTHER_CUDA_INDEX = re.compile(r"https?://\S*?/(?:whl/)?cu\d{2,3}(?=/|$|\s|['\"])\S*")
# the variables pip and uv take an index or a page of links from, as their option would (pip 23.2.1's
# `PIP_<OPTION>` for each option, `PIP_PYPI_URL` for `--index-url`'s other name too; uv 0.13.9's documented
# environment variables), by the installer that reads them (uv asks no index of `PIP_*`, pip none of `UV_*`); a
# list of URLs is split by `_LIST_SEPARATORS`
INSTALLER_INDEX_VARIABLES: dict[str, frozenset[str]] = {
    "pip": frozenset({"PIP_INDEX_URL", "PIP_PYPI_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS"}),
    "uv": frozenset({"UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX", "UV_FIND_LINKS"}),
}
INDEX_VARIABLES = frozenset().union(*INSTALLER_INDEX_VARIABLES.values())
# how a variable's value is split into its list of URLs, as its installer splits it: pip splits each `PIP_<OPTION>`
# of an appended option at whitespace (pip 23.2.1 `ConfigOptionParser._update_defaults`: `val.split()`), uv
# `UV_FIND_LINKS` at commas ("a comma-separated list", uv 0.13.9's environment reference) and its other index
# variables at spaces. One rule for every reader (a Dockerfile's `ENV`, a shell's assignment, Hatch's `env-vars`):
# Hatch's split at commas too, the shell's never (thirty-fifth read).
_LIST_SEPARATORS: dict[str, str] = {"UV_FIND_LINKS": ","}
_URL_WORD = re.compile(r"[^\s'\"]+")
_LIST_ITEM = {name: re.compile(rf"[^\s'\"{re.escape(sep)}]+") for name, sep in _LIST_SEPARATORS.items()}


def list_items(name: str, value: str) -> list[tuple[int, str]]:
    """(offset, item) of each URL (or uv's `name=URL`) in the list value of index variable `name`."""
    return [(m.start(), m.group(0)) for m in _LIST_ITEM.get(name, _URL_WORD).finditer(value)]


# uv's torch backend picks PyTorch's index by name (`cu121`: `https://download.pytorch.org/whl/cu121`), set as
# `torch-backend` (uv.toml, `[tool.uv]`), `--torch-backend` (`uv pip install`) or this variable (uv 0.13.10
# `pip install --dry-run -v` asks `/whl/cu121` for each; pip reads none of them)
TORCH_BACKEND_VARIABLE = "UV_TORCH_BACKEND"
TORCH_BACKEND_OPTION = "--torch-backend"
INSTALLER_VARIABLES = INDEX_VARIABLES | {TORCH_BACKEND_VARIABLE}  # what `variable_index_sites` reads


def installer_variable(name: str) -> str:
    """The variable `name` is to its installer, as that installer reads the environment: pip takes each `PIP_`
    name's rest as an option, lower-cased, its `_` as `-` and a leading `--` dropped (pip 23.2.1's
    `Configuration._normalized_keys`: `PIP_extra_index_url`, `PIP_Extra_Index_Url`, `PIP_EXTRA-INDEX-URL` and
    `PIP___EXTRA_INDEX_URL` are each `--extra-index-url`: "Looking in indexes: ..., URL"), so each is
    `PIP_EXTRA_INDEX_URL` here; uv reads its `UV_*` names as written (thirty-sixth read)."""
    if not name.startswith("PIP_"):
        return name
    option = name[4:].lower().replace("_", "-")
    return "PIP_" + option.removeprefix("--").upper().replace("-", "_")


def spellings(variable: str) -> str:
    """A pattern of each name `installer_variable` reads as `variable` (an ASCII one): a `PIP_` name's rest in any
    case, each `_` written `_` or `-`, after a `--` written with either (`PIP_constraint`, `PIP___CONSTRAINT`); any
    other as written. `PIP_constraint=pins.txt` is pip's `--constraint` as `PIP_CONSTRAINT` is (thirty-sixth read)."""
    if not variable.startswith("PIP_"):
        return re.escape(variable)
    rest = "".join("[_-]" if c == "_" else f"[{c}{c.lower()}]" if c.isalpha() else re.escape(c) for c in variable[4:])
    return f"PIP_(?:[_-]{{2}})?{rest}"


def gpu_builds(backend: str) -> str:
    """The GPU whose builds a `GPU_BACKEND` name picks (`rocm6.2`: "ROCm")."""
    return next(gpu for gpu, pattern in _GPU_BUILD.items() if pattern.fullmatch(backend))


def index_sites(text: str, at: int, url: str, target: str, remove: tuple[int, int] | None) -> list[Site]:
    """The DEP002 site of an index option whose value `url` starts at `at`: the URL becomes the
    CPU index, or, where the target takes PyPI's torch, the option goes (`remove`: the span
    of the option and its value, with its line where the option is alone on one)."""
    env = environment(target)
    m = _TORCH_GPU_INDEX.search(url)
    if m is None:
        other = _OTHER_CUDA_INDEX.search(url) if _NVIDIA_INDEX.search(url) is None else None
        if other is not None:
            return [
                Site(
                    "DEP002",
                    at + other.start(),
                    at + other.end(),
                    None,
                    message=f"`{other.group(0)}` is an index of CUDA builds",
                    advice="Remove it, and the packages it served, for the target: their wheels are CUDA builds.",
                )
            ]
        nv = _NVIDIA_INDEX.search(url)
        if nv is None:
            return []
        return [
            Site(
                "DEP002",
                at + nv.start(),
                at + nv.end(),
                None,
                message=f"NVIDIA's package index ({nv.group(0)}) serves CUDA libraries only",
                advice="Remove it once no requirement needs it (the CUDA libraries it serves do not run on the"
                " target).",
            )
        ]
    start, end = at + m.start(), at + m.end()
    builds = f"`{m.group(0)}` is PyTorch's index of {gpu_builds(m.group(0)[len(m.group(1)) :])} builds"
    if env.get("torch_index_url"):
        return [
            Site(
                "DEP002",
                start,
                end,
                m.group(1) + "cpu",
                message=builds + ": the target takes torch's CPU build",
            )
        ]
    message = builds + ": the target takes PyPI's torch"
    if remove is None:
        return [Site("DEP002", start, end, None, message=message)]
    return [Site("DEP002", remove[0], remove[1], "", message=message + REMOVED)]


def torch_backend_site(at: int, backend: str, target: str, setting: str, key: str) -> Site:
    """DEP002 on uv's torch backend `backend` (a `GPU_BACKEND`) written at `at`; `setting` (how it was set,
    as the message quotes it: uv's `torch-backend = "cu121"`), `key` as the file spells it, for the advice (a
    Hatch `env-vars`' `UV_TORCH_BACKEND` was told to remove `torch-backend`, not in the file: thirty-fourth read)."""
    index = f"https://download.pytorch.org/whl/{backend}"
    message = f"{setting} takes torch from PyTorch's index of {gpu_builds(backend)} builds (`{index}`)"
    if environment(target).get("torch_index_url"):
        return Site("DEP002", at, at + len(backend), "cpu", message=message + ": the target takes torch's CPU build")
    return Site(
        "DEP002",
        at,
        at + len(backend),
        None,
        message=message + ": the target takes PyPI's torch",
        advice=f"Remove `{key}` for the target (uv then takes torch from PyPI).",
    )


def variable_index_sites(text: str, target: str, name: str, value_span: tuple[int, int]) -> list[Site]:
    """DEP002 for each index of CUDA builds in an `INDEX_VARIABLES` variable's value (`ENV
    PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cu121`): pip and uv take torch from it as from
    `--extra-index-url`; and uv's `UV_TORCH_BACKEND=cu121`. Never removed (the assignment may set more than
    the index)."""
    name = installer_variable(name)
    if name == TORCH_BACKEND_VARIABLE:
        word = _URL_WORD.search(text, value_span[0], value_span[1])
        if word is None or GPU_BACKEND.fullmatch(word.group(0)) is None:
            return []
        return [torch_backend_site(word.start(), word.group(0), target, f"`{name}={word.group(0)}`", name)]
    if name not in INDEX_VARIABLES:
        return []
    out: list[Site] = []
    for offset, item in list_items(name, text[value_span[0] : value_span[1]]):
        out.extend(index_sites(text, value_span[0] + offset, item, target, None))
    return out
