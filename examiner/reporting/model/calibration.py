"""The "Calibrated by people" sections: a judge's figure beside the one a random sample of human labels
gives (PPI++, examiner/stats/ppi.py), in the exam report (per target, from human_sample.jsonl) and the
judging report (`examiner judge-stats` on a dataset with a few gold labels)."""

from __future__ import annotations

from examiner.reporting.model.base import Figure, Section


class MeanFigure(Section):
    """A mean with its interval (examiner.stats.ppi.MeanEstimate): `n` human-labelled units behind it and
    `n_unlabelled` judge-only ones."""

    estimate: Figure
    low: Figure
    high: Figure
    level: float
    standard_error: Figure
    n: int
    n_unlabelled: int
    method: str


class LabelAgreementRow(Section):
    """Per label: sensitivity P(judge gives it | people did) and specificity, each with a Wilson interval."""

    label: str
    n_human: int
    sensitivity: Figure
    sensitivity_low: Figure
    sensitivity_high: Figure
    specificity: Figure
    specificity_low: Figure
    specificity_high: Figure


class AgreementFigures(Section):
    """The judge against people on the units both labelled: observed agreement, Cohen's kappa with its
    interval, and per-label sensitivity and specificity."""

    n: int
    observed: Figure
    kappa: Figure
    kappa_low: Figure
    kappa_high: Figure
    per_label: list[LabelAgreementRow]


class CalibratedFigure(Section):
    """One estimand (an exam target's accuracy, or a dataset's share of one label) three ways: the judge
    alone, the human sample alone, and both (PPI++); None where the sample is too small for it."""

    population: int
    """Units the judge labelled (the estimand's units)."""
    labelled: int
    """Of those, units a person labelled in the random sample."""
    judge_raw: MeanFigure
    human_only: MeanFigure | None
    ppi: MeanFigure | None
    lam: Figure
    """PPI++'s power-tuned weight of the judge (0: the human sample alone; 1: plain PPI)."""
    judge_bias: Figure
    """The judge's raw figure minus the PPI++ one."""
    agreement: AgreementFigures | None
    note: str | None
    """A plain sentence when a figure is missing (too few labels, every unit labelled)."""


class SampleDrawFacts(Section):
    """How the exam's sample was drawn (the draw record of human_sample.jsonl)."""

    draw_id: str
    method: str
    seed: int
    size: int
    population: int
    population_rule: str
    blind: bool
    who: str
    at: str
    drawn: int
    extended: int = 0
    """Of `drawn`, the units added after the draw (`examiner review --extend N`: the next of its seeded order)."""
    labelled: int
    stale: int
    """Labels of units whose deciding verdict changed since the draw (a resumed run): left out."""


class ExamCalibration(Section):
    """report.json's `calibration`: per target, accuracy calibrated by people's labels of a random sample."""

    file: str
    minimum: int
    """Fewest labelled units per target for the PPI++ figure (docs/STATISTICS.md)."""
    human_label_rule: str
    draw: SampleDrawFacts
    targets: dict[str, CalibratedFigure]
    rates: dict[str, dict[str, CalibratedFigure]] = {}
    """Per target, `abstention_rate` and `hallucination_rate` (incorrect among attempted) calibrated by the same
    sample (agreement is given once, in `targets`); empty in reports made before the rates were calibrated."""


class JudgeCalibration(Section):
    """The judging report's `calibration`: per label, the share of rows with that gold label, calibrated
    (PPI++) from the rows that have one; the judge's agreement with them."""

    estimand: str
    minimum: int
    rows: int
    """Every judged row, those without a usable verdict included."""
    unparseable: int = 0
    """Rows without a usable verdict (in `rows`: the judge's class `unparseable` on them)."""
    labelled: int
    agreement: AgreementFigures | None
    labels: dict[str, CalibratedFigure]




class ScoreCalibration(Section):
    """The judging report's single-score `calibration`: the mean human score over every scored row,
    estimated from the rows that have one (PPI++ with the judge's scores as predictions)."""

    estimand: str
    minimum: int
    rows: int
    """The scored rows: the population of the estimand."""
    unscored: int = 0
    """Judged rows without a score, outside the population (and their human scores unused)."""
    labelled: int
    judge_mean: Figure
    """The judge's mean score over every scored row (its own scale)."""
    human_only: MeanFigure | None
    ppi: MeanFigure | None
    lam: Figure
    note: str | None


__all__ = ["AgreementFigures", "CalibratedFigure", "ExamCalibration", "JudgeCalibration", "LabelAgreementRow",
           "MeanFigure", "SampleDrawFacts", "ScoreCalibration"]
