"""The report's `passed_text` section: how many answers were cut before another model read them.

Why a section: the cut (examiner.core.passed_text, Settings.max_passed_chars) changes what the judge
and the examiner's probe read, so a reader of the figures must know it happened and how often. The count
comes from the records, not from a counter kept while running, so a report rebuilt later (or of a resumed
run) says the same: an answer longer than the cap went into every prompt cut.
"""

from __future__ import annotations

from typing import Any

from examiner.core.passed_text import count_cut, run_limit
from examiner.core.rundir import RunRecords


def exam_passed_text(run: RunRecords) -> dict[str, Any]:
    """The cap the run used (its config.yaml; the default for a run written before the setting), its
    answers, how many of them were cut and the longest one's length."""
    limit = run_limit(run.config)
    lengths = [len(a.text) for a in run.answers.values()]
    return {"limit": limit, "answers": len(lengths),
            "answers_cut": count_cut((a.text for a in run.answers.values()), limit),
            "longest_answer": max(lengths, default=0)}
