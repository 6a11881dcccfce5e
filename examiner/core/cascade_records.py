"""cascade.jsonl: how a judge cascade settled each unit (examiner.judging.cascade).

One record per (answer, unit) the cascade judged, beside the verdict of the same id in verdicts.jsonl:
which tier's verdict stands, the cheap judge's label and confidence, and for the calibration sample the
strong judge's label too. The calibration records are what every later threshold is computed from, so a
resumed run finds the same thresholds; the report reads the tier shares and the measured agreement here.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

CASCADE = "cascade.jsonl"

ConfidenceSource = Literal["logprobs", "samples"]
"""How the cheap judge's confidence was read: the probability its greedy reply gave the label, or the
share of sampled replies that agree (examiner.judging.cascade)."""


class CascadeRecord(BaseModel):
    """One unit's passage through the cascade."""

    id: str
    """The id of its verdict in verdicts.jsonl."""
    answer_id: str
    unit_id: str
    round: int
    target: str
    tier: Literal["cheap", "strong"]
    """Whose verdict stands."""
    calibration: bool
    """Whether the answer was drawn into the calibration sample (both judges marked it)."""
    cheap_label: str | None
    """The cheap judge's majority label (None: no sample gave one)."""
    confidence: float
    """How sure the cheap judge was of its label: the label's probability, or the share of its samples
    that gave it (`confidence_source`)."""
    confidence_source: ConfidenceSource = "samples"
    """Which of the two `confidence` is (records written before log-probabilities were read: samples)."""
    strong_label: str | None = None
    """The strong judge's label where it judged the unit (calibration or escalation)."""
    threshold: float | None = None
    """The confidence threshold in force when the unit was routed; None on a calibration unit, and when no
    threshold passed yet (the cheap judge then kept nothing)."""


__all__ = ["CASCADE", "CascadeRecord", "ConfidenceSource"]
