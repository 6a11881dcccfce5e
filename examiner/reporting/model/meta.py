"""The meta-evaluation report (`examiner meta`): how judges (evaluators) rank against each other.

`config`, `skipped`, `usage` and `debates` are closed sections. `baseline`, `rankings` and `counts` are
open objects in schema version 1: their keys depend on the method (JDEval, MDEval, JDEval-i, BSMEval) and
on whether the items carry gold labels; docs/REPORT-SCHEMA.md lists the keys each method writes.
Built by examiner/meta/sections.py from a MetaRun.
"""

from __future__ import annotations

from typing import Any, Literal

from examiner.reporting.model.base import SCHEMA_VERSION, Figure, Section
from examiner.reporting.model.common import SkippedRow


class MetaConfigSection(Section):
    """The settings of the meta-evaluation (examiner.meta.pipeline.MetaConfig)."""

    evaluators: list[str]
    method: str
    meta_judge: str | None
    seed: int
    draws: int
    both_orders: bool
    rules: str
    max_rounds: int
    statement_words: int
    reasoning_words: int
    shuffles: int
    bootstrap: int
    concurrency: int
    debater: str | None


class MetaUsage(Section):
    """The gateway's totals over the whole meta-evaluation."""

    calls: int
    batch_calls: int
    cache_hits: int
    prompt_tokens: int
    cached_tokens: int
    cache_write_tokens: int
    completion_tokens: int
    reasoning_tokens: int
    cost_usd: float
    batch_usd: float
    uncached_input_tokens: int
    output_tokens: int
    cached_input_share: Figure
    unparseable_replies: int
    failed_calls: int


class DebateTurn(Section):
    round: int
    speaker: Literal["referee", "assistant_1", "assistant_2"]
    kind: Literal["question", "verdict", "statement", "unparseable"]
    text: str
    words: int


class DebateRecord(Section):
    """MDEval: one whole debate behind a meta-judgment (every one; report.md shows the first 20)."""

    unscored: str | None
    judgment_id: str
    item_id: str
    assistant_1: str
    assistant_2: str
    turns: list[DebateTurn]
    rounds: int
    questions: int
    verdict: str | None
    forced: bool


class MetaReport(Section):
    """report.json of a meta-evaluation."""

    schema_version: int = SCHEMA_VERSION
    kind: Literal["meta"] = "meta"
    config: MetaConfigSection
    items: int
    items_skipped: int
    skipped: list[SkippedRow]
    item_kind: str | None
    baseline: dict[str, Any]
    """`metric` (the gold-label baseline's name or null), `scores` per evaluator, `detail` per evaluator."""
    rankings: dict[str, Any]
    """`matches`, `players`, `win_rates`, `elo`, `bradley_terry`, `agreement` (with the baseline) and, for
    scored items, `mean_scores`; the ranking methods are in docs/METHODS.md."""
    counts: dict[str, Any]
    """Planned, made, usable and failed meta-judgments, and the method's own counts."""
    problems: list[str]
    usage: MetaUsage | dict[str, Any]
    debates: list[DebateRecord]
