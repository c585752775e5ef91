"""Readers of YAML, JSON and TOML that keep each value's place in the text, so that an edit
replaces only the characters of that value; the configs and the dependency files read them."""
