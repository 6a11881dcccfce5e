"""An exam run as an Inspect AI eval log (the JSON form `inspect_ai.log.read_eval_log` reads), so the run can be
browsed with `inspect view` and read by the tools that read Inspect logs.

Why written by hand and not through inspect_ai: the log is plain JSON following inspect_ai's EvalLog schema
(log format version 2: inspect_ai/log/_log.py), and inspect_ai would be a heavy dependency for a file; the
tests read every log back with inspect_ai itself (a dev dependency), so a change of schema shows there.

The mapping: one sample per question (input: the question; target: the reference texts of the units it
targeted; output: the target's answer, repeated as each score's `answer`, the field `inspect view`'s Answer
column shows; scores: `units`, every targeted unit's label in force (a person's
label, else the judge's), and `question`, the share of its covered units (correct, incorrect or abstained)
labelled correct, as accuracy counts them; metadata: the target, cluster, round, documents and passages,
each unit's judge and human labels). A control question (controls.jsonl) is a sample of its own after
them, `metadata.control` true, scored `control` (1 declined or corrected the premise, 0 accepted it) and
left out of every target's accuracy. One log holds every target of the run: `results.scores` has one entry
per target with accuracy and coverage as the report computes them (the judge's verdicts,
examiner.reporting.summary.target_scores; `accuracy_with_overrides` and `coverage_with_overrides` beside
them when people corrected verdicts), the abstention and hallucination rates of the report's knowledge
section (likewise `*_with_overrides`), and with control questions their refusal and false-premise
acceptance rates; `stats.model_usage` the
ledger's billed calls per model, exactly. A sample's `model_usage` is its share of the calls about it:
the calls of the same round about any of its units (a target's answer calls only for that target's
questions), a call about several questions split evenly between them, tokens rounded; calls about no
question (unit extraction, the judge self-check) are only in the eval's totals.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from examiner.core.ledger_record import LedgerRecord
from examiner.core.records import AnswerRecord, QuestionRecord, VerdictRecord
from examiner.core.version import VERSION
from examiner.llm.ledger import answered, tokens_of
from examiner.reporting.endpoint_identity import endpoint_identities
from examiner.reporting.model.endpoints import EndpointIdentity
from examiner.reporting.export_controls import CONTROL_SCORE, sorted_controls
from examiner.reporting.export_labels import (corpus_name, endpoint_model, endpoint_provider, examiner_endpoint,
                                              human_labels, judge_endpoints, label_columns)
from examiner.reporting.controls import control_figures
from examiner.reporting.knowledge import knowledge_row
from examiner.core.control_records import ControlRecord
from examiner.core.labels import COVERING
from examiner.reporting.run_reader import RunData
from examiner.reporting.summary import target_scores
from examiner.reporting.with_overrides import apply_overrides
from examiner.core.owned import write_output

TASK = "examiner/exam"
"""The eval log's task name."""
SCORER = "examiner"
"""The scorer name of the per-target scores (the exam's judge, with people's labels in the samples)."""

_STATUS = {"completed": "success", "running": "started", "failed": "error"}
"""run.json status -> Inspect's EvalStatus (a run stopped early, by budget or interrupt, is `cancelled`)."""


def _utc(epoch: float | None) -> str:
    if not epoch:
        return ""
    return datetime.fromtimestamp(epoch, tz=timezone.utc).isoformat()


def model_name(run: RunData, endpoint: str) -> str:
    """Inspect's `provider/model` for an endpoint of the run's settings; a simulated one is
    `simulated/<endpoint>` (no model ran: never the name of the model its twin stands in for)."""
    if endpoint_provider(run, endpoint) == "simulated":
        return f"simulated/{endpoint}"
    return f"{endpoint_provider(run, endpoint)}/{endpoint_model(run, endpoint)}"


def _model_config(run: RunData, endpoint: str, known: dict[str, EndpointIdentity]) -> dict[str, Any]:
    """Inspect's ModelConfig of a role: the model, and the server's URL without credentials where there is one."""
    ident = known.get(endpoint)
    url = ident.base_url if ident is not None else None
    return {"model": model_name(run, endpoint), **({"base_url": url} if url else {})}


def _usage(records: list[LedgerRecord], share: dict[int, float] | None = None) -> dict[str, Any]:
    """Inspect's ModelUsage of billed records (each counted at its `share`, 1 when not given)."""
    tokens: defaultdict[str, float] = defaultdict(float)
    cost = 0.0
    for record in records:
        weight = 1.0 if share is None else share[id(record)]
        for name, count in tokens_of(record).items():
            tokens[name] += weight * count
        cost += weight * record.cost_usd
    prompt, completion = round(tokens["prompt_tokens"]), round(tokens["completion_tokens"])
    cached, write = round(tokens["cached_tokens"]), round(tokens["cache_write_tokens"])
    return {"input_tokens": prompt - cached - write, "output_tokens": completion, "total_tokens": prompt + completion,
            "input_tokens_cache_write": write, "input_tokens_cache_read": cached,
            "reasoning_tokens": round(tokens["reasoning_tokens"]), "total_cost": cost}


def _by(run: RunData, records: list[LedgerRecord], share: dict[int, float] | None = None) -> dict[str, Any]:
    """ModelUsage per Inspect model name."""
    groups: dict[str, list[LedgerRecord]] = defaultdict(list)
    for record in records:
        groups[model_name(run, record.endpoint)].append(record)
    return {name: _usage(rows, share) for name, rows in sorted(groups.items())}


def billed(run: RunData) -> list[LedgerRecord]:
    """The ledger's billed calls (answered, not examiner's own cache hits): what the report's cost counts."""
    return [r for r in answered(run.ledger) if not r.cache_hit]


def _attribution(run: RunData, calls: list[LedgerRecord]) -> dict[str, list[tuple[LedgerRecord, float]]]:
    """Per question id, the calls about it with the share each gives it (see the module docstring)."""
    asking: dict[tuple[int, str], list[QuestionRecord]] = defaultdict(list)
    for q in run.questions.values():
        for unit_id in q.targets:
            asking[(q.round, unit_id)].append(q)
    out: dict[str, list[tuple[LedgerRecord, float]]] = defaultdict(list)
    for call in calls:
        rnd = call.round or 0
        found = {q.id: q for unit_id in call.unit_ids for q in asking.get((rnd, unit_id), ())}
        about = [found[key] for key in sorted(found)]
        if call.role == "candidate":
            about = [q for q in about if q.target == call.endpoint] or about
        for q in about:
            out[q.id].append((call, 1.0 / len(about)))
    return out


def _sample(run: RunData, q: QuestionRecord, people: dict[str, Any], calls: list[tuple[LedgerRecord, float]],
            answer: AnswerRecord | None, verdicts: dict[str, VerdictRecord]) -> dict[str, Any]:
    """One question's sample; `verdicts`: the verdicts on its answer by unit id."""
    units = {uid: label_columns(verdicts.get(uid), people.get(verdicts[uid].id) if uid in verdicts else None)
             for uid in q.targets}
    for uid, columns in units.items():
        columns["judge_reason"] = verdicts[uid].reason if uid in verdicts else None
    sources = [s for uid in q.targets if uid in run.units for s in run.units[uid].sources]
    finals = [c["final_label"] for c in units.values() if c["final_label"] in COVERING]
    text = answer.text if answer else ""
    scores: dict[str, Any] = {"units": {"value": {uid: c["final_label"] for uid, c in units.items()}, "answer": text,
                                       "explanation": "each targeted unit's label in force: a person's, else the judge's",
                                       "metadata": units}}
    if finals:
        scores["question"] = {"value": finals.count("correct") / len(finals), "answer": text,
                              "explanation": f"{finals.count('correct')} of {len(finals)} covered units correct "
                                             f"({finals.count('abstained')} abstained)"}
    model = model_name(run, q.target)
    share = {id(call): weight for call, weight in calls}
    usage = _by(run, [call for call, _ in calls], share)
    messages = [{"role": "user", "content": q.text, "source": "input"}]
    if answer is not None:
        messages.append({"role": "assistant", "content": text, "source": "generate", "model": model})
    return {
        "id": q.id, "epoch": 1, "input": q.text, "target": [run.units[u].text for u in q.targets if u in run.units],
        "messages": messages,
        "output": {"model": model, "completion": text,
                   "choices": [{"message": messages[-1], "stop_reason": "stop"}] if answer is not None else []},
        "scores": scores,
        "metadata": {"target": q.target, "round": q.round, "cluster": q.cluster_id, "kind": q.kind, "qtype": q.qtype,
                     "answer_id": answer.id if answer else None, "unit_ids": list(q.targets),
                     "documents": sorted({s.document for s in sources}),
                     "passage_ids": sorted({s.passage_id for s in sources}),
                     "cost_usd": sum(u["total_cost"] for u in usage.values())},
        "model_usage": usage,
        "completed": answer is not None,
    }


def _control_sample(run: RunData, record: ControlRecord) -> dict[str, Any]:
    """One control question's sample: marked `control`, scored by the judge's control label."""
    model = model_name(run, record.target)
    messages = [{"role": "user", "content": record.text, "source": "input"},
                {"role": "assistant", "content": record.answer, "source": "generate", "model": model}]
    scores: dict[str, Any] = {}
    if record.label is not None:
        scores["control"] = {"value": CONTROL_SCORE[record.label], "answer": record.answer,
                             "explanation": f"{record.label}: {record.reason}".rstrip(": "),
                             "metadata": {"label": record.label}}
    return {
        "id": record.id, "epoch": 1, "input": record.text,
        "target": "decline, or correct the premise the corpus does not support: " + record.premise,
        "messages": messages,
        "output": {"model": model, "completion": record.answer,
                   "choices": [{"message": messages[-1], "stop_reason": "stop"}]},
        "scores": scores,
        "metadata": {"target": record.target, "round": record.round, "cluster": record.cluster_id,
                     "kind": "control", "control": True, "control_kind": record.kind, "premise": record.premise,
                     "question_id": record.question_id, "unit_ids": list(record.unit_ids)},
        "model_usage": {},
        "completed": True,
    }


def _metric(name: str, figure: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any] | None:
    """An EvalMetric of a figure with a value (None without one), its interval and counts as metadata."""
    if figure.get("value") is None:
        return None
    return {"name": name, "value": figure["value"], "metadata": {k: figure.get(k) for k in keys}}


def _score(run: RunData, target: str, samples: list[dict[str, Any]], seed: int,
           corrected: RunData | None, controls: list[ControlRecord]) -> dict[str, Any]:
    """One target's EvalScore: accuracy and coverage as the report gives them, with their intervals and counts,
    the abstention and hallucination rates of its knowledge section, all with people's overrides applied
    (`*_with_overrides`) when the run has some, and the control questions' rates."""
    figures = target_scores(run, target, seed)
    metrics = {}
    for suffix, scored_run in (("", run), ("_with_overrides", corrected)):
        if scored_run is None:
            continue
        these = figures if scored_run is run else target_scores(scored_run, target, seed)
        found = {key: _metric(key + suffix, these[key], ("low", "high", "num", "den", "clusters"))
                 for key in ("accuracy", "coverage")}
        knowledge = knowledge_row(scored_run, list(scored_run.outcomes.get(target, {}).values()), by="target",
                                  key=target, topic=target)
        found |= {key: _metric(key + suffix, knowledge[key], ("low", "high", "num", "den", "groups", "grouped_by"))
                  for key in ("abstention_rate", "hallucination_rate")}
        metrics |= {key + suffix: metric for key, metric in found.items() if metric is not None}
    control = control_figures(run, controls, target)
    if control is not None:
        for key, name in (("refusal_rate", "control_refusal_rate"),
                          ("false_premise_acceptance", "control_false_premise_acceptance")):
            metric = _metric(name, control[key], ("low", "high", "num", "den", "groups", "grouped_by"))
            if metric is not None:
                metrics[name] = metric
    mine = [s for s in samples if s["metadata"]["target"] == target and not s["metadata"].get("control")]
    scored = sum(1 for s in mine if "question" in s["scores"])
    return {"name": target, "scorer": SCORER, "scored_samples": scored, "unscored_samples": len(mine) - scored,
            "metrics": metrics, "metadata": {"units": figures["units"], "counts": figures["counts"],
                                             "model": model_name(run, target)}}


def inspect_log(run: RunData, health_status: str | None = None, seed: int = 0) -> dict[str, Any]:
    """The run as an Inspect EvalLog (a JSON-able dict); see the module docstring."""
    people = human_labels(run)
    calls = billed(run)
    about = _attribution(run, calls)
    questions = sorted(run.questions.values(), key=lambda q: (q.target, q.round, q.id))
    answer_of = {a.question_id: a for a in run.answers.values()}
    verdicts_of: dict[str, dict[str, VerdictRecord]] = defaultdict(dict)
    for v in run.verdicts.values():
        verdicts_of[v.answer_id][v.unit_id] = v
    samples = []
    for q in questions:
        answer = answer_of.get(q.id)
        samples.append(_sample(run, q, people, about.get(q.id, []), answer,
                               verdicts_of.get(answer.id, {}) if answer else {}))
    controls = sorted_controls(run)
    samples += [_control_sample(run, record) for record in controls]
    targets = run.targets
    corrected = apply_overrides(run) if run.overrides else None
    known = endpoint_identities(run)
    roles: dict[str, Any] = {f"target:{t}": _model_config(run, t, known) for t in targets}
    roles.update({f"judge:{j}": _model_config(run, j, known) for j in judge_endpoints(run)})
    examiner = examiner_endpoint(run)
    if examiner:
        roles["examiner"] = _model_config(run, examiner, known)
    info = run.info
    role_usage: dict[str, list[LedgerRecord]] = defaultdict(list)
    for call in calls:
        role_usage[call.role].append(call)
    return {
        "version": 2,
        "status": _STATUS.get(info.status, "cancelled"),
        "eval": {
            "run_id": info.run_id, "task_id": info.run_id, "created": _utc(info.started) or _utc(1.0),
            "task": TASK, "task_version": 0, "task_display_name": f"examiner exam of {corpus_name(run)}",
            "task_attribs": {}, "task_args": {}, "task_args_passed": {},
            "dataset": {"name": corpus_name(run), "location": ", ".join(info.corpus_paths), "samples": len(samples),
                        "sample_ids": [s["id"] for s in samples], "shuffled": False},
            "model": model_name(run, targets[0]) if len(targets) == 1 else "examiner/" + ",".join(targets),
            "model_roles": roles, "config": {}, "packages": {"examiner": info.examiner_version or VERSION},
            "metadata": {"examiner_run_id": info.run_id, "health_status": health_status or "not computed",
                         "run_status": info.status, "stop_reason": info.stop_reason, "mode": info.mode,
                         "judge_mode": info.judge_mode, "corpus_paths": list(info.corpus_paths),
                         "targets": {t: model_name(run, t) for t in targets},
                         "endpoints": {name: ident.text for name, ident in known.items()}},
        },
        "plan": {"name": "plan", "steps": [{"solver": "examiner_exam", "params": {"mode": info.mode}}]},
        "results": {"total_samples": len(samples), "completed_samples": sum(s["completed"] for s in samples),
                    "scores": [_score(run, t, samples, seed, corrected, controls) for t in targets]},
        "stats": {"started_at": _utc(info.started), "completed_at": _utc(info.finished),
                  "model_usage": _by(run, calls),
                  "role_usage": {role: _usage(rows) for role, rows in sorted(role_usage.items())}},
        "samples": samples,
    }


def log_file_name(run: RunData) -> str:
    """The log's file name as Inspect names its own (`<start time>_<task>_<id>.json`): `inspect view` and
    inspect_ai.log.list_eval_logs list a JSON log in a folder only under such a name."""
    started = datetime.fromtimestamp(run.info.started or 0.0, tz=timezone.utc)
    run_id = re.sub(r"[^A-Za-z0-9-]", "-", run.info.run_id)
    return f"{started:%Y-%m-%dT%H-%M-%S}+00-00_examiner-exam_{run_id}.json"


def write_inspect_log(run: RunData, out: str | Path, health_status: str | None = None) -> dict[str, Any]:
    """Write the log as JSON: at `out` when it names a .json file, else into the folder `out` under
    log_file_name; the path, the samples and the billed calls written."""
    path = Path(out) if str(out).endswith(".json") else Path(out) / log_file_name(run)
    log = inspect_log(run, health_status)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_output(path, json.dumps(log, ensure_ascii=False, indent=1), "OUT")
    return {"path": path, "samples": len(log["samples"]), "calls": len(billed(run))}


__all__ = ["SCORER", "TASK", "billed", "inspect_log", "log_file_name", "model_name", "write_inspect_log"]
