"""Memorisation probe: does a target reproduce held-back halves of a corpus's sentences better when told
their source, and more so than for a negative control it cannot have read?

The method (Golchin and Surdeanu's guided versus general instruction, "Time Travel in LLMs", at the level
of documents): a few seeded sentences per document are cut in half; the target completes each first half
twice, greedily, told the document and collection it comes from (guided) and not (general). Each
completion, cut to the held-back half's length in words, is scored by ROUGE-L F1 against that half. A
document's figure is its mean guided-minus-general gap. The corpus's documents and the control's are
compared through the mean gap per side (an interval over documents: the document is the cluster) and the
AUROC of the gap, corpus over control, with Newcombe's interval (examiner.stats.membership).

What it is not: a verdict on one document or one sentence. Membership signals are weak (Min-K%++ and its
runners-up are near random on some suites), the two sides differ in length and style as well as in
exposure, and a handful of documents gives wide intervals; the report says so beside its figures.
Min-K%++ (examiner.stats.min_k) needs the full distribution at every token of a given text: where the
target gives it (the embedded model, the simulator: examiner.llm.token_scores) each probed sentence, whole,
gets its score, a document's is their mean, and the sides are compared as the gap is; an OpenAI-compatible
endpoint gives top-k log-probabilities only, and the report says Min-K%++ was not computed and why.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from examiner.core.assessments import text_key
from examiner.corpus.reading import Document
from examiner.corpus.sentences import split_sentences
from examiner.llm.fanout import run_bounded
from examiner.stats.membership import auroc_interval, document_mean

Side = Literal["corpus", "control"]
SIDES: tuple[Side, ...] = ("corpus", "control")

MIN_WORDS = 10
"""Shortest sentence probed: below it a half is a few function words that any model guesses."""
MAX_WORDS = 60
"""Longest sentence probed: longer ones are usually lists or run-on tables, not prose."""
_WORD = re.compile(r"[a-z0-9]+")
_PARAGRAPH = re.compile(r"\n\s*\n")
_NOT_PROSE = ("#", "|", "-", "*", ">", "`", "=", "[", "!")


@dataclass(frozen=True)
class HeldBack:
    """One probed sentence: its first half is shown, its second half held back."""

    side: Side
    document: str
    title: str
    index: int
    """The sentence's position among the document's sentences."""
    start: str
    ending: str

    @property
    def key(self) -> str:
        return f"{self.side}/{self.document}#{self.index}"

    @property
    def sentence(self) -> str:
        """The whole sentence (both halves), what Min-K%++ scores."""
        return f"{self.start} {self.ending}"


def document_title(document: Document) -> str:
    """A document's title: its first line when short (Markdown `#` and WikiText `=` marks removed), else
    its file name without extension."""
    first = next((line.strip() for line in document.text.splitlines() if line.strip()), "")
    title = first.strip("#= \t")
    if title and len(title) <= 100:
        return title
    return Path(document.id).stem


def _is_prose(sentence: str) -> bool:
    words = sentence.split()
    if not MIN_WORDS <= len(words) <= MAX_WORDS or sentence.lstrip().startswith(_NOT_PROSE):
        return False
    if "<unk>" in sentence:
        return False
    alphabetic = sum(1 for w in words if any(c.isalpha() for c in w))
    return alphabetic >= 0.7 * len(words)


def prose_sentences(text: str) -> list[str]:
    """The sentences of a text's prose paragraphs (blank-line separated, wrapped lines joined); a paragraph
    that opens as a heading, list, table, quote or code block is left out."""
    out: list[str] = []
    for paragraph in _PARAGRAPH.split(text):
        if paragraph.strip() and not paragraph.lstrip().startswith(_NOT_PROSE):
            out += split_sentences(" ".join(paragraph.split()))
    return out


def held_back(documents: Sequence[Document], side: Side, *, per_document: int, seed: int) -> list[HeldBack]:
    """Up to `per_document` seeded prose sentences of each document, cut in half at the middle word."""
    out: list[HeldBack] = []
    for doc in documents:
        title = document_title(doc)
        sentences = [(i, s) for i, s in enumerate(prose_sentences(doc.text)) if _is_prose(s)]
        picked = random.Random(f"{seed}\x1f{side}\x1f{doc.id}").sample(sentences, min(per_document, len(sentences)))
        for index, sentence in sorted(picked):
            words = sentence.split()
            cut = len(words) // 2
            out.append(HeldBack(side, doc.id, title, index, " ".join(words[:cut]), " ".join(words[cut:])))
    return out


def sample_documents(documents: Sequence[Document], limit: int | None, seed: int, side: Side) -> list[Document]:
    """At most `limit` documents, a seeded sample in corpus order (all of them without a limit)."""
    if limit is None or len(documents) <= limit:
        return list(documents)
    chosen = set(random.Random(f"{seed}\x1f{side}\x1fdocuments").sample(range(len(documents)), limit))
    return [d for i, d in enumerate(documents) if i in chosen]


def words_of(text: str) -> list[str]:
    """Lower-case alphanumeric words, as ROUGE's tokeniser sees them."""
    return _WORD.findall(text.lower())


def overlap(completion: str, ending: str) -> float:
    """ROUGE-L F1 (stemmed) of the completion, cut to the held-back half's length in words, against it."""
    from examiner.stats.reference_metrics import rouge

    cut = " ".join(completion.split()[: len(ending.split())])
    if not words_of(cut) or not words_of(ending):
        return 0.0
    return float(rouge([cut], [ending], types=("rougeL",))["rougeL"][0])


def exact(completion: str, ending: str) -> bool:
    """Whether the completion starts with the held-back half, word for word (case and punctuation aside)."""
    want = words_of(ending)
    return bool(want) and words_of(completion)[: len(want)] == want


Complete = Callable[[HeldBack, "str | None"], Any]
"""The target's completion of an item's start: guided with a source (str), general with None; an awaitable
of the completion's text."""


async def run_probe(items: Sequence[HeldBack], complete: Complete, sources: Mapping[Side, str], *,
                    limit: int = 64, on_done: Callable[[], None] | None = None) -> tuple[list[dict[str, Any]], bool]:
    """Both completions of every item, scored; the records (a failed call: `error`, no scores) and whether
    the budget stopped the probe."""

    async def one(item: HeldBack) -> dict[str, Any]:
        source = f'the document "{item.title}" of {sources[item.side]}'
        guided = str(await complete(item, source))
        general = str(await complete(item, None))
        g, s = overlap(guided, item.ending), overlap(general, item.ending)
        return {**asdict(item), "key": item.key, "guided": guided, "general": general, "guided_rouge_l": g,
                "general_rouge_l": s, "gap": g - s, "guided_exact": exact(guided, item.ending),
                "general_exact": exact(general, item.ending)}

    def done(_: object) -> None:
        if on_done is not None:
            on_done()

    summary = await run_bounded(items, one, limit=limit, on_done=done)
    records = []
    for item, outcome in zip(items, summary.outcomes):
        if outcome.ok and outcome.value is not None:
            records.append(outcome.value)
        else:
            records.append({**asdict(item), "key": item.key,
                            "error": outcome.error or "not asked: the budget ran out"})
    return records, summary.budget_stopped


ScoreText = Callable[[str], Any]
"""A text's per-token statistics under the target (examiner.llm.token_scores): an awaitable of
examiner.stats.min_k.TokenStatistics."""


async def add_min_k(records: Sequence[dict[str, Any]], score: ScoreText, k_percent: float) -> None:
    """Give every scored record (one with a `gap`) its whole sentence's Min-K%++ and the number of tokens
    it averaged over, one text at a time (the embedded model serves one at a time anyway)."""
    from examiner.stats.min_k import min_k_plus_plus

    for record in records:
        if "gap" in record:
            stats = await score(f"{record['start']} {record['ending']}")
            record["min_k_plus_plus"] = min_k_plus_plus(stats, k_percent)
            record["min_k_tokens"] = len(stats.logprob)


def oracle(items: Sequence[HeldBack]) -> dict[str, dict[str, str]]:
    """What a simulated target may know of the items (its memory decides what it recalls): sha1 of each
    start -> the held-back half and `side/document`, and sha1 of each whole sentence -> its `side/document`
    (what its Min-K%++ draws read). A real endpoint never receives it."""
    out = {text_key(i.start): {"ending": i.ending, "document": f"{i.side}/{i.document}"} for i in items}
    out.update({text_key(i.sentence): {"document": f"{i.side}/{i.document}"} for i in items})
    return out


def _mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values)) if values else math.nan


def per_document(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per document with a scored sentence: its side, sentences, mean guided and general ROUGE-L,
    mean gap, exact reproductions, and the mean length of its held-back halves."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for r in records:
        if "gap" in r:
            groups.setdefault((str(r["side"]), str(r["document"])), []).append(r)
    rows = []
    for (side, document), rs in groups.items():
        rows.append({"side": side, "document": document, "title": rs[0]["title"], "sentences": len(rs),
                     "guided_rouge_l": _mean([r["guided_rouge_l"] for r in rs]),
                     "general_rouge_l": _mean([r["general_rouge_l"] for r in rs]),
                     "gap": _mean([r["gap"] for r in rs]),
                     "guided_exact": sum(bool(r["guided_exact"]) for r in rs),
                     "general_exact": sum(bool(r["general_exact"]) for r in rs),
                     "ending_words": _mean([len(str(r["ending"]).split()) for r in rs])})
        if any("min_k_plus_plus" in r for r in rs):
            rows[-1]["min_k_plus_plus"] = _mean([r["min_k_plus_plus"] for r in rs if "min_k_plus_plus" in r])
    return rows


def summary(documents: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per side: the mean gap, guided and general ROUGE-L over documents with their intervals, exact
    reproductions and held-back length; the AUROC of the gap (corpus over control) with its interval; and
    the difference of the mean gaps with Welch's interval. Where the documents carry Min-K%++, the same
    three figures for it: per side `min_k_plus_plus`, and `min_k_auroc`, `min_k_difference`."""
    sides: dict[str, Any] = {}
    for side in SIDES:
        rows = [d for d in documents if d["side"] == side]
        sides[side] = {"documents": len(rows), "sentences": sum(int(d["sentences"]) for d in rows),
                       "gap": document_mean([d["gap"] for d in rows]).to_dict(),
                       "guided_rouge_l": document_mean([d["guided_rouge_l"] for d in rows]).to_dict(),
                       "general_rouge_l": document_mean([d["general_rouge_l"] for d in rows]).to_dict(),
                       "guided_exact": sum(int(d["guided_exact"]) for d in rows),
                       "general_exact": sum(int(d["general_exact"]) for d in rows),
                       "ending_words": document_mean([d["ending_words"] for d in rows]).to_dict()}
    corpus = [d["gap"] for d in documents if d["side"] == "corpus"]
    control = [d["gap"] for d in documents if d["side"] == "control"]
    out = {"sides": sides, "auroc": auroc_interval(corpus, control).to_dict(), "difference": _welch(corpus, control)}
    if any("min_k_plus_plus" in d for d in documents):
        by_side = {side: [float(d["min_k_plus_plus"]) for d in documents
                          if d["side"] == side and math.isfinite(d.get("min_k_plus_plus", math.nan))] for side in SIDES}
        for side in SIDES:
            sides[side]["min_k_plus_plus"] = document_mean(by_side[side]).to_dict()
        out["min_k_auroc"] = auroc_interval(by_side["corpus"], by_side["control"]).to_dict()
        out["min_k_difference"] = _welch(by_side["corpus"], by_side["control"])
    return out


def _welch(a: Sequence[float], b: Sequence[float]) -> dict[str, float]:
    """Mean of `a` minus mean of `b` with Welch's 95 % interval (NaN bounds below two documents a side or
    without any spread)."""
    from scipy.stats import ttest_ind

    diff = _mean(a) - _mean(b) if a and b else math.nan
    if len(a) < 2 or len(b) < 2 or (len(set(a)) < 2 and len(set(b)) < 2):
        return {"estimate": diff, "low": math.nan, "high": math.nan}
    ci = ttest_ind(list(a), list(b), equal_var=False).confidence_interval(0.95)
    return {"estimate": diff, "low": float(ci.low), "high": float(ci.high)}


__all__ = ["HeldBack", "SIDES", "ScoreText", "Side", "add_min_k", "document_title", "exact", "held_back", "oracle", "overlap",
           "per_document", "run_probe", "sample_documents", "summary", "words_of"]
