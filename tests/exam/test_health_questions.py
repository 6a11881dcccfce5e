"""Degenerate examiners the health check now names (issue 29, finding 6): questions in another language
than the corpus (a local model wrote 15 English questions out of 15 for a German corpus), questions that
name the prompt's unit labels (U1, U2); and a frozen-paper re-sit, whose judge re-marks a sample as an
exam's does (with the self-check turned off it reports INCOMPLETE rather than a PASS it did not check)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from examiner.cli.main import main
from examiner.core import rundir
from examiner.core.config import EndpointSpec, Settings
from examiner.exam.health_questions import LEAKED_LABELS, WRONG_LANGUAGE
from examiner.exam.runner import ExamRequest, start_exam
from examiner.simulator.question_language import exam_language, question_in
from tests.helpers.simulated_exam import PROFILE, ROLES

GERMAN = [
    "Die Donau ist nach der Wolga der zweitlängste Fluss Europas. Sie entspringt im Schwarzwald und mündet "
    "in einem breiten Delta in das Schwarze Meer.",
    "Wien, Budapest und Belgrad liegen an der Donau. Budapest entstand aus den Städten Buda und Pest, die "
    "im Jahr 1873 vereinigt wurden.",
    "Das Donaudelta ist ein geschütztes Feuchtgebiet. Dort brüten viele Vogelarten, darunter Pelikane und "
    "Reiher, die im Winter nach Afrika ziehen.",
    "Die Schifffahrt auf der Donau ist seit dem Wiener Kongress frei. Der Rhein-Main-Donau-Kanal verbindet "
    "den Fluss seit 1992 mit der Nordsee.",
]


def _settings(**options: object) -> Settings:
    spec = EndpointSpec(provider="simulated", model="sim", price_input_per_1m=2.5, price_output_per_1m=10.0,
                        max_concurrency=16, options={"knowledge": PROFILE, **options})
    return Settings(endpoints={"sim": spec}, roles={r: "sim" for r in ROLES}, exam={"max_rounds": 2})


def _health(run_dir: Path) -> dict:
    return json.loads((run_dir / rundir.REPORT_JSON).read_text(encoding="utf-8"))["health"]


def _check(health: dict, name: str) -> dict:
    return next(c for c in health["checks"] if c["name"] == name)


@pytest.fixture(scope="module")
def german(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("german")
    for index, text in enumerate(GERMAN):
        (folder / f"donau-{index}.txt").write_text(text, encoding="utf-8")
    return folder


def _run(corpus: Path, run_dir: Path, **options: object) -> dict:
    asyncio.run(start_exam(_settings(**options), ExamRequest([str(corpus)]), run_dir, quiet=True))
    return _health(run_dir)


def test_english_questions_for_a_german_corpus_fail_the_health(german: Path, tmp_path: Path) -> None:
    health = _run(german, tmp_path / "run", question_language="English")
    check = _check(health, "wrong_language_questions")
    assert check["status"] == "fail" and check["figure"] == 1.0, check
    assert "not in German" in check["detail"] and check["examples"][0]["text"].startswith("English: ")
    assert health["status"] == "fail"
    markdown = (tmp_path / "run" / rundir.REPORT_MD).read_text(encoding="utf-8")
    assert "wrong_language_questions fail" in markdown


def test_questions_in_the_corpus_language_pass(german: Path, tmp_path: Path) -> None:
    health = _run(german, tmp_path / "run")
    check = _check(health, "wrong_language_questions")
    assert check["status"] == "pass" and check["figure"] == 0.0, check
    assert _check(health, "leaked_unit_labels")["status"] == "pass"


def test_questions_naming_unit_labels_are_flagged(german: Path, tmp_path: Path) -> None:
    health = _run(german, tmp_path / "run", label_leak_share=1.0)
    check = _check(health, "leaked_unit_labels")
    assert check["status"] == "fail" and check["figure"] == 1.0, check
    assert check["examples"] and all(e["text"].startswith("names U") for e in check["examples"])


def test_thresholds_are_the_documented_ones() -> None:
    assert WRONG_LANGUAGE.status(0.10) == "pass" and WRONG_LANGUAGE.status(0.2) == "warn"
    assert WRONG_LANGUAGE.status(0.6) == "fail"
    assert LEAKED_LABELS.status(0.0) == "pass" and LEAKED_LABELS.status(0.05) == "warn"
    assert LEAKED_LABELS.status(0.25) == "fail"
    docs = Path("docs/GUIDE.md").read_text(encoding="utf-8")
    assert "wrong_language_questions" in docs and "leaked_unit_labels" in docs and "INCOMPLETE" in docs


def test_the_simulated_examiner_reads_the_language_line() -> None:
    import random

    from examiner.corpus.language import language_probabilities
    from examiner.exam.health_questions import MIN_PROBABILITY
    from examiner.llm.reply_language import with_language

    messages = with_language([{"role": "system", "content": "You write exam questions."}], "de")
    assert exam_language(messages) == "German"
    for language, code in (("German", "de"), ("French", "fr"), ("Spanish", "es"), ("Dutch", "nl"),
                           ("Chinese", "zh"), ("Japanese", "ja"), ("Russian", "ru")):
        questions = {question_in(language, random.Random(seed)) for seed in range(50)}
        assert len(questions) >= 40  # varied: the repeated-questions check stays quiet
        assert all(language_probabilities(q).get(code, 0.0) >= MIN_PROBABILITY for q in questions), language
    assert language_probabilities(question_in("English", random.Random(0))).get("de", 0.0) < MIN_PROBABILITY


def test_a_frozen_paper_resit_checks_its_judge_and_without_a_self_check_is_incomplete_not_pass(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.helpers.sample_run import write_sample_run

    earlier = write_sample_run(tmp_path / "earlier")
    corpus = json.loads((earlier / "run.json").read_text(encoding="utf-8"))["corpus_paths"][0]
    checked = tmp_path / "resit"
    assert main(["run", corpus, "--simulate", "--paper", str(earlier), "--paper-target", "alpha", "--out",
                 str(checked), "--quiet"]) == 0
    agreement = _check(_health(checked), "self_agreement")
    assert agreement["status"] != "not_measured" and agreement["figure"] is not None
    assert (checked / "self_check.jsonl").stat().st_size > 0
    config = tmp_path / "no-self-check.yaml"
    config.write_text("exam:\n  self_check_share: 0\n", encoding="utf-8")
    out = tmp_path / "unchecked"
    assert main(["run", corpus, "--simulate", "--paper", str(earlier), "--paper-target", "alpha", "--out", str(out),
                 "--config", str(config), "--quiet"]) == 0
    health = _health(out)
    agreement = _check(health, "self_agreement")
    assert agreement["status"] == "not_measured" and agreement["figure"] is None
    assert health["status"] == "incomplete", [(c["name"], c["status"]) for c in health["checks"]]
    markdown = (out / rundir.REPORT_MD).read_text(encoding="utf-8")
    assert "health: INCOMPLETE (self_agreement not measured)" in markdown and "health: PASS" not in markdown
    assert "Health check self_agreement NOT MEASURED (no answer was re-judged)" in markdown  # what went wrong
    assert main(["report", str(out), "--strict"]) == 0  # incomplete is not a failure
