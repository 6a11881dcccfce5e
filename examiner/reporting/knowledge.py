"""The exam report's knowledge section: per target and per topic (exam cluster, document, language) its
accuracy, hallucination rate, abstention rate, correct given attempted, SimpleQA's F, the penalised scores,
and how well its stated confidence tracks being right (ECE, Brier, AURC); with control questions, how it
met them (examiner/reporting/controls.py).

Why per topic: an auditor deploys a model behind a fallback where it declines and keeps it away where it
invents; the rows most hallucinating first say where that is. Every rate has the report's cluster interval
(score_intervals.ratio_estimate: documents, or the exam clusters within one document), so a topic of three
units shows how little it says.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from examiner.core.labels import ATTEMPTED, COVERING
from examiner.core.control_records import ControlRecord
from examiner.core.records import UnitOutcome
from examiner.corpus.language import language_name
from examiner.reporting.controls import control_figures, run_controls
from examiner.reporting.languages import unit_language
from examiner.reporting.run_reader import RunData
from examiner.reporting.score_intervals import ratio_estimate, unit_document
from examiner.stats.knowledge import (PENALTY_TARGETS, brier_score, expected_calibration_error, penalised_score,
                                      reliability_bins, risk_coverage_area, simpleqa_f)
from examiner.stats.knowledge_intervals import figure_interval

TOPIC_ROWS = 50
"""Topic rows kept per grouping and target (the most hallucinating first); report.json stays bounded."""
GROUPINGS = ("cluster", "document", "language")
RATE_KEYS = ("value", "low", "high", "num", "den", "groups", "grouped_by", "method")
SCORE_FIGURES = ("f_score", *(f"penalised_{t}" for t in PENALTY_TARGETS))
CONFIDENCE_FIGURES = ("ece", "brier", "aurc")


def _rate(values: Sequence[int | None], documents: Sequence[str], clusters: Sequence[str]) -> dict[str, Any]:
    est = ratio_estimate(values, documents, clusters)
    return {k: est.get(k) for k in RATE_KEYS} | {"groups": est.get("groups") or 0}


def _interval(name: str, status: Sequence[str], confidence: Sequence[float | None], documents: Sequence[str],
              clusters: Sequence[str]) -> dict[str, Any]:
    est = figure_interval(name, status, confidence, documents, clusters)
    return {"value": est.estimate, "low": est.low, "high": est.high, "standard_error": est.standard_error,
            "groups": est.n_groups, "grouped_by": est.grouped_by, "method": est.method}


def unit_confidence(run: RunData, outcome: UnitOutcome) -> tuple[float | None, float | None]:
    """(stated, token) confidence of the answer whose verdict covered the unit."""
    verdict = run.verdicts.get(outcome.verdict_id or "")
    answer = run.answers.get(verdict.answer_id) if verdict is not None else None
    if answer is None:
        return None, None
    return answer.stated_confidence, answer.token_confidence


def knowledge_row(run: RunData, outcomes: Sequence[UnitOutcome], *, by: str, key: str, topic: str
                  ) -> dict[str, Any]:
    """The figures of one group of a target's covered units (KnowledgeRow as data)."""
    covered = [o for o in outcomes if o.status in COVERING]
    documents = [unit_document(run, o.unit_id) for o in covered]
    clusters = [o.cluster_id or f"unit:{o.unit_id}" for o in covered]
    status = [o.status for o in covered]
    attempted = [s in ATTEMPTED for s in status]
    correct, incorrect, abstained = (sum(s == name for s in status) for name in ("correct", "incorrect", "abstained"))
    accuracy = _rate([int(s == "correct") for s in status], documents, clusters)
    given = _rate([int(s == "correct") if a else None for s, a in zip(status, attempted)], documents, clusters)
    row: dict[str, Any] = {
        "by": by, "key": key, "topic": topic, "asked": len(covered), "correct": correct, "incorrect": incorrect,
        "abstained": abstained, "accuracy": accuracy,
        "hallucination_rate": _rate([int(s == "incorrect") if a else None for s, a in zip(status, attempted)],
                                    documents, clusters),
        "abstention_rate": _rate([int(s == "abstained") for s in status], documents, clusters),
        "correct_given_attempted": given,
        "simpleqa_f": simpleqa_f(accuracy["value"], given["value"]),
        "penalised": {str(t): penalised_score(correct, incorrect, len(covered), t) for t in PENALTY_TARGETS},
        "intervals": {name: _interval(name, status, [None] * len(status), documents, clusters)
                      for name in SCORE_FIGURES},
    }
    pairs = [(unit_confidence(run, o), int(o.status == "correct")) for o in covered if o.status in ATTEMPTED]
    stated = [c[0] for c, _ in pairs]
    token = [c[1] for c, _ in pairs]
    source, confidence = (("stated", stated) if any(v is not None for v in stated)
                          else ("token", token) if any(v is not None for v in token) else (None, []))
    if source is not None:
        right = [y for _, y in pairs]
        row.update(confidence_source=source, with_confidence=sum(v is not None for v in confidence),
                   ece=expected_calibration_error(confidence, right), brier=brier_score(confidence, right),
                   aurc=risk_coverage_area(confidence, right))
        pick = 0 if source == "stated" else 1
        every = [unit_confidence(run, o)[pick] if o.status in ATTEMPTED else None for o in covered]
        row["intervals"] |= {name: _interval(name, status, every, documents, clusters) for name in CONFIDENCE_FIGURES}
    return row


def _groups(run: RunData, target: str, by: str, names: dict[str, dict[str, str | None]]
            ) -> dict[str, tuple[str, list[UnitOutcome]]]:
    keyed: Callable[[UnitOutcome], str] = {
        "cluster": lambda o: o.cluster_id or f"unit:{o.unit_id}",
        "document": lambda o: unit_document(run, o.unit_id),
        "language": lambda o: unit_language(run, o.unit_id),
    }[by]
    groups: dict[str, list[UnitOutcome]] = defaultdict(list)
    for o in run.outcomes.get(target, {}).values():
        if o.status in COVERING:
            groups[keyed(o)].append(o)

    def shown(key: str) -> str:
        if by == "cluster":
            return str((names.get(key) or {}).get("topic") or key)
        return f"{language_name(key)} ({key})" if by == "language" else key

    return {key: (shown(key), members) for key, members in groups.items()}


def _hallucinating_first(row: dict[str, Any]) -> tuple[float, int, str]:
    rate = row["hallucination_rate"]["value"]
    return (-(rate if rate is not None else -1.0), -row["incorrect"], row["key"])


def target_knowledge(run: RunData, target: str, names: dict[str, dict[str, str | None]] | None = None,
                     controls_read: list[ControlRecord] | None = None) -> dict[str, Any] | None:
    """TargetKnowledge as data for one target; None when no unit was covered. `names`: cluster id ->
    its topic (reporting.topics.cluster_names), the cluster ids stand in without it; `controls_read`:
    controls.jsonl's records when the caller read them (read here otherwise)."""
    outcomes = list(run.outcomes.get(target, {}).values())
    if not any(o.status in COVERING for o in outcomes):
        return None
    overall = knowledge_row(run, outcomes, by="target", key=target, topic=target)
    topics: list[dict[str, Any]] = []
    totals: dict[str, int] = {}
    for by in GROUPINGS:
        groups = _groups(run, target, by, names or {})
        totals[by] = len(groups)
        rows = [knowledge_row(run, members, by=by, key=key, topic=shown) for key, (shown, members) in groups.items()]
        topics += sorted(rows, key=_hallucinating_first)[:TOPIC_ROWS]
    covered = [o for o in outcomes if o.status in ATTEMPTED]
    reliability: list[dict[str, Any]] = []
    if overall.get("confidence_source"):
        pick = 0 if overall["confidence_source"] == "stated" else 1
        conf = [unit_confidence(run, o)[pick] for o in covered]
        reliability = [{"confidence": c, "right": r, "units": n}
                       for c, r, n in reliability_bins(conf, [int(o.status == "correct") for o in covered])]
    found = {"overall": overall, "topics": topics, "topics_total": totals, "reliability": reliability}
    controls = control_figures(run, run_controls(run) if controls_read is None else controls_read, target)
    return found if controls is None else found | {"controls": controls}


def exam_knowledge(run: RunData) -> dict[str, Any]:
    """report.json's `knowledge`: target -> TargetKnowledge as data (targets with no covered unit left out)."""
    from examiner.reporting.topics import cluster_names  # scikit-learn, loaded when a report is built

    out = {}
    controls = run_controls(run)
    for target in run.targets:
        figures = target_knowledge(run, target, cluster_names(run, target), controls)
        if figures is not None:
            out[target] = figures
    return out


def invented_topics(knowledge: dict[str, Any] | Any, target: str, n: int = 3) -> list[dict[str, Any]]:
    """The clusters where the target invents most (hallucination rate, at least one error), for "What went
    wrong"; rows as data."""
    data = knowledge.model_dump() if hasattr(knowledge, "model_dump") else knowledge
    rows = [r for r in data.get(target, {}).get("topics", []) if r["by"] == "cluster" and r["incorrect"] > 0]
    return sorted(rows, key=_hallucinating_first)[:n]


__all__ = ["GROUPINGS", "TOPIC_ROWS", "exam_knowledge", "invented_topics", "knowledge_row", "target_knowledge",
           "unit_confidence"]
