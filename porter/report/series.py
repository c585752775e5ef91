"""`porter rewrite --split DIR`: the port as an ordered series of patches a team can review.

One patch per area (a top-level package or folder; a folder with more than `MAX_AREA_HUNKS`
hunks is split by its subfolders) and kind of change (`KINDS`: devices, distributed, AMP,
runtime flags, XLA loop, kernels and CUDA-only code, tests). Each patch is the diff between two
states of the tree, so it applies on top of the ones before it (`git apply`, `patch -p1`), and
the series as a whole makes the same tree as `--diff`.

A change is cut at the blocks of lines `difflib` finds between a file and its port; a block takes
the kind of the rule family of the findings porter applied in it. A block with no finding of its
own takes the kind of the nearest one in the file; an import block (or a function porter adds,
as `--portable`'s device helper) comes with the first change that may need what it adds, or
with the last one when it only removes.
"""

from __future__ import annotations

import ast
import difflib
import json
import os
import re
import textwrap
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from porter.config.ruledata import all_rules
from porter.core.findings import Finding
from porter.report.terminal import diff_text, lines_of, text_of
from porter.report.markdown import _code, _name_cell
from porter.core.textsafe import json_document, path_name, printable
from porter.core.fileflags import refuse_a_flagged_replace
from porter.pipeline.writer import removed_on_error

# (kind, what its patch holds), in series order
KINDS = (
    ("devices", "device placement and torch.cuda APIs"),
    ("distributed", "collectives and process groups"),
    ("amp", "mixed precision"),
    ("runtime", "compile, backend flags, optimizers"),
    ("xla", "the XLA training loop"),
    ("kernels", "kernels, CUDA libraries and CUDA-only code"),
    ("tests", "tests"),
)
_ORDER = {kind: i for i, (kind, _) in enumerate(KINDS)}
# rule family -> kind (a family not listed, e.g. a new one, counts as devices)
FAMILY_KIND = {
    "device": "devices",
    "cuda-api": "devices",
    "accelerator": "devices",
    "target-api": "devices",
    "frameworks": "devices",
    "distributed": "distributed",
    "amp": "amp",
    "backend-flags": "runtime",
    "compile": "runtime",
    "optim": "runtime",
    "perf": "runtime",
    "xla-loop": "xla",
    "xla-params": "xla",
    "xla-autograd": "xla",
    "kernels": "kernels",
    "libraries": "kernels",
    "guards": "kernels",
}
MAX_AREA_HUNKS = 150
_TEST_PARTS = frozenset(("tests", "test", "testing"))
_TEST_NAME = re.compile(r"(test_.*|.*_test|conftest)\.py$")


@dataclass(frozen=True)
class PortedFile:
    """One file of the run: the name a patch gives it, its bytes before and after (equal when
    porter only reported), and its findings."""

    name: str
    original: bytes
    new: bytes
    findings: tuple[Finding, ...]


@dataclass
class Patch:
    number: int
    total: int
    area: str  # "" for files at the top of the tree
    kind: str
    text: str = ""
    files: list[str] = field(default_factory=list)
    hunks: int = 0
    ported: Counter[str] = field(default_factory=Counter)
    manual: Counter[str] = field(default_factory=Counter)

    @property
    def area_label(self) -> str:
        return self.area or "(top level)"

    @property
    def filename(self) -> str:
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", self.area).strip("-") or "top-level"
        return f"{self.number:04d}-{slug}-{self.kind}.patch"


def kind_of(code: str) -> str:
    rule = all_rules().get(code)
    return FAMILY_KIND.get(rule.family, "devices") if rule is not None else "devices"


def is_test_file(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return bool(_TEST_PARTS.intersection(parts[:-1])) or bool(_TEST_NAME.fullmatch(parts[-1]))


@dataclass
class _Block:
    i1: int
    i2: int
    j1: int
    j2: int
    kind: str | None = None
    codes: list[str] = field(default_factory=list)
    group: int = 0  # the difflib block it was cut from


def _blocks(before: list[str], after: list[str]) -> list[_Block]:
    """The changed blocks between two texts; a block that replaces n lines with n lines is cut
    into n one-line blocks (so a line of one kind and the next of another part ways; `plan`
    glues them back where a mix would not parse)."""
    out: list[_Block] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after).get_opcodes():
        if tag == "equal":
            continue
        if tag == "replace" and i2 - i1 == j2 - j1 > 1:
            group = len(out)
            out.extend(_Block(i1 + k, i1 + k + 1, j1 + k, j1 + k + 1, group=group) for k in range(i2 - i1))
        else:
            out.append(_Block(i1, i2, j1, j2, group=len(out)))
    return out


def _glue(blocks: list[_Block], by: str) -> None:
    """One kind for the blocks of a group (`by="group"`) or of the whole file (`by="file"`): the
    earliest kind among them."""
    groups: dict[int, list[_Block]] = defaultdict(list)
    for b in blocks:
        groups[b.group if by == "group" else 0].append(b)
    for members in groups.values():
        kind = min((b.kind or "devices" for b in members), key=_ORDER.__getitem__)
        for b in members:
            b.kind = kind


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def _states_parse(before: list[str], after: list[str], blocks: list[_Block]) -> bool:
    kinds = sorted({_ORDER[b.kind or "devices"] for b in blocks})
    return all(_parses(_state(before, after, blocks, i)) for i in kinds[:-1])


def _imports_only(lines: list[str], defs: bool = False) -> bool:
    """Whether these lines are import statements and nothing else (blank lines allowed), or
    also function definitions (`defs`: `--portable`'s device helper is one)."""
    text = textwrap.dedent("".join(lines))
    if not text.strip():
        return True
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return False
    kinds = (ast.Import, ast.ImportFrom, ast.FunctionDef) if defs else (ast.Import, ast.ImportFrom)
    return all(isinstance(node, kinds) for node in tree.body)


def _classify(
    blocks: list[_Block], before: list[str], after: list[str], findings: tuple[Finding, ...], test: bool
) -> None:
    """Give every block a kind (see the module docstring)."""
    _kinds_from_findings(blocks, findings, test)
    if not test:
        _kinds_from_neighbours(blocks, before, after)


def _kinds_from_findings(blocks: list[_Block], findings: tuple[Finding, ...], test: bool) -> None:
    """A block takes the most common kind of the applied findings on its lines (each finding
    counted once); every block of a test file is of kind "tests"."""
    claimed: set[int] = set()
    for b in blocks:
        first, last = (b.i1 + 1, b.i2) if b.i2 > b.i1 else (b.i1, b.i1 + 1)
        kinds: Counter[str] = Counter()
        for n, f in enumerate(findings):
            if f.applied and n not in claimed and f.start.line <= last and f.end.line >= first:
                claimed.add(n)
                kinds[kind_of(f.code)] += 1
                b.codes.append(f.code)
        if test:
            b.kind = "tests"
        elif kinds:
            b.kind = min(kinds, key=lambda k: (-kinds[k], _ORDER[k]))


def _kinds_from_neighbours(blocks: list[_Block], before: list[str], after: list[str]) -> None:
    """Blocks no finding claimed: imports go with the change that uses (or stopped using) them,
    anything else with the nearest block's kind."""
    # imports, and definitions porter adds (the --portable device helper): what later lines use
    imports = [
        b
        for b in blocks
        if b.kind is None
        and (
            (_imports_only(before[b.i1 : b.i2]) and _imports_only(after[b.j1 : b.j2]))
            or (b.i1 == b.i2 and _imports_only(after[b.j1 : b.j2], defs=True))
        )
    ]
    rest = [b for b in blocks if b.kind is None and b not in imports]
    for b in rest:  # no finding of its own: the nearest block's kind
        near = [o for o in blocks if o.kind is not None and o not in rest and o not in imports]
        b.kind = min(near, key=lambda o: abs(o.i1 - b.i1)).kind if near else "devices"
    kinds_here = sorted({b.kind for b in blocks if b.kind is not None}, key=_ORDER.__getitem__)
    for b in imports:
        if not kinds_here:
            b.kind = "devices"
        elif b.j2 > b.j1:  # it adds names: with the first change that may use them
            b.kind = kinds_here[0]
        else:  # it only removes names the last change stopped using
            b.kind = kinds_here[-1]


def _state(before: list[str], after: list[str], blocks: list[_Block], upto: int) -> str:
    """The file with the blocks of kinds up to `upto` (an index in KINDS) applied."""
    out: list[str] = []
    pos = 0
    for b in blocks:
        out.extend(before[pos : b.i1])
        out.extend(after[b.j1 : b.j2] if _ORDER[b.kind or "devices"] <= upto else before[b.i1 : b.i2])
        pos = b.i2
    out.extend(before[pos:])
    return "".join(out)


def _areas(hunks: dict[str, int], max_hunks: int) -> dict[str, str]:
    """file -> its area: the first folder below the common root; a folder holding more than
    `max_hunks` hunks is split by its own folders (its files directly inside form one area)."""
    out: dict[str, str] = {}

    def assign(paths: list[str], depth: int, prefix: str) -> None:
        groups: dict[str, list[str]] = defaultdict(list)
        for p in paths:
            parts = p.split("/")
            groups[parts[depth] if len(parts) > depth + 1 else ""].append(p)
        for key, members in groups.items():
            area = "/".join(x for x in (prefix, key) if x)
            if key and sum(hunks[m] for m in members) > max_hunks:
                assign(members, depth + 1, area)
            else:
                out.update((m, area) for m in members)

    assign(sorted(hunks), 0, "")
    return out


def _relative(names: list[str]) -> dict[str, str]:
    """Each name below the folder all of them share."""
    folders = [os.path.dirname(n) for n in names]
    common = (
        os.path.commonpath(folders)
        if folders and all(f.startswith("/") == folders[0].startswith("/") for f in folders)
        else ""
    )
    return {n: (n[len(common) + 1 :] if common else n) for n in names}


@dataclass
class Series:
    patches: list[Patch]
    # findings left for a person that no patch holds (in files the series leaves alone, or of
    # a kind the file's area has no patch for)
    elsewhere: Counter[str]


def _hunks(diff: str) -> int:
    return sum(1 for line in diff.split("\n") if line.startswith("@@ "))


def plan(files: list[PortedFile], max_area_hunks: int = MAX_AREA_HUNKS) -> Series:
    """The series for these files (in area order, then kind order)."""
    changed = [f for f in files if f.new != f.original]
    rel = _relative([f.name for f in changed])
    per_file: dict[str, tuple[list[str], list[str], list[_Block]]] = {}
    hunk_counts: dict[str, int] = {}
    for f in changed:
        before, after, blocks = _file_blocks(f, is_test_file(rel[f.name]))
        per_file[f.name] = (before, after, blocks)
        hunk_counts[rel[f.name]] = _hunks(diff_text("".join(before), "".join(after), f.name))
    area_of_rel = _areas(hunk_counts, max_area_hunks)
    area_of = {f.name: area_of_rel[rel[f.name]] for f in changed}

    patches: dict[tuple[str, str], Patch] = {}
    for f in sorted(changed, key=lambda f: (area_of[f.name], f.name)):
        _add_to_patches(patches, f.name, area_of[f.name], *per_file[f.name])
    series = sorted(patches.values(), key=lambda p: (p.area, _ORDER[p.kind]))
    for n, p in enumerate(series, 1):
        p.number, p.total = n, len(series)
    return Series(series, _attribute_manual(files, series, area_of, rel))


def _file_blocks(f: PortedFile, test: bool) -> tuple[list[str], list[str], list[_Block]]:
    """A file's lines before and after, and its changed blocks with their kinds, glued together
    where needed so that every state between two patches is still Python (when the original was)."""
    before, after = lines_of(text_of(f.original)), lines_of(text_of(f.new))
    blocks = _blocks(before, after)
    _classify(blocks, before, after, f.findings, test)
    if _parses("".join(before)):
        for by in ("group", "file"):
            if _states_parse(before, after, blocks):
                break
            _glue(blocks, by)
    return before, after, blocks


def _add_to_patches(
    patches: dict[tuple[str, str], Patch],
    name: str,
    area: str,
    before: list[str],
    after: list[str],
    blocks: list[_Block],
) -> None:
    """One file's share of each kind's patch in its area: the diff from the state before that
    kind to the state with it."""
    for i, (kind, _) in enumerate(KINDS):
        if not any(b.kind == kind for b in blocks):
            continue
        text = diff_text(_state(before, after, blocks, i - 1), _state(before, after, blocks, i), name)
        patch = patches.setdefault((area, kind), Patch(0, 0, area, kind))
        patch.text += text
        patch.files.append(name)
        patch.hunks += _hunks(text)
        for b in blocks:
            if b.kind == kind:
                patch.ported.update(b.codes)


def _attribute_manual(
    files: list[PortedFile], series: list[Patch], area_of: dict[str, str], rel: dict[str, str]
) -> Counter[str]:
    """Findings left for a person go to the patch of their file's area and their kind, when
    there is one; the codes of the others are returned."""
    by_key = {(p.area, p.kind): p for p in series}
    elsewhere: Counter[str] = Counter()
    for f in files:
        area = area_of.get(f.name)
        for finding in f.findings:
            if finding.applied:
                continue
            kind = "tests" if is_test_file(rel.get(f.name, f.name)) else kind_of(finding.code)
            patch = by_key.get((area, kind)) if area is not None else None
            if patch is not None:
                patch.manual[finding.code] += 1
            else:
                elsewhere[finding.code] += 1
    return elsewhere


_WRITTEN = re.compile(r"(\d{4}-.*\.patch|index\.md|index\.json)")


def written_by_porter(name: str) -> bool:
    """Whether a file name is one `write` makes (so `--force` may replace it)."""
    return bool(_WRITTEN.fullmatch(name))


def _codes(counts: Counter[str]) -> str:
    return ", ".join(f"{c}×{n}" if n > 1 else c for c, n in sorted(counts.items())) or "none"


def _header(p: Patch, command: str) -> str:
    title = dict(KINDS)[p.kind]
    return (
        f"{command}: {printable(p.area_label)}, {title} (patch {p.number} of {p.total})\n\n"
        f"{p.hunks} hunk{'s' if p.hunks != 1 else ''} in {len(p.files)} file{'s' if len(p.files) != 1 else ''}. "
        f"Ported: {_codes(p.ported)}. Left for a person: {_codes(p.manual)}.\n"
        "Apply the series in order (git apply, or patch -p1), each on top of the ones before it.\n\n"
    )


def _put(path: Path, data: bytes) -> None:
    """One file of the series, whole or not at all (a temporary beside it, renamed over the
    name: an interrupt leaves no half patch, and a link of that name is replaced, never
    written through)."""
    refuse_a_flagged_replace(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with removed_on_error(tmp):
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, path)


def write(folder: Path, series: Series, command: str, done: list[str] | None = None) -> None:
    """The patches, index.md and index.json under `folder` (which must exist); `done` gets
    each file's name once it is written."""
    done = [] if done is None else done
    for p in series.patches:
        _put(folder / p.filename, (_header(p, command) + p.text).encode("utf-8", "surrogateescape"))
        done.append(p.filename)
    lines = [
        f"# {command}: {len(series.patches)} patches",
        "",
        "Apply them in order, each on top of the ones before it (`git apply 0001-….patch`, then the next); "
        "together they make the same change as `porter rewrite --diff`.",
        "",
        "| # | patch | area | kind | files | hunks | ported | left for a person |",
        "|---:|---|---|---|---:|---:|---|---|",
    ]
    for p in series.patches:
        # an area is a folder's name, a file a path: from the tree, so Markdown text (a newline or
        # `![x](url)` in a folder's name must not become a heading or an image), one line each
        lines.append(
            f"| {p.number} | {p.filename} | {_name_cell(p.area_label)} | {p.kind} | {len(p.files)} | {p.hunks} | "
            f"{_codes(p.ported)} | {_codes(p.manual)} |"
        )
    if series.elsewhere:
        lines += ["", f"Left for a person outside these patches (files they leave alone): {_codes(series.elsewhere)}."]
    lines += ["", "## Files per patch", ""]
    for p in series.patches:
        lines.append(f"- **{p.filename}**: " + ", ".join(_code(path_name(name)) for name in p.files))
    _put(folder / "index.md", ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"))
    done.append("index.md")
    index = {
        "command": command,
        "patches": [
            {
                "number": p.number,
                "file": p.filename,
                # names as every JSON output writes them (`path_name`): a name that is not UTF-8
                # was written as its raw bytes, and index.json was no UTF-8 a reader could load
                # (eighteenth read)
                "area": path_name(p.area),
                "kind": p.kind,
                "files": [path_name(f) for f in p.files],
                "hunks": p.hunks,
                "ported": dict(p.ported),
                "left_for_a_person": dict(p.manual),
            }
            for p in series.patches
        ],
        "left_for_a_person_elsewhere": dict(series.elsewhere),
    }
    _put(
        folder / "index.json",
        (json_document(json.dumps(index, indent=1, ensure_ascii=False)) + "\n").encode("utf-8", "surrogateescape"),
    )
    done.append("index.json")
