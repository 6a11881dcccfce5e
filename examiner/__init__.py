"""examiner: audit what language models know about a reference corpus, and audit their judges.

The Python API (examiner.api, docs/API.md) is loaded on first use, so `import examiner` (and
`examiner --help`) stays light:

    import examiner
    exam = examiner.run_exam(examiner.ExamOptions(corpus="corpora/harbor-water", out="runs/sim", simulate=True))
"""

from __future__ import annotations

from typing import Any

__all__ = ["CallCost", "CompareOptions", "CompareResult", "ComparedTarget", "DataPullOptions", "DataPullResult",
           "DataStatus", "DemoOptions", "EstimateOptions",
           "EstimateResult", "ExamOptions", "ExamResult", "ExportOptions", "ExportResult", "Figure", "GateOptions",
           "GateResult", "JobOptions", "JudgeOptions", "JudgeResult", "JudgeStatsOptions", "JudgeStatsResult",
           "JudgeVsPeopleOptions", "JudgeVsPeopleResult", "JudgmentRow", "MemoryProbeOptions", "MemoryProbeResult",
           "MetaOptions", "MetaResult",
           "MetricStatsOptions", "MetricStatsResult", "OutcomeRow", "PulledSet", "RankedEvaluator", "ResumeOptions",
           "ReviewSampleOptions", "ReviewSampleResult", "RoleEstimate", "Rows", "SettingsSource", "TargetResult", "UnitRow", "VerdictRow", "compare_runs",
           "data_path", "data_status", "estimate_exam", "export_run", "gate", "judge", "judge_stats", "judge_vs_people", "meta_evaluate",
           "metric_stats", "probe_memory", "pull_data", "read_exam", "resolve_settings", "resume_exam", "review_sample", "run_demo", "run_exam"]
"""The public API: examiner.api.__all__, spelled out so `import examiner` loads nothing (tests/api holds the
two equal)."""


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from examiner.core.version import VERSION

        return VERSION
    if not name.startswith("_") and name != "api":
        from examiner import api

        if name in api.__all__:
            return getattr(api, name)
    raise AttributeError(f"module 'examiner' has no attribute {name!r}")


def __dir__() -> list[str]:
    """Only the public API (not this module's helpers such as `Any` or `annotations`)."""
    return sorted([*__all__, "__version__"])
