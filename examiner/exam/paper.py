"""A frozen exam paper: new targets sit exactly the questions an earlier run asked, judged against the
same knowledge units, so that results taken months apart compare.

Why not the adaptive loop: the exam chooses each round's questions from what the target has not yet
covered, so two targets examined separately get different papers. Here the questions are fixed: every
question and probe the earlier run's target was asked (in every round, as recorded) is put to each new
target, and the run's judge marks each of its target units (a judge cascade, when the run has one,
through the exam's own cascade node: cheap where sure enough, strong elsewhere, with cascade records).
Question ids are new (they name the new target); texts, rounds, clusters, kinds and targeted units are
the paper's. After the last round the judge re-marks a seeded sample of the answers (the self-check, as
in an exam), so the re-sit's health is measured rather than incomplete. The sitting runs through the exam
graph (examiner/exam/graph.py: `start_paper` -> `sit_round` per round -> `self_check` -> `finish`, the
steps in examiner/exam/nodes/sitting.py), so a sitting that stopped (budget, kill, signal) continues with
`examiner resume` from its checkpoint as an exam does: answers and verdicts already written are kept. Options that
shape the paper (mode, units, clusters, rounds, probes, corpus preparation) are the paper's: asked for
with --paper they are refused in one line (examiner.exam.option_fit).

Outcomes: a unit is covered (correct / incorrect) by its earliest correct or incorrect verdict; a unit the
paper asked about that was never covered is `unanswered`; a unit the paper never asked about stays
`uncovered`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from examiner.core.errors import UserError
from examiner.core.records import ClusterRound, QuestionRecord, UnitRecord
from examiner.core.rundir import RunDir

_KIND_ORDER = {"question": 0, "top": 0, "probe": 1}


@dataclass(frozen=True)
class Paper:
    """The questions of one target of an earlier run, with the units and passages they were judged on."""

    source: str
    run_id: str
    target: str
    """The earlier run's target whose questions these are."""
    mode: str
    units: dict[str, UnitRecord]
    passages: list[dict[str, Any]]
    clusters: list[ClusterRound]
    questions: list[QuestionRecord]
    """The questions that were put to the target (those with a recorded answer), in round order."""
    language: str = ""
    """The earlier run's exam language (empty for runs before examiner recorded it: English)."""


def read_paper(run_dir: str | Path, target: str | None = None) -> Paper:
    """The paper of `target` in an earlier run (its only target when None); UserError when there is none."""
    records = RunDir(run_dir).read()
    targets = list(dict.fromkeys([*records.info.targets, *(q.target for q in records.questions.values())]))
    if target is None:
        if len(targets) != 1:
            raise UserError(f"{run_dir} examined {len(targets)} targets ({', '.join(targets) or 'none'}): "
                            "name the one whose paper to sit with --paper-target")
        target = targets[0]
    elif target not in targets:
        raise UserError(f"{run_dir} did not examine '{target}' (its targets: {', '.join(targets) or 'none'})")
    asked = {a.question_id for a in records.answers.values()}
    questions = sorted((q for q in records.questions.values() if q.target == target and q.id in asked),
                       key=lambda q: (q.round, _KIND_ORDER.get(q.kind, 0), q.id))
    if not questions:
        raise UserError(f"{run_dir} holds no answered questions for '{target}': no paper to sit")
    return Paper(source=str(Path(run_dir).resolve()), run_id=records.info.run_id, target=target,
                 mode=records.info.mode, units=records.units, passages=list(records.passages.values()),
                 clusters=records.clusters.get(target, []), questions=questions,
                 language=records.info.language)


__all__ = ["Paper", "read_paper"]
