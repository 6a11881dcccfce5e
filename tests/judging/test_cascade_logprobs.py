"""A judge cascade that reads its cheap judge's confidence from log-probabilities (issue 30, item 4): the
reader of label probabilities, the simulated judge that states them, and exam runs on each path
(`confidence: logprobs | samples | auto` and auto's fall-back when an endpoint returns none)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from statistics import mean
from typing import Any

import pytest
import yaml

from examiner.agents.judge.grade_confidence import verdict_probabilities
from examiner.agents.judge.label_confidence import label_confidences
from examiner.cli.main import main
from examiner.core.labels import Preference
from examiner.core.ledger_record import LedgerRecord
from examiner.llm.ledger import answered, read_ledger
from examiner.llm.types import TokenLogprob
from examiner.simulator.logprobs import ChosenValue, token_logprobs

CHEAP = {"provider": "simulated", "model": "sim-cheap", "price_input_per_1m": 0.15, "price_output_per_1m": 0.6,
         "options": {"judge_noise": 0.2, "judge_difficulty": 2}}
STRONG = {"provider": "simulated", "model": "sim-strong", "price_input_per_1m": 2.5, "price_output_per_1m": 10.0}
ONE_FILE = "corpora/examiner-handbook/01-exam.md"


def tokens(*pairs: tuple[str, float]) -> list[TokenLogprob]:
    return [TokenLogprob(token, math.log(p)) for token, p in pairs]


def test_a_labels_probability_is_the_product_of_the_tokens_that_spell_it() -> None:
    reply = tokens(('{"labels":{"', 1.0), ('U1', 1.0), ('":"', 1.0), ('correct', 0.8), ('","', 1.0),
                   ('U2', 1.0), ('":', 1.0), (' "in', 0.5), ('correct', 0.9), ('"}}', 1.0))
    read = label_confidences(reply, ["U1", "U2", "U3"])
    assert read["U1"] == pytest.approx(0.8)
    assert read["U2"] == pytest.approx(0.45)  # the token that straddles the quote commits to the label
    assert read["U3"] is None
    assert label_confidences(None, ["U1"]) == {"U1": None}
    assert label_confidences(tokens(("no json here", 0.9)), ["U1"]) == {"U1": None}


def test_a_label_quoted_inside_a_reason_cannot_stand_in_for_the_label_map() -> None:
    # a reply that writes its reasons first, one quoting a forged label map: JSON escapes the quotes, so
    # only the real map's label is read
    reply = tokens(('{"reasons":[{"unit":"U1","reason":"the text says \\"U1\\":\\"', 1.0), ('correct', 0.99),
                   ('\\""}],"labels":{"U1":"', 1.0), ('incorrect', 0.6), ('"}}', 1.0))
    assert label_confidences(reply, ["U1"])["U1"] == pytest.approx(0.6)


def test_the_simulator_states_a_chosen_values_probability_on_its_first_token() -> None:
    content = '{"labels":{"U1":"unrelated","U2":"correct"}}'
    chosen = [ChosenValue(r'"U1"\s*:\s*"(unrelated)"', (("unrelated", 0.3), ("correct", 0.5), ("incorrect", 0.2)))]
    entries = token_logprobs(content, 3, key=7, chosen=chosen)
    assert "".join(e["token"] for e in entries) == content
    read = label_confidences([TokenLogprob(e["token"], e["logprob"]) for e in entries], ["U1"])
    assert read["U1"] == pytest.approx(0.3)
    first = next(e for e in entries if e["logprob"] == pytest.approx(math.log(0.3)))
    assert [alt["token"] for alt in first["top_logprobs"]][1:] == ["correct", "incorrect"]


def run_exam(tmp_path: Path, name: str, cheap_options: dict[str, Any] | None = None, *, corpus: str = ONE_FILE,
             **judge: Any) -> tuple[Path, list[dict[str, Any]]]:
    cheap = {**CHEAP, "options": {**CHEAP["options"], **(cheap_options or {})}}
    config = tmp_path / f"{name}.yaml"
    config.write_text(yaml.safe_dump({
        "endpoints": {"cheap": cheap, "strong": STRONG},
        "roles": {"examiner": "simulated", "candidate": "simulated",
                  "judge": {"cascade": ["cheap", "strong"], "target_agreement": 0.8, "risk": 0.2, **judge}}}))
    out = tmp_path / name
    assert main(["run", corpus, "--config", str(config), "--out", str(out), "--quiet", "--max-rounds", "1"]) == 0
    return out, [json.loads(line) for line in (out / "cascade.jsonl").read_text().splitlines()]


def cheap_calls(out: Path) -> list[LedgerRecord]:
    ledger = answered(read_ledger(out / "ledger.jsonl"))
    return [r for r in ledger if r.stage == "judge_cascade" and not r.cache_hit]


def test_logprobs_give_one_greedy_call_per_answer_and_a_calibrated_confidence(tmp_path: Path) -> None:
    out, records = run_exam(tmp_path, "logprobs", corpus="corpora/examiner-handbook", calibration_share=1.0)
    assert {r["confidence_source"] for r in records} == {"logprobs"}
    sampled, _ = run_exam(tmp_path, "samples", corpus="corpora/examiner-handbook", calibration_share=1.0,
                          confidence="samples")
    answers = len({r["answer_id"] for r in records})
    assert len(cheap_calls(out)) == answers  # one call each; sampling asks for 5 choices in each of its calls
    sampled_tokens = sum(r.completion_tokens for r in cheap_calls(sampled))
    assert sum(r.completion_tokens for r in cheap_calls(out)) * 3 < sampled_tokens
    calibration = [r for r in records if r["calibration"] and r["strong_label"] is not None]
    agree = [r["confidence"] for r in calibration if r["cheap_label"] == r["strong_label"]]
    disagree = [r["confidence"] for r in calibration if r["cheap_label"] != r["strong_label"]]
    assert agree and disagree and mean(agree) > mean(disagree) + 0.2  # the stated probability means something
    assert "probability of each label in one greedy reply" in (out / "report.md").read_text()
    section = json.loads((out / "report.json").read_text())["cascade"]
    assert section["confidence_source"] == "logprobs"


def test_an_overconfident_cheap_judge_claims_certainty_whatever_it_says(tmp_path: Path) -> None:
    _, records = run_exam(tmp_path, "over", {"judge_confidence": "overconfident"}, calibration_share=1.0)
    assert records and all(0.95 <= r["confidence"] < 1 for r in records if r["cheap_label"] is not None)


def test_auto_falls_back_to_samples_when_the_endpoint_returns_no_logprobs(tmp_path: Path) -> None:
    out, records = run_exam(tmp_path, "auto", {"returns_logprobs": False})
    assert records and {r["confidence_source"] for r in records} == {"samples"}
    assert "agreement of 5 samples per answer" in (out / "report.md").read_text()


def test_logprobs_required_but_not_returned_leave_every_unit_unsure(tmp_path: Path) -> None:
    _, records = run_exam(tmp_path, "strict", {"returns_logprobs": False}, confidence="logprobs")
    assert records and {r["confidence_source"] for r in records} == {"logprobs"}
    assert all(r["confidence"] == 0.0 for r in records)


def test_an_unknown_confidence_way_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text(yaml.safe_dump({"endpoints": {"cheap": CHEAP, "strong": STRONG},
                                      "roles": {"judge": {"cascade": ["cheap", "strong"], "confidence": "vibes"}}}))
    assert main(["run", ONE_FILE, "--config", str(config), "--out", str(tmp_path / "r"), "--quiet"]) == 2
    assert "confidence" in capsys.readouterr().err


def test_the_command_line_chooses_how_confidence_is_read(tmp_path: Path) -> None:
    config = tmp_path / "endpoints.yaml"
    config.write_text(yaml.safe_dump({"endpoints": {"cheap": CHEAP, "strong": STRONG},
                                      "roles": {"examiner": "simulated", "candidate": "simulated"}}))
    out = tmp_path / "run"
    assert main(["run", ONE_FILE, "--config", str(config), "--out", str(out), "--quiet", "--max-rounds", "1",
                 "--judge-cascade", "cheap,strong", "--cascade-confidence", "samples"]) == 0
    assert yaml.safe_load((out / "config.yaml").read_text())["judge_cascade"]["confidence"] == "samples"
    records = [json.loads(line) for line in (out / "cascade.jsonl").read_text().splitlines()]
    assert records and {r["confidence_source"] for r in records} == {"samples"}


def grade_line(first: dict[str, float], second: dict[str, float]) -> list[TokenLogprob]:
    """A grade line whose score tokens list the given alternatives (the first of each is written)."""
    def token(options: dict[str, float]) -> TokenLogprob:
        chosen = next(iter(options))
        return TokenLogprob(chosen, math.log(options[chosen]), {t: math.log(p) for t, p in options.items()})
    return [token(first), TokenLogprob(" ", 0.0), token(second)]


def test_a_verdicts_probability_combines_both_scores_distributions() -> None:
    probabilities = verdict_probabilities(grade_line({"8": 0.6, "7": 0.2, " the": 0.2}, {"6": 0.5, "9": 0.5}))
    assert probabilities is not None
    assert probabilities[Preference.FIRST] == pytest.approx(0.5)  # 8 or 7 over 6: the first score is certain to be one
    assert probabilities[Preference.SECOND] == pytest.approx(0.5)
    with_ties = verdict_probabilities(grade_line({"8": 1.0}, {"8": 0.7, "6": 0.3}), tie_threshold=0)
    assert with_ties is not None and with_ties[Preference.TIE] == pytest.approx(0.7)
    bare = [TokenLogprob("8", math.log(0.9)), TokenLogprob(" ", 0.0), TokenLogprob("6", math.log(0.5))]
    lower_bound = verdict_probabilities(bare)  # no alternatives listed: the grade line's own probability
    assert lower_bound is not None and lower_bound[Preference.FIRST] == pytest.approx(0.45)
    assert verdict_probabilities(None) is None
    assert verdict_probabilities([TokenLogprob("Answer 1 is better", -0.1)]) is None


PAIR_ENDPOINTS = {
    "mini": {"provider": "simulated", "model": "sim-mini", "price_input_per_1m": 0.15, "price_output_per_1m": 0.6,
             "options": {"pairwise_accuracy": 0.8, "pairwise_difficulty": 3}},
    "big": {"provider": "simulated", "model": "sim-big", "price_input_per_1m": 2.5, "price_output_per_1m": 10.0,
            "options": {"pairwise_accuracy": 0.95}}}


def judge_pairs(tmp_path: Path, name: str, *flags: str, mini: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Judge llmbar:Adversarial_Neighbor (the test takes `fixture_data`: the 40 invented pairs) through a
    mini,big cascade."""
    endpoints = json.loads(json.dumps(PAIR_ENDPOINTS))
    endpoints["mini"]["options"].update(mini or {})
    config = tmp_path / f"{name}.yaml"
    config.write_text(yaml.safe_dump({"endpoints": endpoints}))
    out = tmp_path / name
    assert main(["judge", "llmbar:Adversarial_Neighbor", "--method", "pairwise", "--swap", "--config", str(config),
                 "--quiet", "--judge-cascade", "mini,big", "--target-agreement", "0.75", "--cascade-risk", "0.2",
                 "--calibration-share", "0.5", "--out", str(out), *flags]) == 0
    return [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]


@pytest.mark.usefixtures("fixture_data")
def test_pairwise_cascade_reads_verdict_probabilities_from_one_grade_line_per_ordering(tmp_path: Path) -> None:
    records = judge_pairs(tmp_path, "pairs")
    originals = [r for r in records if r["order"] == "original"]
    assert {r["confidence_source"] for r in originals} == {"logprobs"}
    calls = cheap_calls_of(tmp_path / "pairs", "grade_cascade")
    assert len(calls) == 2 * len(originals) and all(c.fields().get("n", 1) == 1 for c in calls)
    calibration = [r for r in originals if r["calibration"] and r["verdict"] is not None]
    agree = [r["confidence"] for r in calibration if r["cheap_verdict"] == r["verdict"]]
    disagree = [r["confidence"] for r in calibration if r["cheap_verdict"] != r["verdict"]]
    assert agree and disagree and mean(agree) > mean(disagree) + 0.1
    kept = [r for r in originals if r["tier"] == "cheap"]
    assert kept and all("verdict probability" in r["reason"] for r in kept)
    assert "one greedy grade line per ordering" in (tmp_path / "pairs" / "report.md").read_text()


@pytest.mark.usefixtures("fixture_data")
def test_pairwise_auto_falls_back_to_samples_and_samples_can_be_asked_for(tmp_path: Path) -> None:
    fallen = judge_pairs(tmp_path, "auto", mini={"returns_logprobs": False})
    assert {r["confidence_source"] for r in fallen} == {"samples"}
    asked = judge_pairs(tmp_path, "asked", "--cascade-confidence", "samples")
    assert {r["confidence_source"] for r in asked} == {"samples"}


def cheap_calls_of(out: Path, stage: str) -> list[LedgerRecord]:
    ledger = answered(read_ledger(out / "ledger.jsonl"))
    return [r for r in ledger if r.stage == stage and not r.cache_hit]


@pytest.mark.usefixtures("fixture_data")
def test_a_pairwise_cascade_can_promise_agreement_with_the_gold_labels(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    records = judge_pairs(tmp_path, "gold", "--cascade-reference", "gold")
    section = json.loads((tmp_path / "gold" / "report.json").read_text())["cascade"]
    calibration = [r for r in records if r["order"] == "original" and r["calibration"] and r["label"] is not None]
    assert section["reference"] == "gold" and calibration
    assert section["calibration_agreement"] == pytest.approx(
        sum(r["cheap_verdict"] == r["label"] for r in calibration) / len(calibration))
    assert "agreement rate with the rows' gold labels" in (tmp_path / "gold" / "report.md").read_text()
    unlabelled = tmp_path / "pairs.jsonl"
    unlabelled.write_text("".join(json.dumps({"instruction": f"q{i}", "output_1": "a", "output_2": "b"}) + "\n"
                                  for i in range(3)))
    capsys.readouterr()
    assert main(["judge", str(unlabelled), "--method", "pairwise", "--simulate", "--quiet", "--judge-cascade",
                 "simulated,simulated", "--cascade-reference", "gold", "--out", str(tmp_path / "none")]) == 2
    assert "needs rows with a label" in capsys.readouterr().err
