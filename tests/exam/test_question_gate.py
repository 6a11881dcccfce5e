"""The question gate (examiner/exam/gate/): its model-free checks on their own, and a simulated exam with
seeded defective questions where every draft the gate saw is held to the simulator's truth."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from examiner.api.exam import prepare_exam
from examiner.cli.commands.exam import exam_options
from examiner.cli.main import build_parser
from examiner.core.errors import UserError
from examiner.core.records import QuestionRecord
from examiner.exam.gate.checks import citation_check, label_check, language_check, nearest, quote_match
from examiner.exam.run_writer import RunStore
from examiner.exam.runner import ExamRequest, start_exam
from examiner.reporting import build_report
from examiner.reporting.json_schema import shipped_schema
from examiner.simulator.behaviours import ref_ids
from examiner.simulator.question_defects import defect_of
from tests.helpers.simulated_exam import sim_settings

UNIT = "The harbour authority raised the water tariff by 4 percent in March after the pump station failed."
OTHER = "Ferries leave the north pier every forty minutes from six in the morning until midnight."
CHECK_OF = {"unanswerable": "answerable", "wrong_citation": "citation", "guessable": "guessable",
            "near_duplicate": "near_duplicate", "wrong_language": "language"}


def test_a_quote_counts_only_in_the_unit_it_comes_from() -> None:
    assert quote_match("raised the water  tariff by 4 percent", UNIT) == 1.0
    assert quote_match("Raised the water tariff by four percent in March", UNIT) > 0.8
    assert quote_match("Ferries leave the north pier every forty minutes", UNIT) < 0.5
    assert quote_match("", UNIT) == 0.0
    texts = {"a": UNIT, "b": OTHER}
    ok = citation_check(["a", "b"], {"a": (True, "tariff by 4 percent"), "b": (True, "every forty minutes")}, texts, 0.8)
    assert ok.passed and not ok.reason
    swapped = citation_check(["a"], {"a": (True, "every forty minutes from six")}, texts, 0.8)
    assert not swapped.passed and "not from it" in swapped.reason
    unsupported = citation_check(["a", "b"], {"a": (True, "tariff"), "b": (False, "")}, texts, 0.8)
    assert not unsupported.passed and "b does not support it" in unsupported.reason


def test_language_and_label_checks_read_the_question_alone() -> None:
    german = "Warum hat die Hafenbehörde den Wassertarif im März erhöht, und was folgte daraus für die Fähren?"
    english = "Why did the harbour authority raise the water tariff in March, and what followed for the ferries?"
    assert not language_check(german, {"en"}).passed and "German" in language_check(german, {"en"}).reason
    assert language_check(german, {"en", "de"}).passed
    assert language_check(english + " [ref:ku-1,ku-2]", {"en"}).passed
    assert language_check("Warum?", {"en"}).passed  # too short to tell
    assert not label_check("What does U2 say about the tariff?", [UNIT]).passed
    assert label_check("What did the band U2 play?", ["U2 played in the harbour hall."]).passed


def test_nearest_finds_the_closest_earlier_question() -> None:
    earlier = np.eye(3, dtype=np.float32)
    assert nearest(np.array([0.0, 0.6, 0.8], dtype=np.float32), earlier) == (2, 0.800000011920929)
    assert nearest(np.ones(3, dtype=np.float32), np.zeros((0, 0), dtype=np.float32)) == (-1, 0.0)


async def test_the_gate_flags_every_seeded_defect_and_passes_sound_questions(corpus: Path, tmp_path: Path) -> None:
    settings = sim_settings(max_rounds=1, question_gate=True, cluster_size=2)
    options = {"defective_questions": {"share": 0.5}}
    for spec in settings.endpoints.values():
        spec.options.update(options)
    info = await start_exam(settings, ExamRequest([str(corpus)], targets=["sim"]), tmp_path, quiet=True,
                            report=False)
    assert info.status == "completed"
    questions = [q for q in RunStore(tmp_path).all(QuestionRecord).values() if q.kind == "question" and q.status != "unparseable"]
    assert questions and all(q.gate for q in questions)
    kinds, first_copy = set(), True
    for q in sorted(questions, key=lambda q: (q.round, q.cluster_id)):
        drafts = [(q.gate_draft, 0, q.gate_draft_checks)] if q.gate_draft else []
        for text, attempt, checks in [*drafts, (q.text, q.gate_rewrites, q.gate)]:
            failed = {c.name for c in checks if not c.passed}
            assert all(c.reason for c in checks if not c.passed)
            kind = defect_of(0, options, ref_ids(text), attempt)
            if kind == "near_duplicate" and first_copy and not failed:
                first_copy = False  # nothing earlier to copy
                continue
            kinds.add(kind)
            assert failed == ({CHECK_OF[kind]} if kind else set()), (kind, failed, text)
        assert q.status == ("ok" if not {c.name for c in q.gate if not c.passed} - {"guessable"} else "gate_rejected")
    assert len(kinds - {None}) >= 3  # the seeded defects of several kinds reached the gate
    stages = [json.loads(line).get("stage") for line in (tmp_path / "ledger.jsonl").read_text().splitlines()]
    assert "question_gate" in stages
    build_report(tmp_path)
    report = json.loads((tmp_path / "report.json").read_text())
    jsonschema.validate(report, shipped_schema())
    gate = report["question_gate"]
    assert gate["questions"] == len({(q.round, q.cluster_id, q.text) for q in questions})
    assert gate["passed_first"] + gate["rewritten"] == gate["questions"]
    assert "Question gate:" in (tmp_path / "report.md").read_text()


async def test_without_the_gate_nothing_changes(small_corpus: Path, tmp_path: Path) -> None:
    await start_exam(sim_settings(max_rounds=1), ExamRequest([str(small_corpus)], targets=["sim"]), tmp_path,
                     quiet=True, report=False)
    assert not any(q.gate for q in RunStore(tmp_path).all(QuestionRecord).values())
    assert "question_gate" not in (tmp_path / "ledger.jsonl").read_text()


def test_the_command_line_flags_turn_the_gate_on_and_a_paper_refuses_them(corpus: Path) -> None:
    args = build_parser().parse_args(["run", str(corpus), "--simulate", "--question-gate", "--gate-drop-guessable"])
    _, settings = prepare_exam(exam_options(args), args.config)
    assert settings.exam.question_gate and settings.exam.gate_drop_guessable
    _, plain = prepare_exam(exam_options(build_parser().parse_args(["run", str(corpus), "--simulate"])), None)
    assert not plain.exam.question_gate and not plain.exam.gate_drop_guessable
    paper = build_parser().parse_args(["run", str(corpus), "--simulate", "--paper", str(corpus), "--question-gate"])
    with pytest.raises(UserError, match="--question-gate"):
        prepare_exam(exam_options(paper), paper.config)

