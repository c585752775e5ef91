"""The target's own packages, added where a file builds an environment with torch (DEP004)."""

from __future__ import annotations

from packaging.requirements import Requirement

from porter.files.deps.requirement import specifier, torch_minor
from porter.files.facts import canonical, environment
from porter.files.sites import Site


def missing_lines(
    torch: Requirement | None, names: list[str], option_values: list[str], target: str, *, pip_options: bool
) -> list[str] | None:
    """The lines to add after torch (the target's index as an option where the format has
    options, then its packages), or None when the target's packages are there already."""
    env = environment(target)
    present = {canonical(n) for n in names}
    if any(name in present for name in env.package_names()):
        return None
    minor = torch_minor(specifier(torch), env) if torch is not None else None
    out: list[str] = []
    index = env.get("index_url")
    if index and pip_options and not any(index in v for v in option_values):
        out.append(f"--extra-index-url {index}")
    out.extend(env.packages(minor))
    return out


def newline(text: str) -> str:
    """The file's own line break: CRLF, LF, or a lone CR (pip splits lines as str.splitlines)."""
    if "\r\n" in text:
        return "\r\n"
    return "\r" if "\r" in text and "\n" not in text else "\n"


def insertion(
    text: str, line_end: int, torch: Requirement | None, names: list[str], option_values: list[str], target: str
) -> Site | None:
    """DEP004 at the end of torch's line (`line_end`) of a requirements file: the target's
    lines (its index as an option, then its packages), one per line, after it."""
    lines = missing_lines(torch, names, option_values, target, pip_options=True)
    if lines is None:
        return None
    nl = newline(text)
    return Site(
        "DEP004", line_end, line_end, "".join(nl + line for line in lines), message=added_message(lines, target)
    )


def added_message(lines: list[str], target: str) -> str:
    shown = ", ".join(f"`{line}`" for line in lines)
    return f"the ported code needs the target's packages: {shown}"


def reported(torch: tuple[int, int, str], lines: list[str], target: str, where: str, *, index: bool = False) -> Site:
    """DEP004 on torch's requirement in a package's own dependency list (pyproject.toml,
    setup.cfg, setup.py): the target's packages (`lines`) are missing, and a package's
    dependencies are a promise to every user, so the advice is an extra (`where`), not an edit."""
    url = environment(target).get("index_url") if index else None
    return Site(
        "DEP004",
        torch[0],
        torch[1],
        None,
        message=added_message(lines, target),
        advice=f"A package's dependencies: add {', '.join(f'`{x}`' for x in lines)} {where}, or to the environment "
        f"that runs the port{' with --extra-index-url ' + url if url else ''}.",
    )
