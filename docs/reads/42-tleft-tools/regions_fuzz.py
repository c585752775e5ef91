"""Differential check of the port's region lookup (twenty-fourth read, tleft, item 2; the twenty-
third read's harness with a mode `one` and the regions recorded counted): `python
regions_fuzz.py SEED N [wide|one]`. `one`: every call of one module type (Linear), 1-30 tokens,
so that more than MAX_REGIONS regions compete for most outputs. Each case: a reference of 3-40
module calls (types from 4, call numbers 1-2, 1-3 output shapes of rank 2-3), and a port that
pads every output further in one dimension, inserts 0-3 extra calls and swaps 0-3 pairs of
independent calls. Expected: each port call whose key the reference has is given exactly the
reference's shapes as its region where they differ from its own (the oracle: a dict by key);
found: Recorder._regions. Counts the calls checked, misses (no region of its key), wrong
regions, and misses where more than MAX_REGIONS regions competed (the documented bound), and how
many e74fdb1's rule (the reference's call at the same index, kept where its key is the call's)
gave a region."""

import random
import sys
import time
from types import SimpleNamespace

import torch

from porter.verify import recorder as R

KINDS = ["Linear", "LayerNorm", "Dropout", "Embedding"]


WIDE = False  # argv[3] "wide": 1-30 tokens and six widths, so that more regions compete
ONE = False  # argv[3] "one": one module type


def case(rng: random.Random):
    ref, counts = [], {}
    for _ in range(rng.randint(3, 40)):
        name = f"m{rng.randint(0, 12)}"
        counts[name] = n = counts.get(name, 0) + 1
        if n > 2:
            continue
        key = name if n == 1 else f"{name}#{n}"
        widths = [8, 16, 24, 32, 48, 64] if WIDE else [8, 16]
        shapes = [
            [rng.choice([2, 4]), rng.randint(1, 30 if WIDE or ONE else 6), rng.choice(widths)][: rng.choice([2, 3])]
            for _ in range(rng.randint(1, 3))
        ]
        ref.append((key, shapes, "Linear" if ONE else KINDS[int(name[1:]) % 4]))
    pad = rng.randint(1, 4)
    port = [(k, [[s[0], s[1] + pad, *s[2:]] for s in shapes], kind) for k, shapes, kind in ref]
    for _ in range(rng.randint(0, 3)):
        port.insert(rng.randint(0, len(port)), ("extra", [[4, 40, 64]], rng.choice(KINDS)))
    for _ in range(rng.randint(0, 3)):
        i, j = rng.randrange(len(port)), rng.randrange(len(port))
        port[i], port[j] = port[j], port[i]
    return ref, port


def main() -> None:
    global WIDE, ONE
    seed, n, WIDE, ONE = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:] == ["wide"], sys.argv[3:] == ["one"]
    rng = random.Random(seed)
    checked = missed = wrong = bounded = by_index = recorded = 0
    spent = 0.0
    for _ in range(n):
        ref, port = case(rng)
        want = {k: shapes for k, shapes, _ in ref}
        me = SimpleNamespace(reference_calls=R._reference_calls(ref), region_memo={}, calls=[])
        me.reference_order = [(k, outs, kind) for k, outs, kind in ref]
        if hasattr(R.Recorder, "_near"):  # the twenty-fourth read's window
            me._near = lambda index, kind, me=me: R.Recorder._near(me, index, kind)
        for i, (key, shapes, kind) in enumerate(port):
            _, sep, num = key.rpartition("#")
            callno = int(num) if sep else 1
            module = type(kind, (), {})()
            outs = [torch.empty(s) for s in shapes]
            t0 = time.perf_counter()
            regions = R.Recorder._regions(me, module, callno, outs)
            spent += time.perf_counter() - t0
            recorded += sum(len(r) for r in regions)  # each region: one more record in the trace
            me.calls.append(None)
            if key not in want:
                continue
            for j, full in enumerate(shapes):
                exp = want[key][j] if j < len(want[key]) else None
                if exp is None or exp == full or len(exp) != len(full) or not all(e <= f for e, f in zip(exp, full)):
                    continue
                checked += 1
                by_index += i < len(ref) and ref[i][0] == key  # e74fdb1: the reference's call at the same index
                got = [r for r, keys in (regions[j] if j < len(regions) else {}).items() if key in keys]
                if not got:
                    missed += 1
                    bounded += len(regions[j]) >= R.MAX_REGIONS
                elif list(got[0]) != exp:
                    wrong += 1
    print(
        f"seed {seed}: {n} cases, {checked} outputs checked, {missed} missed ({bounded} at the bound), "
        f"{wrong} wrong; by index (e74fdb1) {by_index}; {recorded} regions recorded; lookup {spent:.2f} s"
    )


if __name__ == "__main__":
    main()
