"""Libraries whose APIs take a device type in words of their own (`rules/frameworks.toml`,
`own_device_words`): ONNX Runtime's `IOBinding.bind_output(name, "cuda", 0)` names an ONNX
Runtime device, not a torch one. A string passed to one of those methods, in a module that
imports the library, is the library's vocabulary (literals.py keeps it); a function that hands
it CUDA's word runs that library on CUDA (backends.py keeps the function on CUDA)."""

from __future__ import annotations

from functools import lru_cache

from porter.analysis.cuda_only_index import imports_any
from porter.config.ruledata import load_toml


@lru_cache(maxsize=1)
def _entries() -> tuple[tuple[str, frozenset[str]], ...]:
    return tuple(
        (e["package"], frozenset(e["methods"])) for e in load_toml("frameworks.toml").get("own_device_words", ())
    )


@lru_cache(maxsize=8)
def own_device_words(source: bytes | None) -> dict[str, str]:
    """method -> its library, for the libraries `source` imports that name devices in words of
    their own (once per file: the families ask at each call; read it, never change it)."""
    out: dict[str, str] = {}
    if not source:
        return out
    for package, methods in _entries():
        if package.encode() in source and imports_any(source, frozenset((package.encode(),))):
            out.update(dict.fromkeys(methods, package))
    return out
