"""A skeleton of the target's backend class, modelled on CUDA's (`porter backends --scaffold`).

A project with a class per device (porter.analysis.device_backends) gets the target's as a new
module beside CUDA's: CUDA's module, its class renamed for the target (`CUDA_Accelerator` ->
`NEURON_Accelerator`), ported with porter's own rules (each `torch.cuda` call mapped to the
target's API, every device string and backend name the target's), with a
`# porter[CODE]: ...` note above each line porter could not port. The CUDA module itself is
never changed, and an existing file is never overwritten. What porter emits there is checked
against the targets' API records like any port (TARGET rules).

As `porter kernels --scaffold` (docs/safety.md): files are read as regular files of bounded
size, the new file is created whole under a free name (never through a link, dangling or not),
names from the tree enter its docstring escaped, on one line, and it is parsed before it is
written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

import libcst as cst
from libcst.helpers import get_full_name_for_node

from porter.config.settings import Settings
from porter.kernels.scaffold import _BOUND, ScaffoldError, _checked, _create, _doc, _holds, safe_name
from porter.config.targets import get_target
from porter.analysis.device_backends import BackendClass, families
from porter.pipeline.bounded import Failed, bounded
from porter.pipeline.discover import discover
from porter.pipeline.parallel import DEFAULT_FILE_TIMEOUT
from porter.pipeline.port import port_source
from porter.core.reading import MAX_PARSE_BYTES, lf_line_ends, read_regular
from porter.core.textsafe import path_name


@dataclass
class Family:
    cuda: BackendClass
    others: list[BackendClass]
    base: str

    def for_target(self, target: str) -> BackendClass | None:
        return next((c for c in self.others if c.device == get_target(target).device_type), None)


def scan(root: Path) -> list[Family]:
    """The per-device class families of the Python files under `root`, CUDA's class first."""
    base_dir = root if root.is_dir() else root.parent
    files = []
    for cand in discover([root]):
        if cand.problem is None and cand.path.suffix == ".py":
            try:
                # a regular file porter parses: a FIFO or a device named *.py is passed over, and
                # so is a file past the size porter parses
                source = read_regular(cand.path, MAX_PARSE_BYTES)
                files.append((cand.path.relative_to(base_dir).as_posix(), lf_line_ends(source)))
            except (OSError, ValueError):
                continue
    out = []
    for members in families(files):
        cuda = next(c for c in members if c.device == "cuda")
        base = next(b for b in cuda.bases if all(b in c.bases for c in members))
        out.append(Family(cuda, sorted((c for c in members if c is not cuda), key=lambda c: c.name), base))
    return sorted(out, key=lambda f: (f.cuda.path, f.cuda.name))


_DEVICE_WORD = re.compile(r"cuda", re.I)
# the longest name kept as it is: a file name holds 255 bytes, and the target's word (or its
# prefix), the `_`s that tell families apart and `.py` are added to CUDA's
_LONGEST_NAME = 200


def renamed(name: str, target: str) -> str:
    """`name` with its CUDA word the target's, in the same case (`CUDA_Accelerator` ->
    `NEURON_Accelerator`, `CudaAccelerator` -> `NeuronAccelerator`, `cuda_accelerator` -> ...)."""
    device = get_target(target).device_type

    def swap(m: re.Match[str]) -> str:
        word = m.group(0)
        if word.isupper():
            return device.upper()
        if word[0].isupper():
            return device.capitalize()
        return device

    return _DEVICE_WORD.sub(swap, name, count=1)


def out_name(family: Family, target: str, taken: set[str] | None = None) -> str:
    """The new module's file name: CUDA's with its device word the target's
    (`cuda_accelerator.py` -> `neuron_accelerator.py`), else prefixed with the target's; a
    name that is no Python module name (quotes, newlines, spaces) becomes one. `taken`: the
    names (casefolded) already given to other families of the run; a name among them gets a
    `_` (two `cuda_accelerator.py` in two folders, or names that differ only in case, which a
    case-insensitive file system takes for one), and the name given is added. A name longer
    than a file name can be is shortened as `kernels --scaffold` shortens one (`safe_name`)."""
    stem = Path(family.cuda.path).name.removesuffix(".py")
    device = get_target(target).device_type
    name = renamed(stem, target) if _DEVICE_WORD.search(stem) else f"{device}_{stem}"
    # a name too long for a file (a 255-byte CUDA module name) is shortened keeping a digest
    kept = name.isidentifier() and name.isascii() and len(name) <= _LONGEST_NAME
    name = name if kept else safe_name(name)
    # nor a package the port imports: `torch_cuda.py` gave `torch_xla.py`, which hid torch_xla beside
    # the project's modules and imported itself (seventeenth read)
    while name in _BOUND:
        name += "_"
    if taken is not None:
        while name.casefold() in taken:
            name += "_"
        taken.add(name.casefold())
    return name + ".py"


def write_backend(
    family: Family,
    root: Path,
    out_dir: Path,
    target: str,
    name: str | None = None,
    limit: float | None = DEFAULT_FILE_TIMEOUT,
    holds: dict[Path, bool | None] | None = None,
) -> Path | None:
    """Write the target's backend modelled on CUDA's class into `out_dir / name` (`out_name`'s
    by default); None when the name is taken (by a file, a folder or a link, dangling or not:
    nothing is written through it), and into `holds` whether it holds what porter writes now.
    ScaffoldError when CUDA's module cannot be read or parsed,
    or the file made would not parse, or making it ran past `limit` seconds or overflowed the
    parser (it is made in a process of its own: porter.pipeline.bounded)."""
    name = name or out_name(family, target)
    try:
        made = bounded(_backend_bytes, family, root, target, name, out_dir, limit=limit)
    except Failed as exc:
        raise ScaffoldError(f"{path_name(family.cuda.path)}: {exc}; nothing written") from None
    if isinstance(made, ScaffoldError):
        raise made
    out_dir.mkdir(parents=True, exist_ok=True)
    if _create(out_dir, name, made):
        return out_dir / name
    if holds is not None:
        holds[out_dir / name] = _holds(out_dir / name, made)
    return None


def _backend_bytes(family: Family, root: Path, target: str, name: str, out_dir: Path) -> bytes | ScaffoldError:
    """The new module's bytes, checked to parse (or why there are none)."""
    try:
        return _made(family, root, target, name, out_dir)
    except ScaffoldError as exc:
        return exc


def _made(family: Family, root: Path, target: str, name: str, out_dir: Path | None = None) -> bytes:
    base_dir = root if root.is_dir() else root.parent
    cuda = family.cuda
    try:
        # bytes: libcst decodes them as Python does (a `# -*- coding: latin-1 -*-` line, a BOM)
        module = cst.parse_module(read_regular(base_dir / cuda.path, MAX_PARSE_BYTES))
    except (OSError, UnicodeError, LookupError, TypeError) as exc:
        raise ScaffoldError(f"{path_name(cuda.path)}: cannot read CUDA's module ({exc}); nothing written") from None
    except (cst.ParserSyntaxError, RecursionError) as exc:
        why = " ".join(str(exc).split())[:160]
        raise ScaffoldError(f"{path_name(cuda.path)}: CUDA's module does not parse ({why}); nothing written") from None
    new_class = renamed(cuda.name, target)
    display = get_target(target).display
    doc = f"{display}'s backend for `{_doc(family.base)}`, modelled on `{_doc(cuda.name)}`. TODO: describe it."
    module = module.visit(_Rename(cuda.name, new_class, doc))
    folder = (base_dir / cuda.path).parent
    if out_dir is not None and out_dir.resolve() != folder.resolve():
        module = module.visit(_Absolute(_package(folder)))
    # names from the tree (a file name may hold quotes or a newline): escaped, on one line
    note = (
        f'"""{display} backend for `{_doc(family.base)}`, scaffolded by porter from `{_doc(cuda.name)}` '
        f"({_doc(cuda.path)}).\n\n"
        f"Each method is CUDA's, ported with porter's rules; a `# porter[CODE]: ...` note marks each\n"
        f"line porter could not port. Review them, then register `{_doc(new_class)}` where the project\n"
        f'registers `{_doc(cuda.name)}` (porter lint: BACK002, BACK004 say where).\n"""\n'
    )
    settings = Settings(target=target, ignore=("BACK", "GUARD003"), annotate=True)
    result = port_source(module.bytes, name, settings)  # in the module's own encoding, as its coding line says
    text = result.new_source.decode(module.encoding) if result.new_source is not None else module.code
    body = _without_docstring(text)
    # the note in the module's own line end: a CRLF module's scaffold mixed LF and CRLF lines
    # (twenty-first read)
    newline = module.default_newline
    note = note.replace("\n", newline)
    return _checked(name, note + (newline if not body.startswith(newline) else "") + body)


class _Rename(cst.CSTTransformer):
    """The CUDA class's name, the target's, wherever the module names it: as a name, and as a
    string that is the name alone (`__all__ = ["CudaAccelerator"]`). The class's own docstring
    describes CUDA's devices ("Accelerator class for Nvidia CUDA devices."): `doc` takes its place."""

    def __init__(self, old: str, new: str, doc: str = "") -> None:
        self.old, self.new, self.doc = old, new, doc

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        return updated.with_changes(value=self.new) if original.value == self.old else updated

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString) -> cst.SimpleString:
        if "b" in original.prefix.lower() or original.evaluated_value != self.old:
            return updated
        return updated.with_changes(value=original.value.replace(self.old, self.new))

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        body = updated.body.body
        if original.name.value != self.old or not self.doc or not body or not _is_docstring(body[0]):
            return updated
        first = body[0]
        assert isinstance(first, cst.SimpleStatementLine)
        line = first.with_changes(body=[cst.Expr(cst.SimpleString(f'"""{self.doc}"""'))])
        return updated.with_changes(body=updated.body.with_changes(body=[line, *body[1:]]))


def _package(folder: Path) -> list[str]:
    """The dotted package `folder` is (`deepspeed.accelerator`): up its folders while each holds an
    `__init__.py`; [] for a folder that is no package."""
    parts: list[str] = []
    folder = folder.resolve()
    while (folder / "__init__.py").is_file() and folder.name.isidentifier():
        parts.insert(0, folder.name)
        folder = folder.parent
    return parts


class _Absolute(cst.CSTTransformer):
    """CUDA's relative imports (`from .abstract_accelerator import X`) as absolute ones of its
    package, so that they resolve from the folder the new module is written to, not only beside
    CUDA's (they were copied as written: the module failed at import there; twenty-second read's
    leftover). One that climbs past the package (or CUDA's module in no package) keeps its
    spelling under a TODO that says so."""

    _TODO = (
        "# TODO(porter): a relative import of CUDA's module, whose package porter cannot name here: it"
        " resolves only beside CUDA's module"
    )

    def __init__(self, package: list[str]) -> None:
        self.package = package
        self.unnamed = False  # the statement being left holds an import `package` cannot name

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom:
        level = len(original.relative)
        if not level:
            return updated
        if level > len(self.package):
            self.unnamed = True
            return updated
        parts = self.package[: len(self.package) - level + 1]
        written = get_full_name_for_node(original.module) if original.module is not None else None
        dotted = ".".join([*parts, *([written] if written else [])])
        return updated.with_changes(relative=[], module=cst.parse_expression(dotted))

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine:
        if not self.unnamed:
            return updated
        self.unnamed = False
        todo = cst.EmptyLine(comment=cst.Comment(self._TODO))
        return updated.with_changes(leading_lines=[*updated.leading_lines, todo])


def _is_docstring(stmt: cst.BaseStatement | cst.BaseSmallStatement) -> bool:
    """Whether `stmt` is a string on its own (a docstring where it comes first)."""
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _without_docstring(text: str) -> str:
    """The module without its own docstring (the scaffold's note replaces it)."""
    module = cst.parse_module(text)
    if module.body and isinstance(module.body[0], cst.SimpleStatementLine):
        line = module.body[0]
        first = line.body[0]
        if isinstance(first, cst.Expr) and isinstance(first.value, (cst.SimpleString, cst.ConcatenatedString)):
            # only the docstring: the statements on its line after a `;` stay (`"""doc"""; import
            # torch` lost its imports, and the new module failed at import: sixteenth read)
            rest = [line.with_changes(body=line.body[1:])] if len(line.body) > 1 else []
            module = module.with_changes(body=[*rest, *module.body[1:]])
    return module.with_changes(
        header=[h for h in module.header if h.comment is None or not h.comment.value.startswith("#!")]
    ).code


__all__ = ["Family", "ScaffoldError", "out_name", "renamed", "replace", "scan", "write_backend"]
