"""The report's `question_gate` section: how many questions the gate kept, rewrote and rejected, which
checks failed and why (examiner/exam/gate/). Read from the questions' records (QuestionRecord.gate and the
rejected draft's checks beside a rewrite); None for a run without the gate."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from examiner.core.records import GateCheckRecord, QuestionRecord
from examiner.core.rundir import RunRecords
from examiner.reporting.model.exam import ExamReport, QuestionGateSection
from examiner.reporting.topics import question_excerpt

MAX_EXAMPLES = 20


def _failed(checks: list[GateCheckRecord]) -> list[GateCheckRecord]:
    return [c for c in checks if not c.passed]


def exam_question_gate(run: RunRecords) -> dict[str, Any] | None:
    """The section's figures; None when no question went through the gate."""
    seen: dict[tuple[int, str, str], QuestionRecord] = {}
    for q in run.questions.values():  # one record per target: count each cluster's question once
        if q.kind == "question" and q.gate:
            seen.setdefault((q.round, q.cluster_id, q.text), q)
    if not seen:
        return None
    questions = sorted(seen.values(), key=lambda q: (q.round, q.cluster_id))
    failed: Counter[str] = Counter()
    examples: list[dict[str, Any]] = []
    for q in questions:
        drafts = ([(q.gate_draft or q.text, q.gate_draft_checks, "rewritten")] if q.gate_draft_checks else [])
        final = "rejected" if q.status == "gate_rejected" else "tagged"
        drafts.append((q.text, q.gate, final))
        for text, checks, outcome in drafts:
            for check in _failed(checks):
                failed[check.name] += 1
                if len(examples) < MAX_EXAMPLES and (outcome != "tagged" or check.name == "guessable"):
                    examples.append({"round": q.round, "question": question_excerpt(text), "check": check.name,
                                     "reason": check.reason, "outcome": outcome})
    rewritten = sum(q.gate_rewrites > 0 for q in questions)
    rejected = sum(q.status == "gate_rejected" for q in questions)
    return {"questions": len(questions), "passed_first": len(questions) - rewritten,
            "rewritten": rewritten, "rejected": rejected,
            "guessable": sum(q.guessable and q.status == "ok" for q in questions),
            "failed": dict(sorted(failed.items())), "examples": examples}


def gate_lines(report: ExamReport, table: Callable[[list[str], list[list[Any]]], str]) -> list[str]:
    """report.md's lines for the gate (none when it was off)."""
    g = report.question_gate
    if g is None:
        return []
    out = ["", f"Question gate: {g.questions} questions checked, {g.passed_first} kept as written, {g.rewritten} "
               f"rewritten, {g.rejected} never asked (units back to the pool), {g.guessable} asked and tagged "
               "guessable.", ""]
    if g.failed:
        out += [table(["check", "drafts failing it"], [[name, n] for name, n in g.failed.items()]), ""]
    if g.examples:
        out += [table(["round", "check", "outcome", "reason", "question"],
                      [[e.round, e.check, e.outcome, e.reason, e.question] for e in g.examples]), ""]
    return out


def gate_line(section: QuestionGateSection | None) -> str | None:
    """The terminal summary's one line for the gate (None when it was off)."""
    if section is None:
        return None
    return (f"question gate: {section.questions} questions checked, {section.rewritten} rewritten, {section.rejected} "
            f"never asked, {section.guessable} asked and tagged guessable (report.md lists the failed checks)")


__all__ = ["MAX_EXAMPLES", "exam_question_gate", "gate_line", "gate_lines"]
