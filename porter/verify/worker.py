"""The code one side of a parity check runs, in its own process:

    python .../porter/verify/worker.py JOB.json   (by its path: porter.verify.entry)

It imports the user's tree (first on sys.path), builds the model with FACTORY(), and writes
what it measured into the job's output folder: meta.json (devices, timings, probes),
tensors.pt (outputs, per-module outputs, gradients, losses, final parameters), and for the
reference side state.pt (initial weights) and inputs.pt (example inputs, made once on the
CPU). Anything it reads back is loaded with torch.load(weights_only=True). When user code
raises it writes error.json and exits with status 3; phase.txt always names the phase it is
in, so the parent can say where a side hung.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

EXIT_USER_ERROR = 3


class Worker:
    def __init__(self, job: dict):
        self.job = job
        self.role = job["role"]
        self.out = Path(job["out"])
        self.root = str(Path(job["tree"]).resolve())
        self.meta: dict = {"role": self.role, "phase_s": {}, "notes": []}
        self.tensors: dict = {}
        self.current_phase = "startup"

    # ---------------------------------------------------------------- bookkeeping
    @contextlib.contextmanager
    def phase(self, name: str):
        self.current_phase = name
        (self.out / "phase.txt").write_text(name)
        t0 = time.perf_counter()
        yield
        self.meta["phase_s"][name] = time.perf_counter() - t0

    def write_meta(self) -> None:
        tmp = self.out / "meta.json.tmp"
        tmp.write_text(json.dumps(self.meta, indent=1, default=str))
        tmp.replace(self.out / "meta.json")

    # ---------------------------------------------------------------- helpers
    def resolve(self, ref: str):
        module_name, _, attr = ref.partition(":")
        module = importlib.import_module(module_name)
        obj = module
        for part in attr.split("."):
            obj = getattr(obj, part)
        return obj

    def call_model(self, model, inputs):
        if isinstance(inputs, dict):
            return model(**inputs)
        if isinstance(inputs, (tuple, list)):
            return model(*inputs)
        return model(inputs)

    def loss_of(self, out, inputs):
        import torch

        if self.loss_fn is None:
            from porter.verify.capture import flatten

            leaves = [t for _, t in flatten(out) if t.is_floating_point()]
            if not leaves:
                raise TypeError("the model returned no floating-point tensor to take a loss of")
            return sum((t.float() ** 2).mean() for t in leaves)
        loss = self.loss_fn(out, inputs) if self.loss_takes_inputs else self.loss_fn(out)
        if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
            raise TypeError("loss_fn must return a one-element tensor")
        return loss

    def autocast(self):
        import torch

        if self.job["dtype"] == "float32":
            return contextlib.nullcontext()
        dtype = getattr(torch, self.job["dtype"])
        return torch.autocast(self.side.kind if self.side.kind != "neuron" else "neuron", dtype=dtype)

    def to_cpu(self, t):
        return t.detach().to("cpu").clone()

    # ---------------------------------------------------------------- the run
    def run(self) -> None:
        with self.phase("startup"):
            self.setup_device()
        with self.phase("import"):
            from porter.verify.entry import program_path

            program_path(self.root)
            factory = self.resolve(self.job["entry"])
            inputs_fn = self.resolve(self.job["inputs"]) if self.role == "reference" else None
        with self.phase("factory"):
            self.build(factory)
        with self.phase("inputs"):
            self.make_inputs(inputs_fn)
        self.write_meta()
        with self.phase("perf"):
            self.perf()
        self.write_meta()
        with self.phase("forward"):
            self.forward()
        with self.phase("gradients"):
            self.gradients()
        if self.job["train_steps"] > 0:
            with self.phase("train"):
                self.train()
        with self.phase("explain"):
            self.explain()
        with self.phase("save"):
            import torch

            torch.save(self.tensors, self.out / "tensors.pt")
        self.meta["completed"] = True
        self.write_meta()

    def setup_device(self) -> None:
        import torch

        from porter.verify import devices, shim

        self.mode = None
        if self.role == "reference":
            self.side = devices.select_reference()
            if self.side.shim:
                self.mode = shim.install_cuda_shim(self.root)
        else:
            target = self.job["target"]
            self.side = devices.select_ported(target)
            if target in ("neuron", "tpu") and self.side.kind != target:
                assert self.side.device is not None  # select_ported names the device
                self.mode = shim.install_target_alias(target, self.side.device, self.side.sync)
        if self.mode is not None:
            self.mode.__enter__()  # for the rest of this process
        self.meta["side"] = self.side.to_dict()
        torch.manual_seed(self.job["seed"])

    def build(self, factory) -> None:
        import torch

        torch.manual_seed(self.job["seed"])
        made = factory()
        self.loss_fn = None
        self.opt_factory = None
        if isinstance(made, tuple):
            if not made or len(made) > 3:
                raise TypeError("FACTORY() must return a model or (model, loss_fn, optimizer_factory)")
            model, *rest = made
            self.loss_fn = rest[0] if rest else None
            self.opt_factory = rest[1] if len(rest) > 1 else None
        else:
            model = made
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"FACTORY() returned {type(model).__name__}, not a torch.nn.Module")
        self.loss_takes_inputs = False
        if self.loss_fn is not None:
            try:
                params = inspect.signature(self.loss_fn).parameters
                self.loss_takes_inputs = len(params) >= 2
            except (TypeError, ValueError):
                pass
        self.model = self.move(model)
        self.model.eval()  # dropout off: device RNGs differ, weights and inputs do not
        self.meta["factory"] = {
            "loss_fn": self.loss_fn is not None,
            "optimizer_factory": self.opt_factory is not None,
            "parameters": sum(p.numel() for p in model.parameters()),
        }

    @staticmethod
    def tied_groups(model) -> list[list[str]]:
        from porter.verify.capture import normalize_name

        by_id: dict[int, list[str]] = {}
        for name, p in model.named_parameters(remove_duplicate=False):
            by_id.setdefault(id(p), []).append(normalize_name(name))
        return [sorted(g) for g in by_id.values() if len(g) > 1]

    def move(self, model):
        """model.to(device), keeping tied parameters tied: on XLA, Module.to() replaces each
        module's Parameter separately, which unties shared weights."""
        groups = [[n for n, _ in grp] for grp in self._param_groups(model)]
        model = model.to(self.side.device)
        retied = []
        for group in groups:
            params = {n: model.get_parameter(n) for n in group}
            first = params[group[0]]
            for name in group[1:]:
                if params[name] is not first:
                    owner, _, attr = name.rpartition(".")
                    setattr(model.get_submodule(owner) if owner else model, attr, first)
                    retied.append(name)
        if retied:
            self.meta["notes"].append(
                f"Module.to({self.side.device}) untied shared parameters {retied}; porter re-tied "
                "them for this check. Re-tie (or tie after moving) in your own code too."
            )
        self.meta["tied"] = self.tied_groups(model)
        return model

    @staticmethod
    def _param_groups(model: Any) -> list[list[tuple[str, Any]]]:
        by_id: dict[int, list[tuple[str, Any]]] = {}
        for name, p in model.named_parameters(remove_duplicate=False):
            by_id.setdefault(id(p), []).append((name, p))
        return [g for g in by_id.values() if len(g) > 1]

    def make_inputs(self, inputs_fn) -> None:
        import torch

        from porter.verify.capture import normalize_name, tree_map_tensors

        if self.role == "reference":
            torch.manual_seed(self.job["seed"] + 1)
            inputs = inputs_fn()
            inputs = tree_map_tensors(self.to_cpu, inputs)
            torch.save(inputs, self.out / "inputs.pt")
            state = {normalize_name(k): self.to_cpu(v) for k, v in self.model.state_dict().items()}
            torch.save(state, self.out / "state.pt")
            self.initial_state = state
        else:
            ref = Path(self.job["ref_out"])
            inputs = torch.load(ref / "inputs.pt", weights_only=True)
            ref_state = torch.load(ref / "state.pt", weights_only=True)
            self.meta["state_dict"] = self.load_reference_state(ref_state)
            self.initial_state = {normalize_name(k): self.to_cpu(v) for k, v in self.model.state_dict().items()}
        self.inputs_cpu = inputs
        self.inputs = tree_map_tensors(lambda t: t.to(self.side.device), inputs)

    def load_reference_state(self, ref_state: dict) -> dict:
        from porter.verify.capture import normalize_name

        own = {normalize_name(k): k for k in self.model.state_dict()}
        own_state = self.model.state_dict()
        shape_mismatch, load = [], {}
        for key, tensor in ref_state.items():
            if key in own:
                mine = own_state[own[key]]
                if tuple(mine.shape) != tuple(tensor.shape):
                    shape_mismatch.append({"name": key, "reference": list(tensor.shape), "ported": list(mine.shape)})
                    continue
                load[own[key]] = tensor
        result = self.model.load_state_dict(load, strict=False)
        return {
            "loaded": len(load),
            "missing_in_reference": sorted(normalize_name(k) for k in result.missing_keys),
            "unexpected_in_reference": sorted(k for k in ref_state if k not in own),
            "shape_mismatch": shape_mismatch,
        }

    def training_mode(self) -> None:
        """Eval mode except normalisation layers, which train (batch statistics, as in a
        training step). Everything else stays in eval so dropout, and code that checks
        self.training, are off: the two devices' RNGs differ, so dropout masks would too."""
        import torch

        self.model.eval()
        for m in self.model.modules():
            if isinstance(
                m,
                (
                    torch.nn.modules.batchnorm._BatchNorm,
                    torch.nn.GroupNorm,
                    torch.nn.modules.instancenorm._InstanceNorm,
                ),
            ):
                m.train()

    def reset_weights(self) -> None:
        own = {k.replace("_orig_mod.", ""): k for k in self.model.state_dict()}
        self.model.load_state_dict({own[k]: v for k, v in self.initial_state.items() if k in own}, strict=False)

    # ---------------------------------------------------------------- phases
    def make_step(self):
        """One step of the perf phase (a fresh optimizer when FACTORY() gave one). It returns
        its loss, which the caller keeps until the device sync: on XLA the loss is then an
        output of the step's graph in every phase, so the train phase runs the graphs the perf
        phase compiled instead of compiling its own."""
        import torch

        model, inputs = self.model, self.inputs
        if self.opt_factory is not None:
            opt = self.opt_factory(model.parameters())
            self.meta["perf_step"] = "train step (forward, loss, backward, optimizer.step)"

            def step():
                opt.zero_grad(set_to_none=True)
                with self.autocast():
                    out = self.call_model(model, inputs)
                    loss = self.loss_of(out, inputs)
                loss.backward()
                opt.step()
                return loss
        elif self.loss_fn is not None:
            self.meta["perf_step"] = "forward, loss, backward"

            def step():
                model.zero_grad(set_to_none=True)
                with self.autocast():
                    loss = self.loss_of(self.call_model(model, inputs), inputs)
                loss.backward()
                return loss
        else:
            self.meta["perf_step"] = "forward (no_grad)"

            def step():
                with torch.no_grad(), self.autocast():
                    self.call_model(model, inputs)
                return None

        return step

    def perf(self) -> None:
        from porter.verify import devices, probes

        if self.loss_fn is not None or self.opt_factory is not None:
            self.training_mode()
        step = self.make_step()
        xla_metrics = probes.XlaMetrics() if self.side.kind == "xla" else None
        devices.reset_peak_memory(self.side)
        timing = probes.time_steps(
            step,
            self.side.sync,
            warmup=self.job["warmup"],
            repeats=self.job["repeats"],
            marks=xla_metrics.mark if xla_metrics else None,
        )
        timing["peak_memory"] = devices.peak_memory(self.side)
        timing["step"] = self.meta["perf_step"]
        steps = 1 + self.job["warmup"] + self.job["repeats"]
        if xla_metrics is not None:
            timing["xla"] = xla_metrics.summary(steps)
        if self.side.kind == "neuron":
            timing["neuron"] = probes.neuron_metrics()
        counter = probes.SyncCounterMode(self.root, self.side.kind)
        with counter:
            loss = step()  # kept until the sync, as in time_steps
        self.side.sync()
        del loss
        timing["syncs"] = counter.to_dict(steps=1)
        self.meta["perf"] = timing
        self.model.eval()
        self.reset_weights()

    def forward(self) -> None:
        import torch

        from porter.verify.capture import ActivationRecorder, flatten

        recorder = ActivationRecorder(self.model)
        try:
            with torch.no_grad(), self.autocast():
                out = self.call_model(self.model, self.inputs)
        finally:
            recorder.remove()
        self.side.sync()
        self.tensors["outputs"] = {p: self.to_cpu(t) for p, t in flatten(out)}
        self.meta["nonfinite_outputs"] = {
            p: {"nan": int(t.isnan().sum()), "inf": int(t.isinf().sum())}
            for p, t in self.tensors["outputs"].items()
            if t.is_floating_point() and not bool(t.isfinite().all())
        }
        self.tensors["activations"] = {k: [self.to_cpu(t) for t in v] for k, v in recorder.outputs.items()}
        self.meta["module_order"] = recorder.order

    def gradients(self) -> None:
        from porter.verify.capture import normalize_name

        params = [(n, p) for n, p in self.model.named_parameters() if p.requires_grad]
        if not params:
            self.meta["gradients"] = {"ran": False, "why": "the model has no trainable parameters"}
            return
        self.training_mode()
        self.model.zero_grad(set_to_none=True)
        with self.autocast():
            out = self.call_model(self.model, self.inputs)
            loss = self.loss_of(out, self.inputs)
        loss.backward()
        self.side.sync()
        self.tensors["grads"] = {normalize_name(n): self.to_cpu(p.grad) for n, p in params if p.grad is not None}
        self.meta["gradients"] = {
            "ran": True,
            "loss": float(loss.detach().to("cpu")),
            "loss_fn": "user loss_fn" if self.loss_fn is not None else "default: sum over outputs of mean(output**2)",
            "without_grad": [normalize_name(n) for n, p in params if p.grad is None],
        }
        self.model.zero_grad(set_to_none=True)
        self.model.eval()
        self.reset_weights()  # BatchNorm running statistics moved

    def train(self) -> None:
        import torch

        from porter.verify.capture import normalize_name

        if self.opt_factory is None:
            self.meta["train"] = {
                "ran": False,
                "why": "FACTORY() returned no optimizer factory (return (model, loss_fn, optimizer_factory))",
            }
            return
        self.reset_weights()
        self.training_mode()
        step = self.make_step()  # the perf phase's step, with a fresh optimizer
        losses = []
        for _ in range(self.job["train_steps"]):
            loss = step()
            if self.side.kind == "xla":
                import torch_xla

                torch_xla.sync()
            losses.append(loss.detach())  # a new tensor each step: nothing changes it later
        self.side.sync()
        self.tensors["losses"] = torch.stack([loss.to("cpu").float() for loss in losses])
        self.tensors["final_params"] = {normalize_name(n): self.to_cpu(p) for n, p in self.model.named_parameters()}
        self.tensors["initial_params"] = {
            normalize_name(n): self.initial_state[normalize_name(n)]
            for n, _ in self.model.named_parameters()
            if normalize_name(n) in self.initial_state
        }
        self.meta["train"] = {"ran": True, "steps": self.job["train_steps"]}
        self.model.eval()

    def explain(self) -> None:
        from porter.verify import probes

        if not self.job.get("explain", True):
            self.meta["graph_breaks"] = {"ran": False, "error": "not run (explain disabled)"}
            return
        args, kwargs = (
            ((), self.inputs)
            if isinstance(self.inputs, dict)
            else ((tuple(self.inputs), {}) if isinstance(self.inputs, (tuple, list)) else ((self.inputs,), {}))
        )
        with self.autocast():
            self.meta["graph_breaks"] = probes.explain_graph_breaks(self.model, args, kwargs, self.root)


def _said(what, fallback: str) -> str:
    """`what()`, or `fallback` when user code makes it raise (an exception whose `__str__`
    raises: the side's launcher failed while it described the error, and left no record)."""
    try:
        return str(what())
    except Exception:
        return fallback


# porter's own source tree (the folder holding the `porter` package's modules)
_OWN_TREE = str(Path(__file__).resolve().parents[1]) + os.sep


def _raised_by_porter(frames: list) -> traceback.FrameSummary | None:
    """The frame where porter's own code raised, or None: the innermost frame is porter's and
    what raised there is no call (a subscript, an attribute, an operator: `recorder.pending[-1]`)
    nor a `raise` statement. A call may be a program's exception passing through one of porter's
    wrappers (`original(*args)`), and a `raise` porter's word on the program (a timeout, FACTORY's
    misuse): both stay the program's. An IndexError of porter's recorder was said as the
    program's, at its `loss.backward()` (`in_user_code: True`; the thirty-fourth read)."""
    last = frames[-1] if frames else None
    if last is None or not os.path.abspath(last.filename).startswith(_OWN_TREE) or last.lineno != last.end_lineno:
        return None
    import ast
    import linecache

    text = linecache.getline(last.filename, last.lineno or 0)[last.colno : last.end_colno]
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:  # (a statement, `raise X(...)`, or no position to read)
        return None
    return None if isinstance(node, ast.Call) or not text.strip() else last


# set by the recorder on an exception that left its own tensor work (`Recorder.own_work`)
OWN_WORK_MARK = "_porter_own_work"


def _raised_in_own_work(exc: BaseException, frames: list, root: str) -> traceback.FrameSummary | None:
    """Porter's innermost frame, where an exception the recorder marked as leaving its own work
    raised with no frame of the program after it: a call of porter's on the program's tensors
    (`torch.stack(norms)`) that raised was said as the program's, at its `loss.backward()`, as a
    call may be the program's exception passing through a wrapper (thirty-fifth read). Not a lack
    of memory, which porter's work adds to but does not cause."""
    if getattr(exc, OWN_WORK_MARK, False) is not True:
        return None
    mine = [i for i, f in enumerate(frames) if os.path.abspath(f.filename).startswith(_OWN_TREE)]
    if not mine or any(f.filename.startswith(root) for f in frames[mine[-1] + 1 :]):
        return None
    last = frames[mine[-1]]
    return None if (last.line or "").startswith("raise") else last  # (a `raise`: porter's word on the program)


def describe_exception(exc: BaseException, root: str) -> dict:
    frames = traceback.extract_tb(exc.__traceback__)
    root = root.rstrip("/") + "/"
    user = [f for f in frames if f.filename.startswith(root)]
    own = _raised_by_porter(frames)
    kind = "exception"
    name = _said(lambda: type(exc).__name__, "?")
    message = _said(lambda: exc, "<exception str() failed>")  # as Python itself prints it
    text = message.lower()
    if (
        isinstance(exc, MemoryError)
        or name == "OutOfMemoryError"
        or "out of memory" in text
        or "can't allocate memory" in text
    ):
        kind = "out_of_memory"
    if own is None and kind != "out_of_memory":
        own = _raised_in_own_work(exc, frames, root)
    loc = None
    if user:
        loc = f"{os.path.relpath(user[-1].filename, root)}:{user[-1].lineno}"
    if own is not None:
        mine = f"{os.path.relpath(own.filename, os.path.dirname(_OWN_TREE.rstrip(os.sep)))}:{own.lineno}"
        called = f" (the program's {loc} called it)" if loc else ""
        message = f"porter's own code raised this at {mine}{called}, not the program: a porter defect: {message}"
        loc = mine
    return {
        "kind": kind,
        "type": name,
        "message": message[:2000],
        "location": loc,
        "in_user_code": bool(user) and own is None,
        "traceback": _said(lambda: "".join(traceback.format_exception(exc)), "")[-6000:],
    }


def main(argv: list[str]) -> int:
    job = json.loads(Path(argv[1]).read_text())
    out = Path(job["out"])
    out.mkdir(parents=True, exist_ok=True)
    worker = Worker(job)
    try:
        worker.run()
    except BaseException as exc:  # user code can raise anything, SystemExit included
        err = describe_exception(exc, worker.root)
        err["phase"] = worker.current_phase
        from porter.verify.sides import write_record

        write_record(out / "error.json", err)
        with contextlib.suppress(Exception):
            worker.write_meta()
        traceback.print_exc()
        return EXIT_USER_ERROR
    return 0


if __name__ == "__main__":
    from porter.verify.entry import own_entry  # porter's root is on PYTHONPATH (porter.verify.sides.side_env)

    own_entry()
    sys.exit(main(sys.argv))
