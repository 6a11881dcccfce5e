"""`examiner judge` exits 4 when it judged nothing; its one error line suggests --json-grades when a single
pairwise judge answered and none of its replies held a readable grade line (what a small judge does), and not
when the flag was given or would not help."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
import yaml

from examiner.cli.commands.judging import JSON_GRADES_HINT, nothing_judged_line
from examiner.cli.main import main

PAIRS = [{"id": f"p{i}", "question": f"Explain topic {i}.", "a": f"Topic {i} is about things.",
          "b": f"Weather {i}.", "gold": 1} for i in range(3)]


class _Chatty(BaseHTTPRequestHandler):
    """An OpenAI-compatible server whose model never writes the two grades: a small judge's replies."""

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers["Content-Length"]))
        body = json.dumps({"id": "c1", "object": "chat.completion", "created": 0, "model": "tiny",
                           "choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", "content": "*smol-user: I like answer one*"}}],
                           "usage": {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def chatty(tmp_path: Path) -> Iterator[Path]:
    server = HTTPServer(("127.0.0.1", 0), _Chatty)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump({"endpoints": {"tiny": {
        "base_url": f"http://127.0.0.1:{server.server_port}/v1", "model": "tiny", "max_attempts": 1,
        "structured_output": "text"}}, "roles": {"pairwise": "tiny"}}))
    yield config
    server.shutdown()


def _judge(config: Path, out: Path, *extra: str) -> int:
    data = out.parent / "pairs.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in PAIRS), encoding="utf-8")
    return main(["judge", str(data), "--method", "pairwise", "--config", str(config), "--instruction-field",
                 "question", "--output1-field", "a", "--output2-field", "b", "--label-field", "gold", "--quiet",
                 "--no-cache", "--out", str(out), *extra])


def _errors(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("examiner: error")]


def test_a_judge_without_grade_lines_is_pointed_to_json_grades(chatty: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert _judge(chatty, tmp_path / "plain") == 4
    errors = _errors(capsys.readouterr().err)
    assert len(errors) == 1 and "nothing could be judged" in errors[0] and "--json-grades" in errors[0]
    assert _judge(chatty, tmp_path / "json", "--json-grades") == 4  # asked already: no advice to ask again
    errors = _errors(capsys.readouterr().err)
    assert len(errors) == 1 and "--json-grades" not in errors[0]


def test_no_hint_for_a_panel_that_never_agrees_or_calls_that_all_failed() -> None:
    from types import SimpleNamespace as report  # the report model's fields the line reads

    def pairwise(unparseable: int, failed_calls: int) -> report:
        return report(n_unparseable=unparseable, n_failed_calls=failed_calls)

    panel = report(judge="panel of right, wrong", pairwise=pairwise(6, 0))
    failed = report(judge="tiny", pairwise=pairwise(6, 6))
    unread = report(judge="tiny", pairwise=pairwise(6, 0))
    assert JSON_GRADES_HINT not in nothing_judged_line(panel, 6, "r.md", json_grades=False)
    assert JSON_GRADES_HINT not in nothing_judged_line(failed, 6, "r.md", json_grades=False)
    assert nothing_judged_line(unread, 6, "r.md", json_grades=False).endswith(JSON_GRADES_HINT)
    assert JSON_GRADES_HINT not in nothing_judged_line(unread, 6, "r.md", json_grades=True)
