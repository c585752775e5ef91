"""The result of one parity check: plain dataclasses with to_dict(), so any report model can
take them over (porter/verify/report.py renders them to the terminal, JSON, Markdown, HTML)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

EXIT_PASS, EXIT_FAIL, EXIT_ERROR = 0, 1, 2


@dataclass
class TensorComparison:
    name: str
    shape: list[int]
    dtype: str
    rtol: float
    atol: float
    passed: bool
    max_abs: float | None = None
    max_rel: float | None = None
    mean_abs: float | None = None
    cosine: float | None = None
    ref_nan: int = 0
    ref_inf: int = 0
    ported_nan: int = 0
    ported_inf: int = 0
    mismatched: int = 0  # elements outside tolerance
    problem: str | None = None  # shape / dtype mismatch, missing on one side


@dataclass
class SideSummary:
    role: str
    status: str
    device: str  # what really ran, e.g. "xla (CPU PJRT, emulated)"
    hardware: bool
    emulated: bool
    shim: str | None
    versions: dict
    wall_s: float
    phase_s: dict
    perf: dict | None
    graph_breaks: dict | None
    error: dict | None
    notes: list[str] = field(default_factory=list)
    log_tail: str = ""


@dataclass
class Gap:
    """A measured reason the port will be slow (or a probe that could not run)."""

    rank: int
    severity: str  # error | warning | info
    kind: str  # recompile | cpu_fallback | host_sync | graph_break | dynamic_shape | transfer …
    side: str
    title: str
    advice: str
    evidence: list[str] = field(default_factory=list)


@dataclass
class ParityResult:
    verdict: str  # pass | fail | error
    reasons: list[str]
    config: dict
    reference: SideSummary | None
    ported: SideSummary | None
    outputs: list[TensorComparison] = field(default_factory=list)
    first_divergence: dict | None = None
    first_nonfinite: dict = field(default_factory=dict)
    layers_compared: int = 0
    layer_issues: dict = field(default_factory=dict)
    state_dict: dict | None = None
    gradients: dict | None = None
    train: dict | None = None
    gaps: list[Gap] = field(default_factory=list)
    wall_s: float = 0.0
    workdir: str | None = None

    @property
    def exit_code(self) -> int:
        return {"pass": EXIT_PASS, "fail": EXIT_FAIL}.get(self.verdict, EXIT_ERROR)

    def to_dict(self) -> dict:
        data = asdict(self)
        data["exit_code"] = self.exit_code
        data["schema"] = "porter.parity/1"
        return data


__all__ = ["TensorComparison", "SideSummary", "Gap", "ParityResult", "EXIT_PASS", "EXIT_FAIL", "EXIT_ERROR"]
