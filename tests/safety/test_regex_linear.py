"""Contract 6 (bounded work), checked for the whole class: every compiled regular expression in
the porter package, searched over inputs built from its own parts, takes time linear in the text.
Three adversarial reads in a row (14, 15 and the one after) each found one more pattern that
backtracked polynomially on crafted file text; this test reads every pattern instead of waiting
for the next read (issue 24).

How: import every porter module, collect each `re.Pattern` held at module level (also inside
classes, dicts, lists and tuples there), parse it (`re._parser`) for the characters it names
(literals, class members, categories) and its literal runs, and scan runs made of each of them,
each pair of them alternating, each literal run repeated and each character before a run of
another, with and without newlines between the repeats (and a last character that fails the
match). A scan is `finditer` to its end, or `match` and `fullmatch` for a pattern porter only
matches at one place (`ANCHORED`, with its call sites). A scan of `SIZE` characters that takes
under `FLOOR_S` of CPU time passes (a quadratic scan of that size takes tens of milliseconds);
one over it is timed again at twice the size, and one that more than doubled at half, one and
twice the size, and fails when the time grows more than `RATIO` times per doubling (a linear
scan doubles, a quadratic one quadruples). CPU time, so a loaded machine's other processes do
not count. Each scan is cut off after `CAP_S` (an exponential or cubic pattern fails there
instead of hanging), and the sweep runs in a child process under `SWEEP_LIMIT_S`, so no pattern
can block the run: about 7 CPU seconds in all (`python tests/safety/test_regex_linear.py -v`
prints each pattern as it goes)."""

from __future__ import annotations

import importlib
import itertools
import json
import os
import pkgutil
import re
import signal
import subprocess
import sys
import time
from pathlib import Path


import porter

REPO = Path(__file__).resolve().parents[2]

try:
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # Python 3.10
    import sre_parse

SIZE = 4_096  # characters of the first scan of each input
FLOOR_S = 0.003  # a linear scan of SIZE characters takes well under this (a quadratic one 10-30 ms)
RATIO = 3.0  # the growth per doubling over which a scan fails: linear 2, quadratic 4
CAP_S = 2.0  # a scan is cut off here, by the clock (and fails): a linear scan of 2 * SIZE characters takes ~1 ms
SWEEP_LIMIT_S = 300  # the whole sweep, in its own process (7 CPU s; 42-54 s of the clock at load average 13)
MAX_CHARS = 8  # the characters a pattern names, the first this many (literals first)
FAIL = "\x01"  # a character no porter pattern names: the match fails there

# Patterns (by where they are held) that a searched scan would flag but whose use is linear, each
# with its call site and why (name -> reason).
ALLOWED: dict[str, str] = {
    "porter.files.shell.commands._EXTRAS": "`_extras` searches a word only up to its last `]`, where every `[` closes",
}

# Patterns (by where they are held) only ever applied with `match` / `fullmatch` at one place of a
# text (a line's start, a name, the end of a token), never searched: the sweep times those two on
# its inputs instead of `finditer` (name -> the call sites). Searched from every position, most of
# these would be quadratic; matched at one place each is linear (and checked so).
ANCHORED: dict[str, str] = {
    "porter.analysis.device_backends._COLON": "class_statements: after a class head's `)`, once per `)`",
    "porter.analysis.native_ops._WRAPPED": "_op_strings: at the end of each `m.def(` / `m.impl(` call",
    "porter.analysis.native_ops._OP": "registrations: at the start of the text of each call's first strings",
    "porter.kernels.inventory._BRANCH_END": "_head_branches: fullmatch after the `)` of a branch's parameters",
    "porter.analysis.prefilter._NOTEBOOK_TEXT": "_subscripted: match at a file's start",
    "porter.core.kinds._REQUIREMENTS": "kinds.kind: fullmatch of a file's base name",
    "porter.kernels.inventory._OPENS": "_launches: match once after each launch's `>>>`, then read past",
    "porter.kernels.inventory._LAUNCHED_NAME": "_launch_expression: fullmatch of the inside of a launch's `(k)`",
    "porter.kernels.scaffold._DATA": "_c_values: fullmatch of one launch argument",
    "porter.core.kinds._DOCKERFILE": "kinds.kind, kinds.may_be_config: fullmatch of a file's (base) name",
    "porter.report.series._TEST_NAME": "is_test_file: fullmatch of a path's last part",
    "porter.files.configs.checks._ENV_LINE": "a config's shell-like line: match at its start",
    "porter.files.configs.toml_config._SCALAR": "_Placer.build: match at the place of a scalar value",
    "porter.files.containers.dockerfile._LEGACY_NAME": "_variables: match at the start of an `ENV NAME value`'s arguments",
    "porter.files.readers.dockerfile_instructions._INSTRUCTION": "instructions: match at each line's start",
    "porter.files.deps.conda._CONDA_SPEC": "_conda_package: match of one dependency string",
    "porter.files.deps.setup_cfg._SECTION": "setup_cfg.port: fullmatch of a stripped line",
    "porter.files.deps.setup_cfg._KEY": "_line_value: match at a line's start",
    "porter.files.notebooks.magics._ASSIGNED": "a notebook line: match at its start",
    "porter.files.shell.env._NCCL": "rule_of: fullmatch of a variable's name",
    "porter.files.shell.env._CUDA": "rule_of: fullmatch of a variable's name",
    "porter.files.shell.names._CUDA_WORD": "cuda_name: fullmatch of a define's name",
    "porter.files.shell.makefile._ASSIGNMENT": "_unread_lines: match at a line's start",
    "porter.files.shell.makefile._RULE_LINE": "_unread_lines: match at a line's start",
    "porter.files.shell.commands._NVIDIA_LIB": "nvidia_file (`_first`): match at the first start of each run",
    "porter.files.shell.commands._NVIDIA_ICD": "nvidia_file (`_first`): match at the first start of each run",
}


# Patterns compiled at call time (`re.search(rf"\\b{re.escape(name)}\\b", text)` in a function, or
# a literal pattern used inside one): no module holds them, so `patterns()` cannot collect them.
# The sweep reads them from porter's source instead (`call_time_patterns`): a literal pattern as
# it stands, a built one by evaluating its expression, as written in porter, in its module with
# these sample values for the names its function binds (module.function -> bindings). A built
# pattern whose names are missing here fails the test, so a new one cannot slip past the sweep
# (the seventeenth read found three quadratic and one cubic that had).
CALL_TIME: dict[str, dict[str, object]] = {
    "porter.analysis.cuda_only_index._module_attributes": {"leaves": {b"apex": 0, b"amp_C": 0}, "local": "ops"},
    "porter.analysis.cuda_only_index.names_word": {"alternatives": b"fused_adam|fused_lamb"},
    "porter.analysis.cuda_only_index._op_patterns": {"aten": b"_fused_adam|_fused_sdp_choice", "torch": b"_C._nccl"},
    "porter.analysis.cuda_only_index._package_string": {"names": b"apex|flash_attn|xformers"},
    "porter.analysis.device_backends.cuda_backend_facts": {"name": "a.set_device"},
    "porter.analysis.native_ops.__init__": {
        "self": type("Registering", (), {"_macros": {b"REG": 0, b"REG_CPU": 0, b"IMPL": 0}})()
    },
    "porter.analysis.native_ops._cpu_fallbacks": {"var": b"m"},
    "porter.analysis.prefilter._subscripted": {"name": b"ops.scale"},
    "porter.analysis.device_backends._accessor_facts": {"accessors": {"device_type": "", "kind": ""}},
    "porter.analysis.device_backends._call_facts": {"name": "get_device"},
    "porter.analysis.device_backends._handing_on": {"keys": {"pick", "pack"}},
    "porter.codemods.apply._drop_unneeded_aliases": {"item": type("Item", (), {"alias": "np"})},
    "porter.codemods.backends._list_said": {"v": "cuda"},
    "porter.codemods.backends._foreign_classes": {"n": "Acc"},
    "porter.codemods.device._help_of_default": {"was": "cuda:0"},
    "porter.codemods.device_helper.pick_name": {"name": "_device_type", "n": 2},
    "porter.codemods.imports.reads": {"pattern": r"(?<![\w.])" + re.escape("torch.cuda") + r"\b"},
    "porter.config.globs._read": {"read": (True, None, "^(?:.+/)?(?>[^/]*?a)b(?:/.*)?$")},
    "porter.config.globs._union": {
        "regex": "(?:^(?:.+/)?[ab][cd][^/]*\\.py(?:(?:/)|$)|^(?:.+/)?(?>[^/]*?a)(?>[^/]*?b)[^/]*\\.py(?:(?:/)|$))",
        "fold": True,
    },
    "porter.config.globs.check": {"regex": "^(?:.+/)?[^/]*a(?:/.*)?$"},
    "porter.config.globs._folded": {"regex": re.compile("^(?:.+/)?(?>[^/]*?a)b(?:/.*)?$", re.DOTALL)},
    "porter.config.globs._key_search": {"texts": ["ab.py", "*", "a|b"]},
    "porter.files.configs.checks._kernel_value": {},
    "porter.files.configs.toml_config.table": {"dotted": r"[ \t]*\.[ \t]*".join(("tool", "porter"))},
    "porter.files.deps.build_read._named": {
        "rel": "requirements.txt",
        "joined": r"""['"]\s*,\s*['"]""".join(("req", "a.txt")),
    },
    "porter.files.deps.imports._modules_re": {"names": ["apex", "xformers"]},
    "porter.kernels.inventory._kernel_head": {
        "voids": ("void_t", "V"),
        "spelled": r"__global__|(?<!\w)CUTLASS_GLOBAL",
        "both": r"(?<!\w)KERNEL|(?<!\w)K",
    },
    "porter.kernels.inventory._pointed": {"name": "kernel"},
    "porter.kernels.inventory._unread_marks": {"marks": "\u0301\u0303"},
    "porter.kernels.inventory._spelled_in_macros": {"globals_": ("CUTLASS_GLOBAL", "MY_GLOBAL")},
    "porter.kernels.scaffold._c_writes": {"name": "out", "alt": "out|p"},
    "porter.kernels.scaffold._passed": {"alt": "out|p"},
    "porter.kernels.scaffold._functor": {"name": "op"},
}

# Call-time patterns (by site) only ever matched at one place, like ANCHORED (re.match and
# re.fullmatch calls are anchored already).
CALL_TIME_ANCHORED: dict[str, str] = {
    "porter.kernels.scaffold._passed": "`pointer.match(arg)` only, at each argument's start",
}

_RE_CALLS = {
    "compile": 1,
    "search": 2,
    "match": 2,
    "fullmatch": 2,
    "findall": 2,
    "finditer": 2,
    "sub": 4,
    "subn": 4,
    "split": 3,
}


def _call_sites():
    """(module, site, pattern expression, flags expression or None, anchored) for each `re.*`
    call in porter that compiles its pattern at call time: inside a function, or built."""
    import ast

    root = Path(porter.__file__).resolve().parent
    for path in sorted(root.rglob("*.py")):
        module = "porter." + ".".join(path.relative_to(root).with_suffix("").parts)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn, node in _re_calls(tree):
            if not node.args or fn is None:
                continue  # compiled at import, held by its module: `patterns()` has it
            flags = next((k.value for k in node.keywords if k.arg == "flags"), None)
            place = _RE_CALLS[node.func.attr]  # type: ignore[attr-defined]
            if flags is None and len(node.args) > place:
                flags = node.args[place]
            site = f"{module}.{fn or '<module>'}: {ast.unparse(node.args[0])}"
            yield module, site, node.args[0], flags, node.func.attr in ("match", "fullmatch")  # type: ignore[attr-defined]


def _re_calls(tree, fn=None):
    import ast

    for node in ast.iter_child_nodes(tree):
        inner = node.name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else fn
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re"
            and node.func.attr in _RE_CALLS
        ):
            yield fn, node
        yield from _re_calls(node, inner)


def call_time_patterns() -> tuple[list[tuple[re.Pattern, str, bool]], list[str]]:
    """([(pattern, site, anchored)], [sites of built patterns CALL_TIME has no sample for])."""
    import ast

    out, missing = [], []
    for module, site, expr, flags, anchored in _call_sites():
        namespace = {**vars(importlib.import_module(module)), "re": re}
        namespace.update(CALL_TIME.get(site.partition(":")[0], {}))
        try:
            text = eval(compile(ast.Expression(expr), site, "eval"), namespace)  # noqa: S307 - porter's own source
            flag = eval(compile(ast.Expression(flags), site, "eval"), namespace) if flags is not None else 0  # noqa: S307
        except NameError as exc:
            missing.append(f"{site} ({exc})")
            continue
        out.append((re.compile(text, flag), site, anchored or site in CALL_TIME_ANCHORED))
    return out, missing


def _named(table: dict[str, str]) -> set[str]:
    """The pattern texts `table` names (each name a compiled pattern of a porter module)."""
    out = set()
    for name in table:
        module, _, attribute = name.rpartition(".")
        pattern = getattr(importlib.import_module(module), attribute)
        assert isinstance(pattern, re.Pattern), name
        out.add(_text(pattern))
    return out


def _modules():
    for info in pkgutil.walk_packages(porter.__path__, "porter."):
        if info.name.endswith("__main__"):
            continue
        yield importlib.import_module(info.name)


def _collect(value, where: str, found: dict, depth: int = 0) -> None:
    if isinstance(value, re.Pattern):
        found.setdefault((value.pattern, value.flags), (value, where))
    elif depth > 3:
        return
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            _collect(item, where, found, depth + 1)
    elif isinstance(value, dict):
        for item in value.values():
            _collect(item, where, found, depth + 1)
    elif isinstance(value, type) and value.__module__.startswith("porter"):
        for name, item in vars(value).items():
            _collect(item, f"{where}.{name}", found, depth + 1)


def patterns() -> list[tuple[re.Pattern, str]]:
    found: dict = {}
    for module in _modules():
        for name, value in vars(module).items():
            _collect(value, f"{module.__name__}.{name}", found)
    return list(found.values())


_CATEGORY = {
    "CATEGORY_DIGIT": "0",
    "CATEGORY_NOT_DIGIT": "a",
    "CATEGORY_SPACE": " \n",
    "CATEGORY_NOT_SPACE": "a(",
    "CATEGORY_WORD": "a_",
    "CATEGORY_NOT_WORD": " (",
    "CATEGORY_LINEBREAK": "\n",
    "CATEGORY_NOT_LINEBREAK": "a",
}


def _parts(parsed, chars: list[str], runs: list[str]) -> None:
    """The characters `parsed` names, in order, and its runs of two or more literals."""
    run: list[str] = []
    for op, arg in parsed:
        name = str(op)
        if name == "LITERAL":
            run.append(chr(arg))
            chars.append(chr(arg))
            continue
        if len(run) > 1:
            runs.append("".join(run))
        run = []
        if name == "NOT_LITERAL":
            chars.append("a" if chr(arg) != "a" else "b")
        elif name == "ANY":
            chars.extend("a\n")
        elif name == "IN":
            for item_op, item in arg:
                kind = str(item_op)
                if kind == "LITERAL":
                    chars.append(chr(item))
                elif kind == "RANGE":
                    chars.append(chr(item[0]))
                elif kind == "CATEGORY":
                    chars.extend(_CATEGORY.get(str(item), ""))
        else:
            _nested(arg, chars, runs)
    if len(run) > 1:
        runs.append("".join(run))


def _nested(arg, chars: list[str], runs: list[str]) -> None:
    if isinstance(arg, sre_parse.SubPattern):
        _parts(arg, chars, runs)
    elif isinstance(arg, (list, tuple)):
        for item in arg:
            _nested(item, chars, runs)


def units(pattern: re.Pattern) -> list[tuple[str, str, str]]:
    """(head, unit, tail) triples: an input is `head`, `unit` repeated, then `tail`. The units
    are each character the pattern names, each pair of them and each literal run; the heads are
    each character before a run of each other one (`[` and spaces: `\\[\\s*(.+?)\\s*\\]`), and
    each character, another and itself again before a run of the other that the first ends
    (`A x` + spaces + `y` for `\\s*(\\w+)\\s+(.+?)\\s*$`: a lazy group before a run that must
    reach the end, which only a run with something after it shows), and the first literal run
    and a character before a run of another (`atomic(` + spaces for `atomic\\w*\\s*\\(\\s*&?\\s*\\(?\\s*x`)."""
    chars: list[str] = []
    runs: list[str] = []
    text = pattern.pattern if isinstance(pattern.pattern, str) else pattern.pattern.decode("latin-1")
    _parts(
        sre_parse.parse(text, pattern.flags & ~re.UNICODE if isinstance(pattern.pattern, bytes) else pattern.flags),
        chars,
        runs,
    )
    named = list(dict.fromkeys(c for c in chars if c != FAIL))[:MAX_CHARS]
    pairs = [a + b for a, b in itertools.combinations(named, 2)]
    headed = [(a, b) for a, b in itertools.permutations(named, 2)]
    every = list(dict.fromkeys(c for c in chars if c != FAIL))  # the first run's next one may be past MAX_CHARS
    return (
        [("", u, "") for u in dict.fromkeys(named + pairs + runs[:8])]
        + [(a, b, "") for a, b in headed]
        + [(a + b + a, b, a) for a, b in headed]
        + [(runs[0] + a, b, "") for a in every for b in named if a != b and runs]
    )


def inputs(head: str, unit: str, size: int, tail: str = "") -> list[str]:
    """`head`, then `unit` repeated to `size`, then `tail`, with and without newlines between
    the repeats; without a head also each with FAIL at the end (a headed run rarely ends a
    match anyway)."""
    out = []
    for sep in ("", "\n"):
        body = head + (unit + sep) * max(1, size // (len(unit) + len(sep))) + tail
        out += [body] if head else [body, body + FAIL]
    return out


_ANCHORED: set[str] = set()  # ANCHORED's pattern texts, once the sweep has read them


class _Cut(Exception):
    """A scan ran past CAP_S."""


def _cut(signum, frame):
    raise _Cut


def _scan(pattern: re.Pattern, text) -> float:
    """CPU seconds the pattern's use takes over `text` (`finditer` to its end, or `match` and
    `fullmatch` for an ANCHORED one), or inf past CAP_S. CPU time, not the clock's: the other
    processes of a loaded machine do not count. The cap is a (wall-clock) timer's signal: `re`
    checks for signals while it backtracks, so a stuck scan raises there. (A CPU-time timer
    would make the CPU clock tick-grained on Linux.)"""
    capped = hasattr(signal, "setitimer")
    if capped:
        signal.setitimer(signal.ITIMER_REAL, CAP_S)
    began = time.process_time()
    try:
        if _text(pattern) in _ANCHORED:
            pattern.match(text)
            pattern.fullmatch(text)
        else:
            for _ in pattern.finditer(text):
                pass
    except _Cut:
        return float("inf")
    finally:
        if capped:
            signal.setitimer(signal.ITIMER_REAL, 0)
    return time.process_time() - began


def _best(pattern: re.Pattern, text, tries: int = 3) -> float:
    best = float("inf")
    for _ in range(tries):
        took = _scan(pattern, text)
        if took == float("inf"):
            return took
        best = min(best, took)
    return best


def _grows(pattern: re.Pattern, make) -> str | None:
    """Why scanning `make(size)` grows faster than linearly, or None. `make(SIZE)` is scanned
    once; a scan over FLOOR_S (rare for a linear pattern) once more at 2*SIZE, and only one that
    grew more than RATIO times is timed at SIZE/2, SIZE and 2*SIZE, the best of three each, and
    compared (twice, as one descheduling only adds time)."""
    first = _scan(pattern, make(SIZE))
    if first == float("inf"):
        return f"over {CAP_S} s at {SIZE} characters"
    if first < FLOOR_S or _scan(pattern, make(2 * SIZE)) <= RATIO * first:
        return None  # fast, or (many matches) it doubles: linear, without the slower look below
    for _ in range(2):
        times = [_best(pattern, make(n)) for n in (SIZE // 2, SIZE, 2 * SIZE)]
        if float("inf") in times:
            return f"over {CAP_S} s at {(SIZE // 2, SIZE, 2 * SIZE)[times.index(float('inf'))]} characters"
        per_doubling = (times[2] / times[0]) ** 0.5
        if per_doubling <= RATIO:
            return None
    sizes = ", ".join(f"{n}: {t * 1000:.1f} ms" for n, t in zip((SIZE // 2, SIZE, 2 * SIZE), times))
    return f"x{per_doubling:.1f} per doubling ({sizes})"


def flagged(pattern: re.Pattern) -> str | None:
    """What makes `pattern` slow (the first input that does), or None."""
    encode = (lambda s: s.encode("utf-8")) if isinstance(pattern.pattern, bytes) else (lambda s: s)
    for head, unit, tail in units(pattern):
        for variant in range(len(inputs(head, unit, 1, tail))):
            why = _grows(pattern, lambda n: encode(inputs(head, unit, n, tail)[variant]))  # noqa: B023 (called here)
            if why:
                return f"{inputs(head, unit, 40, tail)[variant]!r}... to {SIZE} characters: {why}"
    return None


def _text(pattern: re.Pattern) -> str:
    text = pattern.pattern
    return text.decode("latin-1") if isinstance(text, bytes) else text


def sweep(progress: bool = False, only: str = "") -> list[str]:
    """One line per pattern (not in ALLOWED) whose scan grows faster than linearly."""
    if hasattr(signal, "setitimer"):
        signal.signal(signal.SIGALRM, _cut)
    _ANCHORED.update(_named(ANCHORED))
    allowed = _named(ALLOWED)
    failures = []
    for pattern, where in patterns():
        if _text(pattern) in allowed or only not in where:
            continue
        began = time.perf_counter()
        if progress:
            print(f"{where} {_text(pattern)!r}", end=" ", flush=True)
        why = flagged(pattern)
        if why:
            failures.append(f"{where} {_text(pattern)!r}: {why}")
        if progress:
            print(f"{time.perf_counter() - began:.2f} s", why or "ok", flush=True)
    built, _ = call_time_patterns()
    for pattern, site, anchored in built:
        if only not in site:
            continue
        began = time.perf_counter()
        if progress:
            print(site, end=" ", flush=True)
        if anchored:
            _ANCHORED.add(_text(pattern))
        why = flagged(pattern)
        _ANCHORED.difference_update(() if not anchored or _text(pattern) in _named(ANCHORED) else (_text(pattern),))
        if why:
            failures.append(f"{site}: {why}")
        if progress:
            print(f"{time.perf_counter() - began:.2f} s", why or "ok", flush=True)
    return failures


def test_every_pattern_is_collected_and_parsed():
    found = patterns()
    assert len(found) > 150, len(found)  # 212 when this test was written
    assert all(units(p) for p, _ in found)
    assert len(_named(ANCHORED)) == len(ANCHORED) and len(_named(ALLOWED)) == len(ALLOWED)


def test_every_pattern_compiled_at_call_time_is_swept_too():
    """A pattern porter compiles inside a function (a literal, or built from names) is read from
    the source and swept with the others; a built one needs its sample values in CALL_TIME."""
    found, missing = call_time_patterns()
    assert not missing, "no sample values in CALL_TIME for:\n" + "\n".join(missing)
    assert len(found) > 50, len(found)  # 64 when this test was written
    assert not set(CALL_TIME) - {site.partition(":")[0] for _, site, _ in found}, (
        "CALL_TIME names a function porter no longer has"
    )


def test_no_pattern_in_porter_backtracks_on_runs_of_its_own_parts():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, __file__], cwd=REPO, env=env, capture_output=True, text=True, timeout=SWEEP_LIMIT_S
    )
    assert done.returncode == 0, done.stderr
    failures = json.loads(done.stdout)
    assert not failures, "\n".join(failures)


if __name__ == "__main__":  # the sweep (`-v`: each pattern as it is scanned)
    if "-v" in sys.argv:  # `-v NAME`: only the patterns whose module.name holds NAME
        sweep(progress=True, only=sys.argv[sys.argv.index("-v") + 1] if sys.argv[-1] != "-v" else "")
    else:
        print(json.dumps(sweep()))
