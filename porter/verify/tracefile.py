"""The portable trace file: one safetensors file whose metadata holds a JSON manifest.

Written by `porter trace record` (and by each side of a script-mode parity check), read by
`porter trace compare` / `trace ops` on any machine. Tensors (statistics, small strided
samples, the loss and grad-norm curves) are safetensors; everything else is JSON under the
metadata key ``porter.trace``. Nothing is pickled, so a trace from an untrusted machine can be
opened safely. Whole activations are never stored: a trace stays in the kilobytes to a few
megabytes whatever the model size (see `LIMITS`).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path

SCHEMA = "porter.trace/1"
SCHEMA_MAJOR = 1
META_KEY = "porter.trace"
STAT_NAMES = ("mean", "std", "min", "max", "absmax", "l2", "nan", "inf")
# Size bounds: per module output, a strided sample of at most `sample_elements`; per initial
# parameter, its values when it has at most `param_elements` (else a strided sample of that
# many) and a checksum of all its bits; at most `module_calls` calls recorded per module; at
# most `max_entries` module calls and `max_entries` parameters; at most `outputs_per_call`
# tensors of one call's output and `max_outputs` in all. Each tensor recorded is two in the
# file (statistics and sample), so one process writes at most
# 2 * (max_outputs + max_entries) + 2 tensors; several processes (torchrun) share
# `MAX_TRACE_TENSORS` (see `process_limits`).
LIMITS = {
    "sample_elements": 64,
    "param_elements": 4096,
    "module_calls": 2,
    "max_entries": 4000,
    "outputs_per_call": 16,
    "max_outputs": 8000,
}
# the most tensors a trace file may hold: a file of more is not one porter wrote, and is refused
# before any tensor is made (a trace of 500,000 empty tensors, 33 MB, once cost `trace compare`
# 27-55 s and 1.5-1.8 GB before its manifest was looked at)
MAX_TRACE_TENSORS = 200_000
# the most processes one trace holds (rank 0 and its `ranks`): porter runs one node's ranks as
# local processes (a node has at most a few hundred accelerator cores), and the ranks share
# `MAX_TRACE_TENSORS` (`process_limits`). A manifest of more is not one porter wrote: a 4 MB trace
# of a million empty ranks, far inside the size bound, once ran `trace compare` past two minutes
# and 4 GB (sixteenth read)
MAX_TRACE_PROCESSES = 1024


# the most operator entries one trace holds, its ranks' together: operator entries name no tensor,
# so `MAX_TRACE_TENSORS` did not bound them (700,000 of them, a 66 MB file, cost `trace ops` 18 s
# of CPU, 2.1 GB and 95 MB of terminal rows: twentieth read). One process records at most its
# share (`process_ops`), the most called first; a step of a real model runs a few hundred kinds.
MAX_TRACE_OPS = 200_000


def process_ops(world_size: int) -> int:
    """Operator entries one process of `world_size` records at most (its share of `MAX_TRACE_OPS`)."""
    return MAX_TRACE_OPS // max(1, min(world_size, MAX_TRACE_PROCESSES))


def process_limits(world_size: int) -> tuple[int, int]:
    """(module outputs, parameters) one process of `world_size` records at most, so that the
    file the ranks' traces are merged into stays within `MAX_TRACE_TENSORS` (at most
    `MAX_TRACE_PROCESSES` ranks: 37 of each). A floor of 64 of each let a rank of 622 or more
    write 322 tensors, and the merged file of their run passed the bound: refused when read, the
    run was lost (twentieth read's leftover)."""
    share = (MAX_TRACE_TENSORS // max(1, world_size) - 8) // 5  # 3 tensors an output, 2 a parameter
    return min(LIMITS["max_outputs"], max(1, share)), min(LIMITS["max_entries"], max(1, share))


def process_bytes(world_size: int) -> int:
    """Bytes of parameter values one process of `world_size` records at most: the ranks' traces
    are merged into one file, which `read_trace` reads to `MAX_TRACE_BYTES`; each rank gets
    three quarters of its share (its module outputs and manifest take the rest: at most 8,000
    outputs of ~1.6 KB for one process). 4,000 float32 parameters of 4,096+ values are 64 MB
    a process, so four ranks of them already passed the bound (twenty-second read)."""
    return MAX_TRACE_BYTES * 3 // 4 // max(1, min(world_size, MAX_TRACE_PROCESSES))


class TraceError(ValueError):
    """The file is not a porter trace, or one of an unknown schema."""


def source_digest(package: Path) -> str:
    """The first 16 hex digits of a SHA-256 over the package's `.py` files (relative path and
    bytes, in path order): which porter code recorded a trace. `porter.__version__` is the one
    in porter/__init__.py, 0.1.0 in every build, and the git commit is not in a wheel or an sdist;
    the code that runs is, in each (twenty-fourth trace read's leftover). Not the lint cache's
    `salt`: that also covers rule data and parser versions, which record nothing."""
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def finite(x):
    """JSON has no NaN/Inf: non-finite numbers are written as strings ("nan", "inf"), in a
    trace's manifest and in the JSON reports (Python writes `NaN`, which JSON readers refuse)."""
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if isinstance(x, dict):
        return {k: finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [finite(v) for v in x]
    return x


def unfinite(x):
    """The inverse of `finite` for numbers read back from a manifest."""
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
    tensors: Mapping  # name -> torch.Tensor (CPU); a file's are made when read (LazyTensors)
    path: Path | None = None
    _ranks: dict[int, Mapping] | None = field(default=None, repr=False, compare=False)  # `rank`'s, made once

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
        if self._ranks is None:
            self._ranks = _by_rank(self.tensors)
        tensors = self._ranks.get(r, {})
        if r == 0:
            manifest = {k: v for k, v in self.manifest.items() if k != "ranks"}
            return Trace(manifest, tensors, self.path)
        return Trace(self.manifest["ranks"][r - 1], tensors, self.path)

    def rank_manifests(self) -> list[dict]:
        return [self.manifest, *(self.manifest.get("ranks") or [])]


def _by_rank(tensors: Mapping) -> dict[int, Mapping]:
    """The tensors of each rank, by their names in that rank's manifest (`rank<r>.NAME`; rank 0's
    have no prefix), in one pass over the file's tensors' names (a pass per rank made a trace of
    20,000 ranks and 150,000 tensors run for minutes); a file's tensors are not made here."""
    names: dict[int, dict[str, str]] = {}
    for full in tensors:
        r, name = 0, full
        if name.startswith("rank"):
            head, dot, rest = name[4:].partition(".")
            if dot and head.isascii() and head.isdigit() and not head.startswith("0"):
                r, name = int(head), rest
        names.setdefault(r, {})[name] = full
    if isinstance(tensors, LazyTensors):
        return {r: tensors.renamed(m) for r, m in names.items()}
    return {r: {name: tensors[full] for name, full in m.items()} for r, m in names.items()}


def paired(ref: list, port: list, field: str) -> list[tuple[dict, dict | None]]:
    """Each entry of `ref` (a manifest's modules or parameters) with the entry of `port` of the
    same `field` (key, name) and the same place among the entries of that value: the n-th with
    the n-th. A trace may hold one key more than once (one written before keys were made
    unique, or by another tool): looked up in a dict of `port`, every one of them met the
    port's last, and a faithful port failed (twentieth read)."""
    by: dict = {}
    for entry in port:
        by.setdefault(entry[field], []).append(entry)
    seen: dict = {}
    out = []
    for entry in ref:
        n = seen[entry[field]] = seen.get(entry[field], -1) + 1
        same = by.get(entry[field], [])
        out.append((entry, same[n] if n < len(same) else None))
    return out


def write_trace(path: Path, manifest: dict, tensors: Mapping) -> Path:
    """The trace written whole to `path` (`trace record -o`, a file named for output): a link
    of that name is replaced, never written through (porter.pipeline.writer.write_output)."""
    from safetensors.torch import save

    from porter.pipeline.writer import write_output

    manifest = dict(manifest)
    manifest["schema"] = SCHEMA
    clean = {k: v.detach().to("cpu").contiguous() for k, v in tensors.items()}
    path = Path(path)
    write_output(path, save(clean, metadata={META_KEY: json.dumps(finite(manifest))}))
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


# a trace is kilobytes to a few megabytes (`LIMITS`); a file far past that is not one porter wrote
MAX_TRACE_BYTES = 256 * 2**20
MAX_MANIFEST_DEPTH = 32


# what a trace that passed `read_trace`'s checks but still holds a field of an unexpected shape
# (deeper than the checks go) raises in a comparison or its report: the file's fault, said in
# one line naming it (`trace compare`, `trace ops`, `parity-check --reference-trace`)
MALFORMED = (
    KeyError,
    TypeError,
    ValueError,
    AttributeError,
    IndexError,
    RuntimeError,
    ZeroDivisionError,
    OverflowError,
    RecursionError,
)


def _opt(spec):
    """May be null (a reader that takes `x or default`)."""
    return ("optional", spec)


def _req(spec):
    """Must be there (a reader that indexes `x["key"]`)."""
    return ("required", spec)


def _list(spec):
    return ("list", spec)


# the largest weight of an integer output's fourth row of block sums (`recorder._hashed`)
HASHED_WEIGHT = 1 << 16
# why an output made inside a torch.func transform has no statistics (a module entry's `unsampled`):
# written by the recorder, read by trace compare (`_after_transform`)
TRANSFORMED = "inside a torch.func transform (vmap, grad)"


def call_number(key: str) -> tuple[str, int]:
    """A module output's key as its module and call number (`0#2`: ("0", 2); `0`: ("0", 1)): the
    one reading of the `#n` the recorder gives a module's later calls, for the recorder's regions
    (`_reference_calls`) and trace compare's pairing (`_call_base`)."""
    base, sep, n = key.rpartition("#")
    return (base, int(n)) if sep and n.isdigit() else (key, 1)


_NUMBER = (int, float)
_STATS, _SAMPLE, _BLOCKS = ("tensor", "stats"), ("tensor", "sample"), ("tensor", "blocks")
_OUTPUT = {
    "shape": _req(_list(int)),
    "dtype": _opt(str),
    "sample": _req(_SAMPLE),
    "stats": _req(_STATS),
    "blocks": _opt(_BLOCKS),
    "blocks_cut": _opt(str),
}
_FALLBACK = {"op": _req(str), "count": _opt(_NUMBER), "per_step": _opt(_NUMBER)}
_CALL_SITE = {"call": _req(str), "location": _opt(str), "per_step": _opt(_NUMBER)}
# The fields `porter trace compare`, `trace ops` and the reports read, with the types they read
# them as. A field not listed may hold anything; a listed one that is there has its type (and
# is there when marked `_req`); only `_opt` fields may be null.
_MANIFEST = {
    "schema": _req(str),
    "side": _opt({"label": _opt(str), "kind": _opt(str), "notes": _list(str), "versions": dict}),
    "steps": _list(
        {
            "loss": _req(_NUMBER),
            "grad_norm": _req(_NUMBER),
            "lr": _req(_list(_NUMBER)),
            "step_time_s": _opt(_NUMBER),
            "without_grad": _opt(int),
            "group_sizes": _opt(_list(int)),
            "scaler_skipped": _opt(int),
            "other_optimizer_steps": _opt(int),
        }
    ),
    "modules": _list(
        {
            "key": _req(str),
            "type": _opt(str),
            "outputs": _req(_list(_OUTPUT)),
            "calls": _opt(int),
            "fed": _opt(bool),
            "unsampled": _opt(_list(str)),
            "built": _opt(_list(int)),
            "stateless": _opt(bool),
            "nograd": _opt(bool),
        }
    ),
    "parameters": _list({"name": _req(str), "shape": _req(_list(int)), "sample": _req(_SAMPLE), "stats": _req(_STATS)}),
    "buffers": _list({"key": _req(str), "type": _opt(str), "outputs": _req(_list(_OUTPUT))}),
    "inputs": _list({"key": _req(str), "type": _opt(str), "outputs": _req(_list(_OUTPUT)), "nograd": _opt(bool)}),
    "tied": _list(_list(str)),
    "param_groups": _list(_list(str)),
    "param_groups_added": _list(_list(str)),
    "precision": {
        "regime": str,
        "autocast_dtypes": _list(str),
        "matmul": _opt({"cuda_matmul": _opt(str), "cudnn_conv": _opt(str), "xla_mat_mul": _opt(str)}),
    },
    "model_nograd_calls": _opt(int),
    "model_copies": _opt(int),
    "model_uncalled": _opt(bool),
    "calls_unrestarted": _opt(bool),
    "model_listed": _opt(dict),
    "model_rooted": _opt(dict),
    "model_copy_rates": _list(
        {
            "rates": _req(_list(_NUMBER)),
            "shrinks": _list(_NUMBER),
            "residual": _req(_NUMBER),
            "shrink_noise": _NUMBER,
            "rate_noise": _NUMBER,
        }
    ),
    # read by `trace compare`'s lines on step 1 (its evaluations, calls past those recorded): a
    # `limits` of another type was an AttributeError in every comparison, a text shown as a count
    # (twenty-sixth read)
    "limits": _opt({"module_calls": _opt(int)}),
    "ops": _list({"op": _req(str), "count": _req(int), "dtypes": _list(str), "devices": _list(str)}),
    "perf": _opt(
        {
            "xla": _opt(
                {
                    "recompiles_after_warmup": _req(_NUMBER),
                    "device_to_host_transfers_per_step": _req(_NUMBER),
                    "cpu_fallback_ops": _req(_list(_FALLBACK)),
                    "compiles_per_step": _list(_NUMBER),
                }
            ),
            "neuron": _opt({"cpu_fallback_ops": _opt(_list(_FALLBACK))}),
            "syncs": _opt(
                {"host_syncs": _list(_CALL_SITE), "dynamic_shape_ops": _list(_CALL_SITE), "casts": _list(_CALL_SITE)}
            ),
            "peak_memory": _opt(dict),
            "steady_step_s": _opt(_NUMBER),
        }
    ),
    "error": _opt({"type": _opt(str), "message": _opt(str), "location": _opt(str)}),
    "notes": _list(str),
    # what the program was given and where it ran, the user's text: an argument `inf` is not a
    # number (read back as one, `trace compare` of that run's trace failed; twenty-second read)
    "command": _list(str),
    "tree": _opt(str),
    "porter": _opt(str),
    "porter_source": _opt(str),
    "libraries": _opt(dict),
    "compiled_frames": _opt(int),
    # `drawn` (a bool: the spec's scalars are numbers and names) is read as `is True`
    "program_seeds": _list({"call": _opt(str), "seed": _opt(int), "location": _opt(str)}),
    "host": _opt({"hostname": _opt(str), "platform": _opt(str), "machine": _opt(str)}),
    "wall_s": _opt(_NUMBER),
    "steps_recorded": _opt(int),
    "ops_scope": _opt(str),
}


def _check(value, spec, where: str, tensors: Mapping) -> None:
    """TraceError naming the first field of `value` that is not of `spec`'s type."""
    kind = _kind(spec)
    while kind in ("optional", "required"):  # unwrapped here, not a call each
        if kind == "optional" and value is None:
            return
        spec = spec[1]
        kind = _kind(spec)
    if kind == "list":
        _check_list(value, spec[1], where, tensors)
    elif kind == "tensor":
        _check_tensor(value, spec[1], where, tensors)
    elif isinstance(spec, dict):
        _check_object(value, spec, where, tensors)
    else:
        _check_type(value, spec, where)


def _kind(spec) -> str | None:
    return spec[0] if type(spec) is tuple and spec and type(spec[0]) is str else None


def _check_list(value, item_spec, where: str, tensors: Mapping) -> None:
    """A list whose every item is of `item_spec`."""
    if type(value) is not list:
        raise TraceError(f"`{where}` is not a list")
    fields = _number_fields(item_spec)
    if fields is not None:  # objects of numbers (steps): checked without a call a field, the
        for i, item in enumerate(value):  # first one that is not as they should be by `_check`
            if not _numbers_as_specified(item, fields):
                _check(item, item_spec, f"{where}[{i}]", tensors)
        return
    if _kind(item_spec) is None and not isinstance(item_spec, dict):  # a list of numbers or names:
        types = item_spec if isinstance(item_spec, tuple) else (item_spec,)  # checked in one loop
        for i, item in enumerate(value):
            if type(item) is bool or not isinstance(item, types):
                _check_type(item, item_spec, f"{where}[{i}]")
        return
    for i, item in enumerate(value):
        _check(item, item_spec, f"{where}[{i}]", tensors)


# a sample larger than any porter records (once per tensor, the bound was computed per tensor)
_LARGEST_SAMPLE = 4 * max(v for k, v in LIMITS.items() if k.endswith("_elements"))


def _check_tensor(value, role: str, where: str, tensors: Mapping) -> None:
    """The name of a tensor of the file, of the shape its `role` ("stats", "sample") allows: a
    sample larger than porter records is not one of its traces."""
    if type(value) is not str or value not in tensors:
        raise TraceError(f"`{where}` names no tensor of the file")
    dim, numel, complex_ = _tensor_info(tensors, value)
    if role == "stats" and (dim != 1 or numel != len(STAT_NAMES) or complex_):
        raise TraceError(f"`{where}` ({value}) is not {len(STAT_NAMES)} statistics")
    if role == "sample" and numel > _LARGEST_SAMPLE:
        raise TraceError(f"`{where}` ({value}) is larger than a sample")
    if role == "blocks" and (dim != 2 or (numel % 2 and numel % 3) or numel > 4 * _LARGEST_SAMPLE or complex_):
        # two rows, or three or four for an integer output (`recorder._placed_sums`)
        raise TraceError(f"`{where}` ({value}) is not two to four rows of block sums")


def _number_fields(spec) -> list[tuple[str, bool, bool, bool]] | None:
    """For an object spec whose every field is a number or a list of numbers (a step): (name,
    required, may be null, a list) a field; None for any other spec."""
    if not isinstance(spec, dict):
        return None
    fields = []
    for key, sub in spec.items():
        kind = _kind(sub)
        required, nullable = kind == "required", kind == "optional"
        inner = sub[1] if kind in ("optional", "required") else sub
        listed = _kind(inner) == "list"
        if (inner[1] if listed else inner) != _NUMBER:
            return None
        fields.append((key, required, nullable, listed))
    return fields


def _numbers_as_specified(item, fields: list[tuple[str, bool, bool, bool]]) -> bool:
    """Whether `item` is an object whose `_number_fields` hold what they should (no bool)."""
    if type(item) is not dict:
        return False
    for key, required, nullable, listed in fields:
        if key not in item:
            if required:
                return False
            continue
        v = item[key]
        if v is None and nullable:
            continue
        if listed:
            if type(v) is not list or not all(type(x) is int or type(x) is float for x in v):
                return False
        elif type(v) is not int and type(v) is not float:
            return False
    return True


def _check_object(value, spec: dict, where: str, tensors: Mapping) -> None:
    """An object whose known fields are of their specs and whose required fields are there
    (fields the spec does not name are let through)."""
    if type(value) is not dict:
        raise TraceError(f"`{where}` is not an object")
    for key, sub in spec.items():
        here = f"{where}.{key}" if where else key
        if key in value:
            _check(value[key], sub, here, tensors)
        elif isinstance(sub, tuple) and sub and sub[0] == "required":
            raise TraceError(f"`{here}` is missing")


def _check_type(value, spec, where: str) -> None:
    """A value of one of the types `spec` names (a bool is no number, only a bool)."""
    types = spec if isinstance(spec, tuple) else (spec,)
    if (type(value) is bool and bool not in types) or not isinstance(value, types):
        raise TraceError(f"`{where}` is not {'a number' if types == _NUMBER else 'of type ' + types[0].__name__}")


def _depth(value, limit: int) -> int:
    """How deeply `value` nests (a value in a container is a level below it), stopping past
    `limit`: level by level, no recursion (a hostile manifest can nest deeper than Python's
    stack), and only containers are carried to the next level (every number and string of a
    1,024-rank manifest was pushed and popped once: 2 s of reading it)."""
    depth, level = 1, [value]
    while True:
        below: list = []
        filled = False
        for item in level:
            items = item.values() if type(item) is dict else item
            if items:
                filled = True
                below += [v for v in items if type(v) is dict or type(v) is list]  # (JSON's own types)
        if not filled:
            return depth
        depth += 1
        if depth > limit:
            return depth
        level = below


def read_trace(path: Path) -> Trace:
    """The trace in `path`, or TraceError saying in one line why the file is not one this porter
    reads: not a regular file, too large, not safetensors, a manifest that is not JSON, nests too
    deeply, has a field of the wrong type or names a tensor the file lacks, or a schema version
    this porter does not know. A trace comes from another machine: nothing in it is trusted."""
    try:
        from safetensors import SafetensorError
        from safetensors.torch import load as load_tensors
    except ImportError as exc:  # pragma: no cover - the verify/xla extras install it
        raise TraceError("reading traces needs safetensors: pip install 'porter[verify]'") from exc
    from porter.core.reading import Unreadable, read_regular

    path = Path(path)
    try:
        # read once, bounded, as a regular file (never a FIFO); everything below works on these
        # bytes, so the file cannot be swapped for something else between a check and a read
        data = read_regular(path, MAX_TRACE_BYTES)
    except Unreadable as exc:
        raise TraceError(f"{path}: {'no such file' if 'no such file' in exc.reason else exc.reason}") from None
    meta, tensors = _tensors(path, data, load_tensors, SafetensorError)
    manifest = _manifest(path, meta)
    _check_schema(path, manifest)
    try:
        _check(manifest, _MANIFEST, "", tensors)
        _check_ranks(manifest, tensors)
        _check_named_once(manifest)
    except TraceError as exc:
        raise TraceError(f"{path}: not a trace porter wrote: {exc}") from None
    return Trace(manifest, tensors, path)


def report_names_a_trace(report: Path | None, *traces: Path | None) -> Path | None:
    """The trace of `traces` that `report` names (the same path, a link to it, a hard link)."""
    if report is None:
        return None
    for trace in traces:
        if trace is None:
            continue
        try:
            same = os.path.samefile(report, trace)
        except OSError:
            same = report.resolve() == trace.resolve()
        if same:
            return trace
    return None


def holds_a_trace(path: Path) -> bool:
    """Whether the regular file `path` is a safetensors file whose metadata holds a porter trace
    manifest (of any version, read or not): what `trace record -o` may replace. Its header alone
    is read, never the tensors."""
    from porter.core.reading import Unreadable, open_regular

    try:
        fh, _ = open_regular(path, MAX_TRACE_BYTES)
    except Unreadable:
        return False
    with fh:
        try:
            size = int.from_bytes(fh.read(8), "little")
            if not 2 <= size <= MAX_TRACE_BYTES:
                return False
            header = json.loads(fh.read(size))
        except (OSError, ValueError, RecursionError):
            return False
    meta = header.get("__metadata__") if isinstance(header, dict) else None
    return isinstance(meta, dict) and isinstance(meta.get(META_KEY), str)


def _tensors(path: Path, data: bytes, load_tensors, safetensor_error) -> tuple[dict, Mapping]:
    """The safetensors file's metadata table and its tensors (`load_tensors`, `safetensor_error`:
    safetensors' own, imported by the caller); TraceError for bytes that are not a safetensors
    file, or one of more tensors than porter writes (counted before any is made)."""
    size = int.from_bytes(data[:8], "little") if len(data) >= 8 else -1
    if not 0 < size <= len(data) - 8:
        raise TraceError(f"{path}: not a safetensors file (its header length {size} does not fit the file)")
    # every tensor's entry in the header has its "data_offsets": counted in the bytes (a name
    # that holds the word counts twice, which only errs towards refusing a hostile file)
    _at_most(path, data.count(b'"data_offsets"', 8, 8 + size))
    try:
        meta, tensors = _lazy(path, data, load_tensors)
    except TraceError:
        raise
    except KeyError as exc:
        # safetensors reads dtypes its torch mapping lacks (`F8_E8M0`, a float8 scale format):
        # the lookup of the name was a KeyError traceback (seventeenth read)
        dtype = " ".join(str(exc.args[0] if exc.args else exc).split())[:40]
        raise TraceError(f"{path}: holds a tensor of dtype {dtype}, which torch has no type for here") from None
    except (safetensor_error, ValueError, RuntimeError, MemoryError, OverflowError, RecursionError, TypeError) as exc:
        raise TraceError(f"{path}: not a safetensors file ({' '.join(str(exc).split())[:200]})") from None
    return meta, tensors


class LazyTensors(MutableMapping):
    """A trace file's tensors by name, each made from the file's bytes when it is read and not
    kept: a trace of 1,024 ranks holds 86,000 tensors, and made all at once (safetensors'
    `load`) they cost 175 MB a trace, both traces of a `trace compare` held for the whole
    comparison (about 920 MB at its peak; eighteenth read's leftover). The file's own checks
    (header, offsets, sizes, dtypes) are safetensors' (`safe_open`), made when it is opened;
    a tensor's dtype and shape are known without making it (`info`). A tensor set by name is
    kept as set (a trace is a dict of tensors to its readers)."""

    def __init__(self, handle, info: dict[str, tuple[str, tuple[int, ...], str]]) -> None:
        self._handle = handle
        self._info = info  # name -> (safetensors dtype, shape, the name in the file)
        self._set: dict = {}  # tensors set since (they replace the file's of that name)

    def __getitem__(self, name: str):
        if name in self._set:
            return self._set[name]
        return self._handle.get_tensor(self._info[name][2])

    def __setitem__(self, name: str, value) -> None:
        self._info.pop(name, None)
        self._set[name] = value

    def __delitem__(self, name: str) -> None:
        if name in self._set:
            del self._set[name]
        else:
            del self._info[name]

    def __iter__(self):
        yield from self._info
        yield from self._set

    def __len__(self) -> int:
        return len(self._info) + len(self._set)

    def __contains__(self, name: object) -> bool:
        return name in self._info or name in self._set

    def info(self, name: str) -> tuple[str, tuple[int, ...]] | None:
        """(safetensors dtype, shape) of a tensor of the file; None for one set since."""
        if name in self._set:
            return None
        dtype, shape, _ = self._info[name]
        return dtype, shape

    def renamed(self, names: dict[str, str]) -> LazyTensors:
        """The tensors of `names` (new name -> name here) under their new names."""
        out = LazyTensors(self._handle, {new: self._info[old] for new, old in names.items() if old in self._info})
        out._set = {new: self._set[old] for new, old in names.items() if old in self._set}
        return out


def _lazy(path: Path, data: bytes, load_tensors) -> tuple[dict, Mapping]:
    """The file's metadata table and its tensors, made when read (`LazyTensors`): the bytes go
    to an anonymous memory file that safetensors opens and checks (never a path another process
    can swap). Where the platform has no such file (`os.memfd_create` is Linux's), every tensor
    is made at once. The header's entries are counted before any is looked at: a key written
    with a JSON escape (`"data\\u005foffsets"`) is the same key to safetensors, and none to the
    count of the bytes."""
    from safetensors import safe_open
    from safetensors.torch import _TYPES

    memfd = getattr(os, "memfd_create", None)
    handle = None
    if memfd is not None and os.path.isdir("/proc/self/fd"):
        try:
            fd = memfd("porter-trace", getattr(os, "MFD_CLOEXEC", 0))
        except OSError:  # a sandbox that refuses it (seccomp): made at once, below
            fd = -1
        if fd >= 0:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                handle = safe_open(f"/proc/self/fd/{fd}", framework="pt")  # maps the file: the fd may go
            finally:
                os.close(fd)
    if handle is None:
        size = int.from_bytes(data[:8], "little")
        header = json.loads(data[8 : 8 + size])
        if not isinstance(header, dict):
            raise ValueError("the header is not a JSON object")
        _at_most(path, len(header) - ("__metadata__" in header))
        return header.get("__metadata__") or {}, load_tensors(data)
    names = handle.keys()
    _at_most(path, len(names))
    info = {}
    for name in names:
        part = handle.get_slice(name)
        dtype = part.get_dtype()
        if dtype not in _TYPES:
            raise KeyError(dtype)
        shape = tuple(part.get_shape())
        # what torch checks when it makes the tensor (each stride, the later dimensions
        # multiplied out, an empty one's too, fits in 64 bits): `load` refused `[0, 4, 2**63 - 1]`
        # here; made only when read, the tensor would raise in the middle of a comparison
        if math.prod(d or 1 for d in shape[1:]) >= 2**63:
            raise ValueError(f"a tensor of shape {list(shape)[:8]} no tensor can have")
        info[name] = (dtype, shape, name)
    return handle.metadata() or {}, LazyTensors(handle, info)


def _tensor_info(tensors: Mapping, name: str) -> tuple[int, int, bool]:
    """(dimensions, values, complex) of the tensor `name`, without making it from a trace's file."""
    known = tensors.info(name) if isinstance(tensors, LazyTensors) else None
    if known is not None:
        dtype, shape = known
        return len(shape), math.prod(shape), dtype.startswith("C")
    t = tensors[name]
    return t.dim(), t.numel(), t.is_complex()


def _at_most(path: Path, count: int) -> None:
    """TraceError for a file of more tensors than a trace porter writes holds."""
    if count > MAX_TRACE_TENSORS:
        raise TraceError(
            f"{path}: holds {count} tensors; a trace porter writes holds at most {MAX_TRACE_TENSORS} "
            "(not a trace porter wrote)"
        )


def _manifest(path: Path, meta: dict) -> dict:
    """The porter manifest in the metadata, a JSON object of bounded depth with its non-finite
    numbers read back; TraceError otherwise."""
    if not isinstance(meta.get(META_KEY), str):
        raise TraceError(f"{path}: a safetensors file without a porter trace manifest")
    try:
        raw = json.loads(meta[META_KEY])
    except (ValueError, RecursionError) as exc:
        raise TraceError(f"{path}: the trace manifest is not JSON ({type(exc).__name__})") from None
    ranks = raw.get("ranks") if isinstance(raw, dict) else None
    if isinstance(ranks, list) and 1 + len(ranks) > MAX_TRACE_PROCESSES:  # counted before any is walked
        raise TraceError(
            f"{path}: the manifest holds {1 + len(ranks)} processes' traces; a trace porter writes holds at most "
            f"{MAX_TRACE_PROCESSES} (not a trace porter wrote)"
        )
    ops = sum(
        len(m["ops"])
        for m in [raw, *(ranks if isinstance(ranks, list) else [])]
        if isinstance(m, dict) and isinstance(m.get("ops"), list)
    )
    if ops > MAX_TRACE_OPS:  # counted before any is walked
        raise TraceError(
            f"{path}: the manifest holds {ops} operator entries; a trace porter writes holds at most "
            f"{MAX_TRACE_OPS} (not a trace porter wrote)"
        )
    if _depth(raw, MAX_MANIFEST_DEPTH) > MAX_MANIFEST_DEPTH:
        raise TraceError(f"{path}: the trace manifest nests deeper than {MAX_MANIFEST_DEPTH} levels")
    # only a string that reads "nan", "inf" or "-inf" is read back as a number: a manifest whose
    # text holds none (written plainly or with escapes) is used as parsed, without the walk
    manifest = (
        _numbers_read_back(raw, {**_MANIFEST, "ranks": _list(_MANIFEST)})
        if _MAY_BE_UNFINITE.search(meta[META_KEY])
        else raw
    )
    if type(manifest) is not dict:
        raise TraceError(f"{path}: the trace manifest is not a JSON object")
    return manifest


# a JSON string of 3 or 4 characters, each one of `-naif` or any `\\uXXXX` escape: every way a
# manifest can write "nan", "inf" or "-inf" (and more), in one linear scan
_MAY_BE_UNFINITE = re.compile(r'"(?:[-naif]|\\u[0-9a-fA-F]{4}){3,4}"')


def _numbers_read_back(value, spec):
    """`unfinite(value)`, but for the fields `spec` says are text: a label, a name or an error
    message that is "nan" or "inf" stays a string (read back as a number, a run whose script
    raised `RuntimeError("nan")`, or a model with a module named `inf`, left a trace this porter
    refused as "not a trace porter wrote", and parity-check lost that side's trace)."""
    kind = spec[0] if isinstance(spec, tuple) and spec and isinstance(spec[0], str) else None
    if kind in ("optional", "required"):
        return _numbers_read_back(value, spec[1])
    if kind == "list" and type(value) is list:
        if _textless(spec[1]):  # (100,000 steps: a call a field cost 1.7 s of reading the trace)
            return [_unfinite_record(item) for item in value]
        return [_numbers_read_back(item, spec[1]) for item in value]
    if kind == "tensor" or spec is str:
        return value  # a tensor's name or a text field: as written
    if isinstance(spec, dict) and type(value) is dict:
        return {k: _numbers_read_back(v, spec[k]) if k in spec else unfinite(v) for k, v in value.items()}
    return unfinite(value)


def _textless(spec) -> bool:
    """Whether `spec` names no text field at any depth (a step's: numbers only), so that what it
    reads back is `unfinite` of every field."""
    if isinstance(spec, dict):
        return all(_textless(sub) for sub in spec.values())
    if _kind(spec) in ("optional", "required", "list"):
        return _textless(spec[1])
    return spec is not str and _kind(spec) != "tensor"


def _unfinite_record(item):
    """`unfinite(item)` without a call a number: an object of numbers and lists of numbers (a
    step) is read back in place (a manifest just parsed is no one else's)."""
    if type(item) is not dict:
        return unfinite(item)
    for k, v in item.items():
        t = type(v)
        if t is str:
            if v in _UNFINITE:
                item[k] = float(v)
        elif t is list:
            item[k] = [
                float(x) if type(x) is str and x in _UNFINITE else unfinite(x) if type(x) in (list, dict) else x
                for x in v
            ]
        elif t is dict:
            item[k] = unfinite(v)
    return item


_UNFINITE = frozenset(("nan", "inf", "-inf"))


def _check_schema(path: Path, manifest: dict) -> None:
    """TraceError unless the manifest's schema is `porter.trace/N` for an N this porter reads."""
    schema = manifest.get("schema", "")
    name, _, version = str(schema).partition("/") if isinstance(schema, str) else ("", "", "")
    if name != "porter.trace" or not (version.isascii() and version.isdigit()) or len(version) > 6:
        raise TraceError(f"{path}: unknown schema {str(schema)[:80]!r}")
    if int(version) > SCHEMA_MAJOR:
        raise TraceError(f"{path}: schema {schema} is newer than this porter reads ({SCHEMA}); upgrade porter")
    if int(version) < 1:
        raise TraceError(f"{path}: unknown schema {schema!r}")


def _check_named_once(manifest: dict) -> None:
    """TraceError for a tensor named twice by one process's module outputs, parameters and
    buffers: porter names each once, so the entries a manifest holds are bounded by the file's
    tensors (`MAX_TRACE_TENSORS`). 700,000 module entries naming the same two tensors (an 83 MB
    file) cost `trace compare` 100 s of CPU and 2.2 GB (twentieth read)."""
    for r, m in enumerate([manifest, *(manifest.get("ranks") or [])]):
        outputs = [
            o for section in ("modules", "buffers", "inputs") for e in m.get(section) or [] for o in e["outputs"]
        ]
        seen: set[str] = set()
        for entry in [*outputs, *(m.get("parameters") or [])]:
            for name in (entry["stats"], entry["sample"]):
                if name in seen:
                    where = f"ranks[{r - 1}]: " if r else ""
                    raise TraceError(f"{where}the tensor {name[:80]!r} is named twice (porter names each once)")
                seen.add(name)


# the tensors of a process no manifest entry names: its steps' losses and gradient norms
STEP_TENSORS = ("steps.loss", "steps.grad_norm")


def unnamed_tensors(trace: Trace) -> list[str]:
    """The file's tensors that no manifest entry names (nor are `STEP_TENSORS`): nothing reads
    them, so an edited file's or another writer's were compared with nothing said (twenty-fifth
    trace read's leftover). Names only: no tensor is made."""
    named: set[str] = set()
    for r, m in enumerate(trace.rank_manifests()):
        prefix = f"rank{r}." if r else ""
        named.update(prefix + name for name in (*_names_in(m), *STEP_TENSORS) if name)
    return [name for name in trace.tensors if name not in named]


def _names_in(m: dict):
    """The tensors one process's manifest names (its outputs', parameters' and buffers')."""
    for section in ("modules", "buffers", "inputs"):
        for entry in m.get(section) or []:
            for out in entry["outputs"]:
                yield from (out["stats"], out["sample"], out.get("blocks"))
    for entry in m.get("parameters") or []:
        yield from (entry["stats"], entry["sample"])


def _check_ranks(manifest: dict, tensors: Mapping) -> None:
    """A torchrun run's further ranks: one manifest each, naming its own rank's tensors."""
    ranks = manifest.get("ranks", [])
    if type(ranks) is not list:
        raise TraceError("`ranks` is not a list")
    by_rank = _by_rank(tensors)
    for r, rank in enumerate(ranks, 1):  # a torchrun run: one manifest per further rank
        _check(rank, {**_MANIFEST, "schema": str}, f"ranks[{r - 1}]", by_rank.get(r, {}))


__all__ = [
    "source_digest",
    "SCHEMA",
    "STAT_NAMES",
    "LIMITS",
    "MAX_TRACE_TENSORS",
    "MAX_TRACE_PROCESSES",
    "MAX_TRACE_OPS",
    "process_limits",
    "process_ops",
    "Trace",
    "TraceError",
    "MALFORMED",
    "write_trace",
    "read_trace",
    "merge_ranks",
    "unnamed_tensors",
    "paired",
    "finite",
    "unfinite",
]
