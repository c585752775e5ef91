"""`porter lint`: the engine's findings for CI — output formats, baselines, statistics.

Lint runs the very engine `porter rewrite` runs (`porter.pipeline.runner.iter_results`), so both see
the same findings for the same settings; lint only decides what to print and how to exit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from porter.pipeline.discover import Candidate
from porter.core.findings import FileResult, FileStatus, Finding
from porter.lint.fingerprint import fingerprint_file, forget_folders
from porter.config.metacodes import UNUSED_CODE
from porter.lint.model import LintRun, RuleInfo, rule_info
from porter.lint.unused import unused_suppressions
from porter.pipeline.parallel import DEFAULT_FILE_TIMEOUT, MIN_PARALLEL_FILES, Job, Pool, default_jobs
from porter.pipeline.runner import file_settings, iter_results
from porter.config.settings import Settings

__all__ = ["LintRun", "RuleInfo", "UNUSED_CODE", "lint", "not_written", "rule_info"]


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
    lines: bool = True,
) -> LintRun:
    """Lint `paths`. With `fix`, report what is left once the fixes the settings allow are
    applied; the fixes themselves are in `run.pending` (path, ported bytes, new bytes) for
    the caller to write through the write guard (`porter.cli.writes`). `lines=False`: the
    caller shows no finding's line (`run.sources` may lack a file the stat index answered:
    its findings are fingerprinted by the lines the index kept)."""
    run = LintRun(settings=settings, results=[], findings=[], fix=fix)
    forget_folders()
    fixed: list[tuple[FileResult, Settings]] = []
    for cand, result in iter_results(
        paths,
        settings,
        jobs=jobs,
        cache=cache,
        cache_dir=cache_dir,
        file_timeout=file_timeout,
        sources=lines or fix or report_unused,  # unused suppressions are read off the source
    ):
        run.results.append(result)
        if on_result is not None:
            on_result(cand, result)
        here = file_settings(settings, cand.where, result.path)
        if fix and result.status is FileStatus.CHANGED and result.new_source is not None:
            run.pending.append((cand.path, result.original_source, result.new_source))
            run.unwritten[cand.path] = (result, here, report_unused, fingerprint_base)
            run.fixed.extend(f for f in result.findings if f.applied)
            fixed.append((result, here))
            continue
        _add_findings(run, result, here, report_unused, fingerprint_base)
    # what is left is what the engine finds in the fixed files (ruff re-lints too), parsed in
    # workers under the same time limit as the first pass
    for current, (_, here) in zip(_relint(fixed, file_timeout), fixed):
        if current.status is FileStatus.ERROR:  # the fixed file could not be checked again
            run.results = [current if r.path == current.path else r for r in run.results]
        _add_findings(run, current, here, report_unused, fingerprint_base)
    run.findings.sort(key=Finding.sort_key)
    return run


def not_written(run: LintRun, problems: Mapping[Path, str]) -> None:
    """--fix could not write these files (read-only, changed on disk; each with why): their fixes
    are not applied, so they are not counted fixed, and what is reported of each is what the first
    pass found in it, at its positions in the file as it is. Why is kept (`fixes_not_written`) for
    the formats that say whether the run succeeded (SARIF's `executionSuccessful`)."""
    for path, problem in problems.items():
        entry = run.unwritten.pop(path, None)
        if entry is None:
            continue
        result, here, report_unused, base = entry
        run.fixes_not_written[result.path] = problem
        applied = {id(f) for f in result.findings}
        run.fixed = [f for f in run.fixed if id(f) not in applied]
        run.findings = [f for f in run.findings if f.path != result.path]  # the fixed text's
        _add_findings(run, result, here, report_unused, base)
    run.findings.sort(key=Finding.sort_key)


def _relint(fixed: list[tuple[FileResult, Settings]], file_timeout: float | None) -> list[FileResult]:
    if not fixed:
        return []
    jobs: list[tuple[int, Job | None]] = []
    for i, (r, here) in enumerate(fixed):
        assert r.new_source is not None  # only a file with a rewrite is fixed
        jobs.append((i, Job(r.new_source, r.path, here)))
    limit = DEFAULT_FILE_TIMEOUT if file_timeout is None else file_timeout
    workers = 1 if len(jobs) < MIN_PARALLEL_FILES else default_jobs()
    out: list[FileResult] = []
    for _, result in Pool(workers, file_timeout=limit).map(jobs):
        assert result is not None  # every item carries a job
        out.append(result)
    return out


def _add_findings(run: LintRun, current: FileResult, here: Settings, report_unused: bool, base: Path | None) -> None:
    file_findings: list[Finding] = list(current.findings)
    if report_unused:
        file_findings.extend(unused_suppressions(current, here))
    if not file_findings:
        return
    source = current.original_source
    run.sources[current.path] = source or b""
    texts = current.texts if source is None and len(file_findings) == len(current.findings) else None
    for f, fp in zip(file_findings, fingerprint_file(file_findings, source, current.path, base, texts)):
        run.fingerprints[id(f)] = fp
    run.findings.extend(file_findings)
