"""The review page's "label a random sample" mode without a browser: the draw form, the drawn units with
the judge's verdict hidden, labels appended to human_sample.jsonl (never overrides.jsonl) under the same
checks as overrides (token, Host, Origin, the run's lock)."""

from __future__ import annotations

from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from examiner.core.human_sample import read_sample
from examiner.core.rundir import HUMAN_SAMPLE, OVERRIDES
from examiner.core.runlock import hold_run_dir
from examiner.reporting import load_run
from examiner.reporting.human_sample import draw_sample
from examiner.reporting.view_server import ReviewServer


@pytest.fixture()
def run_dir(sample_run_copy: Path) -> Path:
    """A fresh copy of the sample run (tests/conftest.py) for each test."""
    return sample_run_copy


async def _client(server: ReviewServer) -> TestClient:
    client = TestClient(TestServer(server.app(), host="127.0.0.1"))
    await client.start_server()
    server.port = client.port
    return client


async def test_sample_mode_draws_once_hides_the_judge_and_keeps_labels_apart(run_dir: Path) -> None:
    server = ReviewServer(run_dir, who="ana")
    client = await _client(server)
    try:
        main = await (await client.get("/")).text()
        assert 'href="/sample"' in main
        empty = await client.get("/sample")
        body = await empty.text()
        assert empty.status == 200 and "No sample drawn yet" in body and "22 judged units" in body
        form = {"size": "5", "seed": "9", "who": "ana"}
        assert (await client.post("/sample/draw", data={**form, "token": "guess"})).status == 403
        assert not (run_dir / HUMAN_SAMPLE).exists()
        done = await client.post("/sample/draw", data={**form, "token": server.token}, allow_redirects=False)
        assert done.status == 303 and done.headers["Location"] == "/sample"
        drawn = read_sample(run_dir)
        assert drawn is not None
        assert drawn.draw.units == draw_sample(load_run(run_dir), 5, seed=9).units  # the seeded draw, recorded
        again = await client.post("/sample/draw", data={**form, "token": server.token, "size": "7"})
        assert again.status == 400 and "already drawn" in await again.text()

        page = await (await client.get("/sample")).text()
        assert page.count('class="row sample"') == 5 and "0</span> of 5 labelled" in page
        for unit in drawn.draw.units:  # the judge's reason for a drawn unit's verdict is not shown
            verdict = load_run(run_dir).verdicts[unit.verdict_id]
            if verdict.reason:
                assert verdict.reason not in page
        first = drawn.draw.units[0]
        label = {"target": first.target, "unit_id": first.unit_id, "verdict": "incorrect", "note": "wrong <year>",
                 "who": "ana", "position": "1"}
        assert (await client.post("/sample/label", data=label)).status == 403  # no token
        foreign = await client.post("/sample/label", data={**label, "token": server.token},
                                    headers={"Origin": "http://evil.example"})
        assert foreign.status == 403
        outside = await client.post("/sample/label", data={**label, "token": server.token, "unit_id": "nope"})
        assert outside.status == 400
        bad = await client.post("/sample/label", data={**label, "token": server.token, "verdict": "maybe"})
        assert bad.status == 400
        with hold_run_dir(run_dir):
            busy = await client.post("/sample/label", data={**label, "token": server.token})
            assert busy.status == 409
        saved = await client.post("/sample/label", data={**label, "token": server.token}, allow_redirects=False)
        assert saved.status == 303 and saved.headers["Location"] == "/sample#s-2"
        stored = read_sample(run_dir)
        assert stored is not None
        row = stored.labels()[(first.target, first.unit_id)]
        assert (row.verdict, row.note, row.who, row.source, row.verdict_id) == (
            "incorrect", "wrong <year>", "ana", "page", first.verdict_id)
        page = await (await client.get("/sample")).text()
        assert "1</span> of 5 labelled" in page and "wrong &lt;year&gt;" in page
        assert not (run_dir / OVERRIDES).exists()  # sample labels never become overrides
    finally:
        await client.close()
