"""Contract 3 (fourth adversarial read): the work porter does on a file other than Python grows
with the file, not with its square, and what a file repeats is not redone per line. A
200,000-line setup.cfg reached the 60 s per-file limit (a file URI resolved and each
requirement parsed twice per line), a setup.py of 50,000 strings took 55 s (each string's
column found by slicing the rest of the file), and each applied fix was checked against every
earlier one. The tests count the work (no timing); `benchmarks/bench_file_readers.py` gives
the figures."""

from __future__ import annotations

import pathlib
import random
import re

import packaging.requirements
import pytest

from porter.config.settings import Settings
from porter.files.port import port_file
from porter.files.sites import Site, Text, result


def _counting(monkeypatch, owner, name: str) -> list[int]:
    calls = [0]
    original = getattr(owner, name)

    def counted(*args, **kwargs):
        calls[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def test_a_requirement_repeated_on_every_line_is_parsed_and_linked_once(monkeypatch):
    resolved = _counting(monkeypatch, pathlib.Path, "resolve")
    parsed = _counting(monkeypatch, packaging.requirements.Requirement, "__init__")
    source = b"[options]\ninstall_requires =\n" + b"    cupy-cuda12x\n" * 5000
    out = port_file("setup-cfg", source, "setup.cfg", Settings(target="xla"))
    assert len(out.findings) == 5000, out.reason
    # before: a file URI resolved per finding (5,000) and each line parsed twice (10,000)
    assert resolved[0] < 50, resolved
    assert parsed[0] < 50, parsed


class _Measured(str):
    """A str that adds up the characters sliced out of it."""

    sliced = 0

    def __getitem__(self, key):
        piece = str.__getitem__(self, key)
        if isinstance(key, slice):
            _Measured.sliced += len(piece)
        return piece


def test_setup_py_finds_each_strings_column_in_its_own_line():
    from porter.files.deps.setup_py import requirement_sites

    n = 2000
    source = b"from setuptools import setup\nsetup(install_requires=[" + b"'cupy-cuda12x',\n" * n + b"])\n"
    text = Text(source)
    text.text = _Measured(text.text)
    _Measured.sliced = 0
    sites = requirement_sites(text, Settings(target="xla"))
    assert len(sites) == n
    # before: the rest of the file sliced for each string's start and end (~n^2/2 * 16 = 64M)
    assert _Measured.sliced < 20 * len(source), _Measured.sliced


def test_overlapping_fixes_are_found_as_by_comparing_every_pair():
    from porter.files.sites import _overlaps  # before: every applied fix compared with each earlier one

    rng = random.Random(24)
    for _ in range(300):
        taken: tuple[list[int], list[int]] = ([], [])
        pairs: list[tuple[int, int]] = []
        for start in sorted(rng.randrange(60) for _ in range(rng.randrange(1, 12))):
            end = start + rng.choice((0, 0, 1, 2, 5))
            brute = any(start < e and s < end for s, e in pairs)
            assert _overlaps(taken, start, end) == brute, (pairs, start, end)
            if not brute and rng.random() < 0.7:
                pairs.append((start, end))
                taken[0].append(start)
                taken[1].append(max(end, taken[1][-1]) if taken[1] else end)


def test_overlapping_fixes_apply_the_first_only():
    text = Text(b"torch==2.1.0+cu118\n")
    sites = [
        Site("DEP001", 0, 18, "torch==2.1.0"),
        Site("DEP001", 5, 12, "x"),  # inside the first: not applied
        Site("DEP001", 18, 18, "!"),  # touches its end: applied
    ]
    out = result(text, sites, "requirements.txt", Settings(target="xla"))
    assert [f.applied for f in sorted(out.findings, key=lambda f: f.start.column)] == [True, False, True]
    assert out.new_source == b"torch==2.1.0!\n"


def test_gitignore_patterns_match_as_pathspec_does_without_backtracking():
    """A repository chooses the patterns (`.gitignore`, `exclude`, `per-file-ignores`): pathspec's
    regex for `*a*a*a*a*a*a*a*b` backtracks through every placement of every `*` against a name
    of many `a`s (porter ran past 150 s on a 200-character name, before porting anything). The
    linear form matches exactly the paths pathspec's does."""
    import pathspec

    from porter.config.globs import _prefix_stars, spec

    rng = random.Random(2024)
    pieces = ["a", "b", "*", "*", "?", "/", "[ab]", "[!a]", "**/", "\\*", "."]
    for _ in range(3000):
        pattern = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 8)))
        pattern = ("/" if rng.random() < 0.2 else "") + pattern
        if pattern.endswith("**/") or "***" in pattern or _prefix_stars(pattern)[1]:
            # (as git reads them, not pathspec: a folder below; a run of `*` as `**`; a `**` right
            # after the plain prefix starts a part: test_discover_names)
            continue
        try:
            theirs = pathspec.GitIgnoreSpec.from_lines([pattern])
        except Exception:  # noqa: BLE001 - a pattern pathspec refuses: porter reports it elsewhere
            continue
        for p in [
            p for p in theirs.patterns if p.regex is not None
        ]:  # git's `[!a]` never matches a `/` (pathspec's did)
            p.regex = re.compile(p.regex.pattern.replace("[^a]", "[^/a]"))
        ours = spec([pattern])
        for _ in range(20):
            path = "".join(rng.choice("ab/.*") for _ in range(rng.randrange(1, 12))).strip("/") or "a"
            assert ours.match_file(path) == theirs.match_file(path), (pattern, path)
    hostile = spec(["*a" * 12 + "b", "x/**/" + "*a" * 12 + "b"])
    assert hostile.match_file("a" * 250 + ".py") is False
    assert hostile.match_file("x/y/" + "a" * 250) is False
    assert hostile.match_file("q" + "a" * 30 + "b") is True


def test_a_repositorys_gitignore_cannot_stall_the_walk(tmp_path):
    """End to end: a `.gitignore` and an `exclude` of many wildcards, and a long file name."""
    from tests.safety.conftest import porter

    (tmp_path / "t").mkdir()
    (tmp_path / "t" / ".gitignore").write_text("*a" * 40 + "b\n")
    (tmp_path / "t" / "pyproject.toml").write_text('[tool.porter]\nexclude = ["' + "*a" * 40 + 'c"]\n')
    (tmp_path / "t" / ("a" * 200 + ".py")).write_text("import torch\nx = torch.zeros(1).cuda()\n")
    out = porter("lint", "t", "--target", "xla", "--no-cache", cwd=tmp_path, timeout=120)
    assert out.returncode == 1 and b"1 finding" in out.stdout + out.stderr, out.stderr.decode()[-2000:]


def test_literal_patterns_looked_up_by_part_match_as_pathspec_does():
    """`globs.Spec` finds a pattern without wildcards (`name`, `name/`, `/a/b`, `a/**`) or with
    one leading `*` (`*.log`) in a table by a path's parts: the verdict is pathspec's on mixed
    lists of such patterns, negations and wildcard ones, for files, and for folders where no
    negation is among them (which pattern decides for a folder is git's: pathspec counted one
    that names the folder itself as naming a folder above it; test_discover_names)."""
    import pathspec

    from porter.config.globs import spec

    rng = random.Random(36)
    names = ["a", "b", "a.b", ".b", "ab", "*.b", "*b", "*", "a?", "[ab]"]
    for _ in range(1500):
        lines = []
        for _ in range(rng.randrange(1, 6)):
            parts = [rng.choice(names) for _ in range(rng.randrange(1, 3))]
            line = ("!" if rng.random() < 0.25 else "") + ("/" if rng.random() < 0.3 else "") + "/".join(parts)
            line += rng.choice(["", "", "/", "/**"])
            lines.append(line)
        theirs = pathspec.GitIgnoreSpec.from_lines(lines)
        ours = spec(lines)
        for _ in range(20):
            path = "/".join(rng.choice(["a", "b", "a.b", ".b", "ab", "c"]) for _ in range(rng.randrange(1, 5)))
            path += rng.choice(["", "/"])
            if path.endswith("/") and any(line.startswith("!") or line.endswith("/**") for line in lines):
                # (which pattern decides for a folder is git's, and `a/**` names what `a/`
                # holds, not `a/`: test_discover_names)
                continue
            assert ours.match_file(path) == theirs.match_file(path), (lines, path)


def test_a_spec_s_hits_are_each_pattern_s_own_verdict():
    """`Spec.hits` (per-file-ignores' look-up of every pattern at once) gives, for each line,
    what a Spec of that line alone says: on mixed lists of literal, wildcard, folder, anchored
    and negated lines, repeated lines and lines git reads as no pattern."""
    from porter.config.globs import spec

    rng = random.Random(38)
    names = ["a", "b", "a.b", ".b", "ab", "*.b", "*b", "*", "a?", "[ab]", "**", "[[:alpha:]]", "#a", ""]
    for _ in range(1500):
        lines = []
        for _ in range(rng.randrange(1, 7)):
            parts = [rng.choice(names) for _ in range(rng.randrange(1, 3))]
            line = ("!" if rng.random() < 0.2 else "") + ("/" if rng.random() < 0.3 else "") + "/".join(parts)
            lines.append(line + rng.choice(["", "", "/", "/**"]))
        if rng.random() < 0.3:
            lines.append(rng.choice(lines))
        ours = spec(lines)
        alone = [spec((line,)) for line in lines]
        for _ in range(20):
            path = "/".join(rng.choice(["a", "b", "a.b", ".b", "ab", "c"]) for _ in range(rng.randrange(1, 5)))
            path += rng.choice(["", "/"])
            want = {i for i, one in enumerate(alone) if one.match_file(path)}
            assert ours.hits(path) == want, (lines, path)


def test_a_gitignore_of_many_lines_costs_time_linear_in_its_lines(monkeypatch):
    """A `.gitignore` of 200,000 file, folder and extension lines cost a 50-file lint 57 s:
    pathspec compiled a regex per line and matched every one against every file and folder
    (seventeenth read). Literal lines are found in tables by a path's parts; a line with a
    wildcard is read and tried only on a path that holds its text (counted, not timed)."""
    from porter.config import globs
    from porter.config.globs import spec

    lines = [
        f"build_{i}.txt" if i % 4 == 0 else f"*.ext{i}" if i % 4 == 1 else f"dir{i}/" if i % 4 == 2 else f"/sub/f{i}.py"
        for i in range(100_000)
    ]
    tried = _counting(monkeypatch, globs._Wild, "priority")
    read = _counting(monkeypatch, globs._Wild, "_resolve")
    built = spec([*lines, "!keep.py", "*.pyc"])
    hits = [built.match_file(f"pkg/sub{i}/m{i}.py") for i in range(200)]
    assert not any(hits)
    assert built.match_file("a/dir2/x.py") and built.match_file("x/m.ext5") and built.match_file("sub/f3.py")
    assert built.match_file("q.pyc") and not built.match_file("keep.py")
    # (206 paths: every line tried on each was 20,600,000 tries; 2 here, `m.ext5`'s and `q.pyc`'s)
    assert tried[0] < 20 and read[0] < 20, (tried[0], read[0])


def test_a_gitignore_pattern_matches_below_a_folder_whose_name_holds_a_line_break():
    """As git: `m.py` and `m*.py` leave out `a<LF>b/m.py`. pathspec's `(?:.+/)?` does not cross a
    line break, so lint read the file git ignores (eighteenth read)."""
    from porter.config.globs import spec

    for pattern in ("m.py", "m*.py", "*.py", "a?b/", "**/m.py"):
        assert spec([pattern]).match_file("a\nb/m.py"), pattern
    assert not spec(["x/m.py"]).match_file("a\nb/m.py")


def test_a_gitignore_line_git_passes_over_is_passed_over(tmp_path):
    """`!`, a lone `\\` and `[z-a]` are lines git reads as no pattern; pathspec raised on them, and
    every lint of the folder ended in "internal error" (exit 2, nothing checked)."""
    from tests.safety.conftest import CUDA, porter

    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "a.py").write_bytes(CUDA)
    (tmp_path / "t" / "b.py").write_bytes(CUDA)
    for bad in ("!", "\\", "[z-a]"):
        (tmp_path / "t" / ".gitignore").write_text(f"{bad}\nb.py\n")
        out = porter("lint", "t", "--target", "xla", "--no-cache", cwd=tmp_path)
        text = (out.stdout + out.stderr).decode()
        assert out.returncode == 1 and "Found 1 finding" in text and "internal error" not in text, (bad, text)


def test_a_gitignore_of_many_wildcard_lines_costs_each_path_only_the_lines_its_text_can_match(tmp_path, monkeypatch):
    """A `.gitignore` under the 4 MiB porter reads, of 250,000 wildcard lines (`*name*.py`,
    `gen_name_*.py`, `*/name/*.py`, `[abc]name.py`: a generated list), cost a 500-file lint
    more than 300 s (one regex compiled per line, 28 CPU s, then each tried on every file and
    folder); `git ls-files` took 3 s. Each line is now read when a path holds its text, and a
    path tries only the lines whose text it holds; what is left out is git's."""

    rng = random.Random(7)
    forms = ["*{}*.py", "gen_{}_*.py", "*/{}/*.py", "[{}]{}.py"]
    lines = []
    for i in range(250_000):
        word = "".join(rng.choice("abcdefghij") for _ in range(8))
        form = forms[i % 4]
        lines.append(form.format(word[:3], word) if i % 4 == 3 else form.format(word))
    lines += ["*q*.py", "!*qq*.py", "[[:upper:]]?.py"]
    (tmp_path / ".gitignore").write_text("\n".join(lines) + "\n")
    names = [f"d{i}/f{j}.py" for i in range(10) for j in range(10)]
    names += [f"gen_{lines[1][4:12]}_x.py", f"{lines[0][1:9]}.py", "aq.py", "aqq.py", "Xy.py", "x/y.py"]
    names += [f"sub/{lines[2][2:10]}/m.py", f"{lines[3][5:13]}.py"]
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    from porter.config import globs

    tried = _counting(monkeypatch, globs._Wild, "priority")
    read = _counting(monkeypatch, globs._Wild, "_resolve")
    found = _found_as_git_lists(tmp_path)
    assert len(found) == 103, found  # (five left out: three lines' own, `aq.py` and `Xy.py`)
    # (about 120 paths and folders: each line compiled, or tried on each, was 250,000 and 30,000,000)
    assert tried[0] < 1000 and read[0] < 1000, (tried[0], read[0])


@pytest.mark.parametrize(
    "shape", ["one line, again and again", "different lines, one text", "different lines, one text, none matching"]
)
def test_a_gitignore_of_many_wildcard_lines_sharing_one_text_is_not_tried_line_by_line_on_each_path(
    tmp_path, monkeypatch, shape
):
    """200,000 wildcard lines that share their text (`.py`), as a generated list holds: one
    line repeated (each copy was tried on each path holding `.py`; an earlier copy never
    decides, the last that matches does), or different bracket lines (each path sorted all
    200,000 before trying the first: 500 files cost 61 and 33 CPU s; twenty-first read's
    leftover), which no path matches (each compiled and tried on each path: 64.5 CPU s;
    twenty-second read's leftover). What is left out is git's."""
    import itertools
    import string

    from porter.config import globs

    if shape.startswith("one"):
        lines = ["[abc][def]*.py"] * 200_000
    else:
        pairs = itertools.product(string.ascii_lowercase, repeat=4)
        lines = [f"[{a}{b}][{c}{d}]*.py" for a, b, c, d in itertools.islice(pairs, 200_000)]
    (tmp_path / ".gitignore").write_text("\n".join(lines) + "\n")
    for i in range(200):
        (tmp_path / f"p{i % 5}").mkdir(exist_ok=True)
        name = f"{i}_m.py" if shape.endswith("none matching") else f"{'adzq'[i % 4]}{'efxy'[i // 4 % 4]}_{i}.py"
        (tmp_path / f"p{i % 5}" / name).write_text("")
    tried = _counting(monkeypatch, globs._Wild, "priority")
    grouped = _counting(monkeypatch, globs, "_union")
    _found_as_git_lists(tmp_path)
    # a path tries the lines of one group at most, past the groups that cannot match it (each line
    # tried on each of 205 paths and folders: 41,000,000); each group's regex is built once (none
    # matching: each line is still read once, in its group, as git reads each)
    assert tried[0] <= globs._GROUP * 205, tried[0]
    assert grouped[0] <= len(lines) // globs._GROUP + 1, grouped[0]


def test_gitignore_lines_with_a_bracket_naming_a_slash_are_tried_only_on_paths_holding_their_text(
    tmp_path, monkeypatch
):
    """A line whose bracket names a `/` (`gen1[/a]*.py`: anchored, as git reads it) had no
    text to key it, so every such line was tried on every path, in groups: 10,000 of them cost
    a 500-file walk 0.52 CPU s, 50,000 2.9 s, six to eight times as long as brackets without a
    `/` (twenty-fourth read). A path now tries only the lines whose text it holds; what is left
    out is git's."""
    from porter.config import globs

    lines = [f"gen{i}[/a]*.py" if i % 2 else f"[/a]tool{i}_*.py" for i in range(2_000)]
    (tmp_path / ".gitignore").write_text("\n".join(lines) + "\n")
    names = [f"pkg{d}/mod{f}.py" for d in range(5) for f in range(20)]
    names += ["gen7a.py", "pkg1/gen7a.py", "atool8_1.py", "gen7b.py"]
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    searched = _counting(monkeypatch, globs._Group, "may_match")
    tried = _counting(monkeypatch, globs._Wild, "priority")
    found = _found_as_git_lists(tmp_path)
    assert "gen7a.py" not in found and "atool8_1.py" not in found and {"pkg1/gen7a.py", "gen7b.py"} <= set(found)
    # (the 100 files and 5 folders hold no line's text; `gen7a.py` and the others a few lines')
    assert searched[0] == 0 and tried[0] < 40, (searched[0], tried[0])


def test_lines_tried_in_groups_decide_as_each_line_tried_alone(monkeypatch):
    """A long run of wildcard lines is tried in groups of `_GROUP` by one regex (their
    alternation, with what they begin and end with written once), which only skips lines that
    cannot match. Random lines (of every form `_factored` splits or leaves whole, literals,
    negations) and paths: the verdicts and hits with groups of 1, 2 and 3 lines are those of
    no groups, folded or not."""
    from porter.config import globs

    rng = random.Random(23)
    words = ["py", "a", "ab", "gen", "x.y"]
    forms = ["*.{}", "*{}*", "!*{}*", "{}*/", "[ab]{}", "**/{}*", "!{}?", "[!a]{}*", "a\\ {}", "[ab][!c]*.{}", "/{}*"]
    for seed in range(150):
        lines = [rng.choice(forms).format(rng.choice(words)) for _ in range(rng.randint(1, 25))]
        paths = [
            "/".join(rng.choice(["a", "ab.py", "gen", "x.y", "Ab", "b.py", "ca"]) for _ in range(rng.randint(1, 3)))
        ]
        paths += [p + "/" for p in paths]
        for fold in (False, True):
            alone = globs.Spec(lines, fold=fold)
            monkeypatch.setattr(globs, "_GROUP", rng.choice([1, 2, 3]))
            grouped = globs.Spec(lines, fold=fold)
            monkeypatch.undo()
            for path in paths:
                for given in (0, 1):
                    got = (grouped.verdict(path, given), grouped.hits(path))
                    assert got == (alone.verdict(path, given), alone.hits(path)), (seed, lines, path, fold)


def test_a_few_wildcard_lines_found_by_one_search_decide_as_the_lookup_of_each_substring(monkeypatch):
    """Up to `_SEARCHED_KEYS` texts of wildcard lines are found in a path by one regex (a lookup
    of each of a path's substrings cost twice the walk's matching with a common Python
    `.gitignore`); where one text starts another (`.egg`, `.egg-i`) both are found. Random
    lines and paths: the verdicts of both ways agree, folded or not."""
    from porter.config import globs

    rng = random.Random(11)
    words = ["egg", "egg-info", "py", "pyc", "cover", "a", "ab", "abc", "b.c", "x$y"]
    forms = ["*.{}", "*{}*", "!*.{}", "{}*/", "*/{}.*", "[ab]{}", "**/{}*", "!{}?"]
    for seed in range(200):
        lines = [rng.choice(forms).format(rng.choice(words)) for _ in range(rng.randint(1, 12))]
        paths = [
            "/".join(
                "".join(rng.choice("abceg.pyxo-$") for _ in range(rng.randint(1, 9))) for _ in range(rng.randint(1, 3))
            )
            + rng.choice(["", "/"])
            for _ in range(40)
        ]
        for fold in (False, True):
            searched = globs.Spec(lines, fold=fold)
            monkeypatch.setattr(globs, "_SEARCHED_KEYS", 0)
            looked_up = globs.Spec(lines, fold=fold)
            monkeypatch.undo()
            assert searched._key_search is not None and looked_up._key_search is None
            for path in paths:
                assert searched.verdict(path) == looked_up.verdict(path), (seed, lines, path, fold)


class _Touched(dict):
    """A dict that counts the entries each look-up or walk over it touches (`touched[0]`): a
    look-up is one, a walk over it (`for p in d`, `.items()`, `.values()`) one per entry."""

    def __init__(self, touched: list[int]) -> None:
        super().__init__()
        self.touched = touched

    def get(self, key, default=None):
        self.touched[0] += 1
        return super().get(key, default)

    def __getitem__(self, key):
        self.touched[0] += 1
        return super().__getitem__(key)

    def __contains__(self, key):
        self.touched[0] += 1
        return super().__contains__(key)

    def _walked(self, entries):
        for entry in entries:
            self.touched[0] += 1
            yield entry

    def __iter__(self):
        return self._walked(super().__iter__())

    def keys(self):
        return list(self._walked(super().keys()))

    def values(self):
        return list(self._walked(super().values()))

    def items(self):
        return list(self._walked(super().items()))


def test_many_gitignore_files_cost_each_path_only_the_folders_above_it(tmp_path, monkeypatch):
    """Every `.gitignore` read so far was tried (a prefix check) on every path below the walk's
    top: a repository of 24,000 folders, each with a one-line `.gitignore`, cost the walk 51 CPU s
    before any file was ported (eighteenth read). Only the folders above a path are looked up:
    the walk's tables of `.gitignore` files and nested repositories count the entries each path
    touches, a few a path (its folders), not one per folder of the tree (a count, not seconds)."""
    from porter.pipeline import discover

    touched = [0]
    made = discover._Walk.__init__

    def counted(self, *args, **kwargs):
        made(self, *args, **kwargs)
        self.ignores, self.repos = _Touched(touched), _Touched(touched)

    monkeypatch.setattr(discover._Walk, "__init__", counted)
    n = 1_000
    for i in range(n):
        folder = tmp_path / f"d{i:05d}"
        folder.mkdir()
        (folder / ".gitignore").write_text("*.log\nskip.py\n")
        (folder / "m.py").write_text("")
    (tmp_path / "d00007" / "skip.py").write_text("")
    found = list(discover.discover([tmp_path]))
    assert len(found) == n and not any(c.path.name == "skip.py" for c in found)
    # 6 a folder here (its path, its m.py and its .gitignore, each looked up in both tables for
    # the top's prefix and its own); the table walked on each path: about n * n / 2 (506,510 planted)
    assert 0 < touched[0] <= 8 * n, touched[0]


def test_per_file_ignores_patterns_are_compiled_once_a_run(monkeypatch, tmp_path):
    """Each `per-file-ignores` pattern was compiled through a cache of the last 256: a table of
    more was compiled again for every file (20,000 patterns on 31 files: 107 CPU s; eighteenth
    read). Each is compiled once for the run's table; the verdicts are unchanged."""
    from porter.config import globs
    from porter.pipeline import runner

    calls = _counting(monkeypatch, globs, "spec")
    table = tuple((f"gen_{i}.py", ("DEV",)) for i in range(600)) + (("m3.py", ("GUARD",)), ("/abs/*.py", ("CUDA",)))
    settings = Settings(target="xla", per_file_ignores=table)
    picked = [runner.file_settings(settings, tmp_path / f"m{i}.py", f"m{i}.py").ignore for i in range(10)]
    assert picked[3] == ("GUARD",) and all(p == () for i, p in enumerate(picked) if i != 3)
    assert runner.file_settings(settings, tmp_path / "gen_7.py", "gen_7.py").ignore == ("DEV",)
    assert calls[0] <= len(table), calls[0]


def test_per_file_ignores_lookup_does_not_try_every_pattern_on_every_file(tmp_path, monkeypatch):
    """Each `per-file-ignores` pattern was its own Spec, tried on each file: 20,000 patterns of
    names (a generated table, one file each) cost 55 ms a file, 11 CPU s on 200 files
    (nineteenth read's leftover). The patterns are asked at once (`Spec.hits`): a literal one
    is found by the path's parts, whatever the table's size; the verdicts are unchanged."""
    from porter.config import globs
    from porter.pipeline import runner

    table = tuple((f"pkg{i}/sub/mod.py", (f"DEV{i % 900:03d}",)) for i in range(20_000))
    table += (("/abs/*.py", ("CUDA",)), ("!pkg7/**", ("GUARD",)))
    settings = Settings(target="xla", per_file_ignores=table)
    asked = _counting(monkeypatch, globs.Spec, "hits")
    matched = _counting(monkeypatch, globs.Spec, "verdict")
    tried = _counting(monkeypatch, globs._Wild, "priority")
    picked = [runner.file_settings(settings, tmp_path / "x.py", f"pkg{j}/sub/mod.py").ignore for j in range(200)]
    assert picked[7] == ("DEV007",) and picked[8] == ("DEV008", "GUARD"), picked[:9]
    # each file asks the table once or twice (its name, its absolute path), not each pattern: 4,000,000
    assert asked[0] + matched[0] <= 2 * 200 and tried[0] <= 3 * 200, (asked[0], matched[0], tried[0])


def test_a_notebook_whose_code_is_larger_than_porter_parses_says_so():
    """Code cells of more than 2 MiB (100,000 lines of `.cuda()`): the Python port skips them,
    as it skips such a .py file with a note; the notebook said nothing and lint passed it."""
    import json

    from porter.core.findings import FileStatus

    cell = "import torch\n" + "x = torch.zeros(1).cuda()\n" * 90_000
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": cell}]}
    source = json.dumps({**nb, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()
    out = port_file("notebook", source, "n.ipynb", Settings(target="xla", want_source=False))
    assert out.status is FileStatus.SKIPPED and "larger than porter parses" in (out.reason or ""), (
        out.status,
        out.reason,
    )


class _CountedList(list):
    """A list that counts the items read from it, by iteration or by index."""

    reads = 0

    def __iter__(self):
        for item in list.__iter__(self):
            _CountedList.reads += 1
            yield item

    def __getitem__(self, key):
        _CountedList.reads += 1
        return list.__getitem__(self, key)


def test_toml_strings_and_keys_are_placed_in_one_pass(monkeypatch):
    """Each string value was found by a scan of every string token from the file's start, and
    each key by a regex compiled for it: 100,000 keys took the whole per-file limit."""
    import porter.files.configs.toml_config as toml_config
    from porter.files.readers.tomlpos import Locator

    n = 3000
    text = "".join(f'k{i} = "cuda{i % 7}"\n' for i in range(n))
    where = Locator(text)
    where.tokens = _CountedList(where.tokens)
    _CountedList.reads = 0
    at = 0
    for i in range(n):
        token = where.find(f"cuda{i % 7}", after=at)
        assert token is not None and text[token.start : token.end] == f'"cuda{i % 7}"'
        at = token.end
    assert _CountedList.reads < 40 * n, _CountedList.reads  # before: ~n^2/2

    compiled = _counting(monkeypatch, toml_config.re, "compile")
    devices = "".join(f'k{i} = "cuda"\n' for i in range(n)).encode()
    out = port_file("toml", devices, "c.toml", Settings(target="xla", want_source=False))
    assert len(out.findings) == n
    assert compiled[0] < 50, compiled  # before: one regex per key


def test_an_exclude_of_many_patterns_costs_time_linear_in_them(tmp_path, monkeypatch):
    """100,000 `exclude` patterns cost a lint 7.9 CPU s before any file: each was compiled
    through pathspec to check it, translated again for the walk and again for the given files,
    the config's folder resolved once a pattern, and the anchored ones picked out of the whole
    list for every file (eighteenth read's leftover). A pattern of names and `/` is read from
    its text, each line once a process; the verdicts are pathspec's (the literal-pattern test).
    Counted, not timed: each line is read and checked a few times at most, whatever the files."""
    from porter.config import files, globs
    from porter.pipeline.discover import discover
    from porter.pipeline.runner import excluded

    lines = "".join(f'  "gen/f{i}.py",\n  "skip{i}.py",\n' for i in range(50_000))
    # (one anchored pattern: the anchored ones are compiled once a run, not once a file)
    (tmp_path / "porter.toml").write_text(f'exclude = [\n{lines}  "/nowhere/x.py",\n]\n')
    for i in range(40):
        (tmp_path / f"m{i}.py").write_text("")
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "f7.py").write_text("")
    (tmp_path / "skip9.py").write_text("")
    compiled = _counting(monkeypatch, globs, "spec")
    read = _counting(monkeypatch, globs, "_read")
    checked = _counting(monkeypatch, globs, "check")
    matched = _counting(monkeypatch, globs.Spec, "verdict")
    settings = files.resolve([tmp_path], target="xla").settings()
    kept = [c.path.name for c in discover([tmp_path], settings.exclude) if not excluded(settings, c.path)]
    assert sorted(k for k in kept if k.endswith(".py")) == sorted(f"m{i}.py" for i in range(40)), kept
    # 100,000 patterns, 43 files: the anchored ones compiled for each file was 43 Specs, each pattern
    # read for each was 4,300,000 reads (1.5 a pattern here, 1 check; 85 verdicts: file or folder)
    assert compiled[0] <= 2 and matched[0] <= 4 * 43, (compiled[0], matched[0])
    assert read[0] <= 2 * 100_001 and checked[0] <= 100_001, (read[0], checked[0])


def _found_as_git_lists(tmp_path) -> list[str]:
    """What `discover` finds in the new repository at `tmp_path` (checked to be the Python files
    `git ls-files -o --exclude-standard` lists)."""
    import subprocess

    from porter.pipeline.discover import discover

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    listed = subprocess.run(
        ["git", "-c", "core.excludesFile=", "ls-files", "-o", "--exclude-standard", "-z"],
        cwd=tmp_path,
        capture_output=True,
        check=True,
    ).stdout.decode()
    found = sorted(c.path.relative_to(tmp_path).as_posix() for c in discover([tmp_path]) if c.problem is None)
    assert found == sorted(n for n in listed.split("\0") if n.endswith(".py"))
    return found
