"""Rule data: `rules/*.toml` loaded into `Rule` records, and code selection.

The rule files are the single source for codes, names, advice, examples and docs, and for
which rule family owns each code: a file's `family` key names the family of its rules, a
rule's own `family` key overrides it (`porter/codemods/<family>.py` implements it). The
codemods only cite codes. An installed wheel carries the files as `porter/_rules`.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from porter.core.findings import Applicability, Severity


@cache  # the install does not move during a run (rules_dir is asked ~30 times a run)
def _package() -> Path:
    return Path(__file__).resolve().parents[1]


def rules_dir() -> Path:
    here = _package()  # the porter package
    packaged = here / "_rules"
    return packaged if packaged.is_dir() else here.parent / "rules"


@cache  # the install does not move during a run (resolved once: it was once per finding)
def docs_dir() -> Path:
    """porter's own documentation: shipped in the wheel as `porter/_docs`, else the checkout's."""
    here = Path(__file__).resolve().parents[1]  # the porter package
    packaged = here / "_docs"
    return packaged if packaged.is_dir() else here.parent / "docs"


@lru_cache(maxsize=1024)  # once per finding: a file of 200,000 findings built 200,000 URIs
def doc_uri(page: str, anchor: str = "") -> str:
    """A link to a page of porter's shipped documentation (a file URI: it is read offline)."""
    uri = (docs_dir() / page).as_uri()
    return f"{uri}#{anchor}" if anchor else uri


# the rule files' data as JSON, beside them (`python -m porter.config.ruledocs` writes it):
# every run reads every rule file, and json parses them in a thirtieth of tomllib's time
COMPILED = "compiled.json"


@cache
def load_toml(name: str) -> dict[str, Any]:
    """A rule data file, parsed once per process (the rules, the prefilter and the families
    all read the same files). The dict is shared: read it, never change it. Its data comes
    from `COMPILED` when that holds it for these very bytes (the sha256 matches), else from
    the file itself: an edited rule file is never answered by a stale copy."""
    with open(rules_dir() / name, "rb") as fh:
        raw = fh.read()
    held = _compiled().get(name)
    if type(held) is list and len(held) == 2 and type(held[1]) is dict and held[0] == hashlib.sha256(raw).hexdigest():
        return held[1]
    return tomllib.loads(raw.decode("utf-8"))


@cache
def _compiled() -> dict[str, Any]:
    """`COMPILED`: each rule file's name -> [the sha256 of its bytes, its data]; {} when it is
    missing or unreadable (every file is parsed)."""
    try:
        with open(rules_dir() / COMPILED, "rb") as fh:
            data = json.load(fh)
    except (OSError, ValueError, RecursionError):
        return {}
    return data if type(data) is dict else {}


def compiled_rules() -> str:
    """`COMPILED`'s text for the rule files as they are now: every `*.toml` under the rules
    folder whose data JSON carries unchanged (all of them today: strings, numbers, booleans,
    arrays and tables). One file a line, a blank line between two: branches that edit
    different rule files merge without a conflict."""
    lines = []
    folder = rules_dir()
    for path in sorted(folder.glob("**/*.toml")):
        raw = path.read_bytes()
        data = tomllib.loads(raw.decode("utf-8"))
        if json.loads(json.dumps(data)) == data:
            held = [hashlib.sha256(raw).hexdigest(), data]
            lines.append(json.dumps(path.relative_to(folder).as_posix()) + ":" + _compact(held))
    return "{\n" + ",\n\n".join(lines) + "\n}\n"


def _compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class Example:
    target: str
    before: str
    after: str
    unsafe_fixes: bool = False
    title: str = ""
    portable: bool = False  # the example runs with --portable
    file: str = ""  # the name of the file the example is ("" for a Python file): `requirements.txt`, `Dockerfile` ...
    # dependency files: the CUDA-only modules the run's Python still imports after the port
    # (`Settings.imported_after_port`); None when the example does not say
    imported_after_port: tuple[str, ...] | None = None


# What a report makes of a finding that asks nothing of a person (severity "info"): it is not
# counted as work left, but shown under its own heading. A rule says which with `note_group`.
NOTE_GROUPS = {"kept-on-cuda": "Kept on CUDA by design", "note": "Notes"}

# A rule's `summary` is a title-length "what it finds", as ruff's rule pages have: one sentence of
# at most this many characters. It is a finding's message where the site gives none, SARIF's
# `shortDescription`, a JUnit failure's message, a line of `porter rules`, of the reports' rule
# lists and of docs/rules.md's index. Every case a rule handles goes in `covers`.
SUMMARY_MAX_CHARS = 200


def summary_problem(summary: str) -> str | None:
    """Why a rule's summary is not one sentence of at most SUMMARY_MAX_CHARS characters; None if it is.

    A sentence ends at `.`, `!` or `?` before a space, outside `code` spans (`...` and `e.g.` do not end one).
    """
    if len(summary) > SUMMARY_MAX_CHARS:
        return f"{len(summary)} characters, more than {SUMMARY_MAX_CHARS}: put the cases in `covers`"
    prose = re.sub(r"`[^`]*`", "x", summary).replace("...", "").replace("e.g.", "eg").replace("i.e.", "ie")
    if re.search(r"[.!?]\s+\S", prose):
        return "more than one sentence: put the rest in `covers`"
    return None


# A rule's `covers` is a list a reader scans, one case an item of at most this many characters:
# written as one paragraph, BACK008's ran to 2,349 characters and GUARD004's to 1,564 (stop 40).
COVERS_ITEM_MAX_CHARS = 300


def covers_text(code: str, covers: Any) -> str:
    """A rule's `covers` (a list of cases in the rule file) as the Markdown list every output shows."""
    if not isinstance(covers, list) or not all(isinstance(c, str) and c.strip() for c in covers):
        raise ValueError(f"{code}: covers: a list of cases, one string each")
    long = [c for c in covers if len(c) > COVERS_ITEM_MAX_CHARS]
    if long:
        raise ValueError(
            f"{code}: covers: a case of {len(long[0])} characters, more than {COVERS_ITEM_MAX_CHARS}: split it"
        )
    return "\n".join(f"- {c}" for c in covers)


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    family: str  # the rule family that owns the code: porter/codemods/<family, `-` as `_`>.py
    summary: str  # one sentence (SUMMARY_MAX_CHARS)
    rationale: str
    severity: Severity
    fix: dict[str, Applicability]  # per target
    advice: dict[str, str]  # per target ("*" for all)
    tokens: tuple[bytes, ...]  # prefilter: a file must contain one of these to be parsed
    default: bool = True  # on unless selected explicitly (PERF rules are off by default)
    targets: tuple[str, ...] = ("neuron", "tpu", "xla")
    references: tuple[str, ...] = ()
    examples: tuple[Example, ...] = field(default=())
    note_group: str = "note"  # info rules: the report heading (NOTE_GROUPS) its findings go under
    # the kinds of file the rule reads (porter.core.kinds): Python unless its rules file says
    kinds: tuple[str, ...] = ("python",)
    covers: str = ""  # every case the rule finds, where the summary names only the kind: a Markdown list

    @property
    def needs_action(self) -> bool:
        """False for info rules: their findings say what porter kept or noticed, not work left."""
        return self.severity is not Severity.INFO

    @property
    def doc_url(self) -> str:
        """This rule's section of the shipped docs/rules.md (`porter explain CODE` prints it)."""
        return doc_uri("rules.md", f"{self.code.lower()}-{self.name}")

    def advice_for(self, target: str) -> str | None:
        return self.advice.get(target) or self.advice.get("*")

    def applicability_for(self, target: str) -> Applicability:
        return self.fix.get(target, self.fix.get("*", Applicability.MANUAL))


def _rule_from_table(family: str, table: dict[str, Any], kinds: tuple[str, ...] = ("python",)) -> Rule:
    fix = {t: Applicability(v) for t, v in table.get("fix", {}).items()}
    examples = tuple(
        Example(
            target=e["target"],
            before=e["before"],
            after=e.get("after", e["before"]),
            unsafe_fixes=e.get("unsafe_fixes", False),
            title=e.get("title", ""),
            portable=e.get("portable", False),
            file=e.get("file", ""),
            imported_after_port=tuple(e["imported_after_port"]) if "imported_after_port" in e else None,
        )
        for e in table.get("examples", [])
    )
    severity = Severity(table.get("severity", "warning"))
    note_group = table.get("note_group", "note")
    if note_group not in NOTE_GROUPS:
        raise ValueError(f"{table['code']}: note_group {note_group!r}: one of {', '.join(NOTE_GROUPS)}")
    if "note_group" in table and severity is not Severity.INFO:
        raise ValueError(f"{table['code']}: note_group is for info rules only (severity is {severity.value})")
    problem = summary_problem(table["summary"])
    if problem:
        raise ValueError(f"{table['code']}: summary: {problem}")
    return Rule(
        code=table["code"],
        name=table["name"],
        family=table.get("family", family),
        summary=table["summary"],
        rationale=table.get("rationale", ""),
        severity=severity,
        fix=fix,
        advice=dict(table.get("advice", {})),
        tokens=tuple(t.encode() for t in table.get("tokens", [])),
        default=table.get("default", True),
        targets=tuple(table.get("targets", ("neuron", "tpu", "xla"))),
        references=tuple(table.get("references", ())),
        examples=examples,
        note_group=note_group,
        kinds=tuple(table.get("kinds", kinds)),
        covers=covers_text(table["code"], table["covers"]) if "covers" in table else "",
    )


@lru_cache(maxsize=1)
def all_rules() -> dict[str, Rule]:
    rules: dict[str, Rule] = {}
    for path in sorted(rules_dir().glob("*.toml")):
        data = load_toml(path.name)
        family = data.get("family", path.stem.replace("_", "-"))
        kinds = tuple(data.get("kinds", ("python",)))
        for table in data.get("rule", []):
            rule = _rule_from_table(family, table, kinds)
            if rule.code in rules:
                raise ValueError(f"{path.name}: rule code {rule.code} defined twice")
            rules[rule.code] = rule
    return rules


def get_rule(code: str) -> Rule:
    return all_rules()[code]


@cache
def family_codes(family: str) -> tuple[str, ...]:
    """The codes a rule family owns: every rule whose `family` names it, in code order."""
    return tuple(sorted(code for code, rule in all_rules().items() if rule.family == family))


def _matches(code: str, patterns: tuple[str, ...]) -> int:
    """Length of the longest pattern (code or prefix) matching code; 0 if none.

    Longest match wins between select and ignore, as in ruff: `--select DEV --ignore DEV001`
    keeps every DEV rule but DEV001.
    """
    best = 0
    for pattern in patterns:
        p = pattern.strip().upper()
        if p == "ALL" and best == 0:
            best = 1
        elif p and code.startswith(p):
            best = max(best, len(p) + 1)
    return best


def rule_enabled(
    rule: Rule,
    target: str,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    extend_select: tuple[str, ...] = (),
) -> bool:
    if target not in rule.targets:
        return False
    chosen = _matches(rule.code, tuple(select) + tuple(extend_select))
    if select:
        on = chosen > 0
    else:
        on = rule.default or chosen > 0
    ignored = _matches(rule.code, ignore)
    return on and not (ignored and ignored >= chosen)


def rule_computed(
    rule: Rule,
    target: str,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    extend_select: tuple[str, ...] = (),
) -> bool:
    """Whether porter computes what `rule` finds: it is enabled, or a run without `select` would
    enable it (`select` only chooses what is reported and applied, as in ruff). Another
    rule may read its facts: BACK005 is a kind of region the BACK001 analysis makes, XLA005
    follows the moves DEV001 finds, GUARD003 is the code GUARD001 keeps on CUDA. `ignore`
    still turns it off: `--ignore GUARD003` ports the code GUARD003 would leave."""
    if rule_enabled(rule, target, select, ignore, extend_select):
        return True
    return bool(select) and rule_enabled(rule, target, (), ignore, tuple(extend_select) + tuple(select))


def unknown_codes(patterns: tuple[str, ...]) -> list[str]:
    """Patterns that match no rule code: a typo in --select should fail, not pass silently."""
    if not patterns:
        return []  # nothing to check: the rule files need not be read
    prefixes = _code_prefixes()  # (a set: 100,000 codes in a config took 6 s against every rule)
    return [p for p in patterns if p.upper() != "ALL" and p.upper() not in prefixes]


@lru_cache(maxsize=1)
def _code_prefixes() -> frozenset[str]:
    """Every prefix of every rule code ("" and the codes themselves too)."""
    return frozenset(code[:n] for code in all_rules() for n in range(len(code) + 1))
