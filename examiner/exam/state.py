"""The exam graph's typed state: ids, counts and round bookkeeping. Bulk records live in the run store.

Every value is plain JSON-like data so the SQLite checkpointer can save it after each node.
"""

from __future__ import annotations

from typing import Any, TypedDict


class ClusterState(TypedDict):
    id: str
    center: str
    members: list[str]
    """Unit ids, the center first, the rest by similarity to the center."""


class ExamState(TypedDict, total=False):
    round: int
    """The round in progress (1-based)."""
    status: str
    """running | completed | budget_exhausted | failed."""
    stop_reason: str
    pools: dict[str, list[str]]
    """Per target: ids of units not yet covered (sorted)."""
    active: list[str]
    """Targets still being examined (a target stops when its pool is empty or stops shrinking)."""
    targeted: dict[str, dict[str, int]]
    """Per target: how often each unit was targeted and judged unrelated (targeted without coverage)."""
    times_targeted: dict[str, dict[str, int]]
    """Per target: how often each unit was a question's target at all."""
    covered: dict[str, dict[str, str]]
    """Per target: unit id -> id of the verdict that covered it."""
    unit_cluster: dict[str, dict[str, str]]
    """Per target: unit id -> cluster id in the latest round it was clustered."""
    unanswered: dict[str, list[str]]
    clusters: dict[str, list[ClusterState]]
    """Per target: this round's clusters."""
    pending: list[str]
    """Question ids waiting for answers."""
    to_judge: list[str]
    """Answer ids waiting for the judge."""
    judged: list[str]
    """Answer ids judged in the latest judge step (probe candidates)."""
    round_verdicts: list[str]
    """Verdict ids of the round in progress."""
    probes_done: int
    rounds: list[dict[str, Any]]
    """RoundSummary dicts."""
    counters: dict[str, int]
    """ignored_verdicts, unparseable_judgments, unparseable_questions, leak_rejections."""
