"""report.json's `knowledge`: per target, what it knows, invents and declines, overall and per topic
(examiner/reporting/knowledge.py builds it; docs/STATISTICS.md, "Knowledge boundaries", says how)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from examiner.reporting.model.base import Figure, Section


class Rate(Section):
    """A share with its 95 % cluster interval (examiner.reporting.score_intervals.ratio_estimate)."""

    value: Figure
    low: Figure
    high: Figure
    num: int
    den: int
    groups: int = 0
    grouped_by: Literal["documents", "clusters"] | None = None
    method: str | None = None


class Interval(Section):
    """A knowledge figure with its 95 % cluster interval (examiner.stats.knowledge_intervals: the linearised
    ratio variance for F, the penalised scores and Brier; the delete-one-group jackknife for ECE and AURC)."""

    value: Figure
    low: Figure
    high: Figure
    standard_error: Figure = None
    groups: int = 0
    grouped_by: Literal["documents", "clusters"] | None = None
    method: str | None = None


class ReliabilityBin(Section):
    """One point of the reliability diagram: units whose stated confidence fell in one tenth of [0, 1]."""

    confidence: float
    right: float
    units: int


class KnowledgeRow(Section):
    """The figures of one group of units (a target's whole exam, or one topic of it). Units counted are
    the covered ones: correct, incorrect or abstained (asked about, and the answer took a stand)."""

    by: Literal["target", "cluster", "document", "language"]
    topic: str
    """The cluster's key terms (or its id), the document, the language; the target's name for `target`."""
    key: str
    """The cluster id, document or language code (the target's name for `target`)."""
    asked: int
    correct: int
    incorrect: int
    abstained: int
    accuracy: Rate
    """correct among the covered units (abstentions count as not right)."""
    hallucination_rate: Rate
    """incorrect among attempted (correct + incorrect)."""
    abstention_rate: Rate
    """abstained among covered."""
    correct_given_attempted: Rate
    simpleqa_f: Figure
    """Harmonic mean of accuracy and correct given attempted."""
    penalised: dict[str, Figure]
    """Confidence target t ("0.5", "0.75", "0.9") -> mean score per covered unit, an error costing t/(1-t)."""
    confidence_source: Literal["stated", "token"] | None = None
    """Which confidence the calibration figures read (None: the answers gave none)."""
    with_confidence: int = 0
    """Attempted units whose answer gave that confidence (the calibration figures' n)."""
    ece: Figure = None
    brier: Figure = None
    aurc: Figure = None
    """Area under the risk-coverage curve (lower is better)."""
    intervals: dict[str, Interval] = Field(default_factory=dict)
    """Figure name ("f_score", "penalised_0.5", "penalised_0.75", "penalised_0.9", "ece", "brier", "aurc") ->
    the figure with its cluster interval (the calibration ones only when a confidence was given)."""


class ControlFigures(Section):
    """How one target met the control questions (questions the corpus cannot answer; controls.jsonl),
    never counted in accuracy: the right answer declines or corrects the premise."""

    asked: int
    declined_or_corrected: int
    accepted_premise: int
    unlabelled: int = 0
    """Controls whose judge reply did not parse (left out of both rates)."""
    by_kind: dict[str, int] = Field(default_factory=dict)
    """false_premise / swapped_entity / out_of_corpus -> controls asked."""
    refusal_rate: Rate
    """declined_or_corrected among labelled controls (near 1 is right; with an abstention rate near 1 on
    ordinary questions too, the target refuses everything)."""
    false_premise_acceptance: Rate
    """accepted_premise among labelled controls: the target answered as if the unsupported premise held."""


class TargetKnowledge(Section):
    """One target: its overall row, the rows per topic (the most hallucinating first, at most TOPIC_ROWS per
    grouping) and the reliability diagram's points."""

    overall: KnowledgeRow
    topics: list[KnowledgeRow] = Field(default_factory=list)
    topics_total: dict[str, int] = Field(default_factory=dict)
    """Grouping -> topics with covered units (the rows kept are the most hallucinating of them)."""
    reliability: list[ReliabilityBin] = Field(default_factory=list)
    controls: ControlFigures | None = None
    """The control questions' figures (None: the run asked none, `exam.control_share` 0)."""


__all__ = ["ControlFigures", "Interval", "KnowledgeRow", "Rate", "ReliabilityBin", "TargetKnowledge"]
