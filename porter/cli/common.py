"""The plumbing every command shares: consoles, exit codes, usage errors, and the checks and
configuration that options go through. Command modules import from here (`options` for the
options they share, `writes` for writing files), never from each other."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import typer

from porter.config.files import FAIL_ON, ConfigError, Effective, resolve
from porter.config.ruledata import unknown_codes
from porter.config.settings import TARGETS, Settings
from porter.report.console import make_console
from porter.core.textsafe import plain

console = make_console()
err_console = make_console(stderr=True)

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def usage_error(message: str) -> typer.Exit:
    """Exit 2 with one line: `message` is printed as text (it may hold user paths)."""
    err_console.print(f"[bold red]error:[/] {plain(message)}", soft_wrap=True)
    return typer.Exit(EXIT_ERROR)


def check_target(target: str | None) -> str:
    if target is None:
        raise usage_error(f"--target is required: one of {', '.join(TARGETS)}")
    if target not in TARGETS:
        raise usage_error(f"unknown target {target!r}: choose one of {', '.join(TARGETS)}")
    return target


MAX_FILE_TIMEOUT = 10**6  # seconds: what the config file accepts too (`file-timeout`)


def check_file_timeout(value: float | None) -> float | None:
    """`--file-timeout`: a finite number of seconds, 0 (no limit) up to a million; anything
    else (inf, nan, 1e20: numbers no clock can wait for) is a usage error."""
    if value is None:
        return None
    if not math.isfinite(value) or not 0 <= value < MAX_FILE_TIMEOUT:
        raise typer.BadParameter(
            f"{value!r}: a number of seconds from 0 (no limit) to {MAX_FILE_TIMEOUT:,}", param_hint="'--file-timeout'"
        )
    return value


def split_codes(values: list[str] | None) -> tuple[str, ...]:
    codes: list[str] = []
    for v in values or []:
        codes.extend(c.strip().upper() for c in v.split(",") if c.strip())
    bad = unknown_codes(tuple(codes))
    if bad:
        raise usage_error(f"unknown rule code or prefix: {', '.join(bad)} (see `porter rules`)")
    return tuple(codes)


def effective_config(
    paths: list[Path],
    *,
    config: Path | None,
    isolated: bool,
    target: str | None,
    select: list[str] | None,
    ignore: list[str] | None,
    extend_select: list[str] | None,
    exclude: list[str] | None,
    fail_on: str | None = None,
    portable: bool | None = None,
) -> Effective:
    """Config file + command line, or a usage error (exit 2) naming what is wrong."""
    if target is not None and target not in TARGETS:
        raise usage_error(f"unknown target {target!r}: choose one of {', '.join(TARGETS)}")
    if fail_on is not None and fail_on not in FAIL_ON:
        raise usage_error(f"--fail-on {fail_on!r}: choose one of {', '.join(FAIL_ON)}")
    try:
        return resolve(
            paths,
            config_file=config,
            isolated=isolated,
            target=target,
            select=split_codes(select) or None,
            ignore=split_codes(ignore),
            extend_select=split_codes(extend_select),
            exclude=tuple(exclude or ()),
            fail_on=fail_on,
            portable=portable,
        )
    except ConfigError as exc:
        raise usage_error(str(exc)) from None


def note_if_cache_off(no_cache: bool) -> None:
    """Say once, on stderr, why the cache cannot be used (its key is missing or not the
    user's own): a run then works as with --no-cache, never fails for it."""
    if no_cache or os.environ.get("PORTER_NO_CACHE", "").strip().lower() not in ("", "0", "false", "no"):
        return
    from porter.pipeline.cache import KEY_ENV, user_key

    _, problem = user_key()
    if problem is not None:
        err_console.print(
            f"note: the cache is off: {plain(problem)}; or set {KEY_ENV} (--no-cache silences this note)",
            soft_wrap=True,
        )


def check_paths(paths: list[Path]) -> None:
    """A usage error naming every path given that does not exist."""
    missing = [p for p in paths if not os.path.lexists(p)]
    if missing:
        raise usage_error(f"no such file or directory: {', '.join(str(p) for p in missing)}")


def settings_of(eff: Effective, **extra: Any) -> Settings:
    """The run's settings from the effective configuration, or a usage error."""
    try:
        return eff.settings(**extra)
    except ValueError as exc:  # a ConfigError, or a combination Settings refuses
        raise usage_error(str(exc)) from None
