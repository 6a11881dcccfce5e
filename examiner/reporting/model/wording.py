"""The exam report's "Wording check" section: with `--paraphrases K`, how much of a question's accuracy
is its wording (examiner/stats/wording.py), per target and per pair of targets."""

from __future__ import annotations

from examiner.reporting.model.base import Figure, Section


class WordingParts(Section):
    """One target: the variance of a question's accuracy (round 1's questions, first wording) in parts,
    each on the scale of one question's accuracy, and each part's share of the total."""

    cluster: Figure
    """Between questions (what the questions ask, beyond their wording and the noise)."""
    wording: Figure
    """The wording: a rewording moves all of a question's units together (two-way analysis of variance)."""
    judge: Figure
    """The judge's marking of a fixed answer (from the self-check; null when nothing was re-judged)."""
    answer_noise: Figure
    """Unit-by-wording noise left once the judge's part is taken off."""
    total: Figure
    wording_share: Figure
    cluster_share: Figure
    judge_share: Figure
    questions: int
    """Round 1's questions whose accuracy spread is decomposed."""
    paraphrased: int
    """Questions with two or more complete wordings (the tables the wording part comes from)."""
    rejudged_units: int
    """Units the self-check marked twice (the judge's part)."""


class WordingPair(Section):
    """Target B against target A on round 1's units both answered."""

    a: str
    b: str
    difference: Figure
    """B's accuracy minus A's (share of units answered right)."""
    wording_variance: Figure
    """Unit-level wording variance of the per-unit difference B - A (their shared wordings)."""
    added_variance: Figure
    """What that wording adds to the document-clustered variance of the difference (the covariance between
    units of one question in different documents); compare and gate add it when both runs measured it."""
    rank_flip: Figure
    """Chance that a fresh rewording of every question reverses the sign of the difference (normal
    approximation; 0 when no wording effect was found)."""


class WordingCheckSection(Section):
    """`--paraphrases K --paraphrase-share S` (examiner/exam/nodes/rewording.py, docs/METHODS.md): a seeded
    share of round 1's clusters re-asked in K other wordings, answered by every target and judged beside
    the exam (never counted in accuracy)."""

    paraphrases: int
    """K: other wordings per re-asked question (wording 0 is the question the exam asked)."""
    share: Figure
    """S: the share of round 1's clusters asked for (at least 2 are re-asked when 2 exist); null when the
    run's settings do not say."""
    clusters_total: int
    """Round 1's clusters asked a question (what the share is taken of)."""
    clusters_reasked: int
    """Clusters whose question was re-asked."""
    calls: int
    """Calls the wording check made (ledger stage `rewording`; cache hits included)."""
    cost_usd: float
    targets: dict[str, WordingParts]
    pairs: list[WordingPair]
