"""Requirements files that another requirements file of the run names with `-c`/`--constraint`.

pip reads such a file as constraints: they install nothing, and pip 23.2.1 refuses one with extras
("ERROR: Constraints cannot have extras"). So the target's packages (`torch-xla[tpu]==2.9.0`) are
never added there (DEP004), as in a file named `constraints*.txt`, whatever the file is named
(`-c requirements-pins.txt`). pip finds the path from the naming file's folder. An environment.yml's
`pip:` list names one so too: conda writes the items into a requirements file in the environment
file's folder and runs `pip install -r` on it there.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable

from porter.core import kinds

CONSTRAINT_OPTIONS = frozenset({"-c", "--constraint"})
REQUIREMENT_OPTIONS = frozenset({"-r", "--requirement"})


def named_as_constraints(names: Iterable[str], read: Callable[[str], bytes | None]) -> tuple[str, ...]:
    """The names (as given) of the requirements files among `names` that one of them, or an
    environment.yml's `pip:` list, names with `-c`."""
    return _named_with(names, read, CONSTRAINT_OPTIONS)


def installed_constraints(names: Iterable[str], read: Callable[[str], bytes | None]) -> tuple[str, ...]:
    """Those of `named_as_constraints` that one of them names with `-r` too: pip installs what they
    require (pip 23.2.1's `parse_requirements` gives each line as a requirement and as a constraint)."""
    names = list(names)
    constrained = named_as_constraints(names, read)
    return tuple(n for n in _named_with(names, read, REQUIREMENT_OPTIONS) if n in constrained)


def _named_with(names: Iterable[str], read: Callable[[str], bytes | None], options: frozenset[str]) -> tuple[str, ...]:
    """The names (as given) of the requirements files among `names` that one of them, or an
    environment.yml's `pip:` list, names with one of `options`."""
    requirements = {n.replace("\\", "/"): n for n in names if kinds.kind_of(n) == kinds.REQUIREMENTS}
    if not requirements:
        return ()
    # (imported here: the requirements reader brings `packaging`, and every run that had no dependency file imported
    # it at start, 9% more instructions for a one-file lint)
    from porter.files.deps.reqfile import lines, option

    out: list[str] = []
    naming = {n.replace("\\", "/"): n for n in names if kinds.kind_of(n) in (kinds.REQUIREMENTS, kinds.CONDA)}
    for posix, name in naming.items():
        data = read(name)
        text = data.decode("utf-8", "replace") if data else ""
        if kinds.kind_of(name) == kinds.CONDA:
            text = "\n".join(_pip_items(text))
        for line in lines(text):
            opt = option(line)
            if opt is None or opt[0] not in options or not opt[1]:
                continue
            named = posixpath.normpath(posixpath.join(posixpath.dirname(posix), opt[1]))
            if named in requirements and requirements[named] not in out:
                out.append(requirements[named])
    return tuple(out)


def _pip_items(text: str) -> list[str]:
    """The string items of an environment.yml's `pip:` lists (none where it is no YAML conda reads)."""
    import yaml

    try:
        docs = list(yaml.safe_load_all(text))
    except yaml.YAMLError:
        return []
    out: list[str] = []
    for doc in docs:
        deps = doc.get("dependencies") if isinstance(doc, dict) else None
        for item in deps if isinstance(deps, list) else []:
            pip = item.get("pip") if isinstance(item, dict) else None
            out.extend(x for x in (pip if isinstance(pip, list) else []) if isinstance(x, str))
    return out
