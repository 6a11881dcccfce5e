"""JDEval-i and BSMEval (docs/METHODS.md section 5): the meta-judge scores each assessment on its own, 1-5.

An evaluator's score is its mean over items. For the shared ranking machinery the per-item scores are
also turned into pairwise matches (on each item, every two evaluators: the higher score wins, equal
scores tie), so Elo / Bradley-Terry / win rates are reported the same way as for JDEval and MDEval.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Sequence
from itertools import combinations

import numpy as np

from examiner.agents.meta_judge import meta_judge as mj
from examiner.llm import Gateway
from examiner.core.assessments import Assessment, IndividualJudgment, MetaItem
from examiner.core.labels import Preference, Unscored
from examiner.meta.ranking import Match


def individual_id(method: str, item_id: str, evaluator: str) -> str:
    return f"{method}:{item_id}:{evaluator}"


async def jdeval_i(gateway: Gateway, item: MetaItem, a: Assessment, *, endpoint: str | None) -> IndividualJudgment:
    """Own judgment of the item first, then the 1-5 grade of the assessment (one structured reply)."""
    base = dict(id=individual_id("jdeval-i", item.id, a.evaluator), method="jdeval-i", item_id=item.id,
                evaluator=a.evaluator)
    reply = await mj.jdeval_i(gateway, item, a, endpoint=endpoint)
    if isinstance(reply, Unscored):
        return IndividualJudgment(**base, unscored=reply)
    own_score = None
    if item.kind == "individual":
        try:
            own_score = float(reply.own_decision.strip().split()[0])
        except (ValueError, IndexError):
            own_score = None
    return IndividualJudgment(**base, own_decision=reply.own_decision, own_score=own_score,
                              score=float(reply.assessment_score),
                              reasoning=f"{reply.own_reasoning}\n{reply.assessment_reasoning}".strip())


async def bsmeval(gateway: Gateway, item: MetaItem, a: Assessment, *, endpoint: str | None,
                  max_branches: int = mj.MAX_BRANCHES) -> IndividualJudgment:
    """Branch (criteria chosen by the meta-judge) -> solve (one 1-5 score each, in parallel) -> merge (mean).

    Unreadable branch scores are dropped from the mean and kept as None in branch_scores; if none is
    readable the judgment is unparseable.
    """
    base = dict(id=individual_id("bsmeval", item.id, a.evaluator), method="bsmeval", item_id=item.id,
                evaluator=a.evaluator)
    branches = await mj.bsm_branches(gateway, item, a, endpoint=endpoint, max_branches=max_branches)
    if isinstance(branches, Unscored):
        return IndividualJudgment(**base, unscored=branches)
    solved = await asyncio.gather(*(mj.bsm_solve(gateway, item, a, c, endpoint=endpoint) for c in branches))
    scores = [None if isinstance(s, Unscored) else float(s.score) for s in solved]
    valid = [s for s in scores if s is not None]
    if not valid:
        return IndividualJudgment(**base, branches=branches, branch_scores=scores,
                                  unscored=Unscored("no branch score could be read"))
    reasoning = "\n".join(f"{c}: {s.reasoning}" for c, s in zip(branches, solved) if not isinstance(s, Unscored))
    return IndividualJudgment(**base, branches=branches, branch_scores=scores, score=float(np.mean(valid)),
                              reasoning=reasoning)


def mean_scores(judgments: Sequence[IndividualJudgment]) -> dict[str, float]:
    """Evaluator -> mean meta-score over its readable judgments."""
    by: dict[str, list[float]] = defaultdict(list)
    for j in judgments:
        if j.score is not None:
            by[j.evaluator].append(j.score)
    return {e: float(np.mean(v)) for e, v in by.items() if v}


def matches_from_scores(judgments: Sequence[IndividualJudgment]) -> list[Match]:
    """Per item, every pair of evaluators with readable scores: higher wins, equal ties."""
    per_item: dict[str, dict[str, float]] = defaultdict(dict)
    for j in judgments:
        if j.score is not None:
            per_item[j.item_id][j.evaluator] = j.score
    out: list[Match] = []
    for item_id in sorted(per_item):
        scores = per_item[item_id]
        for a, b in combinations(sorted(scores), 2):
            outcome = (Preference.FIRST if scores[a] > scores[b] else Preference.SECOND if scores[b] > scores[a]
                       else Preference.TIE)
            out.append(Match(a, b, outcome, item_id))
    return out
