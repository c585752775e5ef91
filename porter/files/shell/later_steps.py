"""The variables a workflow step writes to `$GITHUB_ENV` for the job's later steps, written otherwise than by one
`echo "NAME=value" >> $GITHUB_ENV` (which porter.files.shell.script reads): a here-document `cat` or `tee` writes
there (`cat >> "$GITHUB_ENV" <<EOF`, `tee -a $GITHUB_ENV <<EOF`), and `echo "NAME=value" | tee -a $GITHUB_ENV`.

GitHub Actions reads the file a line at a time: `NAME=value` (split at the first `=`, the value as written, quotes
and all), or `NAME<<DELIMITER` and the lines up to a line that is `DELIMITER` (a multi-line value, not read here). A
`PIP_INDEX_URL=.../cu121` written so was never read (thirty-seventh read, cdleft)."""

from __future__ import annotations

import re
from typing import Any

from porter.files.shell import env as envvars
from porter.files.shell.parse import Offsets
from porter.files.shell.words import Command, command, heredocs, text_of
from porter.files.sites import Site

# `$GITHUB_ENV`, `${GITHUB_ENV}`, either double-quoted
GITHUB_ENV = re.compile(r"\$(?:GITHUB_ENV|\{GITHUB_ENV\})|\"\$(?:GITHUB_ENV|\{GITHUB_ENV\})\"")
# (tried from a name's first character only, so a search is linear too)
_LINE = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*)=([^\n]*)")
_TEE_APPEND = frozenset({"-a", "--append"})
# (a value GitHub keeps quotes in, one the shell changes in an unquoted delimiter's body, or one that keeps a `$` as
# written in a quoted one, `PIP_INDEX_URL=$BASE/...`, no URL: not read as a value)
_NOT_LITERAL = re.compile(r"[\"'\r$`\\]")


def writes_github_env(cmd: Command) -> bool:
    """Whether `cmd` is a `tee` whose one file is `$GITHUB_ENV` (`tee -a "$GITHUB_ENV"`)."""
    if cmd.name != "tee":
        return False
    files = [w for w in cmd.args if not (w.value or "").startswith("-")]
    options = [w for w in cmd.args if (w.value or "").startswith("-")]
    return (
        len(files) == 1
        and GITHUB_ENV.fullmatch(files[0].raw) is not None
        and all(w.value in _TEE_APPEND for w in options)
    )


def piped_to_github_env(node: Any, source: bytes, offsets: Offsets) -> bool:
    """Whether the command `node` is the first of a pipeline of two whose second is `tee ... $GITHUB_ENV`."""
    parent = node.parent
    if parent is None or parent.type != "pipeline":
        return False
    parts = [c for c in parent.named_children if c.type == "command"]
    if len(parts) != 2 or len(parent.named_children) != 2 or parts[0] != node:
        return False
    tee = command(parts[1], source, offsets)
    return tee is not None and writes_github_env(tee)


def heredoc_sites(node: Any, source: bytes, offsets: Offsets, text: str, target: str) -> list[Site]:
    """The sites of each `NAME=value` line of a here-document a `redirected_statement` node writes to
    `$GITHUB_ENV` (`cat >> $GITHUB_ENV <<EOF`, `tee -a $GITHUB_ENV <<EOF`), read as assignments."""
    body = node.child_by_field_name("body")
    cmd = command(body, source, offsets) if body is not None and body.type == "command" else None
    if cmd is None or not (_cat_to_github_env(cmd, node, source) or writes_github_env(cmd)):
        return []
    out: list[Site] = []
    for _, _, body_node in heredocs(node):
        out.extend(_lines(text_of(body_node, source), offsets.char(body_node.start_byte), text, target))
    return out


def grouped_to_github_env(node: Any, source: bytes) -> bool:
    """Whether the command `node` is one of a group whose standard output goes to `$GITHUB_ENV` (`{ echo A=b; echo
    C=d; } >> "$GITHUB_ENV"`, a subshell's too)."""
    group = node.parent
    if group is None or group.type not in ("compound_statement", "subshell") or group.parent is None:
        return False
    return group.parent.type == "redirected_statement" and stdout_to_github_env(group.parent, source)


def _cat_to_github_env(cmd: Command, node: Any, source: bytes) -> bool:
    """Whether `cmd` is a `cat` of its standard input whose standard output goes to `$GITHUB_ENV` (`>>` or `>`)."""
    return cmd.name == "cat" and not cmd.args and stdout_to_github_env(node, source)


def stdout_to_github_env(node: Any, source: bytes) -> bool:
    """Whether the `redirected_statement` node sends its standard output to `$GITHUB_ENV` (`>>`, `>`, `1>>`, `&>>`;
    not `2>>`: `echo "PIP_INDEX_URL=..." 2>> $GITHUB_ENV` writes nothing there and was read as if it did,
    thirty-seventh read, cdleft)."""
    redirects = [c for c in node.named_children if c.type == "file_redirect"]
    for inner in (c for c in node.named_children if c.type == "heredoc_redirect"):
        redirects.extend(c for c in inner.named_children if c.type == "file_redirect")
    for redirect in redirects:
        destination = redirect.child_by_field_name("destination")
        descriptors = [text_of(c, source) for c in redirect.children if c.type == "file_descriptor"]
        if destination is None or descriptors not in ([], ["1"]):
            continue
        operator = text_of(redirect, source).lstrip("1")
        if operator.startswith((">", "&>")) and GITHUB_ENV.fullmatch(text_of(destination, source)):
            return True
    return False


def _lines(body: str, at: int, text: str, target: str) -> list[Site]:
    """The sites of the body's `NAME=value` lines (`<<-`'s leading tabs skipped; a multi-line value's lines not
    read; a value the shell or GitHub changes not read)."""
    out: list[Site] = []
    delimiter: str | None = None
    pos = 0
    for line in body.split("\n"):
        start, pos = pos, pos + len(line) + 1
        stripped = line.lstrip("\t")
        start += len(line) - len(stripped)
        if delimiter is not None:
            delimiter = None if stripped == delimiter else delimiter
            continue
        equals, heredoc = stripped.find("="), stripped.find("<<")
        if heredoc >= 0 and (equals < 0 or heredoc < equals):
            delimiter = stripped[heredoc + 2 :]
            continue
        m = _LINE.fullmatch(stripped)
        if m is None or _NOT_LITERAL.search(m.group(2)):
            continue
        name, value = m.group(1), m.group(2)
        first = at + start
        value_at = first + len(name) + 1
        value_span = (value_at, value_at + len(value))
        out.extend(envvars.assignment(text, target, name, (first, first + len(name)), value, value_span))
    return out
