"""Shell scripts and Slurm batch files, and any shell text inside another kind of file.

The text is parsed with tree-sitter-bash and walked once: each command goes to
porter.files.shell.commands, each assignment and each expansion of a variable to
porter.files.shell.env, each `#SBATCH` comment to the Slurm check. `shell_sites` is what a
Dockerfile's RUN, a Makefile's recipe and a notebook's `!` line use too.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from porter.config.settings import Settings
from porter.files.errors import Unreadable
from porter.files.shell import commands
from porter.files.shell import env as envvars
from porter.files.shell import later_steps
from porter.files.shell.parse import Offsets, error_lines, parse
from porter.files.shell.quoting import script_value
from porter.files.shell.words import Command, Word, command, heredocs, literal, text_of, word
from porter.files.shell.wrappers import assignment_of, unwrap
from porter.files.sites import Site, Text

_DECLARATIONS = frozenset({"declaration_command", "unset_command"})
_CONSUMING = frozenset({"pipeline", "command_substitution", "process_substitution"})


def shell_sites(code: str, base: int, text: str, target: str, *, strict: bool = False) -> list[Site]:
    """The sites of the shell `code`, which starts at character `base` of the file's `text`.
    A script that does not parse is unreadable (`strict`); shell text inside another file
    that does not parse is still read, but nothing in it is rewritten."""
    source = code.encode("utf-8", "surrogateescape")
    tree = parse(source)
    bad = error_lines(tree.root_node)
    if bad and strict:
        raise Unreadable(f"does not parse as bash (line {bad[0]}): left unchanged", bad[0])
    offsets = Offsets(code, base)
    out: list[Site] = []
    stack: list[tuple[Any, bool]] = [(tree.root_node, False)]  # (node, its output is read by another command)
    while stack:
        node, consumed = stack.pop()
        consumed = consumed or node.type in _CONSUMING
        out.extend(_node_sites(node, consumed, source, offsets, text, target))
        stack.extend((child, consumed) for child in reversed(node.named_children))
    if bad:
        out = [replace(s, replacement=None) for s in out]
    return _once(out)


def _once(sites: list[Site]) -> list[Site]:
    """One site per rule and span, an edited one first: the script of `sh -c "ls $CUDA_HOME"` is read as shell
    too, and the expansion the outer shell reads was said twice (thirty-fifth read, cache2)."""
    kept: dict[tuple[str, int, int], Site] = {}
    for site in sites:
        key = (site.code, site.start, site.end)
        if key not in kept or (kept[key].replacement is None and site.replacement is not None):
            kept[key] = site
    return list(kept.values())


def _node_sites(node: Any, consumed: bool, source: bytes, offsets: Offsets, text: str, target: str) -> list[Site]:
    """The sites of one node of the tree, by its type: a command (`consumed`: its output is read
    by another command), an assignment, a read of a variable, a redirect, a comment."""
    kind = node.type
    if kind == "command":
        cmd = command(node, source, offsets)
        if cmd is None:
            return []
        later = _later_steps_variable(node, cmd, source, offsets, text, target)
        herestring = _herestring_script(node, cmd, source, offsets, text, target)
        return command_sites(cmd, text, target, consumed=consumed) + later + herestring
    if kind == "variable_assignment":
        return _assignment(node, source, offsets, text, target)
    if kind in ("simple_expansion", "expansion") or kind in _DECLARATIONS:
        return _variable_reads(node, source, offsets)
    if kind == "file_redirect":
        dest = node.child_by_field_name("destination")
        if dest is None:
            return []
        w = word(dest, source, offsets)
        return commands.redirect(w.raw, w.value, w.start, w.end)
    if kind == "comment":
        return commands.slurm_directive(text_of(node, source), offsets.char(node.start_byte))
    if kind == "redirected_statement":
        return _stdin_script(node, source, offsets, text, target) + later_steps.heredoc_sites(
            node, source, offsets, text, target
        )
    return []


def _later_steps_variable(
    node: Any, cmd: Command, source: bytes, offsets: Offsets, text: str, target: str
) -> list[Site]:
    """The sites of the one `NAME=value` an `echo` writes to `$GITHUB_ENV`, read as an assignment: NAME is set for
    the job's later steps (GitHub Actions' documented format, `NAME=value` a line); `PIP_INDEX_URL=.../cu121` written
    so was never read (thirty-sixth read, cache2). Written by a group (`{ echo ...; } >> $GITHUB_ENV`) or through
    `| tee -a $GITHUB_ENV` too; not by `2>>` (thirty-seventh read, cdleft: `later_steps`)."""
    parent = node.parent
    if cmd.name != "echo" or len(cmd.args) != 1 or parent is None:
        return []
    if not (later_steps.piped_to_github_env(node, source, offsets) or later_steps.grouped_to_github_env(node, source)):
        if parent.type != "redirected_statement" or not later_steps.stdout_to_github_env(parent, source):
            return []
    found = assignment_of(cmd.args[0])
    return envvars.assignment(text, target, *found) if found is not None else []


def command_sites(cmd: Command, text: str, target: str, *, consumed: bool = False) -> list[Site]:
    """A command's sites (`commands.sites`) and those of the script a shell is handed with `-c` (a rule the command's
    own checks found on its word is not said twice). A command another runs (`sudo pip install ...`, `env
    NAME=value python ...`) is read as itself, the variables set for it as assignments (`wrappers.unwrap`)."""
    wrapped = unwrap(cmd)
    if wrapped is not None:
        out = commands.variable_names(wrapped.own, text, target, consumed)  # (`env -u NCCL_DEBUG ...`)
        for name, name_span, value, value_span in wrapped.assignments:
            out.extend(envvars.assignment(text, target, name, name_span, value, value_span))
        return out + command_sites(wrapped.inner, text, target, consumed=consumed)
    out = commands.sites(cmd, text, target, consumed=consumed)
    said = {site.code for site in out}
    out.extend(site for site in _inline_script(cmd, text, target) if site.code not in said)
    return out


# the shells whose `-c` takes a script as a string (POSIX `sh -c command_string`; `bash -lc`, `sh -ec`: `c` among
# the options). A compose `command: sh -c "pip install ..."` and its list form, a Dockerfile's `RUN bash -c '...'`:
# the script was never read (thirty-fifth read)
_SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh", "ksh"})
_SHORT_OPTIONS = re.compile(r"-[a-zA-Z]+")


def _inline_script(cmd: Command, text: str, target: str) -> list[Site]:
    """The sites of the script `sh -c '...'` runs, where the script's characters are its value; in a double-quoted
    string with escapes or expansions, read with them masked (`_escapes_masked`)."""
    script = _script_word(cmd)
    return [] if script is None else _script_sites(script, text, target)


def _script_sites(script: Word, text: str, target: str) -> list[Site]:
    """The sites of the script the word `script` holds (`sh -c SCRIPT`'s, `bash <<< SCRIPT`'s)."""
    heredoc = _CAT_HEREDOC.fullmatch(script.raw)
    if heredoc is not None and heredoc.group(1) and (heredoc.group(2) or not heredoc.group(6)):
        # (`sh -c "$(cat <<'EOF' ... EOF)"`: the outer shell's command substitution writes the here-document's body,
        # which is the script: it was read as `cat`'s input, a `pip install` there unread, thirty-sixth read)
        body, at = heredoc.group(5), script.start + heredoc.start(5)
        return _heredoc_sites(body, at, text, target, quoted=bool(heredoc.group(3)), dashed=bool(heredoc.group(2)))
    start, end = script.inner
    if script.value and text[start:end] == script.value:
        return shell_sites(script.value, start, text, target)
    masked = _escapes_masked(script)
    if masked is None:
        return _decoded_script(script, target)
    # (what the outer shell expands, `$V`, stays an expansion for the script's reader: a word it cannot know; the
    # other characters are the value's, edited in place where no escape moved them)
    found = shell_sites(masked, script.start + 1, text, target)
    if "\\" not in script.raw:
        return found
    # (an escape moved the value's characters: read as bash decodes it where it can be, each site at the characters
    # it is written with; the masked text kept an escaped quote's blank inside the quotes, so `--index-url
    # \"URL\"`'s value was `URL ` and no index was said: thirty-sixth read, term2)
    decoded = _decoded_script(script, target)
    return decoded or [Site(s.code, s.start, s.end, None, s.message, s.advice, unedited=s.unedited) for s in found]


# a word that is one command substitution of `cat` and a here-document, nothing else: `"$(cat <<'EOF'` ... `EOF` `)"`
# (1: the outer quote, without which the output is split into words and the first is the script; 2: `-` of `<<-`;
# 3: the delimiter's quote; 4: the delimiter; 5: the body; 6: the tabs before the delimiter's line, only `<<-`'s)
_CAT_HEREDOC = re.compile(
    r"(\"?)\$\(\s*cat[ \t]+<<(-?)[ \t]*([\"']?)([A-Za-z_][\w-]*)\3[ \t]*\n((?:.*\n)*?)(\t*)\4[ \t]*\n\s*\)\1"
)
# the options that have a shell read its script from its standard input: none but options, or `-s` (then operands are
# the script's arguments)
_STDIN_OPTION = re.compile(r"-[a-zA-Z]*s[a-zA-Z]*")


def _stdin_script(node: Any, source: bytes, offsets: Offsets, text: str, target: str) -> list[Site]:
    """The sites of a here-document a shell reads as its script: `bash <<'EOF'`, `sh -s <<EOF` (bash and dash run
    each line of the body; it was read as no command, a `pip install` there unread: thirty-sixth read, cdleft2)."""
    body = node.child_by_field_name("body")
    cmd = command(body, source, offsets) if body is not None and body.type == "command" else None
    if cmd is None or not _reads_script_from_stdin(cmd):
        return []
    out: list[Site] = []
    for redirect, start, body_node in heredocs(node):
        quoted = text_of(start, source)[:1] in ("'", '"', "\\")
        dashed = text_of(redirect, source).startswith("<<-")
        at = offsets.char(body_node.start_byte)
        body_text = text_of(body_node, source)
        out.extend(_heredoc_sites(body_text, at, text, target, quoted=quoted, dashed=dashed))
    return out


def _reads_script_from_stdin(cmd: Command) -> bool:
    """Whether `cmd` is a shell that reads its script from its standard input, run as itself or by a wrapper that
    hands it its own (`sudo bash <<EOF`, `env X=1 sh -s <<EOF`: thirty-seventh read, cdleft; not xargs, whose
    standard input is its list of arguments)."""
    wrapped = unwrap(cmd) if cmd.name != "xargs" else None
    if wrapped is not None:
        return _reads_script_from_stdin(wrapped.inner)
    if cmd.name not in _SHELLS:
        return False
    values = [w.value for w in cmd.args]
    if any(v is None or "c" in v.lstrip("-") and _SHORT_OPTIONS.fullmatch(v) for v in values):
        return False
    # (`bash script.sh <<EOF`: the here-document is the script's input, not the script)
    return all(v and v.startswith("-") for v in values) or any(v and _STDIN_OPTION.fullmatch(v) for v in values)


def _herestring_script(node: Any, cmd: Command, source: bytes, offsets: Offsets, text: str, target: str) -> list[Site]:
    """The sites of a here-string a shell reads as its script: `bash <<< 'pip install ...'` (bash runs the word's
    value and a newline; it was read as no command: thirty-seventh read, cdleft)."""
    strings = [c for c in node.named_children if c.type == "herestring_redirect"]
    if len(strings) != 1 or not _reads_script_from_stdin(cmd):
        return []
    words = strings[0].named_children  # (`3<<< ...`: another descriptor than the standard input, not read)
    return _script_sites(word(words[0], source, offsets), text, target) if len(words) == 1 else []


def _heredoc_sites(body: str, at: int, text: str, target: str, *, quoted: bool, dashed: bool) -> list[Site]:
    """The sites of a here-document's body read as a script, at its characters; reported only where the shell
    changes them before the script's reader sees them (`<<-` strips each line's leading tabs; an unquoted
    delimiter's body has its `\\` escapes read)."""
    found = shell_sites(body, at, text, target)
    if not dashed and (quoted or "\\" not in body):
        return found
    return [replace(site, replacement=None) for site in found]


# `su [options] [-] [user] -c COMMAND`, `runuser -c COMMAND`: the option's value is a script the user's shell runs
# with `-c` (util-linux 2.38; the options read anywhere on the line, `su - root -c '...'`): never read (thirty-sixth
# read, cache2)
_SWITCH_USER = frozenset({"su", "runuser"})
_COMMAND_OPTIONS = frozenset({"-c", "--command", "--session-command"})


def _script_word(cmd: Command) -> Word | None:
    """The word holding the script `cmd` hands a shell: `sh -c SCRIPT`'s, `su -c SCRIPT`'s; None where none."""
    if cmd.name in _SWITCH_USER:
        at = next((i for i, w in enumerate(cmd.args) if w.value in _COMMAND_OPTIONS), None)
        return cmd.args[at + 1] if at is not None and at + 1 < len(cmd.args) else None
    options = [i for i, w in enumerate(cmd.args) if w.value and _SHORT_OPTIONS.fullmatch(w.value) and "c" in w.value]
    if cmd.name not in _SHELLS or not options:
        return None
    # (the first word after the options: an expansion there, `sh -c "$CMD" name`, is no script porter can read)
    return next((w for w in cmd.args[options[0] + 1 :] if not (w.value or "").startswith("-")), None)


def _decoded_script(script: Word, target: str) -> list[Site]:
    """The sites of a script the word holds as bash decodes it (`'it'\\''s; ...'`, `$'...'`, `"$(x "y")"`: never
    read, thirty-sixth read), each at the characters it is written with, reported, never edited (its characters are
    not written as they are)."""
    decoded = script_value(script.raw)
    if decoded is None or not decoded[0]:
        return []
    value, at = decoded
    out = []
    for site in shell_sites(value, 0, value, target):
        first, last = at[min(site.start, len(at) - 1)], at[min(max(site.end - 1, site.start), len(at) - 1)]
        out.append(replace(site, start=script.start + first, end=script.start + last + 1, replacement=None))
    return out


# a double-quoted string's escapes (POSIX: `\` before `$`, `` ` ``, `"`, `\` or a newline), in the string's value
# the character after it (a newline: nothing)
_DOUBLE_QUOTED_ESCAPE = re.compile(r'\\([$`"\\\n])')


def _escapes_masked(script: Word) -> str | None:
    """The script a double-quoted `sh -c "..."` string holds, each escape's `\\` a blank (an escaped newline two):
    its characters at their places in the file, so a site found there is at its place; where an escape moved the
    value's characters, reported, never edited. `sh -c "echo \\"hi\\" && pip install ... --index-url .../cu121"`
    had no value and was not read (thirty-fifth read, cache2)."""
    raw = script.raw
    inner = raw[1:-1]
    if len(raw) < 2 or not (raw.startswith('"') and raw.endswith('"')) or '"' in _DOUBLE_QUOTED_ESCAPE.sub("", inner):
        return None
    return _DOUBLE_QUOTED_ESCAPE.sub(lambda m: "  " if m.group(1) == "\n" else " " + m.group(1), inner)


def _variable_reads(node: Any, source: bytes, offsets: Offsets) -> list[Site]:
    """The variables an expansion (`$CUDA_HOME`, `${CUDA_HOME}`: the whole expansion its span) or a
    declaration (`export CUDA_HOME`, `unset CUDA_HOME`: each name) reads, checked by envvars.read."""
    if node.type in _DECLARATIONS:
        reads = [(child, child) for child in node.named_children if child.type == "variable_name"]
    else:
        name = next((c for c in node.named_children if c.type == "variable_name"), None)
        reads = [(name, node)] if name is not None else []
    out: list[Site] = []
    for name_node, spanned in reads:
        span = (offsets.char(spanned.start_byte), offsets.char(spanned.end_byte))
        site = envvars.read(text_of(name_node, source), span)
        if site is not None:
            out.append(site)
    return out


def _assignment(node: Any, source: bytes, offsets: Offsets, text: str, target: str) -> list[Site]:
    name = node.child_by_field_name("name")
    if name is None or name.type != "variable_name":
        return []
    value = node.child_by_field_name("value")
    name_span = (offsets.char(name.start_byte), offsets.char(name.end_byte))
    if value is None:
        return envvars.assignment(text, target, text_of(name, source), name_span, "", None)
    value_span = (offsets.char(value.start_byte), offsets.char(value.end_byte))
    return envvars.assignment(text, target, text_of(name, source), name_span, literal(value, source), value_span)


def port(text: Text, path: str, settings: Settings) -> list[Site]:
    return shell_sites(text.text, 0, text.text, settings.target, strict=True)
