"""The comparison report (`examiner compare`): several targets side by side and where they disagree.

Built by examiner/reporting/compare.py from one or more exam runs (targets of one run, or of several
runs over the same corpus). The paired section holds, for each pair of targets examined on the same units,
what examiner.stats.paired computes (docs/STATISTICS.md section 1); its field names are those of the
library's figures, so a section is `PairedSection(a=..., b=..., **comparison.to_dict(), ...)`.
"""

from __future__ import annotations

from typing import Literal

from examiner.core.records import RunStatus
from pydantic import Field

from examiner.reporting.model.knowledge import ControlFigures, Rate
from examiner.reporting.model.base import SCHEMA_VERSION, Figure, Section
from examiner.reporting.model.exam import Estimate, UnitCounts


class ComparedTarget(Section):
    """One target of one run: its scores and its share of the run's evaluation cost per unit."""

    label: str
    """The target's name, with its run id when two runs have a target of that name."""
    target: str
    run: str
    path: str
    status: RunStatus
    accuracy: Estimate
    coverage: Estimate
    counts: UnitCounts
    evaluation_cents_per_unit: float
    """Examiner question generation + judging per unit, split evenly among the run's targets."""
    evaluation_calls_per_unit: float
    candidate_calls_per_unit: float
    health: str | None = None
    """The run's health status (the exam report's health checks, recomputed from its records: pass, warn,
    fail, ...); None: not checked."""
    health_line: str | None = None
    """The health in one line: status and the checks that warned or failed."""
    trustworthy: bool = True
    """False when the run's health failed: its figures describe a degenerate examiner or judge (UNTRUSTWORTHY)."""
    hallucination_rate: Rate | None = None
    """Incorrect among attempted units with its cluster interval (absent in reports written before it)."""
    abstention_rate: Rate | None = None
    """Abstained among covered units with its cluster interval (absent in reports written before it)."""
    controls: ControlFigures | None = None
    """How the target met the run's control questions (refusal and false-premise acceptance, each with its
    interval; controls.jsonl); None when the run asked none."""
    overrides: int = 0
    """People's overrides (the run's overrides.jsonl) applied to this target's verdicts: the accuracy,
    coverage, counts, disagreements and paired figures are those with the overrides, as in the run's report."""


class DisagreementUnit(Section):
    id: str
    text: str


class Disagreement(Section):
    """Units one target got correct and another incorrect (all counted, every one listed in report.json)."""

    correct_for: str
    incorrect_for: str
    count: int
    units: list[DisagreementUnit]


class PairedDifference(Section):
    """A difference B - A (accuracy or coverage) with its interval: t on documents - 1 df with the largest of
    the cluster-robust, independent-units and exact standard errors at every size (`small_sample`: fewer
    than 30 documents)."""

    estimate: Figure
    low: Figure
    high: Figure
    level: float
    standard_error: Figure
    method: str
    small_sample: bool
    n_units: int
    n_groups: int


class McNemarTest(Section):
    """McNemar's exact test on the units both targets covered (assumes independent units)."""

    a_only: int
    """Units A got right and B wrong."""
    b_only: int
    """Units B got right and A wrong."""
    both_covered: int
    p_value: Figure


class ClusteredTest(Section):
    """The cluster-adjusted McNemar test (Obuchowski 1998): difference / cluster-robust standard error,
    two-sided p from t on documents - 1 df."""

    statistic: Figure
    df: int
    p_value: Figure
    standard_error: Figure
    method: str


class PairedPower(Section):
    """The smallest difference the cluster test detects with `target_power`, and the power it had for the
    observed difference (post hoc power restates the p-value; the detectable effect is the one to plan with)."""

    alpha: float
    target_power: float
    minimum_detectable_effect: Figure
    achieved: Figure


class PairedSubgroup(Section):
    """B - A within one subgroup; p adjusted by Benjamini-Hochberg over the subgroups of the same `by`."""

    by: Literal["topic", "document", "question type", "language"]
    """What the subgroups are: the unit's round-1 exam cluster (topic), source document, the type of the
    question that first targeted it, or its language."""
    key: str
    """The subgroup: a topic as its cluster's key terms with the cluster id in brackets
    (`cosine, embeddings, similarity [r1-c5-351495]`), a document path, a question type or a language."""
    n_units: int
    n_documents: int
    accuracy_a: Figure
    accuracy_b: Figure
    difference: Figure
    low: Figure
    high: Figure
    test: str
    """`cluster` when the subgroup spans two or more documents, else `mcnemar exact`."""
    p_value: Figure
    p_adjusted: Figure
    significant: bool


class PairedWording(Section):
    """Which variance the pair's accuracy difference was read with: `wording-aware` when both runs measured
    the questions' wording (`--paraphrases`), with the interval widened by what the wording adds, or
    `document-clustered, blind to wording` (the interval of `accuracy_difference` alone)."""

    variance: str
    wording_variance: Figure = None
    """Unit-level wording variance of the per-unit difference B - A (null when not measured)."""
    added_variance: Figure = None
    """Added to the squared standard error of the difference (its cross-document covariance)."""
    low: Figure = None
    """The wording-aware interval (at `accuracy_difference.level`; null when blind)."""
    high: Figure = None


class PairedSection(Section):
    """Target B against target A on the units both were examined on (differences are B - A)."""

    a: str
    b: str
    n_units: int
    n_documents: int
    n_clusters: int
    top_stage: str
    """What the independent groups are: `documents`, or `clusters` when every unit comes from one document."""
    accuracy_a: Figure
    accuracy_b: Figure
    coverage_a: Figure
    coverage_b: Figure
    accuracy_difference: PairedDifference
    coverage_difference: PairedDifference
    mcnemar: McNemarTest
    clustered_test: ClusteredTest
    design_effect: Figure
    icc_difference: Figure
    """Intraclass correlation of the per-unit difference B - A within documents."""
    power: PairedPower
    small_sample: bool
    n_resamples: int
    seed: int
    false_discovery_rate: float
    subgroups: list[PairedSubgroup]
    smallest_margin: Figure = None
    """The smallest margin `examiner gate` could pass on these units at its default level (one-sided 95 %):
    how far the one-sided lower bound lies below the difference; even NEW = BASE fails a margin at or
    below it (absent in comparisons written before it)."""
    wording: PairedWording | None = None
    """Which variance the accuracy difference was read with, and the wording-aware interval when the runs
    measured the wording (absent in comparisons written before it)."""


class MetricDifference(Section):
    """`examiner compare --metric NAME`: B - A in one knowledge figure on the units both were examined on
    (examiner/reporting/knowledge_compare.py)."""

    metric: str
    """accuracy, hallucination_rate, abstention_rate, correct_given_attempted, f_score, penalised_0.5,
    penalised_0.75, penalised_0.9, ece, brier or aurc."""
    a: str
    b: str
    value_a: Figure
    value_b: Figure
    difference: PairedDifference
    lower_is_better: bool
    shared_units: int


class CompareReport(Section):
    """The comparison of the targets of one or more exam runs."""

    schema_version: int = SCHEMA_VERSION
    kind: Literal["compare"] = "compare"
    targets: list[ComparedTarget]
    disagreements: list[Disagreement]
    paired: list[PairedSection] = Field(default_factory=list)
    """Each pair of targets that share units, in the order listed (absent in reports written before it)."""
    metric_differences: list[MetricDifference] = Field(default_factory=list)
    """With `--metric`: each pair's difference in that figure (empty without it)."""
    abstention_differences: list[MetricDifference] = Field(default_factory=list)
    """Always: each pair's paired difference in the abstention rate (abstained among covered units) on the
    units both were examined on, its own figure beside accuracy's (empty in comparisons made before it)."""
