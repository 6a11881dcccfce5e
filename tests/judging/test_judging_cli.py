"""`examiner judge` end to end on tiny JSONL files with --simulate, bad-row handling, cache reuse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from examiner.cli.main import main
from examiner.llm.ledger import outcomes, read_ledger

PAIRS = [
    {"id": f"q{i}", "question": f"Explain topic number {i} in one sentence.", "a": f"Topic {i} is explained well here.",
     "b": f"Something unrelated about weather {i}.", "gold": 1 + i % 2, "ref": f"Topic {i} explained."}
    for i in range(6)
]


def _write(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def _flags(tmp_path: Path) -> list[str]:
    """The pairs' keys (the reference key only where a judge reads it: --with-reference)."""
    return ["--instruction-field", "question", "--output1-field", "a", "--output2-field", "b", "--label-field", "gold",
            "--simulate"]


def test_pairwise_swap_end_to_end_with_bad_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = PAIRS + [
        {"id": "e1", "question": "x", "a": "   ", "b": "y", "gold": 1},     # empty response
        {"id": "e2", "question": "x", "a": "z", "b": "y", "gold": 3},       # label outside {0,1,2}
        {"id": "e3", "question": "x", "b": "y", "gold": 1},                 # missing field
        "not json",
    ]
    data = _write(tmp_path / "pairs.jsonl", rows)
    out = tmp_path / "run"
    assert main(["judge", str(data), "--method", "pairwise", "--swap", "--out", str(out), *_flags(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "row 7: field 'a' is empty" in err and "row 8: field 'gold' must be 0, 1 or 2, got 3" in err
    assert "row 9: missing field 'a'" in err and "row 10: not valid JSON" in err
    records = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
    assert len(records) == 12 and {r["order"] for r in records} == {"original", "swapped"}
    assert all(r["verdict"] in (0, 1, 2) for r in records)
    report = json.loads((out / "report.json").read_text())
    assert report["rows_judged"] == 6 and report["rows_skipped"] == 4
    assert report["pairwise"]["agreement"]["n"] == 12
    assert report["pairwise"]["swap"]["n_pairs_both_orders"] == 6
    assert (out / "report.md").read_text().startswith("# Judging report: pairwise")
    assert (out / "ledger.jsonl").is_file() and (out / "cache.sqlite").is_file()


def test_named_judge_endpoint_and_cache_reuse(tmp_path: Path) -> None:
    """--judge picks a configured endpoint; a rerun into the same --out is served from the cache.
    (The cache key includes the base URL, so this needs a server whose URL stays the same.)"""
    import examiner.simulator.judging_roles  # noqa: F401 - behaviours for the in-process server
    from examiner.simulator import SimulatedServer

    data = _write(tmp_path / "pairs.jsonl", PAIRS)
    out = tmp_path / "run"
    flags = [f for f in _flags(tmp_path) if f != "--simulate"]
    with SimulatedServer(seed=1) as url:
        config = tmp_path / "c.yaml"
        config.write_text(f"endpoints:\n  mysim:\n    provider: simulated\n    base_url: {url}\n    model: sim-judge\n")
        for _ in range(2):
            assert main(["judge", str(data), "--method", "pairwise", "--swap", "--judge", "mysim", "--config",
                         str(config), "--out", str(out), *flags]) == 0
    again = json.loads((out / "report.json").read_text())
    assert again["judge"] == "mysim" and again["calls"] == 0 and again["cache_hits"] == 12


def test_grade_only_and_reference(tmp_path: Path) -> None:
    data = _write(tmp_path / "pairs.jsonl", PAIRS)
    out = tmp_path / "g"
    assert main(["judge", str(data), "--method", "pairwise", "--grade-only", "--with-reference", "--tie-threshold", "1",
                 "--reference-field", "ref", "--out", str(out), *_flags(tmp_path)]) == 0
    records = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
    assert all(r["reason"] == "" and r["reference_used"] for r in records)
    ledger = [json.loads(line) for line in (out / "ledger.jsonl").read_text().splitlines()]
    assert {rec["stage"] for rec in ledger} == {"grade"}


def test_reviseval_pairwise_with_metrics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _write(tmp_path / "pairs.jsonl", PAIRS)
    out = tmp_path / "r"
    assert main(["judge", str(data), "--method", "reviseval", "--classic-metrics", "bleu,rouge1,rougeL", "--out", str(out),
                 *_flags(tmp_path)]) == 0
    assert "rougeL: rouge-score " in " ".join(capsys.readouterr().out.split())  # the terminal names it too
    records = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
    assert all(r["revised_from"] in (1, 2) and r["revised_reference"] for r in records)
    assert all(set(r["metric_preferences"]) == {"bleu", "rouge1", "rougeL"} for r in records)
    # the simulated reviser keeps the revised response, so every metric prefers it
    assert all(r["metric_majority"] == r["revised_from"] for r in records)
    report = json.loads((out / "report.json").read_text())
    assert set(report["pairwise"]["classic_metric_agreement"]) == {"bleu", "rouge1", "rougeL", "majority"}
    # every report that shows ROUGE names its implementation (issue 40, item 7)
    assert report["pairwise"]["metric_implementations"]["rougeL"].startswith("rouge-score ")
    assert f"- rougeL: {report['pairwise']['metric_implementations']['rougeL']}" in (out / "report.md").read_text()
    ledger = outcomes(read_ledger(out / "ledger.jsonl"))
    assert sum(1 for rec in ledger if rec.role == "reviser") == 6


def test_geval_and_reference_single_scores(tmp_path: Path) -> None:
    rows = [{"id": f"s{i}", "instruction": "Summarise.", "output": f"Summary {i} " + "(u1:known) " * (i % 3),
             "reference": "A summary.", "human_score": 1 + i % 5, "doc": f"d{i % 2}", "sys": f"m{i % 3}"}
            for i in range(8)]
    rows.append({"id": "bad", "instruction": "x", "output": "y", "reference": "z", "human_score": 12})
    data = _write(tmp_path / "s.jsonl", rows)
    out = tmp_path / "g"
    assert main(["judge", str(data), "--method", "geval", "--human-range", "1,5", "--group-field", "doc",
                 "--system-field", "sys", "--criterion", "Coherence (1-5): is it coherent?", "--out", str(out),
                 "--simulate"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["rows_skipped"] == 1 and "outside 1-5" in report["skipped"][0]["message"]
    single = report["single"]
    assert single["geval_paths"] == {"logprobs": 8}
    assert set(single["correlation_with_human"]["judge"]) == {"sample", "summary", "system"}
    out2 = tmp_path / "gs"
    assert main(["judge", str(data), "--method", "geval", "--no-logprobs", "--samples", "5", "--out", str(out2),
                 "--simulate"]) == 0
    records = [json.loads(line) for line in (out2 / "judgments.jsonl").read_text().splitlines()]
    assert all(r["path"] == "samples" and r["n_samples"] == 5 for r in records)
    out3 = tmp_path / "ref"
    assert main(["judge", str(data), "--method", "reference", "--out", str(out3), "--simulate"]) == 0
    records = [json.loads(line) for line in (out3 / "judgments.jsonl").read_text().splitlines()]
    assert len(records) == 9 and all(1 <= r["score"] <= 10 for r in records)


def test_all_rows_bad_is_user_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _write(tmp_path / "bad.jsonl", [{"id": "x", "instruction": "q"}])
    assert main(["judge", str(data), "--method", "pairwise", "--out", str(tmp_path / "o"), "--simulate"]) == 2
    assert "no usable rows" in capsys.readouterr().err
    assert json.loads((tmp_path / "o" / "report.json").read_text())["rows_skipped"] == 1


def test_unknown_judge_endpoint_is_user_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _write(tmp_path / "pairs.jsonl", PAIRS)
    assert main(["judge", str(data), "--method", "pairwise", "--judge", "nope", "--out", str(tmp_path / "o")]) == 2
    assert "unknown endpoint 'nope'" in capsys.readouterr().err


def test_json_grades_variant(tmp_path: Path) -> None:
    data = _write(tmp_path / "pairs.jsonl", PAIRS)
    out = tmp_path / "j"
    assert main(["judge", str(data), "--method", "pairwise", "--swap", "--json-grades", "--out", str(out),
                 *_flags(tmp_path)]) == 0
    records = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
    assert len(records) == 12 and all(r["verdict"] in (0, 1, 2) and r["reason"] for r in records)


@pytest.mark.usefixtures("fixture_data")
def test_an_llmbar_subset_is_read_with_llmbar_field_names(tmp_path: Path) -> None:
    """`examiner judge llmbar:Natural` reads LLMBar's keys as `examiner meta` does (every row used: before,
    every row was skipped for a missing 'instruction'); a field flag still overrides them."""
    out = tmp_path / "natural"
    assert main(["judge", "llmbar:Natural", "--method", "pairwise", "--limit", "4", "--simulate", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["rows_judged"] == 4 and report["rows_skipped"] == 0
    assert report["pairwise"]["agreement"]["n"] == 4 and report["pairwise"]["agreement"]["n_without_gold"] == 0
    again = tmp_path / "renamed"
    assert main(["judge", "llmbar:Natural", "--method", "pairwise", "--limit", "4", "--simulate", "--out", str(again),
                 "--instruction-field", "no_such_key"]) == 2


def test_an_llmbar_json_array_file_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           fixture_data: Path) -> None:
    """A .json file holding an array (LLMBar's own files) is read row by row, as `examiner meta` does."""
    natural = fixture_data / "llmbar" / "Natural.json"
    assert natural.read_text(encoding="utf-8").lstrip().startswith("[")
    out = tmp_path / "natural-json"
    assert main(["judge", str(natural), "--method", "pairwise", "--limit", "5", "--instruction-field", "input",
                 "--simulate", "--quiet", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["rows_judged"] == 5 and report["rows_skipped"] == 0
    assert report["pairwise"]["agreement"]["n"] == 5
    assert "not valid JSON" not in capsys.readouterr().err


def test_llmbar_files_are_read_with_llmbar_keys_without_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              fixture_data: Path) -> None:
    """A user who points `examiner judge` at LLMBar's own file gets its rows judged, not skipped for a
    missing `instruction` (LLMBar calls it `input`); a file in examiner's own keys is read as before."""
    out = tmp_path / "natural"
    assert main(["judge", str(fixture_data / "llmbar" / "Natural.json"), "--method", "pairwise", "--limit", "4",
                 "--simulate", "--quiet", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["rows_judged"] == 4 and report["rows_skipped"] == 0
    assert "LLMBar's keys" in capsys.readouterr().err


def test_nothing_judged_exits_4_after_writing_the_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A panel of two simulated judges that always disagree leaves every pair unscored: exit 4 with one
    line, the judgments and reports still written, and no nan in what the terminal shows."""
    import yaml

    config = tmp_path / "split.yaml"
    config.write_text(yaml.safe_dump({"endpoints": {
        name: {"provider": "simulated", "model": f"sim-{acc}", "max_concurrency": 8,
               "options": {"pairwise_accuracy": acc}} for name, acc in (("right", 1.0), ("wrong", 0.0))}}))
    data = _write(tmp_path / "pairs.jsonl", PAIRS)
    out = tmp_path / "split"
    code = main(["judge", str(data), "--method", "pairwise", "--judge", "right", "--judge", "wrong",
                 "--config", str(config), "--instruction-field", "question", "--output1-field", "a",
                 "--output2-field", "b", "--label-field", "gold", "--quiet", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 4
    errors = [line for line in captured.err.splitlines() if line.startswith("examiner: error")]
    assert len(errors) == 1 and "nothing could be judged" in errors[0] and "6 rows" in errors[0]
    records = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
    assert len(records) == 6 and all(r["verdict"] is None for r in records)
    assert (out / "report.json").is_file() and (out / "report.md").is_file()
    assert " nan" not in captured.out.lower() and "| nan" not in captured.out.lower()
