"""What one parity check is asked to do: the user's options, merged from the CLI and
`[tool.porter.parity]` in pyproject.toml, and the dtype-aware default tolerances."""

from __future__ import annotations

import math
import sys
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    import tomli as tomllib

TARGETS = ("neuron", "tpu", "xla")
REPORT_SUFFIXES = (".json", ".md", ".markdown", ".html", ".htm")  # what `report.write_report` writes
DTYPES = ("float32", "bfloat16", "float16")
_DTYPE_ALIASES = {
    "fp32": "float32",
    "f32": "float32",
    "bf16": "bfloat16",
    "fp16": "float16",
    "f16": "float16",
    "half": "float16",
}

# (rtol, atol) by the lower of the output dtype and the autocast dtype. Wider than
# torch.testing's same-device defaults: the two sides run different kernels on different
# devices, and errors add up through the layers.
DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float32": (1e-4, 1e-5),
    "float16": (1e-2, 1e-3),
    "bfloat16": (5e-2, 1e-2),
}


def normalize_dtype(name: str) -> str:
    key = name.strip().lower().removeprefix("torch.")
    key = _DTYPE_ALIASES.get(key, key)
    if key not in DTYPES:
        raise ValueError(f"unknown dtype {name!r}: choose one of {', '.join(DTYPES)}")
    return key


def parse_ref(ref: str, what: str) -> tuple[str, str]:
    """`package.module:function` -> (module, function)."""
    module, sep, attr = ref.partition(":")
    if not sep or not module or not attr or not all(p.isidentifier() for p in attr.split(".")):
        raise ValueError(f"{what} must look like MODULE:FUNCTION, got {ref!r}")
    return module, attr


@dataclass(frozen=True)
class ParityConfig:
    original: Path
    ported: Path
    entry: str  # MODULE:FACTORY
    inputs: str | None = None  # MODULE:FN; default: `example_inputs` next to the factory
    target: str = "xla"
    train_steps: int = 0
    dtype: str = "float32"  # compute dtype: bfloat16/float16 run both sides under autocast
    rtol: float | None = None  # None: dtype-aware default
    atol: float | None = None
    report: Path | None = None
    timeout: float = 600.0  # per side, seconds
    seed: int = 0
    warmup: int = 2
    repeats: int = 5
    grad_top: int = 10  # worst-N parameter gradients in the report
    explain: bool = True  # run torch._dynamo.explain for graph breaks
    python: str = field(default=sys.executable)

    def __post_init__(self) -> None:
        if self.target not in TARGETS:
            raise ValueError(f"unknown target {self.target!r}: choose one of {', '.join(TARGETS)}")
        object.__setattr__(self, "dtype", normalize_dtype(self.dtype))
        parse_ref(self.entry, "--entry")
        if self.inputs is not None:
            parse_ref(self.inputs, "--inputs")
        if self.train_steps < 0:
            raise ValueError("--train-steps must be >= 0")
        self._check_numbers()
        from porter.report import name_suffix  # (`--report .html`: `Path.suffix` is empty)

        if self.report is not None and name_suffix(self.report) not in REPORT_SUFFIXES:
            # (before the run: it was refused after both sides had run; eighteenth read)
            raise ValueError(f"--report {self.report}: use a .json, .md or .html file name")
        if self.warmup < 0 or self.repeats < 1:
            raise ValueError("warmup must be >= 0 and repeats >= 1")
        for side in ("original", "ported"):
            path = Path(getattr(self, side))
            if not path.is_dir():
                raise ValueError(f"--{side} {str(path)!r} is not a directory")
            object.__setattr__(self, side, path.resolve())

    def _check_numbers(self) -> None:
        """The numbers the command line checks (porter.cli.options), as `[tool.porter.parity]`
        gives them too: TOML has `nan` and `inf`, and a NaN tolerance or an infinite timeout ran
        both sides and then ended in a traceback or passed any port (seventeenth read)."""
        if not 0 < self.timeout <= 10**6:
            raise ValueError("--timeout must be a number of seconds above 0, at most 1,000,000")
        for name in ("rtol", "atol"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise ValueError(f"--{name} must be a finite tolerance of 0 or more, not {value!r}")
        if not 0 <= self.seed <= 2**31 - 1:
            raise ValueError("--seed must be from 0 to 2,147,483,647")

    @property
    def inputs_ref(self) -> str:
        if self.inputs:
            return self.inputs
        return f"{parse_ref(self.entry, '--entry')[0]}:example_inputs"

    def tolerances(self, output_dtype: str | None = None) -> tuple[float, float]:
        """(rtol, atol) for an output: the user's values, else the default for the lower of
        the output dtype and the compute dtype."""
        order = ["float32", "float16", "bfloat16"]  # increasing default tolerance
        key = self.dtype
        if output_dtype in DEFAULT_TOLERANCES and order.index(output_dtype) > order.index(key):
            key = output_dtype
        rtol, atol = DEFAULT_TOLERANCES[key]
        return (self.rtol if self.rtol is not None else rtol, self.atol if self.atol is not None else atol)

    def to_dict(self) -> dict:
        data = asdict(self)
        for key in ("original", "ported", "report"):
            data[key] = None if data[key] is None else str(data[key])
        data.pop("python")
        return data


_PYPROJECT_KEYS = {f.name.replace("_", "-"): f.name for f in fields(ParityConfig)} | {
    f.name: f.name for f in fields(ParityConfig)
}


def load_pyproject_settings(start: Path | None = None) -> tuple[dict, Path | None]:
    """`[tool.porter.parity]` from the nearest pyproject.toml at or above `start`.
    Relative paths in it are taken relative to that file's folder."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            out = {}
            for key, value in _parity_table(candidate).items():
                if key not in _PYPROJECT_KEYS or key == "python":
                    raise ValueError(f"{candidate}: unknown key {key!r} in [tool.porter.parity]")
                name = _PYPROJECT_KEYS[key]
                _check_kind(candidate, key, name, value)
                if name in ("original", "ported", "report"):
                    value = (folder / value).resolve()
                out[name] = value
            return out, candidate
    return {}, None


# what a setting's annotation admits from TOML (a bool is no number; a path is a string)
_KINDS: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "Path": (str,),
    "int": (int,),
    "float": (int, float),
    "bool": (bool,),
}
_KIND_NAMES = {
    "str": "a string",
    "Path": "a path (a string)",
    "int": "a whole number",
    "float": "a number",
    "bool": "true or false",
}


def _check_kind(candidate: Path, key: str, name: str, value: object) -> None:
    """A ValueError naming the file and key when `value` is not of the kind the setting takes
    (`entry = 0` ended `parity-check` in an AttributeError traceback; eighteenth read)."""
    kind = str(next(f.type for f in fields(ParityConfig) if f.name == name)).split(" | ")[0]
    admitted = _KINDS.get(kind)
    if admitted is None:
        return
    if not isinstance(value, admitted) or (kind != "bool" and isinstance(value, bool)):
        raise ValueError(f"{candidate}: `{key}` in [tool.porter.parity] must be {_KIND_NAMES[kind]}")


def _parity_table(candidate: Path) -> dict[str, Any]:
    """`[tool.porter.parity]` of `candidate`, or a ValueError naming the file: one that cannot be
    read, or a `tool`, `tool.porter` or `tool.porter.parity` that is not a table (`tool.porter = 5`
    ended `parity-check` in an AttributeError traceback; eighteenth read)."""
    try:
        with candidate.open("rb") as fh:
            node: Any = tomllib.load(fh)
    except OSError as exc:
        raise ValueError(f"{candidate}: cannot read: {exc.strerror or exc}") from None
    for depth, part in enumerate(("tool", "porter", "parity")):
        node = node.get(part, {})
        if not isinstance(node, dict):
            raise ValueError(f"{candidate}: `{'.'.join(('tool', 'porter', 'parity')[: depth + 1])}` is not a table")
    return node


def build_config(cli: dict, start: Path | None = None) -> ParityConfig:
    """CLI values (None = not given) override pyproject values, which override defaults."""
    settings, _ = load_pyproject_settings(start)
    merged = dict(settings)
    merged.update({k: v for k, v in cli.items() if v is not None})
    missing = [k for k in ("original", "ported", "entry") if k not in merged]
    if missing:
        raise ValueError(
            "missing required setting(s): "
            + ", ".join("--" + m for m in missing)
            + " (give them on the command line or in [tool.porter.parity])"
        )
    merged["original"] = Path(merged["original"])
    merged["ported"] = Path(merged["ported"])
    if merged.get("report") is not None:
        merged["report"] = Path(merged["report"])
    return ParityConfig(**merged)


__all__ = [
    "ParityConfig",
    "DEFAULT_TOLERANCES",
    "build_config",
    "load_pyproject_settings",
    "normalize_dtype",
    "parse_ref",
    "replace",
]
