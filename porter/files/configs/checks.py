"""What a config says about CUDA, in any format (a `tree.Value`): one function per framework.

accelerate's config files (`compute_environment`, `distributed_type`), Lightning trainer configs
(a `trainer:` mapping, or LightningCLI's top level), DeepSpeed configs (`zero_optimization`,
`train_micro_batch_size_per_gpu`) are told by their own keys; any other CUDA value or switch is
reported (CFG005), and CUDA's environment variables (a compose-like `environment:` mapping,
Kubernetes' `name:`/`value:` pairs) go to porter.files.shell.env.
"""

from __future__ import annotations

import re
from functools import lru_cache

from porter.files.readers.tree import Value, walk
from porter.files.facts import environment
from porter.files.shell import env as envvars
from porter.files.sites import Site

_CUDA_VALUE = re.compile(r"(?:cuda(?::\d+)?|nccl)", re.IGNORECASE)
_CUDA_KEY = re.compile(r"(?:^|[_.\-/])(?:cuda|cudnn|nccl|nvidia)(?:$|[_.\-/])", re.IGNORECASE)
_LINE_TOKENS = re.compile(r"cuda|cudnn|nccl|nvidia|\+cu\d", re.IGNORECASE)
_SHELL_KEYS = frozenset(
    {"run", "script", "command", "commands", "cmd", "entrypoint", "before_script", "after_script", "args"}
)
# a launcher sized in GPUs has no CUDA word (`torchrun --nproc-per-node=4`), nor an install from an index of GPU
# builds (`pip install torch --extra-index-url https://download.pytorch.org/whl/cu118`, `--torch-backend rocm6.2`:
# unread in a workflow's `run:`, thirty-fifth read): read as shell too
_LAUNCH_TOKENS = re.compile(
    r"torchrun|nproc[-_]per[-_]node|num[-_]gpus|multi[-_]gpu|--gpus|gres|srun|sbatch"
    r"|download\.pytorch\.org/whl/|pypi(?:\.ngc)?\.nvidia\.com|--torch-backend",
    re.IGNORECASE,
)
_ENV_LINE = re.compile(r"\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(\S*)")
_FALSY = frozenset({"false", "False", "no", "off", "0", "null", "~", ""})
_GPU_STRATEGIES = ("ddp", "fsdp", "deepspeed")  # Lightning's strategies that run over NCCL on its CUDA accelerator
_SLURM_GPU_KEYS = frozenset({"gpus_per_node", "gpus_per_task"})  # submitit's Slurm launcher (Hydra's `hydra.launcher`)
_DEEPSPEED_KEYS = (
    "zero_optimization",
    "train_micro_batch_size_per_gpu",
    "gradient_accumulation_steps",
    "zero_allow_untested_optimizer",
)


def sites(root: Value, text: str, target: str, *, json_like: bool) -> list[Site]:
    """`json_like`: a scalar written in place of a number needs quotes (JSON, TOML)."""
    done: set[int] = set()  # nodes a framework's check has spoken for
    out: list[Site] = []
    if root.kind == "map":
        out.extend(_accelerate(root, text, target, done, json_like))
        out.extend(_lightning(root, target, done, json_like))
        out.extend(_deepspeed(root, done))
    out.extend(_generic(root, text, target, done))
    return out


def _replace(node: Value, new: str, json_like: bool) -> str | None:
    """`new` in place of a scalar, or None when its characters are not its value."""
    if node.inner is None:
        return None
    if json_like and not isinstance(node.scalar, str):
        return f'"{new}"'
    return new


def _accelerate(root: Value, text: str, target: str, done: set[int], json_like: bool) -> list[Site]:
    if root.get("compute_environment") is None and root.get("distributed_type") is None:
        return []
    out: list[Site] = []
    kind = root.get("distributed_type")
    if kind is not None and kind.text == "MULTI_GPU":
        done.add(id(kind))
        span = kind.inner or (kind.start, kind.end)
        new = environment(target).get("accelerate_distributed_type")
        out.append(
            Site(
                "CFG001",
                span[0],
                span[1],
                _replace(kind, new, json_like) if new else None,
                message="`distributed_type: MULTI_GPU`: accelerate's multi-GPU launch",
            )
        )
    ids = root.get("gpu_ids")
    if ids is not None:
        done.add(id(ids))
        out.append(Site("CFG001", ids.start, ids.end, None, message=f"`gpu_ids: {ids.text}` picks NVIDIA GPUs"))
    precision = root.get("mixed_precision")
    if precision is not None and precision.text == "fp16":
        done.add(id(precision))
        span = precision.inner or (precision.start, precision.end)
        out.append(
            Site(
                "CFG002",
                span[0],
                span[1],
                _replace(precision, "bf16", json_like),
                message="`mixed_precision: fp16`: CUDA's float16 with a loss scaler",
            )
        )
    return out


def _lightning(root: Value, target: str, done: set[int], json_like: bool) -> list[Site]:
    trainer = root.get("trainer")
    if trainer is None or trainer.kind != "map":
        if root.get("accelerator") is None or (root.get("precision") is None and root.get("devices") is None):
            return []
        trainer = root
    out: list[Site] = []
    accelerator = trainer.get("accelerator")
    if accelerator is not None and (accelerator.text or "").lower() in ("gpu", "cuda"):
        done.add(id(accelerator))
        span = accelerator.inner or (accelerator.start, accelerator.end)
        new = environment(target).get("lightning_accelerator")
        out.append(
            Site(
                "CFG003",
                span[0],
                span[1],
                _replace(accelerator, new, json_like) if new else None,
                message=f"`accelerator: {accelerator.text}`: Lightning's CUDA accelerator",
            )
        )
        strategy = trainer.get("strategy")
        if (
            strategy is not None
            and strategy.kind == "scalar"
            and (strategy.text or "").lower().startswith(_GPU_STRATEGIES)
        ):
            # (the TPU accelerator takes only Lightning's XLA strategies: `auto` picks one)
            done.add(id(strategy))
            out.append(
                Site(
                    "CFG003",
                    strategy.start,
                    strategy.end,
                    None,
                    message=f"`strategy: {strategy.text}` runs over NCCL with Lightning's CUDA accelerator",
                )
            )
    precision = trainer.get("precision")
    if precision is not None and (precision.text or "") in ("16", "16-mixed", "fp16"):
        done.add(id(precision))
        span = precision.inner or (precision.start, precision.end)
        out.append(
            Site(
                "CFG002",
                span[0],
                span[1],
                _replace(precision, "bf16-mixed", json_like),
                message=f"`precision: {precision.text}`: float16 mixed precision",
            )
        )
    return out


def _deepspeed(root: Value, done: set[int]) -> list[Site]:
    if not any(root.get(k) is not None for k in _DEEPSPEED_KEYS):
        return []
    out = [
        Site(
            "CFG004",
            root.start,
            root.start + 1,
            None,
            message="a DeepSpeed config: DeepSpeed has no accelerator for the target",
        )
    ]
    fp16 = root.get("fp16")
    if fp16 is not None and fp16.kind == "map":
        enabled = fp16.get("enabled")
        if enabled is not None and enabled.text in ("true", "auto"):
            done.add(id(enabled))
            out.append(
                Site(
                    "CFG002",
                    enabled.start,
                    enabled.end,
                    None,
                    message="DeepSpeed's `fp16` section: float16 with loss scaling",
                )
            )
    return out


def _generic(root: Value, text: str, target: str, done: set[int]) -> list[Site]:
    out: list[Site] = []
    for path, key_span, node in walk(root):
        if id(node) not in done:
            out.extend(_setting(path, key_span, node, text, target, done))
    return out


def _setting(
    path: tuple[str, ...], key_span: tuple[int, int] | None, node: Value, text: str, target: str, done: set[int]
) -> list[Site]:
    """The sites of one setting of any config, by the first of these it is: an environment
    variable (a `name:`/`value:` pair or a key), a GPU request, a kernel switch, shell, a CUDA name."""
    key = path[-1] if path else ""
    if node.kind == "map" and {k for k, _, _ in node.entries} >= {"name", "value"}:
        return _named_variable(node, text, target, done)
    if key_span is not None and envvars.checked(key):
        done.add(id(node))
        value_text = node.text if node.kind == "scalar" and node.inner is not None else None
        value_span = node.inner or (node.start, node.end)
        return envvars.assignment(text, target, key, _key_inner(text, key_span), value_text, value_span)
    request = _gpu_request(path, key, key_span, node)
    if request is not None:
        return [request]
    kernel = _kernel_option(key, node)
    if kernel is not None and key_span is not None:
        return [Site("CFG006", key_span[0], node.end, None, message=kernel)]
    shell = _shell_lines(path, key, key_span, node, text, target)
    if shell is not None:
        return shell
    if node.kind == "scalar" and isinstance(node.scalar, str) and _CUDA_VALUE.fullmatch(node.scalar.strip()):
        return [Site("CFG005", node.start, node.end, None, message=f"`{key or 'a value'}: {node.scalar}` names CUDA")]
    if key_span is not None and _CUDA_KEY.search(key) and node.kind == "scalar":
        return [Site("CFG005", key_span[0], node.end, None, message=f"`{key}` is a CUDA setting")]
    return []


def _named_variable(node: Value, text: str, target: str, done: set[int]) -> list[Site]:
    """A Kubernetes-style `- name: CUDA_VISIBLE_DEVICES` / `value: "0"` entry: an environment
    variable written as a map, checked as an assignment (its parts then taken off the walk)."""
    name, value = node.get("name"), node.get("value")
    if name is None or not name.text or not envvars.checked(name.text) or value is None:
        return []
    done.add(id(name))
    done.add(id(value))
    name_span = name.inner or (name.start, name.end)
    literal = value.text if value.inner else None
    return envvars.assignment(text, target, name.text, name_span, literal, value.inner or (value.start, value.end))


def _gpu_request(path: tuple[str, ...], key: str, key_span: tuple[int, int] | None, node: Value) -> Site | None:
    """A setting that asks for GPUs: Slurm's `gres: gpu:1` or a launcher's `gpus_per_node`
    (LCH003), Kubernetes' `nvidia.com/gpu` resource (CTR002); or None."""
    if key_span is None:
        return None
    if node.kind == "scalar" and (
        (key.lower() == "gres" and "gpu" in (node.text or "").lower())
        or (key in _SLURM_GPU_KEYS and "launcher" in path and (node.text or "") not in _FALSY)
    ):
        message = f"`{key}: {node.text}` asks Slurm for GPUs (a launcher's setting)"
        return Site("LCH003", key_span[0], node.end, None, message=message)
    if key == "nvidia.com/gpu":
        message = "`nvidia.com/gpu`: a Kubernetes request for NVIDIA GPUs"
        return Site("CTR002", key_span[0], node.end, None, message=message)
    return None


def _shell_lines(
    path: tuple[str, ...], key: str, key_span: tuple[int, int] | None, node: Value, text: str, target: str
) -> list[Site] | None:
    """A string setting read line by line (`_block_lines`): a block scalar (`run: |`), or a
    one-line command under a shell key; None for any other setting."""
    if node.kind != "scalar" or not isinstance(node.scalar, str):
        return None
    if node.inner is None and text[node.start : node.start + 1] in ("|", ">"):
        return _block_lines(key, node, text, target)
    # a one-line command (`run: nvidia-smi`), or one of a list of them (GitLab's `script:`,
    # Buildkite's `commands:`), written as it is
    shell_key = key if key_span is not None else (path[-2] if len(path) > 1 and path[-1].isdigit() else "")
    if node.inner is not None and shell_key.lower() in _SHELL_KEYS and "\n" not in text[node.inner[0] : node.inner[1]]:
        return _block_lines(shell_key, node, text, target, node.inner)
    return None


def _kernel_option(key: str, node: Value) -> str | None:
    """What a setting that switches on a CUDA-only package's kernels says (`flash_attention:
    true`, `xformers_attention: true`, `attn_implementation: flash_attention_2`, an extra named
    `mamba-ssm`), or None."""
    if node.kind != "scalar":
        return None
    value = node.text or ""
    lowered, spelled = key.lower(), value.lower().replace("-", "_")
    named = _kernel_value().fullmatch(spelled)
    for name in kernel_words():
        if name in lowered and value not in _FALSY:
            return (
                f"`{key}: {value}` switches on {name.replace('_', '-')}'s kernels, which have no build for the target"
            )
        if named is not None and named.group(1) == name:
            return f"`{key}: {value}` names {name.replace('_', '-')}, which has no build for the target"
    return None


@lru_cache(maxsize=1)
def _kernel_value() -> re.Pattern[str]:
    """A value that is one of `kernel_words` (`flash_attn`, `xformers_2`), the word its group 1."""
    return re.compile("(" + "|".join(re.escape(w) for w in kernel_words()) + r")(?:[_-]\d+)?")


@lru_cache(maxsize=1)  # (read for every setting of a config: a data file has millions)
def kernel_words() -> tuple[str, ...]:
    """The names of the CUDA-only packages as configs spell them (`flash_attn`, `xformers`),
    from the package table of rules/deps.toml, and `flash_attention`."""
    from porter.files.facts import cuda_only_packages

    words = {"flash_attention"}
    for package in cuda_only_packages():
        words.update(m.replace(".", "_") for m in package.modules if len(m) > 4 and m != "cuda")
        words.update(
            n.replace("-", "_") for n in package.names if "cuda" not in n and len(n) > 4 and not n.startswith("nvidia")
        )
    return tuple(sorted(words, key=len, reverse=True))


def _block_lines(key: str, node: Value, text: str, target: str, span: tuple[int, int] | None = None) -> list[Site]:
    """A multi-line string (a YAML block scalar: a workflow's `run: |`, `build-args: |`), or the
    characters `span` of a one-line one: each line read as shell (under a command key), as an
    assignment, or reported where it names CUDA."""
    out: list[Site] = []
    first, last = span or (node.start, node.end)
    folded = span is None and text[node.start : node.start + 1] == ">"
    for start, line in _logical_lines(text[first:last], first, key.lower() in _SHELL_KEYS, folded):
        body = line.strip()
        names_cuda = _LINE_TOKENS.search(body) is not None
        if not (names_cuda or (key.lower() in _SHELL_KEYS and _LAUNCH_TOKENS.search(body))) or body.startswith("#"):
            continue
        lead = start + len(line) - len(line.lstrip())
        if key.lower() in _SHELL_KEYS:
            try:
                from porter.files.shell.script import shell_sites

                # (a folded block's line breaks are blanks in its value: one character each, places kept)
                found = shell_sites(re.sub(r"[\r\n]", " ", body) if folded else body, lead, text, target)
            except (ImportError, Exception):  # noqa: BLE001 - without the shell extra: reported below
                found = []
            if found:
                out.extend(_kept_edit(s, text) for s in found)
                continue
        m = _ENV_LINE.match(body)
        if m is not None and envvars.rule_of(m.group(1)):
            name_span = (lead + m.start(1), lead + m.end(1))
            value_span = (lead + m.start(2), lead + m.end(2))
            value = m.group(2) if "$" not in m.group(2) and "{" not in m.group(2) else None
            out.extend(envvars.assignment(text, target, m.group(1), name_span, value, value_span))
            continue
        if names_cuda:
            out.append(
                Site("CFG005", lead, lead + len(body), None, message=f"a line of `{key}` names CUDA: `{body[:80]}`")
            )
    return out


# the rules whose edit of a YAML string's shell line is kept (an index's URL: a value in a string); the others
# (`nvidia-smi` to the target's tool, a variable's name) stay reported, as a config's commands were decided
_EDITED_IN_YAML = frozenset({"DEP002"})


def _kept_edit(site: Site, text: str) -> Site:
    """A shell site of a YAML string with its edit where the file, edited, parses to the same documents but for that
    string, changed by that edit alone (PyYAML as the oracle: a block scalar's indentation, a plain scalar's
    `: `/` #`, folding); else reported unedited. Every DEP002 of a workflow's `run:` was reported, never edited
    (thirty-fifth read, cache2)."""
    unedited = Site(site.code, site.start, site.end, None, site.message, site.advice, unedited=site.unedited)
    if site.replacement is None or site.code not in _EDITED_IN_YAML:
        return unedited
    old, edited = text[site.start : site.end], text[: site.start] + site.replacement + text[site.end :]
    before, after = _yaml_documents(text), _yaml_documents(edited)
    changed: list[tuple[object, object]] = []
    if before is None or after is None or not _same_but(before, after, changed) or len(changed) != 1:
        return unedited
    was, now = changed[0]
    if not (isinstance(was, str) and isinstance(now, str)):
        return unedited
    at = was.find(old)
    while at >= 0:
        if was[:at] + site.replacement + was[at + len(old) :] == now:
            return site
        at = was.find(old, at + 1)
    return unedited


@lru_cache(maxsize=2)
def _yaml_documents(text: str) -> list[object] | None:
    import yaml

    try:
        return list(yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    except yaml.YAMLError:
        return None


def _same_but(before: object, after: object, changed: list[tuple[object, object]]) -> bool:
    """Whether two parsed YAML values have the same shape, the scalars that differ added to `changed`."""
    if isinstance(before, dict) and isinstance(after, dict):
        return list(before) == list(after) and all(_same_but(before[k], after[k], changed) for k in before)
    if isinstance(before, list) and isinstance(after, list):
        return len(before) == len(after) and all(_same_but(a, b, changed) for a, b in zip(before, after))
    if isinstance(before, (dict, list)) or isinstance(after, (dict, list)):
        return False
    if before != after or type(before) is not type(after):
        changed.append((before, after))
    return True


def _logical_lines(block: str, first: int, shell: bool, folded: bool = False) -> list[tuple[int, str]]:
    """(start, line) of each line of a block at `first`; in a shell key's block a line ending in `\\` goes on on
    the next (the shell joins them): `pip install torch \\` over `--index-url .../cu121` was read as two lines,
    neither of them an install from that index (thirty-fifth read, cache2); in a folded (`>`) block, the lines YAML
    joins with a blank are one line too."""
    out: list[tuple[int, str]] = []
    at, going_on, indent = 0, False, -1
    for raw in block.splitlines(keepends=True):
        line = raw.rstrip("\r\n")
        # (a folded block's next line of the same indentation: YAML joins them with a blank)
        folds = folded and shell and bool(line.strip()) and len(line) - len(line.lstrip()) == indent
        if going_on or folds:  # (the joined line's characters as written: its offsets kept)
            out[-1] = (out[-1][0], block[out[-1][0] - first : at + len(line)])
        else:
            out.append((first + at, line))
            indent = len(line) - len(line.lstrip()) if line.strip() else -1
        at += len(raw)
        going_on = shell and (len(line) - len(line.rstrip("\\"))) % 2 == 1
    return out


def _key_inner(text: str, span: tuple[int, int]) -> tuple[int, int]:
    """A key's characters without its quotes."""
    start, end = span
    if end - start >= 2 and text[start] in "\"'" and text[end - 1] == text[start]:
        return start + 1, end - 1
    return start, end
