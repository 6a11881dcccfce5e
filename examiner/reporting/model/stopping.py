"""The exam report's "Stopping rule" section: a `--stop-when` run's rule, stop point, each target's
anytime-valid sequence over the clusters asked, and what stopping saved against the full exam."""

from __future__ import annotations

from examiner.reporting.model.base import Figure, Section


class SequencePath(Section):
    """One quantity's sequence: after each cluster asked, the estimate and the anytime-valid interval."""

    estimate: list[Figure]
    lower: list[float]
    upper: list[float]


class StoppingTarget(Section):
    """A target's sequences over round 1's clusters (absent before its first cluster)."""

    clusters_total: int
    accuracy: SequencePath | None = None
    """Accuracy, correct / (correct + incorrect)."""
    coverage: SequencePath | None = None
    """Coverage, (correct + incorrect) / units."""


class StoppingDifference(SequencePath):
    """`decided:M`: the paired sequence of NEW's accuracy minus BASE's (units both answered right or
    wrong) and what it decided against the margin."""

    base: str
    new: str
    margin: float
    outcome: str
    """"not worse", "equivalent" (within ±margin), "worse" or "undecided" (examiner.stats.sequential)."""


class StoppingSection(Section):
    """`--stop-when` (examiner/exam/stopping.py, docs/METHODS.md): round 1's clusters asked in a seeded
    random order until every target's anytime-valid accuracy interval met the rule."""

    rule: str
    alpha: float
    population: str
    """What the sequences cover (round 1's clusters)."""
    ordering: str
    """How clusters were ordered (seeded uniform random)."""
    clusters_total: int
    clusters_asked: int
    """Clusters in the sequence: those asked, in order (clusters in flight at the stop finished and count)."""
    stopped_at: int | None
    """Clusters asked when the rule was first met for every target (null: never met)."""
    met: bool
    calls: int
    """Calls the exam's clusters took (self-check left out)."""
    cost_usd: float
    saved_calls: Figure
    """Estimated calls the full exam's remaining clusters would have taken: calls per cluster asked times
    clusters not asked (null when none was asked)."""
    saved_usd: Figure
    """The same in dollars."""
    targets: dict[str, StoppingTarget]
    difference: StoppingDifference | None = None
    """With `decided:M` (two targets): the paired sequence and its decision; None otherwise."""
