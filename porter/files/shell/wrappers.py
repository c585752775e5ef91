"""Commands that run another command: `env NAME=value pip install ...`, `sudo pip install ...`, `nohup`, `nice`,
`timeout`, `exec`. The command they run is read as if it stood alone, and the variables `env` and `sudo` set for it
as assignments (coreutils 9.1 `env [OPTION]... [NAME=VALUE]... [COMMAND [ARG]...]`; sudo 1.9's `sudo [option]...
[VAR=value]... command`: pip 23.2.1 under `env PIP_INDEX_URL=URL pip install --dry-run` says "Looking in indexes:
URL"). `sudo pip install torch --index-url .../cu121` and `env CUDA_VISIBLE_DEVICES=0 python m.py` were read as
commands named `sudo` and `env` only: nothing found (thirty-sixth read)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from porter.files.shell.words import Command, Word

# each wrapper's options that take the next word as their value (GNU coreutils 9.1, sudo 1.9, bash 5.2's `exec`);
# a wrapper not listed here is not unwrapped. `env -S`/`--split-string` (its string split into the command) and
# `--` end the reading where marked.
_TAKES_VALUE: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir"}),
    "sudo": frozenset({"-u", "--user", "-g", "--group", "-C", "--close-from", "-D", "--chdir", "-p", "--prompt"})
    | frozenset({"-r", "--role", "-t", "--type", "-T", "--command-timeout", "-U", "--other-user"}),
    "nohup": frozenset(),
    "nice": frozenset({"-n", "--adjustment"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "exec": frozenset({"-a"}),
}
_SETS_VARIABLES = frozenset({"env", "sudo"})  # `NAME=value` words before the command
_POSITIONAL = {"timeout": 1}  # words after the options before the command (`timeout 60 pip install`)
# options after which the words are no command run as written (`env -S 'a b'`, sudo's `-l`/`-v`/`-e` list,
# validate, edit; `-s`/`-i` run a shell with the words)
_STOPS: dict[str, frozenset[str]] = {
    "env": frozenset({"-S", "--split-string"}),
    "sudo": frozenset({"-l", "--list", "-v", "--validate", "-e", "--edit", "-s", "--shell", "-i", "--login", "-K"})
    | frozenset({"-k", "--reset-timestamp", "-V", "--version", "-h", "--help"}),
}
# (matched at a word's start; from a name character's run start only, so a search is linear too)
_NAME_VALUE = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*)=")


@dataclass(frozen=True)
class Wrapped:
    own: Command  # the wrapper with its options only (`env -u NCCL_DEBUG`)
    assignments: tuple[tuple[str, tuple[int, int], str, tuple[int, int]], ...]  # (name, its span, value, its span)
    inner: Command  # the command it runs


def unwrap(cmd: Command) -> Wrapped | None:
    """The command `cmd` runs and what it sets for it, or None where `cmd` is no wrapper porter reads (or its
    words hold an expansion before the command, or it runs none)."""
    takes = _TAKES_VALUE.get(cmd.name)
    if takes is None:
        return None
    args, i = cmd.args, 0
    while i < len(args) and (args[i].value or "").startswith("-") and args[i].value != "-":
        value = args[i].value or ""
        if value == "--":
            i += 1
            break
        if value in _STOPS.get(cmd.name, ()) or value.split("=", 1)[0] in _STOPS.get(cmd.name, ()):
            return None
        i += 2 if value in takes else 1
    if i < len(args) and cmd.name == "env" and args[i].value == "-":  # `env -`: `-i`
        i += 1
    options = args[:i]
    assignments: list[tuple[str, tuple[int, int], str, tuple[int, int]]] = []
    while cmd.name in _SETS_VARIABLES and i < len(args):
        found = _assignment(args[i])
        if found is None:
            break
        assignments.append(found)
        i += 1
    i += _POSITIONAL.get(cmd.name, 0)
    name_word = args[i] if i < len(args) else None
    program = name_word.value if name_word is not None else None
    if name_word is None or program is None or _NAME_VALUE.match(program):
        return None
    inner = Command(program.rsplit("/", 1)[-1], name_word, args[i + 1 :], name_word.start, cmd.end)
    own = Command(cmd.name, cmd.name_word, options, cmd.start, options[-1].end if options else cmd.name_word.end)
    return Wrapped(own, tuple(assignments), inner)


def _assignment(w: Word) -> tuple[str, tuple[int, int], str, tuple[int, int]] | None:
    """(name, name span, value, value span) of a `NAME=value` word written as it is read, else None."""
    m = _NAME_VALUE.match(w.value or "")
    if m is None or w.value is None:
        return None
    name = m.group(1)
    if not w.raw.startswith(name + "="):  # (`"NAME=value"` quoted whole: its places are not the value's)
        return None
    return name, (w.start, w.start + len(name)), w.value[len(name) + 1 :], (w.start + len(name) + 1, w.end)
