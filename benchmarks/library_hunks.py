"""Neuron ports of real libraries and frameworks, reviewed hunk by hunk by a person.

    python benchmarks/library_hunks.py port   [--library NAME ...] [--porter CHECKOUT] [--jobs N]
    python benchmarks/library_hunks.py sheet  [--library NAME ...] [--porter CHECKOUT] [-o FILE]
    python benchmarks/library_hunks.py render [--porter CHECKOUT] [--doc FILE] [--notes FILE]
    python benchmarks/library_hunks.py split-check [--library NAME] [--porter CHECKOUT]

The corpus (`library_hunks/corpus.toml`) is pinned releases of libraries that have backends of
their own or build on CUDA-only ecosystems, downloaded from the package index, checked against
their sha256 and unpacked under `$PORTER_BENCH_CACHE` (default `~/.cache/porter-bench`); nothing
is vendored. `port` runs `porter rewrite . --target neuron --diff --report` over each
distribution and keeps the diff in the cache, keyed by a hash of the porter sources that made it
(`--porter` names another checkout, e.g. a branch's worktree), so a second run costs nothing.

The diff is split into hunks; each hunk's id hashes its library, file and text (context and
changes, not its line numbers), so an unchanged hunk keeps its id when lines move. The sample of
a library is the `--sample` (40) hunks of library code whose `seed:id` hash is smallest: a fixed
seed, and a hunk that stays stays in the sample. Verdicts (`library_hunks/verdicts.toml`:
clean / noisy / wrong, a kind and a reason) are written by a person who read each hunk in its
file; this tool never classifies. `sheet` writes the sampled hunks that have no verdict yet,
each with its surrounding original code and porter's findings there, for that review; `render`
writes docs/library-hunks.md (rates per library, the wrong kinds, every sampled hunk with its
verdict) and, with `--notes`, the noisy and wrong hunks grouped by kind as a work list.
`split-check` ports the largest library with `--split`, applies the patches in order with
`git apply` on a copy of the original tree and checks that together they equal `--diff`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

sys.path.insert(0, str(Path(__file__).resolve().parent / "real_programs"))
from fetch import download, porter_revision, unpack  # noqa: E402 - the real programs' cached-download helpers

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DATA = HERE / "library_hunks"
CORPUS = DATA / "corpus.toml"
VERDICTS = DATA / "verdicts.toml"
SPLIT_RECORD = DATA / "split-check.json"  # the last `split-check`, shown in the doc
DOC = REPO / "docs" / "library-hunks.md"
TARGET = "neuron"
SEED = "porter-21"
SAMPLE = 40
VERDICT_NAMES = ("clean", "noisy", "wrong")
# what a noisy or wrong hunk did (the kinds of issue 21), in the order the doc lists them
KINDS = {
    "cuda-only-on": "CUDA-only code switched on for the target",
    "cuda-branch-replaced": "CUDA branch of a multi-backend switch replaced",
    "abstraction-bypassed": "a device hard-coded to the target where the library's own device abstraction answers",
    "vocabulary": "vocabulary that is not a device rewritten",
    "device-choice": "device choice that does not reach the target",
    "silent-leftover": "CUDA left behind without a finding",
    "cuda-only-edited": "CUDA-only code edited (it never runs on the target): noisy when CUDA behaves the same, wrong when not",
    "other": "other",
}
# files that are not library code: the sample leaves them out (they are still ported)
NOT_LIBRARY = (
    "tests/",
    "test/",
    "testing/",
    "test_utils/",
    "examples/",
    "example/",
    "benchmarks/",
    "benchmark/",
    "docs/",
    "test_*.py",
    "*_test.py",
    "conftest.py",
    "testing_utils.py",
)


@dataclass(frozen=True)
class Library:
    name: str
    version: str
    dist: str
    sha256: str
    what: str = ""
    port_exclude: list[str] = field(default_factory=list)
    not_library: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.name}-{self.version}"


@dataclass(frozen=True)
class Hunk:
    library: str
    path: str  # relative to the distribution's root
    old_start: int
    old_len: int
    new_start: int
    body: tuple[str, ...]  # the lines after the @@ header, each with its ' ', '-', '+' or '\\'
    id: str

    @property
    def removed(self) -> list[str]:
        return [line[1:] for line in self.body if line.startswith("-")]

    @property
    def added(self) -> list[str]:
        return [line[1:] for line in self.body if line.startswith("+")]

    @property
    def first_line(self) -> int:
        """The original line of the hunk's first change (its header counts the context too)."""
        line = self.old_start
        for body_line in self.body:
            if body_line[:1] != " ":
                return line
            line += 1
        return self.old_start

    def changes(self) -> str:
        """The changed lines only, with their sign (for a compact view)."""
        return "".join(line for line in self.body if line[:1] in "+-")


def load_corpus(path: Path = CORPUS) -> list[Library]:
    return [Library(**entry) for entry in tomllib.loads(path.read_text())["library"]]


def load_verdicts(path: Path = VERDICTS) -> dict[str, dict]:
    if not path.exists():
        return {}
    table = tomllib.loads(path.read_text()).get("hunk", {})
    for hid, v in table.items():
        if v.get("verdict") not in VERDICT_NAMES:
            raise SystemExit(f"{path}: hunk {hid}: verdict must be one of {', '.join(VERDICT_NAMES)}")
        if v["verdict"] != "clean" and v.get("kind") not in KINDS:
            raise SystemExit(f"{path}: hunk {hid}: a {v['verdict']} hunk needs a kind: {', '.join(KINDS)}")
        if not v.get("reason"):
            raise SystemExit(f"{path}: hunk {hid}: no reason")
    return table


def cache_dir() -> Path:
    return Path(os.environ.get("PORTER_BENCH_CACHE", Path.home() / ".cache" / "porter-bench"))


def source_root(lib: Library) -> Path:
    """The unpacked distribution: a wheel's files, or the one folder an sdist holds."""
    dest = cache_dir() / "library-corpus" / lib.label
    if not (dest / ".ok").exists():
        shutil.rmtree(dest, ignore_errors=True)
        archive = download(lib.name, lib.version, lib.dist, lib.sha256, cache_dir() / "dists")
        unpack(archive, dest)
        (dest / ".ok").write_text(lib.sha256)
    if lib.dist.endswith(".whl"):
        return dest
    (top,) = [p for p in dest.iterdir() if p.is_dir()]
    return top


def porter_key(checkout: Path) -> str:
    """A hash of the porter sources and rules in `checkout`: a port made by the same sources is
    the same port."""
    digest = hashlib.sha256()
    for folder in ("porter", "rules"):
        for p in sorted((checkout / folder).rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc",):
                digest.update(p.relative_to(checkout).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _porter(checkout: Path, args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(checkout), "NO_COLOR": "1"}
    env.pop("PORTER_CACHE_DIR", None)
    return subprocess.run([sys.executable, "-m", "porter", *args], cwd=cwd, env=env, capture_output=True)


@dataclass
class Port:
    library: Library
    root: Path
    diff: str
    report: dict
    meta: dict

    def findings_at(self, path: str, first: int, last: int) -> list[dict]:
        return [f for f in self.findings(path) if f["start"]["line"] <= last and f["end"]["line"] >= first]

    def findings(self, path: str) -> list[dict]:
        for entry in self.report.get("files", []):
            if entry["path"].lstrip("./") == path:
                return entry.get("findings", [])
        return []


def port(lib: Library, checkout: Path, jobs: int, *, quiet: bool = False, key: str | None = None) -> Port:
    """The neuron port of `lib` by the porter in `checkout` (made once per porter version), or
    the one cached under `key` (a port made earlier, by sources since changed)."""
    root = source_root(lib)
    cached_only = key is not None
    key = key or porter_key(checkout)
    where = cache_dir() / "library-hunks" / lib.label / f"{TARGET}-{key}"
    if cached_only and not (where / "meta.json").exists():
        raise SystemExit(f"{lib.label}: no port cached under the key {key} ({where})")
    if not (where / "meta.json").exists():
        where.mkdir(parents=True, exist_ok=True)
        args = [
            "rewrite",
            ".",
            "--target",
            TARGET,
            "--diff",
            "-q",
            "--no-cache",
            "--jobs",
            str(jobs),
            "--file-timeout",  # a loaded machine must not turn a slow file into a failed port
            "600",
            "--report",
            str(where / "report.json"),
        ]
        for pattern in lib.port_exclude:
            args += ["--exclude", pattern]
        revision = porter_revision(checkout)  # before the run: the sources it starts from
        if not quiet:
            print(f"{lib.label}: porting with {revision} ({key}) ...", flush=True)
        cpu = _children_cpu()
        start = time.perf_counter()
        proc = _porter(checkout, args, root)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{lib.label}: porter rewrite failed ({proc.returncode}):\n{proc.stderr.decode()[-3000:]}")
        (where / "diff.patch").write_bytes(proc.stdout)
        meta = {
            "porter": revision,
            "key": key,
            "cpu_s": round(_children_cpu() - cpu, 1),
            "wall_s": round(time.perf_counter() - start, 1),
            "command": command_of(lib, jobs),
        }
        (where / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    diff = (where / "diff.patch").read_bytes().decode("utf-8", "surrogateescape")
    return Port(
        lib, root, diff, json.loads((where / "report.json").read_text()), json.loads((where / "meta.json").read_text())
    )


def command_of(lib: Library, jobs: int) -> str:
    """The port's command as a person would type it in the distribution's folder."""
    excludes = "".join(f" --exclude {shlex.quote(p)}" for p in lib.port_exclude)
    return f"porter rewrite . --target {TARGET} --diff --report FILE.json --no-cache --jobs {jobs}{excludes}"


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def parse_hunks(library: str, diff: str) -> list[Hunk]:
    """Every hunk of a unified diff, sorted by file then line. A hunk ends when its header's
    counts are used up, so a removed line that starts with `-- ` is not a file header."""
    hunks: list[Hunk] = []
    path = ""
    seen: Counter[str] = Counter()
    lines = diff.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith("+++ "):
            name = line[4:].rstrip("\n")
            path = (name[2:] if name.startswith("b/") else name).removeprefix("./")
            continue
        m = _HEADER.match(line)
        if not m:
            continue
        old_len = int(m.group(2)) if m.group(2) is not None else 1
        new_len = int(m.group(4)) if m.group(4) is not None else 1
        body: list[str] = []
        old_left, new_left = old_len, new_len
        while i < len(lines) and (old_left > 0 or new_left > 0 or lines[i].startswith("\\")):
            body_line = lines[i]
            i += 1
            body.append(body_line)
            sign = body_line[:1]
            if sign in (" ", "-"):
                old_left -= 1
            if sign in (" ", "+"):
                new_left -= 1
        text = "".join(body)
        base = hashlib.sha256(f"{library}\0{path}\0{text}".encode("utf-8", "surrogateescape")).hexdigest()
        seen[base] += 1  # the same text twice in a file: the second gets its own id
        hid = hashlib.sha256(f"{base}\0{seen[base]}".encode()).hexdigest()[:12]
        hunks.append(Hunk(library, path, int(m.group(1)), old_len, int(m.group(3)), tuple(body), hid))
    return sorted(hunks, key=lambda h: (h.path, h.old_start))


class LibraryCode:
    """Which paths are library code (for the sample): not tests, examples, docs, benchmarks."""

    def __init__(self, lib: Library) -> None:
        self.spec = pathspec.GitIgnoreSpec.from_lines([*NOT_LIBRARY, *lib.not_library])

    def __call__(self, path: str) -> bool:
        return not self.spec.match_file(path)


def sample(hunks: list[Hunk], size: int = SAMPLE, seed: str = SEED) -> list[Hunk]:
    """The `size` hunks whose seeded hash is smallest, in file order."""
    ranked = sorted(hunks, key=lambda h: hashlib.sha256(f"{seed}:{h.id}".encode()).hexdigest())
    return sorted(ranked[:size], key=lambda h: (h.path, h.old_start))


@dataclass
class LibraryResult:
    port: Port
    hunks: list[Hunk]
    library_hunks: list[Hunk]
    sampled: list[Hunk]

    @property
    def lib(self) -> Library:
        return self.port.library


def evaluate(lib: Library, checkout: Path, jobs: int, size: int, key: str | None = None) -> LibraryResult:
    p = port(lib, checkout, jobs, key=key)
    hunks = parse_hunks(lib.name, p.diff)
    is_library = LibraryCode(lib)
    library_hunks = [h for h in hunks if is_library(h.path)]
    return LibraryResult(p, hunks, library_hunks, sample(library_hunks, size))


def _selected(corpus: list[Library], names: list[str] | None) -> list[Library]:
    if not names:
        return corpus
    unknown = set(names) - {lib.name for lib in corpus}
    if unknown:
        raise SystemExit(f"not in the corpus: {', '.join(sorted(unknown))}")
    return [lib for lib in corpus if lib.name in names]


# ---------------------------------------------------------------- the review sheet


def _original_lines(root: Path, path: str) -> list[str]:
    try:
        return (root / path).read_bytes().decode("utf-8", "replace").splitlines()
    except OSError:
        return []


def _enclosing(lines: list[str], index: int) -> list[tuple[int, str]]:
    """The `def`/`class` lines that enclose line `index` (0-based), outermost first."""
    found: list[tuple[int, str]] = []
    indent = len(lines[index]) - len(lines[index].lstrip()) if index < len(lines) else 0
    for i in range(min(index, len(lines) - 1), -1, -1):
        text = lines[i]
        stripped = text.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        level = len(text) - len(stripped)
        if level < indent and re.match(r"(async\s+def|def|class)\s", stripped):
            found.append((i + 1, text))
            indent = level
        if level == 0 and indent == 0:
            break
    return found[::-1]


def review_entry(result: LibraryResult, h: Hunk, around: int) -> str:
    lines = _original_lines(result.port.root, h.path)
    first, last = h.old_start, h.old_start + max(h.old_len, 1) - 1
    out = [f"### {h.id} · {h.library} · {h.path}:{h.first_line}"]
    for f in result.port.findings_at(h.path, first - 1, last + 1):
        state = "applied" if f.get("applied") else "not applied"
        out.append(f"- {f['code']} at {f['start']['line']} ({state}): {f['message'][:240]}")
    out.append("```diff")
    for n, text in _enclosing(lines, first - 1):
        if n < first - around:
            out.append(f"  {n:5} {text}")
    for n in range(max(1, first - around), first):
        out.append(f"  {n:5} {lines[n - 1]}")
    old_n = first
    for line in h.body:
        sign, text = line[:1], line[1:].rstrip("\n")
        if sign == "\\":
            continue
        if sign == "+":
            out.append(f"+       {text}")
        else:
            out.append(f"{sign} {old_n:5} {text}")
            old_n += 1
    for n in range(old_n, min(len(lines), old_n + around - 1) + 1):
        out.append(f"  {n:5} {lines[n - 1]}")
    out.append("```")
    return "\n".join(out) + "\n"


def write_sheet(results: list[LibraryResult], verdicts: dict[str, dict], out: Path, around: int) -> int:
    parts = [
        "# Hunks to review\n\nEach sampled hunk without a verdict in "
        f"`{VERDICTS.relative_to(REPO)}`, with the original code around it.\n"
    ]
    n = 0
    for r in results:
        todo = [h for h in r.sampled if h.id not in verdicts]
        if not todo:
            continue
        parts.append(f"\n## {r.lib.label}: {len(todo)} to review\n")
        for h in todo:
            parts.append(review_entry(r, h, around))
            n += 1
    out.write_text("\n".join(parts))
    return n


# ---------------------------------------------------------------- the doc and the notes


def _rate(num: int, den: int) -> str:
    return f"{100 * num / den:.0f}%" if den else "–"


def render_doc(results: list[LibraryResult], verdicts: dict[str, dict], size: int) -> str:
    totals: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    rows = []
    for r in results:
        c = Counter(verdicts[h.id]["verdict"] if h.id in verdicts else "unreviewed" for h in r.sampled)
        totals.update(c)
        totals["hunks"] += len(r.hunks)
        totals["library"] += len(r.library_hunks)
        totals["sampled"] += len(r.sampled)
        for h in r.sampled:
            v = verdicts.get(h.id)
            if v and v["verdict"] == "wrong":
                kinds[v["kind"]] += 1
        reviewed = len(r.sampled) - c["unreviewed"]
        rows.append(
            f"| {r.lib.name} {r.lib.version} | {len(r.hunks)} | {len(r.library_hunks)} | {len(r.sampled)} | "
            f"{c['clean']} | {c['noisy']} | {c['wrong']} | {c['unreviewed']} | {_rate(c['clean'], reviewed)} |"
        )
    reviewed = totals["sampled"] - totals["unreviewed"]
    porters = sorted({r.port.meta["porter"] for r in results})
    out = [
        "# Library ports, hunk by hunk",
        "",
        "<!-- generated by `python benchmarks/library_hunks.py render`; verdicts live in "
        "benchmarks/library_hunks/verdicts.toml -->",
        "",
        "porter's neuron port of each library below is split into hunks; a fixed-seed sample of "
        f"{size} hunks of library code per library (all of them where there are fewer) is read by a person, "
        "each hunk in its file, and classified:",
        "",
        "- **clean**: what a careful engineer would write; a maintainer merges it as it is;",
        "- **noisy**: harmless but not what a person would write (an unneeded change, a comment or "
        "message rewritten, a clumsy form);",
        "- **wrong**: breaks CUDA or another backend, switches CUDA-only code on for the target, "
        "rewrites what is not a device, or leaves the target without the device it chose.",
        "",
        "Library code leaves out tests, test utilities, examples, benchmarks and docs "
        f"(`{', '.join(NOT_LIBRARY)}`); those files are ported but not sampled. "
        "The distributions are pinned (`benchmarks/library_hunks/corpus.toml`, sha256), "
        "downloaded and cached, never vendored.",
        "",
        "How a hunk is judged: would the library's maintainers merge it in a change that adds neuron? "
        "So it must keep CUDA and every other backend working.",
        "",
        "- CUDA-only code (a module of Triton, TileLang or CuTe kernels, the dispatch to a compiled CUDA "
        "extension, code for NCCL, NVML, Transformer Engine, FlashInfer, bitsandbytes' CUDA library, CUDA "
        "graphs, a check whose message says CUDA is required) stays byte for byte: an edit that keeps CUDA's "
        "behaviour is noisy, one that changes it or opens the code to the target is wrong.",
        "- A CUDA branch of a multi-backend switch (an accelerator class of a registry, a supported-devices list, "
        "an if/elif ladder over devices, a per-device table) stays; replacing it is wrong, adding a target branch "
        "beside it is clean.",
        "- A string that is not a device (a backend or kernel name in configuration, an enum value, a file-name "
        "prefix, a dict key, an attribute name, error text) is wrong when rewritten; so is a public function's "
        "default device (it is the library's API).",
        "- A device literal where the library has a device abstraction at hand (a device parameter or "
        "attribute in scope, its accelerator or platform object) is wrong when hard-coded to the target; where "
        'nothing is at hand, the target port (`"neuron"`, `.to("neuron")`, `backend="neuron"`) is clean, '
        "as in an application; so is a device-generic spelling (`torch.accelerator.*`) that does the same on CUDA.",
        "",
        f"Ported by: {', '.join(porters)}. Commands: `python benchmarks/library_hunks.py port` "
        "(`porter rewrite . --target neuron --diff`, cached per porter version), `sheet` (the hunks "
        "with no verdict, in context, for the reviewer), `render` (this page). After a change to porter: "
        "`sheet -o /tmp/sheet.md` lists the sampled hunks nobody has judged yet (a hunk porter still writes "
        "the same way keeps its verdict), their verdicts go into `benchmarks/library_hunks/verdicts.toml`, "
        "then `render`.",
        "",
        "| library | hunks | in library code | sampled | clean | noisy | wrong | unreviewed | clean (of reviewed) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        *rows,
        f"| **total** | {totals['hunks']} | {totals['library']} | {totals['sampled']} | {totals['clean']} | "
        f"{totals['noisy']} | {totals['wrong']} | {totals['unreviewed']} | **{_rate(totals['clean'], reviewed)}** |",
        "",
        *_gone(results, verdicts),
        "## Wrong hunks by kind",
        "",
    ]
    if kinds:
        out += ["| kind | wrong hunks |", "|---|---:|"]
        out += [f"| {KINDS[k]} | {kinds[k]} |" for k in KINDS if kinds[k]]
    else:
        out.append("None in the sample.")
    if SPLIT_RECORD.exists():
        rec = json.loads(SPLIT_RECORD.read_text())
        out += [
            "",
            "## `--split` on the largest library",
            "",
            f"`python benchmarks/library_hunks.py split-check` ported {rec['library']} with `porter rewrite . --split DIR` "
            f"({rec['porter']}; the `--diff` by {rec.get('diff_porter', rec['porter'])}): {rec['patches']} patches over "
            f"{rec['areas']} areas, {rec['hunks']} hunks in all "
            f"(the `--diff` has {rec['diff_hunks']}; the largest patch has {rec['largest_patch_hunks']}). Applied in order with "
            f"`git apply` on a copy of the original tree, every patch applied"
            + (
                ", and the tree equals the one the `--diff` output makes."
                if rec["same_tree_as_diff"]
                else ", but the tree DIFFERS from the one the `--diff` output makes."
            ),
        ]
    out += ["", "## The libraries", ""]
    for r in results:
        out += [
            f"- **{r.lib.name} {r.lib.version}** ({r.lib.dist}): {r.lib.what}. "
            f"`{r.port.meta['command']}`; {r.port.meta['cpu_s']} CPU s."
        ]
    for r in results:
        out += ["", f"## {r.lib.name} {r.lib.version}", ""]
        for h in r.sampled:
            v = verdicts.get(h.id)
            verdict = (
                f"**{v['verdict']}**" + (f" ({v['kind']})" if v["verdict"] != "clean" else "")
                if v
                else "**unreviewed**"
            )
            reason = f": {v['reason']}" if v else ""
            out.append(
                f"<details><summary><code>{h.id}</code> {h.path}:{h.first_line} {verdict}{_html(reason)}</summary>"
            )
            out += ["", "```diff", h.changes().rstrip("\n"), "```", "</details>"]
    return "\n".join(out) + "\n"


def _gone(results: list[LibraryResult], verdicts: dict[str, dict]) -> list[str]:
    """A line on the judged hunks this porter does not write (judged on another porter's port:
    after a fix, the hunks it removed)."""
    current = {h.id for r in results for h in r.hunks}
    names = {r.lib.name for r in results}
    gone = Counter(v["verdict"] for hid, v in verdicts.items() if hid not in current and v.get("library") in names)
    if not gone:
        return []
    return [
        f"Verdicts on hunks this porter does not write (judged on another version's port; after a fix, "
        f"the hunks it removed): {gone['wrong']} wrong, {gone['noisy']} noisy, {gone['clean']} clean.",
        "",
    ]


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def render_notes(results: list[LibraryResult], verdicts: dict[str, dict]) -> str:
    by_kind: dict[str, list[tuple[LibraryResult, Hunk, dict]]] = {k: [] for k in KINDS}
    for r in results:
        for h in r.sampled:
            v = verdicts.get(h.id)
            if v and v["verdict"] != "clean":
                by_kind[v["kind"]].append((r, h, v))
    n = sum(len(v) for v in by_kind.values())
    out = [
        "# Issue 21: noisy and wrong hunks of the library corpus, by kind",
        "",
        f"Generated by `python benchmarks/library_hunks.py render --notes` from the verdicts in "
        f"benchmarks/library_hunks/verdicts.toml ({n} hunks). Porter: "
        f"{', '.join(sorted({r.port.meta['porter'] for r in results}))}. Line numbers are the original file's "
        "(the first changed line); the files are under `$PORTER_BENCH_CACHE/library-corpus/<library>-<version>/`.",
        "",
        "To see what another porter makes of the corpus: `python benchmarks/library_hunks.py render --porter "
        "CHECKOUT --doc /tmp/lh.md` (rates with the verdicts that still apply, and the judged hunks it no longer "
        "writes) and `... sheet --porter CHECKOUT -o /tmp/sheet.md` (the sampled hunks nobody has judged yet, in "
        "context). Each library is ported once per porter source state and cached.",
        "",
        "The standard (docs/library-hunks.md says it in full): a hunk is judged as a change the library's "
        "maintainers would merge to add neuron, so it must keep CUDA and every other backend working; where "
        "the library already has a device abstraction at hand (a device parameter, its accelerator or "
        "platform object), a target literal is wrong (`abstraction-bypassed`); where it has none, the "
        "target port of a device choice is clean.",
        "",
    ]
    for kind, items in by_kind.items():
        if not items:
            continue
        out += [f"## {KINDS[kind]} ({len(items)})", ""]
        for _r, h, v in sorted(
            items, key=lambda t: (t[2]["verdict"] != "wrong", t[1].library, t[1].path, t[1].old_start)
        ):
            out.append(f"### {v['verdict']} · {h.library} {h.path}:{h.first_line} · `{h.id}`")
            out += ["", v["reason"], "", "```diff", h.changes().rstrip("\n"), "```"]
            if v.get("better"):
                out += ["", f"A careful engineer: {v['better']}"]
            out.append("")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- split check


def split_check(lib: Library, checkout: Path, jobs: int) -> int:
    """Port `lib` with `--split`, apply the patches in order with `git apply` on a copy of the
    original, and compare the result with the one `--diff` describes. 0 when they agree."""
    full = port(lib, checkout, jobs)
    revision = porter_revision(checkout)  # before the run: the sources it starts from
    with tempfile.TemporaryDirectory(prefix="porter-split-") as tmp:
        series = Path(tmp) / "series"
        args = ["rewrite", ".", "--target", TARGET, "--split", str(series), "-q", "--no-cache", "--jobs", str(jobs)]
        for pattern in lib.port_exclude:
            args += ["--exclude", pattern]
        proc = _porter(checkout, args, full.root)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"porter rewrite --split failed ({proc.returncode}):\n{proc.stderr.decode()[-3000:]}")
        patches = sorted(series.glob("*.patch"))
        by_split = Path(tmp) / "by-split"
        by_diff = Path(tmp) / "by-diff"
        for dest in (by_split, by_diff):
            shutil.copytree(full.root, dest, symlinks=True)
            subprocess.run(["git", "init", "-q"], cwd=dest, check=True)
        for patch in patches:
            applied = subprocess.run(
                ["git", "apply", "--whitespace=nowarn", str(patch)], cwd=by_split, capture_output=True, text=True
            )
            if applied.returncode != 0:
                print(f"{patch.name} does not apply on top of the previous patches:\n{applied.stderr[-2000:]}")
                return 1
        whole = Path(tmp) / "whole.patch"
        whole.write_text(full.diff, encoding="utf-8", errors="surrogateescape")
        applied = subprocess.run(
            ["git", "apply", "--whitespace=nowarn", str(whole)], cwd=by_diff, capture_output=True, text=True
        )
        if applied.returncode != 0:
            print(f"the --diff output does not apply:\n{applied.stderr[-2000:]}")
            return 1
        differ = subprocess.run(
            ["diff", "-rq", "-x", ".git", str(by_split), str(by_diff)], capture_output=True, text=True
        )
        index = json.loads((series / "index.json").read_text())
        record = {
            "library": lib.label,
            "porter": revision,
            "diff_porter": full.meta["porter"],
            "patches": len(patches),
            "hunks": sum(p["hunks"] for p in index["patches"]),
            "diff_hunks": len(parse_hunks(lib.name, full.diff)),
            "largest_patch_hunks": max((p["hunks"] for p in index["patches"]), default=0),
            "areas": len({p["area"] for p in index["patches"]}),
            "applies_in_order": True,
            "same_tree_as_diff": differ.returncode == 0,
        }
        SPLIT_RECORD.write_text(json.dumps(record, indent=1) + "\n")
        print(
            f"{lib.label}: {record['patches']} patches over {record['areas']} areas, {record['hunks']} hunks "
            f"(--diff: {record['diff_hunks']}, largest patch {record['largest_patch_hunks']}); applied in order with "
            f"git apply: {'same tree as --diff' if differ.returncode == 0 else 'DIFFERENT from --diff'}"
        )
        if differ.returncode != 0:
            print(differ.stdout[-3000:])
        return 0 if differ.returncode == 0 else 1


# ---------------------------------------------------------------- command line


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["port", "sheet", "render", "split-check"])
    ap.add_argument("--library", action="append", help="only this library (repeatable; default: the whole corpus)")
    ap.add_argument("--porter", type=Path, default=REPO, help="the porter checkout to run (default: this one)")
    ap.add_argument("--key", help="use the ports cached under this porter key (printed by `port`) instead of porting")
    ap.add_argument("--jobs", type=int, default=1, help="porter's --jobs (default 1: the machine is shared)")
    ap.add_argument("--sample", type=int, default=SAMPLE, help=f"hunks sampled per library (default {SAMPLE})")
    ap.add_argument("--around", type=int, default=8, help="sheet: original lines shown above and below a hunk")
    ap.add_argument("-o", "--output", type=Path, help="sheet: where to write it (default: stdout summary + /tmp file)")
    ap.add_argument("--doc", type=Path, default=DOC, help="render: the page to write")
    ap.add_argument("--notes", type=Path, help="render: also write the noisy and wrong hunks by kind here")
    a = ap.parse_args()
    checkout = a.porter.resolve()
    corpus = load_corpus()
    if a.command == "split-check":
        libs = (
            _selected(corpus, a.library)
            if a.library
            else [max(corpus, key=lambda lib: _python_lines(source_root(lib), lib))]
        )
        return max(split_check(lib, checkout, a.jobs) for lib in libs)
    verdicts = load_verdicts()
    results = [evaluate(lib, checkout, a.jobs, a.sample, a.key) for lib in _selected(corpus, a.library)]
    for r in results:
        done = sum(h.id in verdicts for h in r.sampled)
        print(
            f"{r.lib.label}: {len(r.hunks)} hunks, {len(r.library_hunks)} in library code, "
            f"{len(r.sampled)} sampled, {done} reviewed ({r.port.meta['porter']}, key {r.port.meta['key']}, {r.port.meta['cpu_s']} CPU s)"
        )
    if a.command == "sheet":
        out = a.output or Path(tempfile.gettempdir()) / "library-hunks-sheet.md"
        n = write_sheet(results, verdicts, out, a.around)
        print(f"{n} hunks to review written to {out}")
    elif a.command == "render":
        a.doc.write_text(render_doc(results, verdicts, a.sample))
        print(f"wrote {a.doc}")
        if a.notes:
            a.notes.write_text(render_notes(results, verdicts))
            print(f"wrote {a.notes}")
        stale = set(verdicts) - {h.id for r in results for h in r.hunks}
        if stale and not a.library:
            print(f"{len(stale)} verdicts name hunks no longer in any diff (kept for the record)")
    return 0


def _python_lines(root: Path, lib: Library) -> int:
    spec = pathspec.GitIgnoreSpec.from_lines(lib.port_exclude)
    return sum(
        p.read_bytes().count(b"\n") for p in root.rglob("*.py") if not spec.match_file(p.relative_to(root).as_posix())
    )


if __name__ == "__main__":
    sys.exit(main())
