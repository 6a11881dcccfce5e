"""What every exam node shares: the run's resources, deterministic ids, and one fan-out policy.

A node fans its work out with `fan_out` (examiner.llm.fanout.run_bounded under a progress bar) and ends
with `stop_update`: a budget stop routes the graph to `finish` as `budget_exhausted`, every call failing
(an endpoint that is down) as `failed`; records already written are kept either way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from examiner.core.config import ExamSettings, Settings
from examiner.core.contract import ExamTask, Judge
from examiner.core.labels import Verdict
from examiner.core.records import UnitRecord
from examiner.exam.modes import ExamMode
from examiner.exam.paper import Paper
from examiner.exam.progress import ExamProgress
from examiner.judging.cascade import ExamCascade
from examiner.exam.state import ClusterState, CoverageBook, ExamState
from examiner.exam.run_writer import RunStore
from examiner.llm import Gateway
from examiner.llm.fanout import DEFAULT_LIMIT, RunSummary, run_bounded
from examiner.corpus.vectors import EMBED_CHUNK, Embedder

T = TypeVar("T")
R = TypeVar("R")


def stable_id(*parts: object) -> str:
    """Short deterministic id from its inputs (what makes a resumed run write the same records)."""
    return hashlib.sha1("\x1f".join(str(p) for p in parts).encode("utf-8")).hexdigest()[:16]


Sample = Callable[["ExamContext", dict[str, Any]], dict[str, Any]]
"""Narrows the exam's starting state to a sample of its units (the estimate's pilot, exam/estimate.py)."""


@dataclass
class ExamContext:
    """Resources the nodes share; rebuilt on resume (the checkpointer saves only the state)."""

    settings: Settings
    gateway: Gateway
    store: RunStore
    embedder: Embedder
    targets: list[str]
    mode: ExamMode
    judge: Judge[ExamTask, Verdict]
    """Built once for the run (a single judge or a panel); the nodes never ask which."""
    progress: ExamProgress
    units: Mapping[str, UnitRecord] = field(default_factory=dict)
    """Read-only (on resume the run store's own index, not a copy)."""
    passages: dict[str, str] = field(default_factory=dict)
    cascade: ExamCascade | None = None
    """A judge cascade (Settings.judge_cascade): the judge node then settles units cheap or strong
    (examiner/exam/nodes/judge_cascade.py); `judge` stays the strong judge (the self-check uses it)."""
    corpus_paths: list[str] = field(default_factory=list)
    """The corpus files and folders `prepare_units` reads."""
    jsonl_field: str = "text"
    """Text field of .jsonl corpus files."""
    sample: Sample | None = None
    """Narrows the pools `prepare_units` starts with (the estimate's pilot); None: the whole corpus."""
    paper: Paper | None = None
    """An earlier run's questions to sit (`--paper`): the graph starts from the paper instead of the corpus."""
    _vectors: UnitVectors = field(default_factory=lambda: UnitVectors())

    @property
    def exam(self) -> ExamSettings:
        return self.settings.exam

    def unit_texts(self, ids: Sequence[str]) -> list[tuple[str, str]]:
        """(id, text) of units, the shape prompts show them in."""
        return [(uid, self.units[uid].text) for uid in ids]

    def references(self, ids: Sequence[str]) -> tuple[tuple[str, str], ...]:
        """(id, reference text) of units as the exam mode judges them."""
        return tuple((uid, self.mode.reference(self.units[uid], self.passages)) for uid in ids)

    def source_passages(self, ids: Sequence[str]) -> tuple[tuple[str, str], ...]:
        """(id, text of the unit's first source passage) of units whose passage the run holds."""
        found = ((uid, self.units[uid].sources[0].passage_id if self.units[uid].sources else "") for uid in ids)
        return tuple((uid, self.passages[pid]) for uid, pid in found if pid in self.passages)

    def vectors(self, ids: list[str]) -> np.ndarray:
        """Unit embeddings, computed once per run and unit, read-only (see UnitVectors.rows). Units not
        embedded yet go to the run's matrix EMBED_CHUNK at a time, the calls Embedder.embed makes of them
        in one go: embedding the whole round-1 pool first held its vectors twice while they were copied in
        (1.5 KB a unit)."""
        missing = list(dict.fromkeys(uid for uid in ids if uid not in self._vectors.row))
        for lo in range(0, len(missing), EMBED_CHUNK):
            chunk = missing[lo:lo + EMBED_CHUNK]
            self._vectors.add(chunk, self.embedder.embed([self.units[uid].text for uid in chunk]),
                              room=len(missing) - lo)
        return self._vectors.rows(ids)

    # The graph state holds keys; these read and write the values behind them (examiner/exam/state.py).

    def keep(self, value: Any) -> str:
        """Store a state value (once); the key a node returns in its state update."""
        return self.store.values.put(value)

    def book(self, state: ExamState, target: str) -> CoverageBook:
        """A target's coverage book (shared: copy before changing it)."""
        book: CoverageBook = self.store.values.get(state["books"][target])
        return book

    def clusters(self, state: ExamState, target: str) -> list[ClusterState]:
        """A target's clusters of the round in progress."""
        clusters: list[ClusterState] = self.store.values.get(state["clusters"][target])
        return clusters

    def work(self, state: ExamState, name: str) -> list[str]:
        """One of the round's work lists (state.WORK_LISTS): record ids; empty before it is first set."""
        key = state.get(name)
        return list(self.store.values.get(key)) if key else []  # type: ignore[arg-type]


class UnitVectors:
    """Unit embeddings as one float32 matrix (a row per unit, in the order units were embedded) and an
    id -> row index; rows are appended as units get embedded (capacity doubles, so appends stay cheap)."""

    def __init__(self) -> None:
        self.row: dict[str, int] = {}
        self._matrix = np.zeros((0, 0), np.float32)

    def add(self, ids: Sequence[str], vectors: np.ndarray, room: int = 0) -> None:
        """Append the rows of units not embedded before (`ids` distinct, in the order of `vectors`); `room`:
        rows about to be added in all, these included, so that a pool added chunk by chunk grows the
        matrix once, to its size."""
        n, dim = len(self.row), vectors.shape[1]
        if self._matrix.shape[1] != dim:
            self._matrix = np.zeros((0, dim), np.float32)
        need = n + max(len(ids), room)
        if n + len(ids) > self._matrix.shape[0]:
            grown = np.zeros((max(need, 2 * self._matrix.shape[0]), dim), np.float32)
            grown[:n] = self._matrix[:n]
            self._matrix = grown
        self._matrix[n:n + len(ids)] = vectors
        self.row.update((uid, n + i) for i, uid in enumerate(ids))

    def rows(self, ids: Sequence[str]) -> np.ndarray:
        """(len(ids), dim) float32 rows of the units, in the order of `ids`, read-only. When they are the
        matrix's first rows in order (round 1's pool: every unit, as embedded) they are a view of it, not a
        copy (1.5 KB a unit less at the round's peak); rows are never changed once added, so the view
        stays right."""
        if not ids:
            return np.zeros((0, self._matrix.shape[1] or 384), np.float32)
        index = np.fromiter((self.row[uid] for uid in ids), np.int64, len(ids))
        rows = self._matrix[:len(ids)] if np.array_equal(index, np.arange(len(ids))) else self._matrix[index]
        rows.flags.writeable = False
        return rows


def pool_size(state: ExamState) -> int:
    """Units still uncovered over the active targets (shown on the progress bars)."""
    pool_left = state.get("pool_left", {})
    return sum(pool_left.get(t, 0) for t in state["active"])


async def fan_out(
    ctx: ExamContext, state: ExamState, label: str, items: Sequence[T], work: Callable[[T], Awaitable[R]],
    *, limit: int = DEFAULT_LIMIT,
) -> RunSummary[R]:
    """`work` on every item under the runtime's budget and failure policy, with a progress bar; at most
    `limit` items in flight."""
    with ctx.progress.stage(state["round"], label, len(items), pool_size(state)) as tick:
        return await run_bounded(items, work, limit=limit, on_done=lambda _: tick.advance())


def stop_update(summary: RunSummary[Any], stage: str) -> dict[str, Any]:
    """State updates for a node's end: a budget stop, every call failing (endpoint down), or some calls
    failing for good. The last is a stop too: going on would re-ask their units in another round and give
    other verdicts than a run without the outage; stopped `incomplete`, a resume runs the node again, the
    cache answers every call that succeeded and only the failed ones are asked again."""
    if summary.budget_stopped:
        return {"status": "budget_exhausted", "stop_reason": f"budget exhausted during {stage}"}
    if summary.all_failed:
        return {"status": "failed", "stop_reason": f"every {stage} call failed: {summary.first_error()}"}
    if summary.failed:
        return {"status": "incomplete",
                "stop_reason": f"{summary.failed} {stage} call(s) of {len(summary.outcomes)} failed for good: "
                               f"{summary.first_error()}"}
    return {}


def running(state: ExamState) -> bool:
    """False once a node recorded a stop (budget, failure)."""
    return state.get("status", "running") == "running"
