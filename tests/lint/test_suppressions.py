"""Every suppression form, and `--report-unused-ignores` (PORT100)."""

from __future__ import annotations

from tests.lint.conftest import cli, write


def found(r):
    return sorted((d["start"]["line"], d["code"]) for d in r.json())


def test_each_inline_form_silences_its_line(tmp_path, monkeypatch):
    write(
        tmp_path,
        {
            "s.py": (
                "import torch\n"
                "a = torch.ones(1).cuda()  # porter: ignore[DEV001]\n"
                "b = torch.ones(1).cuda()  # noqa: DEV001\n"
                "c = torch.ones(1).cuda()  # porter: ignore\n"
                "d = torch.ones(1).cuda()  # porter: ignore[DEV]\n"
                "e = torch.ones(1).cuda()  # noqa: E501, DEV001\n"
                "f = torch.ones(1).cuda()  # porter: ignore[CUDA003]\n"
                "g = torch.ones(1).cuda()  # noqa\n"
            )
        },
    )
    monkeypatch.chdir(tmp_path)
    r = cli("lint", "-t", "neuron", "--output-format", "json")
    # the wrong code does not silence; a noqa comment without codes is left to flake8/ruff
    assert found(r) == [(7, "DEV001"), (8, "DEV001")]


def test_file_level_pragmas(tmp_path, monkeypatch):
    write(
        tmp_path,
        {
            "all.py": "# porter: ignore-file\nimport torch\nx = torch.ones(1).cuda()\n",
            "some.py": "# porter: ignore-file[DEV]\nimport torch\nx = torch.ones(1).cuda()\ntorch.cuda.synchronize()\n",
        },
    )
    monkeypatch.chdir(tmp_path)
    assert found(cli("lint", "-t", "neuron", "--output-format", "json")) == [(4, "CUDA003")]


def test_unused_ignores_are_reported_only_when_asked(tmp_path, monkeypatch):
    write(
        tmp_path,
        {
            "u.py": (
                "import torch\n"
                "a = torch.ones(1).cuda()  # porter: ignore[DEV001]\n"  # used
                "b = 1  # porter: ignore[DEV001]\n"  # unused
                "c = torch.ones(1).cuda()  # porter: ignore[DEV001, CUDA003]\n"  # CUDA003 unused
                "d = 2  # noqa: E501\n"  # flake8's: not porter's business
                "e = 3  # noqa: CUDA003\n"  # unused
                "f = 4  # porter: ignore\n"  # unused blanket
                "g = 5  # porter: ignore[ZZZ1]\n"  # unknown code
            )
        },
    )
    monkeypatch.chdir(tmp_path)
    r = cli("lint", "-t", "neuron")
    assert r.exit_code == 0 and "PORT100" not in r.stdout
    r = cli("lint", "-t", "neuron", "--report-unused-ignores", "--output-format", "json")
    assert r.exit_code == 1
    unused = [(d["start"]["line"], d["message"]) for d in r.json() if d["code"] == "PORT100"]
    assert [line for line, _ in unused] == [3, 4, 6, 7, 8]
    msgs = dict(unused)
    assert "DEV001" in msgs[3] and "CUDA003" in msgs[4] and "DEV001" not in msgs[4]
    assert "blanket" in msgs[7] and "unknown rule code ZZZ1" in msgs[8]
    col = next(d for d in r.json() if d["code"] == "PORT100")["start"]["column"]
    assert col == len("b = 1  ")


def test_a_suppression_naming_a_meta_code_says_so_not_unknown_rule(tmp_path, monkeypatch):
    """`# porter: ignore[PORT100]` was "names unknown rule code PORT100", a code `porter rules`
    lists (after the rules) and lint emits (twenty-seventh read)."""
    write(tmp_path, {"m.py": "x = 1  # porter: ignore[PORT100]\ny = 2  # porter: ignore[port001, ZZZ1]\n"})
    monkeypatch.chdir(tmp_path)
    r = cli("lint", "-t", "neuron", "--report-unused-ignores", "--output-format", "json")
    msgs = sorted(d["message"] for d in r.json() if d["code"] == "PORT100")
    assert msgs == [
        "`# porter: ignore` names PORT001, a meta code, not a rule",
        "`# porter: ignore` names PORT100, a meta code, not a rule",
        "`# porter: ignore` names unknown rule code ZZZ1",
    ], msgs


def test_unused_ignore_for_a_rule_not_enabled(tmp_path, monkeypatch):
    write(tmp_path, {"n.py": "import torch\nx = torch.ones(1).cuda()  # porter: ignore[DEV001]\n"})
    monkeypatch.chdir(tmp_path)
    assert cli("lint", "-t", "neuron", "--report-unused-ignores").exit_code == 0
    r = cli("lint", "-t", "neuron", "--report-unused-ignores", "--ignore", "DEV001", "--output-format", "json")
    (d,) = r.json()
    assert d["code"] == "PORT100" and "not enabled" in d["message"]


def test_unused_ignores_github_format(tmp_path, monkeypatch):
    write(tmp_path, {"x.py": "import torch\ny = 1  # porter: ignore[DEV002]\n"})
    monkeypatch.chdir(tmp_path)
    r = cli("lint", ".", "-t", "tpu", "--report-unused-ignores", "--output-format", "github")
    assert r.exit_code == 1
    assert r.stdout.startswith("::warning title=porter (PORT100),file=x.py,line=2,col=8,")


def test_a_malformed_code_list_silences_nothing():
    """`# porter: ignore[X[Y]` (a bracket the code list cannot hold) and `ignore[]` (no code)
    were read as a blanket `# porter: ignore`: a typo silenced every finding on its line."""
    from porter.core.suppressions import scan

    for comment in (b"ignore[X[Y]", b"ignore[]", b"ignore[ , ]", b"ignore[\x1b[2J]", b"ignore-file[]"):
        found = scan(b"x = torch.zeros(1).cuda()  # porter: " + comment + b"\n")
        assert not found and not found.comments, (comment, found)
    assert scan(b"x = 1  # porter: ignore\n").by_line == {1: {"*"}}  # the blanket form, as written
    assert scan(b"x = 1  # porter: ignore[DEV001, PERF]\n").by_line == {1: {"DEV001", "PERF"}}
