"""`examiner judge` whose every model call failed (endpoint down, 5xx past its retries) is an outage: exit 75
with one line naming the endpoint, as `examiner run` does, not 4 ("nothing judged"), which stays for replies
that came and could not be read (tests/judging/test_nothing_judged_hint.py)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
import yaml

from examiner.cli.main import main
from examiner.core.errors import EXIT_OUTAGE

DEAD = "http://127.0.0.1:9/v1"


def _config(tmp_path: Path, base_url: str) -> Path:
    config = tmp_path / "judge.yaml"
    config.write_text(yaml.safe_dump({
        "endpoints": {"down": {"base_url": base_url, "model": "x", "max_attempts": 1, "backoff_base_s": 0.01}},
        "roles": {"judge": "down", "pairwise": "down"}}))
    return config


def _data(tmp_path: Path) -> Path:
    data = tmp_path / "pairs.jsonl"
    rows = [{"id": f"p{i}", "instruction": f"Name prime {i}.", "output_1": "7", "output_2": "8", "label": 1,
             "output": "7"} for i in range(2)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return data


@pytest.mark.parametrize("extra", [("--method", "pairwise"), ("--method", "geval", "--judge", "down")])
def test_an_unreachable_judge_exits_75_naming_the_endpoint(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           extra: tuple[str, ...]) -> None:
    code = main(["judge", str(_data(tmp_path)), *extra, "--config", str(_config(tmp_path, DEAD)),
                 "--out", str(tmp_path / "out"), "--quiet", "--no-cache"])
    assert code == EXIT_OUTAGE  # an outage (EX_TEMPFAIL): a retry may succeed, unlike "nothing judged" (4)
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("examiner: error:")]
    assert len(errors) == 1 and f"every judging call failed (2 judgments): endpoint down at {DEAD}" in errors[0]
    assert "nothing could be judged" not in errors[0]
    assert (tmp_path / "out" / "report.json").exists()  # what was computed is still written


class _Unavailable(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(503)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def unavailable() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _Unavailable)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()


def test_a_judge_answering_503_exits_75(tmp_path: Path, unavailable: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["judge", str(_data(tmp_path)), "--method", "pairwise", "--config", str(_config(tmp_path, unavailable)),
                 "--out", str(tmp_path / "out"), "--quiet", "--no-cache"])
    assert code == EXIT_OUTAGE
    assert f"endpoint down at {unavailable}" in capsys.readouterr().err
