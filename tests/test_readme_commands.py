"""The README's commands do what it says, every time: "Try it" (run here as written, bar the
install: porter is installed) works on a fresh checkout and again on the same folder."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _try_it() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Try it", 1)[1]
    block = re.search(r"```bash\n(.*?)\n```", section, re.S)
    assert block, "no command under Try it"
    command = block.group(1).strip()
    install, _, port = command.partition(" && ")
    assert re.fullmatch(r'python3 -m pip install (\.|"\.\[[a-z,-]+\]")', install) and port.startswith(
        "porter rewrite "
    ), command
    return port


def test_try_it_works_twice(tmp_path):
    shutil.copytree(REPO / "fixtures" / "projects", tmp_path / "fixtures" / "projects")
    port = _try_it()
    # `porter` as the installed entry point would run it; the shell expands the glob
    argv = shlex.split(port.replace("porter ", f"{shlex.quote(sys.executable)} -m porter ", 1))
    env_cmd = " ".join(shlex.quote(a) if "*" not in a else a for a in argv)
    for run in (1, 2):
        out = subprocess.run(
            env_cmd,
            shell=True,
            cwd=tmp_path,
            capture_output=True,
            timeout=600,
            env={
                "PATH": "/usr/bin:/bin",
                "PYTHONPATH": str(REPO),
                "NO_COLOR": "1",
                "HOME": str(tmp_path),
                "XDG_CACHE_HOME": str(tmp_path / ".cache"),
            },
        )
        assert out.returncode == 0, (run, out.stderr.decode()[-2000:])
        assert (tmp_path / "ported" / "report.html").is_file()
        assert b"+++ b/" in out.stdout  # the diff of the copy
    ported = sorted(p.relative_to(tmp_path / "ported").as_posix() for p in (tmp_path / "ported").rglob("*.py"))
    assert ported and all(not p.startswith(".") for p in ported)


def test_the_test_command_installs_every_program_the_tests_run():
    """The README's test command is all a fresh machine gets: every program a test runs
    (tests/deps.py `program`, tests/report/browser.py) is installed by it."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("Install everything the tests need", 1)[1]
    command = re.search(r"```bash\n(.*?)\n```", section, re.S).group(1)
    installed = re.search(r"apt-get install -y ([a-z0-9 .+-]+?) &&", command)
    assert installed, command
    wanted = set()
    for path in (REPO / "tests").rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        wanted |= set(re.findall(r"""(?<!\w)program\(\s*["']([\w.+-]+)["']""", source))
        if "run_chromium(" in source or "def chromium()" in source:
            wanted.add("chromium")
    assert wanted and wanted <= set(installed.group(1).split()), (wanted, installed.group(1))
    assert command.endswith("python3 -m pytest -q")


def test_what_the_readme_says_of_python_m_porter_beside_a_project_s_own_porter_holds(tmp_path):
    """`python -m porter` in a folder holding a project's own `porter` package runs that one:
    Python's rule for `-m` (the working folder first on `sys.path`), before any of porter's code
    runs. The README says so, and names what works there (`python -P -m porter`)."""
    import os

    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert "`python -P -m porter`" in text and "No module named porter.__main__" in text
    (tmp_path / "porter").mkdir()
    (tmp_path / "porter" / "__init__.py").write_text("NAME = 'theirs'\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    env.pop("PYTHONSAFEPATH", None)
    plain = subprocess.run([sys.executable, "-m", "porter", "--version"], cwd=tmp_path, env=env, capture_output=True)
    assert plain.returncode != 0 and b"No module named porter.__main__" in plain.stderr, plain.stderr
    if sys.version_info >= (3, 11):
        safe = subprocess.run(
            [sys.executable, "-P", "-m", "porter", "--version"], cwd=tmp_path, env=env, capture_output=True
        )
        assert safe.returncode == 0 and safe.stdout.startswith(b"porter "), safe.stderr
