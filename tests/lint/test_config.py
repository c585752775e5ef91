"""`[tool.porter]` in pyproject.toml, porter.toml, command-line overrides, `porter config`."""

from __future__ import annotations

import json
import os

import pytest

from tests.lint.conftest import TRAIN, cli, write


def codes(r):
    return sorted({d["code"] for d in r.json()})


def test_pyproject_target_and_ignore(project):
    write(
        project, {"pyproject.toml": '[project]\nname = "x"\n\n[tool.porter]\ntarget = "neuron"\nignore = ["CUDA003"]\n'}
    )
    r = cli("lint", "--output-format", "json")  # no --target: the file gives it
    assert r.exit_code == 1
    assert codes(r) == ["DEV001", "DEV002"]


def test_porter_toml_wins_over_pyproject_in_the_same_folder(project):
    write(
        project,
        {
            "pyproject.toml": '[tool.porter]\ntarget = "tpu"\nselect = ["DEV001"]\n',
            "porter.toml": 'target = "neuron"\nselect = ["CUDA"]\n',
        },
    )
    assert codes(cli("lint", "--output-format", "json")) == ["CUDA003"]


def test_config_is_found_upward_from_the_first_path(project):
    write(
        project,
        {
            "porter.toml": 'target = "xla"\nselect = ["DEV001"]\n',
            "src/deep/m.py": "import torch\nm = torch.ones(1).cuda()\n",
        },
    )
    r = cli("lint", "src/deep", "--output-format", "json")
    assert [d["target"] for d in r.json()] == ["xla"] and codes(r) == ["DEV001"]


def test_pyproject_without_a_porter_table_is_passed_over(tmp_path, monkeypatch):
    write(
        tmp_path,
        {
            "porter.toml": 'target = "neuron"\n',
            "sub/pyproject.toml": '[project]\nname = "s"\n',
            "sub/t.py": "import torch\nt = torch.ones(1).cuda()\n",
        },
    )
    monkeypatch.chdir(tmp_path / "sub")
    assert cli("lint", "--output-format", "json").json()[0]["target"] == "neuron"


def test_command_line_overrides_the_file(project):
    write(project, {"porter.toml": 'target = "tpu"\nselect = ["DEV001"]\nfail-on = "error"\n'})
    r = cli("lint", "-t", "neuron", "--select", "CUDA003", "--output-format", "json")
    assert codes(r) == ["CUDA003"] and r.json()[0]["target"] == "neuron"
    # --ignore adds to the file's list; --extend-select adds rules
    assert codes(cli("lint", "--select", "DEV,CUDA", "--ignore", "DEV002", "--output-format", "json")) == [
        "CUDA003",
        "DEV001",
    ]


def test_fail_on_from_the_file(tmp_path, monkeypatch):
    write(
        tmp_path,
        {
            "porter.toml": 'target = "neuron"\nfail-on = "error"\n',
            "f.py": "import torch\ntorch.backends.cudnn.benchmark = True\n",
        },
    )
    monkeypatch.chdir(tmp_path)
    assert cli("lint").exit_code == 0
    assert cli("lint", "--fail-on", "info").exit_code == 1


def test_per_file_ignores(project):
    write(
        project,
        {
            "porter.toml": 'target = "neuron"\n[per-file-ignores]\n"tests/*.py" = ["DEV"]\n"bench_*.py" = ["CUDA003"]\n',
            "tests/test_a.py": "import torch\nt = torch.ones(1).cuda()\ntorch.cuda.synchronize()\n",
            "tools/bench_x.py": "import torch\ntorch.cuda.synchronize()\n",
        },
    )
    data = cli("lint", "--output-format", "json").json()
    by_file = {}
    for d in data:
        by_file.setdefault(d["path"], set()).add(d["code"])
    assert by_file["tests/test_a.py"] == {"CUDA003"}  # DEV ignored there
    assert "tools/bench_x.py" not in by_file  # its only finding is ignored
    assert by_file["train.py"] == {"DEV001", "DEV002", "CUDA003"}
    # anchored at the config's folder, whatever the working directory
    data = cli("lint", "tests", "--output-format", "json").json()
    assert {d["code"] for d in data} == {"CUDA003"}


def test_exclude_from_the_file_is_relative_to_it(project):
    write(
        project,
        {
            "porter.toml": 'target = "neuron"\nexclude = ["legacy/old/", "*_gen.py"]\n',
            "legacy/old/a.py": "import torch\na = torch.ones(1).cuda()\n",
            "b_gen.py": "import torch\nb = torch.ones(1).cuda()\n",
            "legacy/keep.py": "import torch\nk = torch.ones(1).cuda()\n",
        },
    )
    paths = {d["path"] for d in cli("lint", "--output-format", "json").json()}
    assert paths == {"train.py", "legacy/keep.py"}
    # also when the file is given by name (as pre-commit does)
    assert cli("lint", "legacy/old/a.py").exit_code == 0


@pytest.mark.parametrize(
    "toml, needle",
    [
        ('target = "neuron"\nslect = ["DEV"]\n', "unknown key `slect` (did you mean `select`?)"),
        ('target = "cuda"\n', "`target` = 'cuda'"),
        ('target = "neuron"\nselect = "DEV"\n', "`select` must be a list"),
        ('target = "neuron"\nignore = ["XYZ9"]\n', "`ignore`: unknown rule code or prefix XYZ9"),
        ('target = "neuron"\nfail-on = "fatal"\n', "`fail-on` = 'fatal'"),
        ('target = "neuron"\nper-file-ignores = ["x"]\n', "`per-file-ignores` must be a table"),
        ('target = "neuron"\n[per-file-ignores]\n"t/*" = ["NOPE1"]\n', 'per-file-ignores."t/*"'),
        ("target = \n", "not valid TOML"),
    ],
)
def test_bad_config_names_the_key_and_exits_2(project, toml, needle):
    write(project, {"porter.toml": toml})
    r = cli("lint")
    assert r.exit_code == 2
    flat = " ".join(r.stderr.split())
    assert needle in flat and "porter.toml" in flat


@pytest.mark.parametrize(
    "args, says",
    [
        (["--ignore", "PORT100"], "--ignore PORT100: meta code, not a rule"),
        (["--extend-select", "port001"], "--extend-select PORT001: meta code, not a rule"),
        (["--select", "PORT"], "`porter explain PORT001` and `porter explain PORT100` say"),
        (["--select", "XYZ9"], "unknown rule code or prefix: XYZ9 (see `porter rules`)"),
    ],
)
def test_a_meta_code_in_a_rule_option_is_said_as_one_not_an_unknown_rule(project, args, says):
    """`porter rules` lists PORT001 and PORT100 after the rules; `--ignore PORT100` said "unknown
    rule code or prefix: PORT100 (see `porter rules`)", a list that holds it (twenty-seventh read)."""
    r = cli("lint", "-t", "neuron", *args)
    flat = " ".join(r.stderr.split())
    assert r.exit_code == 2 and says in flat, flat
    if args[1] != "XYZ9":
        assert "unknown rule code" not in flat and "explain PORT" in flat
    write(project, {"porter.toml": 'target = "neuron"\nignore = ["PORT100"]\n'})
    flat = " ".join(cli("lint").stderr.split())
    assert "porter.toml: `ignore`: PORT100: meta code, not a rule" in flat, flat


def test_bad_pyproject_key_is_named_with_its_table(project):
    write(project, {"pyproject.toml": '[tool.porter]\ntarget = "neuron"\nfail_on = "error"\n'})
    r = cli("lint")
    assert r.exit_code == 2 and "`tool.porter.fail_on`" in r.stderr and "fail-on" in r.stderr


def test_explicit_config_and_isolated(project):
    write(
        project,
        {
            "porter.toml": 'target = "neuron"\nselect = ["DEV001"]\n',
            "ci/porter-ci.toml": 'target = "neuron"\nselect = ["CUDA"]\n',
        },
    )
    assert codes(cli("lint", "--config", "ci/porter-ci.toml", "--output-format", "json")) == ["CUDA003"]
    assert cli("lint", "--isolated").exit_code == 2  # no target without the file
    assert cli("lint", "--config", "nope.toml").exit_code == 2


def test_porter_config_prints_values_and_sources(project):
    write(project, {"pyproject.toml": '[tool.porter]\ntarget = "tpu"\nignore = ["CUDA003"]\n'})
    r = cli("config", "--ignore", "DEV002", "--fail-on", "warning", "--output-format", "json")
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)
    s = data["settings"]
    assert data["config_file"].endswith("pyproject.toml")
    assert s["target"]["value"] == "tpu" and s["target"]["source"].endswith("pyproject.toml [tool.porter]")
    assert s["ignore"]["value"] == ["CUDA003", "DEV002"] and s["ignore"]["source"].endswith("+ command line")
    assert s["fail-on"] == {"value": "warning", "source": "command line"}
    assert s["select"] == {"value": [], "source": "default"}
    text = cli("config")
    assert text.exit_code == 0
    assert (
        "target" in text.stdout
        and "tpu" in text.stdout
        and "pyproject.toml" in text.stdout
        and "default" in text.stdout
    )


def test_porter_config_reports_bad_files(project):
    write(project, {"porter.toml": 'targte = "tpu"\n'})
    r = cli("config")
    assert r.exit_code == 2 and "targte" in r.stderr


# -- portable ------------------------------------------------------------------------------

PICK = 'import torch\n\ndev = "cuda" if torch.cuda.is_available() else "cpu"\n'
PORTABLE_LINE = "torch.accelerator.current_accelerator().type if torch.accelerator.is_available()"


def _diff(*args: str) -> str:
    r = cli("lint", "--diff", *args)
    assert r.exit_code == 1, r.stderr
    return r.stdout


def test_portable_from_the_file_and_the_flag_overrides_it_both_ways(project):
    write(project, {"pick.py": PICK, "porter.toml": 'target = "neuron"\nportable = true\n'})
    assert PORTABLE_LINE in _diff()
    plain = _diff("--no-portable")
    assert PORTABLE_LINE not in plain and '"neuron" if torch.accelerator.is_available()' in plain
    write(project, {"porter.toml": 'target = "neuron"\nportable = false\n'})
    assert PORTABLE_LINE not in _diff() and PORTABLE_LINE in _diff("--portable")


def test_portable_in_pyproject_reaches_rewrite_and_its_report(project):
    write(project, {"pick.py": PICK, "pyproject.toml": '[tool.porter]\ntarget = "tpu"\nportable = true\n'})
    r = cli("rewrite", ".", "--diff", "-q", "--report", "port.json")
    assert r.exit_code == 1 and PORTABLE_LINE in r.stdout
    assert json.loads((project / "port.json").read_text())["settings"]["portable"] is True
    r = cli("rewrite", ".", "--diff", "-q", "--no-portable")
    assert r.exit_code == 1 and PORTABLE_LINE not in r.stdout


def test_porter_config_shows_portable_and_its_source(project):
    write(project, {"porter.toml": 'target = "tpu"\nportable = true\n'})
    s = json.loads(cli("config", "--output-format", "json").stdout)["settings"]
    assert s["portable"]["value"] is True and s["portable"]["source"].endswith("porter.toml")
    s = json.loads(cli("config", "--no-portable", "--output-format", "json").stdout)["settings"]
    assert s["portable"] == {"value": False, "source": "command line"}
    text = cli("config").stdout
    row = next(line for line in text.splitlines() if "portable" in line)
    assert "true" in row and "porter.toml" in row


@pytest.mark.parametrize(
    "toml, args, needle",
    [
        ('target = "neuron"\nportable = "yes"\n', (), "`portable` = 'yes': true or false"),
        ('target = "xla"\nportable = true\n', (), "`portable = true` works through torch.accelerator, which xla"),
        ('target = "neuron"\nportable = true\n', ("--target", "xla"), "--no-portable"),
    ],
)
def test_bad_portable_is_named(project, toml, args, needle):
    write(project, {"porter.toml": toml})
    r = cli("lint", *args)
    flat = " ".join(r.stderr.split())
    assert r.exit_code == 2 and needle in flat and "porter.toml" in flat


def test_no_portable_lets_an_xla_run_through(project):
    write(project, {"porter.toml": 'target = "neuron"\nportable = true\n'})
    assert cli("lint", "--target", "xla", "--no-portable", "--output-format", "json").exit_code == 1


@pytest.mark.parametrize("folder", ["p[1]", "p*", "p?", "a\\b", "p[!x]"])
def test_patterns_are_anchored_to_a_folder_whose_name_holds_glob_characters(tmp_path, folder):
    """A config's anchored patterns begin with its folder's path, which was pasted in as a
    pattern: in `p[1]/` they named `p1/`, so its `per-file-ignores` and anchored `exclude`
    never applied (and `p*/` reached sibling folders). The folder's path is escaped."""
    from porter.config import files
    from porter.pipeline.runner import excluded, file_settings

    root = tmp_path / folder
    (root / "gen").mkdir(parents=True)
    (root / "porter.toml").write_text(
        'target = "neuron"\nexclude = ["gen/x.py"]\n[per-file-ignores]\n"/b.py" = ["DEV"]\n"sub/c.py" = ["CUDA"]\n'
    )
    settings = files.resolve([root]).settings()
    assert excluded(settings, root / "gen" / "x.py")
    assert not excluded(settings, root / "gen" / "y.py")
    assert file_settings(settings, root / "b.py", "b.py").ignore == ("DEV",)
    assert file_settings(settings, root / "sub" / "c.py", "sub/c.py").ignore == ("CUDA",)
    sibling = tmp_path / "pz"
    sibling.mkdir()
    assert file_settings(settings, sibling / "b.py", "b.py").ignore == ()


def test_a_negated_exclude_pattern_keeps_its_file(project):
    """`exclude = ["gen/*", "!gen/keep.py"]` leaves out gen/ but keeps gen/keep.py, as in a
    `.gitignore`: the anchoring put the folder's path before the `!` (a pattern for a folder
    named `!gen`), and the negation was not among the anchored patterns given files are
    matched against."""
    write(
        project,
        {
            "porter.toml": 'target = "neuron"\nexclude = ["gen/*", "!gen/keep.py"]\n',
            "gen/a.py": "import torch\na = torch.ones(1).cuda()\n",
            "gen/keep.py": "import torch\nk = torch.ones(1).cuda()\n",
        },
    )
    paths = {d["path"] for d in cli("lint", "--output-format", "json").json()}
    assert paths == {"train.py", "gen/keep.py"}


def test_a_negated_per_file_ignores_pattern_applies_where_it_does_not_match(project):
    """As in ruff, `"!tests/**" = ["DEV"]` ignores DEV everywhere but under tests/. Alone in
    a gitignore-style list a negation matches nothing: the codes were ignored nowhere, and
    nothing said so."""
    write(
        project,
        {
            "porter.toml": 'target = "neuron"\n[per-file-ignores]\n"!tests/**" = ["DEV"]\n"!*.py" = ["CUDA"]\n',
            "tests/test_a.py": "import torch\nt = torch.ones(1).cuda()\n",
        },
    )
    by_file: dict = {}
    for d in cli("lint", "--output-format", "json").json():
        by_file.setdefault(d["path"], set()).add(d["code"][:3])
    assert by_file == {"tests/test_a.py": {"DEV"}, "train.py": {"CUD"}}


def _git_lists(root, lines, files):
    """What `git ls-files -o --exclude-standard` lists of `files` where `lines` is a
    `.gitignore` at `root`'s top (a copy of the tree in `root`)."""
    import subprocess

    write(root, {name: "x = 1\n" for name in files})
    (root / ".gitignore").write_text("\n".join(lines) + "\n")
    env = {"PATH": os.environ["PATH"], "HOME": str(root), "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q", str(root)], env=env, check=True)
    out = subprocess.run(
        ["git", "ls-files", "-o", "--exclude-standard", "-z"], cwd=root, env=env, capture_output=True, check=True
    )
    return {n for n in out.stdout.decode().split("\0") if n.endswith(".py")}


@pytest.mark.parametrize(
    "patterns, left_out",
    [
        (["tests/fixtures/*", "!conftest.py"], {"tests/fixtures/data.py"}),
        (["*_pb2.py", "!proto/keep_pb2.py"], {"proto/a_pb2.py"}),
        (["vendor/generated/", "!vendor/generated/g.py"], {"vendor/generated/g.py"}),
        (["*/*/*", "!**"], set()),
    ],
)
def test_exclude_patterns_decide_in_their_order_as_git_reads_them(project, tmp_path_factory, patterns, left_out):
    """A config's `exclude` is a `.gitignore` at its folder: the last pattern that matches a
    path decides, and a folder left out is not entered. Its anchored patterns (those with a
    `/`) were matched apart from the others, after the walk, against each file's real path,
    so a later negation of the others never kept a file (`tests/fixtures/*` then `!conftest.py`)
    and a negation among them kept a file below a folder left out (`vendor/generated/` then
    `!vendor/generated/g.py`). Compared with `git ls-files -o --exclude-standard` over the
    same tree, with `patterns` as its `.gitignore`; and from a folder below (`porter lint
    tests`), where an anchored pattern is matched from that folder, or from the config's where
    its path there begins with a wildcard (`*/*/*`)."""
    files = ["tests/fixtures/conftest.py", "tests/fixtures/data.py", "proto/keep_pb2.py", "proto/a_pb2.py"]
    files += ["gen/keep.py", "gen/a.py", "vendor/generated/g.py", "vendor/v.py"]
    write(project, {name: TRAIN for name in files})
    write(project, {"porter.toml": f'target = "neuron"\nexclude = {json.dumps(patterns)}\n'})
    kept = set(files) - left_out
    assert _git_lists(tmp_path_factory.mktemp("git"), patterns, files) == kept
    assert {d["path"] for d in cli("lint", "--output-format", "json").json()} - {"train.py"} == kept
    below = {d["path"] for d in cli("lint", "tests", "--output-format", "json").json()}
    assert below == {name for name in kept if name.startswith("tests/")}


def test_command_line_excludes_walked_from_the_config_s_folder_stay_the_walk_s(project):
    """Where a walk below the config's folder matches the patterns from that folder (an anchored
    pattern that begins with a wildcard), the command line's patterns with a `/` are still
    the walked folder's: `porter lint tests --exclude fixtures/*.py` leaves out
    `tests/fixtures/data.py`."""
    files = ["tests/fixtures/data.py", "tests/fixtures/sub/b.py", "tests/t.py"]
    write(project, {name: TRAIN for name in files})
    write(project, {"porter.toml": 'target = "neuron"\nexclude = ["*/sub/*", "!**/b.py"]\n'})
    found = {d["path"] for d in cli("lint", "tests", "--exclude", "fixtures/*.py", "--output-format", "json").json()}
    assert found == {"tests/fixtures/sub/b.py", "tests/t.py"}


def test_a_command_line_pattern_from_the_top_does_not_keep_a_walk_below_from_the_config_s_folder(
    project, tmp_path_factory
):
    """`porter lint a --exclude /tests/` beside a config pattern whose path begins with a wildcard
    (`*/gen/*`): the command line's `/tests/` (the walked folder's, `a/tests/`) was taken for a
    config pattern that no folder above holds, so the walk matched from `a` and `*/gen/*` was
    matched apart from the others, after them, against each file's real path: the config's
    later `!a/gen/keep.py` no longer kept the file (the twenty-second read's leftover). Compared
    with `git ls-files -o --exclude-standard` over the same tree, the config's patterns and
    `/a/tests/` as its `.gitignore`."""
    files = ["a/gen/keep.py", "a/gen/g.py", "a/tests/t.py", "a/m.py"]
    patterns = ["*/gen/*", "!a/gen/keep.py"]
    write(project, {name: TRAIN for name in files})
    write(project, {"porter.toml": f'target = "neuron"\nexclude = {json.dumps(patterns)}\n'})
    kept = _git_lists(tmp_path_factory.mktemp("git"), [*patterns, "/a/tests/"], files)
    assert kept == {"a/gen/keep.py", "a/m.py"}
    found = {d["path"] for d in cli("lint", "a", "--exclude", "/tests/", "--output-format", "json").json()}
    assert found == kept


@pytest.mark.parametrize("option", ["--select", "--ignore", "--extend-select"])
@pytest.mark.parametrize("value", ["", "DEV001,", " , "])
def test_an_empty_rule_code_is_a_usage_error_not_the_default(project, option, value):
    # `--select "$RULES"` with RULES unset ran every rule (`--ignore ""` none), read as not given;
    # ruff refuses an empty selector (twenty-fifth read)
    r = cli("lint", ".", "-t", "neuron", option, value, "--output-format", "json")
    assert r.exit_code == 2 and f"{option} {value!r}: an empty rule code" in r.stderr, (r.exit_code, r.stderr)
    assert r.stdout == ""


def test_an_empty_exclude_is_a_pattern_that_matches_nothing(project):
    # as in ruff: gitignore reads an empty line as no pattern (twenty-fifth read)
    r = cli("lint", ".", "-t", "neuron", "--exclude", "", "--output-format", "json")
    assert codes(r) == ["CUDA003", "DEV001", "DEV002"]
