"""Headless Chromium, for the HTML report tests and the benchmark (fails when absent)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-dev-shm-usage",
]


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run_chromium(url: str, *extra: str, timeout: float = 60) -> tuple[subprocess.CompletedProcess, float]:
    """Run headless Chromium on `url` with a fresh profile; (process, wall seconds)."""
    exe = chromium()
    assert exe, "chromium is not installed (apt-get install -y chromium)"
    with tempfile.TemporaryDirectory(prefix="porter-chromium-") as profile:
        cmd = [exe, *FLAGS, f"--user-data-dir={profile}", *extra, url]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return proc, time.perf_counter() - t0


def dump_dom(path: Path, query: str = "", *, budget_ms: int = 20000) -> tuple[str, str, float]:
    """The DOM after scripts ran, Chromium's log (stderr) and the wall time."""
    proc, wall = run_chromium(
        path.resolve().as_uri() + query,
        "--enable-logging=stderr",
        "--v=0",
        f"--virtual-time-budget={budget_ms}",
        "--dump-dom",
    )
    return proc.stdout, proc.stderr, wall


def screenshot(path: Path, png: Path, size: str = "1280,2000") -> tuple[subprocess.CompletedProcess, float]:
    return run_chromium(path.resolve().as_uri(), f"--screenshot={png}", f"--window-size={size}")


def script_errors(log: str) -> list[str]:
    return [line for line in log.splitlines() if "Uncaught" in line or "CONSOLE(" in line and "Error" in line]
