"""`examiner export --to jsonl|parquet|hf`: every row carries the judge's label, a person's label (an override
or a random-sample label, by whom and when), the label in force, the run's health and the models, the same in
every format, and never a secret of the settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from examiner.cli.main import main
from examiner.core.records import VerdictRecord
from examiner.core.rundir import RunDir
from examiner.exam.health import exam_health
from examiner.reporting.export_labels import IDENTITY_COLUMNS, LABEL_COLUMNS
from tests.helpers.labelled_run import SECRETS, write_labelled_run


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, VerdictRecord, list[str]]:
    return write_labelled_run(tmp_path_factory.mktemp("labelled") / "run")


def _check(rows: list[dict], labelled: tuple[Path, VerdictRecord, list[str]]) -> None:
    run, flipped, sampled = labelled
    verdicts = RunDir(run).records(VerdictRecord)
    names = [name for name, _ in LABEL_COLUMNS + IDENTITY_COLUMNS]
    assert all(set(names) <= set(r) for r in rows)
    by_verdict = {r["verdict_id"]: r for r in rows if r["verdict_id"]}
    assert set(by_verdict) == set(verdicts)
    over = by_verdict[flipped.id]
    assert (over["judge_label"], over["human_label"], over["human_label_source"], over["human_label_by"],
            over["human_label_at"], over["final_label"]) == (
        "correct", "incorrect", "override", "ana", "2026-11-24T10:00:00Z", "incorrect")
    assert sampled
    for verdict_id in sampled:
        row = by_verdict[verdict_id]
        assert (row["human_label"], row["human_label_source"], row["human_label_by"], row["final_label"]) == (
            "unrelated", "random_sample", "bo", "unrelated")
        assert row["human_label_at"] and row["judge_label"] == verdicts[verdict_id].verdict
    plain = [r for vid, r in by_verdict.items() if vid not in {flipped.id, *sampled}]
    assert plain and all(r["human_label_source"] == "none" and r["human_label"] is None
                         and r["final_label"] == r["judge_label"] == verdicts[r["verdict_id"]].verdict for r in plain)
    health = exam_health(RunDir(run).read()).status
    models = {"alpha": "alpha-7b", "beta": "beta-1b"}
    for r in rows:
        assert (r["health_status"], r["corpus"], r["target_model"]) == (health, "sample-corpus", models[r["target"]])
        assert (r["judge_endpoint"], r["judge_model"], r["examiner_endpoint"], r["examiner_model"]) == (
            "judge-model", "judge-xl", "examiner-model", "examiner-m")
        assert r["run_id"] == "sample-run"


def test_jsonl_rows_carry_labels_health_and_models(labelled: tuple[Path, VerdictRecord, list[str]],
                                                   tmp_path: Path) -> None:
    out = tmp_path / "jsonl"
    assert main(["export", str(labelled[0]), "--to", "jsonl", str(out)]) == 0
    text = (out / "data.jsonl").read_text(encoding="utf-8")
    _check([json.loads(line) for line in text.splitlines()], labelled)
    card = (out / "README.md").read_text(encoding="utf-8")
    for secret in SECRETS:
        assert secret not in text and secret not in card
    assert "| human_label_source | string |" in card and "| final_label | string |" in card


def test_parquet_and_hf_carry_the_same_columns(labelled: tuple[Path, VerdictRecord, list[str]], tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    datasets = pytest.importorskip("datasets")
    assert main(["export", str(labelled[0]), "--to", "jsonl", str(tmp_path / "j")]) == 0
    assert main(["export", str(labelled[0]), "--to", "parquet", str(tmp_path / "p")]) == 0
    assert main(["export", str(labelled[0]), "--to", "hf", str(tmp_path / "h")]) == 0
    jsonl = [json.loads(line) for line in (tmp_path / "j" / "data.jsonl").read_text(encoding="utf-8").splitlines()]
    parquet = pq.read_table(tmp_path / "p" / "data.parquet").to_pylist()
    hf = datasets.load_from_disk(str(tmp_path / "h")).to_list()
    _check(parquet, labelled)
    _check(hf, labelled)
    assert parquet == jsonl == hf


def test_a_later_sample_label_wins_over_an_earlier_override(tmp_path: Path) -> None:
    from examiner.reporting.export_labels import human_labels
    from examiner.reporting.run_reader import load_run

    run, flipped, sampled = write_labelled_run(tmp_path / "run")
    data = load_run(run)
    verdict = data.verdicts[sampled[0]]
    row = {"question_id": verdict.question_id, "unit_id": verdict.unit_id, "old": verdict.verdict, "new": "correct",
           "reason": "on second reading", "who": "cy", "at": "2020-01-01T00:00:00Z"}
    with open(run / "overrides.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(row) + "\n")
    labels = human_labels(load_run(run))
    assert (labels[sampled[0]].source, labels[sampled[0]].label) == ("random_sample", "unrelated")
    assert (labels[flipped.id].source, labels[flipped.id].by) == ("override", "ana")
