"""Dependency files: what a repository installs (rules/deps.toml)."""
