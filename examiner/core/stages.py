"""Every ledger stage, declared once: what each model call was for.

A stage is written on every ledger record (`examiner cost --by stage`), sent to the simulated backend
(which picks its behaviour by role and stage), read by the report's cost sections and the estimate (the
self-check is a term of its own), and named in exports. Before this registry each of those spelled the
strings itself. `Stage` is a string enum, so a member is the very string the ledger holds (it compares,
hashes, formats and serialises as that string) and old run folders read the same.

Adding a call site: add its member here with a line saying what it asks for; tests/core/test_stages.py
walks the sources and fails on a stage literal that is not registered (a call, a simulator behaviour or a
constant), so a new stage cannot slip into the ledger unnamed.
"""

from __future__ import annotations

from enum import Enum


class Stage(str, Enum):
    """The purpose of a model call, as the ledger records it."""

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    # the exam (Ref-Eval and its baselines)
    EXTRACT_UNITS = "extract_units"
    """The examiner condenses passages into knowledge units (`--units llm`)."""
    QUESTION = "question"
    """The examiner writes a cluster's question."""
    PROBE = "probe"
    """The examiner writes a follow-up question on units the answer left out."""
    ANSWER = "answer"
    """A target answers a question."""
    PROBE_ANSWER = "probe_answer"
    """A target answers a probe."""
    JUDGE = "judge"
    """The exam judge marks an answer's units against their references (refeval mode)."""
    JUDGE_TOP = "judge_top"
    """The exam judge marks the answer to one unit's question (top mode)."""
    JUDGE_NOREF = "judge_noref"
    """The exam judge marks an answer without references (noref mode)."""
    JUDGE_CASCADE = "judge_cascade"
    """The cheap judge of an exam cascade (its sampled verdicts)."""
    EXAM_REVISE = "exam_revise"
    """RevisEval in the exam: the reviser rewrites an answer before the judge compares."""
    REVISEVAL_UNITS = "reviseval_units"
    """RevisEval in the exam: the judge marks units against the revision."""
    EXAM_UNIT = "exam_unit"
    """G-Eval in the exam: a form-filling score per unit."""
    QUESTION_GATE = "question_gate"
    """The question gate's checks before a question is asked (answerable, supported, guessable)."""
    SELF_CHECK = "self_check"
    """The exam judge re-marks a seeded sample with its units reordered (beside the exam)."""
    CONTROL = "control"
    """Control questions: the examiner writes unanswerable variants of sampled questions, every target
    answers them and the judge labels each answer declined_or_corrected or accepted_premise (beside the exam)."""
    REWORDING = "rewording"
    """The wording check: the examiner rewords a seeded share of questions, every target answers each
    wording and the judge marks it (beside the exam)."""
    # judging datasets (`examiner judge`)
    GRADE = "grade"
    """Pairwise judge, grade only."""
    EXPLAIN = "explain"
    """Pairwise judge, grade then reason."""
    GRADE_CASCADE = "grade_cascade"
    """The cheap pairwise judge of a cascade."""
    REVISE = "revise"
    """RevisEval: the reviser rewrites a response."""
    REFERENCE_SCORE = "reference_score"
    """A reference-based judge scores a response."""
    STEPS = "steps"
    """G-Eval: the evaluation steps written from the criteria."""
    SCORE = "score"
    """G-Eval: the form-filling score."""
    # meta-evaluation
    ASSESS_PAIRWISE = "assess_pairwise"
    """An evaluator assesses a pair of responses (meta items of kind pairwise)."""
    ASSESS_INDIVIDUAL = "assess_individual"
    """An evaluator scores one response (meta items of kind individual)."""
    ASSESS_VERDICT = "assess_verdict"
    """An evaluator gives a verdict on one response (meta items of kind verdict)."""
    DEBATE = "debate"
    """MDEval: a debater's turn."""
    REFEREE = "referee"
    """MDEval: the referee's decision."""
    JDEVAL = "jdeval"
    """JDEval: the meta-judge compares evaluators' assessments."""
    JDEVAL_I = "jdeval_i"
    """JDEval-i: the meta-judge ranks evaluators individually."""
    BSM_BRANCH = "bsm_branch"
    """BSMEval: the criteria a decision branches into."""
    BSM_SOLVE = "bsm_solve"
    """BSMEval: one branch solved."""
    # probes beside the exam
    MEMORY_PROBE = "memory_probe"
    """`examiner probe-memory`: a target completes a held-back sentence half, guided or general."""
    # tools
    DOCTOR = "doctor"
    """`examiner doctor`: a four-token call to each endpoint."""
    CHAT = "chat"
    """`examiner chat`: a user's message."""


STAGES: tuple[str, ...] = tuple(stage.value for stage in Stage)
"""Every stage's string, in declaration order."""

QUESTION_WRITING: tuple[Stage, ...] = (Stage.QUESTION, Stage.PROBE, Stage.EXTRACT_UNITS)
"""The examiner's stages: the report's question-writing cost (the paper's layout)."""

EXAM_JUDGING: tuple[Stage, ...] = (Stage.JUDGE, Stage.JUDGE_TOP, Stage.JUDGE_NOREF, Stage.JUDGE_CASCADE,
                                    Stage.EXAM_REVISE, Stage.REVISEVAL_UNITS, Stage.EXAM_UNIT)
"""The stages of an exam's verdicts (the self-check is beside them, not among them)."""


def is_stage(name: str) -> bool:
    """Whether `name` is a registered stage."""
    return name in STAGES


__all__ = ["EXAM_JUDGING", "QUESTION_WRITING", "STAGES", "Stage", "is_stage"]
