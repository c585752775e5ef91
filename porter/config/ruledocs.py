"""`docs/rules.md` and `porter explain` are rendered from the rule data, never written by hand,
so the docs cannot drift from the behaviour (tests/test_rule_docs.py checks the file). Run as
a module it also writes `rules/compiled.json`, the rule files as JSON (`ruledata.load_toml`)."""

from __future__ import annotations

from itertools import groupby

from porter.config.metacodes import RuleInfo, meta_codes
from porter.config.ruledata import NOTE_GROUPS, Rule, all_rules
from porter.config.targets import all_targets

HEADER = """<!-- Generated from rules/*.toml by `python -m porter.config.ruledocs`. Do not edit by hand. -->
# porter rules

Each rule has a stable code, grouped by family. Select or ignore rules by code or prefix
(`--select DEV`, `--ignore CUDA006`). Fix safety follows ruff: **safe** fixes are applied by
`porter rewrite`; **unsafe** fixes change numerics or behaviour and need `--unsafe-fixes`;
**manual** sites get a finding with advice and no edit.

"""


def rule_markdown(rule: Rule, heading: str = "###") -> str:
    targets = all_targets()
    out = [f"{heading} {rule.code} `{rule.name}`", ""]
    out.append(f"**What it finds.** {rule.summary}")
    out.append("")
    if rule.covers:
        out += ["**What it covers.**", "", rule.covers]
        out.append("")
    if rule.rationale:
        out.append(f"**Why.** {rule.rationale}")
        out.append("")
    shown = "" if rule.needs_action else f' Reports show it under "{NOTE_GROUPS[rule.note_group]}", not as work left.'
    out.append(
        f"**Severity:** {rule.severity.value}.{shown}"
        + ("" if rule.default else " Off by default: turn it on with `--extend-select`.")
    )
    out.append("")
    out.append("| target | fix | advice |")
    out.append("|---|---|---|")
    for name in rule.targets:
        advice = (rule.advice_for(name) or "").replace("|", "\\|")
        out.append(f"| {targets[name].display} (`{name}`) | {rule.applicability_for(name).value} | {advice} |")
    out.append("")
    for ex in rule.examples:
        title = f" — {ex.title}" if ex.title else ""
        flag = " (with `--unsafe-fixes`)" if ex.unsafe_fixes else ""
        portable = " --portable" if ex.portable else ""
        lang = _language(ex.file)
        where = f", in `{ex.file}`" if ex.file else ""
        out.append(f"Example, `--target {ex.target}{portable}`{flag}{where}{title}:")
        out.append("")
        out.append(f"```{lang}")
        out.append(ex.before.strip("\n"))
        out.append("```")
        if ex.after != ex.before:
            out.append("becomes")
            out.append("")
            out.append(f"```{lang}")
            out.append(ex.after.strip("\n"))
            out.append("```")
        else:
            out.append("is reported and left as it is.")
        out.append("")
    if rule.references:
        out.append("References: " + ", ".join(f"<{r}>" for r in rule.references))
        out.append("")
    return "\n".join(out)


_LANGUAGES = (
    (".toml", "toml"),
    (".cfg", "ini"),
    (".yml", "yaml"),
    (".yaml", "yaml"),
    (".json", "json"),
    (".ipynb", "json"),
    (".sh", "bash"),
    (".slurm", "bash"),
    (".sbatch", "bash"),
    (".txt", "text"),
    (".py", "python"),
    ("Dockerfile", "dockerfile"),
    ("Makefile", "makefile"),
)


def _language(file: str) -> str:
    """The code fence's language for an example's file (Python when it names none)."""
    for suffix, lang in _LANGUAGES:
        if file.endswith(suffix) or file.startswith(suffix):
            return lang
    return "python" if not file else "text"


def meta_markdown(info: RuleInfo, heading: str = "###", more: str = "") -> str:
    """A meta code's page (PORT001, PORT100: codes lint's formats emit that are no rule): what it
    means and what to do, for `porter explain` and docs/rules.md. `more`: the link to the page
    that says more (its doc_url, a file URI of the install, by default)."""
    return (
        f"{heading} {info.code} `{info.name}`\n\n**What it reports.** {info.summary}.\n\n"
        f"**What to do.** {info.rationale}\n\n**Severity:** {info.severity.value}. A meta code, not a rule "
        f"(`porter rules` lists it after the rules).\n\nMore: {more or info.doc_url}\n"
    )


def rules_markdown() -> str:
    parts = [HEADER]
    rules = sorted(all_rules().values(), key=lambda r: (r.family, r.code))
    parts.append("| code | name | family | summary |\n|---|---|---|---|")
    rows: list[Rule | RuleInfo] = [*rules, *meta_codes()]
    for r in rows:
        summary = r.summary.replace("|", "\\|")
        parts.append(f"| [{r.code}](#{r.code.lower()}-{r.name}) | {r.name} | {r.family} | {summary} |")
    parts.append("")
    for family, group in groupby(rules, key=lambda r: r.family):
        parts.append(f"## {family}\n")
        for rule in group:
            parts.append(rule_markdown(rule))
    parts.append(
        "## meta codes\n\nCodes lint's formats emit that are no rule: a file not checked, an unused suppression.\n"
    )
    for info in meta_codes():
        page = info.doc_url.rsplit("/", 1)[-1]  # relative: the file URI names the install that ran
        parts.append(meta_markdown(info, more=f"[{page}]({page})"))
    return "\n".join(parts).rstrip() + "\n"


if __name__ == "__main__":
    from pathlib import Path

    target = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
    target.write_text(rules_markdown(), encoding="utf-8")
    print(f"wrote {target}")
    from porter.config.ruledata import COMPILED, compiled_rules, rules_dir

    compiled = rules_dir() / COMPILED
    compiled.write_text(compiled_rules(), encoding="utf-8")
    print(f"wrote {compiled}")
