"""The portable trace file: one safetensors file whose metadata holds a JSON manifest.

Written by `porter trace record` (and by each side of a script-mode parity check), read by
`porter trace compare` / `trace ops` on any machine. Tensors (statistics, small strided
samples, the loss and grad-norm curves) are safetensors; everything else is JSON under the
metadata key ``porter.trace``. Nothing is pickled, so a trace from an untrusted machine can be
opened safely. Whole activations are never stored: a trace stays in the kilobytes to a few
megabytes whatever the model size (see `LIMITS`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

SCHEMA = "porter.trace/1"
SCHEMA_MAJOR = 1
META_KEY = "porter.trace"
STAT_NAMES = ("mean", "std", "min", "max", "absmax", "l2", "nan", "inf")
# Size bounds: per module output, a strided sample of at most `sample_elements`; per initial
# parameter, its values when it has at most `param_elements` (else a strided sample of that
# many) and a checksum of all its bits; at most `module_calls` calls recorded per module; at
# most `max_entries` module outputs/parameters.
LIMITS = {"sample_elements": 64, "param_elements": 4096, "module_calls": 2, "max_entries": 4000}


class TraceError(ValueError):
    """The file is not a porter trace, or one of an unknown schema."""


def _finite(x):
    """JSON has no NaN/Inf: non-finite numbers are written as strings ("nan", "inf")."""
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    return x


def unfinite(x):
    """The inverse of `_finite` for numbers read back from a manifest."""
    if isinstance(x, str) and x in ("nan", "inf", "-inf"):
        return float(x)
    if isinstance(x, dict):
        return {k: unfinite(v) for k, v in x.items()}
    if isinstance(x, list):
        return [unfinite(v) for v in x]
    return x


@dataclass
class Trace:
    manifest: dict
    tensors: dict  # name -> torch.Tensor (CPU)
    path: Path | None = None

    @property
    def side(self) -> dict:
        return self.manifest.get("side", {})

    def tensor(self, name: str | None):
        return None if name is None else self.tensors.get(name)

    @property
    def world_size(self) -> int:
        """Processes recorded: a run under torchrun holds one trace per rank."""
        return 1 + len(self.manifest.get("ranks") or [])

    def rank(self, r: int) -> Trace:
        """The trace of one rank (rank 0 is the file's own manifest)."""
        if r == 0:
            manifest = {k: v for k, v in self.manifest.items() if k != "ranks"}
            tensors = {k: v for k, v in self.tensors.items() if not k.startswith("rank")}
            return Trace(manifest, tensors, self.path)
        prefix = f"rank{r}."
        return Trace(self.manifest["ranks"][r - 1],
                     {k[len(prefix):]: v for k, v in self.tensors.items() if k.startswith(prefix)},
                     self.path)

    def rank_manifests(self) -> list[dict]:
        return [self.manifest, *(self.manifest.get("ranks") or [])]


def write_trace(path: Path, manifest: dict, tensors: dict) -> Path:
    from safetensors.torch import save_file

    manifest = dict(manifest)
    manifest["schema"] = SCHEMA
    clean = {k: v.detach().to("cpu").contiguous() for k, v in tensors.items()}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    save_file(clean, str(tmp), metadata={META_KEY: json.dumps(_finite(manifest))})
    tmp.replace(path)
    return path


def merge_ranks(traces: list[Trace], path: Path) -> Trace:
    """One file for a run of several processes: rank 0's manifest and tensors, each other
    rank's manifest under `ranks` and its tensors prefixed `rank<r>.`."""
    manifest = dict(traces[0].manifest)
    manifest["ranks"] = [t.manifest for t in traces[1:]]
    tensors = dict(traces[0].tensors)
    for r, t in enumerate(traces[1:], 1):
        tensors.update({f"rank{r}.{k}": v for k, v in t.tensors.items()})
    write_trace(path, manifest, tensors)
    return Trace(manifest, tensors, Path(path))


def read_trace(path: Path) -> Trace:
    try:
        from safetensors import SafetensorError
        from safetensors.torch import safe_open
    except ImportError as exc:  # pragma: no cover - the verify/xla extras install it
        raise TraceError("reading traces needs safetensors: pip install 'porter[verify]'") from exc
    path = Path(path)
    if not path.is_file():
        raise TraceError(f"{path}: no such file")
    try:
        with safe_open(str(path), framework="pt") as fh:
            meta = fh.metadata() or {}
            tensors = {k: fh.get_tensor(k) for k in fh.keys()}
    except (SafetensorError, OSError, ValueError) as exc:
        raise TraceError(f"{path}: not a safetensors file ({exc})") from exc
    if META_KEY not in meta:
        raise TraceError(f"{path}: a safetensors file without a porter trace manifest")
    manifest = unfinite(json.loads(meta[META_KEY]))
    schema = str(manifest.get("schema", ""))
    name, _, version = schema.partition("/")
    if name != "porter.trace" or not version.isdigit():
        raise TraceError(f"{path}: unknown schema {schema!r}")
    if int(version) > SCHEMA_MAJOR:
        raise TraceError(f"{path}: schema {schema} is newer than this porter reads "
                         f"({SCHEMA}); upgrade porter")
    return Trace(manifest, tensors, path)


__all__ = ["SCHEMA", "STAT_NAMES", "LIMITS", "Trace", "TraceError", "write_trace", "read_trace", "merge_ranks",
           "unfinite"]
