"""Baselines for incremental migration: record today's findings, fail only on new ones.

The file is JSON: a version, the target, whether the run was `--portable`, and one entry per
finding with its fingerprint (see `porter.lint.fingerprint`) and its file (relative to the
baseline's folder, as the fingerprint names it), plus code, path, line and message for people reading it.
Fingerprints are computed relative to the baseline file's folder, so the same file works
from any working directory.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from porter.core.findings import Finding
from porter.core.reading import Unreadable, read_regular
from porter.lint.fingerprint import identity_path

BASELINE_VERSION = 1


class BaselineError(ValueError):
    pass


def write_baseline(
    path: Path,
    target: str,
    findings: list[Finding],
    fingerprints: dict[int, str],
    tool_version: str,
    portable: bool = False,
    base: Path | None = None,
) -> None:
    """`base`: the folder the fingerprints are relative to (the baseline's)."""
    entries = [
        {
            "fingerprint": fingerprints[id(f)],
            "file": identity_path(f.path, base),
            "code": f.code,
            "path": f.path,
            "line": f.start.line,
            "message": f.message,
        }
        for f in findings
    ]
    data = {
        "version": BASELINE_VERSION,
        "tool": f"porter {tool_version}",
        "target": target,
        "portable": portable,
        "findings": entries,
    }
    from porter.pipeline.writer import write_output

    write_output(path, json.dumps(data, indent=2) + "\n")  # whole; a link of that name is replaced, not written through


class Known(NamedTuple):
    """What a baseline records."""

    counts: Counter  # fingerprint -> how many findings with it the baseline holds
    files: dict[str, str]  # fingerprint -> its file, relative to the baseline's folder (where recorded)


def read_baseline(path: Path, target: str | None = None, portable: bool | None = None) -> Known:
    """The baseline's fingerprints and their files (`Known`). `target`: the run's; a
    baseline recorded for another one is an error (a fingerprint names no target, so a neuron
    baseline silenced a tpu run's findings of the same codes on the same lines, which no one
    accepted for tpu: seventeenth read). `portable`: whether the run is `--portable`; a baseline
    that records the other is an error too (a `--portable` port's findings, fixes and advice are
    not those of a plain port, and either baseline passed the other run)."""
    try:
        data = json.loads(read_regular(path).decode("utf-8"))
    except Unreadable as exc:
        raise BaselineError(f"{path}: cannot read baseline: {exc.reason}") from None
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read baseline: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise BaselineError(f"{path}: not a porter baseline (not UTF-8 at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise BaselineError(f"{path}: not a porter baseline (invalid JSON: {exc})") from None
    except (RecursionError, MemoryError, ValueError) as exc:
        raise BaselineError(f"{path}: not a porter baseline ({type(exc).__name__})") from None
    if (
        not isinstance(data, dict)
        or data.get("version") != BASELINE_VERSION
        or not isinstance(data.get("findings"), list)
    ):
        raise BaselineError(f"{path}: not a porter baseline (version {BASELINE_VERSION} expected)")
    _check_mode(path, data, target, portable)
    counts: Counter = Counter()
    files: dict[str, str] = {}
    for entry in data["findings"]:
        _check_entry(path, entry)
        counts[entry["fingerprint"]] += 1
        if "file" in entry:
            files[entry["fingerprint"]] = _plain(entry["file"])
    return Known(counts, files)


def _plain(file: str) -> str:
    """An entry's `file` without `.` and empty steps (`./a.py`, `sub//a.py`), as git reads a
    pathspec: the run's names hold none, so an entry written by hand as `./a.py` was never its
    file's (never "no longer found"; twenty-sixth read's leftover). `..` is kept: past a link it
    is not the folder above (the name is read back as written, `_entry_gone`)."""
    steps = [step for step in file.split("/") if step not in ("", ".")]
    return ("/" if file.startswith("/") else "") + "/".join(steps)


def _check_entry(path: Path, entry: object) -> None:
    """A BaselineError for an entry without a fingerprint, or with a `file` that is no text: an
    entry whose `file` was edited to a number counted as "no longer found (fixed since)" in a run
    of any other file, as one of a baseline that records none (twenty-sixth read). A missing
    `file` passes (a baseline written before porter recorded it)."""
    if isinstance(entry, dict) and isinstance(entry.get("fingerprint"), str):
        if "file" not in entry or isinstance(entry["file"], str):
            return
        why = "baseline entry whose `file` is not text"
    else:
        why = "baseline entry without a fingerprint"
    shown = repr(entry)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    raise BaselineError(f"{path}: {why}: {shown}")


def _check_mode(path: Path, data: dict, target: str | None, portable: bool | None) -> None:
    """A BaselineError when the baseline records another target or the other `--portable` mode
    than the run's (a baseline without them, written by hand or by an older porter, passes)."""
    recorded = data.get("target")
    if target is not None and recorded is not None and recorded != target:
        shown = repr(recorded) if isinstance(recorded, str) and len(recorded) <= 40 else "another target"
        raise BaselineError(
            f"{path}: a baseline of --target {shown}, not {target}: record one per target (--write-baseline)"
        )
    recorded_portable = data.get("portable")
    if recorded_portable is not None and not isinstance(recorded_portable, bool):
        raise BaselineError(f"{path}: not a porter baseline (`portable` is not true or false)")
    if portable is not None and recorded_portable is not None and recorded_portable is not portable:
        was, run = ("with", "without") if recorded_portable else ("without", "with")
        raise BaselineError(
            f"{path}: a baseline recorded {was} --portable, for a run {run} it: record one per mode (--write-baseline)"
        )


def apply_baseline(
    findings: list[Finding], fingerprints: dict[int, str], known: Known, checked: Callable[[str], bool]
) -> tuple[list[Finding], int, int]:
    """(new findings, how many the baseline covered, baseline entries no longer found). An
    entry left over is no longer found only where the run checked its file (`checked`, given
    the file the entry records; one from a baseline that records none counts): a run of some
    files (`porter lint a.py`, as a pre-commit hook passes the changed ones) called every other
    file's entries "no longer found (fixed since)" and said to rewrite the baseline, which, from
    that run, drops them all (twenty-sixth read)."""
    left = Counter(known.counts)
    new: list[Finding] = []
    covered = 0
    for f in findings:
        fp = fingerprints[id(f)]
        if left[fp] > 0:
            left[fp] -= 1
            covered += 1
        else:
            new.append(f)
    stale = sum(n for fp, n in left.items() if fp not in known.files or checked(known.files[fp]))
    return new, covered, stale
