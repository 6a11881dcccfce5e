"""Simulated evaluators, meta-judge, referee and debaters for the simulated backend (tests, experiments).

Importing the simulator package registers these behaviours with every simulated server.

Known ground truth makes the meta-evaluation checkable:
- evaluator (role `evaluator`): right with probability `accuracy` against the gold label registered
  through POST /sim/oracle (key: MetaItem.oracle_key()). accuracy = option `accuracy` (a number, or a
  mapping model name -> number), else `acc0.8` in the model name, else 0.7. Verdict items (exam
  triples) take their gold from the answer's claim markers. Each explanation carries `[detail:x]`, a
  hidden explanation quality that grows with accuracy.
- meta-judge (role `meta_judge`): its own decision on an item is right with probability `reliability`
  (option, or `rel0.9` in the model name, default 0.9), then it follows the JDEval rules; when both
  evaluators agree with it, it prefers the higher `[detail]` with the same reliability (a draw that
  depends on presentation order, so showing a pair both ways reveals some inconsistency).
  As referee it asks `referee_questions` questions (option; default a seeded 0-2 per debate) and then
  decides; the last round (hints `round`, `max_rounds`) always gets a verdict. Option `meta_garbage`
  (0-1) makes that share of its replies unreadable.
- debaters (role `debater`): defend their decision (hints `side`, `decision`) in about 40-120 words,
  within the word limit (hint `max_words`).
Items and assessments are read from the tagged blocks of prompting/meta_blocks.py, never from wording.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from examiner.simulator import SimRequest, claim_markers, register_behaviour
from examiner.simulator.behaviours import UNIT_RE, unescape
from examiner.simulator.prose import (
    filler_sentence,
    filler_text,
    stable_int,
    stable_uniform,
)
from examiner.core.assessments import oracle_key
from examiner.core.labels import Preference, Verdict, preference_to_answer

_TAG = {name: re.compile(rf"<{name}>\n(.*?)\n</{name}>", re.DOTALL)
        for name in ("instruction", "output_1", "output_2", "task", "text", "question", "answer", "reference")}
PAIRWISE_LABELS = tuple(preference_to_answer(p) for p in Preference)
VERDICT_LABELS = tuple(str(v) for v in Verdict)
"""The decisions as prompts spell them (the simulated evaluators read and answer in these)."""
_ASSISTANT = re.compile(r"<assistant(?:_(\d))?>\n(.*?)\n</assistant(?:_\d)?>", re.DOTALL)
_DECISION = re.compile(r"^Decision: (.+)$", re.MULTILINE)
_SCORE = re.compile(r"^Score: ([0-9.]+)$", re.MULTILINE)
_DETAIL = re.compile(r"\[detail:([0-9.]+)\]")
_CRITERIA = (
    "decision matches what the instruction requires",
    "explanation names the decisive difference",
    "explanation is factually accurate",
    "explanation is free of length or position bias",
    "reasoning is specific to this task",
    "explanation is concise and clear",
)


def _tag(text: str, name: str) -> str | None:
    m = _TAG[name].search(text)
    return unescape(m.group(1)) if m else None


def _number_from(req: SimRequest, option: str, prefix: str, default: float) -> float:
    value = req.options.get(option)
    if isinstance(value, Mapping):
        value = value.get(req.model)
    if value is not None:
        return float(value)
    m = re.search(rf"{prefix}[-_]?(\d*\.?\d+)", req.model)
    return float(m.group(1)) if m else default


def _item(text: str) -> dict[str, Any]:
    """Kind, oracle key and the parts of the item block in a prompt."""
    if _tag(text, "output_1") is not None:
        parts = {k: _tag(text, k) or "" for k in ("instruction", "output_1", "output_2")}
        return {"kind": "pairwise", "key": oracle_key("pairwise", parts["instruction"], parts["output_1"],
                                                      parts["output_2"], ""), **parts}
    if _tag(text, "question") is not None and _tag(text, "reference") is not None:
        q, a = _tag(text, "question") or "", _tag(text, "answer") or ""
        return {"kind": "verdict", "key": oracle_key("verdict", q, "", "", a), "answer": a,
                "reference": _tag(text, "reference") or ""}
    t = _tag(text, "text") or ""
    return {"kind": "individual", "key": oracle_key("individual", "", "", "", t), "text": t}


def _gold(req: SimRequest, item: dict[str, Any]) -> Any:
    """Gold label / score: the oracle's, the claim markers' (verdict items), else a seeded stand-in."""
    if item["kind"] == "verdict":
        ids = UNIT_RE.findall(item["reference"])
        mark = claim_markers(item["answer"]).get(ids[0]) if ids else None
        return "correct" if mark == "known" else "incorrect" if mark == "wrong" else "unrelated"
    value = req.oracle.get(item["key"])
    if value is not None:
        return value
    if item["kind"] == "pairwise":
        return PAIRWISE_LABELS[stable_int(req.seed, "gold", item["key"]) % 2]
    return 1 + stable_int(req.seed, "gold", item["key"]) % 5


def _other(labels: tuple[str, ...], right: str, u: float) -> str:
    """A wrong label; for pairwise gold 1/2 the other answer (ties are rare in evaluator mistakes)."""
    if labels == PAIRWISE_LABELS:
        return {"Answer1": "Answer2", "Answer2": "Answer1"}.get(right, "Answer1" if u < 0.5 else "Answer2")
    wrong = [x for x in labels if x != right]
    return wrong[int(u * len(wrong)) % len(wrong)]


def _garbage(req: SimRequest) -> bool:
    rate = float(req.option("meta_garbage", 0.0))
    return rate > 0 and stable_uniform(req.seed, "garbage", req.prompt_key) < rate


# ------------------------------------------------------------------ evaluators

@register_behaviour("evaluator")
def evaluator(req: SimRequest) -> Any:
    item = _item(req.last_user)
    acc = _number_from(req, "accuracy", "acc", 0.7)
    gold = _gold(req, item)
    u = stable_uniform(req.seed, "eval", req.model, item["key"], *req.sampling_salt)
    right = u < acc
    detail = min(0.99, max(0.01, acc + 0.4 * (stable_uniform(req.seed, "detail", req.model, item["key"]) - 0.5)))
    rng = req.rng("explain")
    explanation = f"{filler_sentence(rng)} {filler_sentence(rng)} [detail:{detail:.2f}]"
    if item["kind"] == "individual":
        g = float(gold)
        score = int(round(g)) if right else 1 + stable_int(req.seed, "score", req.model, item["key"]) % 5
        return {"explanation": explanation, "score": max(1, min(5, score))}
    labels = PAIRWISE_LABELS if item["kind"] == "pairwise" else VERDICT_LABELS
    decision = gold if right else _other(labels, str(gold), stable_uniform(req.seed, "wrong", req.model, item["key"]))
    return {"explanation": explanation, "decision": decision}


# ------------------------------------------------------------------ meta-judge

def _assistants(text: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for num, body in _ASSISTANT.findall(text):
        d = _DECISION.search(body)
        s = _SCORE.search(body)
        q = _DETAIL.search(body)
        out[num or "1"] = {"decision": unescape(d.group(1)).strip() if d else None,
                           "score": float(s.group(1)) if s else None,
                           "detail": float(q.group(1)) if q else 0.5}
    return out


def _meta_answer(req: SimRequest, item: dict[str, Any]) -> Any:
    """The meta-judge's own decision: right with probability `reliability`, fixed per item."""
    rel = _number_from(req, "reliability", "rel", 0.9)
    gold = _gold(req, item)
    u = stable_uniform(req.seed, "meta", req.model, item["key"])
    if item["kind"] == "individual":
        return float(gold) if u < rel else float(1 + stable_int(req.seed, "metascore", item["key"]) % 5)
    labels = PAIRWISE_LABELS if item["kind"] == "pairwise" else VERDICT_LABELS
    return gold if u < rel else _other(labels, str(gold), stable_uniform(req.seed, "mwrong", item["key"]))


def _item_and_answer(req: SimRequest) -> tuple[dict[str, Any], Any]:
    """The item in the prompt and the meta-judge's own decision on it (every meta-judge stage starts here)."""
    item = _item(req.last_user)
    return item, _meta_answer(req, item)


def _rules(req: SimRequest, answer: Any, a: dict[str, dict[str, Any]]) -> tuple[str, str]:
    """(better assistant, reasoning) by the JDEval rules."""
    d1, d2 = a.get("1", {}).get("decision"), a.get("2", {}).get("decision")
    if d1 == answer and d2 != answer:
        return "Assistant1", "Only Assistant1 reached the right decision."
    if d2 == answer and d1 != answer:
        return "Assistant2", "Only Assistant2 reached the right decision."
    if d1 != answer and d2 != answer:
        return "equally good", "Neither assistant reached the right decision."
    rel = _number_from(req, "reliability", "rel", 0.9)
    q1, q2 = a["1"]["detail"], a["2"]["detail"]
    better = "Assistant1" if q1 >= q2 else "Assistant2"
    if stable_uniform(req.seed, "explain-pick", req.prompt_key) >= rel:
        better = "Assistant2" if better == "Assistant1" else "Assistant1"
    return better, "Both reached the right decision; the better explanation decides."


@register_behaviour("meta_judge", "jdeval")
def meta_jdeval(req: SimRequest) -> Any:
    if _garbage(req):
        return "I think both are fine."
    _, answer = _item_and_answer(req)
    better, why = _rules(req, answer, _assistants(req.last_user))
    rng = req.rng("jd")
    return (f"<answer_reasoning>{filler_sentence(rng)}</answer_reasoning>\n<better_answer>{answer}</better_answer>\n"
            f"<assistant_reasoning>{why}</assistant_reasoning>\n<better_assistant>{better}</better_assistant>")


@register_behaviour("meta_judge", "referee")
def meta_referee(req: SimRequest) -> Any:
    if _garbage(req):
        return "Let me think about it some more."
    item, answer = _item_and_answer(req)
    rnd, cap = int(req.hint("round", 1)), int(req.hint("max_rounds", 5))
    a = _assistants(req.last_user)
    wanted = req.options.get("referee_questions")
    questions = int(wanted) if wanted is not None else stable_int(
        req.seed, "questions", item["key"], a.get("1", {}).get("decision"), a.get("2", {}).get("decision")) % 3
    rng = req.rng("ref")
    if rnd <= questions and rnd < cap:
        return {"reasoning": filler_sentence(rng), "action": "question",
                "question": f"Which detail of the task decides your judgment, and why? ({filler_sentence(rng)[:-1]}?)",
                "better_answer": "", "verdict": None}
    better, why = _rules(req, answer, a)
    out = {"reasoning": why, "better_answer": str(answer), "verdict": better}
    if rnd < cap:
        out["action"] = "verdict"
        out["question"] = ""
    return out


@register_behaviour("meta_judge", "jdeval_i")
def meta_jdeval_i(req: SimRequest) -> Any:
    if _garbage(req):
        return "Score: maybe four."
    item, answer = _item_and_answer(req)
    return {"own_reasoning": filler_sentence(req.rng("own")), "own_decision": str(answer),
            "assessment_reasoning": filler_sentence(req.rng("grade")), "assessment_score": _grade(req, item, answer, 0)}


def _grade(req: SimRequest, item: dict[str, Any], answer: Any, salt: object) -> int:
    """1-5 grade of the single assessment in the prompt against the meta-judge's own answer."""
    a = _assistants(req.last_user).get("1", {})
    if item["kind"] == "individual":
        if a.get("score") is None:
            return 3
        base = 5 - min(4, round(abs(float(a["score"]) - float(answer))))
    else:
        base = (4 + (a.get("detail", 0.5) > 0.6)) if a.get("decision") == answer else 1 + (a.get("detail", 0.5) > 0.6)
    rel = _number_from(req, "reliability", "rel", 0.9)
    if stable_uniform(req.seed, "grade-noise", req.prompt_key, salt) >= rel:
        base += 1 if base <= 3 else -1
    return max(1, min(5, int(base)))


@register_behaviour("meta_judge", "bsm_branch")
def meta_bsm_branch(req: SimRequest) -> Any:
    if _garbage(req):
        return "criteria: accuracy"
    cap = int(req.hint("max_branches", 5))
    k = 3 + stable_int(req.seed, "nbranch", req.prompt_key) % 3
    start = stable_int(req.seed, "branch0", req.prompt_key) % len(_CRITERIA)
    return {"criteria": [_CRITERIA[(start + i) % len(_CRITERIA)] for i in range(min(k, cap))]}


@register_behaviour("meta_judge", "bsm_solve")
def meta_bsm_solve(req: SimRequest) -> Any:
    if _garbage(req):
        return "good"
    item, answer = _item_and_answer(req)
    return {"reasoning": filler_sentence(req.rng("solve")), "score": _grade(req, item, answer, str(req.hint("criterion", "")))}


# ------------------------------------------------------------------ debaters

@register_behaviour("debater")
def debater(req: SimRequest) -> Any:
    limit = int(req.hint("max_words", 200))
    side, decision = req.hint("side", ""), req.hint("decision", None)
    stance = f"As {side} I keep my decision {str(decision).strip()}." if side and decision is not None else "I keep my judgment."
    rng = req.rng("debate")
    target = min(limit, 40 + stable_int(req.seed, "len", req.prompt_key) % 80)
    body = filler_text(rng, int(target * 1.3))
    statement = f"{stance} {body}"
    return " ".join(statement.split()[:limit])
