"""The prepare stage's heavy work on Ray Data (the `ray` extra): corpus reading, sentence units and their
embeddings, spread over a Ray cluster's workers (or a local Ray instance), for corpora whose embedding
dominates the run's time.

Three Ray Data stages, each a `map_batches` on Ray's own streaming engine:

1. read: the corpus files (listed on the driver, in `load_corpus` order) are read by workers with the same
   reader as the local path (`examiner.corpus.reading.read_input`); the driver joins the parts in file order
   (`add_input`), so documents, passages, skipped files and passages.jsonl are those of `load_corpus`.
2. units: batches of passages become sentence units (`examiner.corpus.units.sentence_units`) and oversized
   units are split (`split_oversized`), each row keeping the unit it was cut from (`origin`).
3. embed: a callable class (one `Embedder` per worker, its model loaded once) adds each row's vector.

The driver then joins the rows exactly as the local path builds its list: units with the same id from
different batches become one unit whose sources are in corpus order, its text that of its first occurrence,
and units in order of first occurrence (split parts in place of the unit they were cut from). The unit ids
are therefore those of the local path exactly; the vectors are equal up to float rounding (batches of other
lengths pad differently, which moves the last bits; tests/exam/test_ray_prepare.py bounds the difference).

Near-duplicate merging, clustering and everything after stay on the driver. `ray` is imported only inside
these functions, so neither `--help` nor the default (local) path loads it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import pickle
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from examiner.core.config import ExamSettings
from examiner.corpus.reading import Corpus, Passage, add_input, check_not_empty, corpus_inputs, read_input
from examiner.core.errors import UserError
from examiner.exam.nodes.context import ExamContext
from examiner.exam.ray_local import ray_session
from examiner.corpus.units import KnowledgeUnit, Source, sentence_units, split_oversized
from examiner.corpus.vectors import Embedder, text_key

log = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'examiner[ray]'"

FILES_PER_BATCH = 16
"""Corpus files read per task of the read stage."""
PASSAGES_PER_BATCH = 256
"""Passages cut into units per task of the units stage (about 1,000 units of prose)."""
UNITS_PER_BATCH = 512
"""Units per embedding call of an embedding worker (the model encodes them 64 at a time)."""


@dataclass(frozen=True)
class Prepared:
    """What the Ray stages give the prepare node: the corpus, its units and one vector per unit."""

    corpus: Corpus
    units: list[KnowledgeUnit]
    """Units in the order of the local path (`sentence_units` then the oversize split)."""
    vectors: np.ndarray
    """(len(units), dim) float32, row i the embedding of units[i].text."""


def import_ray() -> Any:
    """The `ray` module with Ray Data, or a one-line UserError naming the extra to install."""
    try:
        import ray
        import ray.data  # noqa: F401 - Ray Data is what the stages need (pyarrow, pandas)
    except ImportError as exc:
        raise UserError(f"exam.prepare_engine is `ray` but Ray Data is not installed: {INSTALL_HINT}") from exc
    return ray


def check_ray_engine(exam: ExamSettings) -> None:
    """One-line UserError, before any work, when `prepare_engine: ray` cannot run these settings: the `llm`
    unit mode (its extraction calls go through the driver's gateway) or Ray not installed."""
    if exam.unit_mode != "sentences":
        raise UserError(f"exam.prepare_engine `ray` makes `sentences` units only; unit mode `{exam.unit_mode}` "
                        f"is not supported there: use --prepare-engine local")
    import_ray()


async def prepare_with_ray(ctx: ExamContext, paths: list[str], jsonl_field: str, split_limit: int) -> Prepared:
    """The prepare node's Ray branch: units and vectors from the Ray stages, the vectors put into the
    run's embedding cache (same keys as `Embedder.embed`), so later rounds never embed these texts again."""
    exam = ctx.exam
    check_ray_engine(exam)
    ctx.progress.note(f"prepare on Ray ({exam.ray_address or 'a local Ray instance'}): reading, units, embedding")
    prepared = await asyncio.to_thread(
        prepare_on_ray, paths, jsonl_field=jsonl_field, max_tokens=exam.max_unit_tokens,
        min_tokens=exam.min_unit_tokens, split_limit=split_limit, address=exam.ray_address,
        embed_workers=exam.ray_embed_workers, embed_gpus=exam.ray_embed_gpus)
    embedder = ctx.embedder
    if embedder.cache is not None and prepared.units:
        embedder.cache.put_many(embedder.model_name, [(text_key(u.text, embedder.model_name), v)
                                                      for u, v in zip(prepared.units, prepared.vectors)])
    return prepared


def prepare_on_ray(paths: list[str], *, jsonl_field: str, max_tokens: int, min_tokens: int, split_limit: int,
                   address: str = "", embed_workers: int = 1, embed_gpus: float = 0) -> Prepared:
    """Read, cut into units and embed the corpus at `paths` on Ray: at `address` (`auto`, `ray://head:10001`)
    or, when empty, on a Ray instance started here (and stopped afterwards); reuses Ray when it is already
    initialised in this process. `split_limit` is the token bound of `split_oversized`."""
    ray = import_ray()
    with ray_session(ray, address):  # quiet, no dashboard, a local instance on loopback (exam/ray_local.py)
        _quiet(ray)
        corpus = _read(ray, paths, jsonl_field)
        units, vectors = _units_and_vectors(ray, corpus, max_tokens=max_tokens, min_tokens=min_tokens,
                                            split_limit=split_limit, embed_workers=embed_workers,
                                            embed_gpus=embed_gpus)
    return Prepared(corpus, units, vectors)


def _quiet(ray: Any) -> None:
    """No progress bars or per-dataset log lines: the exam's own progress display stays readable."""
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    logging.getLogger("ray.data").setLevel(logging.WARNING)


# --- stage 1: read ----------------------------------------------------------------------------------------

def _read_files(batch: dict[str, np.ndarray], jsonl_field: str) -> dict[str, list[Any]]:
    """Read stage: each file becomes a one-file corpus (pickled: documents carry nested passages)."""
    parts = [pickle.dumps(read_input(Path(f), d, jsonl_field=jsonl_field))
             for f, d in zip(batch["file"], batch["doc_id"])]
    return {"seq": list(batch["seq"]), "part": parts}


def _read(ray: Any, paths: list[str], jsonl_field: str) -> Corpus:
    """The corpus as `load_corpus` reads it, its files read by Ray workers."""
    corpus = Corpus()
    inputs = list(corpus_inputs(paths, corpus))
    rows = (ray.data.from_items([{"seq": i, "file": str(f), "doc_id": d} for i, (f, d) in enumerate(inputs)])
            .map_batches(_read_files, batch_size=FILES_PER_BATCH, fn_kwargs={"jsonl_field": jsonl_field})
            .take_all()) if inputs else []
    parts = {int(r["seq"]): pickle.loads(r["part"]) for r in rows}
    seen_ids: set[str] = set()
    for i, (file, doc_id) in enumerate(inputs):
        add_input(corpus, seen_ids, file, doc_id, parts[i], jsonl_field=jsonl_field)
    check_not_empty(corpus, paths)
    return corpus


# --- stage 2: units ---------------------------------------------------------------------------------------

def _unit_rows(batch: dict[str, np.ndarray], max_tokens: int, min_tokens: int,
               split_limit: int) -> dict[str, list[Any]]:
    """Units stage: a batch of passages -> one row per unit (or split part) with its sources."""
    passages = [Passage(i, d, int(s), int(e), t)
                for i, d, s, e, t in zip(batch["id"], batch["document"], batch["start"], batch["end"], batch["text"])]
    rows: dict[str, list[Any]] = {k: [] for k in ("batch", "origin", "part", "id", "text", "tokens", "sources")}
    for origin in sentence_units(passages, max_tokens=max_tokens, min_tokens=min_tokens):
        for k, unit in enumerate(split_oversized([origin], split_limit)):
            rows["batch"].append(int(batch["seq"][0]))
            rows["origin"].append(origin.id)
            rows["part"].append(k)
            rows["id"].append(unit.id)
            rows["text"].append(unit.text)
            rows["tokens"].append(unit.token_count)
            rows["sources"].append(json.dumps([[s.document, s.passage_id, s.start, s.end] for s in unit.sources]))
    return rows


# --- stage 3: embed ---------------------------------------------------------------------------------------

class EmbedUnits:
    """Embedding stage: a callable class, so each Ray worker loads the model once and keeps it."""

    def __init__(self) -> None:
        self.embedder = Embedder()

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, Any]:
        return {**batch, "vector": self.embedder.embed([str(t) for t in batch["text"]])}


def _units_and_vectors(ray: Any, corpus: Corpus, *, max_tokens: int, min_tokens: int, split_limit: int,
                       embed_workers: int, embed_gpus: float) -> tuple[list[KnowledgeUnit], np.ndarray]:
    passages = corpus.passages
    items = [{"seq": i, "id": p.id, "document": p.document, "start": p.start, "end": p.end, "text": p.text}
             for i, p in enumerate(passages)]
    rows = (ray.data.from_items(items)
            .map_batches(_unit_rows, batch_size=PASSAGES_PER_BATCH,
                         fn_kwargs={"max_tokens": max_tokens, "min_tokens": min_tokens, "split_limit": split_limit})
            .map_batches(EmbedUnits, batch_size=UNITS_PER_BATCH, concurrency=embed_workers,
                         num_gpus=embed_gpus or None)
            .take_all())
    return join_rows(rows, {p.id: i for i, p in enumerate(passages)})


def join_rows(rows: Iterable[dict[str, Any]], passage_seq: dict[str, int]) -> tuple[list[KnowledgeUnit], np.ndarray]:
    """The local path's unit list from the units stage's rows, whatever the order Ray returned them in.

    Locally, `sentence_units` keeps the first occurrence of each unit id (its text) with every source in
    corpus order, and `split_oversized` then replaces an oversized unit by its parts, in place. Here each
    batch did the same on its passages; per origin unit the parts (and vectors) of the batch holding its
    first occurrence are kept, the sources of every batch are joined in corpus order, and origins are
    ordered by their first source."""
    def position(source: Source) -> tuple[int, int]:
        return passage_seq[source.passage_id], source.start

    first_batch: dict[str, int] = {}
    first_at: dict[str, tuple[int, int]] = {}
    sources: dict[str, set[Source]] = {}
    parts: dict[tuple[str, int], dict[int, dict[str, Any]]] = {}
    for row in rows:
        origin, batch = str(row["origin"]), int(row["batch"])
        parts.setdefault((origin, batch), {})[int(row["part"])] = row
        srcs = [Source(document=d, passage_id=p, start=s, end=e) for d, p, s, e in json.loads(row["sources"])]
        sources.setdefault(origin, set()).update(srcs)
        at = min(position(s) for s in srcs)
        if origin not in first_at or at < first_at[origin]:
            first_at[origin], first_batch[origin] = at, batch
    units: list[KnowledgeUnit] = []
    vectors: list[np.ndarray] = []
    for origin in sorted(first_at, key=first_at.__getitem__):
        ordered = tuple(sorted(sources[origin], key=position))
        chosen = parts[(origin, first_batch[origin])]
        for k in sorted(chosen):
            row = chosen[k]
            units.append(KnowledgeUnit(id=str(row["id"]), text=str(row["text"]), sources=ordered,
                                       token_count=int(row["tokens"])))
            vectors.append(np.asarray(row["vector"], dtype=np.float32))
    return units, (np.stack(vectors) if vectors else np.zeros((0, 0), dtype=np.float32))
