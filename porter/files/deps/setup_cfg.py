"""setup.cfg: `install_requires`, `setup_requires`, `tests_require` and `extras_require`.

configparser reads the file (porter checks the port with it) but gives no places, so the
requirement lines are found by the INI rules setuptools documents: a `[section]`, a `key =`
line, and the indented lines that continue its value, one requirement each. setup.cfg declares
a package: the target's packages are reported, never added (see pyproject.py).
"""

from __future__ import annotations

import configparser
import re
from dataclasses import replace

from porter.config.settings import Settings
from porter.core.reading import configparser_text
from porter.files.deps import requirement
from porter.files.deps.target_packages import missing_lines, reported
from porter.files.errors import Unreadable
from porter.codemods.context import one_line
from porter.files.facts import canonical
from porter.files.sites import Site, Text

_SECTION = re.compile(r"\[([^\]]+)\]")  # (`\[\s*([^\]]+?)\s*\]` was cubic in spaces)
_KEY = re.compile(r"([A-Za-z0-9_.-]+)\s*[=:]\s*(.*)")
_KEYS = {"options": {"install_requires", "setup_requires", "tests_require"}}
_EXTRAS = "options.extras_require"
# a requirement with a version packaging 21.3 read as a legacy specifier (any characters but `,;)` and
# blanks: `numpy>=1.2#x`, `torch==`): setuptools 66.1.1 and older write it, 67.0.0 and later stop at it
_LEGACY_OPERATOR = r"(?:===|~=|==|!=|<=|>=|<|>)\s*+[^,;\s)]*+"
_LEGACY_SPECIFIED = re.compile(  # (from a name's start only, every run possessive: linear where searched)
    r"(?<![A-Za-z0-9._-])[A-Za-z0-9][A-Za-z0-9._-]*+\s*+(?:\[[^\]]*+\]\s*+)?\(?\s*+"
    rf"{_LEGACY_OPERATOR}(?:\s*+,\s*+{_LEGACY_OPERATOR})*+\s*+\)?\s*+(?:;.*)?",
    re.DOTALL,
)
_KEEPS_DASHES = {_EXTRAS, "options.data_files"}  # (setuptools' `warn_dash_deprecation`)


def _wanted(section: str, key: str) -> bool:
    if section == "options.extras_require":
        return True
    return key in _KEYS.get(section, set())


def _as_built(section: str, key: str) -> str:
    """The key as setuptools' build reads it (`Distribution._parse_config_files`, what `pip install`
    runs; 65.5 and since): its case kept (`optionxform = str`: `Install_Requires` is no key the build
    knows, though `read_configuration`, distutils' lower-casing reader, declares it), a `-` read as
    `_` outside `[options.extras_require]` (`install-requires`, deprecated, still declared)."""
    return key if section in _KEEPS_DASHES else key.replace("-", "_")


def port(text: Text, path: str, settings: Settings) -> list[Site]:
    parser = _read_as_setuptools(text.text)
    ctx = requirement.Context(settings.target, settings.imported_after_port)
    out: list[Site] = []
    section = ""
    collecting = ""  # the requirement key being read
    key_indent: int | None = None  # the last key line's indent (None: no key yet in the section)
    torch: tuple[int, int, str] | None = None
    names: list[str] = []
    included = False  # the key's value is a `file:` directive
    reading = ""  # the section whose requirements the key declares (`[DEFAULT]`'s: the extras')
    for number in range(1, len(text.line_starts) + 1):
        start, end = text.line_span(number)
        line = text.text[start:end]
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", ";")):
            continue
        # configparser's rule: a line continues a value where it is indented past the key's line, and
        # only there (an indented first key was read as a continuation of nothing: no finding)
        indent = len(line) - len(line.lstrip())
        continues = key_indent is not None and indent > key_indent
        header = _SECTION.fullmatch(stripped) if not continues else None
        if header is not None:
            # as configparser names it, spaces kept: setuptools reads no `[ options ]` (thirty-first read)
            section, collecting, key_indent = header.group(1), "", None
            continue
        key_indent = key_indent if continues else indent
        reading = reading if continues else _declared_in(parser, section, stripped)
        collecting, found = _line_value(line, start, reading, collecting if continues else None)
        if found is None:
            continue
        value_at, value, whole = found
        nxt = text.line_starts[number] if number < len(text.line_starts) else len(text.text)
        place = (start, nxt) if whole else None
        one_line = not whole and not _continued(text, number, indent)
        items = _items(value_at, value) if one_line else [(value_at, _without_comment(value))]
        # `file: reqs.txt` on a key's line names files of requirements (an include, not read here)
        included = included if whole else _names_files(parser, reading, value)
        if included:
            continue
        _refuse_what_is_no_requirement(parser, reading, items, (number, collecting))
        for at, item in items:
            sites, reqs, written = _item_sites(parser, reading, requirement.Place(at, place), item, ctx)
            out.extend(sites)
            names.extend(r.name for r in reqs)
            torch_req = next((r for r in reqs if canonical(r.name) == "torch"), None)
            if torch is None and torch_req is not None:  # (an expanded torch: its DEP004 on the text as written)
                torch = (at, at + len(item), item if written else str(torch_req))
    if torch is not None:
        lines = missing_lines(requirement.parse(torch[2]), names, [], settings.target, pip_options=False)
        if lines is not None:
            out.append(
                reported(
                    torch, lines, settings.target, f"under `[options.extras_require]` as `{settings.target} = ...`"
                )
            )
    return out


def _declared_in(parser: configparser.ConfigParser, section: str, line: str) -> str:
    """The section whose requirements a key line of `section` declares: configparser gives a `[DEFAULT]`
    key to every section that does not set it otherwise, so setuptools (65.5 and 84.2.1) reads it as
    `[options]`' `install_requires` (or `setup_requires`, ...) where `[options]` is there, and as an extra
    of `[options.extras_require]` where that is there (`[DEFAULT] gpu = cupy-cuda12x` declares the extra
    `gpu`: porter read no `[DEFAULT]` line)."""
    key = _KEY.match(line)
    if section != parser.default_section or key is None:
        return section
    name = key.group(1)
    for declaring in ("options", _EXTRAS):
        if not parser.has_section(declaring) or not _wanted(declaring, _as_built(declaring, name)):
            continue
        if parser.get(declaring, name, raw=True, fallback=None) == parser.defaults().get(name):
            return declaring
    return section


def _continued(text: Text, number: int, key_indent: int) -> bool:
    """Whether a line after key line `number` continues its value (indented past the key, not a
    comment, not blank: configparser drops the blanks and comments that end a value)."""
    for later in range(number + 1, len(text.line_starts) + 1):
        start, end = text.line_span(later)
        line = text.text[start:end]
        stripped = line.strip()
        if stripped and not stripped.startswith(("#", ";")):
            return len(line) - len(line.lstrip()) > key_indent
    return False


def _items(value_at: int, value: str) -> list[tuple[int, str]]:
    """A one-line value as setuptools 65.5 reads it (`_parse_list_semicolon`: with no line break the
    value is split at each `;`, deprecated, with a warning): `install_requires = torch; cupy-cuda12x`
    declares two packages, not torch under a marker. Each item with its offset."""
    out: list[tuple[int, str]] = []
    offset = 0
    for chunk in value.split(";"):
        item = _without_comment(chunk.strip())
        if item:
            out.append((value_at + offset + chunk.index(item), item))
        offset += len(chunk) + 1
    return out


def _without_comment(item: str) -> str:
    """A requirement item as setuptools reads it (`_reqs.parse`: jaraco's `drop_comment`, after the
    split): a ` #` starts a comment (`cupy-cuda12x  # GPU` declares cupy-cuda12x; a `#` with no space
    before it may be a URL's). porter read `cupy-cuda12x  # GPU` as no requirement: no finding."""
    return item.partition(" #")[0].rstrip()


def _names_files(parser: configparser.ConfigParser, section: str, value: str) -> bool:
    """Whether a key's value (its key line's part) is a `file:` directive as setuptools sees it: after
    the interpolation its build reads with, so `install_requires = %(reqs)s` with `reqs = file: r.txt`
    includes r.txt (65.5 and 84.2.1 declare r.txt's requirements), not an item that is no requirement."""
    expanded = _interpolated(parser, section, value)
    return (value if expanded is None else "\n".join(expanded)).startswith("file:")


def _refuse_what_is_no_requirement(
    parser: configparser.ConfigParser, section: str, items: list[tuple[int, str]], where: tuple[int, str]
) -> None:
    """Unreadable where an item of a requirement list (as the build expands it) is no requirement. A
    one-line value split at `;` (`_items`): `install_requires = torch; python_version >= "3.8"` (a
    marker, as its author meant it) stops the build of a current setuptools (84.2.1: "Ambiguous
    requirement marker"), and 65.5's writes `python_version>="3.8"` into the package's requirements,
    which no installer reads. Any other item (`python_version>="3.8"` on its own line, `torch==`,
    `cupy-cuda12x cupy`, `./local/pkg`, a `file:` inside a list, `--extra-index-url URL`): the build
    stops at it (packaging's InvalidRequirement, 65.5 and 84.2.1). porter read the other items (a DEP005
    on a file no build reads) and said nothing of it. `tests_require` is read by neither build. A legacy
    specifier (`numpy>=1.2#x`) is written by 66.1.1 and older and refused from 67.0.0: said with the versions."""
    number, key = where
    for _, item in items:
        expanded = _interpolated(parser, section, item)
        for built in [item] if expanded is None else expanded:
            if built.startswith("#") or requirement.parse(built) is not None:  # (`#…`: dropped, a comment)
                continue
            if len(items) >= 2:
                why = "on one line `;` separates requirements (put each on its own line, where `;` starts a marker)"
            elif key != "tests_require" and _LEGACY_SPECIFIED.fullmatch(built):
                why = (
                    "setuptools 67.0 and later stop at it (66.1 and older write it: a legacy version specifier,"
                    " which pip deprecated in 23.2)"
                )
            elif key != "tests_require":
                why = "setuptools' build stops at it (a name, then versions, extras, a marker or `@ URL`)"
            else:
                continue
            raise Unreadable(
                f"not a setup.cfg setuptools reads: `{one_line(built, 60)}` is no requirement: {why}", number
            )


def _item_sites(
    parser: configparser.ConfigParser, section: str, place: requirement.Place, item: str, ctx: requirement.Context
) -> tuple[list[Site], list[requirement.Requirement], bool]:
    """One requirement item's sites, the requirements it declares, and whether they are its text as
    written (False: the build expands it, and its sites are reported on the text, never edited)."""
    built = _interpolated(parser, section, item)
    if built is None:
        parsed = requirement.parse(item)
        return requirement.sites(item, place, ctx), [parsed] if parsed is not None else [], True
    end = place.start + len(item)
    sites = [
        replace(s, start=place.start, end=end, replacement=None)
        for req in built
        for s in requirement.sites(req, requirement.Place(0, None), ctx)
    ]
    return sites, [p for p in map(requirement.parse, built) if p is not None], False


def _interpolated(parser: configparser.ConfigParser, section: str, item: str) -> list[str] | None:
    """The requirements setuptools' build reads where `item` holds a `%`: it reads setup.cfg through
    `ConfigParser()`, whose interpolation expands `%(name)s` from the section (or `[DEFAULT]`) and
    `%%`: `x = cupy-cuda12x` then `install_requires = %(x)s` declares cupy-cuda12x (its `requires.txt`),
    which porter, reading the text, did not see. None where nothing is expanded."""
    if "%" not in item or not parser.has_section(section):
        return None
    built = _expand(dict(parser.items(section, raw=True)), item, {})
    return [_without_comment(line.strip()) for line in (built or "").splitlines() if line.strip()]


# (configparser's BasicInterpolation: `%%`, `%(name)s`; a name holds no `%`, so that a run of `%(` is
# read once, not rescanned to its end from each: configparser's own `[^)]+` takes `%(a%b)s` as the
# option `a%b`, no name an option is given in a setup.cfg)
_REFERENCE = re.compile(r"%(?:%|\(([^%)]+)\)s)?")
_DEPTH = configparser.MAX_INTERPOLATION_DEPTH
_MAX_EXPANDED = 1 << 16


def _expand(values: dict[str, str], value: str, done: dict[tuple[str, int], str | None], depth: int = 0) -> str | None:
    """`value` (holding a `%`) as BasicInterpolation expands it at `depth`, each name's expansion made
    once per depth (`done`: a chain of `%(a)s%(a)s…` expanded anew at each use was exponential; and
    the depth is the build's too: a name first met near the top and again ten deep was reused there,
    where the build stops); None where the build cannot expand it (a `%` alone, a name not there, a
    value with a `%` met past its depth of 10, even a `%%`) or it grows past 64 KiB."""
    if depth >= _DEPTH:
        return None  # (configparser: `depth > MAX_INTERPOLATION_DEPTH` on entering a value, counted from 1)
    out: list[str] = []
    at = size = 0
    for ref in _REFERENCE.finditer(value):
        out.append(value[at : ref.start()])
        size += ref.start() - at
        at = ref.end()
        name = ref.group(1)
        if ref.group(0) == "%%":
            out.append("%")
            continue
        if name is None or name not in values:
            return None
        if (name, depth) not in done:
            done[name, depth] = None  # (a cycle meets None: the build's depth error)
            named = values[name]
            done[name, depth] = _expand(values, named, done, depth + 1) if "%" in named else named
        expanded = done[name, depth]
        if expanded is None or size + len(expanded) > _MAX_EXPANDED:
            return None
        out.append(expanded)
        size += len(expanded)
    return "".join(out) + value[at:]


def _check_expansions(parser: configparser.ConfigParser) -> None:
    """setuptools' build reads every option of every section with interpolation: a `%` it cannot
    expand anywhere (`description = 100% pure`) stops it (InterpolationSyntaxError), and nothing the
    file declares is installed; porter, reading without interpolation, reported its packages."""
    for section in parser.sections():
        values = dict(parser.items(section, raw=True))
        done: dict[tuple[str, int], str | None] = {}
        for key, value in values.items():
            if "%" in value and _expand(values, value, done) is None:
                why = (
                    "a `%` its build cannot expand, or one porter leaves unexpanded past 64 KiB (every value is"
                    " read with interpolation; `%%` is a `%`)"
                )
                raise Unreadable(f"not a setup.cfg setuptools reads: [{section}] {key}: {why}", None)


def _read_as_setuptools(text: str) -> configparser.ConfigParser:
    """Unreadable where configparser, which setuptools reads setup.cfg with, cannot read it: a
    byte-order mark before the first section (`\\ufeff[options]`, an editor's), text before any
    section, a line that is no `key = value`. setuptools stops there, and the line scan below
    found no section in such a file: it passed with no finding and no error."""
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # (setuptools' build keeps a key's case)
    try:
        parser.read_string(configparser_text(text))  # (long runs of blanks inside a line cut: quadratic)
    except configparser.Error as exc:
        line = getattr(exc, "lineno", None)
        if line is None and isinstance(exc, configparser.ParsingError) and exc.errors:
            line = exc.errors[0][0]
        reason = " ".join(str(exc).split()).replace("file: '<string>', ", "")
        raise Unreadable(f"not a setup.cfg setuptools reads: {reason[:200]}", line) from None
    _check_expansions(parser)
    return parser


def _line_value(
    line: str, start: int, section: str, collecting: str | None
) -> tuple[str, tuple[int, str, bool] | None]:
    """The requirement key the lines that follow continue ("" where none: a key line starts or ends
    one), and the requirement this line holds, if any: its place, its text, and whether the whole line
    is it (a continuation line, which a removal may take; a key's own line never is). `collecting`
    is None on a key's line (not a continuation)."""
    if collecting is None:
        key = _KEY.match(line, len(line) - len(line.lstrip()))
        built = "" if key is None else _as_built(section, key.group(1))
        collecting = built if key is not None and _wanted(section, built) else ""
        if not collecting or key is None:
            return collecting, None
        value, value_at, whole = key.group(2), start + key.start(2), False
    elif not collecting:
        return collecting, None
    else:
        stripped = line.strip()
        value, value_at, whole = stripped, start + line.index(stripped), True
    value = value.rstrip()
    return collecting, ((value_at, value, whole) if value else None)
