"""Reports: one model of a run, several renderers (terminal, HTML, Markdown, JSON)."""
