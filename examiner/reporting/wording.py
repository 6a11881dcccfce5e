"""The wording check's figures for one run: the variance of a question's accuracy in cluster, wording and
judge parts per target, and for each pair of targets the wording variance of their difference and the
chance that rewording every question reverses it (examiner.stats.wording).

Why here: the records (rewording.jsonl, verdicts, self_check.jsonl) are read into the tables the statistics
take. A question's accuracy is the share of its units answered right (labelled correct), so that every
wording of a question counts the same units; round 1's questions only (every unit is asked once there).
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from examiner.core.records import QuestionRecord, SelfCheckRecord, UnitRecord, VerdictRecord, WordingRecord
from examiner.core.rundir import RunDir
from examiner.stats.correlation import Figures
from examiner.stats.wording import (WordingParts, cross_document_weight, crossed_parts, decompose, judge_variance,
                                    rank_flip_probability)

__all__ = ["PairWording", "WordingSection", "difference_wording_variance", "first_round", "tables_of", "wording_section", "wording_line"]


@dataclass(frozen=True)
class PairWording(Figures):
    """Target B against target A on round 1's units: the difference in the share answered right, the
    wording variance of the per-unit difference, the variance a shared wording adds to a document-clustered
    variance of the difference, and the chance a rewording reverses the difference's sign."""

    a: str
    b: str
    difference: float
    wording_variance: float
    added_variance: float
    rank_flip: float


@dataclass(frozen=True)
class WordingSection(Figures):
    """The wording check of one run: K, the questions re-asked, each target's parts and each pair."""

    paraphrases: int
    questions: int
    targets: dict[str, WordingParts]
    pairs: list[PairWording]


def _right(label: str) -> float:
    return 1.0 if label == "correct" else 0.0


def tables_of(records: Mapping[str, WordingRecord]) -> dict[str, dict[str, np.ndarray]]:
    """target -> cluster -> wordings x units (1 = right), complete wordings only (every unit labelled)."""
    by: dict[tuple[str, str], dict[int, dict[str, str]]] = defaultdict(dict)
    for r in records.values():
        by[(r.target, r.cluster_id)][r.wording] = r.labels
    found: dict[str, dict[str, np.ndarray]] = defaultdict(dict)
    for (target, cluster), wordings in by.items():
        if 0 not in wordings or len(wordings) < 2:
            continue
        units = sorted(wordings[0])
        rows = [[_right(wordings[w][u]) for u in units] for w in sorted(wordings) if set(wordings[w]) == set(units)]
        found[target][cluster] = np.array(rows)
    return found


def first_round(questions: Mapping[str, QuestionRecord], verdicts: Mapping[str, VerdictRecord]
                 ) -> dict[str, dict[str, dict[str, float]]]:
    """target -> round 1 cluster -> unit -> 1 when answered right, from the exam's verdicts."""
    asked = {q.id: q for q in questions.values() if q.kind == "question" and q.round == 1 and q.status == "ok"}
    found: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for v in verdicts.values():
        q = asked.get(v.question_id)
        if q is not None and v.unit_id in q.targets:
            found[v.target][q.cluster_id][v.unit_id] = _right(v.verdict)
    return found


def wording_section(run_dir: str | Path) -> WordingSection | None:
    """The run's wording figures, or None when it re-asked nothing."""
    store = RunDir(run_dir)
    records = store.records(WordingRecord)
    if not records:
        return None
    paraphrases = max(r.wording for r in records.values())
    tables = tables_of(records)
    exam = first_round(store.records(QuestionRecord), store.records(VerdictRecord))
    verdicts = store.records(VerdictRecord)
    checks = store.records(SelfCheckRecord).values()
    firsts = {(v.answer_id, v.unit_id): v.verdict for v in verdicts.values()}
    pairs_of_marks = [(_right(firsts[(c.answer_id, u)]), _right(label)) for c in checks
                      for u, label in c.labels.items() if (c.answer_id, u) in firsts]
    judge = judge_variance([a for a, _ in pairs_of_marks], [b for _, b in pairs_of_marks])
    parts = {}
    for target in sorted(tables):
        clusters = exam.get(target, {})
        accuracies = [float(np.mean(list(units.values()))) for units in clusters.values() if units]
        sizes = [len(units) for units in clusters.values() if units]
        parts[target] = decompose(accuracies, sizes, crossed_parts(list(tables[target].values())), judge,
                                  len(pairs_of_marks))
    units = store.records(UnitRecord)
    pairs = [_pair(a, b, tables, exam, units) for a, b in itertools.combinations(sorted(tables), 2)]
    reasked = {r.cluster_id for r in records.values()}
    return WordingSection(paraphrases, len(reasked), parts, pairs)


def _pair(a: str, b: str, tables: Mapping[str, Mapping[str, np.ndarray]],
          exam: Mapping[str, Mapping[str, Mapping[str, float]]], units: Mapping[str, UnitRecord]) -> PairWording:
    shared = [c for c in tables[a] if c in tables[b] and tables[a][c].shape == tables[b][c].shape]
    wording = crossed_parts([tables[b][c] - tables[a][c] for c in shared]).wording
    questions, documents, diffs = [], [], []
    for cluster, by_unit in exam.get(a, {}).items():
        other = exam.get(b, {}).get(cluster, {})
        for uid, right in by_unit.items():
            if uid in other:
                questions.append(cluster)
                record = units.get(uid)
                documents.append(record.sources[0].document if record is not None and record.sources else uid)
                diffs.append(other[uid] - right)
    difference = float(np.mean(diffs)) if diffs else math.nan
    added = wording * cross_document_weight(questions, documents) if math.isfinite(wording) else math.nan
    return PairWording(a, b, difference, wording, added, rank_flip_probability(difference, wording, questions))


def difference_wording_variance(run_a: str | Path, target_a: str, run_b: str | Path, target_b: str) -> float:
    """The wording variance of the per-unit difference B - A: from the tables of the questions both
    targets answered in the same wordings (one run), else the sum of each target's own wording variance
    (two runs: their wordings were written apart, taken as independent); nan when a side measured none."""
    tables_a = tables_of(RunDir(run_a).records(WordingRecord)).get(target_a, {})
    same_run = Path(run_a).resolve() == Path(run_b).resolve()
    tables_b = tables_of(RunDir(run_b).records(WordingRecord)).get(target_b, {})
    if not tables_a or not tables_b:
        return math.nan
    if same_run:
        shared = [c for c in tables_a if c in tables_b and tables_a[c].shape == tables_b[c].shape]
        return crossed_parts([tables_b[c] - tables_a[c] for c in shared]).wording
    return crossed_parts(list(tables_a.values())).wording + crossed_parts(list(tables_b.values())).wording


def wording_line(section: WordingSection) -> str:
    """One terminal line: each target's wording share and each pair's rank-flip chance."""
    shares = ", ".join(f"{t} {p.wording_share:.0%}" if math.isfinite(p.wording_share) else f"{t} n/a"
                       for t, p in section.targets.items())
    flips = ", ".join(f"{p.b} vs {p.a} {p.rank_flip:.0%}" for p in section.pairs if math.isfinite(p.rank_flip))
    line = (f"wording: {section.questions} questions re-asked in {section.paraphrases} other wordings; share of "
            f"a question's accuracy variance due to wording: {shares}")
    return line + (f"; chance a rewording reverses the order: {flips}" if flips else "")
