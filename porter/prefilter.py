"""The bytes scan that decides whether a file is worth parsing.

Parsing costs ~1000x a bytes scan, and most files of a real repository have no CUDA code.
A file is parsed only if it contains a token of some rule enabled for the target; the
tokens live with the rules (`tokens = [...]` in rules/*.toml). The scan is exact enough:
a token in a comment admits a file that then yields nothing, never the other way round.
"""

from __future__ import annotations

import re
from functools import lru_cache

from porter.ruledata import all_rules, rule_enabled
from porter.settings import Settings


@lru_cache(maxsize=64)
def _pattern(target: str, select: tuple, ignore: tuple, extend: tuple) -> re.Pattern[bytes] | None:
    tokens: set[bytes] = set()
    for rule in all_rules().values():
        if rule_enabled(rule, target, select, ignore, extend):
            tokens.update(rule.tokens)
    if not tokens:
        return None
    # longest first, so the alternation stays cheap for the regex engine
    return re.compile(b"|".join(re.escape(t) for t in sorted(tokens, key=len, reverse=True)))


def admits(source: bytes, settings: Settings) -> bool:
    pattern = _pattern(settings.target, settings.select, settings.ignore, settings.extend_select)
    return pattern is not None and pattern.search(source) is not None
