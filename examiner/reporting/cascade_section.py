"""The exam report's "Judge cascade" section from cascade.jsonl, the ledger and the run's settings.

Why here: the cascade's promise (docs/CASCADE.md) is only worth as much as its calibration sample, so the
report puts the sample's size and measured agreement beside the promised figure, and what the cascade
spent beside what the strong judge alone would have.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

from examiner.core.cascade_records import CascadeRecord
from examiner.core.rundir import RunDir
from examiner.llm.ledger import answered
from examiner.reporting.layout import pct
from examiner.reporting.model.cascade import CascadeSection, PairCascadeSection
from examiner.reporting.run_reader import RunData
from examiner.stats.cascade import min_testable
from examiner.core.stages import Stage

CHEAP_STAGE = Stage.JUDGE_CASCADE
STRONG_STAGES = ("judge", "judge_top")


def exam_cascade_section(run: RunData) -> dict[str, Any] | None:
    """The section's data, or None when the run had no cascade."""
    plan = (run.config or {}).get("judge_cascade") if isinstance(run.config, dict) else None
    records = list(RunDir(run.path).records(CascadeRecord).values())
    if not plan or not records:
        return None
    cheap, strong = plan["tiers"][0], plan["tiers"][-1]
    calibration = [r for r in records if r.calibration and r.strong_label is not None]
    routed = [r for r in records if not r.calibration]
    sources = sorted({r.confidence_source for r in records})
    last = {r.confidence_source: r.threshold for r in sorted(routed, key=lambda r: r.round)}
    agree = [r.cheap_label == r.strong_label for r in calibration]
    kept = [a for r, a in zip(calibration, agree)
            if last.get(r.confidence_source) is not None and r.confidence >= last[r.confidence_source]]
    low = high = None
    if kept:
        from statsmodels.stats.proportion import proportion_confint  # only where a cascade ran

        low, high = (float(x) for x in proportion_confint(sum(kept), len(kept), method="wilson"))
    spend = _spend(run, cheap, strong)
    strong_row = next(row for row in spend if row["tier"] == "strong")
    strong_units = len(calibration) + sum(1 for r in routed if r.tier == "strong")
    strong_only = strong_row["cost_usd"] / strong_units * len(records) if strong_units else None
    total = sum(row["cost_usd"] for row in spend)
    return {
        "cheap": cheap, "strong": strong, "target_agreement": plan.get("target_agreement", 0.9),
        "risk": plan.get("risk", 0.1), "calibration_share": plan.get("calibration_share", 0.1),
        "samples": plan.get("samples", 5), "confidence_source": ", ".join(sources), "units": len(records),
        "settled_cheap": sum(1 for r in routed if r.tier == "cheap"),
        "settled_strong": sum(1 for r in routed if r.tier == "strong"),
        "calibration_units": len(calibration),
        "cheap_share": sum(1 for r in routed if r.tier == "cheap") / len(records),
        "threshold": last.get(sources[-1]) if len(sources) == 1 else None,
        "calibration_agreement": sum(agree) / len(agree) if agree else None,
        "kept_agreement": sum(kept) / len(kept) if kept else None,
        "kept_agreement_low": low, "kept_agreement_high": high,
        "spend": spend,
        "strong_only_usd": round(strong_only, 8) if strong_only is not None else None,
        "spend_ratio": total / strong_only if strong_only else None,
    }


def _spend(run: RunData, cheap: str, strong: str) -> list[dict[str, Any]]:
    rows = []
    for tier, endpoint, stages in (("cheap", cheap, (CHEAP_STAGE,)), ("strong", strong, STRONG_STAGES)):
        calls = [r for r in answered(run.ledger) if r.stage in stages and r.endpoint == endpoint and not r.cache_hit]
        rows.append({"tier": tier, "endpoint": endpoint, "calls": len(calls),
                     "cost_usd": round(sum(r.cost_usd for r in calls), 8)})
    return rows


TITLE = "Judge cascade"
SPEND_HEADER = ["tier", "endpoint", "calls", "dollars"]
Table = Callable[[list[str], list[list[Any]]], str]


def confidence_words(source: str, samples: int, per: str) -> str:
    """How the cheap judge's confidence was read, in words."""
    read = ("the probability of each label in one greedy reply" if per == "answer"
            else "the probability of its verdict from one greedy grade line")
    ways = {"logprobs": f"its confidence {read} per {per}",
            "samples": f"its confidence the agreement of {samples} samples per {per}"}
    return "; then ".join(ways[s.strip()] for s in source.split(",") if s.strip() in ways) or ways["samples"]


def cascade_paragraphs(section: CascadeSection) -> list[str]:
    """Who settled what, the promise beside the measurement, and the spend against strong-only."""
    return [
        f"The cheap judge {section.cheap} settled {section.settled_cheap} of {section.units} unit verdicts "
        f"({pct(section.cheap_share)}); {section.strong} judged {section.settled_strong} escalated units and the "
        f"{section.calibration_units} units of the calibration sample (answers drawn at "
        f"{pct(section.calibration_share)}; {confidence_words(section.confidence_source, section.samples, 'answer')}).",
        f"Promised: {promise_words(section.strong, 'units', section.target_agreement, section.risk)} Measured on "
        "the calibration "
        f"sample: {pct(section.kept_agreement)} [{pct(section.kept_agreement_low)}, "
        f"{pct(section.kept_agreement_high)}] above the last threshold ({_num(section.threshold)}; in-sample, "
        f"so optimistic); the cheap judge's raw agreement {pct(section.calibration_agreement)}.",
        f"The strong judge alone would have cost about ${_num(section.strong_only_usd, 4)} (its dollars per unit "
        f"judged, times every unit); the cascade's judging spent {pct(section.spend_ratio)} of that."
        + (f" {why}" if (why := why_nothing_settled(section)) else ""),
    ]


def promise_words(whom: str, what: str, target: float, risk: float) -> str:
    """The cascade's promise as the rate it is (risk-controlled), and what it does not cover."""
    return (f"with probability at least {pct(1 - risk)} over the calibration draw, the cheap judge's agreement "
            f"rate with {whom} on the {what} it keeps (its expected agreement on {what} like these) is at least "
            f"{pct(target)}; the share realised on one run's kept {what} scatters around that rate and may fall "
            f"below {pct(target)} more often than {pct(risk)} (docs/CASCADE.md).")


def why_nothing_settled(section: CascadeSection) -> str | None:
    """Why the cheap judge settled no unit, and why the cascade then cost more than the strong judge alone:
    its calibration sample was smaller than the promise can be tested on (min_testable), or no confidence
    threshold passed the test on it. None when the cheap judge settled some unit."""
    if section.settled_cheap:
        return None
    floor = min_testable(section.target_agreement, section.risk)
    if section.calibration_units < floor:
        why = (f"its calibration sample held {section.calibration_units} units, and a promise of "
               f"{pct(section.target_agreement)} at risk {section.risk:g} can only be tested on at least {floor} "
               "kept units, so no confidence threshold could pass (a larger exam, a larger calibration_share, a "
               "lower --target-agreement or a higher --cascade-risk can)")
    else:
        why = (f"no confidence threshold passed the test on its {section.calibration_units} calibration units "
               f"(raw agreement with {section.strong} {pct(section.calibration_agreement)}, promise "
               f"{pct(section.target_agreement)} at risk {section.risk:g})")
    extra = (f"; the cheap judge's calls bought nothing, so the cascade spent {pct(section.spend_ratio)} of "
             "strong-only" if section.spend_ratio is not None and section.spend_ratio > 1 else "")
    return f"Why the cheap judge settled nothing: {why}; every unit went to {section.strong}{extra}."


def spend_rows(section: CascadeSection) -> list[list[Any]]:
    return [[row.tier, row.endpoint, row.calls, f"{row.cost_usd:.4f}"] for row in section.spend]


def cascade_markdown(section: CascadeSection | None, table: Table) -> list[str]:
    """Markdown lines of the section (none for a run without a cascade)."""
    if section is None:
        return []
    first, promise, spend = cascade_paragraphs(section)
    return [f"## {TITLE}", "", first, "", promise, "", table(SPEND_HEADER, spend_rows(section)), "", spend, ""]


def cascade_html(section: CascadeSection | None, table: Table) -> list[str]:
    """HTML parts of the section (none for a run without a cascade)."""
    if section is None:
        return []
    first, promise, spend = cascade_paragraphs(section)
    return [f"<h2>{TITLE}</h2>", f"<p>{escape(first)}</p>", f"<p>{escape(promise)}</p>",
            table(SPEND_HEADER, spend_rows(section)), f"<p>{escape(spend)}</p>"]


def cascade_line(section: CascadeSection | None) -> str | None:
    """One terminal line."""
    if section is None:
        return None
    return (f"judge cascade: {section.cheap} settled {pct(section.cheap_share)} of {section.units} verdicts "
            f"(confidence from {section.confidence_source}), "
            f"measured agreement {pct(section.kept_agreement)} (promised: agreement rate >= "
            f"{pct(section.target_agreement)} at risk {section.risk:g}, not the realised share), spend "
            f"{pct(section.spend_ratio)} of strong-only"
            + (f"\n  {why}" if (why := why_nothing_settled(section)) else ""))


def pair_cascade_markdown(section: PairCascadeSection) -> list[str]:
    """A pairwise judging run's cascade, in the judging report."""
    whom = "the rows' gold labels" if section.reference == "gold" else section.strong
    return [f"## {TITLE}", "",
            f"The cheap judge {section.cheap} settled {section.settled_cheap} of {section.rows} pairs; "
            f"{section.strong} judged {section.settled_strong} escalated pairs and the {section.calibration_rows} "
            f"pairs of the calibration sample (rows drawn at {pct(section.calibration_share)}; "
            f"{confidence_words(section.confidence_source, section.samples, 'ordering')}).", "",
            f"Promised: {promise_words(whom, 'pairs', section.target_agreement, section.risk)} Measured on the "
            "calibration "
            f"sample: {pct(section.kept_agreement)} above the threshold ({_num(section.threshold)}; in-sample); the "
            f"cheap judge's raw agreement {pct(section.calibration_agreement)}.", "",
            *([f"Spend: ${section.cheap_usd:.4f} on {section.cheap} and ${section.strong_usd:.4f} on {section.strong}, "
               f"{pct(section.spend_ratio)} of the strong judge alone (about ${section.strong_only_usd:.4f}: its "
               "dollars per pair judged, times every pair).", ""]
              if section.spend_ratio is not None and section.cheap_usd is not None and section.strong_usd is not None
              and section.strong_only_usd is not None else [])]


def _num(value: float | None, digits: int = 2) -> str:
    return "none passed" if value is None else f"{value:.{digits}f}"


__all__ = ["pair_cascade_markdown", "cascade_html", "cascade_line", "cascade_markdown",
           "exam_cascade_section", "why_nothing_settled"]
