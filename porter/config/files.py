"""Project configuration: `[tool.porter]` in `pyproject.toml`, or a standalone `porter.toml`.

Discovery walks up from the first path given (then from the working directory): in each
folder `porter.toml` wins over `pyproject.toml`, and a `pyproject.toml` without a
`[tool.porter]` table is passed over, as ruff does. Command-line options override the file
(`--select` replaces, `--ignore`, `--extend-select` and `--exclude` add to it). Every value
remembers where it came from, for `porter config`.

Paths in the file (`exclude`, `per-file-ignores`) are relative to the file's folder: a
pattern with a `/` in it is anchored there (resolved to an absolute pattern the runner
matches against the file's real path), one without a `/` matches at any depth.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from porter.core.findings import Severity
from porter.core.reading import Unreadable, read_regular
from porter.config import globs
from porter.config.globs import MAX_PATTERN
from porter.config.metacodes import meta_codes_named
from porter.config.ruledata import unknown_codes
from porter.config.settings import PORTABLE_TARGETS, TARGETS, Settings

CONFIG_NAMES = ("porter.toml", "pyproject.toml")
FAIL_ON = tuple(s.value for s in Severity)

KEYS = {
    "target": "the default target: neuron, tpu or xla",
    "select": "rule codes or prefixes to run (replaces the default set)",
    "ignore": "rule codes or prefixes to skip",
    "extend-select": "rule codes or prefixes to add (rules off by default, e.g. PERF)",
    "per-file-ignores": "a table: gitignore-style pattern -> codes to skip in matching files",
    "exclude": "gitignore-style patterns of files to leave out",
    "fail-on": "the lowest severity that fails `porter lint`: info, warning or error",
    "file-timeout": "seconds one file may take to port before it is reported and left unchanged (0: no limit)",
    "portable": "true: one codebase for CUDA, the CPU and the target, through torch.accelerator "
    "(neuron, tpu; --portable/--no-portable override it)",
}

DEFAULT = "default"
COMMAND_LINE = "command line"


class ConfigError(ValueError):
    """A config file that cannot be used; the message names the file and the key."""


def shown(value: Any, limit: int = 80) -> str:
    """`value` as an error quotes it: its repr, cut to `limit` characters. A config file's value,
    key or pattern was quoted whole: `target = "xxx…"` of 3 MB printed a 3 MB error line
    (seventeenth read)."""
    return cut(repr(value), limit)


def cut(text: str, limit: int = 80) -> str:
    """`text` cut to `limit` characters (the last one `…`)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class Sourced:
    value: Any
    source: str


@dataclass
class ProjectConfig:
    """What a config file says, validated (keys spelled with `-` as in the file)."""

    path: Path | None = None
    table: str = ""  # "[tool.porter]" or "" for porter.toml
    values: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        if self.path is None:
            return DEFAULT
        return f"{self.path}{' ' + self.table if self.table else ''}"


@dataclass
class Effective:
    """The merged settings and, for each key, the value and where it came from."""

    values: dict[str, Sourced]
    config: ProjectConfig

    @property
    def target(self) -> str | None:
        target: str | None = self.values["target"].value
        return target

    @property
    def fail_on(self) -> Severity:
        return Severity(self.values["fail-on"].value)

    @property
    def file_timeout(self) -> float | None:
        """Seconds per file, or None for the default limit."""
        seconds: float | None = self.values["file-timeout"].value
        return seconds

    @property
    def portable(self) -> bool:
        portable: bool = self.values["portable"].value
        return portable

    def settings(self, **extra: Any) -> Settings:
        """The run's settings; `extra` sets what only the command line gives (unsafe_fixes …)."""
        if self.target is None:
            raise ConfigError(f"--target is required (or set `target` in a config file): one of {', '.join(TARGETS)}")
        v = self.values
        source = v["portable"].source
        if self.portable and self.target not in PORTABLE_TARGETS and source not in (DEFAULT, COMMAND_LINE):
            # the flag's own error names --portable; a value from a file must name the file
            raise ConfigError(
                f"{source}: `portable = true` works through torch.accelerator, which {self.target} does not "
                f"implement: port to {self.target} with --no-portable, or use {' or '.join(PORTABLE_TARGETS)} "
                f"(docs/portable.md)"
            )
        return Settings(
            target=self.target,
            select=tuple(v["select"].value),
            ignore=tuple(v["ignore"].value),
            extend_select=tuple(v["extend-select"].value),
            exclude=tuple(v["exclude"].value),
            per_file_ignores=tuple((p, tuple(c)) for p, c in v["per-file-ignores"].value),
            portable=self.portable,
            **extra,
        )


# -- discovery -------------------------------------------------------------------------------


def _has_porter_table(pyproject: Path) -> bool:
    try:
        data = _read(pyproject)
    except ConfigError:
        return True  # a broken pyproject.toml is reported, not passed over
    return isinstance(data.get("tool"), dict) and "porter" in data["tool"]


# config files found above the repository that another user owns, passed over (`find_config`)
PASSED_OVER: list[Path] = []


def _another_user_s(path: Path) -> bool:
    """Whether `path` belongs to neither this user nor root."""
    if not hasattr(os, "geteuid"):
        return False
    try:
        return path.stat().st_uid not in (os.geteuid(), 0)
    except OSError:
        return False  # (read, and reported, as any config)


def find_config(start: Path) -> Path | None:
    """The nearest porter.toml, or pyproject.toml with [tool.porter], at or above `start`.

    Above the repository (the nearest folder with `.git` or `.hg`, or `start` where there is
    none), a config file another user owns is passed over (`PASSED_OVER`), as git passes over
    a repository another user owns: a `porter.toml` planted in a shared folder (`/tmp`) turned
    every lint below it green (seventeenth read). The repository's own files are its author's."""
    here = start.resolve()
    if not here.is_dir():
        here = here.parent
    folders = (here, *here.parents)
    root = next((f for f in folders if (f / ".git").exists() or (f / ".hg").exists()), here)
    for folder in folders:
        inside = folder == root or root in folder.parents
        own = folder / "porter.toml"
        pyproject = folder / "pyproject.toml"
        for found in (own, pyproject):
            if not found.is_file() or (found is pyproject and not _has_porter_table(pyproject)):
                continue
            if not inside and _another_user_s(found):
                if found not in PASSED_OVER:
                    PASSED_OVER.append(found)
                continue
            return found
    return None


def discover_config(paths: list[Path]) -> Path | None:
    PASSED_OVER.clear()
    starts = [paths[0]] if paths else []
    starts.append(Path.cwd())
    for start in starts:
        found = find_config(start if start.exists() else Path.cwd())
        if found is not None:
            return found
    return None


# -- loading and validation ------------------------------------------------------------------

MAX_CONFIG_BYTES = 16 * 2**20  # a config file is read whole: a FIFO or /dev/zero named pyproject.toml is not


# the last config text parsed and its tables: discovery parses a pyproject.toml to see whether
# it has [tool.porter], then loading parses it again (the same bytes: half a second of a
# 100,000-pattern `exclude`)
_last_parsed: list[tuple[bytes, dict[str, Any]]] = []


def _parse(raw: bytes) -> dict[str, Any]:
    if _last_parsed and _last_parsed[0][0] == raw:
        return _last_parsed[0][1]
    data = tomllib.loads(raw.decode("utf-8"))
    _last_parsed[:] = [(raw, data)]
    return data


def _read(path: Path) -> dict[str, Any]:
    try:
        return _parse(read_regular(path, MAX_CONFIG_BYTES))
    except Unreadable as exc:
        raise ConfigError(f"{path}: cannot read: {exc.reason}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: not UTF-8 (byte {exc.start})") from None
    except (RecursionError, MemoryError, ValueError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {type(exc).__name__}") from None


def load_config(path: Path) -> ProjectConfig:
    data = _read(path)
    if path.name == "pyproject.toml":
        table = data.get("tool", {}).get("porter", {}) if isinstance(data.get("tool"), dict) else {}
        prefix, label = "tool.porter.", "[tool.porter]"
    else:
        table, prefix, label = data, "", ""
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: `tool.porter` must be a table")
    where = f"{path}"
    values: dict[str, Any] = {}
    for key, raw in table.items():
        name = f"{prefix}{key}"
        if key not in KEYS:
            close = difflib.get_close_matches(key.replace("_", "-"), KEYS, n=1)
            hint = f" (did you mean `{close[0]}`?)" if close else f" (known keys: {', '.join(KEYS)})"
            raise ConfigError(f"{where}: unknown key `{cut(name)}`{hint}")
        values[key] = _validate(where, name, key, raw, path.parent)
    return ProjectConfig(path=path, table=label, values=values)


def _codes(where: str, name: str, raw: Any) -> list[str]:
    if not isinstance(raw, list) or not all(isinstance(c, str) for c in raw):
        raise ConfigError(f'{where}: `{name}` must be a list of rule codes, e.g. ["DEV", "CUDA003"]')
    codes = [c.strip().upper() for c in raw if c.strip()]
    bad = unknown_codes(tuple(codes))
    meta, said = meta_codes_named(bad[:5])
    if meta:
        raise ConfigError(f"{where}: `{cut(name)}`: {said}")
    if bad:
        listed = ", ".join(cut(b, 40) for b in bad[:5]) + (f" and {len(bad) - 5:,} more" if len(bad) > 5 else "")
        raise ConfigError(f"{where}: `{cut(name)}`: unknown rule code or prefix {listed} (see `porter rules`)")
    return codes


def check_pattern(pattern: str, where: str) -> str:
    """`pattern`, or a ConfigError when gitignore syntax cannot read it (`[z-a]`, a lone `\\`)
    or it is longer than any path (`globs.MAX_PATTERN`)."""
    if len(pattern) > MAX_PATTERN:
        raise ConfigError(
            f"{where}: a pattern of {len(pattern):,} characters, {shown(pattern)}: at most {MAX_PATTERN:,}"
        )
    try:
        globs.check(pattern)
    except Exception as exc:  # noqa: BLE001 - pathspec raises several kinds for bad patterns
        raise ConfigError(f"{where}: invalid pattern {shown(pattern)}: {cut(str(exc), 200)}") from None
    return pattern


_GLOB_SPECIAL = re.compile(r"([\\*?\[])")


def anchor(pattern: str, rooted: str) -> str:
    """A gitignore-style pattern from a config file, made absolute when it is anchored (`rooted`:
    the file's folder, as `rooted` writes it). The folder's path is escaped, so that a
    `[`, `*`, `?` or `\\` in it is itself (a config in `proj[1]/` anchored its patterns to
    `proj1/`: its per-file-ignores and anchored excludes never applied); a negation keeps its `!`
    in front (`!gen/keep.py` became a pattern for a folder named `!gen`)."""
    negated = pattern.startswith("!")
    body = pattern[1:] if negated else pattern
    if "/" not in body.rstrip("/"):
        return pattern  # matches at any depth, as in .gitignore
    return f"{'!' if negated else ''}{rooted}/{body.lstrip('/')}"


def from_folder(pattern: str, head: str) -> str | None:
    """`anchor`'s pattern anchored at the folder whose `rooted` path plus `/` is `head`, or
    below it, as a pattern anchored at that folder (`!/p/src/gen/` from `/p/src/`: `!/gen/`), so
    that a walk from the folder matches it in order with the patterns it matches from there;
    None for one anchored elsewhere (or at a place whose path begins with a wildcard)."""
    negated = pattern.startswith("!")
    body = pattern[1:] if negated else pattern
    if not body.startswith(head) or len(body) == len(head):
        return None
    return f"{'!' if negated else ''}/{body[len(head) :]}"


def rooted(base: Path) -> str:
    """The folder `base` resolved, as the escaped head of a gitignore-style pattern."""
    return escaped(base.resolve().as_posix().rstrip("/"))


def escaped(path: str) -> str:
    """`path` as a gitignore-style pattern that matches it alone (`[`, `*`, `?`, `\\` escaped)."""
    return _GLOB_SPECIAL.sub(r"\\\1", path)


def _validate(where: str, name: str, key: str, raw: Any, base: Path) -> Any:
    if key in ("select", "ignore", "extend-select"):
        return _codes(where, name, raw)
    if key in ("exclude", "per-file-ignores"):
        return _validate_patterns(where, name, key, raw, base)
    return _validate_scalar(where, name, key, raw)


def _validate_scalar(where: str, name: str, key: str, raw: Any) -> Any:
    """A setting with one value: the target, fail-on, portable, file-timeout (in seconds)."""
    if key == "target":
        if raw not in TARGETS:
            raise ConfigError(f"{where}: `{name}` = {shown(raw)}: choose one of {', '.join(TARGETS)}")
        return raw
    if key == "fail-on":
        if raw not in FAIL_ON:
            raise ConfigError(f"{where}: `{name}` = {shown(raw)}: choose one of {', '.join(FAIL_ON)}")
        return raw
    if key == "portable":
        if not isinstance(raw, bool):
            raise ConfigError(f"{where}: `{name}` = {shown(raw)}: true or false")
        return raw
    if key == "file-timeout":
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not 0 <= raw < 10**6:
            raise ConfigError(f"{where}: `{name}` = {shown(raw)}: a number of seconds (0: no limit)")
        return float(raw)
    raise AssertionError(key)  # pragma: no cover


def _validate_patterns(where: str, name: str, key: str, raw: Any, base: Path) -> Any:
    """`exclude` (patterns) and `per-file-ignores` (pattern -> codes), anchored to the folder of
    the file that sets them."""
    if key == "exclude":
        if not isinstance(raw, list) or not all(isinstance(p, str) and p for p in raw):
            raise ConfigError(f"{where}: `{name}` must be a list of gitignore-style patterns")
        head = rooted(base)  # (once: a `resolve` per pattern was most of 100,000 patterns' cost)
        return [anchor(check_pattern(p, f"{where}: `{name}`"), head) for p in raw]
    if key == "per-file-ignores":
        if not isinstance(raw, dict):
            raise ConfigError(f"{where}: `{name}` must be a table of pattern = [codes]")
        out = []
        head = rooted(base)
        for pattern, codes in raw.items():
            check_pattern(pattern, f"{where}: `{name}`")
            out.append((anchor(pattern, head), _codes(where, f'{name}."{cut(pattern, 40)}"', codes)))
        return out
    raise AssertionError(key)  # pragma: no cover


# -- merging ---------------------------------------------------------------------------------


def resolve(
    paths: list[Path],
    *,
    config_file: Path | None = None,
    isolated: bool = False,
    target: str | None = None,
    select: tuple[str, ...] | None = None,
    ignore: tuple[str, ...] = (),
    extend_select: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
    fail_on: str | None = None,
    portable: bool | None = None,
) -> Effective:
    """Defaults < config file < command line, with the source of every value.

    `portable` None: the command line said neither --portable nor --no-portable."""
    config = _project_config(paths, config_file=config_file, isolated=isolated)
    file_label = config.label
    defaults: dict[str, Any] = {
        "target": None,
        "select": [],
        "ignore": [],
        "extend-select": [],
        "per-file-ignores": [],
        "exclude": [],
        # info findings say "no action needed": they fail a run only when asked (--fail-on info)
        "fail-on": "warning",
        "file-timeout": None,
        "portable": False,
    }
    values = {
        k: Sourced(config.values[k], file_label) if k in config.values else Sourced(v, DEFAULT)
        for k, v in defaults.items()
    }
    overrides: dict[str, Any] = {"target": target, "fail-on": fail_on, "portable": portable}
    if select:
        overrides["select"] = list(select)
    for key, value in overrides.items():
        if value is not None:
            values[key] = Sourced(value, COMMAND_LINE)
    _extend(values, "ignore", ignore)
    _extend(values, "extend-select", extend_select)
    for pattern in exclude:
        check_pattern(pattern, "--exclude")
    _extend(values, "exclude", exclude)
    return Effective(values=values, config=config)


def _project_config(paths: list[Path], *, config_file: Path | None, isolated: bool) -> ProjectConfig:
    """The config file's settings: none with --isolated, the named file, else the one found
    above the paths (none when there is none)."""
    if isolated:
        return ProjectConfig()
    path = config_file if config_file is not None else discover_config(paths)
    if config_file is not None and not config_file.is_file():
        raise ConfigError(f"{config_file}: no such config file")
    return load_config(path) if path is not None else ProjectConfig()


def _extend(values: dict[str, Sourced], key: str, more: tuple[str, ...]) -> None:
    """A list setting the command line adds to (never replaces); the source names both."""
    if not more:
        return
    old = values[key]
    merged = list(old.value) + [m for m in more if m not in old.value]
    source = COMMAND_LINE if old.source == DEFAULT else f"{old.source} + {COMMAND_LINE}"
    values[key] = Sourced(merged, source)
