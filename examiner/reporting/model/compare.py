"""The comparison report (`examiner compare`): several targets side by side and where they disagree.

Built by examiner/reporting/compare.py from one or more exam runs (targets of one run, or of several
runs over the same corpus).
"""

from __future__ import annotations

from typing import Literal

from examiner.core.records import RunStatus
from examiner.reporting.model.base import SCHEMA_VERSION, Section
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


class DisagreementUnit(Section):
    id: str
    text: str


class Disagreement(Section):
    """Units one target got correct and another incorrect (all counted, every one listed in report.json)."""

    correct_for: str
    incorrect_for: str
    count: int
    units: list[DisagreementUnit]


class CompareReport(Section):
    """The comparison of the targets of one or more exam runs."""

    schema_version: int = SCHEMA_VERSION
    kind: Literal["compare"] = "compare"
    targets: list[ComparedTarget]
    disagreements: list[Disagreement]
