"""Single-score methods over dataset rows: G-Eval and the reference judge.

Records carry the human score (when the dataset has one) and the document/system ids used for
summary- and system-level correlations in the report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from examiner.agents.judge.geval import DEFAULT_SAMPLES, evaluation_steps, geval_score
from examiner.agents.judge.reference_judge import score_with_reference
from examiner.judging.bias_audit import lengths
from examiner.judging.row_runner import CALL_FAILED, RunFlags, judge_rows, score_columns
from examiner.judging.dataset import Row
from examiner.judging.reviseval import single_error
from examiner.llm.gateway import Gateway
from examiner.llm.transport import ModelCallError

DEFAULT_TASK = "You will be given a request (the source) and a response written for it. Your task is to rate the response."
DEFAULT_CRITERION = ("Overall quality (1-5): how well the response fulfils the request: correct, relevant, "
                     "complete and clearly written. 1 is unusable, 5 is excellent.")


@dataclass
class GEvalOptions:
    task: str = DEFAULT_TASK
    criterion: str = DEFAULT_CRITERION
    form_label: str = "Score"
    scale: int = 5
    n: int = DEFAULT_SAMPLES
    use_logprobs: bool | None = None
    endpoint: str | None = None


async def run_geval(gw: Gateway, rows: list[Row], opts: GEvalOptions, flags: RunFlags | None = None,
                    ) -> list[dict[str, Any]]:
    """G-Eval score per row (text = output, source = source field, else the instruction)."""
    flags = flags or RunFlags()
    if rows:
        try:
            await evaluation_steps(gw, task=opts.task, criterion=opts.criterion, endpoint=opts.endpoint)
        except ModelCallError as exc:  # no steps, no scores: every row fails as its own call would (no crash)
            flags.failed_calls += 1
            return [single_error(row, f"{CALL_FAILED}{exc}", "geval") for row in rows]

    async def one(row: Row) -> list[dict[str, Any]]:
        scored = await geval_score(gw, task=opts.task, criterion=opts.criterion, text=row.output,
                                   source=row.source or row.instruction, scale=opts.scale,
                                   form_label=opts.form_label, n=opts.n, use_logprobs=opts.use_logprobs,
                                   item_id=row.id, endpoint=opts.endpoint)
        record = {"id": row.id, "line": row.line, "method": "geval", **scored.to_dict(), "human": row.human, "group": row.group, "system": row.system,
                  **lengths(row.output)}
        return [record]

    return await judge_rows(rows, one, lambda r, m: [single_error(r, m, "geval")], flags)


async def run_reference(gw: Gateway, rows: list[Row], *, scale: int = 10, endpoint: str | None = None,
                        flags: RunFlags | None = None) -> list[dict[str, Any]]:
    """Reference-judge grade (1..scale) per row against the row's reference answer."""
    flags = flags or RunFlags()

    async def one(row: Row) -> list[dict[str, Any]]:
        assert row.reference is not None
        graded = await score_with_reference(gw, instruction=row.instruction, response=row.output,
                                            reference=row.reference, scale=scale, item_id=row.id, endpoint=endpoint)
        return [{"id": row.id, "line": row.line, "method": "reference", **score_columns(graded.score),
                 "reason": graded.reason, "human": row.human, "group": row.group,
                 "system": row.system, **lengths(row.output)}]

    return await judge_rows(rows, one, lambda r, m: [single_error(r, m, "reference")], flags)
