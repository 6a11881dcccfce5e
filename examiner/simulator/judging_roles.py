"""Simulated-backend behaviours for the judging agents (pairwise, reviser, reference judge, G-Eval).

Importing the simulator package registers these behaviours with every simulated server.

Pairwise judge (role `pairwise`; stage `grade` = grade-only, `explain` = grades then a reason):
  gold: POST /sim/oracle (or SimulatedServer.register_oracle) with
  `examiner.core.assessments.pairwise_oracle(items)`, i.e. {sha1(instruction): sha1(better response) or
  "tie"}. Without gold, a seeded "quality" per response decides. Options (EndpointSpec.options of the
  simulated endpoint):
    pairwise_accuracy (default 0.8): share of pairs whose underlying preference matches gold; drawn per
      pair, independent of the order shown, so it does not create inconsistency by itself;
    pairwise_position_bias (default 0.0, -1..1): share of judgments (drawn per pair and order) that
      ignore the content and favour the first position (> 0) or the second (< 0);
    pairwise_tie_rate (default 0.0): share of pairs judged a tie (drawn per pair);
    pairwise_length_bias (default 0.0, -1..1): share of pairs (drawn per pair, the same in both orders) that
      ignore the content and favour the longer response (> 0) or the shorter (< 0): a judge whose
      preference rises with length, for the bias audit's tests.
  The expected consistency is about 1 - |bias|, the expected accuracy about accuracy*(1-|bias|) +
  |bias|*(share of gold in the favoured position).
Reviser: returns the response with one added sentence (claim markers kept, so judges reading the revised
  reference see the same facts). Reference judge (role `judge`, stage `reference_score`): a grade from
  the share of `known` claim markers, else from word overlap with the reference. G-Eval: `steps` gives
  a numbered list; `exam_unit` scores agreement with the one listed unit from its claim marker
  (known 5, wrong 1, absent 3), with +-1 noise when sampling.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from examiner.core.assessments import text_key
from examiner.simulator import SimRequest, claim_markers, register_behaviour
from examiner.simulator.behaviours import UNIT_RE, unescape
from examiner.simulator.logprobs import ChosenValue
from examiner.simulator.prose import filler_sentence, filler_text, rng_for, stable_int, stable_uniform

_TAG = {name: re.compile(rf"<{name}>\n?(.*?)\n?</{name}>", re.S)
        for name in ("instruction", "answer_1", "answer_2", "reference", "response", "question")}


def sha1(text: str) -> str:
    """The oracle's key function: sha1 of the stripped text (examiner.core.assessments.text_key)."""
    return text_key(text)


def _tag(prompt: str, name: str) -> str:
    match = _TAG[name].search(prompt)
    return unescape(match.group(1)).strip() if match else ""


def _gold_first(req: SimRequest, instruction: str, a1: str, a2: str) -> int:
    """Gold in the shown order: 1, 2 or 0."""
    entry: object = req.oracle.get(sha1(instruction)) if isinstance(req.oracle, Mapping) else None
    if entry == "tie":
        return 0
    if entry == sha1(a1):
        return 1
    if entry == sha1(a2):
        return 2
    q1 = stable_uniform(req.seed, "quality", sha1(a1))
    q2 = stable_uniform(req.seed, "quality", sha1(a2))
    return 1 if q1 >= q2 else 2


@register_behaviour("pairwise")
def pairwise_judge(req: SimRequest) -> str | dict[str, object]:
    """`"s1 s2"` on the first line (then a reason unless grade-only), with configurable accuracy and bias."""
    prompt = req.last_user
    instruction, a1, a2 = _tag(prompt, "instruction"), _tag(prompt, "answer_1"), _tag(prompt, "answer_2")
    pair_key = (sha1(instruction), *sorted((sha1(a1), sha1(a2))))
    accuracy = float(req.option("pairwise_accuracy", 0.8))
    bias = float(req.option("pairwise_position_bias", 0.0))
    tie_rate = float(req.option("pairwise_tie_rate", 0.0))
    difficulty = float(req.option("pairwise_difficulty", 0.0))
    gold = _gold_first(req, instruction, a1, a2)
    sure = 0.9  # the chance the judge gave the winner it names (its logprobs say it)
    if stable_uniform(req.seed, "pw-tie", *pair_key) < tie_rate:
        winner = 0
    elif gold == 0:
        winner, sure = 1 + stable_int(req.seed, "pw-tiebreak", *pair_key) % 2, 0.5
    elif difficulty > 0 and 0 < accuracy < 1:  # each pair its own chance; each sample draws afresh
        chance = rng_for(req.seed, "pw-difficulty", *pair_key).betavariate(accuracy * difficulty,
                                                                           (1 - accuracy) * difficulty)
        winner = gold if stable_uniform(req.seed, "pw-acc", *pair_key, *req.sampling_salt) < chance else 3 - gold
        sure = chance if winner == gold else 1 - chance
    elif stable_uniform(req.seed, "pw-acc", *pair_key) < accuracy:
        winner, sure = gold, accuracy
    else:
        winner, sure = 3 - gold, 1 - accuracy
    length_bias = float(req.option("pairwise_length_bias", 0.0))
    if length_bias and len(a1) != len(a2) and stable_uniform(req.seed, "pw-length", *pair_key) < abs(length_bias):
        longer = 1 if len(a1) > len(a2) else 2
        winner = longer if length_bias > 0 else 3 - longer
    if bias and stable_uniform(req.seed, "pw-bias", *pair_key, sha1(a1), *req.sampling_salt) < abs(bias):
        winner = 1 if bias > 0 else 2
    rng = req.rng("pairwise")
    high = rng.randint(6, 9)
    low = max(1, high - rng.randint(1, 4))
    scores = (high, high) if winner == 0 else (high, low) if winner == 1 else (low, high)
    line = f"{scores[0]} {scores[1]}"
    if req.body.get("logprobs"):
        req.chosen.append(_grade_choice(req, scores, winner, sure, pair_key))
    which = {0: "Both answers serve the request about equally well.",
             1: "Answer 1 follows the request more closely than answer 2.",
             2: "Answer 2 follows the request more closely than answer 1."}[winner]
    if req.schema is not None or req.json_mode:
        grades: dict[str, object] = {"score_1": scores[0], "score_2": scores[1]}
        if not req.stage.startswith("grade"):
            grades["reason"] = f"{which} {filler_text(rng, 40)}"
        return grades
    if req.stage.startswith("grade"):  # grade-only (a cascade's sampled grades too)
        return line
    return f"{line}\n{which} {filler_text(rng, 40)}"


def _grade_choice(req: SimRequest, scores: tuple[int, int], winner: int, sure: float,
                  pair_key: tuple[str, ...]) -> ChosenValue:
    """The second grade's distribution: the grade written with the chance of the winner named, and one
    that names the other side with the rest (`pairwise_confidence: overconfident` claims 95-100 %)."""
    if req.option("pairwise_confidence", "calibrated") == "overconfident":
        sure = 0.95 + 0.0499 * stable_uniform(req.seed, "pw-overconfident", *pair_key)
    sure = min(max(sure, 0.001), 0.999)
    first, second = scores
    other = max(1, first - 1) if winner in (0, 2) else min(10, first + 1)
    if other == second:  # the first grade at an end of the scale: no grade on the other side
        return ChosenValue(r"^\d+ (\d+)", ((str(second), 1.0),))
    return ChosenValue(r"^\d+ (\d+)", ((str(second), sure), (str(other), 1 - sure)))


@register_behaviour("reviser")
def reviser(req: SimRequest) -> str:
    """The response to revise, kept as is, plus one added sentence."""
    response = _tag(req.last_user, "response")
    return f"{response} {filler_sentence(req.rng('revise'))}".strip()


@register_behaviour("judge", "reference_score")
def reference_score(req: SimRequest) -> str:
    """A 1..10 grade: from `known` markers when the response has any, else word overlap with the reference."""
    prompt = req.last_user
    response, reference = _tag(prompt, "response"), _tag(prompt, "reference")
    markers = list(claim_markers(response).values())
    if markers:
        share = markers.count("known") / len(markers)
    else:
        words_r, words_ref = set(response.lower().split()), set(reference.lower().split())
        share = len(words_r & words_ref) / max(1, len(words_r | words_ref))
    score = 1 + round(share * 9)
    return f"{score}\nThe response matches the reference on {share:.0%} of its content. {filler_sentence(req.rng('ref'))}"


@register_behaviour("geval", "steps")
def geval_steps(req: SimRequest) -> str:
    rng = req.rng("steps")
    return "\n".join(f"{i}. {filler_sentence(rng)}" for i in range(1, 5))


@register_behaviour("geval", "exam_unit")
def geval_unit(req: SimRequest) -> str:
    """Agreement 1..5 of the answer with the listed unit: known 5, wrong 1, not addressed 3; an answer that
    declines about it (the `declined` marker) 0, the form's category beside the scale, never jittered."""
    prompt = req.last_user
    units = UNIT_RE.findall(prompt)
    mark = claim_markers(_tag(prompt, "response")).get(units[0]) if units else None
    if mark == "declined":
        return "0"
    score = 5 if mark == "known" else 1 if mark == "wrong" else 3
    rng = req.rng("geval-unit")
    if req.temperature > 0 and rng.random() < 0.3:
        score = min(5, max(1, score + rng.choice((-1, 1))))
    return str(score)
