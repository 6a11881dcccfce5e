"""The exam report's "Judge cascade" section (docs/CASCADE.md): who settled how many units, on what
calibration, at what cost, and the promise beside what the calibration sample measured."""

from __future__ import annotations

from examiner.reporting.model.base import Figure, Section


class TierSpend(Section):
    """One tier's calls and dollars in the exam's judging (self-check left out)."""

    tier: str
    endpoint: str
    calls: int
    cost_usd: float


class CascadePlan(Section):
    """What every cascade section states first: the two judges, the promise, and how the cheap judge's
    confidence was read and calibrated."""

    cheap: str
    strong: str
    target_agreement: float
    risk: float
    calibration_share: float
    samples: int
    confidence_source: str = "samples"
    """How the cheap judge's confidence was read: `logprobs`, `samples`, or both in the order used (`auto`
    turned to samples when a reply came without log-probabilities)."""
    threshold: Figure
    """The last threshold in force (null: no threshold passed, the cheap judge kept nothing, or confidences
    were read two ways, each with its own threshold)."""
    calibration_agreement: Figure
    """The cheap judge's raw agreement with the strong judge on the whole calibration sample."""
    kept_agreement: Figure
    """Agreement on the calibration items the last threshold keeps (in-sample, so optimistic)."""


class CascadeSection(CascadePlan):
    """An exam's cascade: unit verdicts per tier, the promise beside the measurement, and the spend."""

    units: int
    """Verdicts the cascade gave (one per unit per answer)."""
    settled_cheap: int
    settled_strong: int
    """Escalated units, calibration units left out."""
    calibration_units: int
    cheap_share: Figure
    kept_agreement_low: Figure
    kept_agreement_high: Figure
    spend: list[TierSpend]
    strong_only_usd: Figure
    """What the strong judge alone would have cost: its dollars per unit judged, times every unit."""
    spend_ratio: Figure
    """Cascade judging spend over `strong_only_usd`."""


class PairCascadeSection(CascadePlan):
    """A pairwise judging run's cascade (examiner/judging/pairwise_cascade.py): rows per tier, the
    calibration sample, the promise and what the sample measured."""

    reference: str = "strong"
    """What the promise is with: `strong` (the strong judge's verdicts) or `gold` (the rows' gold labels)."""
    rows: int
    settled_cheap: int
    settled_strong: int
    calibration_rows: int
    cheap_usd: Figure = None
    """The cheap judge's dollars (its endpoint's answered calls; cache hits free)."""
    strong_usd: Figure = None
    strong_only_usd: Figure = None
    """What the strong judge alone would have cost: its dollars per row judged, times every row."""
    spend_ratio: Figure = None
    """(cheap + strong dollars) over `strong_only_usd`."""
