"""The pre-commit hooks, the example GitHub Actions workflow and the snippets in docs/ci.md:
each validated against its consumer's schema, and the porter commands in them run for real."""

from __future__ import annotations

import json
import re
import shlex

import jsonschema
import pytest
import yaml

from tests.lint.conftest import REPO, SCHEMAS, TRAIN, cli, sh, write

WORKFLOW = REPO / "docs/examples/github-actions.yml"
CI_DOC = REPO / "docs/ci.md"


def _load(text: str):
    """YAML as GitHub reads it: YAML 1.1 turns the `on:` key into True; GitHub means "on"."""
    data = yaml.safe_load(text)
    if isinstance(data, dict) and True in data:
        data["on"] = data.pop(True)
    return data


def _yaml_blocks(markdown: str) -> list:
    return [_load(b) for b in re.findall(r"```yaml\n(.*?)```", markdown, re.S)]


def _workflow_schema():
    return json.loads((SCHEMAS / "github-workflows.json").read_text())


def _porter_commands(workflow: dict) -> list[list[str]]:
    cmds = []
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            for line in step.get("run", "").splitlines():
                if line.strip().startswith("porter "):
                    cmds.append(shlex.split(line)[1:])
    return cmds


def test_example_workflow_is_a_valid_github_workflow():
    wf = _load(WORKFLOW.read_text())
    jsonschema.validate(wf, _workflow_schema())
    steps = wf["jobs"]["porter"]["steps"]
    uses = [s.get("uses", "") for s in steps]
    upload = next(s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif@"))
    sarif_cmds = [
        c for c in _porter_commands(wf) if "--output-format" in c and c[c.index("--output-format") + 1] == "sarif"
    ]
    assert sarif_cmds, "a step must run porter lint --output-format sarif"
    cmd = sarif_cmds[0]
    assert cmd[0] == "lint" and cmd[cmd.index("--output-file") + 1] == upload["with"]["sarif_file"]
    assert uses.index(upload["uses"]) > next(i for i, s in enumerate(steps) if "sarif" in s.get("run", ""))
    assert wf["permissions"]["security-events"] == "write"


def test_the_workflow_schema_check_can_fail():
    wf = _load(WORKFLOW.read_text())
    del wf["jobs"]["porter"]["runs-on"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(wf, _workflow_schema())


def test_example_workflow_porter_steps_run(tmp_path, monkeypatch):
    """Run the workflow's porter commands, in order, on a project with a committed baseline."""
    write(tmp_path, {"train.py": TRAIN})
    monkeypatch.chdir(tmp_path)
    assert cli("lint", ".", "--target", "neuron", "--write-baseline", ".porter-baseline.json").exit_code == 0
    cmds = _porter_commands(_load(WORKFLOW.read_text()))
    results = [cli(*c) for c in cmds]
    assert all(r.exit_code == 0 for r in results), [r.stderr for r in results]
    sarif = json.loads((tmp_path / "porter.sarif").read_text())
    schema = json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text())
    jsonschema.Draft4Validator(schema).validate(sarif)
    assert len(sarif["runs"][0]["results"]) == 3
    # the gate step fails once someone adds a CUDA call
    (tmp_path / "new.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    gate = cli(*cmds[-1])
    assert gate.exit_code == 1 and gate.stdout.count("::error") == 1


def test_ci_doc_github_snippet_is_valid():
    blocks = _yaml_blocks(CI_DOC.read_text())
    workflows = [b for b in blocks if isinstance(b, dict) and "jobs" in b]
    assert workflows
    for wf in workflows:
        jsonschema.validate(wf, _workflow_schema())
        assert any("sarif" in c for c in map(" ".join, _porter_commands(wf)))


def test_ci_doc_gitlab_snippet_is_valid_gitlab_ci():
    blocks = _yaml_blocks(CI_DOC.read_text())
    (gl,) = [b for b in blocks if isinstance(b, dict) and "porter" in b and "script" in b["porter"]]
    jsonschema.validate(gl, json.loads((SCHEMAS / "gitlab-ci.json").read_text()))
    job = gl["porter"]
    assert job["artifacts"]["reports"]["codequality"] == "gl-code-quality-report.json"
    script = " ".join(job["script"])
    assert "--output-format gitlab --output-file gl-code-quality-report.json" in script
    assert "--output-format junit --output-file porter-junit.xml" in script


def test_ci_doc_gitlab_commands_run(tmp_path, monkeypatch):
    blocks = _yaml_blocks(CI_DOC.read_text())
    (gl,) = [b for b in blocks if isinstance(b, dict) and "porter" in b and "script" in b["porter"]]
    write(tmp_path, {"train.py": TRAIN})
    monkeypatch.chdir(tmp_path)
    cli("lint", ".", "-t", "neuron", "--write-baseline", ".porter-baseline.json")
    for line in gl["porter"]["script"]:
        if line.startswith("porter "):
            assert cli(*shlex.split(line)[1:]).exit_code == 0
    issues = json.loads((tmp_path / "gl-code-quality-report.json").read_text())
    assert {i["check_name"] for i in issues} == {"DEV001", "DEV002", "CUDA003"}
    assert (tmp_path / "porter-junit.xml").read_text().startswith("<?xml")


def test_pre_commit_manifest_is_valid():
    from pre_commit.clientlib import load_manifest

    hooks = {h["id"]: h for h in load_manifest(str(REPO / ".pre-commit-hooks.yaml"))}
    assert set(hooks) == {"porter-lint", "porter-fix"}
    assert hooks["porter-lint"]["entry"] == "porter lint"
    assert hooks["porter-lint"]["language"] == "python"


def test_ci_doc_pre_commit_snippet_is_a_valid_config(tmp_path):
    from pre_commit.clientlib import load_config

    blocks = _yaml_blocks(CI_DOC.read_text())
    (cfg,) = [b for b in blocks if isinstance(b, dict) and "repos" in b]
    hook_ids = [h["id"] for r in cfg["repos"] for h in r["hooks"]]
    assert hook_ids == ["porter-lint"]
    path = tmp_path / ".pre-commit-config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    load_config(str(path))


def test_pre_commit_hook_runs_as_pre_commit_calls_it(tmp_path):
    """pre-commit runs `entry args... file...` with the staged file names."""
    from pre_commit.clientlib import load_manifest

    hook = next(h for h in load_manifest(str(REPO / ".pre-commit-hooks.yaml")) if h["id"] == "porter-lint")
    write(tmp_path, {"pyproject.toml": '[tool.porter]\ntarget = "neuron"\n', "ok.py": "x = 1\n", "bad.py": TRAIN})
    argv = shlex.split(hook["entry"])[1:] + list(hook["args"])
    assert sh(*argv, "ok.py", cwd=tmp_path).exit_code == 0
    r = sh(*argv, "ok.py", "bad.py", cwd=tmp_path)
    assert r.exit_code == 1 and "bad.py:3:5: DEV001" in r.stdout
