"""The judge bias audit section's data (report.json's `bias_audit`), item by item, and the exam's audit.

Each item builder takes what its statistic needs (examiner.stats.bias) and returns the item as plain data:
its figures when they can be had, else `measured: false` with the reason (one judge, no swapped order,
too few answers). The exam's audit (`exam_bias_audit`) reads a run directory; the judging and
meta-evaluation reports call the same item builders from their own records (examiner/judging/bias_audit.py,
examiner/meta/bias_audit.py), so every report shows the same figures in the same words.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from examiner.core.tokens import count_tokens
from examiner.reporting.run_reader import RunData
from examiner.stats import bias

LENGTH_TEXT = "answer tokens (cl100k_base)"
SELF_NOTE = ("The gap mixes the judge's leniency towards its own family with how good that family's answers "
             "are; read it beside a judge of another family, or people's labels.")


def not_measured(reason: str) -> dict[str, Any]:
    return {"measured": False, "reason": reason}


def position_item(flips: int, pairs: int, *, note: str | None = None) -> dict[str, Any]:
    """The flip rate of `pairs` judged in both orders (not measured without any)."""
    if pairs <= 0:
        return not_measured("no pair was judged in both orders (run with swapped orders to measure it)")
    result = bias.flip_rate(flips, pairs)
    return {"measured": True, "note": note, **result.to_dict()}


def length_item(outcome: Sequence[float], length: Sequence[float], groups: Sequence[Hashable] | None = None,
                strata: Sequence[Hashable] | None = None, *, outcome_text: str, length_text: str = LENGTH_TEXT,
                note: str | None = None) -> dict[str, Any]:
    """The verdict's slope on length, or why it could not be measured (too few answers, one length)."""
    try:
        result = bias.length_slope(outcome, length, groups, strata)
    except ValueError as exc:
        return not_measured(str(exc))
    return {"measured": True, "note": note, "outcome": outcome_text, "length": length_text, "per": bias.LENGTH_PER,
            **result.to_dict()}


def self_matches(judges: Mapping[str, str], targets: Mapping[str, str]) -> list[dict[str, Any]]:
    """Every (judge, target) whose models match (judges and targets: endpoint -> model name); a judge
    and a target on one endpoint are the same model whatever the name says."""
    rows = []
    for judge, judge_model in judges.items():
        for target, target_model in targets.items():
            match = "same model" if judge == target else bias.self_match(judge_model, target_model)
            if match:
                rows.append({"judge": judge, "judge_model": judge_model, "target": target,
                             "target_model": target_model, "match": match})
    return rows


def self_preference_item(matches: list[dict[str, Any]], gaps: Mapping[str, tuple[list[float], list[bool],
                                                                             list[Hashable]]],
                         *, judges: Mapping[str, str] | None = None,
                         all_self_reason: str = "every judged model is the judge's own model or family: no "
                         "others to compare with") -> dict[str, Any]:
    """The matches (flagged when any), and per judge with both own-family and other answers the gap of its
    mean verdict (gaps: judge -> (outcome, is_self, groups) over the answers it judged); `judges`: the
    judges compared (endpoint -> model), shown so a reader can check the matching."""
    shown = {"judges": dict(judges)} if judges else {}
    if not matches:
        return {"measured": True, "flagged": False, "matches": [], **shown,
                "gap_reason": "no judged model shares the judge's model or family"}
    rows, reasons = [], []
    for judge, (outcome, is_self, groups) in gaps.items():
        try:
            gap = bias.self_gap(outcome, is_self, groups)
        except ValueError:
            reasons.append(judge)
            continue
        rows.append({"judge": judge, **{k: v for k, v in gap.to_dict().items()}})
    return {"measured": True, "flagged": True, "matches": matches, "gaps": rows, "note": SELF_NOTE if rows else None,
            "gap_reason": None if rows else all_self_reason, **shown}


def panel_item(labels: Mapping[str, Mapping[Hashable, Hashable | None]],
               groups: Mapping[Hashable, Hashable] | None = None, *, seed: int = 0) -> dict[str, Any]:
    """Pairwise Cohen's kappas and Fleiss' kappa of a panel (labels: member -> unit -> label or None)."""
    if len(labels) < 2:
        return not_measured("one judge, no panel")
    result = bias.panel_agreement(labels, groups, seed=seed)
    return {"measured": True, "members": list(result.members), "pairs": [p.to_dict() for p in result.pairs],
            "fleiss_n": result.fleiss_n, "fleiss_kappa": result.fleiss_kappa}


def model_names(config: Mapping[str, Any], endpoints: Sequence[str]) -> dict[str, str]:
    """Endpoint -> the model name it serves (config.yaml's endpoints); an endpoint without a model name (or
    `default`), or one the config does not describe, is known by its endpoint name. Simulated endpoints keep
    their model names: `--simulate` copies a real endpoint with its model, and the copy judging the
    original's answers is the self-preference the real run would have."""
    specs = config.get("endpoints") or {}
    out = {}
    for name in endpoints:
        spec = specs.get(name) or {}
        model = spec.get("model")
        out[name] = name if not model or model == "default" else str(model)
    return out


def exam_judges(run: RunData) -> list[str]:
    """The exam's judges: the panel's members, else the judge role's endpoint (`local` when none is named)."""
    if run.info.judges:
        return list(run.info.judges)
    return [str((run.config.get("roles") or {}).get("judge") or "local")]


def _document(run: RunData, unit_id: str) -> str:
    unit = run.units.get(unit_id)
    return unit.sources[0].document if unit and unit.sources else f"unit:{unit_id}"


def exam_bias_audit(run: RunData, seed: int = 0) -> dict[str, Any]:
    """The audit of an exam's judge: no swap (one answer is judged at a time), the slope of correct on answer
    length (fixed effect per target, clusters = source documents), self-preference of each judge against
    the targets, and the panel's agreement."""
    judged = [v for v in run.verdicts.values() if v.verdict in ("correct", "incorrect") and v.answer_id in run.answers]
    tokens: dict[str, int] = {}
    for v in judged:
        if v.answer_id not in tokens:
            tokens[v.answer_id] = count_tokens(run.answers[v.answer_id].text)
    documents = {v.id: _document(run, v.unit_id) for v in run.verdicts.values()}
    judges = exam_judges(run)
    names = model_names(run.config, [*judges, *run.targets])
    matches = self_matches({j: names[j] for j in judges}, {t: names[t] for t in run.targets})
    self_targets = {j: {m["target"] for m in matches if m["judge"] == j} for j in judges}
    gaps = {}
    for j in judges:
        if not self_targets[j]:
            continue
        own = [(v, v.members[j].verdict if run.info.judges else v.verdict) for v in run.verdicts.values()
               if not run.info.judges or j in v.members]
        own = [(v, t) for v, t in own if t in ("correct", "incorrect")]
        gaps[j] = ([float(t == "correct") for _, t in own], [v.target in self_targets[j] for v, _ in own],
                   [documents[v.id] for v, _ in own])
    labels = {m: {v.id: (v.members[m].verdict if m in v.members and v.members[m].verdict != "unscored" else None)
                  for v in run.verdicts.values() if v.members} for m in run.info.judges}
    return {
        "position": not_measured("the exam's judge marks one answer at a time: there is no second order to swap "
                                 "(the judge self-check under Health reorders the units instead)"),
        "length": length_item([float(v.verdict == "correct") for v in judged], [tokens[v.answer_id] for v in judged],
                              [documents[v.id] for v in judged], [v.target for v in judged],
                              outcome_text="verdict correct = 1, incorrect = 0 (a fixed effect per target)"),
        "self_preference": self_preference_item(matches, gaps, judges={j: names[j] for j in judges}),
        "panel": panel_item(labels, documents, seed=seed) if len(labels) >= 2 else not_measured(
            "one judge, no panel (roles: {judge: [A, B, C]} names one)"),
    }


__all__ = ["LENGTH_TEXT", "exam_bias_audit", "exam_judges", "length_item", "model_names", "not_measured",
           "panel_item", "position_item", "self_matches", "self_preference_item"]
