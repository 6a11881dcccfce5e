"""The meta-evaluation's baseline (each evaluator against the gold labels) carries its 95 % interval:
Wilson for an accuracy (statsmodels' proportion_confint), Fisher z for Pearson's r on scored items (scipy's
pearsonr confidence interval), and the ranking and gold-agreement tables show it."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from examiner.core.assessments import Assessment, MetaItem
from examiner.meta.baseline import baseline


def pair_items(n: int) -> list[MetaItem]:
    return [MetaItem(id=f"p{i}", kind="pairwise", instruction=f"Summarise fact {i}.", output_1=f"Fact {i} holds.",
                     output_2=f"Something else about {i}.", gold_label="Answer2" if i % 2 else "Answer1")
            for i in range(n)]


def test_an_accuracy_baseline_has_its_wilson_interval() -> None:
    items = pair_items(10)
    said = [Assessment(item_id=i.id, evaluator="always-first", decision="Answer1", source="imported") for i in items]
    said += [Assessment(item_id=i.id, evaluator="right", decision=i.gold_label, source="imported") for i in items]
    detail = baseline(items, said, ["always-first", "right"])["detail"]
    for name, correct in (("always-first", 5), ("right", 10)):
        row = detail[name]
        assert row["correct"] == correct and row["value"] == correct / 10
        expected = proportion_confint(correct, 10, alpha=0.05, method="wilson")
        assert (row["value_low"], row["value_high"]) == pytest.approx(expected, abs=1e-12)


def test_a_pearson_baseline_has_its_fisher_interval_and_none_below_four_items() -> None:
    rng = np.random.default_rng(1)
    gold = rng.uniform(1, 5, 20)
    scores = gold + rng.normal(0, 1, 20)
    items = [MetaItem(id=f"s{i}", kind="individual", instruction="Rate.", text=f"Summary {i}.", gold_score=float(g))
             for i, g in enumerate(gold)]
    said = [Assessment(item_id=f"s{i}", evaluator="e", score=float(s), source="imported") for i, s in enumerate(scores)]
    row = baseline(items, said, ["e"])["detail"]["e"]
    reference = sps.pearsonr(scores, gold).confidence_interval(0.95)
    assert (row["value_low"], row["value_high"]) == pytest.approx((reference.low, reference.high), abs=1e-10)
    few = baseline(items[:3], said[:3], ["e"])["detail"]["e"]
    assert "value" in few and "value_low" not in few


def test_the_ranking_table_shows_the_baseline_interval(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import asyncio

    import examiner.simulator.meta_roles  # noqa: F401
    from examiner.core.config import EndpointSpec, Settings
    from examiner.meta.pipeline import MetaConfig, run_meta
    from examiner.meta.sections import meta_report, to_markdown
    from examiner.reporting.meta_parts import ranking_table

    endpoints = {"e80": {"provider": "simulated", "model": "sim-acc0.8", "max_concurrency": 16},
                 "e50": {"provider": "simulated", "model": "sim-acc0.5", "max_concurrency": 16},
                 "meta": {"provider": "simulated", "model": "sim-rel0.9", "max_concurrency": 16}}
    settings = Settings(endpoints={k: EndpointSpec(**v) for k, v in endpoints.items()}, roles={"meta_judge": "meta"})
    run = asyncio.run(run_meta(pair_items(12), MetaConfig(evaluators=["e80", "e50"], bootstrap=20), settings,
                               tmp_path))
    report = meta_report(run)
    header, rows = ranking_table(report)
    assert header[1] == "baseline [95% CI]"
    for row in rows:
        detail = report.baseline.detail[row[0]]
        assert row[1] == f"{detail.value:.3f} [{detail.value_low:.3f}, {detail.value_high:.3f}]"
        assert row[1] in to_markdown(report)
