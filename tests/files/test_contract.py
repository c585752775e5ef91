"""The files around the Python under the Python files' contract: `--diff` is a patch git applies,
every lint format carries their findings (SARIF's fixes reproduce the rewrite), baselines,
the write guard, the cache's checks."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path

import jsonschema
from junitparser import JUnitXml

from porter.pipeline import cache as cache_module
from tests.lint.conftest import SCHEMAS
from tests.safety.conftest import committed_repo, git, porter

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "fixtures" / "projects" / "gpt_trainer" / "src"


def _repo(tmp_path: Path) -> Path:
    files = {
        p.relative_to(SRC).as_posix(): p.read_bytes()
        for p in SRC.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    return committed_repo(tmp_path / "repo", files)


def test_diff_is_a_patch_git_applies_and_a_second_run_changes_nothing(tmp_path):
    repo = _repo(tmp_path)
    out = porter("rewrite", ".", "--target", "neuron", "--diff", cwd=repo)
    assert out.returncode == 1, out.stderr
    for name in (b"requirements.txt", b"Dockerfile", b"scripts/train.slurm", b"tutorial.ipynb", b"docker-compose.yml"):
        assert b"+++ b/" + name in out.stdout
    assert re.search(rb"\n@@ -\d+,\d+ \+\d+,\d+ @@ cell 3\n", out.stdout)  # a notebook's hunks name their cells
    (tmp_path / "port.patch").write_bytes(out.stdout)
    subprocess.run(["git", "apply", str(tmp_path / "port.patch")], cwd=repo, check=True)
    expected = REPO / "fixtures" / "projects" / "gpt_trainer" / "expected" / "neuron"
    for path in expected.rglob("*"):
        if path.is_file():
            assert (repo / path.relative_to(expected)).read_bytes() == path.read_bytes(), path
    again = porter("rewrite", ".", "--target", "neuron", "--diff", cwd=repo)
    assert again.returncode == 0 and again.stdout == b"", again.stdout


def _apply_sarif_fixes(root: Path, doc: dict) -> dict[str, str]:
    """Each file with the SARIF fixes of its findings applied (regions: 1-based lines and
    columns in code points)."""
    edits: dict[str, list[tuple[int, int, str]]] = {}
    texts: dict[str, str] = {}
    for res in doc["runs"][0]["results"]:
        for fix in res.get("fixes", []):
            for change in fix["artifactChanges"]:
                uri = change["artifactLocation"]["uri"]
                text = texts.setdefault(uri, (root / uri).read_text())
                starts = [0]
                for line in text.splitlines(keepends=True):
                    starts.append(starts[-1] + len(line))
                for rep in change["replacements"]:
                    r = rep["deletedRegion"]
                    a = starts[r["startLine"] - 1] + r["startColumn"] - 1
                    b = starts[r["endLine"] - 1] + r["endColumn"] - 1
                    edits.setdefault(uri, []).append((a, b, rep["insertedContent"]["text"]))
    out = {}
    for uri, spans in edits.items():
        text = texts[uri]
        for a, b, new in sorted(spans, reverse=True):
            text = text[:a] + new + text[b:]
        out[uri] = text
    return out


def test_sarif_is_valid_and_its_fixes_are_the_rewrite(tmp_path):
    repo = _repo(tmp_path)
    out = porter("lint", ".", "--target", "neuron", "--output-format", "sarif", cwd=repo)
    assert out.returncode == 1, out.stderr
    doc = json.loads(out.stdout)
    schema = json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text())
    jsonschema.Draft4Validator(schema).validate(doc)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in doc["runs"][0]["results"]}
    assert {
        "requirements.txt",
        "Dockerfile",
        "Makefile",
        "scripts/train.slurm",
        "configs/ds_config.json",
        "tutorial.ipynb",
        "docker-compose.yml",
        "environment.yml",
        "pyproject.toml",
        "setup.cfg",
        "configs/train.toml",
    } <= uris
    fixed = _apply_sarif_fixes(repo, doc)
    expected = REPO / "fixtures" / "projects" / "gpt_trainer" / "expected" / "neuron"
    for uri in (
        "requirements.txt",
        "Dockerfile",
        "Makefile",
        "scripts/train.slurm",
        "docker-compose.yml",
        "tutorial.ipynb",
        "setup.cfg",
    ):
        assert fixed[uri] == (expected / uri).read_text(), uri


def test_junit_github_and_json_carry_the_findings(tmp_path):
    repo = _repo(tmp_path)
    junit = porter("lint", ".", "--target", "xla", "--output-format", "junit", cwd=repo)
    (tmp_path / "r.xml").write_bytes(junit.stdout)
    names = " ".join(
        f"{case.classname} {case.name}" for suite in JUnitXml.fromfile(str(tmp_path / "r.xml")) for case in suite
    )
    for name in ("requirements.txt", "tutorial.ipynb", "scripts/train.slurm", "configs/ds_config.json"):
        assert name in names
    github = porter("lint", ".", "--target", "xla", "--output-format", "github", cwd=repo).stdout.decode()
    assert "file=tutorial.ipynb," in github and "(cell 3, line 4)" in github and "file=Dockerfile," in github
    rows = json.loads(porter("lint", ".", "--target", "xla", "--output-format", "json", cwd=repo).stdout)
    assert any(r["path"] == "configs/accelerate.yaml" and r["code"] == "CFG001" for r in rows)


def test_baseline_holds_the_files_around_the_python(tmp_path):
    repo = _repo(tmp_path)
    porter("lint", ".", "--target", "tpu", "--write-baseline", "base.json", cwd=repo)
    assert porter("lint", ".", "--target", "tpu", "--baseline", "base.json", cwd=repo).returncode == 0
    (repo / "scripts" / "new.sh").write_text("export NCCL_DEBUG=INFO\n")
    out = porter("lint", ".", "--target", "tpu", "--baseline", "base.json", "--output-format", "concise", cwd=repo)
    assert out.returncode == 1 and out.stdout.decode().splitlines()[0].startswith("scripts/new.sh:1:8: ENV002")


def test_the_write_guard_covers_them(tmp_path):
    repo = committed_repo(tmp_path / "r", {"requirements.txt": b"torch==2.9.0+cu121\n"})
    (repo / "requirements.txt").write_bytes(b"torch==2.9.0+cu121\nnumpy\n")  # uncommitted work
    out = porter("rewrite", ".", "--target", "xla", cwd=repo)
    assert out.returncode == 2 and b"requirements.txt" in out.stderr
    assert (repo / "requirements.txt").read_bytes() == b"torch==2.9.0+cu121\nnumpy\n"
    git("commit", "-qam", "work", cwd=repo)
    assert porter("rewrite", ".", "--target", "xla", cwd=repo).returncode == 0
    assert (repo / "requirements.txt").read_bytes() == b"torch==2.9.0\ntorch-xla[tpu]==2.9.0\nnumpy\n"


def test_a_cached_rewrite_must_parse_as_its_kind(tmp_path):
    assert not cache_module._parses(b"a: [\n", "cfg.yaml") and cache_module._parses(b"a: 1\n", "cfg.yaml")
    assert not cache_module._parses(b'{"cells": 1}', "nb.ipynb") and not cache_module._parses(
        b"x = [", "pyproject.toml"
    )
    repo = committed_repo(
        tmp_path / "r", {"accelerate.yaml": b"compute_environment: LOCAL_MACHINE\nmixed_precision: fp16\n"}
    )
    cache = tmp_path / "cache"
    args = ("rewrite", ".", "--target", "xla", "--unsafe-fixes", "--cache-dir", str(cache))
    assert porter(*args, "--diff", cwd=repo).returncode == 1
    [entry] = [p for p in cache.rglob("*.json") if not p.name.startswith("index-")]
    key, label = cache_module.user_key()[0], f"entry:{entry.parent.name}{entry.stem}"
    assert key is not None
    data = json.loads(cache_module.unseal(key, label, entry.read_bytes()))
    forged = b"mixed_precision: [bf16\n"  # no YAML: a forger who even holds the user's key
    data["new_source"] = base64.b64encode(forged).decode()
    data["new_sha256"] = hashlib.sha256(forged).hexdigest()
    entry.write_bytes(cache_module.seal(key, label, json.dumps(data).encode()))
    shutil.rmtree(cache / "stat", ignore_errors=True)
    for p in cache.rglob("stat-*"):
        p.unlink()
    assert porter(*args, cwd=repo).returncode == 0
    assert (repo / "accelerate.yaml").read_bytes() == b"compute_environment: LOCAL_MACHINE\nmixed_precision: bf16\n"
