"""What a run is told: its settings, the config files they come from, the targets, and the
rule data (`rules/*.toml`) with the docs rendered from it."""
