"""Requirements files that another requirements file of the run names with `-c`/`--constraint`.

pip reads such a file as constraints: they install nothing, and pip 23.2.1 refuses one with extras
("ERROR: Constraints cannot have extras"). So the target's packages (`torch-xla[tpu]==2.9.0`) are
never added there (DEP004), as in a file named `constraints*.txt`, whatever the file is named
(`-c requirements-pins.txt`). pip finds the path from the naming file's folder. A conda environment
file's `pip:` list names one too: conda writes the list into a requirements file beside the
environment file and runs `pip install -r` on it.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable

from porter.core import kinds

CONSTRAINT_OPTIONS = frozenset({"-c", "--constraint"})


def named_as_constraints(names: Iterable[str], read: Callable[[str], bytes | None]) -> tuple[str, ...]:
    """The names (as given) of the requirements files among `names` that one of them names with `-c`."""
    requirements = {n.replace("\\", "/"): n for n in names if kinds.kind_of(n) == kinds.REQUIREMENTS}
    if not requirements:
        return ()
    # (imported here: the requirements reader brings `packaging`, and every run that had no dependency file imported
    # it at start, 9% more instructions for a one-file lint)
    from porter.files.deps.reqfile import lines, option

    naming = [n for n in names if kinds.kind_of(n) in (kinds.REQUIREMENTS, kinds.CONDA)]
    out: list[str] = []
    for name in naming:
        posix = name.replace("\\", "/")
        data = read(name)
        conda = kinds.kind_of(name) == kinds.CONDA
        text = "\n".join(_pip_items(data or b"")) if conda else data.decode("utf-8", "replace") if data else ""
        for line in lines(text):
            opt = option(line)
            if opt is None or opt[0] not in CONSTRAINT_OPTIONS or not opt[1]:
                continue
            named = posixpath.normpath(posixpath.join(posixpath.dirname(posix), opt[1]))
            if named in requirements and requirements[named] not in out:
                out.append(requirements[named])
    return tuple(out)


def _pip_items(data: bytes) -> list[str]:
    """The items of a conda environment file's `pip:` lists, which conda writes one a line into the
    requirements file it installs (none where it is no YAML porter reads: its own port says why)."""
    from yaml.nodes import ScalarNode

    from porter.files.errors import Unreadable
    from porter.files.readers.yamlpos import documents, get, sequence
    from porter.files.sites import Text

    try:
        docs = documents(Text(data))
    except Unreadable:
        return []
    return [
        line.value
        for doc in docs
        for item in sequence(get(doc, "dependencies"))
        if not isinstance(item, ScalarNode)
        for line in sequence(get(item, "pip"))
        if isinstance(line, ScalarNode)
    ]
