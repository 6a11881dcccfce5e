"""Items from an exam run directory: (question, answer, reference unit) triples, to audit the exam's judge.

Each verdict of the run becomes a `verdict` item; the run's own verdict becomes the assessment of a
pseudo-evaluator (EXAM_JUDGE), so the judges named on the command line are meta-evaluated side by
side with the judge the exam actually used. A run has no gold label, so there is no baseline ranking,
unless people reviewed it (`examiner view`): with `human_labels`, the items are the verdicts a person
overrode and each person's label is the item's gold label, so every judge, the exam's own included,
is scored against people.
"""

from __future__ import annotations

import random
from pathlib import Path

from examiner.core.errors import UserError
from examiner.core.records import (
    AnswerRecord,
    QuestionRecord,
    UnitRecord,
    VerdictRecord,
)
from examiner.core.rundir import OVERRIDES, RunDir
from examiner.core.assessments import Assessment, MetaItem
from examiner.core.labels import Unscored
from examiner.agents.prompting import unit_block

EXAM_JUDGE = "exam-judge"


def load_exam_triples(run_dir: Path, sample: int | None = None, seed: int = 0, *, human_labels: bool = False,
                      ) -> tuple[list[MetaItem], list[Assessment]]:
    """A seeded sample of the run's judged triples, and the exam judge's own assessments of them.

    human_labels: only the triples a person overrode (overrides.jsonl, the latest per question and unit),
    each with the person's verdict as its gold label."""
    if not run_dir.is_dir():
        raise UserError(f"exam run directory {run_dir} does not exist")
    run = RunDir(run_dir)
    units = run.require_records(UnitRecord)
    questions = run.require_records(QuestionRecord)
    answers = run.require_records(AnswerRecord)
    verdicts = run.require_records(VerdictRecord)
    usable = [v for v in verdicts.values()
              if v.answer_id in answers and v.question_id in questions and v.unit_id in units]
    people = run.current_overrides() if human_labels else {}
    if human_labels:
        usable = [v for v in usable if (v.question_id, v.unit_id) in people]
        if not usable:
            raise UserError(f"{run_dir}: no override of a stored verdict in {OVERRIDES} "
                            "(review the run with `examiner view` first)")
    if not usable:
        raise UserError(f"{run_dir}: no verdict links a stored question, answer and unit")
    usable.sort(key=lambda v: v.id)
    if sample is not None and sample < len(usable):
        usable = sorted(random.Random(seed).sample(usable, sample), key=lambda v: v.id)
    items, own = [], []
    for v in usable:
        unit = units[v.unit_id]
        person = people.get((v.question_id, v.unit_id))
        items.append(MetaItem(id=v.id, kind="verdict", instruction=questions[v.question_id].text,
                              text=answers[v.answer_id].text, reference=unit_block([(unit.id, unit.text)]),
                              gold_label=person.verdict if person else None, source=f"exam:{v.target}"))
        own.append(Assessment(item_id=v.id, evaluator=EXAM_JUDGE,
                              decision=None if v.verdict == "unscored" else v.verdict, explanation=v.reason,
                              unscored=Unscored(f"exam verdict unscored: {v.reason}") if v.verdict == "unscored" else None,
                              source="exam"))
    return items, own
