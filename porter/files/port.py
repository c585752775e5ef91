"""One file of a kind other than Python through the pipeline: prefilter → porter → sites → result.

The same steps as `porter.codemods.apply` for Python: the bytes scan first (the tokens of the
rules that read this kind), then `# porter: ignore-file` and bad input, then the kind's porter,
whose sites become findings and edits in `porter.files.sites`. Nothing here writes a file or
runs one.
"""

from __future__ import annotations


import importlib
import re
from copy import copy
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path

from porter.config.targets import get_target
from porter.config.settings import Settings
from porter.core import kinds
from porter.files.errors import NeedsExtra, Unreadable
from porter.files.sites import Site, Text, result
from porter.files.verify import problem
from porter.analysis.kinds import BackendKind
from porter.analysis.device_backends import DEVICES, VENDORS
from porter.core.findings import FileResult, FileStatus
from porter.core.reading import LARGER_THAN
from porter.analysis.prefilter import NOT_ADMITTED, WIDE_BOMS, admits_kind
from porter.core.suppressions import scan as scan_suppressions

# kinds whose format has `#` comments, where porter's inline suppressions work
COMMENTED = frozenset(
    {
        kinds.REQUIREMENTS,
        kinds.PYPROJECT,
        kinds.SETUP_CFG,
        kinds.CONDA,
        kinds.DOCKERFILE,
        kinds.COMPOSE,
        kinds.SHELL,
        kinds.MAKEFILE,
        kinds.YAML,
        kinds.TOML,
        kinds.NOTEBOOK,
    }
)
# the porter of each kind: a function (Text, name, Settings) -> list[Site], by module and name
PORTERS = {
    kinds.REQUIREMENTS: ("porter.files.deps.reqfile", "port"),
    kinds.PYPROJECT: ("porter.files.deps.pyproject", "port"),
    kinds.SETUP_CFG: ("porter.files.deps.setup_cfg", "port"),
    kinds.CONDA: ("porter.files.deps.conda", "port"),
    kinds.DOCKERFILE: ("porter.files.containers.dockerfile", "port"),
    kinds.COMPOSE: ("porter.files.containers.compose", "port"),
    kinds.SHELL: ("porter.files.shell.script", "port"),
    kinds.MAKEFILE: ("porter.files.shell.makefile", "port"),
    kinds.YAML: ("porter.files.configs.yaml_config", "port"),
    kinds.JSON: ("porter.files.configs.json_config", "port"),
    kinds.TOML: ("porter.files.configs.toml_config", "port"),
}
# kinds whose porter makes the whole result (they port Python inside them)
WHOLE = {
    kinds.NOTEBOOK: ("porter.files.notebooks.notebook", "port"),
    kinds.SETUP_PY: ("porter.files.deps.setup_py", "port"),
}
# kinds whose own reader skips a UTF-8 byte-order mark before the first line (pip's
# `auto_decode`, BuildKit's Dockerfile parser): their porters read it as a space
BOM_SKIPPED = frozenset({kinds.REQUIREMENTS, kinds.DOCKERFILE})
MAX_BYTES = 16 * 2**20  # larger files with a CUDA token are reported, not parsed (data, not configuration)


def _porter(table: dict[str, tuple[str, str]], kind: str) -> Callable[..., object]:
    module, name = table[kind]
    fn: Callable[..., object] = getattr(importlib.import_module(module), name)
    return fn


def port_file(kind: str, source: bytes, path: str, settings: Settings) -> FileResult:
    """Port one file of `kind`. Never raises for bad input: errors come back as results."""
    out = FileResult(path=path, status=FileStatus.UNCHANGED, original_source=source)
    if kind == kinds.SETUP_PY:
        return _whole(kind, source, path, settings)  # Python first: it has its own prefilter
    refused = _not_admitted(out, kind, source, settings)
    if refused is not None:
        return refused
    suppressions = scan_suppressions(source) if kind in COMMENTED else None
    if suppressions is not None and suppressions.ignore_file:
        out.status, out.reason = FileStatus.SKIPPED, "`# porter: ignore-file`"
        return out
    refused = _not_readable(out, kind, source)
    if refused is not None:
        return refused
    if kind in WHOLE:
        return _whole(kind, source, path, settings)
    text = Text(source)
    sites = _format_sites(out, kind, _bom_as_space(text) if kind in BOM_SKIPPED else text, path, settings)
    if isinstance(sites, FileResult):
        return sites
    sites = _kept_for_other_backends(sites, path, settings, text.text)
    if settings.portable:
        sites = _kept_for_cuda_hosts(sites, path, settings)
    return result(text, sites, path, settings, suppressions=suppressions, check=partial(problem, kind))


def _bom_as_space(text: Text) -> Text:
    """`text` with a leading byte-order mark read as a space: the same length, so every offset
    and position holds, and the edits still go to the file's own text, which keeps its mark.
    Read as a character, it hid the first line (`\\ufefftorch==2.1.0+cu121`, `\\ufeffFROM
    nvidia/cuda`) from pip's and Docker's rules."""
    if not text.text.startswith("\ufeff"):
        return text
    read = copy(text)
    read.text = " " + text.text[1:]
    return read


def _not_admitted(out: FileResult, kind: str, source: bytes, settings: Settings) -> FileResult | None:
    """The result for a file porter does not look into (UTF-16/32 text it does not decode, a
    file the prefilter finds no CUDA token in), or None: checked before the suppression comments
    are read."""
    if source.startswith(WIDE_BOMS):
        return _error(
            out, "UTF-16/UTF-32 text (it starts with a byte-order mark): porter reads UTF-8 and did not check it"
        )
    if not admits_kind(source, settings, kind):
        out.status, out.reason = FileStatus.SKIPPED, NOT_ADMITTED
        return out
    return None


def _not_readable(out: FileResult, kind: str, source: bytes) -> FileResult | None:
    """The result for a file that is not the text its kind says (NUL bytes) or is too large to
    read as one (data, not configuration), or None."""
    if b"\x00" in source:
        return _error(out, f"contains NUL bytes: not a {kinds.label(kind)}")
    if len(source) > MAX_BYTES:
        out.status = FileStatus.SKIPPED
        out.reason = (
            f"{len(source) / 2**20:.1f} MiB: {LARGER_THAN}porter reads as a {kinds.label(kind)}"
            f" ({MAX_BYTES // 2**20} MiB)"
        )
        return out
    return None


def _format_sites(out: FileResult, kind: str, text: Text, path: str, settings: Settings) -> list[Site] | FileResult:
    """The sites the kind's porter finds, or the result for a file it could not read (a syntax
    error, an optional package missing, nesting too deep)."""
    try:
        sites: list[Site] = _porter(PORTERS, kind)(text, path, settings)  # type: ignore[assignment]
    except Unreadable as exc:
        return _error(out, exc.reason, exc.line)
    except NeedsExtra as exc:
        out.status, out.reason = FileStatus.SKIPPED, str(exc)
        return out
    except RecursionError:
        return _error(out, "nesting too deep to read")
    return sites


def _kept_for_other_backends(sites: list[Site], path: str, settings: Settings, text: str = "") -> list[Site]:
    """A port adds a backend; it does not rewrite another's configuration. Two kinds of file
    configure a backend that is not the target's:
    - one of a family of files per device (vLLM's `requirements/cuda.txt`, `rocm.txt`,
      `cpu.txt`, `tpu.txt`): the file named for a device is that device's, and the target's
      is a file of its own beside it: every fix here is reported, none applied; so is a file
      beside such a family that pins a CUDA build of torch (`torch==2.16+cu134`, a `/whl/cu134`
      index: a CUDA variant's requirements, vLLM's `rubin-prerelease.txt`);
    - in a project with backends of its own (`device_backends.abstraction`), a file that picks
      CUDA devices (`CUDA_VISIBLE_DEVICES`) configures a CUDA deployment of it: the variable
      stays, reported (ENV001), and the target's deployment sets its own."""
    fixes = [s for s in sites if s.replacement is not None]
    if not fixes:
        return sites
    t = get_target(settings.target)
    siblings = device_siblings(path) if settings.device_siblings is None else settings.device_siblings
    family = device_file_family(path, siblings)
    build = None if family is not None else _cuda_build_evidence(path, text)
    if build is not None:
        family = _cuda_variant(siblings)
    if family is not None:
        device, others = family
        shown = ", ".join(f"`{o}`" for o in others)
        what = f"the {device} backend's file" if build is None else f"a CUDA variant's file ({build})"
        note = (
            f"`{path}` is {what} of a family of files per device (beside {shown}): left as it is; "
            f"{t.display}'s goes in a file of its own beside them (`{t.device_type}{Path(path).suffix}`)"
        )
        return _reported_only(sites, note)
    evidence = next((f[3] for f in settings.flow or () if f[2] == BackendKind.ABSTRACTION), None)
    if evidence is None:
        return sites
    out = []
    for s in sites:
        if s.code == "ENV001" and s.replacement is not None:
            s = replace(
                s,
                replacement=None,
                applicability=None,
                unedited=None,  # (the message below is what is said of it, not the target's spelling)
                message=(
                    f"`CUDA_VISIBLE_DEVICES` stays: the project has backends of its own ({evidence[0]}), so this file"
                    f" configures a CUDA deployment of it; a {t.display} deployment sets"
                    f" `{s.replacement.split('=')[0].split(':')[0].strip()}` in a configuration of its own"
                ),
            )
        out.append(s)
    return out


def _kept_for_cuda_hosts(sites: list[Site], path: str, settings: Settings) -> list[Site]:
    """`--portable` ports Python so that it runs unchanged on CUDA, the CPU and the target;
    a file around it (requirements, an image, a launcher, a config) has no spelling that does:
    it builds or starts CUDA's hosts too, and the target's fix (a CPU build of torch, the
    target's packages, its visible-cores variable) would break them. Every fix is reported with
    what it would change, none applied; the target's variant goes in a file of its own."""
    t = get_target(settings.target)
    name = Path(path).name
    stem, dot, suffix = name.partition(".")
    beside = f"{stem}-{t.device_type}.{suffix}" if dot else f"{name}.{t.device_type}"
    note = (
        f"`--portable` keeps CUDA hosts working and `{name}` configures them too: left as it is; "
        f"{t.display}'s version goes in a file of its own beside it (`{beside}`)"
    )
    return _reported_only(sites, note)


def _reported_only(sites: list[Site], note: str) -> list[Site]:
    """Every fix of `sites` reported, none applied: `note` says why, then what it would change (the note is the
    message: a site's `unedited` words, what a reader that drops the edit says, would say it without the note)."""
    return [
        replace(
            s,
            replacement=None,
            message=f"{note} (what porter would change: {s.message or s.code})",
            applicability=None,
            unedited=None,
        )
        if s.replacement is not None
        else s
        for s in sites
    ]


# a CUDA build of torch: its local version (`torch==2.16.0+cu134`) or the wheel index of one (`/whl/nightly/cu134`)
# (`[^\S\n]*`, a line's own indent: `^\s*` ran from each line start over every blank line after
# it, and 40,000 blank lines cost 27 s)
_CUDA_BUILD = re.compile(
    r"^[^\S\n]*(?:torch\S*==\S+\+cu\d{2,3}\b|--(?:extra-)?index-url\s+\S+/whl/(?:nightly/|test/)?cu\d{2,3}\b)", re.M
)


def _cuda_build(text: str) -> str | None:
    """The line of a requirements-like file that pins a CUDA build of torch, if any."""
    m = _CUDA_BUILD.search(text) if "cu" in text else None
    return m.group(0).strip() if m else None


# a name part that names CUDA or one of its releases: `kv_connectors_cu12.txt`, `requirements-cuda.txt`
_CUDA_NAME_PART = re.compile(r"(?i)^(?:cuda\d*|cu\d{2,3})$")
# a requirement on a wheel built for one CUDA release: `cupy-cuda13x`, `nvidia-cublas-cu12`
_CUDA_RELEASE_WHEEL = re.compile(r"(?im)^[^\S\n]*([a-z0-9][\w.-]*?[-_](?:cuda\d{2,3}x?|cu\d{2,3}))(?![\w.-])")


def _cuda_build_evidence(path: str, text: str) -> str | None:
    """Why a requirements-like file is a CUDA build's, if it says so itself: it pins a CUDA
    build of torch, its name names CUDA or a CUDA release (vLLM's `kv_connectors_cu12.txt`), or
    it requires a wheel built for one CUDA release (`cupy-cuda13x` in vLLM's `kv_connectors.txt`,
    which only the CUDA image installs)."""
    build = _cuda_build(text)
    if build is not None:
        return f"it pins a CUDA build of torch: `{build}`"
    stem = Path(path).name.partition(".")[0]
    part = next((p for p in re.split(r"[-_.]", stem) if _CUDA_NAME_PART.match(p)), None)
    if part is not None:
        return f"its name names CUDA: `{part}`"
    wheel = _CUDA_RELEASE_WHEEL.search(text) if "cu" in text else None
    if wheel is not None:
        return f"it requires a wheel built for one CUDA release: `{wheel.group(1)}`"
    return None


def device_siblings(path: str) -> tuple[str, ...]:
    """The names of the files in `path`'s folder with its suffix that are named for a device or
    a vendor (itself among them where it is one), sorted: what makes it one of a family of files
    per device. The runner hands them on in the file's settings (`Settings.device_siblings`), so
    that the cache key and the stat index cover them."""
    p = Path(path)
    try:
        return tuple(
            sorted(c.name for c in p.parent.iterdir() if c.suffix == p.suffix and c.stem.lower() in DEVICES | VENDORS)
        )
    except OSError:
        return ()


def _cuda_variant(siblings: tuple[str, ...]) -> tuple[str, tuple[str, ...]] | None:
    """("CUDA", the files named for devices beside the file) when its folder holds two or more
    files of its suffix named for devices (a family per device: `device_siblings`), else None."""
    return ("CUDA", siblings) if len(siblings) >= 2 else None


def device_file_family(path: str, siblings: tuple[str, ...] | None = None) -> tuple[str, tuple[str, ...]] | None:
    """(device, the sibling files named for other devices) when `path`'s name (less its
    suffix) is a device's and its folder holds files of the same suffix named for other
    devices; else None. `siblings`: `device_siblings(path)`, where the caller has it."""
    p = Path(path)
    if p.stem.lower() not in DEVICES | VENDORS:
        return None
    names = device_siblings(path) if siblings is None else siblings
    others = tuple(n for n in names if Path(n).stem.lower() != p.stem.lower())
    return (p.stem, others) if others else None


def _whole(kind: str, source: bytes, path: str, settings: Settings) -> FileResult:
    try:
        made: FileResult = _porter(WHOLE, kind)(source, path, settings)  # type: ignore[assignment]
    except Unreadable as exc:
        return _error(FileResult(path=path, status=FileStatus.UNCHANGED, original_source=source), exc.reason, exc.line)
    except NeedsExtra as exc:
        return FileResult(path=path, status=FileStatus.SKIPPED, original_source=source, reason=str(exc))
    return made


def _error(out: FileResult, reason: str, line: int | None = None) -> FileResult:
    out.status = FileStatus.ERROR
    out.reason = reason
    out.error_line = line
    out.findings = []
    out.new_source = None
    return out
