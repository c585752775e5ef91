"""Dockerfiles: the base image, the environment they set, and the shell they run.

FROM is checked against NVIDIA's images (CTR001), ENV and ARG go to the environment-variable
checks, RUN (and CMD/ENTRYPOINT in shell form, here-documents included) is shell text for
porter.files.shell.script, the exec form `["prog", "arg"]` a command of JSON strings.
"""

from __future__ import annotations

import json
import re

from porter.config.settings import Settings
from porter.files.containers.images import image_sites
from porter.files.readers.dockerfile_instructions import Instruction, instructions
from porter.files.shell import env as envvars
from porter.files.shell.words import Command, Word
from porter.files.sites import Site, Text

# `NAME=value`: a name is tried once per run of name characters, from its first letter (from
# each letter of a long run not followed by `=` the name ran to the run's end: quadratic)
_PAIR = re.compile(
    r"(?<![A-Za-z0-9_.-])[0-9.-]*([A-Za-z_][A-Za-z0-9_.-]*)=(\"(?:\\.|[^\"\\])*\"|'[^']*'|(?:\\.|[^\s\\])*)"
)
_SHELL = frozenset({"RUN", "CMD", "ENTRYPOINT", "HEALTHCHECK"})
_NVIDIA_LABEL = re.compile(r"com\.nvidia\.[\w.-]+")


def port(text: Text, path: str, settings: Settings) -> list[Site]:
    out: list[Site] = []
    for inst in instructions(text.text):
        start, end = inst.args
        args = text.text[start:end]
        if inst.keyword == "FROM":
            out.extend(_from(text.text, start, args, settings.target))
        elif inst.keyword in ("ENV", "ARG"):
            out.extend(_variables(text.text, start, args, settings.target, legacy=inst.keyword == "ENV"))
        elif inst.keyword == "LABEL":
            out.extend(
                Site(
                    "CTR002",
                    start + m.start(),
                    start + m.end(),
                    None,
                    message=f"`{m.group(0)}` is a label of NVIDIA's container runtime",
                )
                for m in _NVIDIA_LABEL.finditer(args)
            )
        elif inst.keyword in _SHELL:
            out.extend(_shell(text.text, inst, settings.target))
    return out


def _from(text: str, start: int, args: str, target: str) -> list[Site]:
    for m in re.finditer(r"\S+", args):
        if m.group(0).startswith("--"):
            continue
        return image_sites(m.group(0), start + m.start(), target)
    return []


def _unquote(value: str) -> str | None:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        inner = value[1:-1]
        return None if "\\" in inner or "$" in inner else inner
    return None if "$" in value or "\\" in value else value


# `ENV NAME value`'s name and the whitespace after it (at least one); its value is the rest, less
# the whitespace around it (`_legacy_value`). As one regex, `\s+(.+?)\s*$`, the lazy value tried
# every end against a long run of spaces (quadratic: `ENV A x` + 20,000 spaces + `y` took 1.3 s,
# the 2 MiB line limit hours; seventeenth read).
_LEGACY_NAME = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s+")


def _legacy_value(args: str, name_end: int, at: int) -> tuple[int, int] | None:
    r"""The span of the value after `ENV NAME` (`name_end`: the name's end; `at`: after the
    whitespace that follows it, all of it): the rest of `args` less the whitespace after it;
    where the rest is blank, its last whitespace character, or None for a single one (what
    `\s+(.+?)\s*$` gave)."""
    end = len(args.rstrip())
    if end > at:
        return at, end
    return (at - 1, at) if at - name_end > 1 else None  # `\s+` gave its last character to the value


def _variables(text: str, start: int, args: str, target: str, *, legacy: bool) -> list[Site]:
    out: list[Site] = []
    pairs = list(_PAIR.finditer(args))
    if not pairs and legacy:  # `ENV NAME value` (the old form: the rest of the line is the value)
        m = _LEGACY_NAME.match(args)
        value = _legacy_value(args, m.end(1), m.end()) if m is not None else None
        if m is not None and value is not None:
            name_span = (start + m.start(1), start + m.end(1))
            value_at, value_end = value
            value_span = (start + value_at, start + value_end)
            return envvars.assignment(
                text, target, m.group(1), name_span, _unquote(args[value_at:value_end]), value_span
            )
    if not pairs:  # `ARG NAME` without a default
        for m in re.finditer(r"[A-Za-z_][A-Za-z0-9_]*", args):
            site = envvars.read(m.group(0), (start + m.start(), start + m.end()))
            if site is not None:
                out.append(site)
        return out
    for m in pairs:
        name_span = (start + m.start(1), start + m.end(1))
        value_span = (start + m.start(2), start + m.end(2))
        out.extend(envvars.assignment(text, target, m.group(1), name_span, _unquote(m.group(2)), value_span))
    return out


def _shell(text: str, inst: Instruction, target: str) -> list[Site]:
    from porter.files.shell.script import shell_sites

    start, end = inst.args
    args = text[start:end]
    body = args
    if inst.keyword == "HEALTHCHECK":
        m = re.search(r"\bCMD\s+", args)
        if m is None:
            return []
        start, body = start + m.end(), args[m.end() :]
    lead = len(body) - len(body.lstrip())
    if body.lstrip().startswith("["):
        return _exec_form(text, start + lead, body.strip(), target)
    body = re.sub(r"^(--\S+\s+)+", lambda m: " " * len(m.group(0)), body)  # RUN --mount=... flags
    out = shell_sites(body, start, text, target) if body.strip() else []
    for doc_start, doc_end in inst.heredocs:
        out.extend(shell_sites(text[doc_start:doc_end], doc_start, text, target))
    return out


def _exec_form(text: str, start: int, array: str, target: str) -> list[Site]:
    """`CMD ["python", "train.py", "--device", "cuda"]`: a command of JSON strings."""
    try:
        values = json.loads(array)
    except ValueError:
        return []
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        return []
    words: list[Word] = []
    at = start
    for value in values:
        raw = json.dumps(value)
        found = text.find(raw, at)
        if found < 0:
            return []
        words.append(Word(raw, value, found, found + len(raw)))
        at = found + len(raw)
    cmd = Command(values[0].rsplit("/", 1)[-1], words[0], tuple(words[1:]), words[0].start, words[-1].end)
    from porter.files.shell.script import command_sites  # (tree-sitter's bash, loaded where a command is read)

    # a rewrite of the command's text would not be JSON: what is found there is reported
    return [
        Site(s.code, s.start, s.end, None, s.message, s.advice, unedited=s.unedited)
        for s in command_sites(cmd, text, target)
    ]
