"""conda environment files (environment.yml): channels, conda packages, and the `pip:` list.

Conda's CUDA selectors (`pytorch-cuda`, `cudatoolkit`, the `nvidia` channel, a `pytorch` build
string naming CUDA) are reported: the targets install with pip (AWS's and Google's install
lines), and which build conda picks once they go is no documented fact. The `pip:` list is a
requirements file in YAML: its items are ported as requirements files' lines are, and the
target's packages are added there after torch.
"""

from __future__ import annotations

import re

from yaml.nodes import ScalarNode

from porter.config.settings import Settings
from porter.files.readers.yamlpos import documents, get, item_line, scalar, sequence
from porter.files.deps import reqfile, requirement
from porter.files.deps.indexes import index_sites
from porter.files.deps.target_packages import added_message, missing_lines, newline
from porter.files.facts import canonical
from porter.files.sites import Site, Text

_CONDA_SPEC = re.compile(r"\s*(?:[\w.-]+::)?([A-Za-z0-9_][A-Za-z0-9_.-]*)")
_CUDA_BUILD = re.compile(r"cuda\d*|cu\d{2,3}", re.IGNORECASE)
_INDEX_OPTIONS = ("-i", "--index-url", "--extra-index-url", "-f", "--find-links")


def port(text: Text, path: str, settings: Settings) -> list[Site]:
    out: list[Site] = []
    for doc in documents(text):
        deps = get(doc, "dependencies")
        if deps is None:
            continue  # no conda environment (a YAML file named like one)
        for channel in sequence(get(doc, "channels")):
            if isinstance(channel, ScalarNode) and channel.value.strip() == "nvidia":
                s = scalar(text, channel)
                out.append(
                    Site(
                        "DEP002",
                        s.start,
                        s.end,
                        None,
                        message="conda's `nvidia` channel serves CUDA libraries only",
                        advice="Remove it once no package needs it: the targets install torch and their packages"
                        " with pip.",
                    )
                )
        ctx = requirement.Context(settings.target, settings.imported_after_port, conda=True)
        for item in sequence(deps):
            if isinstance(item, ScalarNode):
                out.extend(_conda_package(text, item, ctx))
            else:
                pip = get(item, "pip")
                if pip is not None:
                    out.extend(_pip_list(text, sequence(pip), settings))
    return out


def _conda_package(text: Text, node: ScalarNode, ctx: requirement.Context) -> list[Site]:
    s = scalar(text, node)
    m = _CONDA_SPEC.match(s.value)
    if m is None:
        return []
    name = m.group(1)
    if requirement.cuda_only_package(name, conda=True) is not None:
        return [requirement.cuda_only(name, (s.start, s.end), requirement.Place(s.start, None), ctx)]
    build = _conda_build(s.value)
    if canonical(name) in requirement.TORCH_FAMILY | {"pytorch"} and build and _CUDA_BUILD.search(build):
        return [
            Site(
                "DEP001",
                s.start,
                s.end,
                None,
                message=f"`{s.value}`: the build string picks conda's CUDA build",
                advice="Install torch with pip in the `pip:` list (its CPU build, or PyPI's for torch-xla), as the"
                " target's install line does.",
            )
        ]
    return []


def _conda_build(spec: str) -> str | None:
    """The build string of a conda MatchSpec, in each of its forms: `pytorch=2.3.0=*cuda*`, `pytorch
    2.3.0 *cuda*` (name, version, build, by spaces) and `pytorch[build=*cuda*]` (a key in brackets).
    porter read the first only: the others, conda's CUDA build as surely, passed with no finding."""
    if "[" in spec:
        for pair in spec.partition("[")[2].partition("]")[0].split(","):
            key, _, value = pair.partition("=")
            if key.strip() == "build":
                return value.strip().strip("'\"")
    parts = spec.split("=")
    if len(parts) >= 3:
        return parts[-1]
    words = spec.partition("[")[0].split()
    return words[2] if len(words) == 3 else None


def _pip_list(text: Text, items: list[object], settings: Settings) -> list[Site]:
    ctx = requirement.Context(settings.target, settings.imported_after_port)
    out: list[Site] = []
    names: list[str] = []
    values: list[str] = []
    torch_node: ScalarNode | None = None
    for item in items:
        if not isinstance(item, ScalarNode):
            continue
        s = scalar(text, item)
        value = s.value.strip()
        values.append(value)
        if value.startswith("-"):
            out.extend(_pip_option(text, item, value, settings.target))
            continue
        if s.inner is None:
            continue
        req = _pip_line_requirement(value)
        place = requirement.Place(s.inner[0], item_line(text, item))
        out.extend(requirement.sites(req, place, ctx))
        parsed = requirement.parse(req)
        if parsed is not None:
            names.append(parsed.name)
            if canonical(parsed.name) == "torch" and torch_node is None:
                torch_node = item
    if torch_node is not None:
        lines = missing_lines(
            requirement.parse(scalar(text, torch_node).value), names, values, settings.target, pip_options=True
        )
        if lines is not None:
            out.append(_insert_after(text, torch_node, lines, settings.target))
    return out


def _pip_line_requirement(value: str) -> str:
    """The requirement of a `pip:` item as pip reads it: conda writes the items into a requirements
    file, one a line, and runs `pip install -r` on it, so a comment (`"cupy-cuda12x  # GPU"`) and
    options after it (`--hash=...`) are cut there as in any requirements file."""
    found = reqfile.lines(value)
    req = reqfile.requirement_text(found[0]) if len(found) == 1 else None
    return value if req is None else req


def _pip_option(text: Text, item: ScalarNode, value: str, target: str) -> list[Site]:
    """An option line of the `pip:` list (`--extra-index-url URL`): an index it names is checked
    as a requirements file's is; any other option is no requirement and has no site."""
    s = scalar(text, item)
    opt, _, url = value.partition(" ")
    url = url.strip() or value.partition("=")[2]
    if opt.split("=")[0] not in _INDEX_OPTIONS or s.inner is None or not url:
        return []
    at = text.text.find(url, s.inner[0], s.inner[1])
    if at < 0:
        return []
    return index_sites(text.text, at, url, target, item_line(text, item))


def _insert_after(text: Text, node: ScalarNode, lines: list[str], target: str) -> Site:
    """DEP004: the target's packages as items after torch's, indented as it is."""
    s = scalar(text, node)
    line = text.position(s.start).line
    first, last = text.line_span(line)
    prefix = text.text[first : s.start]  # `    - ` (a quoted item: its quote is part of the scalar)
    nl = newline(text.text)
    if item_line(text, node) is None or prefix.strip() != "-":
        return Site(
            "DEP004",
            s.start,
            s.end,
            None,
            message=added_message(lines, target),
            advice="Add them to the `pip:` list after torch.",
        )
    new = "".join(nl + prefix + line_text for line_text in lines)
    return Site("DEP004", last, last, new, message=added_message(lines, target))
