"""What the review page (`examiner view`) lists: one row per verdict of a run, with its evidence.

Why a module apart from the server: the rows are plain data (question, the whole answer, the judge's
verdict and reason, the unit's source passages, the override in force), so the filters and the page can
be tested without a browser, and the server only renders and writes.
"""

from __future__ import annotations

from dataclasses import dataclass

from examiner.core.overrides import OverrideRecord
from examiner.reporting.model.exam import SourceSpan
from examiner.reporting.run_reader import RunData
from examiner.reporting.summary import PassageReader, unit_sources

FILTERS = ("target", "cluster", "verdict", "qtype", "overridden")
"""Query parameters the page filters on; `verdict` is the judge's original verdict."""


@dataclass
class ReviewRow:
    """One verdict as the page shows it."""

    verdict_id: str
    question_id: str
    unit_id: str
    target: str
    round: int
    cluster: str
    qtype: str
    question: str
    answer: str
    """The whole answer (the page folds a long one: reporting/answer_fold.py)."""
    verdict: str
    """The judge's verdict (verdicts.jsonl); `unscored` when it gave none."""
    reason: str
    unit_text: str
    sources: list[SourceSpan]
    override: OverrideRecord | None = None

    def field(self, name: str) -> str:
        """The value a filter compares with."""
        if name == "overridden":
            return "yes" if self.override is not None else "no"
        return str(getattr(self, name))


def review_rows(run: RunData) -> list[ReviewRow]:
    """Every verdict of the run in (target, round, question, unit) order, with the override in force."""
    reader = PassageReader(run)
    rows = []
    for v in run.verdicts.values():
        question = run.questions.get(v.question_id)
        answer = run.answers.get(v.answer_id)
        unit = run.units.get(v.unit_id)
        rows.append(ReviewRow(
            verdict_id=v.id, question_id=v.question_id, unit_id=v.unit_id, target=v.target, round=v.round,
            cluster=question.cluster_id if question else "", qtype=question.qtype if question else "other",
            question=question.text if question else "", answer=answer.text if answer else "",
            verdict=v.verdict, reason=v.reason, unit_text=unit.text if unit else "", sources=[SourceSpan.model_validate(src) for src in unit_sources(unit, reader)],
            override=run.overrides.get((v.question_id, v.unit_id)),
        ))
    rows.sort(key=lambda r: (r.target, r.round, r.question_id, r.unit_id))
    return rows


def choices(rows: list[ReviewRow]) -> dict[str, list[str]]:
    """The values each filter can take in these rows (sorted), for the page's select boxes."""
    return {name: sorted({row.field(name) for row in rows}) for name in FILTERS}


def filtered(rows: list[ReviewRow], wanted: dict[str, str]) -> list[ReviewRow]:
    """The rows matching every non-empty filter value (unknown filter names are ignored)."""
    active = {k: v for k, v in wanted.items() if k in FILTERS and v}
    return [row for row in rows if all(row.field(k) == v for k, v in active.items())]


__all__ = ["FILTERS", "ReviewRow", "choices", "filtered", "review_rows"]
