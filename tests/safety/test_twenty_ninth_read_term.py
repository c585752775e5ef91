"""The twenty-ninth read of terminal and report output (term): each test failed on 944c10d."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import termios
import time

import pytest

from tests.safety.conftest import CUDA, REPO, porter

_PIPE_SIZE = getattr(fcntl, "F_SETPIPE_SZ", None)


def _read_once_full(args: tuple[str, ...], cwd, env: dict) -> tuple[int, bytes, str]:
    """`porter ARGS` on a non-blocking pipe of one page that is read only once it is full (or
    porter is gone): whatever porter writes while it is full meets EAGAIN."""
    read, write = os.pipe()
    fcntl.fcntl(write, _PIPE_SIZE, 4096)
    os.set_blocking(write, False)
    run = subprocess.Popen(
        [sys.executable, "-m", "porter", *args], cwd=cwd, env=env, stdout=write, stderr=subprocess.PIPE
    )
    os.close(write)
    capacity = fcntl.fcntl(read, fcntl.F_GETPIPE_SZ)
    waiting = bytearray(4)
    while run.poll() is None:
        fcntl.ioctl(read, termios.FIONREAD, waiting)
        if int.from_bytes(waiting, sys.byteorder) >= capacity:
            break
        time.sleep(0.05)
    data = b""
    while chunk := os.read(read, 1 << 16):
        data += chunk
    os.close(read)
    return run.wait(timeout=180), data, run.stderr.read().decode()


@pytest.mark.skipif(_PIPE_SIZE is None, reason="F_SETPIPE_SZ is Linux's")
@pytest.mark.parametrize("fmt", ["full", "concise", "json"])
def test_a_non_blocking_stdout_that_fills_loses_no_byte(tmp_path, fmt):
    # CPython's buffered stream drops what a full non-blocking pipe will not take: `full` lost a
    # third of its text, the run left with 1 and said nothing (json: 2, "the output took no bytes")
    (tmp_path / "m.py").write_bytes(CUDA + b"y = torch.zeros(2).cuda()\n" * 300)
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "XDG_CACHE_HOME": str(tmp_path / ".c")}
    args = ("lint", ".", "--target", "xla", "--output-format", fmt)
    whole = porter(*args, cwd=tmp_path, env={"XDG_CACHE_HOME": str(tmp_path / ".c")})
    assert whole.returncode == 1 and len(whole.stdout) > 3 * 4096, whole.stderr
    code, data, said = _read_once_full(args, tmp_path, env)
    assert (code, said) == (1, "") and data == whole.stdout, (code, said, len(data), len(whole.stdout))


def _hang_up_default() -> None:
    """A child's SIGHUP as a terminal's session gives it: a suite run under `nohup` starts porter with it ignored."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


_HANG_UP = """
import os, signal, importlib
mod = importlib.import_module({module!r})
real, calls = getattr(mod, {name!r}), []
def wrapped(*args, **kwargs):
    calls.append(1)
    if len(calls) == {nth}:
        os.kill(os.getpid(), signal.SIGHUP)  # the terminal closes while porter is in this call
    return real(*args, **kwargs)
setattr(mod, {name!r}, wrapped)
"""


@pytest.mark.parametrize(
    ("args", "module", "name", "nth"),
    [
        (["kernels", "src", "--target", "xla"], "porter.kernels.inventory", "scan", 1),
        (["rewrite", "src", "--target", "xla", "--split", "series"], "porter.report.series", "_put", 2),
    ],
)
def test_a_terminal_that_closes_ends_the_run_as_sigterm_does(tmp_path, args, module, name, nth):
    # SIGHUP (an ssh session dropped, a terminal window closed) killed porter outright, wherever it
    # was: no cleanup, no word of what was written, a series cut short; SIGINT and SIGTERM end the
    # run with both. A SIGHUP ignored by whoever started porter (`nohup`) stays ignored.
    (tmp_path / "src").mkdir()
    for i in range(3):
        (tmp_path / "src" / f"m{i}").mkdir()
        (tmp_path / "src" / f"m{i}" / "m.py").write_bytes(CUDA)
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_HANG_UP.format(module=module, name=name, nth=nth))
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{hook}", "NO_COLOR": "1"}
    env["XDG_CACHE_HOME"] = str(tmp_path / ".cache")
    out = subprocess.run(
        [sys.executable, "-m", "porter", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        timeout=180,
        preexec_fn=_hang_up_default,
    )
    err = out.stderr.decode()
    assert (out.returncode, "Traceback" in err) == (128 + signal.SIGHUP, False), (out.returncode, err)
    assert "interrupted (SIGHUP)" in err, err
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith((".tmp", ".porter-tmp"))]
    if "--split" in args:
        assert "holds 1 of the series' " in err, err
        shutil.rmtree(tmp_path / "series")
    ignored = subprocess.run(
        [sys.executable, "-m", "porter", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        timeout=180,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN),
    )
    assert ignored.returncode in (0, 1) and b"interrupted" not in ignored.stderr, ignored.stderr


@pytest.mark.skipif(_PIPE_SIZE is None, reason="F_SETPIPE_SZ is Linux's")
def test_a_stderr_whose_reader_left_still_writes_the_findings_and_their_exit_code(tmp_path):
    # `porter lint . -o r.json 2>&1 | head`: stderr's reader left while porter still said which files it
    # could not check, and the run ended there with 0, "no findings", its `-o` file never written
    for i in range(200):
        (tmp_path / f"bad{i}.py").write_bytes(b"import torch\ndef f(:\n    x = torch.zeros(1).cuda()\n")
    (tmp_path / "m.py").write_bytes(CUDA)
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "XDG_CACHE_HOME": str(tmp_path / ".c")}
    read, write = os.pipe()
    fcntl.fcntl(write, _PIPE_SIZE, 4096)  # (200 lines of errors do not fit: a write after the reader left)
    args = ("lint", ".", "--target", "xla", "--output-format", "json", "-o", "r.json")
    run = subprocess.Popen([sys.executable, "-m", "porter", *args], cwd=tmp_path, env=env, stderr=write)
    os.close(write)
    assert os.read(read, 1)
    os.close(read)
    assert run.wait(timeout=180) == 1
    found = json.loads((tmp_path / "r.json").read_text())
    assert {f["code"] for f in found} == {"DEV001", "PORT001"} and len(found) == 201, len(found)


_SIGNAL_ON_IMPORT = """
import importlib, os, signal
real = importlib.import_module
def import_module(name, *args, **kwargs):
    if name == "porter.cli.info":
        os.kill(os.getpid(), signal.{signal})  # while the command's module imports
    return real(name, *args, **kwargs)
importlib.import_module = import_module
"""


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])
def test_a_signal_while_the_command_imports_ends_as_a_signal_not_a_traceback(tmp_path, name):
    # the command's modules import before the run's own handling of an interrupt: a SIGTERM in
    # that second (more on a busy host) printed a traceback and left with 1, lint's "findings found"
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_SIGNAL_ON_IMPORT.format(signal=name))
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{hook}", "NO_COLOR": "1"}
    out = subprocess.run(
        [sys.executable, "-m", "porter", "rules"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        timeout=180,
        preexec_fn=_hang_up_default,
    )
    err = out.stderr.decode()
    assert (out.returncode, err) == (128 + getattr(signal, name), f"porter: interrupted ({name}).\n")


def test_a_hangup_while_parity_workers_run_removes_their_work_folders(tmp_path):
    # parity-check's and `trace record`'s worker set ended its workers and removed its work folders on
    # SIGINT and SIGTERM only: a SIGHUP killed porter and left the folders (the side's trace in them)
    body = (
        "import os, signal, sys, tempfile, time\nfrom pathlib import Path\nfrom porter.verify.procs import WorkerSet\n"
        "w = WorkerSet().__enter__()\nd = w.add_temp_dir(Path(tempfile.mkdtemp(prefix='porter-trace-')))\n"
        "(d / 'trace.safetensors').write_bytes(b'x')\nos.kill(os.getpid(), signal.SIGHUP)\ntime.sleep(60)\n"
    )
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", body], env=env, timeout=120, check=False, preexec_fn=_hang_up_default)
    assert (out.returncode, list(tmp_path.glob("porter-trace-*"))) == (128 + signal.SIGHUP, [])
