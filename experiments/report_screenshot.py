"""A screenshot of an exam's report.html as a reader first sees it (issue 29, item 2), in the system Chromium.

Runs a simulated exam of the corpus (or takes a finished run folder), opens its report.html in headless
Chromium (Debian's `chromium`, driven by Playwright) at 1100 x 1000 pixels, and saves the first screen, and
the per-cluster table, as small palette PNGs:

    python experiments/report_screenshot.py                       # corpora/harbor-water, simulated
    python experiments/report_screenshot.py --run RUN_DIR         # an existing run

Writes experiments/results/report-layout.png and report-layout-clusters.png (and report-layout-knowledge.png,
the knowledge section, when the report has one); prints their paths and the page's title.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from browser_page import VIEWPORT, chromium_page, small_png
from examiner.cli.main import main

RESULTS = Path(__file__).parent / "results"


def shoot(html: Path, out: Path) -> str:
    """First screen to `out`, the first per-cluster table to `<out>-clusters.png`; returns the page title."""
    with chromium_page(html.resolve().as_uri(), script="report_screenshot") as page:
        page.screenshot(path=str(out))
        clusters = out.with_name(out.stem + "-clusters.png")
        heading = page.locator("h2:has-text('Accuracy per cluster')")
        box = heading.bounding_box()
        table = page.locator("h2:has-text('Accuracy per cluster') ~ table").first.bounding_box()
        if box and table:
            bottom = min(table["y"] + table["height"], box["y"] + 700)
            page.screenshot(path=str(clusters), full_page=True,
                            clip={"x": 0, "y": box["y"] - 10, "width": VIEWPORT["width"], "height": bottom - box["y"] + 20})
            small_png(clusters)
        knowledge = page.locator("h2:has-text('What each target knows')").first
        if knowledge.count():  # the knowledge section (issue 42): its tables and the knowledge map
            top = knowledge.bounding_box()
            if top:
                page.screenshot(path=str(out.with_name(out.stem + "-knowledge.png")), full_page=True,
                                clip={"x": 0, "y": top["y"] - 10, "width": VIEWPORT["width"], "height": 1400})
                small_png(out.with_name(out.stem + "-knowledge.png"))
        title = page.title()
    small_png(out)
    return title


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="corpora/harbor-water")
    parser.add_argument("--run", type=Path, help="a finished run folder (default: run a simulated exam)")
    parser.add_argument("--out", type=Path, default=RESULTS / "report-layout.png")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run = args.run
        if run is None:
            run = Path(tmp) / "run"
            if main(["run", args.corpus, "--simulate", "--out", str(run), "--quiet"]) != 0:
                raise SystemExit("report_screenshot: the simulated run failed")
        args.out.parent.mkdir(parents=True, exist_ok=True)
        title = shoot(run / "report.html", args.out)
    print(f"title: {title}")
    print(f"screenshot: {args.out} ({args.out.stat().st_size} bytes)")


if __name__ == "__main__":
    main_()
