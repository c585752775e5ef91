"""One requirement string, wherever it is written: what about it is CUDA's, and what to make of it.

Every dependency format (requirements files, pyproject.toml, setup.cfg, setup.py, conda's
`pip:` list, `pip install` in a script) hands its requirement strings here with their place in
the file; the string itself is read by `packaging` (PEP 508). What the format allows (an edit
inside the string, removing its line) is the caller's to say.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet

from porter.files.facts import Environment, canonical, cuda_only_package, environment
from porter.files.sites import REMOVED, Site

TORCH_FAMILY = frozenset({"torch", "torchvision", "torchaudio"})
_CUDA_LABEL = re.compile(r"\+cu\d+[A-Za-z0-9.]*")  # `+cu121`, `+cu118.with.pypi.cudnn`
_LOCAL = re.compile(r"\+[A-Za-z0-9.]+")
_CUDA_WHEEL = re.compile(r"(?:%2[Bb]|\+)cu\d+|/cu\d{2,3}/", re.IGNORECASE)


@dataclass(frozen=True)
class Place:
    """Where a requirement string is: its first character's offset, and the span of the whole
    line that holds it and nothing else (with its line break), when the format lets porter
    remove that line (None: only report)."""

    start: int
    removable: tuple[int, int] | None = None
    editable: bool = True  # an edit inside the string is allowed (not in setup.py's Python)


@dataclass(frozen=True)
class Context:
    target: str
    imported_after_port: tuple[str, ...] | None
    conda: bool = False  # a conda package (`pytorch-cuda`), not a pip one

    @property
    def env(self) -> Environment:
        return environment(self.target)


@lru_cache(maxsize=1024)  # a file repeats its requirements (read-only: nothing changes one)
def parse(text: str) -> Requirement | None:
    try:
        return Requirement(text)
    except InvalidRequirement:
        return None


def sites(text: str, place: Place, ctx: Context) -> list[Site]:
    """The sites of one requirement string (`text`, as written)."""
    req = parse(text)
    if req is None:
        return url_sites(text, place, ctx)
    name = canonical(req.name)
    out: list[Site] = []
    named = text  # the requirement up to its URL: a `+cu121` in a URL is a file's name, reported (DEP006)
    if req.url is not None:
        at = text.find(req.url)
        named = text[:at] if at >= 0 else ""
        out.extend(url_sites(req.url, Place(place.start + at), ctx))
    if name in TORCH_FAMILY:
        out.extend(cuda_build_sites(named, place, ctx))
        if name == "torch":
            out.extend(_torch_version(text, req, place, ctx))
    package = cuda_only_package(req.name, ctx.conda)
    if package is not None:
        out.append(cuda_only(req.name, package_span(text, place), place, ctx))
    return out


def package_span(text: str, place: Place) -> tuple[int, int]:
    """The requirement's text without trailing blanks (where a finding about it is shown)."""
    return place.start, place.start + len(text.rstrip())


def cuda_build_sites(text: str, place: Place, ctx: Context) -> list[Site]:
    out = []
    for m in _CUDA_LABEL.finditer(text):
        label = m.group(0)
        build = ctx.env.get("torch_build")
        new = "+cpu" if build == "cpu" else ""
        replacement = new if place.editable else None
        what = "torch's CPU build (`+cpu`)" if new else "PyPI's torch"
        out.append(
            Site(
                "DEP001",
                place.start + m.start(),
                place.start + m.end(),
                replacement,
                message=f"`{label}` pins a CUDA build: the target takes {what}",
            )
        )
    return out


def torch_minor(spec: SpecifierSet | None, env: Environment) -> str | None:
    """The highest torch minor version (`2.14`) among the target's releases that `spec`
    allows; None when it allows none."""
    allowed = [v for v in env.torch_releases if spec is None or spec.contains(v, prereleases=True)]
    if not allowed:
        return None
    best = max(allowed, key=lambda v: tuple(int(p) for p in v.split(".")))
    return ".".join(best.split(".")[:2])


def specifier(req: Requirement) -> SpecifierSet | None:
    """The requirement's specifier with local version labels dropped (`==2.4.0+cu121` is
    version 2.4.0), or None for any version."""
    raw = _LOCAL.sub("", str(req.specifier))
    if not raw:
        return None
    try:
        return SpecifierSet(raw)
    except InvalidSpecifier:
        return None


def _torch_version(text: str, req: Requirement, place: Place, ctx: Context) -> list[Site]:
    spec = specifier(req)
    if spec is None or torch_minor(spec, ctx.env) is not None:
        return []
    shown = str(req.specifier)
    at = text.find(shown) if shown else -1
    start, end = (place.start + at, place.start + at + len(shown)) if at >= 0 else package_span(text, place)
    return [
        Site(
            "DEP003",
            start,
            end,
            None,
            message=f"torch `{shown}` allows no torch the target runs with (`{ctx.env.get('torch_specifier')}`)",
        )
    ]


def cuda_only(name: str, span: tuple[int, int], place: Place, ctx: Context) -> Site:
    """The finding on a package no target has a build of: the line goes when nothing the run's
    Python imports after the port comes from it."""
    package = cuda_only_package(name, ctx.conda)
    assert package is not None
    still = None if ctx.imported_after_port is None else sorted(set(package.modules) & set(ctx.imported_after_port))
    advice = f"{package.advice} ({package.evidence}.)"
    if still is None:
        # (a file ported alone, setup.py, a script: what the project imports is not known here)
        return Site(
            "DEP005",
            span[0],
            span[1],
            None,
            message=f"`{name}` has no build for the target (porter removes it only from a dependency file of a run"
            " whose Python no longer imports it)",
            advice=advice,
        )
    if still:
        imports = ", ".join(f"`{m}`" for m in still)
        return Site(
            "DEP005",
            span[0],
            span[1],
            None,
            message=f"`{name}` has no build for the target, and the ported Python still imports {imports}",
            advice=advice,
        )
    if place.removable is None or package.conda_only:
        # (conda's CUDA selectors are reported: which build conda then picks is no documented fact)
        return Site(
            "DEP005",
            span[0],
            span[1],
            None,
            message=f"`{name}` has no build for the target and no Python file of the run imports it after the port:"
            " remove it",
            advice=advice,
        )
    if package.modules:
        what = "no Python file of the run imports " + ", ".join(f"`{m}`" for m in package.modules) + " after the port"
    else:
        what = "a CUDA runtime library, which the port does not load"
    start, end = place.removable
    return Site(
        "DEP005", start, end, "", message=f"`{name}` has no build for the target ({what})" + REMOVED, advice=advice
    )


def url_sites(url: str, place: Place, ctx: Context) -> list[Site]:
    """DEP006 on a URL or path that names a CUDA build's wheel (`.../whl/cu121/torch-...`)."""
    if not _CUDA_WHEEL.search(url) or not re.search(r"\.whl\b|/torch|/whl/", url):
        return []
    return [
        Site(
            "DEP006",
            place.start,
            place.start + len(url.rstrip()),
            None,
            message=f"a CUDA build's wheel: `{url.strip()[:120]}`",
        )
    ]
