"""The review page's sample mode answers a damaged human_sample.jsonl (422, naming the line) and a bad seed or
size (400) with one plain sentence, never a 500 with a traceback."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from examiner.core.errors import UserError
from examiner.core.human_sample import DamagedSample, read_sample
from examiner.core.rundir import HUMAN_SAMPLE
from examiner.reporting import load_run
from examiner.reporting.human_sample import draw_sample
from examiner.reporting.view_server import ReviewServer


async def _client(server: ReviewServer) -> TestClient:
    client = TestClient(TestServer(server.app(), host="127.0.0.1"))
    await client.start_server()
    server.port = client.port
    return client


def _drawn(run_dir: Path) -> Path:
    """Draw a 4-unit sample and return its file."""
    path = run_dir / HUMAN_SAMPLE
    path.write_text(draw_sample(load_run(run_dir), 4, seed=3).model_dump_json() + "\n", encoding="utf-8")
    return path


def _label(run_dir: Path) -> dict[str, str]:
    sample = read_sample(run_dir)
    assert sample is not None
    unit = sample.units[0]
    return {"target": unit.target, "unit_id": unit.unit_id, "verdict": "correct", "who": "ana"}


def _damage_with_bad_json(path: Path) -> None:
    path.write_text(path.read_text(encoding="utf-8") + "{not json\n", encoding="utf-8")


def _damage_with_wrong_types(path: Path) -> None:
    row = json.loads(path.read_text(encoding="utf-8"))
    row["seed"] = "seven"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")


@pytest.mark.parametrize(("damage", "line", "what"), [(_damage_with_bad_json, 2, "Invalid JSON"),
                                                      (_damage_with_wrong_types, 1, "seed")])
async def test_a_damaged_sample_file_is_422_naming_the_line(sample_run_copy: Path, damage: Callable[[Path], None],
                                                            line: int,
                                                            what: str) -> None:
    path = _drawn(sample_run_copy)
    label = _label(sample_run_copy)
    damage(path)
    server = ReviewServer(sample_run_copy, who="ana")
    client = await _client(server)
    try:
        answers = [await client.get("/sample"),
                   await client.post("/sample/label", data={**label, "token": server.token}),
                   await client.post("/sample/extend", data={"more": "2", "token": server.token}),
                   await client.post("/sample/draw", data={"size": "3", "seed": "1", "token": server.token})]
        for answer in answers:
            body = await answer.text()
            assert answer.status == 422, (answer.url, answer.status, body)
            assert f"line {line} is damaged" in body and what in body and "fix or delete that line" in body
            assert "Traceback" not in body
        assert (await client.get("/")).status == 200  # the main page does not read the sample
    finally:
        await client.close()


@pytest.mark.parametrize(("form", "said"), [({"size": "5", "seed": "-1"}, "seed 0 or more"),
                                            ({"size": "-5", "seed": "1"}, "size must be 1 or more"),
                                            ({"size": "0", "seed": "1"}, "size must be 1 or more"),
                                            ({"size": "5", "seed": "x"}, "whole numbers"),
                                            ({"size": "five", "seed": "1"}, "whole numbers")])
async def test_a_bad_seed_or_size_is_400(sample_run_copy: Path, form: dict[str, str], said: str) -> None:
    server = ReviewServer(sample_run_copy, who="ana")
    client = await _client(server)
    try:
        answer = await client.post("/sample/draw", data={**form, "who": "ana", "token": server.token})
        body = await answer.text()
        assert answer.status == 400 and said in body and "Traceback" not in body
        assert not (sample_run_copy / HUMAN_SAMPLE).exists()
    finally:
        await client.close()


async def test_a_negative_extension_is_400(sample_run_copy: Path) -> None:
    _drawn(sample_run_copy)
    server = ReviewServer(sample_run_copy, who="ana")
    client = await _client(server)
    try:
        answer = await client.post("/sample/extend", data={"more": "-3", "token": server.token})
        assert answer.status == 400 and "1 or more (got -3)" in await answer.text()
    finally:
        await client.close()


def test_read_sample_names_the_damaged_line(sample_run_copy: Path) -> None:
    path = _drawn(sample_run_copy)
    _damage_with_bad_json(path)
    with pytest.raises(DamagedSample, match=r"line 2 is damaged \(Invalid JSON"):
        read_sample(sample_run_copy)


def test_a_negative_seed_is_a_user_error(sample_run: Path) -> None:
    with pytest.raises(UserError, match="seed must be 0 or more"):
        draw_sample(load_run(sample_run), 3, seed=-1)


async def test_a_damaged_run_file_is_422_on_every_page(sample_run_copy: Path) -> None:
    """Any run file a handler cannot read (here verdicts.jsonl, damaged mid-file) is one line and 422, not 500."""
    verdicts = sample_run_copy / "verdicts.jsonl"
    lines = verdicts.read_text(encoding="utf-8").splitlines(keepends=True)
    verdicts.write_text("".join([lines[0], "{broken\n", *lines[1:]]), encoding="utf-8")
    server = ReviewServer(sample_run_copy, who="ana")
    client = await _client(server)
    try:
        for path in ("/", "/sample"):
            answer = await client.get(path)
            body = await answer.text()
            assert answer.status == 422 and "verdicts.jsonl:2: not a valid record" in body and "Traceback" not in body
    finally:
        await client.close()
