"""One typed model per report kind (exam, judge, meta, compare, judge-vs-people, metric-stats, memory_probe).

Each method builds its report once as one of these models; the Markdown, HTML and terminal renderers read
the model, and report.json is its dump (examiner/reporting/writer.py) with `schema_version` and `kind`.
The published JSON Schema (examiner/reporting/schema/) is generated from `Report`.
"""

from __future__ import annotations

from typing import Annotated, Union

from pydantic import Field, TypeAdapter

from examiner.reporting.model.base import LEGACY_VERSION, SCHEMA_VERSION, Section
from examiner.reporting.model.compare import CompareReport
from examiner.reporting.model.exam import ExamReport
from examiner.reporting.model.judge import JudgeReport
from examiner.reporting.model.memory_probe import MemoryProbeReport
from examiner.reporting.model.meta import MetaReport
from examiner.reporting.model.people import JudgeVsPeopleReport, MetricStatsReport

Report = Annotated[Union[ExamReport, JudgeReport, MetaReport, CompareReport, JudgeVsPeopleReport, MetricStatsReport,
                         MemoryProbeReport], Field(discriminator="kind")]
"""Any report, told apart by its `kind`."""
REPORT = TypeAdapter(Report)
"""Validates a report.json's data into its model (REPORT.validate_python) and gives its JSON Schema."""

__all__ = ["LEGACY_VERSION", "REPORT", "SCHEMA_VERSION", "CompareReport", "ExamReport", "JudgeReport",
           "JudgeVsPeopleReport", "MemoryProbeReport", "MetaReport", "MetricStatsReport", "Report", "Section"]
