"""Seeded defective questions of five kinds, with their truth, and the simulated roles of the question gate
(examiner/exam/gate/): the guesser that answers without the corpus and the checker that reads a question
against its units.

Option `defective_questions: {share: 0.2, kinds: [...]}` (or just a share) makes the simulated examiner
write a seeded share of its questions defective, the kind drawn among `kinds` (default: all five):
- `unanswerable`: the checker finds the units do not answer it;
- `wrong_citation`: one claimed unit does not support it (the checker says so, or quotes another unit's
  words for it, which the gate's fuzzy citation match must catch);
- `guessable`: the guesser, without any passage, answers it right;
- `near_duplicate`: a near-copy of one stock question (every such question after the first copies it);
- `wrong_language`: written in another language than the exam's (German, or French for a German exam).
The draw is fixed by the seed, the question's target unit ids and the gate's attempt (hint `gate_attempt`,
1 for the gate's rewrite), so `defect_of` tells any caller the truth. `gate_noise` flips each of the
checker's three judgments (answerable, a unit's support, the guess being right) with that probability.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from examiner.simulator.behaviours import (
    Completion,
    SimRequest,
    claim_markers,
    fence_content,
    ref_ids,
    register_behaviour,
    unit_texts,
)
from examiner.simulator.degenerate import degenerate_question
from examiner.simulator.prose import filler_text, stable_int, stable_uniform
from examiner.simulator.question_language import exam_language, question_in

DEFECT_KINDS = ("unanswerable", "wrong_citation", "guessable", "near_duplicate", "wrong_language")
STOCK_QUESTION = ("Which {adj} factor explains the gradual change the text describes, and how did it shape "
                  "the outcome that followed{end}")
"""The near-duplicates' one question, a word or two changed per copy (all-MiniLM-L6-v2 cosine 0.967-1.0)."""
_ADJ = ("main", "key", "major")
_END = ("?", " later?")


def defect_settings(options: Mapping[str, Any]) -> tuple[float, tuple[str, ...]]:
    """The `defective_questions` option as (share, kinds)."""
    option: Any = options.get("defective_questions") or 0
    if isinstance(option, Mapping):
        kinds = tuple(option.get("kinds") or DEFECT_KINDS)
        unknown = set(kinds) - set(DEFECT_KINDS)
        if unknown:
            raise ValueError(f"defective_questions: unknown kinds {sorted(unknown)}; known: {', '.join(DEFECT_KINDS)}")
        return float(option.get("share", 0.2)), kinds
    return float(option), DEFECT_KINDS


def defect_of(seed: int, options: Mapping[str, Any], unit_ids: Sequence[str], attempt: int = 0) -> str | None:
    """The defect the simulated examiner gives the question targeting `unit_ids` (None: a sound question)."""
    share, kinds = defect_settings(options)
    if share <= 0 or not unit_ids or not kinds:
        return None
    key = (seed, "defect", attempt, *sorted(unit_ids))
    if stable_uniform(*key) >= share:
        return None
    return kinds[stable_int(*key, "kind") % len(kinds)]


def _attempt(req: SimRequest) -> int:
    return int(req.hint("gate_attempt", 0) or 0)


@register_behaviour("examiner", "question")
def defective_question(req: SimRequest) -> Completion:
    """The ordinary (or degenerate) question; a seeded share rewritten as a near-copy or in another language
    (the other kinds keep the text: their defect is in what the checker and guesser find)."""
    ordinary = degenerate_question(req)
    if not isinstance(ordinary, dict):
        return ordinary
    ids = ref_ids(str(ordinary["question"]))
    kind = defect_of(req.seed, req.options, ids, _attempt(req))
    rng = req.rng("defect")
    if kind == "near_duplicate":
        text = STOCK_QUESTION.format(adj=rng.choice(_ADJ), end=rng.choice(_END))
    elif kind == "wrong_language":
        text = question_in("French" if exam_language(req.messages) == "German" else "German", rng)
    else:
        return ordinary
    return {"question": f"{text} [ref:{','.join(ids)}]", "target": ordinary["target"]}


@register_behaviour("examiner", "question_gate")
def gate_guess(req: SimRequest) -> Completion:
    """The guesser: knows nothing of the corpus, except that a `guessable` question's answer is common
    knowledge (its answer then carries `ID:known` markers for every targeted unit)."""
    question = fence_content(req.last_user, "exam_question") or req.last_user
    ids = ref_ids(question)
    rng = req.rng("guess")
    if defect_of(req.seed, req.options, ids, _attempt(req)) == "guessable":
        return " ".join(f"{filler_text(rng, 12)} ({uid}:known)." for uid in ids)
    return f"I cannot tell without the source; a guess: {filler_text(rng, 20)}"


def _flip(req: SimRequest, value: bool, *salt: object) -> bool:
    noise = float(req.option("gate_noise", 0.0))
    return (not value) if noise > 0 and stable_uniform(req.seed, "gate_noise", req.prompt_key, *salt) < noise else value


@register_behaviour("judge", "question_gate")
def gate_check(req: SimRequest) -> Completion:
    """The checker: reads the question's targets from its `[ref:...]` marker and its defect from
    `defect_of`; quotes the first words of each supporting unit."""
    prompt = req.last_user
    question = fence_content(prompt, "exam_question") or ""
    ids = ref_ids(question)
    kind = defect_of(req.seed, req.options, ids, _attempt(req))
    aliases = {str(uid): name for name, uid in dict(req.hint("aliases", {})).items()}
    texts = unit_texts(prompt)
    names = [aliases.get(uid, uid) for uid in ids]
    wrong = names[stable_int(req.seed, "wrong_unit", *ids) % len(names)] if kind == "wrong_citation" and names else None
    support = []
    for name in names:
        quote = " ".join(texts.get(name, "").split()[:12])
        supported = True
        if name == wrong:
            others = [t for n, t in texts.items() if n != name and t.strip()]
            if others and stable_uniform(req.seed, "wrong_quote", *ids) < 0.5:
                quote = " ".join(others[0].split()[:12])  # a quote from another unit, claimed as support
            else:
                supported, quote = False, ""
        support.append({"unit": name, "supported": _flip(req, supported, "support", name), "quote": quote})
    guess = fence_content(prompt, "exam_answer") or ""
    known = [uid for uid, mark in claim_markers(guess).items() if mark == "known" and uid in ids]
    answerable = _flip(req, kind != "unanswerable", "answerable")
    guess_correct = _flip(req, bool(ids) and len(known) * 2 >= len(ids), "guess")
    reason = "" if answerable else "the units do not say what the question asks"
    return {"answerable": answerable, "support": support, "guess_correct": guess_correct, "reason": reason}


__all__ = ["DEFECT_KINDS", "STOCK_QUESTION", "defect_of", "defect_settings", "defective_question", "gate_check",
           "gate_guess"]
