"""Requirements files that another requirements file of the run names with `-c`/`--constraint`.

pip reads such a file as constraints: they install nothing, and pip 23.2.1 refuses one with extras
("ERROR: Constraints cannot have extras"). So the target's packages (`torch-xla[tpu]==2.9.0`) are
never added there (DEP004), as in a file named `constraints*.txt`, whatever the file is named
(`-c requirements-pins.txt`). pip finds the path from the naming file's folder.
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

    out: list[str] = []
    for posix, name in requirements.items():
        data = read(name)
        for line in lines(data.decode("utf-8", "replace") if data else ""):
            opt = option(line)
            if opt is None or opt[0] not in CONSTRAINT_OPTIONS or not opt[1]:
                continue
            named = posixpath.normpath(posixpath.join(posixpath.dirname(posix), opt[1]))
            if named in requirements and requirements[named] not in out:
                out.append(requirements[named])
    return tuple(out)
