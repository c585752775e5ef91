"""One file through porter by its kind: Python through the rule families (porter.codemods.apply),
the files around it (requirements, Dockerfiles, scripts, configs, notebooks, setup.py) through
porter.files.

Nothing here writes files; `porter.pipeline.writer` does, and only with a result this module made.
Nothing here imports or executes the code it reads.
"""

from __future__ import annotations

from porter.codemods.apply import port_python
from porter.config.settings import Settings
from porter.core.findings import FileResult
from porter.core.kinds import PYTHON, kind_of


def port_source(source: bytes, path: str, settings: Settings, *, admitted: bool = False) -> FileResult:
    """Port one file's bytes. Never raises for bad input: errors come back as results.
    A file of another kind than Python (porter.core.kinds: requirements, Dockerfiles,
    scripts, configs, notebooks, setup.py) goes to its kind's porter. `admitted`: the
    prefilter already let the file through with these settings (`admits_file`)."""
    kind = kind_of(path)
    if kind is not None and kind != PYTHON:
        from porter.files.port import port_file

        return port_file(kind, source, path, settings)
    return port_python(source, path, settings, admitted=admitted)
