"""Hatch environments' `env-vars` that pick the installer's package index (or uv's torch backend).

Hatch sets an environment's `env-vars` while it installs that environment's dependencies (hatch
1.18.2: `VirtualEnvironment.sync_dependencies` runs under `safe_activation`, which applies them), so
`PIP_EXTRA_INDEX_URL = ".../whl/cu121"` takes torch's CUDA build as the pip option would. Which
variables count is the environment's installer's: pip reads `PIP_*` only, uv (`installer = "uv"` or
a `uv-path`) `UV_*` only (uv 0.13.9 `pip compile -v` asks the index of each `UV_*` below and none of
`PIP_*`). An environment without its own `env-vars` or `installer` takes its template's (`template`,
`default` unless set): `hatch env show --json` shows a table set in both as the environment's own.
"""

from __future__ import annotations

from typing import Any

from porter.files.deps.indexes import INSTALLER_INDEX_VARIABLES, TORCH_BACKEND_VARIABLE, installer_variable


def installer_variables(doc: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(variable, value, the string written) of each `env-vars` entry that the installer of an environment
    using it reads (an index variable of its installer, or uv's torch backend): a table's entry, or an
    override's (`matrix.backend.env-vars = "PIP_EXTRA_INDEX_URL=URL"`, `[{ key = ..., value = ... }]`)."""
    hatch = doc.get("tool", {}).get("hatch") if isinstance(doc.get("tool"), dict) else None
    envs = hatch.get("envs") if isinstance(hatch, dict) else None
    if not isinstance(envs, dict):
        return []
    entries: list[tuple[str, tuple[str, str, str]]] = []  # (the installer, the entry)
    for name in sorted(set(envs) | {"default"}):
        uv = _env_setting(envs, name, "installer") == "uv" or bool(_env_setting(envs, name, "uv-path"))
        installers = {"uv" if uv else "pip"} | _override_installers(envs.get(name))
        source = _set_by(envs, name, "env-vars")
        table = envs[source]["env-vars"] if source is not None else {}
        rows = [(k, v, v) for k, v in table.items()] if isinstance(table, dict) else []
        rows += _override_entries(envs.get(name))
        entries += [(installer, row) for installer in sorted(installers) for row in rows]
    out: list[tuple[str, str, str]] = []
    for installer, (variable, value, written) in entries:
        backend = installer == "uv" and variable == TORCH_BACKEND_VARIABLE
        read = installer_variable(variable) in INSTALLER_INDEX_VARIABLES[installer] or backend
        if read and isinstance(value, str) and (variable, value, written) not in out:
            out.append((variable, value, written))
    return out


def _override_entries(env: Any) -> list[tuple[str, str, str]]:
    """(variable, value, the string written) of an environment's own `overrides.*.*.env-vars`."""
    overrides = env.get("overrides") if isinstance(env, dict) else None
    out: list[tuple[str, str, str]] = []
    for source in overrides.values() if isinstance(overrides, dict) else ():
        for condition in source.values() if isinstance(source, dict) else ():
            given = condition.get("env-vars") if isinstance(condition, dict) else None
            for item in given if isinstance(given, list) else [given]:
                if isinstance(item, str) and "=" in item:
                    variable, value = item.split("=", 1)
                    out.append((variable, value, item))
                elif isinstance(item, dict) and isinstance(item.get("key"), str) and isinstance(item.get("value"), str):
                    out.append((item["key"], item["value"], item["value"]))
    return out


def _override_installers(env: Any) -> set[str]:
    """The installers an environment's overrides give some of its matrix's environments
    (`matrix.tool.installer = [{ value = "uv", if = ["uv"] }]`: hatch 1.18.2's `test.uv` installs with uv,
    `test.pip` with pip, both with the table's `env-vars`)."""
    overrides = env.get("overrides") if isinstance(env, dict) else None
    out: set[str] = set()
    for source in overrides.values() if isinstance(overrides, dict) else ():
        for condition in source.values() if isinstance(source, dict) else ():
            given = condition.get("installer") if isinstance(condition, dict) else None
            for item in given if isinstance(given, list) else [given]:
                value = item.get("value") if isinstance(item, dict) else item
                if value in INSTALLER_INDEX_VARIABLES:
                    out.add(value)
    return out


def _set_by(envs: dict[str, Any], name: str, key: str) -> str | None:
    """The environment, `name` or a template up its chain, whose own table sets `key`."""
    seen: set[str] = set()
    while isinstance(envs.get(name), dict) and name not in seen:
        seen.add(name)
        if key in envs[name]:
            return name
        template = envs[name].get("template", "default")
        name = template if isinstance(template, str) else "default"
    return None


def _env_setting(envs: dict[str, Any], name: str, key: str) -> Any:
    """An environment's value of `key`, its own or its template chain's (None where none sets it)."""
    source = _set_by(envs, name, key)
    return None if source is None else envs[source][key]
