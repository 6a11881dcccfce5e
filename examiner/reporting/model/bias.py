"""The judge bias audit section (`bias_audit`), the same in exam, judging and meta-evaluation reports.

Four items, each `measured` or not (then `reason` says why: no swap run, one judge, too few answers; a
figure is never made up): the position flip rate under swap, the slope of verdicts on answer length, the
judge's self-preference (same model or family as a target), and a panel's pairwise agreement. The figures
are examiner.stats.bias's; docs/STATISTICS.md ("Judge bias audit") defines them and their flags.
"""

from __future__ import annotations

from pydantic import Field

from examiner.reporting.model.base import Figure, Section


class BiasItem(Section):
    """What every item has: whether it was measured, why not, and a note on how to read it."""

    measured: bool
    reason: str | None = None
    """Why the item was not measured (null when it was)."""
    note: str | None = None


class FlipRateItem(BiasItem):
    """Pairs judged in both orders whose winner changed with the order, with a 95 % Wilson interval."""

    pairs: int | None = None
    flips: int | None = None
    rate: Figure = None
    low: Figure = None
    high: Figure = None
    flagged: bool | None = None
    """The whole interval lies above the flag threshold (examiner.stats.bias.FLIP_FLAG)."""


class LengthSlopeItem(BiasItem):
    """Change of the verdict per `per` tokens of answer, with a 95 % cluster-robust interval."""

    outcome: str | None = None
    """What was regressed on length (e.g. `correct = 1, incorrect = 0`)."""
    length: str | None = None
    """How length was counted (e.g. `answer tokens (cl100k_base)`)."""
    per: int | None = None
    n: int | None = None
    groups: int | None = None
    slope: Figure = None
    low: Figure = None
    high: Figure = None
    p_value: Figure = None
    flagged: bool | None = None
    """The interval excludes 0: a detectable length effect."""
    method: str | None = None


class SelfMatch(Section):
    """A judge and a judged model that are the same model or of the same family."""

    judge: str
    judge_model: str
    target: str
    target_model: str
    match: str
    """`same model` or `same family`."""


class SelfGap(Section):
    """A judge's mean verdict on its own model's or family's answers minus on the others', with a
    cluster-bootstrap interval."""

    judge: str
    n_self: int
    n_other: int
    self_mean: Figure
    other_mean: Figure
    gap: Figure
    low: Figure
    high: Figure
    groups: int
    flagged: bool
    method: str | None = None


class SelfPreferenceItem(BiasItem):
    """Judge and judged model the same model or family (flagged), and the judge's gap where it can be had."""

    flagged: bool | None = None
    judges: dict[str, str] = Field(default_factory=dict)
    """The judges compared: endpoint -> the model name matched (empty in reports written before it)."""
    matches: list[SelfMatch] = Field(default_factory=list)
    gaps: list[SelfGap] = Field(default_factory=list)
    gap_reason: str | None = None
    """Why no gap was measured (e.g. every target is the judge's own family)."""


class KappaPair(Section):
    """Two panel members on the units both labelled: raw agreement, Cohen's kappa and its interval."""

    a: str
    b: str
    n: int
    agreement: Figure
    kappa: Figure
    low: Figure
    high: Figure
    method: str | None = None


class PanelItem(BiasItem):
    """A judge panel's pairwise Cohen's kappas and Fleiss' kappa over the units every member labelled."""

    members: list[str] = Field(default_factory=list)
    pairs: list[KappaPair] = Field(default_factory=list)
    fleiss_n: int | None = None
    fleiss_kappa: Figure = None


class BiasAudit(Section):
    """The judge bias audit: each item measured, or not with its reason."""

    position: FlipRateItem
    length: LengthSlopeItem
    self_preference: SelfPreferenceItem
    panel: PanelItem


__all__ = ["BiasAudit", "BiasItem", "FlipRateItem", "KappaPair", "LengthSlopeItem", "PanelItem", "SelfGap",
           "SelfMatch", "SelfPreferenceItem"]
