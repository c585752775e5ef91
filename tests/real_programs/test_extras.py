"""The install extras carry what the real programs need: `realprog-quick` exactly what the one
program of every default run needs (the README's test command installs only that), `realprog`
what every program of the manifest needs (the benchmark run)."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks" / "real_programs"))

from fetch import load_manifest  # noqa: E402 - found through the sys.path entry above

from tests.real_programs.test_real_programs import IN_EVERY_RUN  # noqa: E402


def _extra(name: str) -> dict[str, str]:
    """canonical name -> specifier of an extra, with `porter[...]` references followed."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    out: dict[str, str] = {}
    for text in extras[name]:
        req = Requirement(text)
        if canonicalize_name(req.name) == "porter":
            for inner in req.extras:
                out.update(_extra(inner))
        else:
            out[canonicalize_name(req.name)] = str(req.specifier)
    return out


def _needs(program) -> dict[str, str]:
    return {canonicalize_name(Requirement(r).name): str(Requirement(r).specifier) for r in program.requires}


def test_quick_extra_is_what_every_run_needs():
    (program,) = [p for p in load_manifest() if p.name == IN_EVERY_RUN]
    assert _extra("realprog-quick") == _needs(program)


def test_realprog_extra_covers_every_program():
    extra = _extra("realprog")
    for program in load_manifest():
        for name, spec in _needs(program).items():
            assert name in extra, f"{program.name} needs {name}: add it to the realprog extra"
            assert extra[name] == spec, f"{program.name} pins {name}{spec}, the extra {name}{extra[name]}"
