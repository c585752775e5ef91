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
from porter.files.deps.pip_options import REQUIREMENTS_FILE, long_option
from porter.files.deps.target_packages import added_message, missing_lines, newline
from porter.files.facts import canonical
from porter.files.sites import Site, Text

_CONDA_SPEC = re.compile(r"\s*(?:[\w.-]+::)?([A-Za-z0-9_][A-Za-z0-9_.-]*)")
_CUDA_BUILD = re.compile(r"cuda\d*|cu\d{2,3}", re.IGNORECASE)
# a version token ending so is joined to the next (`>= 2.0`, `>=2.0, <3`): that one is no build string
_JOINS_NEXT = tuple("=!|,<>~")
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
    build = _build_string(s.value[m.end() :])
    if canonical(name) in requirement.TORCH_FAMILY | {"pytorch"} and build and conda_cuda_build(build):
        return [conda_cuda_build_site(s.value, (s.start, s.end), "the `pip:` list")]
    return []


def conda_cuda_build(build: str) -> bool:
    """Whether a conda build string (`*cuda*`, `py3.11_cuda12.1_cudnn8_0`) picks a CUDA build."""
    return _CUDA_BUILD.search(build) is not None


def conda_cuda_build_site(spec: str, span: tuple[int, int], where_pip: str) -> Site:
    """DEP001 on a torch-family conda package whose build string picks conda's CUDA build."""
    return Site(
        "DEP001",
        span[0],
        span[1],
        None,
        message=f"`{spec}`: the build string picks conda's CUDA build",
        advice=f"Install torch with pip in {where_pip} (its CPU build, or PyPI's for torch-xla), as the target's"
        " install line does.",
    )


def _build_string(rest: str) -> str | None:
    """The build string of a conda MatchSpec after its name, as conda reads it: `[build=...]`, the
    third `=` field (`=2.3.0=*cuda*`), or the last of its space-separated fields (`2.3.0 *cuda*`,
    `>=2.0 *cuda*`), unless an operator before the space joins it to the version (`>= 2.0`)."""
    opened = rest.rfind("[")
    if opened >= 0 and rest.rstrip().endswith("]"):  # `[key=value, ...]` (its value may be quoted)
        for pair in rest.rstrip()[opened + 1 : -1].split(","):
            key, _, value = pair.partition("=")
            if key.strip() == "build":
                return value.strip().strip("'\"")
        rest = rest[:opened]
    fields = rest.split()
    if len(fields) >= 2 and not fields[-2].endswith(_JOINS_NEXT):
        return fields[-1]
    parts = rest.strip().split("=")
    return parts[-1] if len(parts) >= 3 else None


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
    # (as the requirements file conda writes the list into: pip reads `--extra-index` as `--extra-index-url`)
    if long_option(opt.split("=")[0], REQUIREMENTS_FILE) not in _INDEX_OPTIONS or s.inner is None or not url:
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
