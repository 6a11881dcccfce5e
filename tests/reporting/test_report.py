"""Reports of a run directory: the figures' arithmetic, the evidence for incorrect units, self-contained
HTML, resumed-run duplicates, compare and the CLI. The run is the hand-written sample of
tests.helpers.sample_run (alpha: 10 correct, 2 incorrect of 12; beta: 6 correct, 4 incorrect, 2 unanswered)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from examiner.cli.main import main
from examiner.core.errors import UserError
from examiner.reporting import build_report, load_run
from examiner.reporting.compare import compare
from tests.helpers.sample_run import write_sample_run
from examiner.reporting.summary import summarize


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    root = tmp_path_factory.mktemp("report")
    run = write_sample_run(root / "run", root / "corpus", status="budget_exhausted", stop_reason="budget_exhausted",
                           with_passages=True)
    return run, build_report(run)


@pytest.fixture(scope="module")
def report(built: tuple[Path, dict[str, Path]]) -> dict:
    return json.loads(built[1]["json"].read_text(encoding="utf-8"))


def test_accuracy_and_coverage_per_target(report: dict) -> None:
    alpha, beta = report["targets"]["alpha"], report["targets"]["beta"]
    assert alpha["counts"] == {"correct": 10, "incorrect": 2, "abstained": 0, "unanswered": 0, "uncovered": 0}
    assert alpha["accuracy"]["value"] == pytest.approx(10 / 12)
    assert alpha["coverage"]["value"] == pytest.approx(1.0)
    assert beta["counts"] == {"correct": 6, "incorrect": 4, "abstained": 0, "unanswered": 2, "uncovered": 0}
    assert beta["accuracy"]["value"] == pytest.approx(6 / 10)
    assert beta["coverage"]["value"] == pytest.approx(10 / 12)


def test_bootstrap_interval_contains_estimate_and_resamples_clusters(built, report: dict) -> None:
    run = load_run(built[0])
    for name, data in report["targets"].items():
        for key in ("accuracy", "coverage"):
            est = data[key]
            assert est["low"] <= est["value"] <= est["high"], (name, key, est)
        covered_clusters = {o.cluster_id for o in run.outcomes[name].values() if o.status in ("correct", "incorrect")}
        assert data["accuracy"]["clusters"] == len(covered_clusters)
    # beta's clusters disagree (one all wrong, others all right): the interval must be wide
    beta = report["targets"]["beta"]["accuracy"]
    assert beta["high"] - beta["low"] > 0.3


def test_per_cluster_and_question_type_sum_to_covered(report: dict) -> None:
    for data in report["targets"].values():
        covered = data["counts"]["correct"] + data["counts"]["incorrect"]
        assert sum(r["correct"] + r["incorrect"] for r in data["per_cluster"]) == covered
        assert sum(r["correct"] + r["incorrect"] for r in data["per_qtype"]) == covered
        assert [r["qtype"] for r in data["per_qtype"]] == ["who", "what", "when", "where", "why", "how", "other"]


def test_convergence_and_ignored_histogram(report: dict) -> None:
    alpha, beta = report["targets"]["alpha"], report["targets"]["beta"]
    assert [r["remaining"] for r in alpha["convergence"]] == [12, 2, 0]
    assert [r["remaining"] for r in beta["convergence"]] == [12, 3, 0]
    assert beta["ignored_histogram"] == {"0": 9, "1": 1, "2": 2}
    assert sum(alpha["ignored_histogram"].values()) == 12


def test_cost_table_in_paper_layout(built, report: dict) -> None:
    paper = {r["stage"]: r for r in report["cost"]["paper"]}
    assert report["cost"]["units"] == 12
    qgen, judging, total = paper["question generation"], paper["judging"], paper["evaluation total"]
    assert qgen["calls"] == 8 and qgen["calls_per_unit"] == pytest.approx(8 / 12)
    assert judging["cache_hits"] == 3 and judging["calls"] == 5  # cache hits are not billed calls
    assert total["calls"] == qgen["calls"] + judging["calls"]
    assert total["cents_per_unit"] == pytest.approx(qgen["cents_per_unit"] + judging["cents_per_unit"])
    assert qgen["input_tokens_per_unit"] == pytest.approx(8 * 320 / 12)
    assert paper["candidate (beside)"]["calls"] == 8
    assert {r["role"] for r in report["cost"]["by_role"]} == {"examiner", "judge", "candidate"}
    assert report["counts"]["failed_requests"] == 1  # the failed call, not the torn last ledger line


def test_baselines(report: dict) -> None:
    b = report["targets"]["alpha"]["baselines"]
    assert b["answers"] == 4
    assert b["bleu"]["mean"] is not None and b["bleu"]["n_pairs"] == 4
    assert b["bleu"]["pearson"] > 0  # the sample's BLEU grows with the share of known units


def test_incorrect_units_carry_answer_reason_and_source(report: dict) -> None:
    wrong = report["targets"]["alpha"]["incorrect"]
    assert len(wrong) == 2
    danube = next(w for w in wrong if w["unit_text"].startswith("Vienna"))
    assert danube["answer_excerpt"] and "reference says" in danube["reason"]
    src = danube["sources"][0]
    assert src["document"].endswith("rivers.txt") and src["origin"] == "run passages.jsonl"
    assert src["span_text"] == danube["unit_text"]
    assert "Budapest grew from the towns of Buda and Pest" in src["passage_text"]


def test_without_passages_jsonl_the_sources_are_the_unit_text_and_the_report_says_so(tmp_path: Path) -> None:
    run = write_sample_run(tmp_path / "run", tmp_path / "corpus")
    summary = summarize(load_run(run))
    src = summary["targets"]["alpha"]["incorrect"][0]["sources"][0]
    assert src["origin"] == "unit text"
    assert src["passage_text"] == summary["targets"]["alpha"]["incorrect"][0]["unit_text"]
    assert "no passages.jsonl" in summary["run"]["passage_source_note"]


def test_incorrect_units_read_the_runs_passage_snapshot(tmp_path: Path) -> None:
    run = write_sample_run(tmp_path / "run", tmp_path / "corpus", with_passages=True)
    shutil.rmtree(tmp_path / "corpus")
    summary = summarize(load_run(run))
    src = next(w for w in summary["targets"]["alpha"]["incorrect"] if w["unit_text"].startswith("Vienna"))["sources"][0]
    assert src["origin"] == "run passages.jsonl" and not src["from_corpus"]
    assert src["span_text"].startswith("Vienna") and "Buda and Pest" in src["passage_text"]
    assert summary["run"]["passage_source_note"] is None


def test_a_report_copies_no_text_from_the_files_run_json_names(tmp_path: Path) -> None:
    """run.json's corpus_paths may name any file of the reader's (the folder came from someone else): the
    report shows the run's own passages, never what those files hold now."""
    run = write_sample_run(tmp_path / "run", tmp_path / "corpus", with_passages=True)
    rivers = tmp_path / "corpus" / "rivers.txt"
    text = rivers.read_text(encoding="utf-8")
    rivers.write_text(text.replace("Budapest", "XSECRETX"), encoding="utf-8")  # same spans, other text
    paths = build_report(run)
    for kind in ("json", "md", "html"):
        written = paths[kind].read_text(encoding="utf-8")
        assert "XSECRETX" not in written, kind
        assert "Budapest" in written, kind


def test_counts_and_status(report: dict, built) -> None:
    c = report["counts"]
    assert c["skipped_files"] == 1 and c["leak_rejections"] == 2 and c["ignored_verdicts"] == 1
    assert report["run"]["status"] == "budget_exhausted"
    md = built[1]["md"].read_text(encoding="utf-8")
    assert "budget_exhausted" in md and "skipped input files" in md


def test_html_is_self_contained(built) -> None:
    html = built[1]["html"].read_text(encoding="utf-8")
    assert "data:image/png;base64," in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<script" not in html and "<link" not in html
    assert html.count("<img") == len([k for k in built[1] if k.startswith("figure:")])
    assert "<mark>Vienna, Budapest and Belgrade stand on the Danube.</mark>" in html
    for key, path in built[1].items():
        if key.startswith("figure:"):
            assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "map:alpha" in " ".join(built[1])


def test_report_json_is_strict_json(built) -> None:
    text = built[1]["json"].read_text(encoding="utf-8")
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))


def test_duplicate_ids_after_resume_keep_last(built) -> None:
    run_dir = built[0]
    raw = [json.loads(line)["id"] for line in (run_dir / "verdicts.jsonl").read_text().splitlines()]
    assert len(raw) > len(set(raw))  # the sample repeats records like a resumed run
    run = load_run(run_dir)
    assert len(run.verdicts) == len(set(raw))
    outcome_lines = (run_dir / "outcomes.jsonl").read_text().splitlines()
    assert len(outcome_lines) > 24
    assert all(len(t) == 12 for t in run.outcomes.values())


def test_changed_record_after_resume_wins(tmp_path: Path) -> None:
    run_dir = write_sample_run(tmp_path / "run", tmp_path / "corpus")
    lines = (run_dir / "outcomes.jsonl").read_text().splitlines()
    first = json.loads(next(line for line in lines if '"status":"incorrect"' in line and '"alpha"' in line))
    first.update(status="correct")
    with (run_dir / "outcomes.jsonl").open("a") as handle:
        handle.write(json.dumps(first) + "\n")
    assert summarize(load_run(run_dir))["targets"]["alpha"]["counts"]["correct"] == 11


def test_outcomes_derived_from_verdicts_when_missing(tmp_path: Path) -> None:
    run_dir = write_sample_run(tmp_path / "run", tmp_path / "corpus", with_outcomes=False, status="running")
    summary = summarize(load_run(run_dir))
    assert summary["run"]["outcomes_derived"]
    alpha, beta = summary["targets"]["alpha"], summary["targets"]["beta"]
    assert alpha["accuracy"]["value"] == pytest.approx(10 / 12)
    assert beta["accuracy"]["value"] == pytest.approx(6 / 10)
    assert beta["counts"]["uncovered"] == 2  # unanswered cannot be told apart without outcomes


def test_bad_run_dir_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError):
        load_run(tmp_path / "missing")
    with pytest.raises(UserError, match="no run.json"):
        load_run(tmp_path)
    (tmp_path / "run.json").write_text("{not json")
    with pytest.raises(UserError, match="invalid run.json"):
        load_run(tmp_path)


def test_compare_two_runs(tmp_path: Path) -> None:
    one = write_sample_run(tmp_path / "one", tmp_path / "corpus")
    two = write_sample_run(tmp_path / "two", tmp_path / "corpus", targets=("gamma", "delta"))
    markdown, html = compare([one, two])
    for name in ("alpha", "beta", "gamma", "delta"):
        assert f"| {name} |" in markdown
    # alpha and gamma know the same units, beta and delta too: alpha beats delta on 2 units
    assert "| alpha | delta | 2 |" in markdown
    assert "| alpha | gamma | 0 |" in markdown
    assert "83.3% [" in markdown and "data:image/png;base64," in html
    same, _ = compare([one, one])
    assert "alpha (sample-run)" in same


def test_cli_report_and_compare(built, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = built[0]
    assert main(["report", str(run_dir), "--map-rounds", "1,2"]) == 0
    out = capsys.readouterr().out
    assert "report.html" in out and "provenance.graphml" in out
    assert (run_dir / "provenance.graphml").is_file()
    assert main(["report", str(tmp_path / "nope")]) == 2
    assert "run directory not found" in capsys.readouterr().err
    target = tmp_path / "cmp.md"
    assert main(["compare", str(run_dir), "--out", str(target)]) == 0
    assert target.is_file() and target.with_suffix(".html").is_file()
    assert main(["compare", str(run_dir)]) == 0
    assert "# Comparison" in capsys.readouterr().out
