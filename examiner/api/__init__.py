"""The Python API: each job of the `examiner` command as a function taking typed options and settings,
returning a typed result with row-level access (docs/API.md).

    from examiner.api import ExamOptions, run_exam
    exam = run_exam(ExamOptions(corpus="corpora/harbor-water", out="runs/sim", simulate=True))
    print(exam.status, exam.targets[exam.target].accuracy)
    frame = exam.verdicts().to_pandas()

The command line (examiner.cli) parses flags into these options and prints the results; nothing here
parses flags or prints a result. Names load on first use, so importing this package (which the command
line's flag helpers do) stays light.
"""

from __future__ import annotations

import importlib
import inspect
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from examiner.api.compare import CompareOptions, ComparedTarget, CompareResult, compare_runs
    from examiner.api.data import DataPullOptions, DataPullResult, DataStatus, PulledSet, data_path, data_status, pull_data
    from examiner.api.exam import (DemoOptions, EstimateOptions, EstimateResult, ExamOptions, ExamResult, Figure,
                                   ResumeOptions, RoleEstimate, TargetResult, estimate_exam, read_exam, resume_exam,
                                   run_demo, run_exam)
    from examiner.api.export import ExportOptions, ExportResult, export_run
    from examiner.api.gating import GateOptions, GateResult, gate
    from examiner.api.human_sample import ReviewSampleOptions, ReviewSampleResult, review_sample
    from examiner.api.judging import (JudgeOptions, JudgeResult, JudgeStatsOptions, JudgeStatsResult, judge,
                                    judge_stats)
    from examiner.api.memory_probe import MemoryProbeOptions, MemoryProbeResult, probe_memory
    from examiner.api.meta import MetaOptions, MetaResult, RankedEvaluator, meta_evaluate
    from examiner.api.metrics import MetricStatsOptions, MetricStatsResult, metric_stats
    from examiner.api.people import JudgeVsPeopleOptions, JudgeVsPeopleResult, judge_vs_people
    from examiner.api.rows import CallCost, JudgmentRow, OutcomeRow, Rows, UnitRow, VerdictRow
    from examiner.api.settings import JobOptions, SettingsSource, resolve_settings

MODULES = {
    "exam": ("ExamOptions", "ResumeOptions", "EstimateOptions", "DemoOptions", "ExamResult", "TargetResult",
             "Figure", "EstimateResult", "RoleEstimate", "run_exam", "resume_exam", "estimate_exam", "run_demo",
             "read_exam"),
    "metrics": ("MetricStatsOptions", "MetricStatsResult", "metric_stats"),
    "judging": ("JudgeOptions", "JudgeResult", "judge", "JudgeStatsOptions", "JudgeStatsResult", "judge_stats"),
    "people": ("JudgeVsPeopleOptions", "JudgeVsPeopleResult", "judge_vs_people"),
    "human_sample": ("ReviewSampleOptions", "ReviewSampleResult", "review_sample"),
    "meta": ("MetaOptions", "MetaResult", "RankedEvaluator", "meta_evaluate"),
    "memory_probe": ("MemoryProbeOptions", "MemoryProbeResult", "probe_memory"),
    "compare": ("CompareOptions", "CompareResult", "ComparedTarget", "compare_runs"),
    "export": ("ExportOptions", "ExportResult", "export_run"),
    "gating": ("GateOptions", "GateResult", "gate"),
    "data": ("DataPullOptions", "DataPullResult", "DataStatus", "PulledSet", "data_status", "data_path", "pull_data"),
    "rows": ("Rows", "UnitRow", "VerdictRow", "OutcomeRow", "CallCost", "JudgmentRow"),
    "settings": ("JobOptions", "SettingsSource", "resolve_settings"),
}
"""The module of examiner.api that defines each public name."""

_HOME = {name: module for module, names in MODULES.items() for name in names}

__all__ = ["CallCost", "CompareOptions", "CompareResult", "ComparedTarget", "DataPullOptions", "DataPullResult",
           "DataStatus", "DemoOptions", "EstimateOptions",
           "EstimateResult", "ExamOptions", "ExamResult", "ExportOptions", "ExportResult", "Figure", "GateOptions",
           "GateResult", "JobOptions",
           "JudgeOptions", "JudgeResult", "JudgeStatsOptions", "JudgeStatsResult", "JudgeVsPeopleOptions",
           "JudgeVsPeopleResult", "JudgmentRow", "MemoryProbeOptions", "MemoryProbeResult", "MetaOptions", "MetaResult", "MetricStatsOptions",
           "MetricStatsResult", "OutcomeRow", "PulledSet", "RankedEvaluator", "ResumeOptions", "ReviewSampleOptions",
           "ReviewSampleResult", "RoleEstimate", "Rows",
           "SettingsSource", "TargetResult", "UnitRow", "VerdictRow", "compare_runs", "data_path", "data_status",
           "estimate_exam", "export_run",
           "gate", "judge", "judge_stats", "judge_vs_people", "meta_evaluate", "metric_stats", "probe_memory", "pull_data",
           "read_exam",
           "resolve_settings", "resume_exam", "review_sample", "run_demo", "run_exam"]
"""The public names (each defined in the module MODULES gives; tests/api/test_docs.py holds the two equal)."""


def __getattr__(name: str) -> Any:
    if name in _HOME:
        value = getattr(importlib.import_module(f"examiner.api.{_HOME[name]}"), name)
        if inspect.isfunction(value):  # a bad call is one clear line, not a bare TypeError (examiner/api/calls.py)
            from examiner.api.calls import checked

            value = checked(value)
        globals()[name] = value  # looked up once
        return value
    raise AttributeError(f"module 'examiner.api' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
