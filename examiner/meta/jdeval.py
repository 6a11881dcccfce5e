"""JDEval (docs/METHODS.md section 5): the meta-judge decides the item, then which evaluator judged it better.

The rules tie the better assistant to the meta-judge's own decision: exactly one evaluator agrees with
it -> that one wins; both agree -> the better explanation wins (the meta-judge's call); neither ->
"equally good". With `rules="enforce"` (default) the match outcome follows the rules wherever they
decide, and a stated better assistant that contradicts them is only flagged; with `rules="trust"`
the stated better assistant is taken as is.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from itertools import combinations
from typing import Literal

from examiner.core.assessments import Assessment, Decision, MetaItem, MetaJudgment
from examiner.core.labels import Preference, Unscored
from examiner.llm import Gateway
from examiner.agents.meta_judge import meta_judge as mj

RulesMode = Literal["enforce", "trust"]
DRAWS_PER_ITEM = 3


def rule_outcome(meta_answer: Decision, decision_1: Decision | None, decision_2: Decision | None) -> Preference | None:
    """What the rules give for the meta-judge's answer; None when both agree (the explanation decides)."""
    first, second = decision_1 == meta_answer, decision_2 == meta_answer
    if first and second:
        return None
    if first:
        return Preference.FIRST
    if second:
        return Preference.SECOND
    return Preference.TIE


def apply_rules(meta_answer: Decision, decision_1: Decision | None, decision_2: Decision | None,
                stated: Preference, mode: RulesMode = "enforce") -> tuple[Preference, Preference | None, bool]:
    """(outcome, rule outcome, violation) for one JDEval reply whose stated better assistant is `stated`."""
    by_rule = rule_outcome(meta_answer, decision_1, decision_2)
    violation = by_rule is not None and by_rule != stated
    if by_rule is None and stated is Preference.TIE:
        violation = False  # "equally good" explanations is a legitimate call when both agree
    outcome = by_rule if (mode == "enforce" and by_rule is not None) else stated
    return outcome, by_rule, violation


def draw_pairs(item_id: str, evaluators: Sequence[str], seed: int, draws: int = DRAWS_PER_ITEM) -> list[tuple[str, str]]:
    """`draws` seeded pairs of distinct evaluators for one item, in random presentation order.

    Distinct unordered pairs are drawn without replacement while any remain (3 evaluators, 3 draws:
    every pair once), then with replacement.
    """
    names = sorted(evaluators)
    if len(names) < 2:
        return []
    rng = random.Random(int(hashlib.sha1(f"{seed}:{item_id}".encode()).hexdigest()[:16], 16))
    pool = list(combinations(names, 2))
    rng.shuffle(pool)
    chosen = [pool[i] for i in range(min(draws, len(pool)))]
    while len(chosen) < draws:
        chosen.append(pool[rng.randrange(len(pool))])
    return [(a, b) if rng.random() < 0.5 else (b, a) for a, b in chosen]


def judgment_id(method: str, item_id: str, draw: int, order: str, a: str, b: str) -> str:
    return f"{method}:{item_id}:{draw}:{order}:{a}|{b}"


async def judge_pair(gateway: Gateway, item: MetaItem, a1: Assessment, a2: Assessment, *, draw: int,
                     order: Literal["forward", "reversed"], endpoint: str | None, rules: RulesMode = "enforce",
                     max_words: int = mj.REASONING_WORDS) -> MetaJudgment:
    """One JDEval meta-judgment of (a1 as Assistant1, a2 as Assistant2)."""
    reply = await mj.jdeval(gateway, item, a1, a2, endpoint=endpoint, max_words=max_words)
    base = dict(id=judgment_id("jdeval", item.id, draw, order, a1.evaluator, a2.evaluator), method="jdeval",
                item_id=item.id, draw=draw, order=order, assistant_1=a1.evaluator, assistant_2=a2.evaluator,
                answer_reasoning=reply.answer_reasoning, assistant_reasoning=reply.assistant_reasoning)
    if reply.unscored is not None or reply.better_answer is None or reply.better_assistant is None:
        why = reply.unscored if reply.unscored is not None else Unscored("no better answer or assistant")
        return MetaJudgment(**base, better_answer=reply.better_answer, better_assistant=reply.better_assistant,
                            unscored=why, raw=why.raw)
    outcome, by_rule, violation = apply_rules(reply.better_answer, a1.decision, a2.decision,
                                              reply.better_assistant, rules)
    return MetaJudgment(**base, better_answer=reply.better_answer, better_assistant=reply.better_assistant,
                        outcome=outcome, rule_outcome=by_rule, rule_violation=violation)


def _winner(j: MetaJudgment) -> str:
    """The evaluator a judgment's outcome names ("tie" for a tie)."""
    return {Preference.FIRST: j.assistant_1, Preference.SECOND: j.assistant_2}.get(j.outcome, "tie")  # type: ignore[arg-type]


def order_consistency(judgments: Sequence[MetaJudgment]) -> dict[str, float | int | None]:
    """How often the meta-judge gives the same identity-level outcome when a pair is shown both ways."""
    by_key: dict[tuple[str, int], dict[str, MetaJudgment]] = {}
    for j in judgments:
        if j.outcome is not None:
            by_key.setdefault((j.item_id, j.draw), {})[j.order] = j
    agree = total = 0
    for pair in by_key.values():
        if "forward" in pair and "reversed" in pair:
            f, r = pair["forward"], pair["reversed"]
            winner_f = _winner(f)
            winner_r = _winner(r)
            total += 1
            agree += winner_f == winner_r
    return {"pairs_both_orders": total, "agreeing": agree, "consistency": (agree / total) if total else None}
