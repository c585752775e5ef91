"""Calls into the Hugging Face stack checked against its recorded API (API005, API006).

`rules/api/{transformers,accelerate,peft,trl}.json` (built by `porter.apidata.build hf` from the
pinned packages) says which keywords a class or function takes and which values a keyword
accepts. A keyword a closed signature does not have raises TypeError (API005:
`TrainingArguments(evaluation_strategy=...)`, renamed `eval_strategy` in transformers 5); a
string the library rejects fails at construction (API006: `ddp_backend="neuron"`,
`optim="adamw_apex_fused"`). Run on porter's own output (tests/helpers.conformance selects
`API`), this is what keeps a port from writing a value the library rejects.
"""

from __future__ import annotations

import libcst as cst

from porter.apidata.libraries import LibraryApi, LibraryCallable, library_api
from porter.codemods.family import Family, string_value

PACKAGES = ("transformers", "accelerate", "peft", "trl")
_LIBRARIES = tuple(f"{p}." for p in PACKAGES)
# keywords read from **kwargs whose accepted strings transformers records (keyword_values);
# `device_map` also takes device strings, so only its strategies are listed: not checked
_CHECKED_VALUES = ("attn_implementation", "cache_implementation", "dtype", "torch_dtype")


def _open_value(keyword: str, value: str) -> bool:
    """Values the recorded list cannot hold: kernels from the Hub (`"org/repo"`), paged variants."""
    return keyword == "attn_implementation" and ("/" in value or value.startswith("paged|"))


def _may_report(lib: LibraryApi, qual: str, keywords: set[str]) -> bool:
    """Whether `visit_Call` may report a call to `qual` passing the named `keywords`."""
    if not qual.startswith(_LIBRARIES):
        return False
    entry = lib.callable(qual)
    if entry is not None:
        if entry.closed and not keywords <= {p["name"] for p in entry.params}:
            return True
        if any(entry.choices(k) is not None for k in keywords):
            return True
    last = qual.rsplit(".", 1)[-1]
    return (
        qual.startswith("transformers.")
        and (last in ("from_pretrained", "from_config", "pipeline") or qual.endswith("Config"))
        and not keywords.isdisjoint(_CHECKED_VALUES)
    )


class LibraryApiFamily(Family):
    name = "library-api"
    tokens = (b"transformers", b"accelerate", b"peft", b"trl")

    candidate_reads_ast = True

    @classmethod
    def candidate(cls, ctx, source: bytes) -> bool:
        """Every finding is a named keyword of a call (`dotted_calls` keeps their names): a
        `.generate(...)` with one, or a callee an import qualifies
        (`Sites.qualified`) into the libraries that passes a keyword its recorded signature
        lacks (a closed one) or has choices for, or (transformers) one `_values` checks."""
        found = ctx.sites()
        if found is None:
            return True
        if "generate" in found.keyword_callees:
            return True
        lib = library_api()
        for name, keywords in found.dotted_calls.items():
            if keywords and any(_may_report(lib, qual, keywords) for qual in found.qualified(name)):
                return True
        return False

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.lib: LibraryApi = library_api()

    def visit_Call(self, node: cst.Call) -> None:
        qual = self.ctx.qualname(node.func)
        if qual is None or not qual.startswith(_LIBRARIES):
            if isinstance(node.func, cst.Attribute) and node.func.attr.value == "generate":
                self._values(node, "generate")
            return
        entry = self.lib.callable(qual)
        if entry is not None:
            self._keywords(node, entry)
            self._choices(node, entry)
        last = qual.rsplit(".", 1)[-1]
        if qual.startswith("transformers.") and (
            last in ("from_pretrained", "from_config", "pipeline") or qual.endswith("Config")
        ):
            self._values(node, qual)

    def _keywords(self, node: cst.Call, entry: LibraryCallable) -> None:
        if not entry.closed or any(a.star for a in node.args):
            return
        names = {p["name"] for p in entry.params}
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value not in names:
                self.ctx.report(
                    "API005",
                    arg,
                    f"`{entry.qualname}` has no keyword `{arg.keyword.value}` in "
                    f"{self.lib.source_of(entry.qualname)} (TypeError)",
                )

    def _choices(self, node: cst.Call, entry: LibraryCallable) -> None:
        for arg in node.args:
            if arg.keyword is None:
                continue
            choices = entry.choices(arg.keyword.value)
            value = string_value(arg.value)
            if choices is None or value is None or value in choices:
                continue
            self.ctx.report(
                "API006",
                arg.value,
                f"`{arg.keyword.value}={self.ctx.code(arg.value)}`: {self.lib.source_of(entry.qualname)} "
                f"accepts {', '.join(choices)}",
            )

    def _values(self, node: cst.Call, where: str) -> None:
        for arg in node.args:
            if arg.keyword is None or arg.keyword.value not in _CHECKED_VALUES:
                continue
            value = string_value(arg.value)
            accepted = self.lib.keyword_values.get(arg.keyword.value)
            if value is None or not accepted or value in accepted or _open_value(arg.keyword.value, value):
                continue
            self.ctx.report(
                "API006",
                arg.value,
                f"`{arg.keyword.value}={self.ctx.code(arg.value)}`: transformers "
                f"{self.lib.version('transformers')} accepts {', '.join(accepted)}",
            )
