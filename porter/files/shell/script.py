"""Shell scripts and Slurm batch files, and any shell text inside another kind of file.

The text is parsed with tree-sitter-bash and walked once: each command goes to
porter.files.shell.commands, each assignment and each expansion of a variable to
porter.files.shell.env, each `#SBATCH` comment to the Slurm check. `shell_sites` is what a
Dockerfile's RUN, a Makefile's recipe and a notebook's `!` line use too.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from porter.config.settings import Settings
from porter.files.errors import Unreadable
from porter.files.shell import commands
from porter.files.shell import env as envvars
from porter.files.shell.parse import Offsets, error_lines, parse
from porter.files.shell.words import command, literal, text_of, word
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
        return commands.sites(cmd, text, target, consumed=consumed) if cmd is not None else []
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
    return []


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
