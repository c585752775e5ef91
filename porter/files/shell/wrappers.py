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

# each wrapper's options that take the next word as their value (GNU coreutils 9.1, sudo 1.9, bash 5.2's `exec` and
# `command`, GNU time 1.9, OpenBSD's doas, util-linux 2.38's runuser, chrt, ionice, taskset, GNU findutils 4.9's xargs,
# numactl 2.0); a wrapper not listed here is not unwrapped. `env -S`/`--split-string` (its string split into the
# command) and `--` end the reading where marked (thirty-sixth read, cache2: `time`, `doas`, `taskset -c 0`, ...)
_TAKES_VALUE: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir"}),
    "sudo": frozenset({"-u", "--user", "-g", "--group", "-C", "--close-from", "-D", "--chdir", "-p", "--prompt"})
    | frozenset({"-r", "--role", "-t", "--type", "-T", "--command-timeout", "-U", "--other-user"}),
    "nohup": frozenset(),
    "nice": frozenset({"-n", "--adjustment"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "exec": frozenset({"-a"}),
    "command": frozenset(),
    "time": frozenset({"-f", "--format", "-o", "--output"}),
    "doas": frozenset({"-u"}),
    "runuser": frozenset({"-u", "--user", "-g", "--group", "-G", "--supp-group", "-w", "--whitelist-environment"}),
    "stdbuf": frozenset({"-i", "--input", "-o", "--output", "-e", "--error"}),
    "chrt": frozenset({"-T", "--sched-runtime", "-P", "--sched-period", "-D", "--sched-deadline"}),
    "ionice": frozenset({"-c", "--class", "-n", "--classdata"}),
    "taskset": frozenset(),
    "numactl": frozenset({"-i", "--interleave", "-w", "--weighted-interleave", "-m", "--membind", "-N"})
    | frozenset({"--cpunodebind", "-C", "--physcpubind", "-p", "--preferred", "-P", "--preferred-many", "-c"})
    | frozenset({"--cpubind", "-I", "--shmid"}),
    "xargs": frozenset({"-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L", "-n", "--max-args", "-P"})
    | frozenset({"--max-procs", "-s", "--max-chars", "--process-slot-var"}),
}
_SETS_VARIABLES = frozenset({"env", "sudo"})  # `NAME=value` words before the command
# words after the options before the command (`timeout 60 pip install`; `taskset 0x3 cmd`, `taskset -c 0,1 cmd`:
# `-c` only says the word is a list; `chrt 10 cmd`, `chrt -o 0 cmd`: its priority, a number)
_POSITIONAL = {"timeout": 1, "taskset": 1, "chrt": 1}
# numactl's shared-memory options: with a command, numactl exits ("shm related option --huge for process", a usage
# error with `--shm`/`--file`) and runs nothing; `-c`/`--cpubind` and `--shmid` take a value and run it (numactl
# 2.0.16 run for real: `numactl --huge pip ...` was read as running pip, `numactl -c 0 pip ...` as running `0`;
# thirty-seventh read, cdleft)
_NUMACTL_SHARED_MEMORY = frozenset({"-S", "--shm", "-f", "--file", "-L", "--length", "-M", "--shmmode", "-o"})
_NUMACTL_SHARED_MEMORY |= frozenset({"--offset", "-u", "--huge", "-d", "--dump", "-D", "--dump-nodes", "-T", "--touch"})
# options after which the words are no command run as written (`env -S 'a b'`, sudo's `-l`/`-v`/`-e` list,
# validate, edit; `command -v` says what a name is; `runuser` without `-u`
# runs a shell, `-c` its script; a PID's settings: `chrt -p`, `taskset -p`, `ionice -p`)
_STOPS: dict[str, frozenset[str]] = {
    "env": frozenset({"-S", "--split-string"}),
    "sudo": frozenset({"-l", "--list", "-v", "--validate", "-e", "--edit", "-K", "-k", "--reset-timestamp"})
    | frozenset({"-V", "--version", "-h", "--help"}),
    "command": frozenset({"-v", "-V"}),
    "time": frozenset({"-V", "--version", "--help"}),
    "doas": frozenset({"-L", "-s", "-C"}),
    "runuser": frozenset({"-c", "--command", "--session-command", "-s", "--shell", "-", "-l", "--login"}),
    "stdbuf": frozenset({"--help", "--version"}),
    "chrt": frozenset({"-p", "--pid", "-m", "--max", "-h", "--help", "-V", "--version"}),
    "ionice": frozenset({"-p", "--pid", "-P", "--pgid", "-u", "--uid", "-h", "--help", "-V", "--version"}),
    "taskset": frozenset({"-p", "--pid", "-h", "--help", "-V", "--version"}),
    "numactl": frozenset({"-s", "--show", "-H", "--hardware", "-h", "--help", "-V", "--verify", "--version"})
    | _NUMACTL_SHARED_MEMORY,
    "xargs": frozenset({"--help", "--version", "--show-limits"}),
}
_NEEDS = {"runuser": frozenset({"-u", "--user"})}  # an option without which the words are no command (`runuser USER`)
# sudo 1.9's `-s`/`-i` with a command: the shell runs it with `-c`, the words joined with each character but letters,
# digits, `_`, `-` and `$` escaped, so it runs the words as written unless one holds a `$` (the shell expands it).
# They were a stop: `sudo -Es pip install ... --index-url .../cu121` was never read (thirty-seventh read, cdleft)
_SHELL_RUNS = {"sudo": frozenset({"-s", "--shell", "-i", "--login"})}
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
    seen: set[str] = set()
    i = _options_end(cmd, seen)
    if i is None:
        return None
    args = cmd.args
    if seen & _SHELL_RUNS.get(cmd.name, frozenset()) and any("$" in (w.value or "") for w in args[i:]):
        return None
    options = args[:i]
    assignments: list[tuple[str, tuple[int, int], str, tuple[int, int]]] = []
    while cmd.name in _SETS_VARIABLES and i < len(args):
        found = assignment_of(args[i])
        if found is None:
            break
        assignments.append(found)
        i += 1
    i += _POSITIONAL.get(cmd.name, 0)
    if cmd.name == "chrt" and i <= len(args) and not (args[i - 1].value or "").isdigit():
        i -= 1  # (util-linux 2.41: no priority where the policy takes none, `chrt --other cmd`)
    name_word = args[i] if i < len(args) else None
    program = name_word.value if name_word is not None else None
    if name_word is None or program is None or _NAME_VALUE.match(program):
        return None
    inner = Command(program.rsplit("/", 1)[-1], name_word, args[i + 1 :], name_word.start, cmd.end)
    own = Command(cmd.name, cmd.name_word, options, cmd.start, options[-1].end if options else cmd.name_word.end)
    return Wrapped(own, tuple(assignments), inner)


def _options_end(cmd: Command, seen: set[str]) -> int | None:
    """The index of the first of `cmd`'s words after the wrapper's options (those options added to `seen`), None
    where it is no wrapper porter reads or an option stops the reading."""
    takes = _TAKES_VALUE.get(cmd.name)
    if takes is None:
        return None
    args, i = cmd.args, 0
    while i < len(args) and (args[i].value or "").startswith("-") and args[i].value != "-":
        value = args[i].value or ""
        if value == "--":
            i += 1
            break
        words = _option_words(cmd.name, value, takes, seen)
        if words is None:
            return None
        i += words
    if i < len(args) and cmd.name == "env" and args[i].value == "-":  # `env -`: `-i`
        i += 1
    needs = _NEEDS.get(cmd.name)
    return None if needs is not None and not seen & needs else i


def _option_words(name: str, value: str, takes: frozenset[str], seen: set[str]) -> int | None:
    """How many words the option word `value` of the wrapper `name` takes (2: its value is the next word), None where
    it stops the reading (`_STOPS`); short options as getopt reads them, `-Hu root` as `-H -u root`, `-n1` as `-n 1`
    (`sudo -Hu root pip ...` read `root` as the command)."""
    stops = _STOPS.get(name, frozenset())
    if value.startswith("--") or value in takes or value in stops:
        option = value.split("=", 1)[0]
        seen.add(option)
        if option in stops:
            return None
        return 2 if value in takes else 1
    for at, letter in enumerate(value[1:], 1):
        option = "-" + letter
        seen.add(option)
        if option in stops:
            return None
        if option in takes:
            return 2 if at == len(value) - 1 else 1
    return 1


def assignment_of(w: Word) -> tuple[str, tuple[int, int], str, tuple[int, int]] | None:
    """(name, name span, value, value span) of a `NAME=value` word written as it is read, else None."""
    m = _NAME_VALUE.match(w.value or "")
    if m is None or w.value is None:
        return None
    name = m.group(1)
    # (`"NAME=value"` quoted whole, an exec form's `["env", "NAME=value", ...]`: where its characters are the value's,
    # those places; else none: an exec form's `env` was never read, thirty-sixth read, cache2)
    start, end = w.inner
    if end - start != len(w.value):
        return None
    return name, (start, start + len(name)), w.value[len(name) + 1 :], (start + len(name) + 1, end)
