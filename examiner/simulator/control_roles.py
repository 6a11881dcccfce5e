"""Simulated behaviours of the exam's control questions (examiner/exam/nodes/controls.py), with known truth.

The examiner writes a control deterministically from the units shown: the centre unit's question turned
unanswerable by the call's `control_kind` hint, ending in `[ref:...]` with the unit ids (the side channel
the simulated candidate reads). A target meets it as its option `false_premise` says:

    answers    - always answers as if the premise held (the hallucinating target);
    declines   - always declines (the over-refusing target);
    knowledge  - (the default) by what it knows of the centre unit (behaviours.unit_category): a unit it
                 knows, it corrects the premise; one it declines about, it declines; one it gets wrong or
                 does not know, it goes along with the premise.

The answer carries the claim marker `(control:corrected|declined|accepted)`, the truth the simulated judge
reads (and `judge_noise` flips a share of, as for ordinary verdicts); the judge replies
`declined_or_corrected` or `accepted_premise`.
"""

from __future__ import annotations

import re

from examiner.simulator.behaviours import (
    Completion,
    SimRequest,
    _profile,
    fence_content,
    ref_ids,
    register_behaviour,
    shown_units,
    unescape,
    unit_category,
    unit_id_of,
)
from examiner.simulator.prose import filler_sentence, filler_text, stable_uniform

CONTROL_MARK_RE = re.compile(r"\(control:(corrected|declined|accepted)\)")
CONTROL_OPENINGS = {
    "false_premise": "Given that the opposite of what is established here holds, what follows from it?",
    "swapped_entity": "What did the Valdmere Institute decide about this matter, and when?",
    "out_of_corpus": "What exact figure was recorded for this on the third day of the trial?",
}
"""The simulated control's words by kind (stand-ins: a real examiner writes them from the units)."""


@register_behaviour("examiner", "control")
def examiner_control(req: SimRequest) -> Completion:
    """A control of the hinted kind about the units shown, ending in `[ref:...]` (deterministic)."""
    names = shown_units(req.last_user)
    unit_ids = [unit_id_of(req, name) for name in names]
    kind = str(req.hint("control_kind", "false_premise"))
    question = CONTROL_OPENINGS.get(kind, CONTROL_OPENINGS["false_premise"])
    return {"question": f"{question} [ref:{','.join(unit_ids)}]",
            "premise": f"The units do not support the question's {kind.replace('_', ' ')}."}


def control_stance(req: SimRequest, unit_ids: list[str]) -> str:
    """How the target meets a control: "corrected", "declined" or "accepted" (see the module's table)."""
    policy = str(req.option("false_premise", "knowledge"))
    if policy == "answers":
        return "accepted"
    if policy == "declines":
        return "declined"
    if not unit_ids:
        return "accepted"
    category = unit_category(req.seed, req.model, unit_ids[0], _profile(req))
    return {"known": "corrected", "declined": "declined"}.get(category, "accepted")


@register_behaviour("candidate", "control")
def candidate_control_answer(req: SimRequest) -> Completion:
    """The target's answer to a control, its stance marked `(control:...)`."""
    question = fence_content(req.last_user, "exam_question") or req.last_user
    stance = control_stance(req, ref_ids(question))
    rng = req.rng("control_answer")
    opening = {"corrected": "That premise does not hold; the record says otherwise.",
               "declined": "I do not know this and would rather not guess.",
               "accepted": f"{filler_sentence(rng)[:-1]}."}[stance]
    return f"{opening} (control:{stance}) {filler_text(rng, 60)}"


@register_behaviour("judge", "control")
def judge_control(req: SimRequest) -> Completion:
    """The control label read from the answer's marker; `judge_noise` flips a share of labels."""
    answer = fence_content(req.last_user, "exam_answer") or unescape(req.last_user)
    found = CONTROL_MARK_RE.findall(answer)
    label = "accepted_premise" if not found or found[-1] == "accepted" else "declined_or_corrected"
    noise = float(req.option("judge_noise", 0.0))
    if noise > 0 and stable_uniform(req.seed, "control_noise", req.prompt_key, *req.sampling_salt) < noise:
        label = "declined_or_corrected" if label == "accepted_premise" else "accepted_premise"
    reason = "The answer goes along with the unsupported premise." if label == "accepted_premise" \
        else "The answer declines or corrects the unsupported premise."
    return {"label": label, "reason": reason}
