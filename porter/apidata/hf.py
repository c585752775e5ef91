"""Build the records of the Hugging Face stack porter supports: transformers, accelerate, peft
and trl, read from the installed packages (`python -m porter.apidata.build hf`).

What is recorded is what porter's rules and its API lint need to know about these libraries'
own vocabulary: the keyword arguments of the classes and functions a training or inference
script calls (closed signatures reject an unknown keyword), the values a keyword accepts
(`TrainingArguments.ddp_backend`'s choices, the optimizer names, `Accelerator(mixed_precision=)`,
`attn_implementation`, `cache_implementation`), which classes are `TrainingArguments`, which
model classes support SDPA, and which quantization configs need which backend. Imports the
packages (and torch): the engine reads the JSON through `porter.apidata.libraries`.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import inspect
import typing
from importlib.metadata import version
from typing import Any

# the pinned versions (pyproject's `hf` extra pins the same): the records are checked against
# them in CI (tests/test_hf_api_data.py)
PACKAGES = ("transformers", "accelerate", "peft", "trl")


def _jsonable(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        value = value.value
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return None


def _enum_values(annotation: Any) -> list[str] | None:
    """The values of an Enum named in an annotation (`OptimizerNames | str`), or of a Literal."""
    found: list[str] = []
    stack = [annotation]
    while stack:
        a = stack.pop()
        if isinstance(a, type) and issubclass(a, enum.Enum):
            found.extend(str(m.value) for m in a)
        elif typing.get_origin(a) is typing.Literal:
            found.extend(str(_jsonable(v)) for v in typing.get_args(a))
        else:
            stack.extend(typing.get_args(a))
    return sorted(set(found)) or None


def _annotation_text(annotation: Any) -> str | None:
    if annotation is inspect.Parameter.empty or annotation is dataclasses.MISSING:
        return None
    if isinstance(annotation, str):
        return annotation
    return inspect.formatannotation(annotation).replace("typing.", "")


def _param(p: inspect.Parameter, choices: list[str] | None = None, default: Any = inspect.Parameter.empty) -> dict:
    entry: dict[str, Any] = {"name": p.name, "kind": p.kind.name}
    if default is inspect.Parameter.empty:
        default = p.default
    if default is not inspect.Parameter.empty:
        entry["default"] = True
        value = _jsonable(default)
        if value is not None or default is None:
            entry["default_value"] = value
    ann = _annotation_text(p.annotation)
    if ann:
        entry["annotation"] = ann
    if choices:
        entry["choices"] = choices
    return entry


def _resolved_hints(obj) -> dict[str, Any]:
    try:
        return typing.get_type_hints(obj)
    except Exception:  # noqa: BLE001 - a forward reference the module cannot resolve
        return {}


def describe_callable(obj, drop_first: bool = False) -> dict:
    """Parameters of a function or class (`__init__`), with the choices of each keyword where
    the library declares them: a dataclass field's `metadata["choices"]`, or an Enum / Literal
    in its annotation."""
    target = obj.__init__ if inspect.isclass(obj) else obj
    sig = inspect.signature(target)
    params = list(sig.parameters.values())
    if drop_first or inspect.isclass(obj):
        params = params[1:]
    hints = _resolved_hints(target)
    fields = (
        {f.name: f for f in dataclasses.fields(obj)} if inspect.isclass(obj) and dataclasses.is_dataclass(obj) else {}
    )
    out = []
    for p in params:
        choices = None
        field = fields.get(p.name)
        if field is not None and field.metadata.get("choices"):
            choices = sorted(str(c) for c in field.metadata["choices"])
        else:
            choices = _enum_values(hints.get(p.name, p.annotation))
        default = inspect.Parameter.empty
        if field is not None and field.default is not dataclasses.MISSING:
            default = field.default
        out.append(_param(p, choices, default))
    entry: dict[str, Any] = {"params": out, "closed": not any(p.kind is p.VAR_KEYWORD for p in params)}
    module = getattr(obj, "__module__", None)
    if module:
        entry["defined_in"] = module
    return entry


def _record(package: str, callables: dict[str, dict], **extra: Any) -> dict:
    import torch

    return {
        "source": {
            "package": package,
            "version": version(package),
            "torch": torch.__version__.split("+")[0],
            "how": "imported; inspect.signature, dataclass fields (metadata choices), Enum/Literal annotations",
        },
        "callables": dict(sorted(callables.items())),
        **extra,
    }


def _public_subclasses(module, base) -> list[str]:
    return sorted(
        n
        for n in dir(module)
        if not n.startswith("_") and inspect.isclass(c := getattr(module, n)) and issubclass(c, base)
    )


def _quantization_configs(transformers, qc, callables: dict[str, dict]) -> dict[str, str]:
    """Each quantization config transformers exports, described into `callables`; its
    quant_method (read from an instance when the class does not say and one can be made)."""
    quant = {}
    for name in _public_subclasses(qc, qc.QuantizationConfigMixin):
        cls = getattr(qc, name)
        if name == "QuantizationConfigMixin" or not hasattr(transformers, name):
            continue
        callables[f"transformers.{name}"] = describe_callable(cls)
        method = getattr(cls, "quant_method", None)
        try:
            method = method or cls().quant_method
        except Exception:  # noqa: BLE001 - needs arguments (or its backend) to construct
            pass
        quant[f"transformers.{name}"] = str(_jsonable(method) or "")
    return quant


def _sdpa_split(transformers, modeling_auto) -> tuple[list[str], list[str]]:
    """The model classes of the auto mappings, split by whether they support SDPA attention."""
    names: set[str] = set()
    for attr in dir(modeling_auto):
        if attr.startswith("MODEL_") and attr.endswith("_MAPPING_NAMES"):
            for v in getattr(modeling_auto, attr).values():
                names.update([v] if isinstance(v, str) else v)
    sdpa: list[str] = []
    no_sdpa: list[str] = []
    for name in sorted(names):
        try:
            cls = getattr(transformers, name)
        except Exception:  # noqa: BLE001 - a model whose module needs an optional package
            continue
        (sdpa if getattr(cls, "_supports_sdpa", False) else no_sdpa).append(name)
    return sdpa, no_sdpa


def build_transformers() -> dict:
    import transformers
    from transformers.generation.configuration_utils import ALL_CACHE_IMPLEMENTATIONS
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
    from transformers.models.auto import modeling_auto
    from transformers.utils import quantization_config as qc

    callables: dict[str, dict] = {}
    training = _public_subclasses(transformers, transformers.TrainingArguments)
    for name in training:
        callables[f"transformers.{name}"] = describe_callable(getattr(transformers, name))
    for name in ("Trainer", "Seq2SeqTrainer", "HfArgumentParser", "pipeline", "GenerationConfig"):
        callables[f"transformers.{name}"] = describe_callable(getattr(transformers, name))
    quant = _quantization_configs(transformers, qc, callables)
    callables["transformers.PreTrainedModel.from_pretrained"] = describe_callable(
        transformers.PreTrainedModel.from_pretrained
    )
    sdpa, no_sdpa = _sdpa_split(transformers, modeling_auto)
    attn = sorted({"eager", *ALL_ATTENTION_FUNCTIONS.valid_keys()})
    dtypes = sorted(
        n for n in dir(__import__("torch")) if isinstance(getattr(__import__("torch"), n), __import__("torch").dtype)
    )
    return _record(
        "transformers",
        callables,
        training_arguments=[f"transformers.{n}" for n in training],
        # keyword → accepted string values, for `from_pretrained` / `from_config` / configs /
        # `generate` (the library reads them from **kwargs, so no signature carries them)
        keyword_values={
            "attn_implementation": attn,
            "cache_implementation": sorted(ALL_CACHE_IMPLEMENTATIONS),
            "device_map": ["auto", "balanced", "balanced_low_0", "sequential"],
            "dtype": ["auto", *dtypes],
            "torch_dtype": ["auto", *dtypes],
        },
        # the optimizer a Trainer gets when `optim` is not given (fused AdamW with torch >= 2.8)
        default_optim=_jsonable(
            next(f.default for f in dataclasses.fields(transformers.TrainingArguments) if f.name == "optim")
        ),
        model_classes={"sdpa": sdpa, "no_sdpa": no_sdpa},
        quantization_configs=dict(sorted(quant.items())),
    )


def build_accelerate() -> dict:
    import accelerate
    import accelerate.utils as au
    from accelerate.utils.constants import TORCH_DISTRIBUTED_BACKENDS

    callables = {
        "accelerate.Accelerator": describe_callable(accelerate.Accelerator),
        "accelerate.PartialState": describe_callable(accelerate.PartialState),
        "accelerate.notebook_launcher": describe_callable(accelerate.notebook_launcher),
    }
    for name in sorted(n for n in dir(au) if n.endswith("Kwargs") and inspect.isclass(getattr(au, n))):
        entry = describe_callable(getattr(au, name))
        callables[f"accelerate.utils.{name}"] = entry
        if hasattr(accelerate, name):
            callables[f"accelerate.{name}"] = entry
    return _record("accelerate", callables, distributed_backends=dict(sorted(TORCH_DISTRIBUTED_BACKENDS.items())))


def build_peft() -> dict:
    import peft

    callables = {
        f"peft.{n}": describe_callable(getattr(peft, n))
        for n in ("LoraConfig", "get_peft_model", "prepare_model_for_kbit_training")
    }
    return _record("peft", callables)


def build_trl() -> dict:
    import transformers
    import trl

    configs = _public_subclasses(trl, transformers.TrainingArguments)
    callables = {f"trl.{n}": describe_callable(getattr(trl, n)) for n in configs}
    trainers = _public_subclasses(trl, transformers.Trainer)
    return _record(
        "trl", callables, training_arguments=[f"trl.{n}" for n in configs], trainers=[f"trl.{n}" for n in trainers]
    )


BUILDERS = {"transformers": build_transformers, "accelerate": build_accelerate, "peft": build_peft, "trl": build_trl}


def build_all() -> dict[str, dict]:
    """Every record, keyed by package name (each module imported once)."""
    for name in PACKAGES:
        importlib.import_module(name)
    return {name: BUILDERS[name]() for name in PACKAGES}
