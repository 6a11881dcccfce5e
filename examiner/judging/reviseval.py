"""RevisEval over dataset rows: revise, then judge with the response-adapted reference.

Pairwise rows: the response to revise is drawn per row from Random(f"{seed}:{row id}") (so reruns and
the gateway's cache agree); the other response is the reviser's guidance, flagged as possibly imperfect.
The revised text r* then serves (a) as the reference of the pairwise LLM judge and (b) as the reference
of classic metrics: each response is scored against r*, the higher score wins per metric
(examiner.stats.reference_metrics.pairwise_preference), and the metrics vote (examiner.stats.reference_metrics.majority_vote).
Single rows: r* is the revision of the response itself; the reference judge grades it 1-10 against r*
and the classic metrics score it against r*.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from examiner.core.labels import Unscored
from examiner.agents.judge.reference_judge import score_with_reference
from examiner.agents.reviser.reviser import revise
from examiner.judging.row_runner import RunFlags, judge_rows, score_columns
from examiner.judging.dataset import Row
from examiner.judging.pairwise import PairwiseJudge, PairwiseOptions, error_records, judge_row
from examiner.llm.gateway import Gateway

CLASSIC_METRICS = ("bleu", "rouge1", "rouge2", "rougeL", "bertscore", "embedding")


@dataclass
class RevisEvalOptions:
    pairwise: PairwiseOptions = field(default_factory=PairwiseOptions)
    rubric: str | None = None
    seed: int = 0
    metrics: tuple[str, ...] = CLASSIC_METRICS
    scale: int = 10
    endpoint: str | None = None
    """Endpoint for the reviser and the single-score judge (the pairwise judge uses pairwise.endpoint)."""


def which_to_revise(row_id: str, seed: int) -> int:
    """1 or 2: the response the reviser rewrites for this pair (seeded, stable across runs)."""
    return random.Random(f"{seed}:{row_id}").choice((1, 2))


def classic_scores(hyps: Sequence[str], refs: Sequence[str], metrics: Sequence[str]) -> dict[str, list[float]]:
    """Per-item scores of hyps against refs for the chosen metrics (names in CLASSIC_METRICS)."""
    from examiner.stats import reference_metrics as m

    out: dict[str, list[float]] = {}
    if not hyps:
        return {name: [] for name in metrics}
    if "bleu" in metrics:
        out["bleu"] = m.bleu(hyps, list(refs))
    rouge_types = [t for t in ("rouge1", "rouge2", "rougeL") if t in metrics]
    if rouge_types:
        out.update(m.rouge(hyps, list(refs), types=rouge_types))
    if "bertscore" in metrics:
        out["bertscore"] = m.bertscore(hyps, list(refs))
    if "embedding" in metrics:
        out["embedding"] = m.embedding_similarity(hyps, list(refs))
    return {name: out[name] for name in metrics if name in out}


async def _pair_row(gw: Gateway, row: Row, opts: RevisEvalOptions) -> list[dict[str, Any]]:
    target = which_to_revise(row.id, opts.seed)
    response, guidance = (row.output_1, row.output_2) if target == 1 else (row.output_2, row.output_1)
    revision = await revise(gw, instruction=row.instruction, response=response, guidance=guidance,
                            rubric=opts.rubric, item_id=row.id, endpoint=opts.endpoint)
    if isinstance(revision, Unscored):
        return error_records(row, revision.reason, opts.pairwise, "reviseval")
    records = await judge_row(PairwiseJudge(gw, opts.pairwise), row, reference=revision, method="reviseval")
    for record in records:
        record["revised_from"] = target
        record["revised_reference"] = revision
    return records


async def _single_row(gw: Gateway, row: Row, opts: RevisEvalOptions) -> list[dict[str, Any]]:
    revision = await revise(gw, instruction=row.instruction, response=row.output, rubric=opts.rubric,
                            item_id=row.id, endpoint=opts.endpoint)
    if isinstance(revision, Unscored):
        return [single_error(row, revision.reason, "reviseval")]
    graded = await score_with_reference(gw, instruction=row.instruction, response=row.output,
                                        reference=revision, scale=opts.scale, item_id=row.id,
                                        endpoint=opts.endpoint)
    return [{"id": row.id, "line": row.line, "method": "reviseval", **score_columns(graded.score), "reason": graded.reason,
             "human": row.human, "group": row.group, "system": row.system,
             "revised_reference": revision}]


def single_error(row: Row, message: str, method: str) -> dict[str, Any]:
    return {"id": row.id, "line": row.line, "method": method, "score": None, "reason": "", "unscored": message,
            "human": row.human, "group": row.group, "system": row.system, "failed": True}


def add_metric_preferences(records: list[dict[str, Any]], rows: Sequence[Row], metrics: Sequence[str]) -> None:
    """Classic metrics of both responses vs r*, per-metric preference and majority vote, on the original-order
    record of each pair (field `metric_scores`, `metric_preferences`, `metric_majority`)."""
    from examiner.stats.reference_metrics import majority_vote, pairwise_preference

    by_id = {r.id: r for r in rows}
    targets = [rec for rec in records if rec.get("order") == "original" and rec.get("revised_reference")]
    if not targets or not metrics:
        return
    refs = [rec["revised_reference"] for rec in targets]
    s1 = classic_scores([by_id[rec["id"]].output_1 for rec in targets], refs, metrics)
    s2 = classic_scores([by_id[rec["id"]].output_2 for rec in targets], refs, metrics)
    prefs = {name: pairwise_preference(s1[name], s2[name]) for name in s1}
    votes = majority_vote(prefs) if prefs else []
    for i, rec in enumerate(targets):
        rec["metric_scores"] = {name: [round(s1[name][i], 6), round(s2[name][i], 6)] for name in s1}
        rec["metric_preferences"] = {name: prefs[name][i] for name in prefs}
        rec["metric_majority"] = votes[i]


def add_single_metrics(records: list[dict[str, Any]], rows: Sequence[Row], metrics: Sequence[str]) -> None:
    """Classic metric scores of each response vs its r* (field `metric_scores`)."""
    by_id = {r.id: r for r in rows}
    targets = [rec for rec in records if rec.get("revised_reference")]
    if not targets or not metrics:
        return
    scores = classic_scores([by_id[rec["id"]].output for rec in targets],
                            [rec["revised_reference"] for rec in targets], metrics)
    for i, rec in enumerate(targets):
        rec["metric_scores"] = {name: round(vals[i], 6) for name, vals in scores.items()}


async def run_reviseval(gw: Gateway, rows: list[Row], opts: RevisEvalOptions, pairwise: bool,
                        flags: RunFlags | None = None) -> list[dict[str, Any]]:
    """RevisEval over rows (pairwise or single), classic metrics included; records in row order."""
    flags = flags or RunFlags()
    if pairwise:
        records = await judge_rows(rows, lambda r: _pair_row(gw, r, opts),
                                lambda r, m: error_records(r, m, opts.pairwise, "reviseval"), flags)
        add_metric_preferences(records, rows, opts.metrics)
    else:
        records = await judge_rows(rows, lambda r: _single_row(gw, r, opts),
                                lambda r, m: [single_error(r, m, "reviseval")], flags)
        add_single_metrics(records, rows, opts.metrics)
    return records
