"""Regenerate `rules/cuda_only/aten_ops.json`: torch's aten ops that have a CUDA kernel and no
portable one, read from the installed torch's dispatcher.

    python -m porter.apidata.aten_ops

For each aten operator's default overload (`aten::_weight_int4pack_mm`, what
`torch.ops.aten._weight_int4pack_mm(...)` resolves to first), the dispatcher says which dispatch
keys have a kernel (`torch._C._dispatch_has_kernel_for_dispatch_key`). An op with a CUDA kernel
and none for the CPU or a Composite key (which every backend inherits) runs only where a
backend registered one: on the targets, nowhere unless their own key has it (`XLA` when
torch_xla is importable here; TorchNeuron and TorchTPU register `PrivateUse1`). Only those ops
are written, so the file stays small. This module imports torch: the engine never imports it
(it reads the JSON through porter.config.cuda_packages).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "rules" / "cuda_only" / "aten_ops.json"

# a kernel for one of these runs on any device: not a CUDA-only op
PORTABLE_KEYS = (
    "CPU",
    "CompositeImplicitAutograd",
    "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
)
# the keys recorded for each op written (which devices have a kernel)
DEVICE_KEYS = ("CUDA", "MPS", "XPU", "HPU", "XLA", "PrivateUse1", "Meta")
# the dispatch key of each target, when its package registers kernels in this process (only
# torch_xla installs beside a CUDA torch; a PrivateUse1 kernel names whichever backend loaded)
TARGET_KEYS = {"xla": "XLA", "neuron": "PrivateUse1", "tpu": "PrivateUse1"}


def collect() -> dict:
    import torch

    try:  # torch_xla registers its XLA kernels on import
        import torch_xla  # noqa: F401

        xla = True
    except Exception:  # noqa: BLE001 (absent, or fails to start without a device)
        xla = False
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    ops: dict[str, dict] = {}
    for name in sorted(torch._C._dispatch_get_all_op_names()):
        namespace, _, op = name.partition("::")
        if namespace != "aten" or "." in op:  # the default overload only
            continue
        if not has(name, "CUDA") or any(has(name, k) for k in PORTABLE_KEYS):
            continue
        kernels = [k for k in DEVICE_KEYS if has(name, k)]
        ops[op] = {
            "kernels": kernels,
            "torch": hasattr(torch, op),  # also spelled `torch.<op>(...)`
            "targets": sorted(t for t, k in TARGET_KEYS.items() if k in kernels),  # not CUDA-only there
        }
    return {
        "source": {
            "package": "torch",
            "version": torch.__version__,
            "torch_xla": xla,
            "how": "torch._C._dispatch_has_kernel_for_dispatch_key over torch._C._dispatch_get_all_op_names(): "
            "each aten op's default overload with a CUDA kernel and none for " + ", ".join(PORTABLE_KEYS),
            "generated": _dt.datetime.now(_dt.timezone.utc).date().isoformat(),
            "by": "python -m porter.apidata.aten_ops",
        },
        "ops": ops,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-o", "--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    data = collect()
    args.out.write_text(json.dumps(data, indent=1) + "\n")
    print(f"{args.out}: {len(data['ops'])} ops (torch {data['source']['version']})")


if __name__ == "__main__":
    main()
