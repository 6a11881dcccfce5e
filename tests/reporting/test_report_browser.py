"""report.html in a real headless browser (the system Chromium): the page a team lead opens shows the
title with the corpus name, the headline above what went wrong and both above the health details, the
clusters by topic in natural order, and, when health failed, UNTRUSTWORTHY on the headline and on every
figure. Screenshots are saved in the test's output folder (tmp_path) to be looked at."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from examiner.cli.main import main
from examiner.reporting.build import build_report
from examiner.reporting.topics import natural_key
from tests.helpers.browser import chromium, sync_playwright


@pytest.fixture(scope="module")
def sim_run(small_corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small simulated exam (two documents of the handbook corpus)."""
    out = tmp_path_factory.mktemp("layout") / "run"
    assert main(["run", str(small_corpus), "--simulate", "--out", str(out), "--quiet"]) == 0
    return out


def _top(page: Any, selector: str) -> float:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, f"{selector} is not shown"
    return float(box["y"])


def _open(html: Path, shot: Path) -> tuple[Any, Any, Any]:
    """Chromium on report.html (a 1100 x 900 window) with a screenshot of its first screen saved to `shot`."""
    playwright = sync_playwright()().start()
    browser = playwright.chromium.launch(executable_path=chromium(), headless=True, args=["--no-sandbox"])
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(html.as_uri())
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 0
    return playwright, browser, page


def test_headline_first_then_what_went_wrong_then_details(sim_run: Path, small_corpus: Path, tmp_path: Path) -> None:
    playwright, browser, page = _open(sim_run / "report.html", tmp_path / "report.png")
    try:
        title = page.locator("h1").inner_text()
        assert small_corpus.name in title and small_corpus.name in page.title() and "sim-local" in title
        assert "Exam report:" not in title  # no hex run id as the title
        headline = _top(page, "section.headline")
        assert headline < _top(page, "section.went-wrong") < _top(page, "text=Accuracy per cluster") < _top(
            page, "section#health")
        assert headline < 900, "the headline is on the first screen"
        assert "%" in page.locator("section.headline table").inner_text()  # accuracy with its interval
        assert "Health: PASS" in page.locator("section.headline").inner_text()
        assert page.locator(".tag").count() == 0  # a healthy run has no UNTRUSTWORTHY tag
        cluster_tables = page.locator("h2:has-text('Accuracy per cluster') ~ table").first
        rows = [r.split("\t") for r in cluster_tables.locator("tbody tr").all_inner_texts()]
        ids = [(int(r[0]), r[1]) for r in rows if r[0].strip().isdigit()]
        assert ids == sorted(ids, key=lambda x: (x[0], natural_key(x[1]))), ids
        assert sum(r[2] != "–" for r in rows) >= len(rows) / 2, rows  # most clusters named by a topic
    finally:
        browser.close()
        playwright.stop()
    print(f"screenshot: {tmp_path / 'report.png'}")


def test_failed_health_marks_the_headline_and_every_figure(sim_run: Path, tmp_path: Path) -> None:
    report = json.loads((sim_run / "report.json").read_text(encoding="utf-8"))
    health = report["health"]
    health["checks"][0].update(status="fail", detail="7 of 8 questions (forced for this test)")
    health.update(status="fail", trustworthy=False)
    paths = build_report(sim_run, health=health)
    playwright, browser, page = _open(paths["html"], tmp_path / "report-untrustworthy.png")
    try:
        headline = page.locator("section.headline").inner_text()
        assert "UNTRUSTWORTHY" in headline and "Health: FAIL" in headline
        assert "Health check" in page.locator("section.went-wrong").inner_text()
        figures = page.locator("img").count()
        assert figures > 0 and page.locator("figure.untrustworthy img").count() == figures
        assert page.locator("h2:has-text('Accuracy and coverage') .tag").inner_text() == "UNTRUSTWORTHY"
        page.locator("figure.untrustworthy").first.screenshot(path=str(tmp_path / "figure-untrustworthy.png"))
    finally:
        browser.close()
        playwright.stop()
    for key, png in paths.items():  # the PNG files carry the mark too: a red band on top
        if key.startswith("figure:"):
            with Image.open(png) as image:
                red, green, blue = image.convert("RGB").getpixel((2, 2))
            assert red > 150 and green < 80 and blue < 80, (key, (red, green, blue))
