"""JudgeLM-style pairwise judging over dataset rows, optionally in both orders (--swap).

Each judgment becomes one record; `verdict` is in the row's original labelling (1 = output_1 wins),
`verdict_shown` in the order the judge saw, scores in the order shown.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from examiner.roles.pairwise import judge_pair
from examiner.judging.common import RunFlags, judge_rows
from examiner.judging.dataset import Row
from examiner.roles.parsing import unswap
from examiner.llm.gateway import Gateway


@dataclass
class PairwiseOptions:
    swap: bool = False
    grade_only: bool = False
    tie_threshold: float = 0.0
    use_reference: bool = False
    endpoint: str | None = None
    structured: bool = False
    """Ask for the grades as JSON (see examiner.roles.pairwise.judge_pair)."""


async def judge_row(gw: Gateway, row: Row, opts: PairwiseOptions, reference: str | None = None,
                    method: str = "pairwise") -> list[dict[str, Any]]:
    """One or two judgment records for a row (original order, then swapped when opts.swap)."""
    ref = reference if reference is not None else (row.reference if opts.use_reference else None)
    orders = [("original", row.output_1, row.output_2)]
    if opts.swap:
        orders.append(("swapped", row.output_2, row.output_1))
    judgments = await asyncio.gather(*(
        judge_pair(gw, instruction=row.instruction, answer_1=first, answer_2=second, reference=ref,
                   grade_only=opts.grade_only, tie_threshold=opts.tie_threshold,
                   item_id=f"{row.id}:{order}", endpoint=opts.endpoint, structured=opts.structured)
        for order, first, second in orders))
    records = []
    for (order, _, _), j in zip(orders, judgments):
        records.append({
            "id": row.id, "line": row.line, "method": method, "order": order,
            "verdict": j.verdict if order == "original" else unswap(j.verdict),
            "verdict_shown": j.verdict, "score_1": j.score_1, "score_2": j.score_2,
            "reason": j.reason, "error": j.error, "label": row.label, "reference_used": ref is not None,
        })
    return records


def error_records(row: Row, message: str, opts: PairwiseOptions, method: str = "pairwise") -> list[dict[str, Any]]:
    """Records for a row whose calls failed (verdict None, counted as unparseable/failed)."""
    orders = ["original", "swapped"] if opts.swap else ["original"]
    return [{"id": row.id, "line": row.line, "method": method, "order": o, "verdict": None, "verdict_shown": None,
             "score_1": None, "score_2": None, "reason": "", "error": message, "label": row.label,
             "failed": True} for o in orders]


async def run_pairwise(gw: Gateway, rows: list[Row], opts: PairwiseOptions, flags: RunFlags | None = None,
                       ) -> list[dict[str, Any]]:
    """Judge every row; records in row order."""
    flags = flags or RunFlags()
    return await judge_rows(rows, lambda r: judge_row(gw, r, opts), lambda r, m: error_records(r, m, opts), flags)
