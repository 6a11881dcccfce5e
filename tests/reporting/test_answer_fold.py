"""Every answer is shown whole where people read it to label it: the review page and the random-sample page
fold a long answer (its first lines, the rest on a click) and the `examiner review --sheet` file holds it
whole; nothing is cut at 400 characters any more (issue 38, item 3)."""

from __future__ import annotations

import json
from pathlib import Path

from aiohttp.test_utils import TestClient, TestServer

from examiner.api import ReviewSampleOptions, review_sample
from examiner.core.human_sample import read_sample
from examiner.core.rundir import ANSWERS
from examiner.reporting import load_run
from examiner.reporting.answer_fold import FOLD_CHARS, answer_html, is_folded
from examiner.reporting.review import review_rows
from examiner.reporting.view_server import ReviewServer

FILLER = "The harbour water is tested at dawn, and the samples are logged by hand before noon. "


def _last(answer_id: str) -> str:
    return f"Finally, the closing remark of answer {answer_id} says <b>&amp; ends here."


def _lengthen_answers(run_dir: Path) -> dict[str, str]:
    """Every answer of the run made 5,000 characters long, ending in a sentence of its own; id -> that sentence."""
    path = run_dir / ANSWERS
    lasts, lines = {}, []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        last = _last(record["id"])
        body = (FILLER * 80)[: 5000 - len(last)]
        record["text"] = body + last
        assert len(record["text"]) == 5000
        lasts[record["id"]] = last
        lines.append(json.dumps(record, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return lasts


def test_a_short_answer_is_open_and_a_long_one_folded_whole() -> None:
    assert answer_html("Paris & <Lyon>") == '<span class="answer-text">Paris &amp; &lt;Lyon&gt;</span>'
    long = "word " * 1000 + "The very end."
    html = answer_html(long)
    assert is_folded(long) and html.startswith('<details class="answer"><summary>')
    assert html.count("The very end.") == 1 and "show all 5,013 characters" in html
    summary = html.split("</summary>")[0]
    assert "The very end." not in summary and len(summary) < FOLD_CHARS + 200
    assert is_folded("a\nb\nc\nd") and not is_folded("a\nb\nc")


async def test_review_and_sample_pages_show_a_5000_character_answer_whole(sample_run_copy: Path) -> None:
    run_dir = sample_run_copy
    lasts = _lengthen_answers(run_dir)
    rows = review_rows(load_run(run_dir))
    assert all(len(row.answer) == 5000 for row in rows)
    first = rows[0]
    last = _last(load_run(run_dir).verdicts[first.verdict_id].answer_id)
    assert last in lasts.values()
    server = ReviewServer(run_dir, who="ana")
    client = TestClient(TestServer(server.app(), host="127.0.0.1"))
    await client.start_server()
    server.port = client.port
    try:
        page = await (await client.get("/")).text()
        quoted = last.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        assert quoted in page and last not in page  # whole, and escaped
        assert '<details class="answer">' in page
        review_sample(ReviewSampleOptions(run_dir=str(run_dir), size=4, seed=3, who="ana"))
        sample = read_sample(run_dir)
        assert sample is not None
        run = load_run(run_dir)
        drawn = [_last(run.verdicts[u.verdict_id].answer_id) for u in sample.draw.units]
        shown = await (await client.get("/sample")).text()
        for sentence in drawn:
            assert sentence.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") in shown
    finally:
        await client.close()


def test_the_sheet_holds_each_answer_whole_as_json(sample_run_copy: Path, tmp_path: Path) -> None:
    run_dir = sample_run_copy
    _lengthen_answers(run_dir)
    sheet = tmp_path / "sheet.jsonl"
    review_sample(ReviewSampleOptions(run_dir=str(run_dir), size=3, seed=1, who="ana", sheet=str(sheet)))
    run = load_run(run_dir)
    rows = [json.loads(line) for line in sheet.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 3
    for row in rows:
        answer = run.answers[run.verdicts[next(u.verdict_id for u in read_sample(run_dir).draw.units  # type: ignore[union-attr]
                                                 if u.unit_id == row["unit_id"] and u.target == row["target"])].answer_id]
        assert row["answer"] == answer.text and len(row["answer"]) == 5000
        assert row["answer"].endswith(_last(answer.id))
