"""How the HTML report of a large port loads in a real browser.

    .venv/bin/python benchmarks/bench_report.py [--files 60] [--blocks 40] [--real]

Builds a port with thousands of changed lines (by default: a few distinct files ported for
real by the engine, repeated under many paths, since the report only reads results; --real
ports every file), renders the HTML report twice — with the default row budget (later files
start collapsed) and with every file expanded — and loads each in headless Chromium. Prints
render time and size, then per page: the wall time of a headless load (minus a blank page's),
of a full-page screenshot, and the in-page times the report's script records
(DOMContentLoaded, script done, forced full layout).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from porter.pipeline.port import port_source  # noqa: E402
from porter.report import ReportModel  # noqa: E402
from porter.report.html import render_html  # noqa: E402
from porter.pipeline.runner import run  # noqa: E402
from porter.config.settings import Settings  # noqa: E402
from tests.report.browser import chromium, run_chromium  # noqa: E402

BLOCK = """def step_{i}(x, model, opt):
    x = x.cuda(non_blocking=True)
    model = model.cuda()
    torch.cuda.synchronize()
    y = torch.zeros(3, device="cuda")
    if torch.cuda.is_available():
        torch.cuda.manual_seed({i})
    cap = torch.cuda.get_device_capability()
    return model(x) + y


"""

PROBE = """<script>
addEventListener('load',function(){
  var t0=performance.now(); var h=document.documentElement.scrollHeight; var t1=performance.now();
  var nav=performance.getEntriesByType('navigation')[0];
  document.body.setAttribute('data-bench','dcl='+Math.round(nav.domContentLoadedEventEnd)+
    ' load='+Math.round(nav.loadEventStart)+' layout='+Math.round(t1-t0)+' height='+h+
    ' rows='+document.querySelectorAll('table.d tr').length+
    ' open='+document.querySelectorAll('details.file[open]').length);
});
</script></body>"""


def source(variant: int, blocks: int) -> str:
    head = f"import torch\n\n# module variant {variant}\n\n"
    return head + "".join(BLOCK.format(i=i + variant * 1000) for i in range(blocks))


def build_model(files: int, blocks: int, real: bool) -> ReportModel:
    settings = Settings(target="xla")
    if real:
        with tempfile.TemporaryDirectory() as d:
            for f in range(files):
                p = Path(d) / f"pkg{f // 20}" / f"mod_{f}.py"
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_text(source(f, blocks))
            cwd = os.getcwd()
            os.chdir(d)
            try:
                results, summary = run([Path(".")], settings)
            finally:
                os.chdir(cwd)
        return ReportModel.from_run(results, summary, settings)
    distinct = [port_source(source(v, blocks).encode(), f"v{v}.py", settings) for v in range(min(4, files))]
    results = []
    for f in range(files):
        one = distinct[f % len(distinct)]
        path = f"pkg{f // 20}/mod_{f}.py"
        results.append(
            dataclasses.replace(one, path=path, findings=[dataclasses.replace(x, path=path) for x in one.findings])
        )
    return ReportModel.from_run(results, None, settings)


def load(page: Path, repeats: int) -> dict:
    url = page.resolve().as_uri()
    walls, bench = [], ""
    for _ in range(repeats):
        proc, wall = run_chromium(url, "--enable-logging=stderr", "--v=0", "--dump-dom", timeout=120)
        walls.append(wall)
        assert 'data-ready="1"' in proc.stdout, "report script did not finish"
        assert "Uncaught" not in proc.stderr, proc.stderr[-2000:]
        m = re.search(r'data-bench="([^"]*)"', proc.stdout)
        bench = m.group(1) if m else "(no probe)"
        ready = re.search(r'data-ready-ms="(\d+)"', proc.stdout)
        bench += f" ready={ready.group(1) if ready else '?'}"
    shot = page.with_suffix(".png")
    proc, shot_wall = run_chromium(url, f"--screenshot={shot}", "--window-size=1280,2000", timeout=120)
    return {"wall": statistics.median(walls), "shot": shot_wall, "bench": bench}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=60)
    ap.add_argument("--blocks", type=int, default=40)
    ap.add_argument("--real", action="store_true", help="port every file with the engine (slow)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None, help="keep the pages here")
    args = ap.parse_args()
    if chromium() is None:
        sys.exit("chromium is not installed: apt-get install -y chromium")

    t = time.perf_counter()
    model = build_model(args.files, args.blocks, args.real)
    t_model = time.perf_counter() - t
    changed = sum(sum(f.line_counts()) for f in model.files)
    print(
        f"port: {len(model.files)} files, {changed} changed lines (+/-), {model.readiness.sites} sites, "
        f"{len(model.manual_work())} manual; model built in {t_model:.2f}s"
    )

    out = args.out or Path(tempfile.mkdtemp(prefix="porter-bench-"))
    out.mkdir(parents=True, exist_ok=True)
    blank = out / "blank.html"
    blank.write_text('<!DOCTYPE html><html><body data-ready="1">blank</body></html>')
    base = statistics.median(run_chromium(blank.resolve().as_uri(), "--dump-dom")[1] for _ in range(args.repeats))
    print(f"chromium: blank page load {base:.2f}s (subtracted below)")

    for label, rows in (("default", None), ("all-open", 10**9)):
        t = time.perf_counter()
        page_html = render_html(model) if rows is None else render_html(model, open_rows=rows)
        t_render = time.perf_counter() - t
        page = out / f"report-{label}.html"
        page.write_text(page_html.replace("</body>", PROBE, 1), encoding="utf-8")
        r = load(page, args.repeats)
        print(
            f"{label:>8}: render {t_render:.2f}s, {len(page_html) / 2**20:.1f} MiB; "
            f"load {r['wall'] - base:+.2f}s over blank ({r['wall']:.2f}s wall), screenshot {r['shot']:.2f}s; in page (ms): {r['bench']}"
        )
    print(f"pages in {out}")


if __name__ == "__main__":
    main()
