"""Two targets on the units they share, read from run folders, for `examiner compare` and `examiner gate`.

Why one module: the comparison report and the CI gate ask the same question of the same records (is B
better than A, or not worse?), so both take each shared unit's outcome for the two targets, its source
document, its exam topic and the subgroup keys the run records from here and hand them to
examiner.stats.paired (docs/STATISTICS.md section 1 says what is computed and why).

A unit's outcome is 1 (correct), 0 (incorrect) or None (not covered: unanswered or uncovered). Its
document is the document of its first source; its topic is the round-1 exam cluster it was put in, read
from run A (round 1 clusters the whole pool, and targets of one run sit the same round-1 paper), which also
serves as the exam cluster within its document. Units are shared when both runs hold the same unit id;
unit ids are content hashes, so two runs over the same corpus share their units.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from examiner.reporting.languages import unit_language
from examiner.reporting.model.compare import PairedSection, PairedSubgroup
from examiner.reporting.run_reader import RunData
from examiner.reporting.topics import cluster_names
from examiner.reporting.writer import cell
from examiner.stats.paired import compare_paired, margin_text, paired_subgroups

OUTCOME: dict[str, int] = {"correct": 1, "incorrect": 0, "abstained": 0}
"""A covered unit's outcome for accuracy (a declined answer is not right, as in the report); every other
status (unanswered, uncovered) is None."""
METRIC_OUTCOMES: dict[str, dict[str, int]] = {
    "accuracy": OUTCOME,
    "correct_given_attempted": {"correct": 1, "incorrect": 0},
    "hallucination_rate": {"correct": 1, "incorrect": 0},
    "abstention_rate": {"correct": 1, "incorrect": 1, "abstained": 0},
}
"""What the paired statistics hold per unit for each figure the gate can decide on (None: not counted).
Higher is better for every one: a rate where lower is better is held as its complement (hallucination
rate as not inventing among attempted units, abstention rate as answering among covered ones), so a
drop of the held share by more than the margin is a rise of the rate by more than it."""
LOWER_IS_BETTER = frozenset({"hallucination_rate", "abstention_rate"})
FALSE_DISCOVERY_RATE = 0.05
"""Benjamini-Hochberg rate of the subgroup tests, within each kind of subgroup."""
SUBGROUPS = ("topic", "document", "question type", "language")


@dataclass(frozen=True)
class PairedUnits:
    """The units two targets share, in unit-id order: outcomes of A and B, each unit's document and exam
    cluster, and its key in each kind of subgroup that has two or more keys."""

    unit_ids: tuple[str, ...]
    a: tuple[int | None, ...]
    b: tuple[int | None, ...]
    documents: tuple[str, ...]
    clusters: tuple[str, ...]
    groups: Mapping[str, tuple[str, ...]]

    @property
    def covered_by_both(self) -> int:
        return sum(x is not None and y is not None for x, y in zip(self.a, self.b))


def _round_one_topics(run: RunData, target: str) -> dict[str, str]:
    """Unit id -> round-1 cluster id. Round 1's clustering is one paper for every target of a run and is
    recorded once, under one target; taking a target's earliest recorded round instead gave every other
    target round 2's clusters, so compare and gate (which put the targets in opposite order) weighed the
    wording's covariance over different clusters. The target's own round 1 first, else the run's."""
    for owner in (target, *sorted(run.clusters)):
        for rnd in run.clusters.get(owner, []):
            if rnd.round == 1:
                return {member: cluster.id for cluster in rnd.clusters for member in cluster.members}
    return {}


def topic_label(cluster_id: str, names: Mapping[str, Mapping[str, str | None]]) -> str:
    """A subgroup's name a reader recognises: the cluster's key terms, its id after them in brackets."""
    terms = (names.get(cluster_id) or {}).get("topic")
    return f"{terms} [{cluster_id}]" if terms else cluster_id


def _question_types(run: RunData, target: str) -> dict[str, str]:
    """Unit id -> type of the first question put to `target` about it."""
    types: dict[str, str] = {}
    asked = sorted((q for q in run.questions.values() if q.target == target and q.kind == "question"),
                   key=lambda q: (q.round, q.id))
    for question in asked:
        for unit_id in question.targets:
            types.setdefault(unit_id, question.qtype)
    return types


def paired_units(run_a: RunData, target_a: str, run_b: RunData, target_b: str, *,
                 subgroups: bool = True, metric: str = "accuracy") -> PairedUnits:
    """The units both targets' runs hold, with what the paired statistics need (module docstring).
    subgroups=False leaves `groups` empty: the gate decides on the whole, and naming topics loads
    scikit-learn. `metric` picks the per-unit outcome (METRIC_OUTCOMES)."""
    outcome = METRIC_OUTCOMES[metric]
    outcomes_a, outcomes_b = run_a.outcomes.get(target_a, {}), run_b.outcomes.get(target_b, {})
    shared = sorted(set(outcomes_a) & set(outcomes_b))
    records = {**run_b.units, **run_a.units}
    topics = _round_one_topics(run_a, target_a)
    names = cluster_names(run_a, target_a) if subgroups else {}
    qtypes = _question_types(run_a, target_a) if subgroups else {}
    documents, clusters = [], []
    keys: dict[str, list[str]] = {name: [] for name in SUBGROUPS}
    for unit_id in shared:
        record = records.get(unit_id)
        document = record.sources[0].document if record is not None and record.sources else f"unit:{unit_id}"
        topic = topics.get(unit_id) or outcomes_a[unit_id].cluster_id or f"unit:{unit_id}"
        documents.append(document)
        clusters.append(topic)
        if not subgroups:
            continue
        keys["topic"].append(topic_label(topic, names))
        keys["document"].append(document)
        keys["question type"].append(qtypes.get(unit_id, "not asked"))
        keys["language"].append(unit_language(run_a, unit_id))
    return PairedUnits(
        unit_ids=tuple(shared),
        a=tuple(outcome.get(outcomes_a[u].status) for u in shared),
        b=tuple(outcome.get(outcomes_b[u].status) for u in shared),
        documents=tuple(documents),
        clusters=tuple(clusters),
        groups={name: tuple(values) for name, values in keys.items() if len(set(values)) > 1} if subgroups else {},
    )


def paired_section(a: str, b: str, units: PairedUnits) -> PairedSection:
    """B (`b`) against A (`a`) on their shared units: the paired comparison and its subgroups."""
    result = compare_paired(units.a, units.b, units.documents, units.clusters)
    subgroups = [
        PairedSubgroup(by=by, **row.to_dict())
        for by, keys in units.groups.items()
        for row in paired_subgroups(units.a, units.b, units.documents, keys, units.clusters,
                                    false_discovery_rate=FALSE_DISCOVERY_RATE)
    ]
    return PairedSection(a=a, b=b, **result.to_dict(), false_discovery_rate=FALSE_DISCOVERY_RATE,
                         subgroups=subgroups)


def _signed(value: float | None) -> str:
    return cell(value, 3) if value is None or value != value else f"{value:+.3f}"


def _p(value: float | None) -> str:
    return cell(value) if value is None or value != value else f"{value:.3g}"


def difference_cell(section: PairedSection, which: str = "accuracy") -> str:
    """`+0.120 [+0.040, +0.200]`: a difference B - A with its interval."""
    d = section.accuracy_difference if which == "accuracy" else section.coverage_difference
    return f"{_signed(d.estimate)} [{_signed(d.low)}, {_signed(d.high)}]"


def headline(section: PairedSection) -> str:
    """One line: the accuracy difference B - A, its interval, both tests' p-values and the smallest
    difference the cluster test detects with 80 % power. No post hoc power at the observed difference:
    it is a restatement of the p-value, not evidence beside it."""
    small = ", small sample" if section.small_sample else ""
    return (f"{section.b} - {section.a}: accuracy {difference_cell(section)} "
            f"({round(section.accuracy_difference.level * 100)}% CI), McNemar p {_p(section.mcnemar.p_value)}, "
            f"cluster p {_p(section.clustered_test.p_value)} "
            f"(detectable at {round(section.power.target_power * 100)}% power: "
            f"{cell(section.power.minimum_detectable_effect)}; "
            f"{section.n_units} units, {section.n_documents} {section.top_stage}{small}); "
            f"smallest margin these runs can support: {margin_text(gate_margin(section))}")


def gate_margin(section: PairedSection) -> float:
    """The smallest margin `examiner gate` could pass on this pair's units (nan when unknown)."""
    return math.nan if section.smallest_margin is None else section.smallest_margin


PAIRED_HEADER = ["A", "B", "units", "documents", "accuracy B - A [95% CI]", "coverage B - A [95% CI]",
                 "McNemar p", "cluster p", "design effect", "detectable (80%)"]
SUBGROUP_HEADER = ["by", "subgroup", "units", "documents", "accuracy A", "accuracy B", "B - A [95% CI]", "test",
                   "p", "p (BH)", "significant"]
PAIRED_NOTE = ("Differences are B - A on the units both targets were examined on (accuracy = correct / covered). "
               "Intervals are t on documents - 1 df with the largest of the cluster-robust, independent-units "
               "and exact (Clopper-Pearson) standard errors, at every number of documents. McNemar's exact "
               "test assumes independent units; the cluster test (Obuchowski 1998) allows for units of one "
               "document being alike and rejects exactly when the interval leaves out 0. Detectable is the "
               "smallest difference it finds with 80% power (no post hoc power is shown: at the observed "
               "difference it only restates p). Subgroup p-values are adjusted by "
               "Benjamini-Hochberg within each kind of subgroup (docs/STATISTICS.md).")


def paired_rows(sections: list[PairedSection]) -> list[list[str | int]]:
    """The paired table's cells (PAIRED_HEADER), one row per pair."""
    return [[s.a, s.b, s.n_units, s.n_documents, difference_cell(s), difference_cell(s, "coverage"),
             _p(s.mcnemar.p_value), _p(s.clustered_test.p_value), cell(s.design_effect, 2),
             cell(s.power.minimum_detectable_effect)] for s in sections]


def subgroup_rows(section: PairedSection, limit: int) -> list[list[str | int]]:
    """The first `limit` subgroup rows of a pair (SUBGROUP_HEADER): the significant ones first."""
    ordered = sorted(section.subgroups, key=lambda g: not g.significant)[:limit]
    return [[g.by, g.key, g.n_units, g.n_documents, cell(g.accuracy_a), cell(g.accuracy_b),
             f"{_signed(g.difference)} [{_signed(g.low)}, {_signed(g.high)}]", g.test, _p(g.p_value),
             _p(g.p_adjusted), "yes" if g.significant else "no"] for g in ordered]


__all__ = ["FALSE_DISCOVERY_RATE", "OUTCOME", "PAIRED_HEADER", "PAIRED_NOTE", "PairedUnits", "SUBGROUP_HEADER",
           "difference_cell", "headline", "paired_rows", "paired_section", "paired_units", "subgroup_rows"]
