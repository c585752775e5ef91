"""The safety contract under random and adversarial input (hypothesis): cache entries,
baselines and config files porter did not write itself give a miss or a clean error
(one line, exit 2), never a traceback, a hang or a wrong result."""

from __future__ import annotations

import ast
import base64
import hashlib
import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from porter.pipeline.cache import Cache, seal, unseal
from porter.cli import app
from porter.config.files import ConfigError, resolve
from porter.pipeline.port import port_source
from porter.lint.baseline import BaselineError, read_baseline
from porter.config.settings import Settings
from tests.safety.conftest import CUDA

SETTINGS = Settings(target="xla")
FRESH = port_source(CUDA, "m.py", SETTINGS)
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True),
    st.text(max_size=20),
    st.sampled_from(["changed", "unchanged", "error", "DEV001", "safe", "error", "xla", "", "A" * 5]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=5)),
    max_leaves=25,
)


_STORE_DIR = tempfile.TemporaryDirectory(prefix="porter-fuzz-")  # removed when the process ends


def _cache() -> tuple[Cache, str, Path]:
    store = Cache(Path(_STORE_DIR.name))
    key = store.key(CUDA, "m.py", SETTINGS)
    store.put(key, FRESH)
    return store, key, store._path(key)


STORE, KEY, ENTRY = _cache()
VALID = json.loads(unseal(STORE.mac_key, f"entry:{KEY}", ENTRY.read_bytes()))


def _check_get(raw: bytes, sealed: bool = False) -> None:
    """`raw` as the entry. Unsealed (what anyone without the user's key can write): a miss,
    or a hit only for what porter itself produced. `sealed`: behind a valid tag, as if the
    user's own porter had written it: the checks behind the tag still never raise, and a
    rewrite they let through parses."""
    ENTRY.write_bytes(seal(STORE.mac_key, f"entry:{KEY}", raw) if sealed else raw)
    got = STORE.get(KEY, "m.py", CUDA)  # must not raise
    if got is not None and not sealed:
        assert got.status is FRESH.status and got.new_source == FRESH.new_source
        assert [f.code for f in got.findings] == [f.code for f in FRESH.findings]
    if got is not None and got.new_source is not None:
        ast.parse(got.new_source)


@FUZZ
@given(st.binary(max_size=300), st.booleans())
def test_random_bytes_as_a_cache_entry(raw, sealed):
    _check_get(raw, sealed)


@FUZZ
@given(json_values)
def test_random_json_as_a_cache_entry(value):
    _check_get(json.dumps(value).encode(), sealed=True)


@FUZZ
@given(st.sampled_from(sorted(VALID)), json_values)
def test_one_field_of_a_real_entry_replaced(field, value):
    entry = dict(VALID)
    entry[field] = value
    _check_get(json.dumps(entry).encode())  # unsealed: the tag no longer matches
    _check_get(json.dumps(entry).encode(), sealed=True)


@FUZZ
@given(st.binary(min_size=1, max_size=200))
def test_forged_rewrite_in_a_real_entry(new):
    entry = dict(VALID)
    entry["new_source"] = base64.b64encode(new).decode()
    entry["new_sha256"] = hashlib.sha256(new).hexdigest()  # a forger fixes the hash too
    ENTRY.write_bytes(seal(STORE.mac_key, f"entry:{KEY}", json.dumps(entry).encode()))  # and the tag
    got = STORE.get(KEY, "m.py", CUDA)
    if got is not None:  # only valid Python gets through, and only as the source it claims
        ast.parse(got.new_source)


@FUZZ
@given(
    st.one_of(
        st.binary(max_size=300),
        json_values.map(lambda v: json.dumps(v).encode()),
        st.lists(json_values, max_size=4).map(lambda v: json.dumps({"version": 1, "findings": v}).encode()),
    )
)
def test_random_baseline(raw):
    with tempfile.TemporaryDirectory(prefix="porter-fuzz-") as folder:
        path = Path(folder) / "baseline.json"
        path.write_bytes(raw)
        try:
            read_baseline(path)
        except BaselineError as exc:
            assert str(exc).startswith(str(path)) and "\n" not in str(exc)


toml_keys = st.sampled_from(
    [
        "target",
        "select",
        "ignore",
        "extend-select",
        "per-file-ignores",
        "exclude",
        "fail-on",
        "file-timeout",
        "portable",
        "nope",
        "tool",
    ]
)
toml_values = st.one_of(
    st.sampled_from(
        [
            '"xla"',
            '"tpu"',
            '["DEV"]',
            '["[z-a]"]',
            '["\\\\"]',
            "3",
            "-1",
            "true",
            '{a = ["DEV"]}',
            '{"[z-a]" = []}',
            "[[[[1]]]]",
            '"',
            "1e400",
        ]
    ),
    st.text(max_size=10).map(json.dumps),
)
configs = st.one_of(
    st.binary(max_size=200),
    st.lists(st.tuples(toml_keys, toml_values), max_size=5).map(
        lambda kv: "".join(f"{k} = {v}\n" for k, v in kv).encode()
    ),
)


@FUZZ
@given(configs)
def test_random_porter_toml(raw):
    with tempfile.TemporaryDirectory(prefix="porter-fuzz-") as name:
        folder = Path(name)
        (folder / "porter.toml").write_bytes(raw)
        try:
            eff = resolve([folder])
            eff.settings()
        except ConfigError as exc:
            assert "\n" not in str(exc) or "porter.toml" in str(exc).splitlines()[0]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs, st.binary(max_size=120))
def test_random_config_and_baseline_through_the_cli(raw_config, raw_baseline):
    with tempfile.TemporaryDirectory(prefix="porter-fuzz-") as name:
        _lint_with(Path(name), raw_config, raw_baseline)


def _lint_with(folder: Path, raw_config: bytes, raw_baseline: bytes) -> None:
    (folder / "pyproject.toml").write_bytes(b"[tool.porter]\n" + raw_config)
    (folder / "m.py").write_bytes(CUDA)
    (folder / "base.json").write_bytes(raw_baseline)
    result = CliRunner().invoke(
        app,
        ["lint", str(folder), "--target", "xla", "--baseline", str(folder / "base.json"), "--no-cache", "--jobs", "1"],
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in (0, 1, 2)
    if result.exit_code == 2:
        lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and ("pyproject.toml" in lines[0] or "base.json" in lines[0]), result.stderr
