"""Two reports the judge-stats family writes besides the judging report: the exam's judge against
people's overrides (`judge-stats --human-from-run`) and classic metrics against human scores
(`metric-stats`)."""

from __future__ import annotations

from typing import Literal

from examiner.reporting.model.base import SCHEMA_VERSION, Section
from examiner.reporting.model.common import Levels, SkippedRow
from examiner.reporting.model.exam import JudgeVsPeople


class JudgeVsPeopleReport(Section):
    """The exam's judge (and each panel member) against the overrides people made in `examiner view`."""

    schema_version: int = SCHEMA_VERSION
    kind: Literal["judge-vs-people"] = "judge-vs-people"
    run: str
    run_id: str
    judge_mode: str
    judges: list[str]
    overall: JudgeVsPeople
    per_target: dict[str, JudgeVsPeople]


class Rouge(Section):
    measure: str
    stemmer: bool


class MetricStatsReport(Section):
    """Classic metrics (BLEU, ROUGE) against human scores at sample, summary and system level."""

    schema_version: int = SCHEMA_VERSION
    kind: Literal["metric-stats"] = "metric-stats"
    method: Literal["metric-stats"] = "metric-stats"
    dataset: str
    rows_used: int
    rows_skipped: int
    metrics: list[str]
    human_fields: list[str]
    multi_reference: str
    rouge: Rouge
    implementations: dict[str, str] = {}
    """Metric -> what computed it (package and version; BERTScore's model, and that it is not the published
    one). Empty in reports written before it."""
    mean_metric: dict[str, float]
    correlation_with_human: dict[str, dict[str, Levels]]
    """Metric -> human score field -> correlation levels."""
    skipped: list[SkippedRow]
