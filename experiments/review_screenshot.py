"""A screenshot of the review page (`examiner view`) with a long answer expanded (issue 38, item 3).

Runs a simulated exam of the corpus, makes the first listed verdict's answer about 5,000 characters long
(the simulated answers are short), serves the run with `examiner view --port 0`, opens the page in the
system Chromium (Playwright), clicks the answer's "show all N characters" and saves that verdict's card:

    python experiments/review_screenshot.py        # writes experiments/results/review-long-answer.png

Prints the path, and whether the answer's last sentence is visible on the screen after the click.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from browser_page import chromium_page, small_png
from examiner.cli.main import main
from examiner.core.rundir import ANSWERS
from examiner.reporting import load_run
from examiner.reporting.review import review_rows

RESULTS = Path(__file__).parent / "results"
LAST = "LAST SENTENCE: the reviewer can read this, the end of a 5,000-character answer."


def lengthen_first_answer(run: Path) -> str:
    """The answer of the page's first verdict made ~5,000 characters long, in paragraphs; returns its id."""
    answer_id = load_run(run).verdicts[review_rows(load_run(run))[0].verdict_id].answer_id
    path = run / ANSWERS
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["id"] == answer_id:
            paragraph = (record["text"] + " ") * 6
            record["text"] = "\n\n".join([paragraph] * max(1, 4900 // len(paragraph))) + "\n\n" + LAST
        lines.append(json.dumps(record, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return answer_id


def shoot(run: Path, out: Path) -> bool:
    """The first verdict's card after expanding its answer, to `out`; whether the last sentence is visible."""
    proc = subprocess.Popen([sys.executable, "-m", "examiner.cli.main", "view", str(run), "--port", "0", "--who", "ana"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        url = None
        for line in proc.stdout:
            found = re.search(r"http://127\.0\.0\.1:\d+/", line)
            if found:
                url = found.group(0)
                break
        if url is None:
            raise SystemExit("review_screenshot: examiner view printed no address")
        with chromium_page(url, script="review_screenshot", viewport={"width": 1100, "height": 1400}) as page:
            card = page.locator("article.row").first
            card.locator("details.answer > summary").click()
            visible = card.get_by_text(LAST).is_visible()
            card.screenshot(path=str(out))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    small_png(out)
    return visible


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="corpora/harbor-water")
    parser.add_argument("--out", type=Path, default=RESULTS / "review-long-answer.png")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        if main(["run", args.corpus, "--simulate", "--out", str(run), "--quiet"]) != 0:
            raise SystemExit("review_screenshot: the simulated run failed")
        answer_id = lengthen_first_answer(run)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        visible = shoot(run, args.out)
    print(f"answer {answer_id}: last sentence visible after the click: {visible}")
    print(f"screenshot: {args.out} ({args.out.stat().st_size} bytes)")


if __name__ == "__main__":
    main_()
