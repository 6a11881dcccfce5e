"""Sections several report kinds share: skipped input rows, correlation levels, classification figures,
billed totals."""

from __future__ import annotations

from examiner.reporting.model.base import Figure, Section


class SkippedRow(Section):
    """An input record the loader could not use: its line, the offending field ("-": the whole record), why."""

    line: int | None = None
    field: str | None = None
    message: str


class Correlation(Section):
    """Pearson, Spearman and Kendall tau-b at one level; `n` (sample, system) or the groups used (summary)."""

    pearson: Figure
    spearman: Figure
    kendall: Figure
    n: int | None = None
    n_groups_used: int | None = None
    n_groups_skipped: int | None = None
    pearson_low: Figure = None
    """95 % Fisher-z interval of each coefficient over n pairs (examiner.stats.agreement_intervals); None
    at summary level (a mean of per-group correlations), with too few pairs, and in older reports."""
    pearson_high: Figure = None
    spearman_low: Figure = None
    spearman_high: Figure = None
    kendall_low: Figure = None
    kendall_high: Figure = None


class Levels(Section):
    """Correlations at sample level, and at summary and system level where the data have groups/systems."""

    sample: Correlation
    summary: Correlation | None = None
    system: Correlation | None = None


class Classification(Section):
    """Accuracy and macro precision / recall / F1 of predicted labels against gold labels."""

    n: int
    accuracy: Figure
    accuracy_low: Figure = None
    """95 % Wilson interval of the accuracy over the n rows (None in reports written before it)."""
    accuracy_high: Figure = None
    macro_precision: Figure
    macro_recall: Figure
    macro_f1: Figure
    classes: list[int]


class BilledTotals(Section):
    """What a group of ledger records billed: calls, tokens by kind and dollars (the exam's cost rows and
    the meta-evaluation's usage share these fields; examiner.llm.accounting computes them)."""

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
