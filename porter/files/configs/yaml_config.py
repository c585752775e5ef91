"""YAML configs (any *.yml / *.yaml that is no conda environment or compose file)."""

from __future__ import annotations

from porter.config.settings import Settings
from porter.files.configs import checks
from porter.files.readers.tree import from_yaml
from porter.files.readers.yamlpos import documents
from porter.files.sites import Site, Text


def port(text: Text, path: str, settings: Settings) -> list[Site]:
    out: list[Site] = []
    for doc in documents(text):
        out.extend(checks.sites(from_yaml(text, doc), text.text, settings.target, json_like=False))
    return out
