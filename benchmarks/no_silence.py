"""No silence: every CUDA-specific construct left in a port is covered by a finding.

    python benchmarks/no_silence.py PATH [--target neuron --target tpu --target xla] [--json FILE]

For each target, runs `porter rewrite PATH --target T --out-dir TMP --report TMP.json` (PATH is
never written), then reads every ported file with `ast` and lists what is still CUDA-specific
in it (`torch.cuda.*`, `torch.backends.cudnn/cuda.*`, `.cuda()`, `.is_cuda`, `"cuda"` and
`"nccl"` strings, `"cuda:" + str(rank)`, `GradScaler`, imports of CUDA-only libraries such as
triton, tensorrt, nvtx, amp_C, and every use of cupy and pynvml, `CUDA_*` / `NCCL_*` /
`PYTORCH_CUDA_ALLOC_CONF`-like variables, `ProfilerActivity.CUDA`, `dist.Backend.NCCL`,
`torch.version.cuda`, `torch._C._cuda_*`, `nvidia-smi` run from Python). Each one must be covered by a finding (any code,
any severity) in the JSON report at its line: porter may keep CUDA code on purpose (a guard in
front of a Triton kernel), but never without saying so. Prints the uncovered constructs by kind
with counts and examples; exits 1 if there are any.

Lines of the port are mapped back to the original with a line diff (findings carry original
positions). A construct on a line porter inserted is counted apart, as `introduced`.

The files around the Python (requirements, pyproject.toml, setup.cfg, conda environments,
Dockerfiles, compose files, shell scripts, Slurm batch files, Makefiles, YAML/JSON/TOML
configs, notebooks) are audited too, by a token scan written apart from porter's parsers
(`file_constructs`): a line that, outside comments and printed messages, mentions CUDA, cuDNN,
NCCL or NVIDIA, a CUDA build or index, a GPU request, or a package with no build for the
targets is a construct; in a config only where the token is a key or a one-word value (prose
and URLs are no settings), and a framework's GPU setting (`accelerator: gpu`, `gres: gpu:1`); in a notebook the code cells' Python is read with `ast` as above
and their IPython lines with the scan. A Makefile's `.PHONY:` (or other special target's)
line declares names: it is covered by a finding on the rule that defines the name it declares.

The functions (`cuda_constructs`, `uncovered`) are what tests/test_no_silence.py runs over
porter's own fixture projects and rule examples.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# modules whose import is CUDA-only code (a Triton kernel, a CUDA library, a CUDA extension)
CUDA_ONLY_MODULES = (
    "triton",
    "helion",
    "cupy",
    "cupyx",
    "pycuda",
    "pynvml",
    "numba.cuda",
    "apex",
    "amp_C",
    "flash_attn",
    "xformers",
    "bitsandbytes",
    "transformer_engine",
    "deep_ep",
    "torch.utils.cpp_extension",
    "torch.cuda",
    "torch.backends.cudnn",
    "torch.backends.cuda",
    "tensorrt",
    "tensorrt_llm",
    "torch_tensorrt",
    "nvtx",
    "flashinfer",
    "liger_kernel",
    "kvikio",
    "msamp",
    "cutlass",
)
# modules whose every use (not only the import) is CUDA-specific: NVML calls, CuPy arrays
USED_MODULES = ("cupy", "cupyx", "pynvml")
_CUDA_DEVICE = re.compile(r"cuda(:\d+)?")
# an environment variable that configures CUDA or NCCL: CUDA_VISIBLE_DEVICES, NCCL_DEBUG,
# PYTORCH_CUDA_ALLOC_CONF, TORCH_CUDA_ARCH_LIST
_ENV = re.compile(r"[A-Z0-9_]*(CUDA|NCCL)[A-Z0-9_]*")
# a finding this many lines long or longer (a whole function, a loop) covers its first line
# only: it does not speak for every CUDA construct inside it
LONG_SPAN = 10
# findings that speak for a whole unit (GUARD003: a function, class or branch porter leaves as it
# is because it only runs on CUDA; BACK003: CUDA's class of a per-device family), reported at
# the unit's first line: they cover what is inside
UNIT_CODES = frozenset({"GUARD003", "BACK003"})


@dataclass(frozen=True)
class Construct:
    kind: str  # e.g. `torch.cuda.synchronize`, `.cuda()`, `"cuda"`, `import triton`
    line: int  # 1-based, in the source that was scanned
    text: str  # the code, shortened
    # lines whose finding speaks for this construct too: for an import, the lines that use a
    # name it binds (`import triton` is covered by the KERN002 finding on the kernel that uses
    # it); for code in the body of an `if`, the test's lines (a branch kept on purpose, as a
    # per-device chain's CUDA branch, is reported at its test)
    also: tuple[int, ...] = ()
    # the first lines of the functions, classes and earlier `if`s around it (where a UNIT_CODES
    # finding sits)
    units: tuple[int, ...] = ()
    # the tests of the if/elif chains around it, as written: a chain that already has a branch
    # for the target (`current_accelerator().type == "neuron"`) needs nothing on that target
    chains: tuple[str, ...] = ()


def _aliases(tree: ast.AST) -> dict[str, str]:
    """Local name -> the dotted name it was imported as (`t` -> `torch`, `amp` -> `torch.cuda.amp`)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    names[a.asname] = a.name
                else:
                    top = a.name.split(".")[0]
                    names.setdefault(top, top)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                if a.name != "*":
                    names[a.asname or a.name] = f"{node.module}.{a.name}"
    return names


def _dotted(node: ast.AST, aliases: Mapping[str, str]) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(aliases.get(node.id, node.id))
    return ".".join(reversed(parts))


def _module_kind(module: str) -> str | None:
    for m in CUDA_ONLY_MODULES:
        if module == m or module.startswith(m + "."):
            return f"import {m}"
    return None


def _name_kind(dotted: str) -> str | None:
    parts = dotted.split(".")
    if parts[-1] == "GradScaler":
        return "GradScaler"
    if parts[:3] == ["torch", "version", "cuda"]:
        return "torch.version.cuda"
    if parts[:2] == ["torch", "_C"] and len(parts) > 2 and parts[2].startswith("_cuda"):
        return "torch._C._cuda_*"
    if parts[-2:] == ["Backend", "NCCL"]:
        return "Backend.NCCL"
    if parts[0] in USED_MODULES and len(parts) > 1:
        return f"use of {parts[0]}"
    if parts[:2] == ["torch", "cuda"]:
        return "torch.cuda" if len(parts) == 2 else f"torch.cuda.{parts[2]}"
    if parts[:3] in (["torch", "backends", "cudnn"], ["torch", "backends", "cuda"]):
        return ".".join(parts[:3])
    if len(parts) >= 2 and parts[-1] == "CUDA" and parts[-2] in ("ProfilerActivity", "DeviceType"):
        return f"{parts[-2]}.CUDA"
    return None


def _string_kind(value: str) -> str | None:
    if _CUDA_DEVICE.fullmatch(value):
        return '"cuda"'
    if value == "nccl":
        return '"nccl"'
    if "_" in value and (m := _ENV.fullmatch(value)):
        return f'"{value.split("_")[0]}_*" variable' if value.startswith(m.group(1)) else f'"*{m.group(1)}*" variable'
    if "nvidia-smi" in value:
        return '"nvidia-smi"'
    return None


def cuda_constructs(source: str) -> list[Construct]:
    """Every CUDA-specific construct in `source` (one per kind and line), found with `ast`."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    aliases = _aliases(tree)
    lines = source.splitlines()
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    found: dict[tuple[str, int], Construct] = {}
    # a name in a type annotation (`scaler: GradScaler | None`) does nothing at run time
    annotations: set[int] = set()
    for node in ast.walk(tree):
        notes = []
        if isinstance(node, ast.arg):
            notes.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            notes.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            notes.append(node.annotation)
        annotations.update(id(n) for note in notes if note is not None for n in ast.walk(note))
    used: dict[str, list[int]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            used.setdefault(node.id, []).append(node.lineno)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # a name used in a function (its decorators, signature, body) is used by the
            # definition: a finding on the `def` line (a Triton kernel's KERN002) covers it
            for n in ast.walk(node):
                if isinstance(n, ast.Name):
                    used.setdefault(n.id, []).append(node.lineno)

    def tests_around(node: ast.AST) -> list[int]:
        out: list[int] = []
        child, parent = node, parents.get(node)
        while parent is not None:
            if isinstance(parent, ast.If) and child in parent.body:
                out.extend(range(parent.test.lineno, (parent.test.end_lineno or parent.test.lineno) + 1))
            child, parent = parent, parents.get(parent)
        return out

    def chains_around(node: ast.AST) -> list[str]:
        """The tests of every if/elif chain `node` is in (its test or a branch's body)."""
        out: list[str] = []
        child, parent = node, parents.get(node)
        while parent is not None:
            if isinstance(parent, ast.If) and (child is parent.test or child in parent.body or child in parent.orelse):
                head = parent
                while isinstance(parents.get(head), ast.If) and parents[head].orelse == [head]:
                    head = parents[head]  # up to the chain's `if`
                link: ast.AST | None = head
                while isinstance(link, ast.If):
                    out.append(ast.get_source_segment(source, link.test) or "")
                    link = link.orelse[0] if len(link.orelse) == 1 and isinstance(link.orelse[0], ast.If) else None
            child, parent = parent, parents.get(parent)
        return out

    def units_around(node: ast.AST) -> list[int]:
        """The first lines of the functions and classes around `node`, and of the `if`s before
        it in each block around it (GUARD003 reports the rest of a block after an early exit
        at that `if`)."""
        out: list[int] = []
        child, parent = node, parents.get(node)
        while parent is not None:
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.append(parent.lineno)
            for block in (getattr(parent, "body", None), getattr(parent, "orelse", None)):
                if isinstance(block, list) and child in block:
                    out.extend(s.lineno for s in block[: block.index(child)] if isinstance(s, ast.If))
            child, parent = parent, parents.get(parent)
        return out

    def add(kind: str | None, node: ast.AST) -> None:
        if kind is None:
            return
        line = getattr(node, "lineno", 0)
        text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        also = set(tests_around(node))
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bound = [a.asname or a.name.split(".")[0] for a in node.names]
            also.update(n for b in bound for n in used.get(b, ()))
        also.discard(line)
        units = tuple(sorted(set(units_around(node))))
        found.setdefault(
            (kind, line), Construct(kind, line, text[:120], tuple(sorted(also)), units, tuple(chains_around(node)))
        )

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                add(_module_kind(a.name), node)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            kind = _module_kind(node.module)
            if kind is None:  # `from torch.backends import cudnn`, `from torch import cuda`
                kind = next((k for a in node.names if (k := _module_kind(f"{node.module}.{a.name}"))), None)
            add(kind, node)
        elif isinstance(node, (ast.Attribute, ast.Name)):
            if id(node) in annotations:
                continue
            parent = parents.get(node)
            if isinstance(parent, ast.Attribute) and parent.value is node:
                continue  # only the longest chain: `torch.cuda.amp.autocast`, not `torch.cuda` too
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "cuda"
                and isinstance(parent, ast.Call)
                and parent.func is node
            ):
                dotted = _dotted(node, aliases)
                if dotted is None or not dotted.startswith("torch."):
                    add(".cuda()", node)
                    continue
            if isinstance(node, ast.Attribute) and node.attr == "is_cuda":
                if not (isinstance(parent, ast.Call) and parent.func is node):
                    add(".is_cuda", node)  # a tensor's property; `platform.is_cuda()` is a library's own query
                continue
            dotted = _dotted(node, aliases)
            if dotted is not None and (isinstance(node, ast.Attribute) or node.id in aliases):
                add(_name_kind(dotted), node)
        elif isinstance(node, ast.keyword):
            add(_hf_keyword_kind(node), node)
        elif isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
            name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
            if name == "BitsAndBytesConfig" or name == "prepare_model_for_kbit_training":
                add(f"{name}(...)", node)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            add(_string_kind(node.value), node)
        elif isinstance(node, ast.JoinedStr) and node.values:
            head = node.values[0]
            if isinstance(head, ast.Constant) and isinstance(head.value, str) and head.value.startswith("cuda:"):
                add('"cuda"', node)
        elif (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Add)
            and isinstance(node.left, ast.Constant)
            and node.left.value == "cuda:"
        ):
            add('"cuda:" + ...', node)
    return sorted(found.values(), key=lambda c: (c.line, c.kind))


def _hf_keyword_kind(node: ast.keyword) -> str | None:
    """The Hugging Face stack's CUDA-only choices, named in its own keywords (rules/hf.toml)."""
    value = node.value.value if isinstance(node.value, ast.Constant) else None
    name = node.arg
    if name == "attn_implementation" and isinstance(value, str) and value.startswith("flash_attention"):
        return 'attn_implementation="flash_attention_*"'
    if name in ("fp16", "fp16_full_eval", "load_in_8bit", "load_in_4bit") and value is True:
        return f"{name}=True"
    if name == "mixed_precision" and value == "fp16":
        return 'mixed_precision="fp16"'
    if name == "optim" and value in ("adamw_torch_fused", "adamw_apex_fused"):
        return f'optim="{value}"'
    if name in ("device_map", "device") and isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return f"{name}=<int>"
    return None


# -- the files around the Python: a token scan, apart from porter's own parsers -------------------

FILE_TOKENS = re.compile(
    r"cuda|cudnn|nccl|nvidia|nvcr\.io|\+cu\d|/whl/cu\d|--gpus\b|gres[= ]\S*gpu|gpus-per-|multi_gpu|\bgpu_ids\b"
    r"|\bnvcc\b|\bnsys\b|\bncu\b|flash[-_]attn|xformers|bitsandbytes|\btriton\b|transformer[-_]engine|pynvml"
    r"|mamba[-_]ssm|causal[-_]conv1d|liger[-_]kernel|tensorrt|pycuda",
    re.IGNORECASE,
)
_MESSAGE = re.compile(
    r"^\s*(?:echo|printf)\b(?![^>]*>>?\s*[\"']?\S*(?:cuda|nvidia))", re.IGNORECASE
)  # (not one written to NVIDIA's files)
_CONFIG_KINDS = ("yaml", "json", "toml", "compose", "conda", "pyproject")
_COMMENTED = (
    "requirements",
    "pyproject",
    "setup-cfg",
    "conda",
    "dockerfile",
    "compose",
    "shell",
    "makefile",
    "yaml",
    "toml",
)


def _strip_comment(line: str, kind: str) -> str:
    """The line without a `#` comment (a `#` at the start or after a blank; setup.cfg's `;` too)."""
    if kind not in _COMMENTED:
        return line
    if line.lstrip().startswith("#SBATCH"):
        return line  # Slurm's directives are settings, not comments
    m = re.search(r"(?:^|\s)#", line)
    line = line[: m.start()] if m else line
    if kind == "setup-cfg" and line.lstrip().startswith(";"):
        return ""
    return line


_FALSY = {"", "false", "null", "~", "no", "off", "0", "none"}
_DOC_PATH = re.compile(r"\S+/\S+\.(?:md|qmd|rst|txt|html|png|jpe?g|svg|pdf)$", re.IGNORECASE)


def _one_word(value: str) -> bool:
    """A value that is a setting: one word, no URL, no path to a document."""
    return (
        bool(FILE_TOKENS.search(value)) and " " not in value and "://" not in value and not _DOC_PATH.fullmatch(value)
    )


def _config_setting(line: str) -> bool:
    """In a config, a token counts in a key whose value is not off (`xformers_attention:` with
    no value, `flash_attn_fuse_qkv: false` switch nothing on), or in a one-word value; not in
    prose, a URL or a path to a document."""
    m = re.match(r"\s*-?\s*[\"']?([^\"':=]+)[\"']?\s*[:=]\s*(.*)$", line)
    if m is None:
        return _one_word(line.strip().strip("-, ").strip("\"'"))
    key, value = m.group(1), m.group(2).strip().rstrip(",").strip("\"'[]{} ")
    if FILE_TOKENS.search(key):
        return value.lower() not in _FALSY
    return _one_word(value)


def file_constructs(kind: str, text: str) -> list[Construct]:
    """The CUDA-specific lines of a file that is not Python (see the module's docstring)."""
    if kind == "notebook":
        return _notebook_constructs(text)
    out: list[Construct] = []
    declared = _declarations(text) if kind == "makefile" else set()
    for i, raw in enumerate(text.splitlines(), start=1):
        line = _strip_comment(raw, kind)
        setting = _GPU_SETTING.match(line) if kind in _CONFIG_KINDS else None
        if setting is not None:
            out.append(Construct(f"{setting.group(1).lower()}: gpu", i, raw.strip()[:120]))
            continue
        if not FILE_TOKENS.search(line) or _MESSAGE.match(line):
            continue
        if kind in _CONFIG_KINDS and not _config_setting(line):
            continue
        out.append(
            Construct(
                FILE_TOKENS.search(line).group(0).lower(),
                i,
                raw.strip()[:120],
                also=_defined_at(text, line, declared) if i in declared else (),
            )
        )
    return out


# in a config, a framework's key whose value asks for GPUs (Lightning's `accelerator: gpu`, a
# Slurm launcher's `gres: gpu:1`): "gpu" is no token elsewhere (prose, `num_gpus`, `per_gpu`)
_GPU_SETTING = re.compile(
    r"""\s*-?\s*["']?(accelerator|gres)["']?\s*[:=]\s*["']?(?:\S*:)?(?:gpu|cuda)\b""", re.IGNORECASE
)
_SPECIAL_TARGET = re.compile(r"\.[A-Z_]+[ \t]*:")


def _declarations(text: str) -> set[int]:
    """The lines of a Makefile's special targets (`.PHONY: build build.cuda`, continuation
    lines included): their prerequisites declare names, not what a rule does."""
    out: set[int] = set()
    inside = False
    for i, raw in enumerate(text.splitlines(), start=1):
        if inside or _SPECIAL_TARGET.match(raw):
            out.add(i)
            inside = raw.rstrip().endswith("\\")
    return out


def _defined_at(text: str, line: str, declared: set[int]) -> tuple[int, ...]:
    """The lines of the rules that define the names a declaration line names with a CUDA token:
    the finding on the rule speaks for its declaration (`.PHONY: build.cuda`)."""
    names = {w for w in re.split(r"[\s\\]+", line.split(":", 1)[-1]) if w and FILE_TOKENS.search(w)}
    out = []
    for i, raw in enumerate(text.splitlines(), start=1):
        if i in declared or raw.startswith("\t") or ":" not in raw or re.match(r"[^:]*[?:+!]?=", raw):
            continue
        if names & set(raw.split(":", 1)[0].split()):
            out.append(i)
    return tuple(out)


def _notebook_constructs(text: str) -> list[Construct]:
    """A notebook's code cells: Python read with `ast` (IPython's lines blanked), IPython's lines
    scanned as shell; each at the line of the file that holds it."""
    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError):
        return []
    out: list[Construct] = []
    cursor = 0
    for cell in cells:
        source = cell.get("source", "") if isinstance(cell, dict) else ""
        lines = source if isinstance(source, list) else str(source).splitlines(keepends=True)
        where: list[int] = []
        for line in lines:  # the file's line of each source line (nbformat writes one per line)
            at = text.find(json.dumps(line, ensure_ascii=False)[1:-1], cursor)
            if at < 0:
                at = text.find(json.dumps(line)[1:-1], cursor)
            cursor = max(cursor, at) if at >= 0 else cursor
            where.append(text.count("\n", 0, at) + 1 if at >= 0 else 0)
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        magic_cell = (
            bool(lines)
            and lines[0].lstrip().startswith("%%")
            and not lines[0].lstrip().startswith(("%%time", "%%capture"))
        )
        python = []
        for j, line in enumerate(lines):
            ipython = magic_cell or line.lstrip().startswith(("!", "%")) or re.match(r"\s*\w+\s*=\s*!", line)
            if ipython:
                shell = _strip_comment(line, "shell")
                if FILE_TOKENS.search(shell) and not _MESSAGE.match(shell.lstrip("!% ")) and where[j]:
                    out.append(Construct(FILE_TOKENS.search(shell).group(0).lower(), where[j], line.strip()[:120]))
                python.append("\n")
            else:
                python.append(line if line.endswith("\n") else line + "\n")
        for c in cuda_constructs("".join(python)):
            if 0 < c.line <= len(where) and where[c.line - 1]:
                out.append(Construct(c.kind, where[c.line - 1], c.text))
    return out


def _line_map(original: str, ported: str) -> dict[int, tuple[int, int] | None]:
    """Port line -> the original lines (lo, hi) it came from; None for a line porter inserted."""
    old, new = original.splitlines(), ported.splitlines()
    out: dict[int, tuple[int, int] | None] = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        for j in range(j1, j2):
            if tag == "equal":
                out[j + 1] = (i1 + j - j1 + 1, i1 + j - j1 + 1)
            elif tag == "replace":
                out[j + 1] = (i1 + 1, i2)
            else:
                out[j + 1] = None
    return out


def _covers(finding: Mapping[str, Any], lo: int, hi: int) -> bool:
    start, end = finding["start"]["line"], finding["end"]["line"]
    if end - start >= LONG_SPAN:
        end = start
    return start <= hi and end >= lo


def _has_branch_for(c: Construct, target: str | None) -> bool:
    """`c` is in an if/elif chain one of whose tests names the target's device type: the code
    already has a branch for it, and the CUDA branch is nothing to port there."""
    if target is None:
        return False
    device = {"xla": "xla", "tpu": "tpu", "neuron": "neuron"}.get(target, target)
    return any(re.search(rf"""["']{device}(:\d+)?["']""", test) for test in c.chains)


def uncovered(
    original: str,
    ported: str | None,
    findings: Iterable[Mapping[str, Any]],
    kind: str | None = None,
    target: str | None = None,
) -> list[tuple[Construct, bool]]:
    """The CUDA constructs of the port that no finding covers, each with `introduced` (True
    when porter wrote the line). `findings`: the JSON report's findings of the file. `kind`:
    the kind of file (porter.core.kinds) when it is not Python. `target`: a construct in an
    if/elif chain that already has a branch for it is covered (nothing to port there)."""
    port = original if ported is None else ported
    findings = list(findings)
    lines = _line_map(original, port) if ported is not None else None
    out: list[tuple[Construct, bool]] = []
    for c in constructs(port, kind):
        if _has_branch_for(c, target):
            continue
        where = (c.line, c.line) if lines is None else lines.get(c.line)
        if where is None:
            out.append((c, True))
            continue
        if any(_covers(f, *where) for f in findings):
            continue
        # or by a finding on a line that speaks for it (see Construct.also; a finding's whole span)
        spans = [w for u in c.also if (w := (u, u) if lines is None else lines.get(u)) is not None]
        if any(f["start"]["line"] <= hi and f["end"]["line"] >= lo for lo, hi in spans for f in findings):
            continue
        heads = [w for u in c.units if (w := (u, u) if lines is None else lines.get(u)) is not None]
        if not any(
            f.get("code") in UNIT_CODES and lo <= f["start"]["line"] <= hi for lo, hi in heads for f in findings
        ):
            out.append((c, False))
    return out


def constructs(text: str, kind: str | None = None) -> list[Construct]:
    """`cuda_constructs` for Python, `file_constructs` for the files around it."""
    return cuda_constructs(text) if kind in (None, "python", "setup-py") else file_constructs(kind, text)


def kind_of(path: str) -> str | None:
    """The kind porter gives a file of this name (None: Python, or no file porter reads)."""
    try:
        from porter.core.kinds import kind_of as porter_kind
    except ImportError:  # an older porter: Python only
        return None
    kind = porter_kind(path)
    return None if kind in ("python", "setup-py") else kind


# -- the benchmark: porter's CLI on a tree -------------------------------------------------------


def _port(path: Path, target: str, work: Path, porter_path: str | None) -> tuple[dict[str, Any], Path, float]:
    out_dir, report = work / target, work / f"{target}.json"
    env = dict(os.environ)
    if porter_path:
        env["PYTHONPATH"] = porter_path + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    cmd = [
        sys.executable,
        "-m",
        "porter",
        "rewrite",
        str(path),
        "--target",
        target,
        "--out-dir",
        str(out_dir),
        "--report",
        str(report),
        "--no-cache",
        "-q",
    ]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if done.returncode not in (0, 1) or not report.is_file():
        raise SystemExit(f"porter failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-2000:]}")
    return json.loads(report.read_text("utf-8")), out_dir, elapsed


def audit_tree(path: Path, target: str, work: Path, porter_path: str | None = None) -> dict[str, Any]:
    data, out_dir, elapsed = _port(path, target, work, porter_path)
    return audit_ported(path, target, data, out_dir, elapsed)


def audit_library(name: str, work: Path, porter_path: str | None = None, key: str | None = None) -> dict[str, Any]:
    """A library of the library-hunks corpus (benchmarks/library_hunks/corpus.toml), audited
    from its neuron port there (made once per porter version and cached: the same `--diff`
    and report the hunk review reads), the ported files rebuilt by applying that diff."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import library_hunks as lh

    (lib,) = [x for x in lh.load_corpus() if x.name == name or x.label == name]
    checkout = Path(porter_path or Path(__file__).resolve().parents[1])
    t0 = time.perf_counter()
    ported = lh.port(lib, checkout, 1, key=key)
    out_dir = work / lib.label
    touched = sorted(set(re.findall(r"^\+\+\+ b/(.+)$", ported.diff, re.MULTILINE)))
    for rel in touched:
        (out_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ported.root / rel, out_dir / rel)
    patch = work / f"{lib.label}.patch"
    patch.write_text(ported.diff, "utf-8", errors="surrogateescape")
    if touched:
        subprocess.run(["git", "apply", "--whitespace=nowarn", str(patch)], cwd=out_dir, check=True)
    data = dict(ported.report)
    data["files"] = [{**f, "path": str(ported.root / f["path"])} for f in data["files"]]
    result = audit_ported(
        ported.root, lh.TARGET, data, out_dir, float(ported.meta.get("wall_s", time.perf_counter() - t0))
    )
    result["library"] = lib.label
    result["porter"] = ported.meta.get("porter")
    return result


def audit_ported(path: Path, target: str, data: dict[str, Any], out_dir: Path, elapsed: float) -> dict[str, Any]:
    root = path.resolve()
    count = 0
    missing: list[dict[str, Any]] = []
    # per kind of file (Python is "python"): files, findings, fixes applied, constructs, uncovered
    kinds: dict[str, Counter[str]] = {}
    for f in data["files"]:
        kind = kind_of(f["path"]) or "python"
        stats = kinds.setdefault(kind, Counter())
        stats["files"] += 1
        stats["findings"] += len(f["findings"])
        stats["rewritten"] += sum(1 for x in f["findings"] if x.get("applied"))
        stats["changed"] += f["status"] == "changed"
        if f["status"] not in ("changed", "unchanged"):
            continue
        real = Path(f["path"]).resolve()
        if real == root:
            rel = Path(real.name)
        else:
            rel = real.relative_to(root)
        original = real.read_text("utf-8", errors="replace")
        ported = (out_dir / rel).read_text("utf-8", errors="replace") if f["status"] == "changed" else None
        here = len(constructs(ported if ported is not None else original, kind_of(f["path"])))
        count += here
        stats["constructs"] += here
        for c, introduced in uncovered(original, ported, f["findings"], kind_of(f["path"]), target):
            stats["uncovered"] += 1
            missing.append(
                {"path": f["path"], "line": c.line, "kind": c.kind, "text": c.text, "introduced": introduced}
            )
    # files porter skipped (no token any rule looks for) are read too: silence there counts
    for f in data["files"]:
        if f["status"] == "skipped" and (f["path"].endswith(".py") or kind_of(f["path"])):
            real = Path(f["path"]).resolve()
            text = real.read_text("utf-8", errors="replace")
            stats = kinds.setdefault(kind_of(f["path"]) or "python", Counter())
            for c in constructs(text, kind_of(f["path"])):
                count += 1
                stats["constructs"] += 1
                stats["uncovered"] += 1
                missing.append(
                    {
                        "path": f["path"],
                        "line": c.line,
                        "kind": c.kind,
                        "text": c.text,
                        "introduced": False,
                        "skipped": f["reason"],
                    }
                )
    return {
        "target": target,
        "files": len(data["files"]),
        "constructs": count,
        "uncovered": missing,
        "porter_seconds": round(elapsed, 1),
        "by_kind": {k: dict(v) for k, v in sorted(kinds.items())},
    }


def summarize(result: dict[str, Any], examples: int = 2) -> str:
    miss = result["uncovered"]
    by_kind = Counter(m["kind"] + (" (introduced by porter)" if m["introduced"] else "") for m in miss)
    out = [
        f"[{result['target']}] {result['files']} files, {result['constructs']} CUDA constructs left in the port, "
        f"{len(miss)} without a finding (porter {result['porter_seconds']} s)"
    ]
    for kind, n in by_kind.most_common():
        out.append(f"  {n:5d}  {kind}")
        shown = [m for m in miss if m["kind"] + (" (introduced by porter)" if m["introduced"] else "") == kind][
            :examples
        ]
        for m in shown:
            out.append(f"           {m['path']}:{m['line']}: {m['text']}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", type=Path, nargs="?")
    ap.add_argument(
        "--library",
        action="append",
        help="audit this library of the library-hunks corpus (its cached neuron port; repeatable; 'all' for the whole corpus)",
    )
    ap.add_argument("--target", action="append", choices=["neuron", "tpu", "xla"])
    ap.add_argument("--json", type=Path, help="write every uncovered construct here")
    ap.add_argument("--examples", type=int, default=2, help="examples shown per kind")
    ap.add_argument(
        "--key",
        help="--library: audit the port cached under this porter key (library_hunks.py prints it) instead of this porter's",
    )
    ap.add_argument("--porter", help="import porter from this folder (a worktree) instead of the installed one")
    args = ap.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory(prefix="porter-no-silence-") as tmp:
        if args.library:
            names = args.library
            if names == ["all"]:
                sys.path.insert(0, str(Path(__file__).resolve().parent))
                import library_hunks as lh

                names = [x.name for x in lh.load_corpus()]
            for name in names:
                result = audit_library(name, Path(tmp), args.porter, args.key)
                results.append(result)
                print(f"{result['library']}: " + summarize(result, args.examples), flush=True)
        for target in (args.target or ["neuron", "tpu", "xla"]) if args.path else []:
            result = audit_tree(args.path, target, Path(tmp), args.porter)
            results.append(result)
            print(summarize(result, args.examples), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", "utf-8")
    return 1 if any(r["uncovered"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
