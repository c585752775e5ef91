"""Notebooks: code cells through the Python codemods, IPython escapes through the shell porters
(rules/notebooks.toml)."""
