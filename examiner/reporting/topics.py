"""Names for clusters a reader can recognise: a few key terms of each cluster's units and the examiner's
question, computed from the run's records (no model call), and the natural order of cluster ids.

Why: a cluster id (`r1-c7-0482f6`) says nothing about what its units are about, and text order puts
r1-c10 before r1-c2. Key terms are the top TF-IDF terms of the cluster's units, the clusters of one
target being the documents (scikit-learn), so a term common to every cluster does not name any.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from examiner.reporting.run_reader import RunData

if TYPE_CHECKING:  # scikit-learn loads when topics are named, not when gate or compare import this module
    from sklearn.feature_extraction.text import TfidfVectorizer

TOPIC_TERMS = 3
"""Key terms per cluster topic."""
QUESTION_CHARS = 160
"""The examiner's question is kept to this many characters in report.json."""
CHARACTER_SCRIPTS = ("zh", "ja", "ko", "th")
"""Languages written without spaces between words: their terms are character pairs, not words."""
_REF = re.compile(r"\s*\[ref:[^\]]*\]")
_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str | None) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders the numbers inside ids by value (r1-c2 before r1-c10)."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in _DIGITS.split(text or "") if part)


def _vectorizer(language: str, clusters: int) -> TfidfVectorizer:
    from sklearn.feature_extraction.text import TfidfVectorizer

    # A term in more than half of several clusters tells them apart poorly; with one or two clusters keep all.
    max_df = 0.5 if clusters >= 4 else 1.0
    if language in CHARACTER_SCRIPTS:
        return TfidfVectorizer(analyzer="char", ngram_range=(2, 2), max_df=max_df, token_pattern=None)
    stop = "english" if language in ("en", "auto", "") else None
    return TfidfVectorizer(stop_words=stop, max_df=max_df, token_pattern=r"(?u)\b[^\W\d_][^\W\d_]+\b")


def cluster_topics(texts: Mapping[str, Iterable[str]], language: str = "en",
                   terms: int = TOPIC_TERMS) -> dict[str, str]:
    """Cluster id -> its `terms` highest TF-IDF terms joined by commas (the clusters are the documents);
    a cluster without a usable term is left out. Pure: the same texts give the same topics."""
    ids = list(texts)
    docs = [" ".join(texts[cid]) for cid in ids]
    if not ids or not any(d.strip() for d in docs):
        return {}
    vectorizer = _vectorizer(language, len(ids))
    try:
        matrix = vectorizer.fit_transform(docs)
    except ValueError:  # every term pruned (empty vocabulary): no topic rather than a failed report
        return {}
    vocabulary = vectorizer.get_feature_names_out()
    matrix = matrix.tocsr()  # each cluster's nonzero terms read straight from the sparse row (any corpus size)
    topics: dict[str, str] = {}
    for row, cid in enumerate(ids):
        start, end = matrix.indptr[row], matrix.indptr[row + 1]
        pairs = sorted(zip(-matrix.data[start:end], vocabulary[matrix.indices[start:end]]))[:terms]
        if pairs:
            topics[cid] = ", ".join(str(term).strip() for _, term in pairs)
    return topics


def question_excerpt(text: str, limit: int = QUESTION_CHARS) -> str:
    """The examiner's question without its `[ref:...]` unit list, on one line, at most `limit` characters."""
    text = " ".join(_REF.sub("", text).split())
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def cluster_names(run: RunData, target: str) -> dict[str, dict[str, str | None]]:
    """Cluster id -> {"topic": key terms, "question": the examiner's first question to it} for every
    cluster of one target's rounds (None where there is no text or no question)."""
    texts = {cluster.id: [run.units[m].text for m in cluster.members if m in run.units]
             for rnd in run.clusters.get(target, []) for cluster in rnd.clusters}
    topics = cluster_topics(texts, run.info.language)
    asked: dict[str, str] = {}
    for q in sorted(run.questions.values(), key=lambda q: (q.round, q.kind != "question", q.id)):
        if q.target == target and q.status == "ok":
            asked.setdefault(q.cluster_id, question_excerpt(q.text))
    return {cid: {"topic": topics.get(cid), "question": asked.get(cid)} for cid in {*texts, *asked}}


__all__ = ["cluster_names", "QUESTION_CHARS", "TOPIC_TERMS", "cluster_topics", "natural_key", "question_excerpt"]
