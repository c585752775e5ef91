"""How `porter trace ops` scales with the operators a trace holds.

    .venv/bin/python benchmarks/bench_trace_ops.py [--sizes 30000,300000]

Writes a trace (safetensors with porter's manifest) of N distinct operators per size, then
times, in this process, each stage of `trace ops`: reading and checking the file
(`read_trace`), classifying the operators (`opsupport.classify`) and printing the table off a
terminal (`print_sections` into a file). Work that grows linearly keeps the last column
(microseconds per operator) flat across the sizes. The fourth adversarial read of issue 24
saw 300,000 operators take 95 s on a machine at load 15-20 (a 34 MB trace, 57 MB of table).
"""

from __future__ import annotations

import argparse
import io
import json
import struct
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from porter.report.console import make_console  # noqa: E402
from porter.verify.opsupport import classify  # noqa: E402
from porter.verify.report import print_sections  # noqa: E402
from porter.verify.tracefile import SCHEMA, read_trace  # noqa: E402


def write_trace(path: Path, ops: int) -> None:
    manifest = {
        "schema": SCHEMA,
        "side": {"label": "cpu", "kind": "cpu"},
        "ops_scope": "the whole run",
        "ops": [
            {"op": f"aten::op{i}", "overload": "", "dtypes": ["float32"], "devices": ["cpu"], "count": 1}
            for i in range(ops)
        ],
    }
    tensor = struct.pack("<2d", 1.0, 0.5)
    header = json.dumps(
        {
            "__metadata__": {"porter.trace": json.dumps(manifest)},
            "steps.loss": {"dtype": "F64", "shape": [2], "data_offsets": [0, len(tensor)]},
        }
    ).encode()
    path.write_bytes(struct.pack("<Q", len(header)) + header + tensor)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="30000,300000")
    args = ap.parse_args()
    print(f"{'operators':>10} {'MB':>6} {'read s':>7} {'classify s':>10} {'print s':>8} {'table MB':>9} {'us/op':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            path = Path(tmp) / f"ops{n}.safetensors"
            write_trace(path, n)
            t0 = time.perf_counter()
            trace = read_trace(path)
            t1 = time.perf_counter()
            rows, _ = classify(trace, "xla")
            t2 = time.perf_counter()
            out = io.StringIO()
            table = [[r.op, str(r.count), ",".join(r.dtypes), ",".join(r.devices), r.status, r.evidence] for r in rows]
            header = ["operator", "calls", "dtypes", "devices", "status", "evidence"]
            print_sections("ops", "pass", [("Operators", header, table, [])], make_console(file=out))
            t3 = time.perf_counter()
            mb = path.stat().st_size / 2**20
            print(
                f"{n:>10} {mb:>6.1f} {t1 - t0:>7.2f} {t2 - t1:>10.2f} {t3 - t2:>8.2f} "
                f"{len(out.getvalue()) / 2**20:>9.1f} {(t3 - t0) / n * 1e6:>7.1f}"
            )


if __name__ == "__main__":
    main()
