"""Exam modes as strategies: what differs between Ref-Eval and its two LLM-judge baselines.

- `RefEval` (docs/METHODS.md section 1): k-means clusters of the pool, one question per cluster, probes,
  rounds until the pool is empty or stops shrinking; units judged against their own text.
- `TopBaseline`: every unit asked about alone, judged against its source passage, one pass, no probes
  (the most thorough and most expensive scheme; Ref-Eval aims to match it at a fraction of its cost).
- `NoReference`: Ref-Eval's questions and rounds, judged without any reference text.

The nodes ask the mode object, never its name.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from examiner.core.records import UnitRecord
from examiner.corpus.vectors import k_for, kmeans, project_2d
from examiner.core.stages import Stage

MAX_PROJECTED = 20000
"""Most units of a pool whose 2-D coordinates a round keeps (in clusters/<target>/round-N.json): a larger pool
keeps a seeded sample of this many (PCA fitted on the sample), so the record and the map stay bounded at
any pool size. The report's maps draw at most a few thousand of them (report.figures.MAP_POINTS)."""


class ExamMode:
    """What a mode decides, with Ref-Eval's answers; the baselines override what they change."""

    name = "refeval"
    probes = True
    """Whether answers that left targets unrelated get follow-up probes."""
    reads_references = True
    """Whether the judge is shown reference text (False: the judge relies on its own knowledge)."""
    judge_stage: str = Stage.JUDGE
    """Ledger stage of the reference judge's calls."""

    def groups(self, pool: list[str], vectors: np.ndarray, cluster_size: int, seed: int) -> list[list[str]]:
        """The round's clusters over `pool` (unit ids), each with its center first and the other
        members by similarity to the center."""
        result = kmeans(vectors, self.cluster_count(len(pool), cluster_size), seed=seed)
        groups = []
        for members, center in zip(result.member_lists(), result.centers.tolist()):  # every cluster non-empty
            order = np.argsort(-(vectors[members] @ vectors[center]), kind="stable")
            ranked = [pool[int(members[i])] for i in order]
            ranked.remove(pool[center])
            groups.append([pool[center]] + ranked)
        return groups

    def cluster_count(self, pool: int, cluster_size: int) -> int:
        """How many clusters (so questions) a round makes of a pool of `pool` units."""
        return k_for(pool, cluster_size)

    def projection(self, pool: list[str], vectors: np.ndarray, seed: int) -> dict[str, tuple[float, float]]:
        """2-D coordinates of the pool (at most MAX_PROJECTED of its units) for the report's maps (empty when
        there is nothing to draw)."""
        if len(pool) < 2:
            return {}
        if len(pool) > MAX_PROJECTED:
            rows = np.sort(np.random.default_rng(seed).choice(len(pool), MAX_PROJECTED, replace=False))
            pool, vectors = [pool[i] for i in rows.tolist()], vectors[rows]
        coords = project_2d(vectors, "pca", seed=seed)
        return {uid: (float(x), float(y)) for uid, (x, y) in zip(pool, coords)}

    def reference(self, unit: UnitRecord, passages: Mapping[str, str]) -> str:
        """The text a unit is judged against."""
        return unit.text

    def last_round(self, round: int, max_rounds: int) -> str | None:
        """Why the exam ends after `round` even with units left in the pool, or None to go on."""
        return f"max rounds ({max_rounds})" if round >= max_rounds else None


class RefEval(ExamMode):
    """Ref-Eval itself (docs/METHODS.md section 1): the defaults above."""


class TopBaseline(ExamMode):
    """One unit per question, judged against its source passage, in one pass."""

    name = "top"
    probes = False
    judge_stage = Stage.JUDGE_TOP

    def groups(self, pool: list[str], vectors: np.ndarray, cluster_size: int, seed: int) -> list[list[str]]:
        return [[uid] for uid in pool]

    def cluster_count(self, pool: int, cluster_size: int) -> int:
        return pool

    def projection(self, pool: list[str], vectors: np.ndarray, seed: int) -> dict[str, tuple[float, float]]:
        return {}

    def reference(self, unit: UnitRecord, passages: Mapping[str, str]) -> str:
        """The unit's first source passage (the unit's own text when the passage is unknown)."""
        return passages.get(unit.sources[0].passage_id, unit.text)

    def last_round(self, round: int, max_rounds: int) -> str | None:
        return "one pass (top baseline)"


class NoReference(ExamMode):
    """Ref-Eval's questions, judged without reference text."""

    name = "noref"
    reads_references = False

    def reference(self, unit: UnitRecord, passages: Mapping[str, str]) -> str:
        return ""


MODES: dict[str, ExamMode] = {mode.name: mode for mode in (RefEval(), TopBaseline(), NoReference())}
"""Every exam mode by the name `--mode` takes and run.json records."""

__all__ = ["MODES", "ExamMode", "NoReference", "RefEval", "TopBaseline"]
