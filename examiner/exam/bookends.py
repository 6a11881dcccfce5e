"""First and last nodes of the exam: corpus -> knowledge units, and final outcomes + reports."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from dataclasses import asdict
from itertools import islice
from typing import Any

import numpy as np

from examiner.corpus.reading import Corpus, corpus_languages, exam_language, load_corpus, passage_rows
from examiner.core.errors import UserError
from examiner.exam.extraction import SkippedPassage, extract_corpus
from examiner.exam.nodes.context import ExamContext
from examiner.core.records import QuestionRecord, RunInfo, SourceRef, UnitOutcome, UnitRecord, VerdictRecord
from examiner.exam.state import COUNTERS, WORK_LISTS, CoverageBook, ExamState
from examiner.corpus.units import KnowledgeUnit, merge_near_duplicates, sentence_units, split_oversized, units_from_statements
from examiner.corpus.vectors import EMBED_CHUNK

log = logging.getLogger(__name__)

def _sentence_units(ctx: ExamContext, corpus: Corpus) -> list[KnowledgeUnit]:
    """`sentences` unit mode, with a bar over the passages (about a second per MB of text)."""
    passages = corpus.passages
    with ctx.progress.stage(0, "sentence units", len(passages), 0) as tick:
        return sentence_units(tick.each(passages), max_tokens=ctx.exam.max_unit_tokens,
                              min_tokens=ctx.exam.min_unit_tokens)


async def _embed(ctx: ExamContext, texts: list[str]) -> np.ndarray:
    """Unit embeddings, the embedder's EMBED_CHUNK texts per call so the bar moves on a large corpus (a
    corpus of fewer units is embedded in one call, exactly as before). Each chunk goes straight into the
    result: concatenating the chunks at the end held every vector twice (1.5 KB a unit)."""
    out: np.ndarray | None = None
    with ctx.progress.stage(0, "embed units", len(texts), 0) as tick:
        for lo in range(0, len(texts), EMBED_CHUNK):
            chunk = texts[lo:lo + EMBED_CHUNK]
            part = await asyncio.to_thread(ctx.embedder.embed, chunk)
            if out is None:
                out = np.empty((len(texts), *part.shape[1:]), dtype=part.dtype)
            out[lo:lo + len(chunk)] = part
            tick.advance(len(chunk))
    assert out is not None, "prepare embeds at least one unit"
    return out


async def prepare_units(ctx: ExamContext, paths: list[str], jsonl_field: str) -> dict[str, Any]:
    """Load the corpus, extract and de-duplicate units, write units.jsonl; initial exam state."""
    exam = ctx.exam
    _, examiner_spec = ctx.settings.endpoint_for("examiner")
    split_limit = max(16, examiner_spec.context_tokens // 8)
    skipped: list[SkippedPassage] = []
    vectors: np.ndarray | None = None
    if exam.prepare_engine == "ray":  # reading, units and embedding as Ray Data stages (the `ray` extra)
        from examiner.exam.ray_prepare import prepare_with_ray

        prepared = await prepare_with_ray(ctx, paths, jsonl_field, split_limit)
        corpus, units, vectors = prepared.corpus, prepared.units, prepared.vectors
        ctx.gateway.language = exam_language(corpus, exam.language)
    else:
        corpus = await asyncio.to_thread(load_corpus, paths, jsonl_field=jsonl_field)
        # Every call from here on (extraction included) works in the exam's language.
        ctx.gateway.language = exam_language(corpus, exam.language)
        if exam.unit_mode == "llm":
            extracted = await extract_corpus(ctx, corpus)
            if extracted.stop:  # calls failed for good: stop before any unit is written (resume extracts again)
                return {**start_state(ctx, []), **extracted.stop}
            units, skipped = units_from_statements(extracted.found), extracted.skipped
        else:
            units = await asyncio.to_thread(_sentence_units, ctx, corpus)
        units = split_oversized(units, split_limit)
    if not units:
        _note_corpus(ctx, corpus, 0, skipped)
        if skipped:
            raise UserError(f"no knowledge units could be made from {', '.join(paths)}: the examiner drew no "
                            f"statement from any of its {len(corpus.passages)} passages (first reason: "
                            f"{skipped[0].reason}); run.json lists them as skipped_passages")
        raise UserError(f"no knowledge units could be made from {', '.join(paths)} (the text is empty or too short)")
    if vectors is None:
        vectors = await _embed(ctx, [u.text for u in units])
    units = await asyncio.to_thread(merge_near_duplicates, units, vectors, threshold=exam.dedup_threshold,
                                    scale_in_place=True, exact_up_to=exam.dedup_exact_up_to)
    del vectors  # not held while the records are made (1.5 KB a unit): the cluster node reads its own
    records = [
        UnitRecord(
            id=u.id, text=u.text, token_count=u.token_count,
            sources=[SourceRef(document=s.document, passage_id=s.passage_id, start=s.start, end=s.end) for s in u.sources],
        )
        for u in units
    ]
    ctx.store.append(records)
    ctx.store.write_passages(passage_rows(corpus))
    ctx.units = ctx.store.index(UnitRecord)  # read from units.jsonl on access: not 1-2 KB a unit held
    ctx.passages = {p.id: p.text for p in corpus.passages}
    _note_corpus(ctx, corpus, len(records), skipped)
    return start_state(ctx, sorted(ctx.units))


def start_state(ctx: ExamContext, pool: list[str]) -> dict[str, Any]:
    """Round 1 with every target's pool set to `pool` (sorted unit ids) and nothing covered yet (the
    estimate's pilot narrows the pool with it)."""
    empty: CoverageBook = {"pool": pool, "covered": {}, "targeted": {}, "times": {}, "unit_cluster": {},
                           "unanswered": []}
    book = ctx.keep(empty)
    nothing = ctx.keep([])
    return {
        "round": 1,
        "status": "running",
        "stop_reason": "",
        "active": list(ctx.targets),
        "pool_left": {t: len(pool) for t in ctx.targets},
        "books": {t: book for t in ctx.targets},
        "clusters": {},
        **{name: nothing for name in WORK_LISTS},
        "probes_done": 0,
        "rounds": [],
        "counters": dict.fromkeys(COUNTERS, 0),
    }


def _note_corpus(ctx: ExamContext, corpus: Corpus, units: int, skipped: list[SkippedPassage]) -> None:
    """The corpus figures in run.json (skipped files and passages listed), and one progress line."""
    info = ctx.store.read_info()
    info.documents = len(corpus.documents)
    info.passages = len(corpus.passages)
    info.units = units
    info.skipped_files = [{"path": s.path, "reason": s.reason} for s in corpus.skipped]
    info.skipped_passages = [asdict(s) for s in skipped]
    info.decoded_with_replacement = list(corpus.decoded_with_replacement)
    info.languages = corpus_languages(corpus)
    info.language = ctx.gateway.language
    ctx.store.write_info(info)
    ctx.progress.note(
        f"corpus: {len(corpus.documents)} documents, {len(corpus.passages)} passages, {units} knowledge units"
        + (f", {len(corpus.skipped)} files skipped" if corpus.skipped else "")
        + (f", {len(skipped)} passages gave no unit" if skipped else "")
    )


OUTCOMES_PER_WRITE = 8192
"""Outcome records built and appended at a time: a 200,000-unit run does not hold them all decoded."""


def outcomes(ctx: ExamContext, state: ExamState) -> Iterator[UnitOutcome]:
    """Final standing of every unit for every target, one record at a time."""
    verdicts = ctx.store.index(VerdictRecord)
    questions = ctx.store.index(QuestionRecord)
    for target in ctx.targets:
        book = ctx.book(state, target)
        covered, unit_cluster = book["covered"], book["unit_cluster"]
        unanswered = set(book["unanswered"])
        for uid in sorted(ctx.units):
            verdict = verdicts.get(covered[uid]) if uid in covered else None
            if verdict is not None:
                status = verdict.verdict
            elif uid in unanswered:
                status = "unanswered"
            else:
                status = "uncovered"
            question = questions.get(verdict.question_id) if verdict else None
            yield UnitOutcome(
                unit_id=uid, target=target, status=status,  # type: ignore[arg-type]
                verdict_id=verdict.id if verdict else None,
                times_targeted=book["times"].get(uid, 0),
                times_targeted_uncovered=book["targeted"].get(uid, 0),
                covered_round=verdict.round if verdict else None,
                cluster_id=(question.cluster_id if question else unit_cluster.get(uid)),
                qtype=question.qtype if question else None,
            )


def finish(ctx: ExamContext, state: ExamState) -> dict[str, Any]:
    """Write outcomes and run.json with the final status; reports are built by the runner afterwards."""
    status = state.get("status", "running")
    final = "completed" if status == "running" else status
    records = outcomes(ctx, state)
    while batch := list(islice(records, OUTCOMES_PER_WRITE)):
        ctx.store.append(batch)
    info = ctx.store.read_info()
    info.status = final  # type: ignore[assignment]
    info.stop_reason = state.get("stop_reason", "")
    from examiner.core.records import RoundSummary

    info.rounds = [RoundSummary.model_validate(r) for r in state.get("rounds", [])]
    counters = state.get("counters", {})
    info.ignored_verdicts = counters.get("ignored_verdicts", 0)
    info.unparseable_judgments = counters.get("unparseable_judgments", 0)
    info.unparseable_questions = counters.get("unparseable_questions", 0)
    info.leak_rejections = counters.get("leak_rejections", 0)
    info.finished = time.time()
    ctx.store.write_info(info)
    return {"status": final}


def load_for_resume(ctx: ExamContext) -> None:
    """Reload units and passages from the run directory (the checkpointer keeps only keys); units.jsonl
    is read once, into the store's index, which ctx.units reads without a copy."""
    ctx.units = ctx.store.index(UnitRecord)
    ctx.gateway.language = ctx.store.read_info().language
    for passage_id, row in ctx.store.read_passages().items():
        ctx.passages[passage_id] = row["text"]


__all__ = ["prepare_units", "start_state", "finish", "outcomes", "load_for_resume", "RunInfo"]
