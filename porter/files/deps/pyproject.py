"""pyproject.toml: the dependency tables of PEP 621, PEP 735 and the build system, Poetry's and
uv's, and the package indexes uv and Poetry are told to use.

A pyproject.toml declares a package: its dependencies are a promise to everyone who installs it,
so the target's packages are reported there (an optional extra is the author's choice), never
added. Edits are inside a string (a `+cu121` label, an index URL) or remove an array item that
stands alone on its line.
"""

from __future__ import annotations

from typing import Any

from porter.config.settings import Settings
from porter.files.readers.tomlpos import Locator, alone_on_line, load
from porter.files.deps import requirement
from porter.files.deps.indexes import index_sites
from porter.files.deps.target_packages import missing_lines, reported
from porter.files.facts import canonical
from porter.files.sites import Site, Text


def _lists(doc: dict[str, Any]) -> list[list[Any]]:
    """Every list of requirement strings in the document (PEP 621, PEP 735, build-system)."""
    out: list[list[Any]] = []
    project = doc.get("project")
    if isinstance(project, dict):
        if isinstance(project.get("dependencies"), list):
            out.append(project["dependencies"])
        optional = project.get("optional-dependencies")
        if isinstance(optional, dict):
            out.extend(v for v in optional.values() if isinstance(v, list))
    groups = doc.get("dependency-groups")
    if isinstance(groups, dict):
        out.extend(v for v in groups.values() if isinstance(v, list))
    build = doc.get("build-system")
    if isinstance(build, dict) and isinstance(build.get("requires"), list):
        out.append(build["requires"])
    return out


def _poetry(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """(package, version string) of Poetry's dependency tables."""
    tool = doc.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    if not isinstance(poetry, dict):
        return []
    tables = [poetry.get("dependencies"), poetry.get("dev-dependencies")]
    group = poetry.get("group")
    if isinstance(group, dict):
        tables.extend(g.get("dependencies") for g in group.values() if isinstance(g, dict))
    out = []
    for table in tables:
        if not isinstance(table, dict):
            continue
        for name, spec in table.items():
            version = spec.get("version") if isinstance(spec, dict) else spec
            if isinstance(version, str):
                out.append((name, version))
    return out


def _index_urls(doc: dict[str, Any]) -> list[str]:
    """The URLs of uv's `[[tool.uv.index]]` and Poetry's `[[tool.poetry.source]]` tables."""
    tool = doc.get("tool")
    if not isinstance(tool, dict):
        return []
    rows: list[Any] = []
    uv = tool.get("uv")
    if isinstance(uv, dict):
        rows += uv.get("index", []) if isinstance(uv.get("index"), list) else []
        for key in ("index-url", "extra-index-url"):
            value = uv.get(key)
            rows += [{"url": v} for v in (value if isinstance(value, list) else [value]) if isinstance(v, str)]
    poetry = tool.get("poetry")
    if isinstance(poetry, dict) and isinstance(poetry.get("source"), list):
        rows += poetry["source"]
    return [r["url"] for r in rows if isinstance(r, dict) and isinstance(r.get("url"), str)]


def port(text: Text, path: str, settings: Settings) -> list[Site]:
    doc = load(text.text)
    where = Locator(text.text)
    ctx = requirement.Context(settings.target, settings.imported_after_port)
    out, names, torch_seen = _requirement_lists(text, doc, where, ctx)
    for name, version in _poetry(doc):
        if canonical(name) not in requirement.TORCH_FAMILY and requirement.cuda_only_package(name) is None:
            continue
        token = where.find(version)
        if token is None:
            continue
        out.extend(_poetry_sites(name, version, token, ctx))
        names.append(name)
    for url in _index_urls(doc):
        token = where.find(url)
        if token is not None and token.plain:
            out.extend(index_sites(text.text, token.inner_start, url, settings.target, None))
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
    for items in _lists(doc):
        for item in items:
            if not isinstance(item, str):
                continue  # `{include-group = "..."}`
            token = where.find(item)
            if token is None:
                continue
            removable = alone_on_line(text.text, token)
            place = requirement.Place(token.inner_start, removable, editable=token.plain)
            out.extend(requirement.sites(item, place, ctx))
            parsed = requirement.parse(item)
            if parsed is not None:
                names.append(parsed.name)
                if canonical(parsed.name) == "torch" and torch_seen is None:
                    torch_seen = (token.inner_start, token.inner_start + len(token.raw), item)
    return out, names, torch_seen


def _poetry_sites(name: str, version: str, token: Any, ctx: requirement.Context) -> list[Site]:
    """A Poetry version string (`2.4.0+cu121`, `^2.1`): its CUDA label, its package."""
    out: list[Site] = []
    place = requirement.Place(token.inner_start, None, editable=token.plain)
    if canonical(name) in requirement.TORCH_FAMILY:
        out.extend(requirement.cuda_build_sites(version, place, ctx))
    elif requirement.cuda_only_package(name) is not None:
        out.append(requirement.cuda_only(name, requirement.package_span(version, place), place, ctx))
    return out
