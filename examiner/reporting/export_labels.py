"""What an exported row says beyond the judge: people's labels, the label in force, the run's health, and
who was examined, judged and examining.

Why a module apart from exports.py: the dataset rows, the Inspect log and the OpenTelemetry spans all
carry the same labels and identities, read one way. A person's label comes from overrides.jsonl (a
correction made while browsing, `examiner view`) or from human_sample.jsonl (a label of a randomly drawn
unit, the review page's sample mode); `human_labels` is the one reader of both. When a verdict has both,
the later one (by its `at`) is in force, an override on a tie. Model identities are endpoint names and
model names from the run's settings: never a URL (it may carry a password) nor anything about keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from examiner.core.human_sample import read_sample
from examiner.core.records import VerdictRecord
from examiner.reporting.endpoint_identity import model_text
from examiner.reporting.run_reader import RunData

HumanSource = Literal["override", "random_sample", "none"]


@dataclass(frozen=True)
class HumanLabel:
    """A person's label of one verdict (question, unit), where it came from, by whom and when."""

    label: str
    source: HumanSource
    by: str
    at: str


def _sample_labels(run: RunData) -> dict[str, HumanLabel]:
    """human_sample.jsonl's labels in force, by the verdict id they label; empty without the file."""
    sample = read_sample(run.path)
    if sample is None:
        return {}
    return {row.verdict_id: HumanLabel(row.verdict, "random_sample", row.who, row.at)
            for row in sample.labels().values()}


def human_labels(run: RunData) -> dict[str, HumanLabel]:
    """People's labels in force, by verdict id: overrides and random-sample labels, the later one winning."""
    out = _sample_labels(run)
    for verdict in run.verdicts.values():
        row = run.overrides.get((verdict.question_id, verdict.unit_id))
        if row is None:
            continue
        override = HumanLabel(row.verdict, "override", row.who, row.at)
        sampled = out.get(verdict.id)
        if sampled is None or override.at >= sampled.at:
            out[verdict.id] = override
    return out


LABEL_COLUMNS: tuple[tuple[str, str], ...] = (
    ("judge_label", "string"), ("human_label", "string"), ("human_label_source", "string"),
    ("human_label_by", "string"), ("human_label_at", "string"), ("final_label", "string"),
)
"""The label columns of an exported row: the judge's label (`unscored` included; null without a verdict),
a person's label with its source (override, random_sample or none), by whom and when, and the label in
force (the person's, else the judge's when it scored)."""

IDENTITY_COLUMNS: tuple[tuple[str, str], ...] = (
    ("health_status", "string"), ("corpus", "string"), ("target_model", "string"),
    ("judge_endpoint", "string"), ("judge_model", "string"),
    ("examiner_endpoint", "string"), ("examiner_model", "string"),
)
"""The run-level columns: the run's health verdict (pass, warn, fail; `not computed` when the exam layer
gave none), the corpus, the target's model and the judge's and examiner's endpoints and models (a panel's
members joined by `, `)."""


def label_columns(verdict: VerdictRecord | None, human: HumanLabel | None) -> dict[str, Any]:
    """One row's LABEL_COLUMNS."""
    judge = verdict.verdict if verdict is not None else None
    scored = judge if judge not in (None, "unscored") else None
    return {"judge_label": judge, "human_label": human.label if human else None,
            "human_label_source": human.source if human else "none", "human_label_by": human.by if human else None,
            "human_label_at": human.at if human else None, "final_label": human.label if human else scored}


def endpoint_model(run: RunData, endpoint: str) -> str:
    """The model an endpoint of the run's settings names ('?' when the settings do not say); a simulated one
    is `simulated` (with the model its twin stands in for), never that model's name alone."""
    return model_text(run, endpoint)


def endpoint_provider(run: RunData, endpoint: str) -> str:
    """The provider an endpoint of the run's settings names ('unknown' when they do not say)."""
    spec = (run.config.get("endpoints") or {}).get(endpoint) or {}
    return str(spec.get("provider") or "unknown")


def judge_endpoints(run: RunData) -> list[str]:
    """The judge panel's endpoints, else the `judge` role's endpoint (empty when the settings do not say)."""
    if run.info.judges:
        return list(run.info.judges)
    role = (run.config.get("roles") or {}).get("judge")
    return [str(role)] if role else []


def examiner_endpoint(run: RunData) -> str | None:
    role = (run.config.get("roles") or {}).get("examiner")
    return str(role) if role else None


def corpus_name(run: RunData) -> str:
    """The corpus as its folder or file names, joined by `, `."""
    return ", ".join(Path(p).name or p for p in run.info.corpus_paths)


def identity_columns(run: RunData, health_status: str | None,
                     targets: tuple[str, ...] | None = None) -> dict[str, dict[str, Any]]:
    """IDENTITY_COLUMNS per target (the run's targets unless given): only the target's model differs."""
    judges = judge_endpoints(run)
    examiner = examiner_endpoint(run)
    return {target: {"health_status": health_status or "not computed", "corpus": corpus_name(run),
                     "target_model": endpoint_model(run, target), "judge_endpoint": ", ".join(judges) or None,
                     "judge_model": ", ".join(endpoint_model(run, j) for j in judges) or None,
                     "examiner_endpoint": examiner,
                     "examiner_model": endpoint_model(run, examiner) if examiner else None}
            for target in (run.targets if targets is None else targets)}


__all__ = ["HumanLabel", "IDENTITY_COLUMNS", "LABEL_COLUMNS", "corpus_name", "endpoint_model", "endpoint_provider",
           "examiner_endpoint", "human_labels", "identity_columns", "judge_endpoints", "label_columns"]
