"""Which file of the build context a path a Dockerfile's command names is, by the stage's `WORKDIR` and `COPY`.

The Dockerfile reference: a relative `WORKDIR` is relative to the one before it, and after `FROM` the working
folder is the base image's (unknown here); `COPY <src>... <dest>` copies a file to `<dest>`, or into it where
`<dest>` ends with `/` (or is `.`) or there are several sources, and a folder's contents (not the folder) into
`<dest>`; a later `COPY` over the same path wins. Only what is written literally is followed: a variable, a
wildcard, a quote, `--from`, `ADD` (archives, URLs) or an unknown working folder on the way stops it.
"""

from __future__ import annotations

import posixpath
import re

from porter.files.readers.dockerfile_instructions import instructions

_UNFOLLOWED = re.compile(r"[$*?\[\"'\\]")


def context_paths(text: str, line: int, path: str) -> list[str] | None:
    """The context-relative paths (a `COPY` whose source may be a file or a folder: both) of the file that
    `path`, named by a command of the Dockerfile `text` at `line`, is in the image; None where the stage's
    `WORKDIR`s and `COPY`s do not say it literally."""
    workdir: str | None = None  # (after `FROM`: the base image's)
    copies: list[tuple[str | None, str, str]] = []
    for inst in instructions(text):
        if inst.line > line:
            break
        args = text[inst.args[0] : inst.args[1]].strip()
        if inst.keyword == "FROM":
            workdir, copies = None, []
        elif inst.keyword == "WORKDIR":
            workdir = _absolute(workdir, args)
        elif inst.keyword in ("COPY", "ADD"):
            copies.append((workdir, inst.keyword, args))
    container = _absolute(workdir, path)
    if container is None:
        return None
    for workdir_then, keyword, args in reversed(copies):
        found = _copied_from(container, workdir_then, keyword, args)
        if found != [""]:
            return found
    return None  # (in the base image, or written by a command: no file of the context)


# a command of a RUN that changes its working folder before pip reads a path (`RUN cd sub && pip install -c ...`)
_CHANGES_FOLDER = re.compile(r"(?<![\w./$-])(?:cd|pushd)(?=[ \t]|$)", re.MULTILINE)


def reading_runs(text: str, line: int, *, variable: bool) -> list[int] | None:
    """The lines of the RUN instructions whose commands read a path written at `line`: a command's own RUN; for a
    variable an `ENV` or `ARG` sets there, each RUN after it in its stage. None where the working folder of one of
    them is not the stage's `WORKDIR` (a `cd` or `pushd` in it; thirty-sixth read: `RUN cd sub && pip install -c
    pins/x.txt` was followed to pins/x.txt, and sub/pins/x.txt, the file pip reads, took porter's fix) or a later
    stage may inherit the variable."""
    found = [i for i in instructions(text) if i.keyword in ("FROM", "RUN", "ENV", "ARG")]
    at = next((k for k in range(len(found) - 1, -1, -1) if found[k].line <= line), None)
    if at is None or found[at].keyword == "FROM" or (found[at].keyword != "RUN" and not variable):
        return []
    later = [found[at]] if found[at].keyword == "RUN" else found[at + 1 :]
    if any(i.keyword == "FROM" for i in later):
        return None
    runs = [i for i in later if i.keyword == "RUN"]
    for run in runs:
        bodies = [text[run.args[0] : run.args[1]], *(text[a:b] for a, b in run.heredocs)]
        if any(_CHANGES_FOLDER.search(body) for body in bodies):
            return None
    return [run.line for run in runs]


def _absolute(workdir: str | None, path: str) -> str | None:
    if not path or _UNFOLLOWED.search(path):
        return None
    if path.startswith("/"):
        return posixpath.normpath(path)
    return None if workdir is None else posixpath.normpath(posixpath.join(workdir, path))


def _copied_from(container: str, workdir: str | None, keyword: str, args: str) -> list[str] | None:
    """The sources `container` is copied from by this `COPY` (`[""]`: it does not copy to that path; None: it may,
    and porter cannot say from where)."""
    words = args.split()
    flags = [w for w in words if w.startswith("--")]
    paths = words[len(flags) :] if words[: len(flags)] == flags else []
    if len(paths) < 2 or args.startswith("["):
        return None
    *sources, dest = paths
    folder_dest = dest.endswith("/") or dest in (".", "./") or dest.endswith("/.") or len(sources) > 1
    dest_path = _absolute(workdir, dest)
    if dest_path is None:
        return None
    under = container == dest_path or container.startswith(dest_path.rstrip("/") + "/")
    if not under:
        return [""]
    if keyword != "COPY" or any(not f.startswith(("--chown", "--chmod", "--link")) for f in flags):
        return None  # (`ADD`, `COPY --from`, `--parents`, `--exclude`: not the context's file as written)
    if any(_UNFOLLOWED.search(s) or s.startswith("/") for s in sources):
        return None
    rest = posixpath.relpath(container, dest_path)
    out = []
    for source in sources:
        source = posixpath.normpath(source)
        if rest != ".":  # (a folder's contents, or a file copied into a folder `dest`)
            out.append(posixpath.normpath(posixpath.join(source, rest)))
            if folder_dest and "/" not in rest and posixpath.basename(source) == rest:
                out.append(source)
        elif not folder_dest:
            out.append(source)
    return out or None
