"""A degenerate examiner and judge, for tests of the exam's health checks (option `degenerate`).

What a weak or misconfigured model does to an exam, reproduced on purpose: the examiner writes the
same template question ("What is the answer to this question?") for a share of the clusters and
copies a unit's text verbatim for another share; the judge labels units by position (correct,
incorrect, unrelated, correct, ...) whatever the answer says, and gives "..." as every reason.

Set on a simulated endpoint as `options: {degenerate: true}` (default shares) or
`{degenerate: {template_share: 0.5, copy_share: 0.2}}`. Without the option these behaviours hand the
request to the ordinary ones, so nothing else changes. Which clusters get a template or a copy is fixed
by the seed and the cluster's unit ids, so a regenerated question (after a leak) stays degenerate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from examiner.simulator.behaviours import (
    Completion,
    SimRequest,
    examiner_question,
    judge_reply,
    judge_verdicts,
    ref_ids,
    register_behaviour,
    shown_units,
    unit_id_of,
    unit_texts,
)
from examiner.simulator.prose import stable_uniform

TEMPLATE_QUESTION = "What is the answer to this question?"
PLACEHOLDER_REASON = "..."
POSITION_LABELS = ("correct", "incorrect", "unrelated")
DEFAULT_SHARES = {"template_share": 0.5, "copy_share": 0.15}


def degenerate_shares(req: SimRequest) -> Mapping[str, float] | None:
    """The `degenerate` option as shares (None: the endpoint is not degenerate)."""
    option: Any = req.option("degenerate", None)
    if not option:
        return None
    return {**DEFAULT_SHARES, **(option if isinstance(option, Mapping) else {})}


@register_behaviour("examiner", "question")
@register_behaviour("examiner", "probe")
def degenerate_question(req: SimRequest) -> Completion:
    """The ordinary question, or for a seeded share of clusters a template or a copied unit."""
    shares = degenerate_shares(req)
    ordinary = examiner_question(req)
    if shares is None or not isinstance(ordinary, dict):
        return ordinary
    target = list(ordinary["target"])
    draw = stable_uniform(req.seed, "degenerate", *sorted(target))
    texts = {name: text for message in req.messages for name, text in unit_texts(str(message.get("content"))).items()}
    refs = f" [ref:{','.join(unit_id_of(req, name) for name in target)}]"
    if draw < shares["template_share"]:
        return {"question": TEMPLATE_QUESTION + refs, "target": target}
    if draw < shares["template_share"] + shares["copy_share"] and target and target[0] in texts:
        return {"question": texts[target[0]].strip() + refs, "target": target}
    return ordinary


@register_behaviour("judge")
def degenerate_judge(req: SimRequest) -> Completion:
    """The ordinary verdicts, or labels by position with "..." as every reason."""
    if degenerate_shares(req) is None:
        return judge_verdicts(req)
    prompt = req.last_user
    units = shown_units(prompt) or ref_ids(prompt)
    return judge_reply(req, [{"unit_id": uid, "type": POSITION_LABELS[i % len(POSITION_LABELS)],
                              "reason": PLACEHOLDER_REASON} for i, uid in enumerate(units)])


__all__ = ["DEFAULT_SHARES", "PLACEHOLDER_REASON", "TEMPLATE_QUESTION", "degenerate_judge", "degenerate_question"]
