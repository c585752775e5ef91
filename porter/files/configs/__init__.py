"""Configs: YAML, JSON and TOML files (rules/configs.toml)."""
