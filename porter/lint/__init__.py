"""`porter lint`: the engine's findings for CI — output formats, baselines, statistics.

Lint runs the very engine `porter rewrite` runs (`porter.runner.iter_results`), so both see
the same findings for the same settings; lint only decides what to print and how to exit.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from porter.discover import Candidate
from porter.findings import FileResult, FileStatus, Finding
from porter.lint.fingerprint import fingerprint_file
from porter.lint.model import UNUSED_CODE, LintRun, RuleInfo, rule_info
from porter.lint.unused import unused_suppressions
from porter.runner import file_settings, iter_results
from porter.settings import Settings

__all__ = ["LintRun", "RuleInfo", "UNUSED_CODE", "lint", "rule_info"]


def lint(
    paths: list[Path],
    settings: Settings,
    *,
    fix: bool = False,
    report_unused: bool = False,
    fingerprint_base: Path | None = None,
    on_result: Callable[[Candidate, FileResult], None] | None = None,
    jobs: int | None = None,
    cache: bool | None = None,
    cache_dir: Path | None = None,
    file_timeout: float | None = None,
) -> LintRun:
    """Lint `paths`. With `fix`, report what is left once the fixes the settings allow are
    applied; the fixes themselves are in `run.pending` (path, ported bytes, new bytes) for
    the caller to write through the write guard (`porter.cli.writes`)."""
    run = LintRun(settings=settings, results=[], findings=[], fix=fix)
    for cand, result in iter_results(paths, settings, jobs=jobs, cache=cache, cache_dir=cache_dir, file_timeout=file_timeout):
        run.results.append(result)
        if on_result is not None:
            on_result(cand, result)
        current = result
        here = file_settings(settings, cand.path, result.path)
        if fix and result.status is FileStatus.CHANGED and result.new_source is not None:
            run.pending.append((cand.path, result.original_source, result.new_source))
            run.fixed.extend(f for f in result.findings if f.applied)
            # what is left is what the engine finds in the fixed file (ruff re-lints too)
            current = _port_source(result.new_source, result.path, here)
        file_findings: list[Finding] = list(current.findings)
        if report_unused:
            file_findings.extend(unused_suppressions(current, here))
        if not file_findings:
            continue
        source = current.original_source
        run.sources[result.path] = source or b""
        for f, fp in zip(file_findings, fingerprint_file(file_findings, source, result.path, fingerprint_base)):
            run.fingerprints[id(f)] = fp
        run.findings.extend(file_findings)
    run.findings.sort(key=Finding.sort_key)
    return run


def _port_source(source: bytes, path: str, settings: Settings) -> FileResult:
    # imported on first use: a run answered from the cache never loads libcst (~0.5 s)
    from porter.engine import port_source

    return port_source(source, path, settings)
