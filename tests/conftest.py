"""Session-wide rules of the suite.

* Isolation: every test process (one per xdist worker) gets its own empty user cache
  (`XDG_CACHE_HOME`) and config folder (`XDG_CONFIG_HOME`: the cache key), so no test reads
  or writes the user's `~/.cache/porter` or `~/.config/porter`, and neither
  the `PORTER_*` settings of the shell that started pytest nor a terminal size (nor a GitHub
  Actions runner's `GITHUB_ACTIONS`) change what a test sees. Subprocesses inherit the same environment.
* Dependencies: a test marked `torch` or `xla` fails, never skips, when torch / torch-xla
  is missing (tests/deps.py says why).
* Order: tests marked `slow` (real models, real programs; 10-25 CPU-seconds each) run first,
  so the xdist workers share them out while the many short tests fill the end evenly; a slow
  test drawn last would leave the other core idle for its whole run. Under `.ci/run`, which
  starts the suite while torch, torch-xla and the TorchTPU environment are still being
  installed (`PORTER_TEST_INSTALLING`, tests/deps.py), the tests marked `torch`, `xla` or `tpu`
  go after all the others, and wait for those installs.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

import pytest

from tests.deps import INSTALLING, need, require, tpu_python

# the user's settings would change what porter does; PORTER_TPU_PYTHON only says where a
# python lives, PORTER_REALPROG_CACHE where downloads of the real programs are kept, and
# PORTER_TEST_INSTALLING what .ci/run is still installing
_KEEP = {"PORTER_TPU_PYTHON", "PORTER_REALPROG_CACHE", INSTALLING}
for _name in [n for n in os.environ if n.startswith("PORTER_") and n not in _KEEP]:
    del os.environ[_name]
# pytest-xdist starts its workers with COLUMNS=80 and LINES=24, and porter wraps its output at
# COLUMNS: the tests read porter's output as a pipe gets it (a test that wants a width sets one)
os.environ.pop("COLUMNS", None)
os.environ.pop("LINES", None)
# on a GitHub Actions runner porter frames a patch with the pause of the runner's commands:
# the tests read porter as it runs anywhere else (the test that wants a runner sets it)
os.environ.pop("GITHUB_ACTIONS", None)

_CACHE_HOME = tempfile.mkdtemp(prefix="porter-test-cache-")
os.environ["XDG_CACHE_HOME"] = _CACHE_HOME
_CONFIG_HOME = tempfile.mkdtemp(prefix="porter-test-config-")
os.environ["XDG_CONFIG_HOME"] = _CONFIG_HOME


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_CACHE_HOME, ignore_errors=True)
    shutil.rmtree(_CONFIG_HOME, ignore_errors=True)


def _installed_late(item: pytest.Item) -> bool:
    """Whether the test needs what `.ci/run` may still be installing (tests/deps.py)."""
    return any(item.get_closest_marker(m) for m in ("torch", "xla", "tpu"))


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session: pytest.Session):
    """pytest keeps its assertion-rewritten test modules in `__pycache__` (git ignores them),
    unless the shell sets PYTHONDONTWRITEBYTECODE: then every xdist worker rewrote all the
    test modules on every run (2.4 of the 5.8 CPU-s a worker spends collecting). Collection
    may write them; the tests themselves run under the shell's setting."""
    saved = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        yield
    finally:
        sys.dont_write_bytecode = saved


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The order the module docstring gives; then `xdist_group` under pytest >= 9.2
    (pytest-xdist issue #1386, fixed by its open PR #1388):
    a worker tells the controller a test's group by an `@group` suffix on its node id, which
    xdist <= 3.8 writes to `item._nodeid`, a field pytest 9.2 no longer reads (its id is
    `item._id`). Without the suffix, the tests of a group are spread over the workers and each
    builds the group's module fixture again. Runs after xdist's own hook."""
    if os.environ.get(INSTALLING):
        # the tests that wait for the installs go last, the slow ones first among them
        items.sort(key=lambda item: (_installed_late(item), item.get_closest_marker("slow") is None))
    else:
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: files keep their order
    if not getattr(config.option, "loadgroup", False):  # set in xdist's workers only
        return
    for item in items:
        groups = sorted(
            {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")}
        )
        if groups and "@" not in item.nodeid and hasattr(item, "_id"):
            from _pytest.nodeid import NodeId

            item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(groups)}")


@pytest.fixture(autouse=True)
def _imported_when_run(request: pytest.FixtureRequest) -> None:
    """The modules a test file names in `IMPORTED_WHEN_RUN` (torch), imported as its tests run,
    not when it is collected: `.ci/run` starts the suite while it still installs them."""
    for name in getattr(request.module, "IMPORTED_WHEN_RUN", ()):
        setattr(request.module, name, need(name))


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("tpu"):
        tpu_python()
    if item.get_closest_marker("xla"):
        require("torch", "torch_xla")
    elif item.get_closest_marker("torch"):
        require("torch")
