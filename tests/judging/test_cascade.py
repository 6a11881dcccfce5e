"""The exam's judge cascade end to end (examiner.judging.cascade, examiner/exam/nodes/judge_cascade.py):
configuration, the calibration draw, the cheap judge's sampled confidence, and a simulated run whose
records say which tier settled each unit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from examiner.agents.judge.unit_judge import Judgment, UnitReason
from examiner.cli.main import main
from examiner.core.config import ConfigError, Settings, validate_settings
from examiner.judging.cascade import in_calibration, read_samples

CHEAP = {"provider": "simulated", "model": "sim-cheap", "price_input_per_1m": 0.15, "price_output_per_1m": 0.6,
         "options": {"judge_noise": 0.15, "judge_difficulty": 3}}
STRONG = {"provider": "simulated", "model": "sim-strong", "price_input_per_1m": 2.5, "price_output_per_1m": 10.0}


def cascade_config(**judge: object) -> dict[str, object]:
    return {"endpoints": {"cheap": CHEAP, "strong": STRONG},
            "roles": {"examiner": "simulated", "candidate": "simulated",
                      "judge": {"cascade": ["cheap", "strong"], "target_agreement": 0.9, "risk": 0.1, **judge}}}


def test_roles_judge_mapping_names_a_cascade_and_the_role_resolves_to_the_strong_judge() -> None:
    settings = Settings.model_validate(cascade_config(calibration_share=0.3))
    assert settings.roles["judge"] == "strong"
    assert settings.judge_cascade is not None and settings.judge_cascade.cheap == "cheap"
    assert settings.judge_cascade.calibration_share == 0.3 and settings.judge_cascade.samples == 5


@pytest.mark.parametrize(("change", "words"), [
    ({"cascade": ["cheap", "nowhere"]}, "nowhere"),
    ({"cascade": ["cheap"]}, "two endpoints"),
    ({"risk": 1.5}, "risk"),
    ({"cascade": ["strong", "strong"]}, "distinct"),
])
def test_bad_cascades_are_refused_with_the_reason(change: dict[str, object], words: str) -> None:
    data = cascade_config()
    data["roles"]["judge"] = {**data["roles"]["judge"], **change}  # type: ignore[index]
    with pytest.raises(ConfigError, match=words):
        validate_settings(data)


def test_the_calibration_draw_is_a_seeded_share_of_answers() -> None:
    ids = [f"a{i}" for i in range(4000)]
    drawn = [in_calibration(i, 0.25, seed=1) for i in ids]
    assert 0.22 < sum(drawn) / len(ids) < 0.28
    assert drawn == [in_calibration(i, 0.25, seed=1) for i in ids]
    assert drawn != [in_calibration(i, 0.25, seed=2) for i in ids]


def test_confidence_is_the_majority_share_and_a_broken_sample_counts_against_it() -> None:
    def judged(**labels: str) -> Judgment:
        return Judgment(labels=labels, reasons=[UnitReason(unit=u, reason=f"why {u}") for u in labels])

    choices = [judged(u1="correct", u2="incorrect"), judged(u1="correct", u2="correct"),
               judged(u1="correct", u2="incorrect"), None, judged(u1="correct")]
    readings = read_samples(choices, ["u1", "u2", "u3"])
    assert (readings["u1"].label, readings["u1"].confidence) == ("correct", 0.8)
    assert (readings["u2"].label, readings["u2"].confidence) == ("incorrect", 0.4)
    assert readings["u2"].reason == "why u2"
    assert (readings["u3"].label, readings["u3"].confidence) == (None, 0.0)


def test_a_simulated_exam_settles_units_by_tier_and_records_why(tmp_path: Path) -> None:
    # a small corpus (49 units): a looser promise, so that some threshold can pass on its calibration units
    config = tmp_path / "cascade.yaml"
    config.write_text(yaml.safe_dump(cascade_config(calibration_share=0.4, target_agreement=0.8, risk=0.2)))
    out = tmp_path / "run"
    assert main(["run", "corpora/examiner-handbook", "--config", str(config), "--out", str(out), "--quiet",
                 "--max-rounds", "2"]) == 0
    cascade = [json.loads(line) for line in (out / "cascade.jsonl").read_text().splitlines()]
    verdicts = {v["id"]: v for v in map(json.loads, (out / "verdicts.jsonl").read_text().splitlines())}
    assert {c["id"] for c in cascade} == set(verdicts)  # one cascade record per verdict
    calibration = [c for c in cascade if c["calibration"]]
    kept = [c for c in cascade if c["tier"] == "cheap"]
    escalated = [c for c in cascade if c["tier"] == "strong" and not c["calibration"]]
    assert calibration and kept and escalated
    assert all(c["strong_label"] is not None or verdicts[c["id"]]["verdict"] is None for c in calibration)
    for c in kept:  # a kept unit carries the cheap judge's label, confident enough for its threshold
        assert verdicts[c["id"]]["verdict"] == c["cheap_label"] and c["confidence"] >= c["threshold"]
    for c in escalated:
        assert c["threshold"] is None or c["cheap_label"] is None or c["confidence"] < c["threshold"]
    ledger = [json.loads(line) for line in (out / "ledger.jsonl").read_text().splitlines()]
    endpoints = {(r.get("stage"), r.get("endpoint")) for r in ledger if r.get("stage") in ("judge", "judge_cascade")}
    assert ("judge_cascade", "cheap") in endpoints and ("judge", "strong") in endpoints
    section = json.loads((out / "report.json").read_text())["cascade"]
    assert (section["units"], section["settled_cheap"], section["calibration_units"]) == (
        len(cascade), len(kept), sum(1 for c in calibration if c["strong_label"] is not None))
    assert section["settled_strong"] == len(escalated) and 0 < section["spend_ratio"]
    cascade_md = (out / "report.md").read_text().split("## Judge cascade", 1)[1]
    # the promise is worded as the rate it is (risk-controlled), not as every run's realised share
    assert "agreement rate with strong on the units it keeps" in cascade_md and "share realised" in cascade_md
    # the run as distillation data: only the strong judge's verdicts teach
    distilled = tmp_path / "distil"
    assert main(["distil", "--exam", str(out), "--out", str(distilled)]) == 0
    examples = [json.loads(line) for name in ("train.jsonl", "validation.jsonl")
                for line in (distilled / name).read_text().splitlines()]
    strong_answers = {c["answer_id"] for c in cascade if c["tier"] == "strong" and verdicts[c["id"]]["verdict"]}
    originals = [e for e in examples if e["order"] == "original"]
    assert {e["source_id"] for e in originals} == strong_answers and {e["teacher"] for e in examples} == {"strong"}


def test_a_cascade_needs_the_reference_judge(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "cascade.yaml"
    config.write_text(yaml.safe_dump(cascade_config()))
    assert main(["run", "corpora/examiner-handbook", "--config", str(config), "--out", str(tmp_path / "r"), "--quiet",
                 "--judge-mode", "geval"]) == 2
    assert "judge cascade works with the Ref-Eval judge" in capsys.readouterr().err


def test_the_command_line_names_a_cascade_and_the_run_records_it(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "endpoints.yaml"
    data = cascade_config()
    data["roles"] = {"examiner": "simulated", "candidate": "simulated"}
    config.write_text(yaml.safe_dump(data))
    out = tmp_path / "run"
    assert main(["run", "corpora/examiner-handbook/01-exam.md", "--config", str(config), "--out", str(out),
                 "--quiet", "--max-rounds", "1", "--judge-cascade", "cheap,strong", "--target-agreement", "0.8",
                 "--cascade-risk", "0.2"]) == 0
    recorded = yaml.safe_load((out / "config.yaml").read_text())
    assert recorded["judge_cascade"]["tiers"] == ["cheap", "strong"] and recorded["roles"]["judge"] == "strong"
    assert recorded["judge_cascade"]["target_agreement"] == 0.8 and recorded["judge_cascade"]["risk"] == 0.2
    assert (out / "cascade.jsonl").stat().st_size > 0
    capsys.readouterr()
    assert main(["run", "corpora/examiner-handbook/01-exam.md", "--config", str(config), "--out",
                 str(tmp_path / "r2"), "--quiet", "--target-agreement", "0.8"]) == 2
    assert "need a judge cascade" in capsys.readouterr().err


@pytest.mark.usefixtures("fixture_data")
def test_pairwise_judging_through_a_cascade(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "pairwise.yaml"
    config.write_text(yaml.safe_dump({"endpoints": {
        "mini": {"provider": "simulated", "model": "sim-mini", "price_input_per_1m": 0.15, "price_output_per_1m": 0.6,
                 "options": {"pairwise_accuracy": 0.8, "pairwise_difficulty": 3}},
        "big": {"provider": "simulated", "model": "sim-big", "price_input_per_1m": 2.5, "price_output_per_1m": 10.0,
                "options": {"pairwise_accuracy": 0.95}}}}))
    out = tmp_path / "judged"
    assert main(["judge", "llmbar:Adversarial_Neighbor", "--method", "pairwise", "--config", str(config), "--quiet",
                 "--judge-cascade", "mini,big", "--target-agreement", "0.75", "--cascade-risk", "0.2",
                 "--calibration-share", "0.5", "--out", str(out)]) == 0
    records = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
    kept = [r for r in records if r["tier"] == "cheap"]
    calibration = [r for r in records if r["calibration"]]
    assert kept and calibration and all(r["tier"] == "strong" for r in calibration)
    for r in kept:
        assert r["verdict"] == r["cheap_verdict"] and r["confidence"] >= r["threshold"]
    section = json.loads((out / "report.json").read_text())["cascade"]
    assert section["rows"] == len(records) and section["settled_cheap"] == len(kept)
    assert section["calibration_rows"] == sum(1 for r in calibration if r["verdict"] is not None)
    assert "agreement rate with big on the pairs it keeps" in (out / "report.md").read_text()
    ledger = [json.loads(line) for line in (out / "ledger.jsonl").read_text().splitlines()]
    assert {r.get("endpoint") for r in ledger if r.get("stage") == "grade_cascade"} == {"mini"}
    assert main(["judge", "llmbar:Adversarial_Neighbor", "--method", "geval", "--config", str(config), "--quiet",
                 "--judge-cascade", "mini,big", "--out", str(tmp_path / "g")]) == 2
    assert "--judge-cascade is not read by --method geval" in capsys.readouterr().err
