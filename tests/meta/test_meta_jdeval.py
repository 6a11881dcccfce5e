"""JDEval: the rules, pair draws, tagged replies, and unreadable meta-judgments left out (never ties)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import examiner.simulator.meta_roles  # noqa: F401 - simulated evaluators / meta-judge
from examiner.core.config import EndpointSpec, Settings
from examiner.meta.jdeval import (
    apply_rules,
    draw_pairs,
    order_consistency,
    rule_outcome,
)
from examiner.core.assessments import MetaItem, MetaJudgment, decision_from_text
from examiner.core.labels import Preference
from examiner.meta.pipeline import MetaConfig, run_meta
from examiner.agents.prompting.meta_blocks import JDEVAL_TAGS, match_assistant, match_label, read_tags


def sim_settings(meta_options: dict | None = None) -> Settings:
    eps = {n: EndpointSpec(provider="simulated", model=f"sim-acc{a}", max_concurrency=16)
           for n, a in (("e80", 0.8), ("e65", 0.65), ("e50", 0.5))}
    eps["meta"] = EndpointSpec(provider="simulated", model="sim-rel0.9", max_concurrency=16, options=meta_options or {})
    return Settings(endpoints=eps, roles={"meta_judge": "meta"}, cache=True)


def pair_items(n: int) -> list[MetaItem]:
    return [MetaItem(id=f"p{i}", kind="pairwise", instruction=f"Name a prime number above {i * 7}.",
                     output_1=f"{i * 7 + 1} is one option.", output_2=f"Consider the number {i * 7 + 3}.",
                     gold_label="Answer1" if i % 3 else "Answer2") for i in range(n)]


# ------------------------------------------------------------------ rules

A_WINS, B_WINS, TIE = Preference.FIRST, Preference.SECOND, Preference.TIE
ANSWER1, ANSWER2 = Preference.FIRST, Preference.SECOND

@pytest.mark.parametrize("meta, d1, d2, expected", [
    (ANSWER1, ANSWER1, ANSWER2, A_WINS),   # only the first agrees -> it wins
    (ANSWER1, ANSWER2, ANSWER1, B_WINS),   # only the second agrees
    (ANSWER2, ANSWER1, ANSWER1, TIE),      # neither -> equally good
    (TIE, TIE, ANSWER1, A_WINS),           # a tie is a decision like any other
    (ANSWER1, ANSWER1, ANSWER1, None),     # both agree -> the explanation decides
    (ANSWER1, None, ANSWER1, B_WINS),      # a missing decision never agrees
])
def test_rule_outcome(meta, d1, d2, expected):
    assert rule_outcome(meta, d1, d2) == expected


def test_apply_rules_enforce_overrides_and_flags_violation():
    outcome, by_rule, violation = apply_rules(ANSWER1, ANSWER1, ANSWER2, B_WINS, "enforce")
    assert (outcome, by_rule, violation) == (A_WINS, A_WINS, True)
    outcome, _, violation = apply_rules(ANSWER1, ANSWER1, ANSWER2, B_WINS, "trust")
    assert (outcome, violation) == (B_WINS, True)
    # both agree: the stated better explanation decides, and no rule is broken
    assert apply_rules(ANSWER2, ANSWER2, ANSWER2, B_WINS) == (B_WINS, None, False)
    assert apply_rules(ANSWER2, ANSWER2, ANSWER2, TIE) == (TIE, None, False)
    # neither agrees: equally good, whatever was stated
    assert apply_rules(TIE, ANSWER1, ANSWER2, A_WINS)[0] is TIE


def test_decisions_read_from_every_spelling_records_have_used():
    assert decision_from_text("Answer1") is ANSWER1 and decision_from_text("tie") is TIE
    assert decision_from_text("correct").value == "correct"
    judgment = MetaJudgment(id="j", method="jdeval", item_id="i", draw=0, assistant_1="x", assistant_2="y",
                            better_assistant="equally good", outcome="b", better_answer="Answer2")
    assert (judgment.better_assistant, judgment.outcome, judgment.better_answer) == (TIE, B_WINS, ANSWER2)
    assert MetaJudgment.model_validate_json(judgment.model_dump_json()) == judgment
    with pytest.raises(ValueError):
        MetaJudgment(id="j", method="jdeval", item_id="i", draw=0, assistant_1="x", assistant_2="y", outcome="maybe")


def test_draw_pairs_seeded_distinct_and_complete():
    evs = ["a", "b", "c"]
    first = draw_pairs("item-1", evs, seed=3)
    assert first == draw_pairs("item-1", evs, seed=3)
    assert len(first) == 3
    assert {frozenset(p) for p in first} == {frozenset(p) for p in (("a", "b"), ("a", "c"), ("b", "c"))}
    assert all(x != y for x, y in first)
    # presentation order varies across items
    orders = {tuple(draw_pairs(f"item-{i}", evs, seed=3)) for i in range(20)}
    assert len(orders) > 1
    # two evaluators: the one pair, three times
    assert {frozenset(p) for p in draw_pairs("x", ["a", "b"], 0)} == {frozenset(("a", "b"))}
    assert draw_pairs("x", ["a"], 0) == []


def test_tagged_reply_parsing():
    text = ("<answer_reasoning>Output 1 follows the instruction.</answer_reasoning>\n<better_answer> answer 1 "
            "</better_answer><assistant_reasoning>Only Assistant1 agrees.</assistant_reasoning>\n"
            "<better_assistant>Assistant1")  # last tag left open, as small models do
    tags = read_tags(text, JDEVAL_TAGS)
    assert tags is not None and tags["better_assistant"] == "Assistant1"
    assert match_label(tags["better_answer"], tuple(Preference)) is ANSWER1
    assert read_tags("<better_answer>Answer1</better_answer>", JDEVAL_TAGS) is None
    assert match_assistant("Equally good.") is TIE and match_assistant(tags["better_assistant"]) is A_WINS
    assert match_assistant("Assistant1 or Assistant2") is None
    assert match_label("Answer1 and Answer2", tuple(Preference)) is None


def test_order_consistency_counts_identity_level_agreement():
    def j(order, a1, a2, outcome, draw=0):
        return MetaJudgment(id=f"{order}{draw}", method="jdeval", item_id="i", draw=draw, order=order,
                            assistant_1=a1, assistant_2=a2, outcome=outcome)
    js = [j("forward", "x", "y", A_WINS), j("reversed", "y", "x", B_WINS),            # x both times: agree
          j("forward", "x", "y", A_WINS, 1), j("reversed", "y", "x", A_WINS, 1)]      # x then y: disagree
    assert order_consistency(js) == {"pairs_both_orders": 2, "agreeing": 1, "consistency": 0.5}


# ------------------------------------------------------------------ end to end on the simulated server

def test_jdeval_simulated_reproduces_accuracy_order(tmp_path: Path):
    items = pair_items(60)
    run = asyncio.run(run_meta(items, MetaConfig(evaluators=["e80", "e65", "e50"], both_orders=True, bootstrap=200),
                               sim_settings(), tmp_path))
    assert run.counts["usable"] == run.counts["planned"] == 60 * 3 * 2
    assert run.counts["rule_violations"] == 0
    assert 0 < run.counts["order_consistency"]["consistency"] <= 1
    assert run.rankings["elo"]["ratings"][0]["player"] == "e80"
    assert run.rankings["agreement"]["elo"]["top1_match"]


def test_unparseable_meta_judgments_are_counted_and_excluded(tmp_path: Path):
    items = pair_items(8)
    run = asyncio.run(run_meta(items, MetaConfig(evaluators=["e80", "e50"], bootstrap=50),
                               sim_settings({"meta_garbage": 1.0}), tmp_path))
    assert run.counts["planned"] == 24
    assert run.counts["unparseable"] == 24 and run.counts["usable"] == 0
    assert all(j.outcome is None for j in run.judgments)
    assert run.rankings["matches"] == 0 and "win_rates" not in run.rankings  # nothing became a tie
    assert any("could not be read" in p for p in run.problems)


def test_partly_unparseable_keeps_the_rest(tmp_path: Path):
    items = pair_items(20)
    run = asyncio.run(run_meta(items, MetaConfig(evaluators=["e80", "e65", "e50"], bootstrap=50),
                               sim_settings({"meta_garbage": 0.3}), tmp_path))
    bad = run.counts["unparseable"]
    assert 0 < bad < run.counts["planned"]
    assert run.rankings["matches"] == run.counts["planned"] - bad
    ties = run.rankings["win_rates"]["ties"]
    assert sum(map(sum, ties)) // 2 == run.counts["outcomes"].get("tie", 0)
