"""What a trace's steps span of the program's iterations. `--steps N` counts the steps of one
optimizer (the counted one: the most gradient elements); where another steps more often (a GAN's
generator at each iteration, its critic every fifth), N steps span more of the program's
iterations than N, and `trace record` and `trace compare` said only "3 step(s)" for iterations
0-14 (the thirty-third read's leftover)."""

from __future__ import annotations


def iterations_spanned(manifest: dict) -> str | None:
    """One sentence where another optimizer stepped between the counted one's steps (from each
    step's `other_optimizer_steps`), else None (a trace of an older porter says nothing). Whether
    those steps took iterations of their own (a critic stepped alone, alternating) or shared the
    counted one's (a GAN stepping both networks in each iteration) is not in the trace: both are
    said. It said "spans that many of the program's iterations or more, not 3", untrue of the
    second (thirty-fifth trace2 read); steps inside the counted step's backward are not counted."""
    steps = [s for s in manifest.get("steps") or [] if isinstance(s, dict)]
    between = [s.get("other_optimizer_steps") or 0 for s in steps]
    if not any(isinstance(n, int) and n > 0 for n in between):
        return None
    counts = [n if isinstance(n, int) else 0 for n in between]
    n = len(steps)
    return (
        f"the {n} step(s) are the counted optimizer's; another optimizer stepped {sum(counts)} time(s) "
        f"up to its step {n} ({', '.join(map(str, counts))} before each): the recording spans {n} of the "
        f"program's iterations where those steps share the counted one's iterations (a GAN stepping both "
        f"networks in each), up to {n + sum(counts)} where they take iterations of their own (a critic "
        "stepped alone), more where iterations step no optimizer; the trace does not tell these apart"
    )


def calls_unrestarted(manifest: dict) -> str | None:
    """One sentence where a `zero_grad` threw away a loss reaching the counted optimizer's
    parameters after the next forward had begun, before step 1 (`calls_unrestarted`): step 1's
    module calls then begin at an earlier iteration, and a faithful GAN port running its critic
    only where it steps (`dl = D(x); od.zero_grad(); dl.backward()`) FAILed "the data differs at
    step 1" unsaid, the losses equal (thirty-fifth read's leftover, not fixed)."""
    if manifest.get("calls_unrestarted") is not True:
        return None
    return (
        "a zero_grad threw away a loss reaching the counted optimizer's parameters after the next forward "
        "had begun (`out = D(x); opt.zero_grad(); out.backward()`), before step 1: its step-1 module calls "
        "may begin at an earlier iteration than the step's, so where the losses agree a first diverging "
        "module or input at step 1 may be that, not the port"
    )


__all__ = ["calls_unrestarted", "iterations_spanned"]
