"""Package indexes of CUDA builds: PyTorch's `/whl/cuXXX` indexes and NVIDIA's own (DEP002)."""

from __future__ import annotations

import re

from porter.files.facts import environment
from porter.files.sites import Site

_TORCH_CUDA_INDEX = re.compile(r"(https?://download\.pytorch\.org/whl/(?:nightly/|test/)?)cu\d+(?=/|$|\s|['\"])")
_NVIDIA_INDEX = re.compile(r"https?://pypi(?:\.ngc)?\.nvidia\.com[^\s'\"]*")
# another project's index of CUDA builds (`.../whl/cu118/`: auto-gptq's, a vendor's)
_OTHER_CUDA_INDEX = re.compile(r"https?://\S*?/(?:whl/)?cu\d{2,3}(?=/|$|\s|['\"])\S*")
# the variables pip and uv take an index or a page of links from, as their option would (pip 23.2.1's
# `PIP_<OPTION>` for each option, `PIP_PYPI_URL` for `--index-url`'s other name too; uv 0.13.9's documented
# environment variables), by the installer that reads them (uv asks no index of `PIP_*`, pip none of `UV_*`); a
# list of URLs is separated by spaces
INSTALLER_INDEX_VARIABLES: dict[str, frozenset[str]] = {
    "pip": frozenset({"PIP_INDEX_URL", "PIP_PYPI_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS"}),
    "uv": frozenset({"UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX", "UV_FIND_LINKS"}),
}
INDEX_VARIABLES = frozenset().union(*INSTALLER_INDEX_VARIABLES.values())
_URL_WORD = re.compile(r"[^\s'\"]+")
# uv's torch backend picks PyTorch's index by name (`cu121`: `https://download.pytorch.org/whl/cu121`), set as
# `torch-backend` (uv.toml, `[tool.uv]`), `--torch-backend` (`uv pip install`) or this variable (uv 0.13.10
# `pip install --dry-run -v` asks `/whl/cu121` for each; pip reads none of them)
TORCH_BACKEND_VARIABLE = "UV_TORCH_BACKEND"
TORCH_BACKEND_OPTION = "--torch-backend"
CUDA_BACKEND = re.compile(r"cu\d+")
INSTALLER_VARIABLES = INDEX_VARIABLES | {TORCH_BACKEND_VARIABLE}  # what `variable_index_sites` reads


def cuda_index(url: str) -> bool:
    return _TORCH_CUDA_INDEX.search(url) is not None or _NVIDIA_INDEX.search(url) is not None


def index_sites(text: str, at: int, url: str, target: str, remove: tuple[int, int] | None) -> list[Site]:
    """The DEP002 site of an index option whose value `url` starts at `at`: the URL becomes the
    CPU index, or, where the target takes PyPI's torch, the option goes (`remove`: the span
    of the option and its value, with its line where the option is alone on one)."""
    env = environment(target)
    m = _TORCH_CUDA_INDEX.search(url)
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
    if env.get("torch_index_url"):
        return [
            Site(
                "DEP002",
                start,
                end,
                m.group(1) + "cpu",
                message=f"`{m.group(0)}` is PyTorch's index of CUDA builds: the target takes torch's CPU build",
            )
        ]
    message = f"`{m.group(0)}` is PyTorch's index of CUDA builds: the target takes PyPI's torch"
    if remove is None:
        return [Site("DEP002", start, end, None, message=message)]
    return [Site("DEP002", remove[0], remove[1], "", message=message + ": removed")]


def torch_backend_site(at: int, backend: str, target: str, setting: str, key: str) -> Site:
    """DEP002 on uv's torch backend `backend` (a `CUDA_BACKEND`) written at `at`; `setting` (how it was set,
    as the message quotes it: uv's `torch-backend = "cu121"`), `key` as the file spells it, for the advice (a
    Hatch `env-vars`' `UV_TORCH_BACKEND` was told to remove `torch-backend`, not in the file: thirty-fourth read)."""
    index = f"https://download.pytorch.org/whl/{backend}"
    message = f"{setting} takes torch from PyTorch's index of CUDA builds (`{index}`)"
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
    if name == TORCH_BACKEND_VARIABLE:
        word = _URL_WORD.search(text, value_span[0], value_span[1])
        if word is None or CUDA_BACKEND.fullmatch(word.group(0)) is None:
            return []
        return [torch_backend_site(word.start(), word.group(0), target, f"`{name}={word.group(0)}`", name)]
    if name not in INDEX_VARIABLES:
        return []
    out: list[Site] = []
    for word in _URL_WORD.finditer(text, value_span[0], value_span[1]):
        out.extend(index_sites(text, word.start(), word.group(0), target, None))
    return out
