"""The judging report's bias audit on simulated pairwise judges of known biases: a position-biased judge
flips under swap (the rate is the swap figures' inconsistent share, with its Wilson interval), a
length-biased judge's preference rises with the length difference (an unbiased one's interval covers 0),
a panel's kappas equal scikit-learn's, and the section reaches report.json, report.md and the terminal;
single-score judging flags a judge of the same family as a row's system."""

from __future__ import annotations

import pytest
from sklearn.metrics import cohen_kappa_score

import examiner.simulator.judging_roles  # noqa: F401 - registers the simulated pairwise judge
from examiner.core.config import EndpointSpec, Settings
from examiner.judging.bias_audit import judge_bias_audit, lengths, single_audit
from examiner.judging.dataset import Row
from examiner.judging.pairwise import PairwiseOptions, run_pairwise
from examiner.judging.sections import judge_report, markdown
from examiner.llm.gateway import Gateway
from examiner.reporting.bias_render import bias_line

PAIRS = 80


def _rows() -> list[Row]:
    """Pairs whose responses differ in length by -60..+60 words, the longer one first about half the time."""
    rows = []
    for i in range(PAIRS):
        short, long = 5 + i % 7, 5 + i % 7 + (i * 37) % 60
        a = " ".join(["alpha"] * short) + f" item {i}."
        b = " ".join(["beta"] * long) + f" item {i}."
        rows.append(Row(line=i + 1, id=f"p{i}", instruction=f"Describe item {i}.",
                        output_1=a if i % 2 else b, output_2=b if i % 2 else a))
    return rows


async def _judge(options: dict[str, float], panel: dict[str, dict[str, float]] | None = None) -> list[dict]:
    specs = {"judge": options} if panel is None else panel
    settings = Settings(endpoints={name: EndpointSpec(provider="simulated", model=name, max_concurrency=16,
                                                      options=opts) for name, opts in specs.items()})
    async with Gateway(settings) as gw:
        return await run_pairwise(gw, _rows(), PairwiseOptions(swap=True, grade_only=True, endpoint="judge"
                                                               if panel is None else None),
                                  panel={n: n for n in panel} if panel else None)


async def test_a_position_biased_judge_flips_and_a_fair_one_does_not() -> None:
    biased = judge_report("pairwise", await _judge({"pairwise_position_bias": 0.5}), [], {"judge": "judge"})
    audit = biased.bias_audit
    swap = biased.pairwise.swap
    assert audit is not None and swap is not None and audit.position.measured
    assert audit.position.flips == swap.n_inconsistent > 0 and audit.position.pairs == swap.n_pairs_both_orders
    assert audit.position.rate == pytest.approx(1 - swap.consistency)
    assert audit.position.low < audit.position.rate < audit.position.high and audit.position.flagged
    fair = judge_bias_audit(await _judge({}), {"judge": "judge"}, pairwise=True)
    assert fair["position"]["flips"] == 0 and not fair["position"]["flagged"]


async def test_a_length_biased_judge_has_a_slope_and_a_fair_one_covers_zero() -> None:
    biased = judge_bias_audit(await _judge({"pairwise_length_bias": 0.8}), {}, pairwise=True)["length"]
    assert biased["measured"] and biased["flagged"] and biased["low"] > 0
    assert biased["groups"] == PAIRS  # both orders of a pair are one cluster
    fair = judge_bias_audit(await _judge({}), {}, pairwise=True)["length"]
    assert fair["low"] <= 0 <= fair["high"] and not fair["flagged"]


async def test_panel_kappas_and_the_section_in_every_rendering() -> None:
    records = await _judge({}, panel={"a": {"pairwise_accuracy": 0.9}, "b": {"pairwise_accuracy": 0.7},
                                      "c": {"pairwise_accuracy": 0.5, "seed": 3}})
    report = judge_report("pairwise", records, [], {"judge": "panel of a, b, c"})
    panel = report.bias_audit.panel
    assert panel.measured and panel.members == ["a", "b", "c"]
    for pair in panel.pairs:
        own = [(r["panel"][pair.a]["verdict"], r["panel"][pair.b]["verdict"]) for r in records
               if r["panel"][pair.a]["verdict"] is not None and r["panel"][pair.b]["verdict"] is not None]
        assert pair.n == len(own)
        assert pair.kappa == pytest.approx(cohen_kappa_score([x for x, _ in own], [y for _, y in own]))
    assert report.bias_audit.self_preference.reason == "the pairs name no model per response"
    text = markdown(report)
    assert "## Judge bias audit" in text and "Self-preference: not measured: the pairs name no model" in text
    assert "| a | b |" in text
    line = bias_line(report.bias_audit)
    assert line is not None and "panel Fleiss kappa" in line


async def test_without_swap_or_lengths_the_items_say_not_measured() -> None:
    records = [dict(r, order="original") for r in await _judge({}) if r["order"] == "original"]
    audit = judge_bias_audit(records, {}, pairwise=True)
    assert audit["position"] == {"measured": False,
                                 "reason": "no pair was judged in both orders (examiner judge --swap judges both)"}
    imported = [{k: v for k, v in r.items() if not k.startswith("length")} for r in records]
    assert judge_bias_audit(imported, {}, pairwise=True)["length"]["measured"] is False
    assert audit["panel"]["measured"] is False


def test_single_scores_flag_a_judge_of_a_rows_family() -> None:
    records = [{"id": f"r{i}", "score": 4.0 if i % 2 else 3.0, "group": f"g{i // 4}",
                "system": "gpt-4o-mini" if i % 2 else "llama-3.1-8b", **lengths("word " * (5 + i))} for i in range(40)]
    audit = single_audit(records, {"judge": "gpt-4o"})
    item = audit["self_preference"]
    assert item["flagged"] and [m["target"] for m in item["matches"]] == ["gpt-4o-mini"]
    assert item["gaps"][0]["gap"] == pytest.approx(1.0)
    assert audit["length"]["measured"] and audit["position"]["measured"] is False
    assert single_audit(records, {"judge": "panel of x, y"})["self_preference"]["measured"] is False
