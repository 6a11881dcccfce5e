"""The exam graph's typed state: what routing and resuming need, and keys to everything else.

What lives where, and why:
- In the graph state (saved by LangGraph's checkpointer after EVERY node, so it must stay small and
  must not grow with the corpus): the round, status and stop reason, the active targets, the probe
  count, the counters, the rounds' summaries (bounded by rounds x targets), and keys.
- In the run's state store (state.sqlite, examiner/exam/statestore.py; written once per change, each
  value immutable under the sha256 of its JSON): everything that grows with the corpus, behind those
  keys: per target a CoverageBook (pool, coverage, counters per unit), per target its round's clusters,
  and the work lists of the round (question, answer and verdict ids). A node reads the values its state
  names and returns new keys for the values it changed; a rerun after a kill reads the same values
  again, so it writes the same ones (examiner/exam/statestore.py says why that makes resuming safe).
- In the run directory's records (units, questions, answers, verdicts: examiner/exam/run_writer.py): the
  exam's results, which the work lists name by id.
"""

from __future__ import annotations

from typing import Any, TypedDict

from examiner.core.records import RunStatus


class ClusterState(TypedDict):
    id: str
    center: str
    members: list[str]
    """Unit ids, the center first, the rest by similarity to the center."""


class CoverageBook(TypedDict):
    """One target's standing, unit by unit (a state-store value)."""

    pool: list[str]
    """Ids of units not yet covered (sorted)."""
    covered: dict[str, str]
    """Unit id -> id of the verdict that covered it."""
    targeted: dict[str, int]
    """How often each unit was targeted and judged unrelated (targeted without coverage)."""
    times: dict[str, int]
    """How often each unit was a question's target at all."""
    unit_cluster: dict[str, str]
    """Unit id -> cluster id in the latest round it was clustered."""
    unanswered: list[str]
    """Units judged unrelated `max_targeted` times: out of the pool, never covered."""


WORK_LISTS = ("pending", "to_judge", "judged", "round_verdicts")
"""The state's keys that name a list of record ids in the state store."""


COUNTERS = ("ignored_verdicts", "unparseable_judgments", "unparseable_questions", "leak_rejections")
"""The exam's counters (ExamState.counters), each 0 when a run starts."""


class ExamState(TypedDict, total=False):
    round: int
    """The round in progress (1-based)."""
    status: RunStatus
    """How the run stands: running until a node records a stop (budget_exhausted, incomplete, failed) or
    `finish` completes it."""
    stop_reason: str
    active: list[str]
    """Targets still being examined (a target stops when its pool is empty or stops shrinking)."""
    pool_left: dict[str, int]
    """Per target: units in its pool (the progress bars show it without reading the books)."""
    books: dict[str, str]
    """Per target: key of its CoverageBook."""
    clusters: dict[str, str]
    """Per active target: key of this round's list[ClusterState] (targets with one pool share a key)."""
    pending: str
    """Key of the question ids waiting for answers."""
    to_judge: str
    """Key of the answer ids waiting for the judge."""
    judged: str
    """Key of the answer ids judged in the latest judge step (probe candidates)."""
    round_verdicts: str
    """Key of the verdict ids of the round in progress."""
    probes_done: int
    rounds: list[dict[str, Any]]
    """RoundSummary dicts."""
    counters: dict[str, int]
    """ignored_verdicts, unparseable_judgments, unparseable_questions, leak_rejections."""
