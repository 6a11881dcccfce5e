"""A screenshot of a `--stop-when` run's "Stopping rule" section in report.html, in the system Chromium.

    python experiments/stopping_screenshot.py --run RUN_DIR   # a run made with --stop-when

Opens the run's report.html headless (Debian's `chromium`, driven by Playwright, as report_screenshot.py
does) and saves the section, from its heading through its figure, as a small palette PNG
(experiments/results/stopping-report.png by default); prints its path and the page's title.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from browser_page import VIEWPORT, chromium_page, small_png
from report_screenshot import RESULTS


def shoot(html: Path, out: Path) -> str:
    with chromium_page(html.resolve().as_uri(), script="stopping_screenshot") as page:
        heading = page.locator("h2:has-text('Stopping rule')").first.bounding_box()
        if heading is None:
            raise SystemExit(f"stopping_screenshot: {html} has no Stopping rule section (a run without --stop-when?)")
        image = page.locator("h2:has-text('Stopping rule') ~ img").first.bounding_box()
        bottom = image["y"] + image["height"] if image else heading["y"] + 300
        page.screenshot(path=str(out), full_page=True,
                        clip={"x": 0, "y": heading["y"] - 10, "width": VIEWPORT["width"],
                              "height": bottom - heading["y"] + 20})
        title = page.title()
    small_png(out)
    return title


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, required=True, help="a finished run folder made with --stop-when")
    parser.add_argument("--out", type=Path, default=RESULTS / "stopping-report.png")
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    title = shoot(args.run / "report.html", args.out)
    print(f"title: {title}")
    print(f"screenshot: {args.out} ({args.out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
