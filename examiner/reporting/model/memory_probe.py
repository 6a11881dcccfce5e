"""memory_probe.json, the memorisation probe's report (`examiner probe-memory`, examiner/exam/memory_probe.py):
guided versus general completion of held-back sentence halves per side (the corpus probed, a negative
control), over documents with their intervals, and Min-K%++ beside them where the target gave token
log-probabilities. Built once from the probe's figures; the Markdown, the terminal table and the API read
this model, and memory_probe.json is its dump."""

from __future__ import annotations

from typing import Literal

from examiner.reporting.model.base import SCHEMA_VERSION, Figure, Section


class DocumentMean(Section):
    """The mean of one value per document with its t interval over documents (examiner.stats.membership)."""

    mean: Figure
    low: Figure
    high: Figure
    documents: int
    sd: Figure


class DocumentAuroc(Section):
    """P(a corpus document scores above a control document), ties counting a half, with Newcombe's interval."""

    auroc: Figure
    low: Figure
    high: Figure
    probed: int
    control: int


class MeanDifference(Section):
    """Corpus mean minus control mean, with Welch's 95 % interval (undefined below two documents a side)."""

    estimate: Figure
    low: Figure
    high: Figure


class ProbeSide(Section):
    """One side's figures over its documents."""

    documents: int
    sentences: int
    gap: DocumentMean
    """Guided minus general ROUGE-L."""
    guided_rouge_l: DocumentMean
    general_rouge_l: DocumentMean
    guided_exact: int
    general_exact: int
    ending_words: DocumentMean
    """Length of the held-back halves, in words."""
    min_k_plus_plus: DocumentMean | None = None
    """Where the target gave token log-probabilities."""


class ProbeSummary(Section):
    """Per side, and corpus against control: the gap's AUROC and the difference of the mean gaps (and the
    same two for Min-K%++ where computed)."""

    sides: dict[str, ProbeSide]
    auroc: DocumentAuroc
    difference: MeanDifference
    min_k_auroc: DocumentAuroc | None = None
    min_k_difference: MeanDifference | None = None


class ProbedDocument(Section):
    """One document's own figures (means over its probed sentences)."""

    side: str
    document: str
    title: str
    sentences: int
    guided_rouge_l: Figure
    general_rouge_l: Figure
    gap: Figure
    guided_exact: int
    general_exact: int
    ending_words: Figure
    min_k_plus_plus: Figure = None


class MinKSettings(Section):
    """Whether Min-K%++ was computed, at which k and how the token scores were got, or why not."""

    computed: bool
    k_percent: float
    method: str | None = None
    reason: str | None = None


class MemoryProbeReport(Section):
    """memory_probe.json: what was probed, what it cost, and the figures."""

    schema_version: int = SCHEMA_VERSION
    kind: Literal["memory_probe"] = "memory_probe"
    target: str
    status: Literal["ok", "partial", "budget_exhausted"]
    """`partial`: some sentences got no completion (completions.jsonl says why)."""
    calls: int
    cache_hits: int = 0
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    min_k_plus_plus: MinKSettings | None = None
    """None in reports written before Min-K%++."""
    corpus: list[str]
    control: list[str]
    sources: dict[str, str]
    """How the guided prompt named each side's collection."""
    per_document: int
    """Sentences probed per document at most."""
    max_documents: int | None
    seed: int
    min_words: int
    max_words: int
    scoring: str
    sentences: int
    failed: int
    wall_s: float
    summary: ProbeSummary
    documents: list[ProbedDocument]
    skipped_documents: list[str]

    @property
    def min_k_computed(self) -> bool:
        """Whether the report carries Min-K%++ figures."""
        return bool(self.min_k_plus_plus and self.min_k_plus_plus.computed and self.summary.min_k_auroc)


__all__ = ["DocumentAuroc", "DocumentMean", "MeanDifference", "MemoryProbeReport", "MinKSettings", "ProbeSide",
           "ProbeSummary", "ProbedDocument"]
