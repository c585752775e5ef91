"""The baseline workflow: write it, pass, add a new CUDA call, fail on exactly that one."""

from __future__ import annotations

import json

from tests.lint.conftest import TRAIN, cli, sh, write


def test_baseline_workflow_end_to_end(project):
    write(project, {"model.py": "import torch\nnet = torch.nn.Linear(2, 2).cuda()\n"})
    r = sh("lint", ".", "-t", "neuron", "--write-baseline", ".porter-baseline.json", cwd=project)
    assert r.exit_code == 0, r.stderr
    data = json.loads((project / ".porter-baseline.json").read_text())
    assert data["version"] == 1 and len(data["findings"]) == 4

    # the gate passes on today's findings
    r = sh("lint", ".", "-t", "neuron", "--baseline", ".porter-baseline.json", cwd=project)
    assert r.exit_code == 0, r.stdout + r.stderr
    assert "4 findings already in the baseline" in r.stdout

    # unrelated edits above the old findings do not make them new
    (project / "train.py").write_text("# a header\n\n\nimport os\n" + TRAIN.replace("dev = ", "dev  =  "))
    # ... and a new CUDA call fails on exactly that one
    (project / "model.py").write_text(
        "import torch\n\n\nnet = torch.nn.Linear(2, 2).cuda()\ntorch.cuda.synchronize()\n"
    )
    r = sh("lint", ".", "-t", "neuron", "--baseline", ".porter-baseline.json", "--output-format", "json", cwd=project)
    assert r.exit_code == 1, r.stderr
    new = json.loads(r.stdout)
    assert [(d["path"], d["code"], d["start"]["line"]) for d in new] == [("model.py", "CUDA003", 5)]


def test_a_second_identical_call_is_new(project):
    cli("lint", "-t", "neuron", "--write-baseline", "b.json")
    (project / "train.py").write_text(TRAIN + "torch.cuda.synchronize()\n")
    new = cli("lint", "-t", "neuron", "--baseline", "b.json", "--output-format", "json").json()
    assert [(d["code"], d["start"]["line"]) for d in new] == [("CUDA003", 6)]


def test_fixed_findings_are_counted_as_stale(project):
    cli("lint", "-t", "neuron", "--write-baseline", "b.json")
    (project / "train.py").write_text("import torch\nx = torch.zeros(3).cuda()\n")
    r = cli("lint", "-t", "neuron", "--baseline", "b.json")
    assert r.exit_code == 0
    assert "2 baseline entries no longer found" in r.stdout


def test_a_run_of_some_files_counts_only_their_entries_as_no_longer_found(project):
    """A run of some of the files (as a pre-commit hook passes the changed ones, spelled
    `./train.py`) called every other file's entries "no longer found (fixed since)" and said to
    rewrite the baseline, which, from that run, drops them all (twenty-sixth read). Now only the
    entries of the files the run checked (read, or gone) count."""
    write(project, {"sub/m.py": "import torch\nm = torch.ones(1).cuda()\n"})
    cli("lint", ".", "-t", "neuron", "--write-baseline", "b.json")
    for spelled in ("./train.py", "sub/", "sub/m.py", "./sub/../train.py"):
        r = cli("lint", spelled, "-t", "neuron", "--baseline", "b.json")
        assert r.exit_code == 0 and "no longer found" not in r.stdout, (spelled, r.stdout)
    (project / "train.py").write_text("import torch\nx = torch.zeros(3).cuda()\n")
    r = cli("lint", "train.py", "-t", "neuron", "--baseline", "b.json")
    assert "2 baseline entries no longer found" in r.stdout, r.stdout  # (its own fixed ones)
    r = cli("lint", "sub", "-t", "neuron", "--baseline", "b.json")
    assert "no longer found" not in r.stdout, r.stdout
    (project / "train.py").unlink()
    r = cli("lint", "sub", "-t", "neuron", "--baseline", "b.json")
    assert "3 baseline entries no longer found" in r.stdout, r.stdout  # (a file gone: its entries are)


def test_a_file_whose_name_holds_a_backslash_or_a_byte_not_utf8_is_not_gone_when_left_out(project):
    """A baseline names a file as findings show it (`a\\\\b.py` for `a\\b.py`, `\\xff` for the
    byte 0xFF); a run of some other file looked for that text on disk, found no such file, and
    counted its entries "no longer found (fixed since)" (twenty-sixth term2 read). Looked for by
    its bytes, such a file left out of the run is not gone; once removed, it is."""
    import os

    names = [b"a\\b.py", b"c\\x41.py", b"d\xff.py"]
    for name in names:
        (project / os.fsdecode(name)).write_text("import torch\nm = torch.ones(1).cuda()\n")
    cli("lint", ".", "-t", "neuron", "--write-baseline", "b.json")
    r = cli("lint", "train.py", "-t", "neuron", "--baseline", "b.json")
    assert r.exit_code == 0 and "no longer found" not in r.stdout, r.stdout
    for name in names:
        (project / os.fsdecode(name)).unlink()
    r = cli("lint", "train.py", "-t", "neuron", "--baseline", "b.json")
    assert "baseline entries no longer found" in r.stdout, r.stdout  # (files gone: their entries are)


def test_baseline_works_from_another_directory(project):
    write(project, {"sub/m.py": "import torch\nm = torch.ones(1).cuda()\n"})
    cli("lint", ".", "-t", "neuron", "--write-baseline", "ci/baseline.json")
    import os

    os.chdir(project / "sub")
    r = cli("lint", "..", "-t", "neuron", "--baseline", "../ci/baseline.json")
    assert r.exit_code == 0, r.stdout


def test_a_broken_baseline_is_a_usage_error(project):
    (project / "b.json").write_text("{not json")
    r = cli("lint", "-t", "neuron", "--baseline", "b.json")
    assert r.exit_code == 2 and "b.json" in r.stderr
    (project / "b.json").write_text('{"version": 99, "findings": []}')
    assert cli("lint", "-t", "neuron", "--baseline", "b.json").exit_code == 2


def test_a_baseline_of_another_target_is_a_usage_error(project):
    """A fingerprint names no target: a neuron baseline passed a tpu run whose findings (the same
    codes on the same lines, ported to another device) no one had accepted (seventeenth read)."""
    cli("lint", "-t", "neuron", "--write-baseline", "b.json")
    assert cli("lint", "-t", "neuron", "--baseline", "b.json").exit_code == 0
    r = cli("lint", "-t", "tpu", "--baseline", "b.json")
    assert r.exit_code == 2 and "'neuron', not tpu" in r.stderr, r.stdout + r.stderr
    data = json.loads((project / "b.json").read_text())
    data["target"] = "\x1b[2J" * 30
    (project / "b.json").write_text(json.dumps(data))
    r = cli("lint", "-t", "tpu", "--baseline", "b.json")
    assert r.exit_code == 2 and "another target" in r.stderr and "\x1b" not in r.stderr
    del data["target"]  # a baseline written by hand, without one: as before
    (project / "b.json").write_text(json.dumps(data))
    assert cli("lint", "-t", "tpu", "--baseline", "b.json").exit_code == 0


def test_a_baseline_of_the_other_portable_mode_is_a_usage_error(project):
    """A baseline did not record `--portable`: one made with it passed a run without it (whose
    fixes and advice no one accepted), and the reverse. Recorded and checked like the target."""
    cli("lint", "-t", "neuron", "--portable", "--write-baseline", "p.json")
    cli("lint", "-t", "neuron", "--write-baseline", "b.json")
    assert json.loads((project / "p.json").read_text())["portable"] is True
    assert cli("lint", "-t", "neuron", "--portable", "--baseline", "p.json").exit_code == 0
    assert cli("lint", "-t", "neuron", "--baseline", "b.json").exit_code == 0
    r = cli("lint", "-t", "neuron", "--baseline", "p.json")
    assert r.exit_code == 2 and "recorded with --portable" in r.stderr, r.stdout + r.stderr
    r = cli("lint", "-t", "neuron", "--portable", "--baseline", "b.json")
    assert r.exit_code == 2 and "recorded without --portable" in r.stderr, r.stdout + r.stderr
    data = json.loads((project / "b.json").read_text())
    data["portable"] = "no"
    (project / "b.json").write_text(json.dumps(data))
    r = cli("lint", "-t", "neuron", "--baseline", "b.json")
    assert r.exit_code == 2 and "not true or false" in r.stderr
    del data["portable"]  # a baseline of an older porter, without it: as before
    (project / "b.json").write_text(json.dumps(data))
    assert cli("lint", "-t", "neuron", "--portable", "--baseline", "b.json").exit_code == 0


def test_a_baseline_written_over_a_link_passes_the_next_run(project):
    """`--write-baseline b.json`, b.json a link into another folder (a dangling one, say): the
    file replaces the link (a link of its name is not written through), but its fingerprints
    were made from the link's target's folder, so the next run with `--baseline b.json` found
    every finding new (exit 1) and the baseline's entries "no longer found"; a link loop there
    ended the run in a RuntimeError traceback (twenty-fifth read)."""
    import os

    (project / "ci").mkdir()
    (project / "ci" / "old.json").write_text("{}")
    os.symlink("ci/old.json", project / "b.json")
    os.symlink("ci/gone.json", project / "c.json")
    for name in ("b.json", "c.json"):
        assert cli("lint", "train.py", "-t", "neuron", "--write-baseline", name).exit_code == 0
        assert not os.path.islink(project / name)
        r = cli("lint", "train.py", "-t", "neuron", "--baseline", name)
        assert r.exit_code == 0 and "no longer found" not in r.stdout, (name, r.stdout)
    os.symlink("loop", project / "loop")
    r = cli("lint", "train.py", "-t", "neuron", "--write-baseline", "loop/b.json")
    assert r.exit_code == 2 and "cannot write --write-baseline loop/b.json" in r.stderr, r.stderr


def test_a_file_that_could_not_be_checked_keeps_its_baseline_entries(project):
    """A file porter could not check (a syntax error mid-edit, a file no longer UTF-8) had its
    entries called "no longer found (fixed since)", with "rewrite the baseline", which, from
    that run, dropped them: once the file parsed again they all came back as new (twenty-sixth
    read). They are not counted; the file fails the run as not checked."""
    write(project, {"sub/m.py": "import torch\nm = torch.ones(1).cuda()\n"})
    cli("lint", ".", "-t", "neuron", "--write-baseline", "b.json")
    for broken in (b"import torch\nm = torch.ones(1).cuda(\n", b"\xff\xfe\nimport torch\nm = torch.ones(1).cuda()\n"):
        (project / "sub" / "m.py").write_bytes(broken)
        for run in ((".",), ("sub",), ("sub/m.py",)):
            r = cli("lint", *run, "-t", "neuron", "--baseline", "b.json")
            assert r.exit_code == 1 and "no longer found" not in r.stdout, (broken, run, r.stdout)


def test_a_baseline_entry_whose_file_is_not_text_is_a_usage_error(project):
    """A hand-edited entry whose `file` was a number or a list counted as "no longer found (fixed
    since)" in a run of any other file (twenty-sixth read); it is refused as a broken baseline.
    An entry without `file` (a baseline of an older porter) is still read."""
    write(project, {"sub/m.py": "import torch\nm = torch.ones(1).cuda()\n"})
    cli("lint", ".", "-t", "neuron", "--write-baseline", "b.json")
    data = json.loads((project / "b.json").read_text())
    for bad in (5, ["sub/m.py"], None, {"p": 1}):
        for e in data["findings"]:
            e["file"] = bad
        (project / "b.json").write_text(json.dumps(data))
        r = cli("lint", "sub", "-t", "neuron", "--baseline", "b.json")
        assert r.exit_code == 2 and "`file` is not text" in r.stderr and "no longer found" not in r.stdout, bad
    for e in data["findings"]:
        del e["file"]
    (project / "b.json").write_text(json.dumps(data))
    r = cli("lint", ".", "-t", "neuron", "--baseline", "b.json")
    assert r.exit_code == 0 and "4 findings already in the baseline" in r.stdout, r.stdout + r.stderr


def test_entries_of_a_file_whose_name_is_escaped_are_not_fixed_by_a_run_of_another(project):
    """An entry names its file as every output shows it: a byte that is not UTF-8 as `\\xNN`, a
    backslash doubled. Such a file was "gone" in a run of any other file, and its entries "no
    longer found (fixed since)" (twenty-sixth read)."""
    import os

    names = [os.fsdecode(b"h\xffq.py"), "a\\b.py", 'q "[x].py']
    write(project, {n: "import torch\nw = torch.ones(4).cuda()\n" for n in names})
    cli("lint", ".", "-t", "neuron", "--write-baseline", "b.json")
    r = cli("lint", "train.py", "-t", "neuron", "--baseline", "b.json")
    assert r.exit_code == 0 and "no longer found" not in r.stdout, r.stdout
    (project / names[0]).unlink()  # gone: its entry is
    r = cli("lint", "train.py", "-t", "neuron", "--baseline", "b.json")
    assert "1 baseline entry no longer found" in r.stdout, r.stdout


def test_a_file_named_twice_is_checked_once(project):
    """A file named twice on the command line (`porter lint . train.py`, `train.py ./train.py`,
    its absolute path) was checked twice: each finding reported twice, and against a baseline the
    second copies were "new" (exit 1; twenty-sixth read)."""
    cli("lint", ".", "-t", "neuron", "--write-baseline", "b.json")
    for twice in ((".", "train.py"), ("train.py", "./train.py", str(project / "train.py")), ("train.py", ".")):
        r = cli("lint", *twice, "-t", "neuron", "--baseline", "b.json")
        assert r.exit_code == 0 and "3 findings already in the baseline" in r.stdout, (twice, r.stdout)
        found = cli("lint", *twice, "-t", "neuron", "--output-format", "json").json()
        assert len(found) == 3, (twice, found)


def test_a_baseline_entry_written_by_hand_as_dot_slash_is_its_file_s(project):
    """An entry whose `file` was written by hand as `./train.py` (or `sub//m.py`) never named the
    run's `train.py`: fixed, its entries were never "no longer found" (twenty-sixth read's
    leftover). The `.` and empty steps are read as git reads a pathspec's."""
    write(project, {"sub/m.py": "import torch\nm = torch.ones(1).cuda()\n"})
    cli("lint", ".", "-t", "neuron", "--write-baseline", "b.json")
    data = json.loads((project / "b.json").read_text())
    for entry in data["findings"]:
        entry["file"] = "./train.py" if entry["file"] == "train.py" else "sub//./m.py"
    (project / "b.json").write_text(json.dumps(data))
    (project / "train.py").write_text("import torch\nx = torch.zeros(3).cuda()\n")
    (project / "sub" / "m.py").write_text("m = 1\n")
    r = cli("lint", "train.py", "-t", "neuron", "--baseline", "b.json")
    assert "2 baseline entries no longer found" in r.stdout, r.stdout
    r = cli("lint", "sub/m.py", "-t", "neuron", "--baseline", "b.json")
    assert "1 baseline entry no longer found" in r.stdout, r.stdout


def test_a_problem_met_from_two_given_paths_is_said_once(project):
    """A broken link in a folder named twice (`lint . .`, `lint . sub`, the link named twice) was
    said twice and counted as two files not checked (twenty-sixth read's leftover); ruff 0.17.6
    says it once."""
    (project / "sub").mkdir()
    (project / "sub" / "gone.py").symlink_to(project / "nowhere.py")
    for twice in ((".", "."), (".", "sub"), ("sub/gone.py", "sub/gone.py"), ("sub", "./sub/gone.py")):
        r = sh("lint", *twice, "-t", "neuron", "--no-cache", cwd=project)
        assert r.stderr.count("broken symbolic link") == 1, (twice, r.stderr)
        assert "1 file could not be checked" in r.stdout + r.stderr, (twice, r.stdout, r.stderr)
