"""The one diagnostic type that rewrite, lint and every report read.

A finding is a fact about a file: what porter saw, where, and what it did or could not do
about it. Keeping one type for all outputs means there is one truth about a file.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Severity(str, enum.Enum):
    """How much a finding matters for the port (ordered: info < warning < error)."""

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]


_SEVERITY_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}


class Applicability(str, enum.Enum):
    """Whether porter can fix the site, and how much to trust the fix (ruff's fix safety)."""

    SAFE = "safe"  # behaviour on the target is what the CUDA code meant
    UNSAFE = "unsafe"  # a fix exists but changes numerics or semantics; opt in
    MANUAL = "manual"  # no automatic fix: the advice says what to do


@dataclass(frozen=True, order=True)
class Position:
    """1-based line, 0-based column (libcst's convention)."""

    line: int
    column: int


@dataclass(frozen=True)
class Finding:
    code: str
    name: str
    message: str
    path: str
    start: Position
    end: Position
    severity: Severity
    applicability: Applicability
    target: str
    replacement: str | None = None  # the new code for the site, when there is a fix
    original: str | None = None  # the code at the site before the fix
    applied: bool = False  # True when this run wrote the fix into the output
    advice: str | None = None  # what to do by hand (manual findings) or why the fix is unsafe
    doc_url: str | None = None

    @property
    def fixable(self) -> bool:
        return self.applicability is not Applicability.MANUAL

    def sort_key(self) -> tuple[str, int, int, str]:
        # the order of (path, start, code), without a call to Position's generated `__lt__`
        # per comparison (sorting a warm lint's thousands of findings)
        return (self.path, self.start.line, self.start.column, self.code)

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "message": self.message,
            "path": self.path,
            "start": {"line": self.start.line, "column": self.start.column},
            "end": {"line": self.end.line, "column": self.end.column},
            "severity": self.severity.value,
            "applicability": self.applicability.value,
            "target": self.target,
            "replacement": self.replacement,
            "original": self.original,
            "applied": self.applied,
            "advice": self.advice,
            "doc_url": self.doc_url,
        }


class FileStatus(str, enum.Enum):
    CHANGED = "changed"  # the port differs from the original
    UNCHANGED = "unchanged"  # parsed and checked; nothing to rewrite
    SKIPPED = "skipped"  # not parsed (no CUDA token, excluded file, ignore-file pragma)
    ERROR = "error"  # could not be read, decoded or parsed; left byte-identical


@dataclass
class FileResult:
    """What porter made of one file. `new_source` is set only when the port differs."""

    path: str
    status: FileStatus
    findings: list[Finding] = field(default_factory=list)
    original_source: bytes | None = None
    new_source: bytes | None = None
    reason: str | None = None  # why skipped or failed, with the line for syntax errors
    error_line: int | None = None
    suppressed: list[Finding] = field(default_factory=list)  # silenced by an inline pragma
    # decided by the run, not by the file (the per-file time limit, a worker that died): never
    # cached, so the next run, with a longer limit or more memory, ports the file again
    transient: bool = False
    # each finding's whitespace-normalised lines (`porter.files.sites.finding_texts`), given
    # instead of `original_source` where a warm run's stat index answered without reading the
    # file: what lint fingerprints the findings by
    texts: list[str] | None = None

    @property
    def changed(self) -> bool:
        return self.status is FileStatus.CHANGED
