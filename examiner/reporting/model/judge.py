"""The judging report (`examiner judge`, `examiner judge-stats`): run figures and the method's section.

Pairwise methods fill `pairwise` (agreement with labels, swap consistency and bias, a panel's members);
single-score methods fill `single` (score summary, G-Eval paths, correlations with human scores).
Built by examiner/judging/sections.py; docs/REPORT-SCHEMA.md describes each field.
"""

from __future__ import annotations

from typing import Literal

from examiner.reporting.model.cascade import PairCascadeSection
from examiner.reporting.model.base import SCHEMA_VERSION, Figure, Section
from examiner.reporting.model.calibration import JudgeCalibration, ScoreCalibration
from examiner.reporting.model.bias import BiasAudit
from examiner.reporting.model.common import Classification, Levels, SkippedRow


class Agreement(Classification):
    """The judge's verdicts against gold labels, overall and per presentation order."""

    n_unparseable: int
    n_without_gold: int
    by_order: dict[str, Classification]


class Swap(Section):
    """Position consistency and bias over pairs judged in both orders (JudgeLM's swap check)."""

    n_judgments: int
    n_unparseable: int
    n_pairs: int
    n_pairs_both_orders: int
    n_pairs_one_order_only: int
    n_pairs_with_unparseable: int
    n_inconsistent: int
    consistency: Figure
    consistency_low: Figure = None
    """95 % Wilson interval of the consistency over the pairs judged in both orders (None in reports written
    before it)."""
    consistency_high: Figure = None
    bias_first: Figure
    bias_second: Figure
    delta_bias: Figure
    bias_first_all_pairs: Figure
    bias_second_all_pairs: Figure
    delta_bias_all_pairs: Figure


class MemberAgreement(Section):
    """How often a panel member's verdict was the panel's, over the judgments the panel decided."""

    member: str
    agreed: int
    compared: int
    unscored: int
    rate: Figure
    rate_low: Figure = None
    """95 % Wilson interval of the rate over the judgments compared (None in reports written before it)."""
    rate_high: Figure = None


class PairwiseSection(Section):
    unparseable_convention: Literal["drop", "wrong", "own-class"]
    n_judgments: int
    n_unparseable: int
    n_failed_calls: int
    verdicts: dict[str, int]
    """Verdict (1, 2, 0 for a tie, or `unparseable`) -> judgments."""
    agreement: Agreement | None = None
    teacher_agreement: Agreement | None = None
    swap: Swap | None = None
    panel_agreement: list[MemberAgreement] | None = None
    classic_metric_agreement: dict[str, Classification] | None = None
    """Per classic metric (and `majority`): its preferences against the gold labels (RevisEval)."""
    metric_implementations: dict[str, str] | None = None
    """Per classic metric shown: what computed it (package and version; BERTScore's model)."""
    calibration: JudgeCalibration | None = None
    """With gold labels on only some rows: each label's share over every row calibrated by them (PPI++)."""


class SingleSection(Section):
    unparseable_convention: Literal["drop", "wrong", "own-class"]
    lowest_score: Figure
    n_judgments: int
    n_scored: int
    n_unparseable: int
    n_failed_calls: int
    mean_score: Figure
    geval_paths: dict[str, int] | None = None
    """G-Eval: how many scores came from token probabilities (`logprobs`) or sampling (`samples`)."""
    geval_unparseable_samples: int | None = None
    correlation_with_human: dict[str, Levels] | None = None
    """Scorer (`judge`, then each classic metric) -> correlations with the human scores."""
    metric_implementations: dict[str, str] | None = None
    """Per classic metric shown: what computed it (package and version; BERTScore's model)."""
    calibration: ScoreCalibration | None = None
    """With human scores on only some rows: the mean human score over every row calibrated by them (PPI++)."""


class JudgeReport(Section):
    """report.json of a judging run (`method`: the judging method, or `judge-stats` for saved judgments)."""

    schema_version: int = SCHEMA_VERSION
    kind: Literal["judge"] = "judge"
    method: str
    judge: str | None = None
    model: str | None = None
    status: str | None = None
    calls: int | None = None
    batch_calls: int | None = None
    cache_hits: int | None = None
    prompt_tokens: int | None = None
    cached_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost_usd: float | None = None
    failed_calls: int | None = None
    dataset: str | None = None
    wall_s: float | None = None
    rows_judged: int
    rows_skipped: int
    skipped: list[SkippedRow]
    passed_cut: int | None = None
    """Responses longer than `max_passed_chars`: the judge read each cut (examiner.core.passed_text); None
    in reports written before it and for saved judgments."""
    pairwise: PairwiseSection | None = None
    single: SingleSection | None = None
    bias_audit: BiasAudit | None = None
    """The judge bias audit (examiner/judging/bias_audit.py); None in reports written before it."""
    cascade: PairCascadeSection | None = None
    """A judge cascade's tiers and calibration (`--judge-cascade`); None without one."""
