"""The thirty-fifth read's second wave on the dependency leftovers (cache2): what this read's cache and cdleft helpers
left, each read against the tool that runs it (pip 23.2.1's `-c`, POSIX `sh -c` and double quotes, a workflow's
`run:` script, PyYAML as the oracle of an edit, the Dockerfile reference's `WORKDIR` and `COPY`)."""

from __future__ import annotations

import pytest
import yaml

from tests.safety.test_thirty_third_read_cache2 import _run

_CU121 = "https://download.pytorch.org/whl/cu121"
_WORKFLOW = "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n"


def _codes(result, code):
    return [f for f in result.findings if f.code == code]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (
            "docker-compose.yml",
            'services:\n  app:\n    image: python:3.11\n    command: ["pip", "install", "-c", "requirements-pins.txt",'
            ' "torch"]\n',
        ),
        (
            "docker-compose.yml",
            "services:\n  app:\n    image: python:3.11\n    command:\n      - python\n      - -m\n      - pip\n"
            "      - install\n      - --constraint\n      - requirements-pins.txt\n",
        ),
        ("Dockerfile", 'FROM python:3.11\nCMD ["pip", "install", "-c", "requirements-pins.txt", "torch"]\n'),
    ],
    ids=["compose-flow-list", "compose-block-list", "dockerfile-exec-form"],
)
def test_a_pip_command_written_as_a_list_of_words_names_its_constraints_file(tmp_path, name, text):
    """`command: ["pip", "install", "-c", "requirements-pins.txt"]`: the `-c` reader wanted `pip install` in one
    string, so the pins file was no constraints file and DEP004's fix added `torch-xla[tpu]==2.9.0` there, which
    pip 23.2.1 refuses ("Constraints cannot have extras"). Now a list of words is read as its command line: DEP004
    with no edit, naming the line."""
    results = _run(
        tmp_path,
        {name: text, "requirements-pins.txt": "torch==2.9.0\n", "m.py": "import torch\nx = torch.zeros(2).cuda()\n"},
        target="xla",
    )
    [found] = _codes(results["requirements-pins.txt"], "DEP004")
    assert found.replacement is None, found
    assert f"{name}:" in found.advice and "names this file" in found.advice, found.advice


def test_a_workflows_install_continued_over_lines_is_read_as_one_command(tmp_path):
    """A `run: |` block's `pip install torch \\` with `--index-url .../cu121` on the next line: the shell joins the
    lines, porter read them one by one (neither an install from that index): "All checks passed!". Now DEP002 on
    the continuation line's URL, edited to the CPU index (the file parses the same but the URL)."""
    text = _WORKFLOW + f"      - run: |\n          pip install torch \\\n            --index-url {_CU121}\n"
    results = _run(tmp_path, {".github/workflows/t.yml": text})
    [found] = _codes(results[".github/workflows/t.yml"], "DEP002")
    assert (found.start.line, found.start.column) == (8, 24), found
    assert found.replacement == "https://download.pytorch.org/whl/cpu", found


def test_a_folded_blocks_lines_yaml_joins_are_read_as_one_command(tmp_path):
    """`run: >` with `pip install torch` over `--index-url .../cu121`: YAML folds the two lines into one (`pip install
    torch --index-url ...`), porter read them one by one: "All checks passed!". Now the lines YAML joins are one
    command: DEP002, edited (PyYAML reads the same documents but the URL); the blank line still ends it."""
    text = (
        _WORKFLOW
        + f"      - run: >\n          pip install torch\n          --index-url {_CU121}\n\n          echo done\n"
    )
    results = _run(tmp_path, {".github/workflows/t.yml": text})
    [found] = _codes(results[".github/workflows/t.yml"], "DEP002")
    assert (found.start.line, found.start.column) == (8, 22), found
    assert found.replacement == "https://download.pytorch.org/whl/cpu", found


def _edited(text, finding):
    lines = text.splitlines(keepends=True)
    line = lines[finding.start.line - 1]
    lines[finding.start.line - 1] = line[: finding.start.column] + finding.replacement + line[finding.end.column :]
    return "".join(lines)


@pytest.mark.parametrize(
    "step",
    [
        f"      - run: pip install torch --index-url {_CU121}\n",
        f'      - run: "pip install torch --index-url {_CU121} # x"\n',
        f"      - run: |\n          pip install torch --index-url {_CU121}\n          echo done\n",
    ],
    ids=["plain", "double-quoted", "literal-block"],
)
def test_a_yaml_lines_index_is_edited_where_the_file_means_the_same_but_the_index(tmp_path, step):
    """Every DEP002 of a workflow's `run:` was reported with no edit (`_block_lines` dropped each replacement), though
    the index's characters are the string's own. Now the edit is kept where PyYAML reads the edited file as the same
    documents but that string, changed by the edit alone; the edited file is checked here by PyYAML too."""
    text = _WORKFLOW + step
    results = _run(tmp_path, {".github/workflows/t.yml": text})
    [found] = _codes(results[".github/workflows/t.yml"], "DEP002")
    assert found.replacement == "https://download.pytorch.org/whl/cpu", found
    before, after = yaml.safe_load(text), yaml.safe_load(_edited(text, found))
    run = before["jobs"]["t"]["steps"][0]["run"]
    before["jobs"]["t"]["steps"][0]["run"] = run.replace(_CU121, found.replacement)
    assert before == after, (before, after)


def test_a_yaml_edit_that_would_change_the_documents_is_not_kept(tmp_path):
    """Guard: an edit after which YAML reads a plain scalar otherwise (`y: z` a mapping, ` #` a comment) is not
    kept; the removal for xla of ` --index-url URL` from a plain scalar is: the oracle keeps an edit only where the
    documents stay the same."""
    from porter.files.configs.checks import _kept_edit
    from porter.files.sites import Site

    text = "a: x --index-url https://download.pytorch.org/whl/cu121\n"
    start = text.index(" --index-url")
    removal = Site("DEP002", start, len(text) - 1, "")
    assert _kept_edit(removal, text).replacement == "", "a removal inside a plain scalar keeps the documents"
    colon = Site("DEP002", text.index("https"), len(text) - 1, "y: z")
    assert _kept_edit(colon, text).replacement is None, "`y: z` in a plain scalar would make it a mapping"
    comment = Site("DEP002", text.index("https"), len(text) - 1, "x #y")
    assert _kept_edit(comment, text).replacement is None, "` #` in a plain scalar would start a comment"


@pytest.mark.parametrize(
    ("text", "edited"),
    [
        (f'FROM python:3.11\nRUN sh -c "echo \\"hi\\" && pip install torch --index-url {_CU121}"\n', False),
        (f'FROM python:3.11\nRUN sh -c "pip install torch==$V --index-url {_CU121}"\n', True),
        (f'FROM python:3.11\nRUN sh -c "pip install \\\n torch --index-url {_CU121}"\n', False),
    ],
    ids=["escaped-quote", "expansion", "escaped-newline"],
)
def test_a_sh_c_string_with_an_escape_or_an_expansion_is_read(tmp_path, text, edited):
    """POSIX `sh -c "..."` runs the double-quoted string's value; one with an escape (`\\"hi\\"`, `\\`-newline) or
    an expansion (`$V`) had no literal value, so it was not read: "All checks passed!". Now what is literal is read
    at its place: DEP002, edited where no escape moved the characters (`$V` stays a word porter cannot know)."""
    results = _run(tmp_path, {"Dockerfile": text})
    [found] = _codes(results["Dockerfile"], "DEP002")
    line = text.splitlines()[found.start.line - 1]
    assert line[found.start.column :].startswith(_CU121), (line, found)
    assert (found.replacement == "https://download.pytorch.org/whl/cpu") is edited, found


def test_an_expansion_in_a_sh_c_string_is_said_once(tmp_path):
    """Guard: `sh -c "ls $CUDA_HOME && echo \\"x\\""`: the outer shell reads `$CUDA_HOME`; the script read as shell
    too must not say it again."""
    results = _run(tmp_path, {"run.sh": 'sh -c "ls $CUDA_HOME && echo \\"x\\""\n'})
    assert len(_codes(results["run.sh"], "ENV003")) == 1, results["run.sh"].findings


_PINS = {
    "deps/requirements-pins.txt": "torch==2.9.0\n",
    "other/requirements-pins.txt": "torch==2.9.0\n",
    "m.py": "import torch\nx = torch.zeros(2).cuda()\n",
}


def test_a_dockerfiles_workdir_and_copy_are_followed_to_the_file_a_c_path_names(tmp_path):
    """`WORKDIR /app`, `COPY other/requirements-pins.txt /app/deps/`, then `pip install -c
    deps/requirements-pins.txt`: in the image that path is other/'s file (the Dockerfile reference's `WORKDIR`
    and `COPY`). porter matched the `-c` by file name: deps/'s file was told "Dockerfile:4 names this file", other/'s
    that it may be. Now other/'s is named exactly (DEP004, no edit: pip refuses extras in constraints), and deps/'s,
    which nothing names, gets the target's packages."""
    dockerfile = (
        "FROM python:3.11\nWORKDIR /app\nCOPY other/requirements-pins.txt /app/deps/\n"
        "RUN pip install -c deps/requirements-pins.txt torch\n"
    )
    results = _run(tmp_path, {"Dockerfile": dockerfile, **_PINS}, target="xla")
    [other] = _codes(results["other/requirements-pins.txt"], "DEP004")
    [deps] = _codes(results["deps/requirements-pins.txt"], "DEP004")
    assert other.replacement is None and "Dockerfile:4 names this file with `-c`" in other.advice, other
    assert deps.replacement == "\ntorch-xla[tpu]==2.9.0", deps


def test_a_dockerfile_whose_working_folder_is_unknown_is_said_so(tmp_path):
    """Guard: with no `WORKDIR` after `FROM` the working folder is the base image's, which porter does not know:
    both files keep DEP004 unedited (the safe side), and the advice says what could not be followed."""
    dockerfile = "FROM python:3.11\nCOPY . .\nRUN pip install -c deps/requirements-pins.txt torch\n"
    results = _run(tmp_path, {"Dockerfile": dockerfile, **_PINS}, target="xla")
    [other] = _codes(results["other/requirements-pins.txt"], "DEP004")
    [deps] = _codes(results["deps/requirements-pins.txt"], "DEP004")
    assert other.replacement is None and deps.replacement is None, (other, deps)
    assert "porter could not follow the Dockerfile's `WORKDIR`, `COPY` and build context" in other.advice, other
