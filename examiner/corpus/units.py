"""Passages -> knowledge units (KUs), the atoms an exam asks about and a judge checks.

Two ways to get units:
- `sentence_units`: no model; sentences, short ones merged with their neighbours, long ones split so no
  unit exceeds a token bound. Each unit keeps the exact character span it came from.
- `units_from_statements`: for LLM extraction (written elsewhere), which returns statements linked to the
  passage they were drawn from; they become units pointing at that whole passage.

A unit's id is a hash of its normalised text, so the same statement found in two places is one unit with
two sources, and ids are stable from run to run. `merge_near_duplicates` folds paraphrases together using
embedding similarity.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from examiner.corpus.close_pairs import close_pairs
from examiner.corpus.reading import Corpus, Passage
from examiner.corpus.sentences import sentence_spans, trim_span
from examiner.core.jsonl import read_jsonl
from examiner.core.tokens import count_tokens


class Source(BaseModel):
    """Where a unit's text comes from."""

    model_config = ConfigDict(frozen=True)

    document: str
    """Document id (see `examiner.corpus.reading.Document.id`)."""
    passage_id: str
    """Id of the passage the unit was drawn from."""
    start: int
    """Character offset in the DOCUMENT's text where the supporting text starts."""
    end: int
    """Offset one past its end; for sentence units `document.text[start:end]` is the unit's raw text."""


class KnowledgeUnit(BaseModel):
    """A short self-contained statement of the reference corpus, with links to where it comes from."""

    model_config = ConfigDict(frozen=True)

    id: str
    """`ku-` + hash of the normalised text: stable across runs, equal for equal statements."""
    text: str
    """The statement (whitespace collapsed)."""
    sources: tuple[Source, ...] = Field(min_length=1)
    """Every place this statement was found; several after exact or near-duplicate merging."""
    token_count: int
    """cl100k_base tokens in `text`."""


def normalise_text(text: str) -> str:
    """The form hashed into a unit id: Unicode-compatible, case-folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def unit_id(text: str) -> str:
    """Stable unit id from the normalised text."""
    return "ku-" + hashlib.sha256(normalise_text(text).encode()).hexdigest()[:16]


def make_unit(text: str, sources: Iterable[Source]) -> KnowledgeUnit:
    """A unit with its id and token count filled in."""
    clean = " ".join(text.split())
    return KnowledgeUnit(id=unit_id(clean), text=clean, sources=tuple(sources), token_count=count_tokens(clean))


# --- token bounds ----------------------------------------------------------------------------------------

_CLAUSE_END = re.compile(r"[;:,](?=\s)|[，；：、،؛]|\s(?=—\s)|\s(?=\((?!\d))")


def _span_tokens(text: str, a: int, b: int) -> int:
    return count_tokens(" ".join(text[a:b].split()))


def _clause_spans(text: str, a: int, b: int) -> list[tuple[int, int]]:
    cuts = [a] + [m.end() for m in _CLAUSE_END.finditer(text, a, b)] + [b]
    return [s for x, y in zip(cuts, cuts[1:]) if (s := trim_span(text, x, y))]


def _word_spans(text: str, a: int, b: int) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.compile(r"\S+").finditer(text, a, b)]


def _sentence_spans_in(text: str, a: int, b: int) -> list[tuple[int, int]]:
    return [(a + x, a + y) for x, y in sentence_spans(text[a:b])]


_SPLITTERS: tuple[Callable[[str, int, int], list[tuple[int, int]]], ...] = (
    _sentence_spans_in, _clause_spans, _word_spans,
)


def _char_spans(text: str, a: int, b: int, max_tokens: int) -> list[tuple[int, int]]:
    """Last resort for a single over-long 'word' (a URL, unspaced script): longest prefixes in budget."""
    spans = []
    while a < b:
        lo, hi = a + 1, b
        while lo < hi:  # largest end with tokens(a, end) <= max_tokens
            mid = (lo + hi + 1) // 2
            if _span_tokens(text, a, mid) <= max_tokens:
                lo = mid
            else:
                hi = mid - 1
        spans.append((a, lo))
        a = lo
    return spans


def bounded_spans(text: str, a: int, b: int, max_tokens: int, level: int = 0) -> list[tuple[int, int]]:
    """Cut text[a:b] into consecutive spans of at most `max_tokens` tokens each, preferring sentence, then
    clause, then word boundaries, and packing neighbours greedily so pieces stay as long as allowed."""
    if max_tokens < 1:
        raise ValueError("max_tokens must be at least 1")
    if _span_tokens(text, a, b) <= max_tokens:
        return [(a, b)]
    if level >= len(_SPLITTERS):
        return _char_spans(text, a, b, max_tokens)
    parts = _SPLITTERS[level](text, a, b)
    if len(parts) <= 1:
        return bounded_spans(text, a, b, max_tokens, level + 1)
    out: list[tuple[int, int]] = []
    current: tuple[int, int] | None = None
    for part in parts:
        if _span_tokens(text, *part) > max_tokens:
            if current:
                out.append(current)
            *done, current = bounded_spans(text, part[0], part[1], max_tokens, level + 1)
            out.extend(done)  # the last piece may still take the next parts
        elif current and _span_tokens(text, current[0], part[1]) <= max_tokens:
            current = (current[0], part[1])
        else:
            if current:
                out.append(current)
            current = part
    if current:
        out.append(current)
    return out


def split_long_unit(text: str, max_tokens: int) -> list[str]:
    """`text` as pieces of at most `max_tokens` tokens (whitespace collapsed), cut at sentence, clause or
    word boundaries; used when a unit is longer than a model's context allows."""
    span = trim_span(text, 0, len(text))
    if not span:
        return []
    return [" ".join(text[a:b].split()) for a, b in bounded_spans(text, span[0], span[1], max_tokens)]


def split_oversized(units: Iterable[KnowledgeUnit], limit: int) -> list[KnowledgeUnit]:
    """Units longer than `limit` tokens are split (sources kept), so a cluster fits the examiner's context."""
    out: list[KnowledgeUnit] = []
    for unit in units:
        if unit.token_count <= limit:
            out.append(unit)
            continue
        out += [make_unit(part, unit.sources) for part in split_long_unit(unit.text, limit)]
    return out


# --- building units --------------------------------------------------------------------------------------

_MARKDOWN_HEADING = re.compile(r"#{1,6}\s")
_HAS_WORD = re.compile(r"\w")


def _is_statement(text: str) -> bool:
    """False for pieces that state nothing: Markdown headings, rules, lone punctuation."""
    return bool(_HAS_WORD.search(text)) and not _MARKDOWN_HEADING.match(text)


def _passage_unit_spans(text: str, max_tokens: int, min_tokens: int) -> list[tuple[int, int]]:
    sentences = [s for s in sentence_spans(text) if _is_statement(text[s[0]:s[1]])]
    pieces = [p for s in sentences for p in bounded_spans(text, s[0], s[1], max_tokens)]
    groups: list[tuple[int, int]] = []
    for a, b in pieces:
        if groups and _span_tokens(text, *groups[-1]) < min_tokens and _span_tokens(text, groups[-1][0], b) <= max_tokens:
            groups[-1] = (groups[-1][0], b)
        else:
            groups.append((a, b))
    if (len(groups) >= 2 and _span_tokens(text, *groups[-1]) < min_tokens
            and _span_tokens(text, groups[-2][0], groups[-1][1]) <= max_tokens):
        groups[-2:] = [(groups[-2][0], groups[-1][1])]
    return groups


def _collect(items: Iterable[tuple[str, Source]]) -> list[KnowledgeUnit]:
    """Units from (text, source) pairs; equal statements (same id) become one unit with all sources."""
    texts: dict[str, str] = {}
    sources: dict[str, dict[Source, None]] = {}  # an ordered set: a line repeated 10^5 times stays linear
    for text, source in items:
        uid = unit_id(text)
        if uid not in texts:
            texts[uid] = text
            sources[uid] = {}
        sources[uid][source] = None
    return [make_unit(texts[uid], sources[uid]) for uid in texts]


def sentence_units(corpus: Corpus | Iterable[Passage], max_tokens: int = 80, min_tokens: int = 8) -> list[KnowledgeUnit]:
    """Units without a model: one per sentence, short sentences merged with a neighbour (within the same
    passage) until they reach `min_tokens`, none longer than `max_tokens`. Markdown headings and pieces
    without a word are left out. Order follows the corpus. Passages are read once, as they come, so a
    generator (e.g. one that ticks a progress bar) works."""
    if min_tokens > max_tokens:
        raise ValueError("min_tokens must not exceed max_tokens")
    passages = corpus.passages if isinstance(corpus, Corpus) else corpus

    def items() -> Iterable[tuple[str, Source]]:
        for p in passages:
            for a, b in _passage_unit_spans(p.text, max_tokens, min_tokens):
                yield p.text[a:b], Source(document=p.document, passage_id=p.id, start=p.start + a, end=p.start + b)

    return _collect(items())


def units_from_statements(statements: Sequence[tuple[Passage, str]]) -> list[KnowledgeUnit]:
    """Units from statements an extraction model drew from passages; each points at its whole passage.
    Empty statements are dropped; equal ones (after normalisation) are merged."""
    return _collect(
        (text, Source(document=p.document, passage_id=p.id, start=p.start, end=p.end))
        for p, text in statements
        if text and text.strip()
    )


# --- near duplicates -------------------------------------------------------------------------------------

def unit_rows(vectors: np.ndarray, *, in_place: bool = False) -> np.ndarray:
    """float32 rows scaled to unit length (a zero row stays zero): dot products are then cosines.
    `in_place`: a writable float32 array is scaled where it is (the same numbers, no second copy of every
    vector); any other input is copied as without it."""
    x = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    norms = np.where(norms == 0, 1, norms)
    if in_place and x is vectors and x.flags.writeable:
        return np.divide(x, norms, out=x)
    return x / norms


def near_duplicate_groups(vectors: np.ndarray, threshold: float = 0.95, *, normalised: bool = False,
                          exact_up_to: int | None = None) -> list[list[int]]:
    """Groups of row indices linked by cosine similarity >= threshold (connected components), each sorted,
    groups ordered by their first index. `normalised=True` says the rows already have unit length (no
    copy is made). The linked pairs come from `close_pairs`, which finds every one of them exactly (the
    cosine of float32 unit rows, in float64) without comparing every pair in full, up to `exact_up_to`
    rows (close_pairs.EXACT_UP_TO when None); past it, from its probed search."""
    x = np.asarray(vectors, dtype=np.float32) if normalised else unit_rows(vectors)
    if len(x) == 0:
        return []
    return linked_groups(len(x), *close_pairs(x, threshold, exact_up_to=exact_up_to))


def linked_groups(n: int, first: np.ndarray, second: np.ndarray) -> list[list[int]]:
    """The connected components of rows 0..n-1 linked by the pairs (first[i], second[i]), each sorted,
    ordered by their first row. SciPy takes the pairs as arrays (a networkx graph cost about 1 KB per
    unit)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    links = coo_matrix((np.ones(len(first), dtype=np.int8), (first, second)), shape=(n, n))
    _, labels = connected_components(links, directed=False)
    order = np.argsort(labels, kind="stable")  # by component, each component's rows ascending
    bounds = np.flatnonzero(np.diff(labels[order])) + 1
    return sorted((part.tolist() for part in np.split(order, bounds)), key=lambda g: g[0])


def merge_near_duplicates(units: Sequence[KnowledgeUnit], vectors: np.ndarray, threshold: float = 0.95, *,
                          scale_in_place: bool = False, exact_up_to: int | None = None) -> list[KnowledgeUnit]:
    """One unit per group of near-duplicates: the text of the member most similar to the others (first one
    on ties), the union of all members' sources. `vectors[i]` embeds `units[i]`. Deterministic.
    `scale_in_place`: the caller is done with `vectors`, which may then be scaled to unit length where they
    are instead of copied (a corpus's vectors are 1.5 KB a unit; prepare_units drops them after).
    `exact_up_to`: see `near_duplicate_groups`."""
    if len(units) != len(vectors):
        raise ValueError(f"{len(units)} units but {len(vectors)} vectors")
    if not units:
        return []
    x = unit_rows(vectors, in_place=scale_in_place)
    merged = []
    for group in near_duplicate_groups(x, threshold, normalised=True, exact_up_to=exact_up_to):
        if len(group) == 1:
            merged.append(units[group[0]])
            continue
        sub = x[group]
        centrality = (sub @ sub.T).sum(axis=1)
        keep = units[group[int(np.argmax(centrality))]]  # argmax returns the first maximum: deterministic
        sources = dict.fromkeys(s for i in group for s in units[i].sources)  # ordered, without repeats
        merged.append(keep.model_copy(update={"sources": tuple(sources)}))
    return merged


# --- persistence -----------------------------------------------------------------------------------------

def save_units(path: str | Path, units: Iterable[KnowledgeUnit]) -> None:
    """Write units as JSON lines (the run directory's units.jsonl)."""
    with open(path, "w", encoding="utf-8") as fh:
        for u in units:
            fh.write(u.model_dump_json() + "\n")


def load_units(path: str | Path) -> list[KnowledgeUnit]:
    """Read units written by `save_units` (the one JSONL policy: a torn last line is left out)."""
    return read_jsonl(path, KnowledgeUnit.model_validate_json).rows
