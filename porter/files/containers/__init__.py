"""Containers: Dockerfiles and compose files (rules/containers.toml)."""
