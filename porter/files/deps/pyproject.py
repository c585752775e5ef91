"""pyproject.toml (and uv.toml, hatch.toml, pixi.toml: `kinds.TOOL_FILES`, read as their tool's table):
the dependency tables of PEP 621, PEP 735 and the build system, Poetry's, uv's, PDM's, Hatch's and pixi's,
and the package indexes (and uv's `torch-backend`) uv and Poetry are told to use.

A pyproject.toml declares a package: its dependencies are a promise to everyone who installs it,
so the target's packages are reported there (an optional extra is the author's choice), never
added. Edits are inside a string (a `+cu121` label, an index URL) or remove an array item that
stands alone on its line.
"""

from __future__ import annotations

import re
from typing import Any

from porter.codemods.context import one_line
from porter.config.settings import Settings
from porter.core import kinds
from porter.files.readers.tomlpos import Locator, alone_on_line, load
from porter.files.deps import hatch_env, requirement
from porter.files.deps.conda import conda_cuda_build, conda_cuda_build_site
from porter.files.deps.indexes import GPU_BACKEND, TORCH_BACKEND_VARIABLE, index_sites, list_items, torch_backend_site
from porter.files.deps.target_packages import missing_lines, reported
from porter.files.facts import canonical
from porter.files.sites import Site, Text


# Where lists of PEP 508 strings are, as key paths (`*`: each value of a table), and whether what
# a list names is installed (uv's constraints and overrides only narrow what something else requires:
# `uv lock` takes `torch==2.3.0+cu118` from them, but they add no package).
_REQUIREMENT_LISTS: tuple[tuple[tuple[str, ...], bool], ...] = (
    (("project", "dependencies"), True),
    (("project", "optional-dependencies", "*"), True),
    (("dependency-groups", "*"), True),
    (("build-system", "requires"), True),
    (("tool", "uv", "dev-dependencies"), True),  # uv's before PEP 735: `uv sync` installs it
    (("tool", "uv", "constraint-dependencies"), False),
    (("tool", "uv", "override-dependencies"), False),
    (("tool", "uv", "build-constraint-dependencies"), False),  # (what a build's environment may take)
    (("tool", "pdm", "dev-dependencies", "*"), True),  # PDM's before PEP 735
    (("tool", "hatch", "envs", "*", "dependencies"), True),  # Hatch's environments (`hatch env show`)
    (("tool", "hatch", "envs", "*", "extra-dependencies"), True),
    # an environment's overrides (`overrides.matrix.backend.dependencies = [{value = "...", if = ["cu121"]}]`,
    # `platform.linux`, `env.CI`, `name.<regex>`): hatch 1.18.2 adds them to the matrix's environments
    (("tool", "hatch", "envs", "*", "overrides", "*", "*", "dependencies"), True),
    (("tool", "hatch", "envs", "*", "overrides", "*", "*", "extra-dependencies"), True),
    (("tool", "hatch", "build", "targets", "*", "dependencies"), True),  # hatchling's build environment
    (("tool", "hatch", "build", "hooks", "*", "dependencies"), True),
    (("tool", "hatch", "build", "targets", "*", "hooks", "*", "dependencies"), True),
)
# A Poetry dependency without a version comes from one of these (a wheel's URL, a repository, a path).
_POETRY_SOURCES = ("url", "git", "path")


def _lists(doc: dict[str, Any]) -> list[tuple[list[Any], bool]]:
    """Every list of requirement strings in the document (`_REQUIREMENT_LISTS`), with whether it installs."""
    out: list[tuple[list[Any], bool]] = []
    for path, installs in _REQUIREMENT_LISTS:
        out.extend((found, installs) for found in _values_at(doc, path) if isinstance(found, list))
    return out


def _values_at(node: Any, path: tuple[str, ...]) -> list[Any]:
    """The values at a key path (`*`: every key of that table); a key the document lacks gives none."""
    if not path:
        return [node]
    if not isinstance(node, dict):
        return []
    if path[0] == "*":
        children = list(node.values())
    else:
        children = [node[path[0]]] if path[0] in node else []
    return [found for child in children for found in _values_at(child, path[1:])]


# Tables of package name -> a version string or a table (`version`, `url`, ...), as key paths: Poetry's,
# and pixi's PyPI dependencies (its `feature`s' and platform `target`s' too).
_NAMED_TABLES: tuple[tuple[str, ...], ...] = (
    ("tool", "poetry", "dependencies"),
    ("tool", "poetry", "dev-dependencies"),
    ("tool", "poetry", "group", "*", "dependencies"),
    ("tool", "pixi", "pypi-dependencies"),
    ("tool", "pixi", "feature", "*", "pypi-dependencies"),
    ("tool", "pixi", "target", "*", "pypi-dependencies"),
    ("tool", "pixi", "feature", "*", "target", "*", "pypi-dependencies"),
)
# PDM's overrides: package name -> a version, a specifier or a wheel's URL (`pdm.utils.
# get_requirement_from_override`); they pin what something else requires and install nothing
_OVERRIDE_TABLES: tuple[tuple[str, ...], ...] = (("tool", "pdm", "resolution", "overrides"),)
# pixi's conda dependencies: package name -> a version string or `{version, build, channel}`
_PIXI_CONDA_TABLES: tuple[tuple[str, ...], ...] = tuple(
    path[:-1] + ("dependencies",) for path in _NAMED_TABLES if path[1] == "pixi"
)


def _named_dependencies(doc: dict[str, Any], paths: tuple[tuple[str, ...], ...]) -> list[tuple[str, dict[str, Any]]]:
    """(package, its table) of the tables at `paths`, one per constraint: a version string is
    `{version = ...}`, and a list (`torch = [{version = "2.3.0+cu121", markers = ...}, ...]`, Poetry's
    multiple constraints) gives each of its tables."""
    out = []
    for table in (found for path in paths for found in _values_at(doc, path) if isinstance(found, dict)):
        for name, spec in table.items():
            for one in spec if isinstance(spec, list) else [spec]:
                if isinstance(one, str):
                    out.append((name, {"version": one}))
                elif isinstance(one, dict):
                    out.append((name, one))
    return out


def _uv_source_urls(doc: dict[str, Any]) -> list[str]:
    """The `url` of each `[tool.uv.sources]` entry (a table, or a list of them per marker)."""
    specs = _values_at(doc, ("tool", "uv", "sources", "*"))
    rows = [one for spec in specs for one in (spec if isinstance(spec, list) else [spec])]
    return [r["url"] for r in rows if isinstance(r, dict) and isinstance(r.get("url"), str)]


# Where the package indexes and link pages a tool is told to use are named, as key paths: a list of
# tables with a `url` (`[[tool.uv.index]]`), or a URL or a list of them (`index-url`, `find-links`).
_INDEX_PATHS: tuple[tuple[str, ...], ...] = (
    ("tool", "uv", "index"),
    ("tool", "uv", "index-url"),
    ("tool", "uv", "extra-index-url"),
    ("tool", "uv", "find-links"),
    ("tool", "uv", "pip", "index-url"),  # (`uv pip install`'s settings)
    ("tool", "uv", "pip", "extra-index-url"),
    ("tool", "uv", "pip", "find-links"),
    ("tool", "poetry", "source"),
    ("tool", "pdm", "source"),  # (`type = "find_links"` too: a page of wheels' links)
    ("tool", "pixi", "pypi-options", "index-url"),
    ("tool", "pixi", "pypi-options", "extra-index-urls"),
    ("tool", "pixi", "pypi-options", "find-links"),
    # a feature's own (pixi's `Feature.pypi_options`: the environments that take the feature use them)
    ("tool", "pixi", "feature", "*", "pypi-options", "index-url"),
    ("tool", "pixi", "feature", "*", "pypi-options", "extra-index-urls"),
    ("tool", "pixi", "feature", "*", "pypi-options", "find-links"),
)


def _dependency_indexes(doc: dict[str, Any]) -> list[str]:
    """The index a single dependency is taken from (pixi's `torch = {version = "...", index = URL}`)."""
    specs = _named_dependencies(doc, _NAMED_TABLES)
    return [spec["index"] for _, spec in specs if isinstance(spec.get("index"), str)]


# uv's `torch-backend` picks PyTorch's index by name (`cu121`: `https://download.pytorch.org/whl/cu121`)
_TORCH_BACKEND_PATHS: tuple[tuple[str, ...], ...] = (
    ("tool", "uv", "torch-backend"),
    ("tool", "uv", "pip", "torch-backend"),
)
_BACKEND_KEY = re.compile(r"(?:^|[\s.{,])(?:\"torch-backend\"|'torch-backend'|torch-backend)\s*=\s*$")


def _torch_backend_sites(text: Text, doc: dict[str, Any], where: Locator, target: str) -> list[Site]:
    """DEP002 on a uv `torch-backend` naming a CUDA build (`cu121`): `uv pip` then takes torch and its
    family from PyTorch's index of CUDA builds, as `--index-url .../whl/cu121` would."""
    backends = set()
    for node in (found for path in _TORCH_BACKEND_PATHS for found in _values_at(doc, path)):
        if isinstance(node, str) and GPU_BACKEND.fullmatch(node) is not None:
            backends.add(node)
    out: list[Site] = []
    for token in where.tokens if backends else []:
        line_start = text.text.rfind("\n", 0, token.start) + 1
        if token.raw in backends and _BACKEND_KEY.search(text.text[line_start : token.start]):
            setting = f'uv\'s `torch-backend = "{token.raw}"`'
            out.append(torch_backend_site(token.inner_start, token.raw, target, setting, "torch-backend"))
    return out


def _pixi_system_cuda(doc: dict[str, Any], where: Locator) -> list[Site]:
    """DEP005 on pixi's `[system-requirements] cuda = "12"` (the root table: every environment's, as pixi
    0.53's docs say; a feature's is that feature's environments' own): the `__cuda` virtual package, so
    `pixi run` fails on a machine without NVIDIA's driver, and the solver takes CUDA builds where it has
    one. A `[feature.cuda.system-requirements]` beside an environment for the target is left alone."""
    value = next(iter(_values_at(doc, ("tool", "pixi", "system-requirements", "cuda"))), None)
    token = where.find_in_entry("cuda", value) if isinstance(value, str) else None
    if token is None or not isinstance(value, str):
        return []
    return [
        Site(
            "DEP005",
            token.inner_start,
            token.inner_start + len(token.raw),
            None,
            # (the value as a message quotes code: one line, bounded; a TOML string's `\n` and 5,000 characters
            # went into the finding whole: thirty-fourth read)
            message=f"pixi's `system-requirements` `cuda = \"{one_line(value, 40)}\"` requires NVIDIA's driver"
            " (conda's `__cuda` virtual package): `pixi run` fails on a machine without one, as the target's is",
            advice="Remove it for the target, or move it into a CUDA feature's `[feature.cuda.system-requirements]`"
            " beside an environment for the target.",
        )
    ]


def _hatch_env_var_sites(text: Text, doc: dict[str, Any], where: Locator, target: str) -> list[Site]:
    """DEP002 on a Hatch environment's `env-vars` entry its installer reads (`hatch_env`): an index of
    CUDA builds in `PIP_EXTRA_INDEX_URL` (each URL of the list), uv's `UV_TORCH_BACKEND = "cu121"`."""
    out: list[Site] = []
    for variable, value, written in hatch_env.installer_variables(doc):
        token = where.find_in_entry(variable, value) if written == value else where.find(written)
        if token is None or not token.plain:
            continue
        at = token.inner_start + len(written) - len(value)  # (after `KEY=` in an override's string)
        if variable == TORCH_BACKEND_VARIABLE:
            if GPU_BACKEND.fullmatch(value) is not None:
                setting = f'Hatch\'s `env-vars` `{variable} = "{value}"`'
                out.append(torch_backend_site(at, value, target, setting, variable))
            continue
        for offset, item in list_items(variable, value):
            out.extend(index_sites(text.text, at + offset, item, target, None))
    return out


def _index_urls(doc: dict[str, Any]) -> list[str]:
    """The URLs at `_INDEX_PATHS`: uv's, uv pip's, Poetry's and PDM's indexes and link pages."""
    out: list[str] = []
    for node in (found for path in _INDEX_PATHS for found in _values_at(doc, path)):
        for row in node if isinstance(node, list) else [node]:
            url = row.get("url") if isinstance(row, dict) else row
            if isinstance(url, str):
                out.append(url)
    return out


def _document(text: str, path: str) -> dict[str, Any]:
    """The file's tables, as pyproject.toml would hold them (`kinds.TOOL_FILES`' under their tool's table)."""
    doc = load(text)
    tool = kinds.TOOL_FILES.get(path.replace("\\", "/").rsplit("/", 1)[-1])
    return doc if tool is None else {"tool": {tool: doc}}


def port(text: Text, path: str, settings: Settings) -> list[Site]:
    doc = _document(text.text, path)
    where = Locator(text.text)
    ctx = requirement.Context(settings.target, settings.imported_after_port)
    out, names, torch_seen = _requirement_lists(text, doc, where, ctx)
    for name, spec in _named_dependencies(doc, _NAMED_TABLES):
        out.extend(_poetry_dependency(name, spec, where, ctx))
        names.append(name)
    for name, spec in _named_dependencies(doc, _OVERRIDE_TABLES):
        version = spec.get("version")
        as_url = isinstance(version, str) and "://" in version
        out.extend(_poetry_dependency(name, {"url": version} if as_url else spec, where, ctx))
    conda_ctx = requirement.Context(settings.target, settings.imported_after_port, conda=True)
    for name, spec in _named_dependencies(doc, _PIXI_CONDA_TABLES):
        out.extend(_pixi_conda_dependency(name, spec, where, conda_ctx))
    for url in _uv_source_urls(doc):
        token = where.find(url)
        if token is not None:
            out.extend(requirement.url_sites(url, requirement.Place(token.inner_start), ctx))
    for url in _index_urls(doc) + _dependency_indexes(doc):
        token = where.find(url)
        if token is not None and token.plain:
            out.extend(index_sites(text.text, token.inner_start, url, settings.target, None))
    out.extend(_torch_backend_sites(text, doc, where, settings.target))
    out.extend(_pixi_system_cuda(doc, where))
    out.extend(_hatch_env_var_sites(text, doc, where, settings.target))
    if torch_seen is not None:
        lines = missing_lines(requirement.parse(torch_seen[2]), names, [], settings.target, pip_options=False)
        if lines is not None:
            out.append(
                reported(
                    torch_seen,
                    lines,
                    settings.target,
                    f"as an optional extra (`[project.optional-dependencies] {settings.target} = [...]`)",
                    index=True,
                )
            )
    return out


def _requirement_lists(
    text: Text, doc: dict[str, Any], where: Locator, ctx: requirement.Context
) -> tuple[list[Site], list[str], tuple[int, int, str] | None]:
    """The sites of the PEP 508 strings of every requirement list (`_lists`), the names they
    require, and torch's first requirement (its span and string) if one is there: the names and
    torch's place say whether and where the target's packages are missing."""
    out: list[Site] = []
    torch_seen: tuple[int, int, str] | None = None
    names: list[str] = []
    for items, installs in _lists(doc):
        for entry in items:
            item = entry.get("value") if isinstance(entry, dict) else entry  # (Hatch's override `{ value = ... }`)
            if not isinstance(item, str):
                continue  # `{include-group = "..."}`
            token = where.find(item)
            if token is None:
                continue
            removable = alone_on_line(text.text, token)
            place = requirement.Place(token.inner_start, removable, editable=token.plain)
            out.extend(requirement.sites(item, place, ctx))
            parsed = requirement.parse(item)
            if parsed is not None and installs:
                names.append(parsed.name)
                if canonical(parsed.name) == "torch" and torch_seen is None:
                    torch_seen = (token.inner_start, token.inner_start + len(token.raw), item)
    return out, names, torch_seen


def _poetry_dependency(name: str, spec: dict[str, Any], where: Locator, ctx: requirement.Context) -> list[Site]:
    """One Poetry constraint: its version string's sites, and a source's (a CUDA wheel's URL; where a
    package no target has a build of comes from, when no version is given)."""
    out: list[Site] = []
    version: str | None = spec["version"] if isinstance(spec.get("version"), str) else None
    source: str | None = next((spec[k] for k in _POETRY_SOURCES if isinstance(spec.get(k), str)), None)
    source_token = None if source is None else where.find_in_entry(name, source)
    if source is not None and source_token is not None and source == spec.get("url"):
        out.extend(requirement.url_sites(source, requirement.Place(source_token.inner_start), ctx))
    # (each version's own string, taken in turn: `numpy = "2.3.0+cu121"` above `torch = "2.3.0+cu121"` was
    # left free, and torch's DEP001 and its fix went to numpy's line)
    token = None if version is None else where.find_in_entry(name, version)
    if canonical(name) not in requirement.TORCH_FAMILY and requirement.cuda_only_package(name) is None:
        return out
    if version is not None and token is not None:
        out.extend(_poetry_sites(name, version, token, ctx))
    elif source_token is not None and requirement.cuda_only_package(name) is not None:
        place = requirement.Place(source_token.inner_start, None, editable=False)
        out.append(requirement.cuda_only(name, (place.start, place.start + len(source_token.raw)), place, ctx))
    return out


def _pixi_conda_dependency(name: str, spec: dict[str, Any], where: Locator, ctx: requirement.Context) -> list[Site]:
    """A pixi conda dependency: a package no target has a build of (`pytorch-cuda = "12.1.*"`), or
    torch's CUDA build picked by its build string (`pytorch = {version = "2.3.*", build = "*cuda*"}`)."""
    version = spec.get("version") if isinstance(spec.get("version"), str) else None
    build = spec.get("build") if isinstance(spec.get("build"), str) else None
    shown = build if build is not None and version is None else version
    token = None if shown is None else where.find_in_entry(name, shown)
    if token is None:
        return []
    place = requirement.Place(token.inner_start, None, editable=False)
    span = requirement.package_span(token.raw, place)
    if requirement.cuda_only_package(name, conda=True) is not None:
        return [requirement.cuda_only(name, span, place, ctx)]
    if canonical(name) in requirement.TORCH_FAMILY | {"pytorch"} and build and conda_cuda_build(build):
        return [conda_cuda_build_site(f"{name} {build}", span, "`[tool.pixi.pypi-dependencies]`")]
    return []


def _poetry_sites(name: str, version: str, token: Any, ctx: requirement.Context) -> list[Site]:
    """A Poetry version string (`2.4.0+cu121`, `^2.1`): its CUDA label, its package."""
    out: list[Site] = []
    place = requirement.Place(token.inner_start, None, editable=token.plain)
    if canonical(name) in requirement.TORCH_FAMILY:
        out.extend(requirement.cuda_build_sites(version, place, ctx))
    elif requirement.cuda_only_package(name) is not None:
        out.append(requirement.cuda_only(name, requirement.package_span(version, place), place, ctx))
    return out
