"""JSON configs (DeepSpeed's, accelerate's, a project's own)."""

from __future__ import annotations

from porter.config.settings import Settings
from porter.core.kinds import OUTPUT_HEAD, is_porter_output
from porter.files.configs import checks
from porter.files.readers.jsonpos import parse
from porter.files.sites import Site, Text


def port(text: Text, path: str, settings: Settings) -> list[Site]:
    if is_porter_output(text.text[:OUTPUT_HEAD]):  # a report, baseline or findings of porter's own
        return []
    return checks.sites(parse(text.text), text.text, settings.target, json_like=True)
