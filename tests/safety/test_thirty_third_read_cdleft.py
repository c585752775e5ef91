"""The thirty-third read's cache and terminal leftovers (cdleft): what the thirty-second read's cache,
cache2, ctleft, term and term2 helpers left, each read against the tool that installs or reads it
(setuptools 65.5.0's `Distribution.parse_config_files` and `finalize_options`, what `pip install`
runs; pip 23.2.1's requirements-file parser; junitparser)."""

from __future__ import annotations

import pytest

from tests.safety.test_thirty_second_read_cache2 import _run


@pytest.mark.parametrize(
    "value",
    [
        "cupy-cuda12x cupy",  # two names, no `;`: one item to setuptools
        "\n    cupy-cuda12x\n    ./local/pkg",  # a path where a requirement is due
        "\n    torch\n    cupy-cuda12x\n    file: more.txt",  # `file:` is a directive only as the whole value
        "%(gpu)s\ngpu = cupy-cuda12x cupy",  # the build's expansion is no requirement
    ],
)
def test_a_setup_cfg_item_that_is_no_requirement_is_not_read_as_declaring_packages(tmp_path, value):
    """setuptools 65.5's build stops at an item packaging cannot read ("InvalidRequirement: Parse error
    at 'cupy'"), so the file installs nothing. porter passed the file ("All checks passed!") or gave its
    other items findings (DEP005 on `cupy-cuda12x` beside `./local/pkg`). Now the file is one setuptools
    does not read, with the item and why (the multi-item `;` line had this; a lone item did not)."""
    result = _run(tmp_path, "setup.cfg", f"[metadata]\nname = p\n[options]\ninstall_requires = {value}\n")
    assert not result.findings, result.findings
    assert result.status.value == "error", result.status
    assert "is no requirement: setuptools' build stops at it" in (result.reason or ""), result.reason


def test_a_setup_cfg_file_directive_and_plain_requirements_are_still_read(tmp_path):
    """Guards: `install_requires = file: reqs.txt` is an include setuptools reads (no finding, as
    docs/files.md says), and a list of requirements with comments keeps its findings."""
    result = _run(tmp_path, "setup.cfg", "[options]\ninstall_requires = file: reqs.txt\n")
    assert result.status.value != "error", result.reason
    text = "[options]\ninstall_requires =\n    numpy>=1.24  # host\n    cupy-cuda12x\n"
    result = _run(tmp_path, "setup.cfg", text)
    assert result.status.value != "error", result.reason
    assert "DEP005" in {f.code for f in result.findings}


def test_a_constraints_file_named_in_a_conda_pip_list_gets_no_target_package(tmp_path):
    """conda writes an environment file's `pip:` items, one a line, into a requirements file beside it
    and runs `pip install -r` on it: `- -c requirements-pins.txt` makes the pins file constraints, where
    pip 23.2.1 refuses the extra of `torch-xla[tpu]==2.9.0` ("Constraints cannot have extras"). porter
    followed `-c` from requirements files only, and offered that fix in the pins file (DEP004 [*])."""
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    (tmp_path / "environment.yml").write_text(
        "name: e\ndependencies:\n  - python=3.11\n  - pip\n  - pip:\n    - --constraint=requirements-pins.txt\n"
        "    - torch\n"
    )
    (tmp_path / "requirements-pins.txt").write_text("torch==2.3.0\nnumpy==1.26.4\n")
    (tmp_path / "m.py").write_text("import torch\nx = torch.zeros(2).cuda()\n")
    results = {r.path.rsplit("/", 1)[-1]: r for r in run([tmp_path], Settings(target="xla"), jobs=1, cache=False)[0]}
    pins = {f.code for f in results["requirements-pins.txt"].findings}
    assert "DEP004" not in pins, results["requirements-pins.txt"].findings
    assert "DEP003" in pins  # (a constraint no target torch meets is still said)
    assert "DEP004" in {f.code for f in results["environment.yml"].findings}


def test_junit_gives_a_file_with_findings_and_a_fix_not_written_one_suite(tmp_path):
    """`lint --fix --output-format junit` over a read-only m.py: its findings and its "fix not written"
    were two `testsuite`s both named `m.py` (term2's leftover); a reader that keys suites by name (a
    dict of them) kept one. Now one suite, its counts the sum, as junitparser reads them."""
    from junitparser import JUnitXml

    from tests.safety.test_thirty_second_read_ctleft import _fix_with_one_file_read_only

    done = _fix_with_one_file_read_only(tmp_path, "--output-format", "junit")
    (tmp_path / "j.xml").write_bytes(done.stdout)
    suites = [s for s in JUnitXml.fromfile(str(tmp_path / "j.xml")) if s.name == "m.py"]
    assert len(suites) == 1, [s.name for s in suites]
    [suite] = suites
    assert suite.errors == 1 and suite.failures >= 1 and suite.tests == suite.failures + 1
    assert {c.name for c in suite if c.name == "fix not written"} == {"fix not written"}


@pytest.mark.parametrize(
    ("mode", "fmt"),
    [(["--write-baseline", "b.json"], "sarif"), (["--write-baseline", "b.json"], "json"), (["--diff"], "json")],
)
def test_an_output_format_the_run_does_not_print_is_refused(tmp_path, mode, fmt):
    """`lint --write-baseline b.json --output-format sarif` wrote the baseline, printed "Wrote 1 finding
    to baseline" and exited 0: no SARIF, unsaid (term2's leftover; `-o` there was refused already), and
    `--diff --output-format json` printed the patch. Now refused before the run (exit 2, the reason);
    PORTER_OUTPUT_FORMAT set for a CI job is a default and still passes."""
    from tests.safety.conftest import CUDA, porter

    (tmp_path / "m.py").write_bytes(CUDA)
    args = ["lint", "m.py", "-t", "xla", "--no-cache", *mode]
    done = porter(*args, "--output-format", fmt, cwd=tmp_path)
    assert done.returncode == 2 and b"and --output-format do not go together" in done.stderr, done.stderr
    assert not (tmp_path / "b.json").exists()
    done = porter(*args, cwd=tmp_path, env={"PORTER_OUTPUT_FORMAT": fmt})
    assert done.returncode in (0, 1) and b"do not go together" not in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("spec", "cuda"),
    [
        ("pytorch 2.3.0 *cuda*", True),  # name, version, build: by spaces
        ("pytorch[build=*cuda*]", True),  # a key in brackets
        ('pytorch[version=2.3.0, build="py3.11_cuda12.1*"]', True),
        ("pytorch=2.3.0=*cuda*", True),  # (read before)
        ("pytorch 2.3.0 *cpu*", False),
        ("pytorch >=2.0", False),
    ],
)
def test_a_conda_cuda_build_written_in_each_matchspec_form_is_reported(tmp_path, spec, cuda):
    """conda's MatchSpec names a build by `=`, by a third word or by `[build=...]` (conda's docs on
    package match specifications): porter read the `=` form only, and `pytorch 2.3.0 *cuda*` (cache's
    left 5) passed with no DEP001 where conda installs its CUDA build."""
    result = _run(tmp_path, "environment.yml", f"name: e\ndependencies:\n  - {spec}\n")
    assert ("DEP001" in {f.code for f in result.findings}) is cuda, result.findings


def test_a_setup_cfg_refused_for_an_expansion_past_the_bound_says_so(tmp_path):
    """A chain of `%(a)s` growing past 64 KiB is refused (the build would expand it, slowly: 10**9
    characters), but the reason said only "a `%` its build cannot expand", which is not so (ctleft's
    left 2). Now the reason names the bound too."""
    refs = "".join(f"a{i} = " + f"%(a{i - 1})s" * 10 + "\n" for i in range(1, 10))
    text = f"[metadata]\nname = p\n[options]\na0 = x\n{refs}install_requires =\n    cupy-cuda12x\n"
    result = _run(tmp_path, "setup.cfg", text)
    assert result.status.value == "error" and "past 64 KiB" in (result.reason or ""), result.reason
