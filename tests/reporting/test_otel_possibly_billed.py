"""`examiner export --to otel` shows what may have been billed though its reply was never used: each `lost`
attempt, and the calls killed in flight (`unknown`) or cancelled with a request out, is a span with an error
status saying "possibly billed" and `examiner.worst_case_usd`, the most it can have cost."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from examiner.cli.main import main
from examiner.core.rundir import LEDGER, RunDir
from examiner.llm.ledger import cancelled_usd, possibly_billed_usd
from examiner.reporting.otlp_json import plain_attributes, spans_of
from tests.helpers.labelled_run import write_labelled_run

T = 1_700_000_000.0


def _with_lost_attempts(run: Path) -> None:
    """The run's ledger plus one candidate call answered after two lost attempts (a timeout, then a cut
    body), one call killed in flight and settled `unknown`, and one cancelled with its request out."""
    rows = RunDir(run).read_ledger()
    base = {k: v for k, v in next(r for r in rows if r.get("role") == "candidate").items()
            if k in ("role", "stage", "round", "unit_ids", "endpoint", "model", "run_id")}
    one = dict(base, call_id="retried")
    rows += [dict(one, ts=T, outcome="started", worst_case_usd=0.0123),
             dict(one, ts=T + 1, outcome="lost", status="timeout", worst_case_usd=0.0123, cost_usd=0.0),
             dict(one, ts=T + 2.5, outcome="lost", status="cut", worst_case_usd=0.0123, cost_usd=0.0),
             dict(one, ts=T + 3, outcome="ok", cache_hit=False, cost_usd=0.002, prompt_tokens=10,
                  completion_tokens=5, latency_s=3.0, reply_model="served-0125")]
    for call_id, outcome in (("killed", "unknown"), ("stopped", "cancelled")):
        rows += [dict(base, call_id=call_id, ts=T, outcome="started", worst_case_usd=0.01),
                 dict(base, call_id=call_id, ts=T + 4, outcome=outcome, worst_case_usd=0.01, cost_usd=0.0)]
    (run / LEDGER).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _spans(path: Path) -> list[dict[str, Any]]:
    return [{**s, "attributes": plain_attributes(s.get("attributes"))}
            for s in spans_of(json.loads(path.read_text(encoding="utf-8")))]


def test_lost_attempts_are_error_spans_with_their_worst_case(tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.sdk")
    run, _, _ = write_labelled_run(tmp_path / "run")
    _with_lost_attempts(run)
    path = tmp_path / "spans.json"
    assert main(["export", str(run), "--to", "otel", str(path)]) == 0
    spans = _spans(path)
    possibly = [s for s in spans if s["attributes"].get("examiner.possibly_billed")]
    assert sorted(s["attributes"]["examiner.outcome"] for s in possibly) == ["cancelled", "lost", "lost", "unknown"]
    assert all(s["status"].get("code") == 2 and "possibly billed, up to $" in s["status"]["message"] for s in possibly)
    ledger = RunDir(run).ledger_records()
    assert sum(s["attributes"]["examiner.worst_case_usd"] for s in possibly) == \
        pytest.approx(possibly_billed_usd(ledger) + cancelled_usd(ledger))

    lost = sorted((s for s in possibly if s["attributes"]["examiner.outcome"] == "lost"),
                  key=lambda s: int(s["startTimeUnixNano"]))
    assert [s["attributes"]["examiner.lost_status"] for s in lost] == ["timeout", "cut"]
    assert lost[0]["status"]["message"] == "lost (timeout): possibly billed, up to $0.012300"
    assert [(int(s["startTimeUnixNano"]), int(s["endTimeUnixNano"])) for s in lost] == \
        [(int(T * 1e9), int((T + 1) * 1e9)), (int((T + 1) * 1e9), int((T + 2.5) * 1e9))]
    assert all("gen_ai.usage.input_tokens" not in s["attributes"] for s in possibly), "nothing known was billed"
    (answer,) = [s for s in spans if s["attributes"].get("gen_ai.response.model")]
    assert answer["attributes"]["gen_ai.response.model"] == "served-0125"
    assert int(answer["startTimeUnixNano"]) == int(T * 1e9), "the call's span covers its lost attempts"
