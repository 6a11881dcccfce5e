"""JudgeLM-style pairwise judging over dataset rows, optionally in both orders (--swap), by one judge or
a panel.

`PairwiseJudge` keeps the judge contract (examiner.core.contract): for a row it marks each ordering it
judged ("original", and "swapped" with --swap) with a `Preference` in the row's original labelling, or
Unscored. A `Panel` of such judges marks the same keys by majority. Each ordering becomes one record
(the judgments JSONL); the labels are written in the gold-label spelling there (1 = output_1 wins,
2 = output_2, 0 = tie, null = unscored), `verdict_shown` in the order the judge saw, scores in the
order shown. A panel's records carry every member's own verdict under `panel`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from examiner.core.contract import Mark
from examiner.core.labels import Preference, Preferred, Unscored, preference_to_number, unscored_reason
from examiner.judging.bias_audit import lengths
from examiner.judging.row_runner import RunFlags, judge_rows
from examiner.judging.dataset import Row
from examiner.judging.panel import Panel
from examiner.llm.gateway import Gateway
from examiner.agents.judge.pairwise_judge import PairJudgment, judge_pair


@dataclass
class PairwiseOptions:
    swap: bool = False
    grade_only: bool = False
    tie_threshold: float = 0.0
    use_reference: bool = False
    endpoint: str | None = None
    structured: bool = False
    """Ask for the grades as JSON (see examiner.agents.judge.pairwise_judge.judge_pair)."""


def number(label: Preferred | None) -> int | None:
    """A preference in the records' spelling: 1, 2, 0, or None when there is none."""
    if label is None or isinstance(label, Unscored):
        return None
    if not isinstance(label, Preference):  # an unconverted spelling from outside: convert it where it enters
        raise TypeError(f"expected a Preference, got {label!r}")
    return preference_to_number(label)


class PairwiseJudge:
    """One pairwise judge (one endpoint, or each role's default) under the judge contract."""

    def __init__(self, gw: Gateway, opts: PairwiseOptions, name: str | None = None) -> None:
        self.gw, self.opts = gw, opts
        self.name = name or opts.endpoint or "pairwise"

    async def judge(self, row: Row, reference: str | None = None) -> list[tuple[str, PairJudgment]]:
        """(order, judgment) for the original order, then the swapped one when opts.swap."""
        opts = self.opts
        ref = self.reference(row, reference)
        orders = [("original", row.output_1, row.output_2)]
        if opts.swap:
            orders.append(("swapped", row.output_2, row.output_1))
        judgments = await asyncio.gather(*(
            judge_pair(self.gw, instruction=row.instruction, answer_1=first, answer_2=second, reference=ref,
                       grade_only=opts.grade_only, tie_threshold=opts.tie_threshold,
                       item_id=f"{row.id}:{order}", endpoint=opts.endpoint, structured=opts.structured)
            for order, first, second in orders))
        return [(order, j) for (order, _, _), j in zip(orders, judgments)]

    def reference(self, row: Row, given: str | None = None) -> str | None:
        """The reference shown to the judge: `given` (RevisEval's revision), else the row's when asked for."""
        return given if given is not None else (row.reference if self.opts.use_reference else None)

    async def mark(self, row: Row) -> dict[str, Mark[Preference]]:
        """Each ordering's preference in the original labelling (the contract's view of `judge`); the reason
    is why there is none when the reply did not parse, else the judge's own."""
        return {order: Mark(_original(order, j.preference), unscored_reason(j.preference) or j.reason)
                for order, j in await self.judge(row)}


def _original(order: str, preference: Preferred) -> Preferred:
    """A preference given with the answers swapped, expressed in the row's original order."""
    return preference.swapped() if order == "swapped" and isinstance(preference, Preference) else preference


async def judge_row(judge: PairwiseJudge, row: Row, reference: str | None = None,
                    method: str = "pairwise") -> list[dict[str, Any]]:
    """One or two judgment records for a row (original order, then swapped when opts.swap)."""
    records = []
    for order, j in await judge.judge(row, reference):
        records.append({
            "id": row.id, "line": row.line, "method": method, "order": order,
            "verdict": number(_original(order, j.preference)), "verdict_shown": number(j.preference),
            "score_1": j.score_1, "score_2": j.score_2, "reason": j.reason,
            "unscored": unscored_reason(j.preference),
            "label": number(row.label), "reference_used": judge.reference(row, reference) is not None,
            **lengths(row.output_1, row.output_2),
        })
    return records


async def panel_row(panel: Panel[Row, Preference], row: Row, opts: PairwiseOptions) -> list[dict[str, Any]]:
    """The panel's records for a row: the majority per ordering, and every member's own verdict."""
    marks = await panel.mark(row)
    return [{
        "id": row.id, "line": row.line, "method": "pairwise", "order": order,
        "verdict": number(mark.label), "verdict_shown": number(_original(order, mark.label)),
        "score_1": None, "score_2": None, "reason": mark.reason,
        "unscored": None if mark.scored else mark.reason, "label": number(row.label),
        "reference_used": opts.use_reference and row.reference is not None,
        "panel": {name: {"verdict": number(own.label), "reason": own.reason, "unscored": unscored_reason(own.label)}
                  for name, own in mark.members.items()},
        **lengths(row.output_1, row.output_2),
    } for order, mark in marks.items()]


def error_records(row: Row, message: str, opts: PairwiseOptions, method: str = "pairwise") -> list[dict[str, Any]]:
    """Records for a row whose calls failed (verdict null, `unscored` saying why; counted as failed)."""
    orders = ["original", "swapped"] if opts.swap else ["original"]
    return [{"id": row.id, "line": row.line, "method": method, "order": o, "verdict": None, "verdict_shown": None,
             "score_1": None, "score_2": None, "reason": "", "unscored": message, "label": number(row.label),
             "failed": True} for o in orders]


async def run_pairwise(gw: Gateway, rows: list[Row], opts: PairwiseOptions, flags: RunFlags | None = None,
                       panel: Mapping[str, str | None] | None = None) -> list[dict[str, Any]]:
    """Judge every row, by the one judge of `opts` or by a panel (member name -> its endpoint); records in
    row order."""
    flags = flags or RunFlags()
    if panel:
        members = Panel([PairwiseJudge(gw, replace(opts, endpoint=endpoint), name) for name, endpoint in panel.items()])
        return await judge_rows(rows, lambda r: panel_row(members, r, opts), lambda r, m: error_records(r, m, opts),
                                flags)
    judge = PairwiseJudge(gw, opts)
    return await judge_rows(rows, lambda r: judge_row(judge, r), lambda r, m: error_records(r, m, opts), flags)

