"""The meta-evaluation report (`examiner meta`): how judges (evaluators) rank against each other.
Every section is closed. `baseline` holds the gold-label baseline (accuracy for pairwise and verdict items,
Pearson for scored ones); `rankings` the win rates, Elo, Bradley-Terry, their bootstrap intervals over
matches and rank groups, and their agreement with the baseline (`mean_scores` for scored items); `counts`
the meta-judgments, with the fields of the method's family: PairwiseCounts (JDEval, MDEval) or
IndividualCounts (JDEval-i, BSMEval).
Built by examiner/meta/sections.py from a MetaRun; docs/REPORT-SCHEMA.md describes each section and
docs/METHODS.md the ranking methods.
"""

from __future__ import annotations

from typing import Any, Literal

from examiner.reporting.model.bias import BiasAudit
from examiner.reporting.model.base import SCHEMA_VERSION, Figure, FigureMap, Section
from examiner.reporting.model.common import BilledTotals, SkippedRow


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
    meta_judge_endpoint: str | None = None
    """The endpoint that judged (`meta_judge`, or the meta_judge role's); absent in reports written before."""
    meta_judge_model: str | None = None
    """That endpoint's model."""


class EvaluatorBaseline(Section):
    """One evaluator's step-1 assessments and its baseline figure against the gold labels."""

    assessed: int
    usable: int
    unparseable: int
    failed: int
    with_gold: int
    """Usable assessments of items with a gold label (a gold score for scored items)."""
    correct: int | None = None
    """Pairwise and verdict items: assessments that match the gold label."""
    cohen_kappa: Figure = None
    """Verdict items: Cohen's kappa against the gold labels (people's overrides of an exam)."""
    confusion: dict[str, dict[str, int]] | None = None
    """Verdict items: rows the evaluator's label, columns the gold label."""
    value: Figure = None
    """The baseline figure (accuracy, or Pearson's r for scored items); absent when undefined."""
    value_low: Figure = None
    """95 % interval of `value` over the items with gold (accuracy: Wilson; Pearson's r: Fisher z, from 4
    items; examiner.stats.agreement_intervals); absent when undefined and in reports written before it."""
    value_high: Figure = None


class Baseline(Section):
    """The gold-label baseline ranking of the evaluators."""

    metric: Literal["accuracy", "pearson"] | None
    """None when no evaluator has a baseline figure (no gold labels)."""
    scores: dict[str, float]
    """Evaluator -> its baseline figure (only evaluators that have one)."""
    detail: dict[str, EvaluatorBaseline]


class WinRateInterval(Section):
    """An evaluator's overall win rate with its 95 % interval over its matches grouped by item
    (examiner.stats.intervals.accuracy_interval: below 30 items the small-sample method)."""

    value: Figure
    low: Figure
    high: Figure
    method: str
    small_sample: bool
    matches: int
    groups: int
    """Items the matches came from (the independent groups of the interval)."""


class WinRates(Section):
    """Wins and ties per ordered pair of evaluators, and the rates they give (null: the pair never met)."""

    players: list[str]
    win_rate: dict[str, FigureMap]
    """Row over column: wins / matches (ties count in the matches, not the wins)."""
    tie_rate: dict[str, FigureMap]
    overall_win_rate: FigureMap
    wins: list[list[int]]
    """wins[i][j]: matches players[i] won against players[j]."""
    ties: list[list[int]]
    overall_win_rate_interval: dict[str, WinRateInterval] | None = None
    """Evaluator -> its overall win rate with an interval (absent in reports made before it existed)."""


class EloRating(Section):
    """Mean Elo over the shuffled match orders, with its match-order spread (std with ddof=0, min, max):
    how far the order alone moves the rating, not an interval (the matches are the same in every order;
    `Rankings.intervals` holds the intervals over matches)."""

    player: str
    mean: float
    std: float
    min: float
    max: float


class Elo(Section):
    """Elo over shuffles, best first, and the settings that produced it."""

    ratings: list[EloRating]
    n_matches: int
    n_shuffles: int
    k: float
    start: float
    seed: int


class BradleyTerryRating(Section):
    """Strength (summing to 1 over players) and Elo-like rating, each with its bootstrap interval."""

    player: str
    strength: Figure
    strength_low: Figure
    strength_high: Figure
    rating: Figure
    rating_low: Figure
    rating_high: Figure


class BradleyTerry(Section):
    """The Bradley-Terry fit, best first, and its settings (rating 400*log10(strength), mean `anchor`)."""

    ratings: list[BradleyTerryRating]
    n_matches: int
    n_bootstrap: int
    alpha: float
    prior: float
    anchor: float
    seed: int
    iterations: int


class RatedPlayer(Section):
    """An evaluator's rating with its bootstrap interval over matches and its rank: 1 + the evaluators
    whose interval lies wholly above its own (LMSYS "rank (UB)")."""

    player: str
    rating: Figure
    low: Figure
    high: Figure
    rank: int


class RatingIntervals(Section):
    """One rating system with FastChat's bootstrap over matches (examiner.stats.rankings), best first."""

    system: str
    players: list[RatedPlayer]
    groups: list[list[str]]
    """Rank groups, best first: evaluators of one group share a rank (the intervals cannot order them)."""
    n_matches: int
    n_rounds: int
    level: float
    seed: int


class RankingIntervals(Section):
    """Elo (median over rounds) and Bradley-Terry (fit on the observed matches) with percentile intervals
    from FastChat's bootstrap over matches, and their rank groups."""

    elo: RatingIntervals
    bradley_terry: RatingIntervals | None = None
    bradley_terry_error: str | None = None
    """Why Bradley-Terry has no interval (the comparison graph is not connected)."""


class RankingAgreement(Section):
    """How well a ranking reproduces the baseline ranking over the players both name (undefined, null,
    when either ranking ties everyone)."""

    kendall_tau: Figure
    spearman_rho: Figure
    top1_match: bool
    n: int
    players: list[str]


class Agreements(Section):
    """Each ranking's agreement with the baseline (only with at least two baseline scores): Elo and
    Bradley-Terry as the ranking table shows them (`Rankings.intervals`: Elo's median over bootstrap rounds,
    BT fitted on the observed matches; reports written before the intervals: the shuffle mean and MM fit)."""

    elo: RankingAgreement | None = None
    win_rate: RankingAgreement | None = None
    bradley_terry: RankingAgreement | None = None
    mean_score: RankingAgreement | None = None
    """Scored items: the mean meta-scores' ranking."""


class Rankings(Section):
    """The rankings of the evaluators from the meta-judgments (none but `matches` and `players` when no
    meta-judgment was usable)."""

    matches: int
    players: list[str]
    win_rates: WinRates | None = None
    elo: Elo | None = None
    """Elo over shuffled match orders: mean and match-order spread (not an interval)."""
    intervals: RankingIntervals | None = None
    """Bootstrap intervals over matches and rank groups (absent in reports made before they existed)."""
    bradley_terry: BradleyTerry | None = None
    bradley_terry_error: str | None = None
    """Why Bradley-Terry could not be fitted (e.g. the comparison graph is not connected)."""
    mean_scores: dict[str, float] | None = None
    """Scored items (JDEval-i, BSMEval): evaluator -> mean meta-score."""
    agreement: Agreements | None = None


class OrderConsistency(Section):
    """`--both-orders`: how often the meta-judge picks the same evaluator when a pair is shown both ways."""

    pairs_both_orders: int
    agreeing: int
    consistency: Figure


class MetaCounts(Section):
    """Meta-judgments planned, made, usable and unreadable (every method)."""

    planned: int
    judgments: int
    usable: int
    unparseable: int
    failed: int
    passed_cut: int | None = None
    """Outputs, explanations and debate statements longer than `max_passed_chars`, read cut by the next
    model (examiner.core.passed_text); None in reports written before it."""


class PairwiseCounts(MetaCounts):
    """JDEval and MDEval: the counts of every method, then the pairwise ones."""

    rule_violations: int
    """JDEval: stated better assistant contradicting the rules."""
    outcomes: dict[str, int]
    """Match outcome (first, second, tie) -> meta-judgments."""
    meta_judge_answer_accuracy: float | None = None
    """The meta-judge's own better answer against the gold labels (items with one)."""
    order_consistency: OrderConsistency | None = None
    debate_rounds: dict[str, int] | None = None
    """MDEval: rounds -> debates."""
    forced_verdicts: int | None = None
    no_verdict: int | None = None


class IndividualCounts(MetaCounts):
    """JDEval-i and BSMEval: the counts of every method, then BSMEval's branches."""

    branches_per_judgment: float | None = None
    top_branches: dict[str, int] | None = None
    """BSMEval: the 15 most common branch names -> times used."""


class MetaUsage(BilledTotals):
    """The gateway's totals over the whole meta-evaluation."""

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
    baseline: Baseline
    rankings: Rankings
    counts: PairwiseCounts | IndividualCounts
    """The method's family decides which (config.method)."""
    problems: list[str]
    usage: MetaUsage | dict[str, Any]
    debates: list[DebateRecord]
    bias_audit: BiasAudit | None = None
    """The meta-judge's bias audit (examiner/meta/bias_audit.py); None in reports written before it."""
