"""Requirements files the project's own build code reads as its package's requirements.

DeepSpeed's setup.py does `install_requires = fetch_requirements('requirements/requirements.txt')`
and turns every line of the file into a requirement; setuptools' `file:` directive (setup.cfg
`install_requires = file: requirements.txt`, pyproject `dependencies = {file = [...]}`) reads the
lines the same way and takes no pip options. Such a file is the package's dependency list,
not an environment: an `--extra-index-url` line breaks the build everywhere, and the target's
packages would become hard dependencies on CUDA hosts. The evidence is the build file itself:
it names the requirements file's path (relative to the build file's folder) in a string.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath

from porter.core import kinds

BUILD_FILES = frozenset({"setup.py", "setup.cfg", "pyproject.toml"})


def _named(text: str, rel: str) -> bool:
    """`rel` (a/b.txt) written in `text` as a path: quoted or after `file:` / `=`, or as the
    parts of an `os.path.join('a', 'b.txt')`."""
    if re.search(r"(?:^|[\s'\"=:,\[(])(?:\./)?" + re.escape(rel) + r"(?=$|[\s'\",\])])", text, re.MULTILINE):
        return True
    parts = rel.split("/")
    if len(parts) > 1:
        joined = r"""['"]\s*,\s*['"]""".join(re.escape(p) for p in parts)
        return re.search(r"""['"]""" + joined + r"""['"]""", text) is not None
    return False


def read_by_build(names: Iterable[str], read: Callable[[str], bytes | None]) -> tuple[str, ...]:
    """The names (as given) of the requirements files among `names` that a build file among
    them (setup.py, setup.cfg, pyproject.toml in the same folder or one above) names."""
    names = list(names)
    builds = [n for n in names if n.replace("\\", "/").rsplit("/", 1)[-1] in BUILD_FILES]
    requirements = [n for n in names if kinds.kind_of(n) == kinds.REQUIREMENTS]
    if not builds or not requirements:
        return ()
    texts: dict[str, str] = {}
    out: list[str] = []
    for req in requirements:
        path = PurePosixPath(req.replace("\\", "/"))
        for build in builds:
            folder = PurePosixPath(build.replace("\\", "/")).parent
            try:
                rel = path.relative_to(folder).as_posix()
            except ValueError:
                continue
            if build not in texts:
                data = read(build)
                texts[build] = data.decode("utf-8", "replace") if data else ""
            if _named(texts[build], rel):
                out.append(req)
                break
    return tuple(out)
