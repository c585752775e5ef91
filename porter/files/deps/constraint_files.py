"""Requirements files that another requirements file of the run, or a pip command line of its Dockerfiles, shell
scripts, Makefiles, compose files and CI YAML, names with `-c`/`--constraint` (or its variable, `PIP_CONSTRAINT`).

pip reads such a file as constraints: they install nothing, and pip 23.2.1 refuses one with extras
("ERROR: Constraints cannot have extras"). So the target's packages (`torch-xla[tpu]==2.9.0`) are
never added there (DEP004), as in a file named `constraints*.txt`, whatever the file is named
(`-c requirements-pins.txt`). pip finds the path from the naming file's folder. An environment.yml's
`pip:` list names one so too: conda writes the items into a requirements file in the environment
file's folder and runs `pip install -r` on it there. A file pip may also install (named with `-r` too, or with `-c`
by a command line whose folder porter does not follow: matched by its file name) keeps its DEP004, with no edit.
"""

from __future__ import annotations

import json
import posixpath
import re
from bisect import bisect_right
from collections.abc import Callable, Iterable

from porter.core import kinds
from porter.files.deps.indexes import spellings
from porter.files.deps.pip_options import INSTALL, prefixes
from porter.files.deps.tox_ini import config_constraints, deps_lines, is_pip_config, is_tox_ini

CONSTRAINT_OPTIONS = frozenset({"-c", "--constraint"})
_REQUIRE_OPTIONS = frozenset({"-r", "--requirement"})
# a pip command line in a Dockerfile's RUN, a shell script or a Makefile (`uv pip install`, `python -m pip
# install` too), to its end (a shell separator); a `\`-newline is read as a blank (continued)
_PIP_INSTALL = re.compile(r"\bpip(?:3(?:\.\d+)?)?\s+install\b[^\n;&|]*")
# (`--constr`: pip's own prefix of `--constraint`, `pip_options`)
_CONSTRAINT_WORD = re.compile(
    rf"(?<!\S)(?:-c\s*|(?:{'|'.join(prefixes('--constraint', INSTALL))})(?:=|\s+))[\"']?(?!-)([^\s\"';&|]+)"
)
# `pip config set global.constraint pins.txt` (or `install.`; `--user`/`--global`/`--site` before `set`): pip 23.2.1
# writes the key to a configuration file every later `pip install` reads as `-c pins.txt` (thirty-seventh read)
_CONFIG_SET = re.compile(
    r"\bpip(?:3(?:\.\d+)?)?[ \t]+config[ \t]+(?:-[^\s-]\S*[ \t]+|--\S+[ \t]+)*set[ \t]+[\"']?(global|install)\."
    r"((?:[-_]{2})?constraint)[\"']?[ \t]+[\"']?([^\s\"';&|]+)",
    re.I,  # (`pip config set` lowercases the whole name, its section too: `Global.constraint` is read)
)
# (a compose `command:` and a CI step's `run:` are pip command lines too: thirty-fifth read)
COMMAND_KINDS = (kinds.DOCKERFILE, kinds.SHELL, kinds.MAKEFILE, kinds.COMPOSE, kinds.YAML)
# the variables pip and uv read as `-c` (pip's `PIP_<OPTION>`, its value split at blanks): set by a Dockerfile's
# `ENV`, an `export`, a command's prefix, a compose `environment:` or a workflow's `env:` (thirty-fifth read)
CONSTRAINT_VARIABLES = ("PIP_CONSTRAINT", "UV_CONSTRAINT")
_CONSTRAINT_VARIABLE = re.compile(
    rf"\b({'|'.join(map(spellings, CONSTRAINT_VARIABLES))})[\"']?(?:[ \t]*[=:][ \t]*|[ \t]+)[\"']?([^\"'\n#;&|]*)"
)


def constraint_roles(
    names: Iterable[str], read: Callable[[str], bytes | None]
) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """(the files read as constraints only, (file, what names it with `-c`, as its advice says it) of those pip may
    also install).

    A file named with both `-r` and `-c` (`-c requirements.txt` beside `-r requirements.txt`, pip-tools'
    layered files) is installed and read as constraints: the target's packages, with an extra pip refuses
    in a constraint, cannot go in, and a DEP004 is still due (thirty-fourth read: none was said). A `-c`
    on a pip command line names a path relative to the command's working folder (a container's `WORKDIR`
    after `COPY`), which porter does not follow: a requirements file of the run with that file name may
    be it, so its DEP004 is reported there, not added (porter's fix broke that `pip install -c`)."""
    names = list(names)
    requirements = {n.replace("\\", "/"): n for n in names if kinds.kind_of(n) == kinds.REQUIREMENTS}
    if not requirements:
        return (), ()
    # (a tox.ini's `deps` are a requirements file at its path: the runner gives it beside the dependency files)
    texts = {
        n: _naming_text(n, read)
        for n in names
        if kinds.kind_of(n) in (kinds.REQUIREMENTS, kinds.CONDA) or is_tox_ini(n)
    }
    constrained = _named_with(texts, requirements, CONSTRAINT_OPTIONS)
    installed = _named_with(texts, requirements, _REQUIRE_OPTIONS)
    too = {n: f"{where} names this file with `-c`" for n, where in constrained.items() if n in installed}
    by_file_name: dict[str, list[str]] = {}
    for posix, name in requirements.items():
        by_file_name.setdefault(posixpath.basename(posix), []).append(name)
    # requirements file: the `-c` lines (and `PIP_CONSTRAINT`s) of its name
    commands: dict[str, list[tuple[bool, str, int, str, str]]] = {}
    # (a tox.ini's `commands` and `set_env` too: run from its folder unless its `changedir` says otherwise; a pip
    # configuration file's `constraint`, from pip's working folder)
    for name in (n for n in names if kinds.kind_of(n) in COMMAND_KINDS or is_tox_ini(n) or is_pip_config(n)):
        folder = posixpath.dirname(name.replace("\\", "/"))
        text = _naming_text(name, read, whole=True)
        found = [*_command_line_constraints(text), *_variable_constraints(text), *_exec_form_constraints(name, text)]
        found += _config_set_constraints(text)
        found = config_constraints(text) if is_pip_config(name) else found
        for named, line, how in found:
            followed = _followed(name, text, line, named, how, requirements)
            for file in followed or by_file_name.get(posixpath.basename(named), []):
                exact = followed is not None and posixpath.normpath(posixpath.join(folder, named)) == file.replace(
                    "\\", "/"
                )
                exact = len(followed) == 1 if followed else exact
                commands.setdefault(file, []).append((exact, name, line, named, how))
    for file, lines in commands.items():
        # (the nearest command line, one whose path from its own folder is this file first: the first of equals)
        exact, name, line, named, how = max(lines, key=lambda c: (c[0], _shared_folders(file, c[1])))
        too.setdefault(file, _command_naming(exact, f"{name}:{line}{how}", named, how, kinds.kind_of(name)))
    only = tuple(n for n in constrained if n not in too)
    return only, tuple(too.items())


def _followed(name: str, text: str, line: int, named: str, how: str, requirements: dict[str, str]) -> list[str] | None:
    """The requirements files a Dockerfile's command line's `-c` path (or, `how`, a `PIP_CONSTRAINT` its `ENV` sets,
    at each RUN after it) is, by the stage's `WORKDIR` and `COPY` where they are written literally (`COPY other/
    /app/deps/` then `-c deps/pins.txt` is other/pins.txt), from a build context of the Dockerfile's folder or one
    above it; none where that cannot be followed (thirty-fifth read, cache2: every file of that name was told it may
    be the one); None where the path is not even from the Dockerfile's folder (a `cd` in the RUN, a later stage)."""
    from porter.files.readers.dockerfile_copies import context_paths, reading_runs

    if kinds.kind_of(name) != kinds.DOCKERFILE or not named:
        return []
    runs = reading_runs(text, line, variable=bool(how))
    if runs is None:
        return None
    each = [context_paths(text, run, named) for run in runs]
    paths = [p for found in each for p in found or ()] if each and None not in each else []
    folder, contexts = posixpath.dirname(name.replace("\\", "/")), []
    while paths and folder not in contexts:  # (up to `""` or `/`)
        contexts.append(folder)
        folder = posixpath.dirname(folder)
    found = (posixpath.normpath(posixpath.join(c, p)) for c in contexts for p in paths)
    return list(dict.fromkeys(requirements[f] for f in found if f in requirements))


def _command_naming(exact: bool, where: str, named: str, how: str, kind: str | None = None) -> str:
    """What names a file with `-c` (or, `how`, a `PIP_CONSTRAINT`) on a command line, as the advice says it. Its
    path is from the command's working folder, which porter does not follow (a Dockerfile's `WORKDIR` and `COPY`, a
    script's caller): a path that is not this file from the command's own folder is matched by its file name, and
    said so (two `requirements-pins.txt` in two folders were each told "Dockerfile:4 names this file", one of them
    untrue: thirty-fifth read)."""
    option = "" if how else " with `-c`"
    if exact:
        return f"{where} names this file{option}"
    unfollowed = (
        "porter could not follow the Dockerfile's `WORKDIR`, `COPY` and build context to one file"
        if kind == kinds.DOCKERFILE
        else "matched by its file name: porter does not follow the command's working folder"
    )
    return f"{where} names `{named}`{option}, which may be this file ({unfollowed})"


def _shared_folders(file: str, command: str) -> int:
    """How many leading folders two files share: the advice names the nearest command line
    (`plain/Dockerfile` for `plain/requirements.txt`), not the run's first (thirty-fourth read: each
    `requirements.txt` of a tree named the first folder's `Dockerfile`)."""
    shared = 0
    for a, b in zip(file.split("/")[:-1], command.split("/")[:-1]):
        if a != b:
            break
        shared += 1
    return shared


def _naming_text(name: str, read: Callable[[str], bytes | None], whole: bool = False) -> str:
    """The text whose lines name files as a requirements file does (`whole`: all of it, for its command lines)."""
    data = read(name)
    text = data.decode("utf-8", "replace") if data else ""
    if is_tox_ini(name) and not whole:
        return "\n".join(deps_lines(text))
    return "\n".join(_pip_items(text)) if kinds.kind_of(name) == kinds.CONDA else text


def _named_with(texts: dict[str, str], requirements: dict[str, str], options: frozenset[str]) -> dict[str, str]:
    """{requirements file: the first file naming it} for the files `texts` name with one of `options`
    (pip finds the path from the naming file's folder)."""
    # (imported here: the requirements reader brings `packaging`, and every run that had no dependency file imported
    # it at start, 9% more instructions for a one-file lint)
    from porter.files.deps.reqfile import lines, option

    out: dict[str, str] = {}
    for name, text in texts.items():
        posix = name.replace("\\", "/")
        for line in lines(text):
            opt = option(line)
            if opt is None or opt[0] not in options or not opt[1]:
                continue
            named = posixpath.normpath(posixpath.join(posixpath.dirname(posix), opt[1]))
            if named in requirements:
                out.setdefault(requirements[named], name)
    return out


def _command_line_constraints(text: str) -> list[tuple[str, int, str]]:
    """(path, 1-based line, "") of each `-c PATH` of a pip install command in a script's text."""
    joined = text.replace("\\\r\n", "   ").replace("\\\n", "  ")  # (same length: lines and offsets kept)
    out = []
    line, counted = 1, 0
    for command in _PIP_INSTALL.finditer(joined):
        for word in _CONSTRAINT_WORD.finditer(joined, command.start(), command.end()):
            line, counted = line + text.count("\n", counted, word.start()), word.start()
            out.append((word.group(1), line, ""))
    return out


def _exec_form_constraints(name: str, text: str) -> list[tuple[str, int, str]]:
    """(path, 1-based line, "") of each `-c PATH` of a pip install command written as a list of words: a compose
    `command: ["pip", "install", "-c", "pins.txt"]` (any YAML list of strings), a Dockerfile's exec form `RUN
    ["pip", "install", "-c", "pins.txt"]`. `_PIP_INSTALL` wants `pip install` in one string: unread, and the fix
    added the extra pip refuses in a constraint (thirty-fifth read, cache2)."""
    out: list[tuple[str, int, str]] = []
    for words in _word_lists(name, text):
        joined, starts = "", []
        for value, _ in words:
            starts.append(len(joined))
            joined += value + " "
        for command in _PIP_INSTALL.finditer(joined):
            for word in _CONSTRAINT_WORD.finditer(joined, command.start(), command.end()):
                out.append((word.group(1), words[bisect_right(starts, word.start(1)) - 1][1], ""))
    return out


def _word_lists(name: str, text: str) -> list[list[tuple[str, int]]]:
    """(word, 1-based line) of each list of strings: a YAML file's sequences of scalars, a Dockerfile's JSON
    arrays (`RUN`, `CMD`, `ENTRYPOINT`); none where the file does not parse."""
    if kinds.kind_of(name) == kinds.DOCKERFILE:
        return _json_arrays(text)
    if kinds.kind_of(name) not in (kinds.COMPOSE, kinds.YAML):
        return []
    import yaml

    try:
        roots = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        return []
    lists, stack = [], [r for r in roots if r is not None]
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            stack.extend(v for pair in node.value for v in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
            if node.value and all(isinstance(v, yaml.ScalarNode) for v in node.value):
                lists.append([(v.value, v.start_mark.line + 1) for v in node.value])
    return lists


def _json_arrays(text: str) -> list[list[tuple[str, int]]]:
    """(word, its instruction's line) of each Dockerfile instruction written in the exec form (`CMD ["pip", ...]`)."""
    from porter.files.readers.dockerfile_instructions import instructions

    out = []
    for inst in instructions(text):
        try:
            values = json.loads(text[inst.args[0] : inst.args[1]])
        except ValueError:
            continue
        if isinstance(values, list) and all(isinstance(v, str) for v in values):
            out.append([(v, inst.line) for v in values])
    return out


def _config_set_constraints(text: str) -> list[tuple[str, int, str]]:
    """(path, 1-based line, " (`pip config set KEY`)") of each constraints file a `pip config set global.constraint
    PATH` names: pip keeps it in its configuration, and every later `pip install` reads PATH as `-c` (pip 23.2.1:
    "ERROR: Constraints cannot have extras" for the pins porter's fix added the target's package to). Read as a
    variable is: from the command on (a Dockerfile's later RUNs)."""
    out: list[tuple[str, int, str]] = []
    for found in _CONFIG_SET.finditer(text):
        line = text.count("\n", 0, found.start()) + 1
        out.append((found.group(3), line, f" (`pip config set {found.group(1)}.{found.group(2)}`)"))
    return out


def _variable_constraints(text: str) -> list[tuple[str, int, str]]:
    """(path, 1-based line, " (VARIABLE)") of each path a `PIP_CONSTRAINT`/`UV_CONSTRAINT` is set to:
    `ENV PIP_CONSTRAINT=requirements-pins.txt` made pip refuse the extra porter's fix added there, as
    `-c` does (thirty-fifth read)."""
    out: list[tuple[str, int, str]] = []
    for found in _CONSTRAINT_VARIABLE.finditer(text):
        line = text.count("\n", 0, found.start()) + 1
        out.extend((path, line, f" ({found.group(1)})") for path in found.group(2).split())
    return out


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
