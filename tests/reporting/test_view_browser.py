"""`examiner view` in a real headless browser: open the page, filter, override one verdict with a reason and
another as `abstained`, reload and see them kept; then `examiner report` shows the recomputed accuracy and
counts the abstained unit.

The browser is the system Chromium (Debian's `chromium` package) driven by Playwright for Python; no
browser is downloaded. Without Chromium the test installs it with apt-get when it runs as root, and
otherwise skips with one line saying why.
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from examiner.cli.main import main
from tests.helpers.browser import chromium as _chromium
from tests.helpers.browser import sync_playwright as _sync_playwright

@pytest.fixture(scope="module")
def sim_run(small_corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small simulated exam (two documents of the handbook corpus)."""
    out = tmp_path_factory.mktemp("view") / "run"
    assert main(["run", str(small_corpus), "--simulate", "--out", str(out), "--quiet"]) == 0
    return out


def _start_view(run_dir: Path) -> tuple[subprocess.Popen[str], str]:
    """`examiner view RUN_DIR --port 0` in a subprocess, and the URL it printed."""
    env = {**os.environ, "PYTHONPATH": str(Path.cwd())}
    proc = subprocess.Popen([sys.executable, "-m", "examiner.cli.main", "view", str(run_dir), "--port", "0",
                             "--who", "tester"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    lines: queue.Queue[str | None] = queue.Queue()
    stdout = proc.stdout
    assert stdout is not None

    def read() -> None:
        for line in stdout:
            lines.put(line)
        lines.put(None)  # the process closed its output: it ended

    threading.Thread(target=read, daemon=True).start()
    seen: list[str] = []
    while True:
        try:
            line = lines.get(timeout=120)
        except queue.Empty:
            line = None
        if line is None:
            proc.kill()
            pytest.fail(f"examiner view printed no address: {''.join(seen)}")
        seen.append(line)
        found = re.search(r"http://127\.0\.0\.1:\d+/", line)
        if found:
            return proc, found.group(0)


def test_override_in_the_browser_is_kept_and_reported(sim_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    executable = _chromium()
    sync_playwright = _sync_playwright()
    outcomes = [json.loads(line) for line in (sim_run / "outcomes.jsonl").read_text(encoding="utf-8").splitlines()]
    correct = [o for o in outcomes if o["status"] == "correct"]
    covered = sum(o["status"] in ("correct", "incorrect", "abstained") for o in outcomes)
    wrong = sorted(o["verdict_id"] for o in outcomes if o["status"] == "incorrect")
    assert correct and wrong, "the simulated run should have correct and incorrect units"
    chosen = sorted(o["verdict_id"] for o in correct)[0]

    proc, url = _start_view(sim_run)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=executable, headless=True, args=["--no-sandbox"])
            page = browser.new_page()
            page.goto(url)
            total = page.locator("article.row").count()
            assert total > 0
            # filter: the select box submits its form by itself (the page's script)
            with page.expect_navigation():
                page.select_option("form.filters select[name=verdict]", "correct")
            assert "verdict=correct" in page.url
            verdicts = page.locator("article.row .verdict").all_inner_texts()
            assert verdicts and set(verdicts) == {"correct"} and len(verdicts) < total
            row = page.locator(f'article[data-verdict-id="{chosen}"]')
            assert row.count() == 1
            row.locator("select[name=new]").select_option("incorrect")
            row.locator("input[name=reason]").fill("the source gives another <year>")
            with page.expect_navigation():
                row.locator("button[type=submit]").click()
            assert "verdict=correct" in page.url, page.content()  # back to the same filtered list
            page.reload()
            kept = page.locator(f'article[data-verdict-id="{chosen}"] .in-force')
            assert kept.locator(".new").inner_text() == "incorrect"
            assert kept.locator(".why").inner_text() == "the source gives another <year>"
            assert "by tester" in kept.inner_text()
            assert page.locator("#overridden").inner_text() == "1"
            # a person can say the answer declined (abstained) where the judge said incorrect
            page.goto(url)
            declined = page.locator(f'article[data-verdict-id="{wrong[0]}"]')
            declined.locator("select[name=new]").select_option("abstained")
            declined.locator("input[name=reason]").fill("it says it does not know")
            with page.expect_navigation():
                declined.locator("button[type=submit]").click()
            page.reload()
            assert page.locator(f'article[data-verdict-id="{wrong[0]}"] .in-force .new').inner_text() == "abstained"
            assert page.locator("#overridden").inner_text() == "2"
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)

    rows = [json.loads(line) for line in (sim_run / "overrides.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 2 and (rows[0]["verdict_before"], rows[0]["verdict"], rows[0]["who"]) == ("correct", "incorrect", "tester")
    assert (rows[1]["verdict_before"], rows[1]["verdict"]) == ("incorrect", "abstained")
    capsys.readouterr()
    assert main(["report", str(sim_run)]) == 0
    out = capsys.readouterr().out
    # the abstained unit stays covered and not correct: accuracy moves only by the correct -> incorrect one
    judge, people = 100 * len(correct) / covered, 100 * (len(correct) - 1) / covered
    assert f"accuracy {judge:.1f}% (judge) -> {people:.1f}% with overrides" in out
    report = json.loads((sim_run / "report.json").read_text(encoding="utf-8"))
    assert report["overrides"]["overrides"] == 2
    (counts,) = report["overrides"]["targets"].values()
    assert counts["counts_with_overrides"]["abstained"] == counts["counts_judge"]["abstained"] + 1
    assert counts["counts_with_overrides"]["incorrect"] == counts["counts_judge"]["incorrect"]  # -1 +1
    judged, people = counts["counts_judge"], counts["counts_with_overrides"]
    row = (f"| {judged['incorrect']} / {judged['abstained']} | {people['incorrect']} / {people['abstained']} |")
    assert "incorrect / abstained (with overrides)" in (sim_run / "report.md").read_text(encoding="utf-8")
    assert row in (sim_run / "report.md").read_text(encoding="utf-8")


LABELLED = ("correct", "incorrect", "abstained", "unrelated")
"""The labels a person gives the first drawn units in sample mode, one of each."""


def test_label_a_random_sample_in_the_browser(sim_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Sample mode: draw from the page, label four drawn units (one of each label, abstained too) with the
    judge's verdict hidden; the labels go to human_sample.jsonl (never overrides.jsonl) and `examiner report` calibrates with them."""
    executable = _chromium()
    sync_playwright = _sync_playwright()
    overrides = sim_run / "overrides.jsonl"
    before = overrides.read_text(encoding="utf-8") if overrides.exists() else None
    proc, url = _start_view(sim_run)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=executable, headless=True, args=["--no-sandbox"])
            page = browser.new_page()
            page.goto(url)
            with page.expect_navigation():
                page.click("#sample-mode")
            assert page.locator("#no-sample").count() == 1
            page.fill("form.draw input[name=size]", "5")
            page.fill("form.draw input[name=seed]", "3")
            with page.expect_navigation():
                page.click("#draw")
            units = page.locator("article.row.sample")
            assert units.count() == 5 and page.locator("#labelled").inner_text() == "0"
            assert page.locator(".verdict").count() == 0  # the judge's verdict is not shown in sample mode
            for n, label in enumerate(LABELLED):
                unit = page.locator("article.row.sample").nth(n)
                unit.locator("select[name=verdict]").select_option(label)
                unit.locator("input[name=note]").fill(f"checked {n}")
                with page.expect_navigation():
                    unit.locator("button[type=submit]").click()
            page.reload()
            assert page.locator("#labelled").inner_text() == "4"
            given = page.locator("article.row.sample .given").all_inner_texts()
            assert given == list(LABELLED)
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)

    rows = [json.loads(line) for line in (sim_run / "human_sample.jsonl").read_text(encoding="utf-8").splitlines()]
    assert rows[0]["kind"] == "draw" and (rows[0]["seed"], rows[0]["size"], rows[0]["who"]) == (3, 5, "tester")
    assert [r["verdict"] for r in rows[1:]] == list(LABELLED)
    assert (overrides.read_text(encoding="utf-8") if overrides.exists() else None) == before
    capsys.readouterr()
    assert main(["report", str(sim_run)]) == 0
    assert "(people, 4 of" in capsys.readouterr().out
    report = json.loads((sim_run / "report.json").read_text(encoding="utf-8"))
    assert report["calibration"]["draw"]["labelled"] == 4
