"""The meta-evaluation report's bias audit: flips under --both-orders equal the order-consistency figures,
a meta-judge on an evaluator's own endpoint is flagged with its gold-conditioned gap, a meta-judge that
always picks its own family's assessment has a gap of 1, and the section reaches report.json, report.md,
report.html and the terminal."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import examiner.simulator.meta_roles  # noqa: F401 - registers the simulated meta-judge
from examiner.core.assessments import MetaJudgment
from examiner.core.labels import Preference
from examiner.meta.bias_audit import _pairwise_gap
from examiner.meta.pipeline import MetaConfig, run_meta
from examiner.meta.sections import meta_report, to_html, to_markdown
from examiner.reporting.bias_render import bias_line
from tests.helpers.bias_runs import meta_pair_items as pair_items, meta_settings as settings


def test_both_orders_give_the_flip_rate_and_the_section_renders(tmp_path: Path) -> None:
    cfg = MetaConfig(evaluators=["e80", "e65", "e50"], both_orders=True, bootstrap=50)
    run = asyncio.run(run_meta(pair_items(20), cfg, settings(), tmp_path))
    oc = run.counts["order_consistency"]
    position = run.bias_audit["position"]
    assert position["measured"] and position["pairs"] == oc["pairs_both_orders"] > 0
    assert position["flips"] == oc["pairs_both_orders"] - oc["agreeing"]
    assert position["low"] <= position["rate"] <= position["high"]
    assert run.bias_audit["self_preference"]["flagged"] is False  # meta-judge `meta`, evaluators e80, e65, e50
    assert run.bias_audit["panel"] == {"measured": False, "reason": "one meta-judge, no panel"}
    report = meta_report(run)
    assert report.bias_audit is not None
    assert "## Judge bias audit" in to_markdown(report) and "Judge bias audit" in to_html(report)
    assert (bias_line(report.bias_audit) or "").startswith("judge bias: flips ")


def test_one_order_says_not_measured_and_an_own_endpoint_is_flagged(tmp_path: Path) -> None:
    cfg = MetaConfig(evaluators=["e80", "e50"], meta_judge="e80", bootstrap=50)
    run = asyncio.run(run_meta(pair_items(30), cfg, settings(), tmp_path))
    audit = run.bias_audit
    assert audit["position"]["measured"] is False and "--both-orders" in audit["position"]["reason"]
    item = audit["self_preference"]
    assert item["flagged"] and item["matches"][0]["target"] == "e80" and item["matches"][0]["match"] == "same model"
    assert item["gaps"][0]["judge"] == "e80" and item["gaps"][0]["n_self"] > 0 and item["gaps"][0]["n_other"] > 0


def _judgment(i: int, first: str, second: str, outcome: Preference) -> MetaJudgment:
    return MetaJudgment(id=f"j{i}", method="jdeval", item_id=f"p{i}", draw=0, assistant_1=first, assistant_2=second,
                        outcome=outcome)


def test_a_judge_that_always_picks_its_own_family_has_a_gap_of_one() -> None:
    judgments, right = [], {}
    for i in range(40):
        own_first = i % 2 == 0
        first, second = ("mine", "other") if own_first else ("other", "mine")
        judgments.append(_judgment(i, first, second, Preference.FIRST if own_first else Preference.SECOND))
        own_right = i % 4 < 2
        right[(f"p{i}", "mine")], right[(f"p{i}", "other")] = own_right, not own_right
    ((outcome, is_self, groups),) = _pairwise_gap("judge", {"mine"}, judgments, right).values()
    assert len(outcome) == 40 and sum(is_self) == 20
    self_acc = sum(o for o, s in zip(outcome, is_self) if s) / 20
    other_acc = sum(o for o, s in zip(outcome, is_self) if not s) / 20
    assert (self_acc, other_acc) == pytest.approx((1.0, 0.0))
