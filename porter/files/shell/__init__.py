"""Launchers: shell scripts, Slurm batch files, Makefiles, and the environment variables they set
(rules/launch.toml, rules/env.toml)."""
