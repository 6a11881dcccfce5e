"""The figures of an exam report, as plain data (what report.json holds).

docs/METHODS.md section 1 lists them: accuracy and coverage per target with intervals (examiner.reporting.score_intervals), per
cluster and per question type; the convergence curve; the "targeted without coverage" histogram; the cost
table in the paper's layout; the classic baselines; the incorrect units with their evidence (a seeded sample
of at most INCORRECT_SAMPLE); and the counts of everything that was skipped, unparseable, rejected or
ignored. Every list here is bounded whatever the number of units (the constants below say how). Keeping the
numbers apart from the rendering lets Markdown, HTML and `compare` show exactly the same values.
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from typing import Any

import numpy as np

from examiner.core.contract import agreement_with_panel
from examiner.core.labels import COVERING
from examiner.core.ledger_record import LedgerRecord
from examiner.core.records import SELF_CHECK_STAGE, QuestionRecord, UnitOutcome, UnitRecord
from examiner.core.rundir import LEDGER
from examiner.llm.ledger import Usage, aggregate, answered, failed, in_flight, in_flight_usd, settlement, torn_lines
from examiner.reporting.languages import per_language
from examiner.reporting.run_reader import RunData
from examiner.reporting.topics import cluster_names, natural_key
from examiner.reporting.score_intervals import target_estimates
from examiner.stats.correlation import sample_level
from examiner.core.stages import QUESTION_WRITING, Stage

QTYPES = ("who", "what", "when", "where", "why", "how", "other")
QUESTION_STAGES = QUESTION_WRITING
"""Examiner stages the paper counts as question generation."""
EXCERPT_CHARS = 400
INCORRECT_SAMPLE = 50
"""At most this many incorrect units per target are shown with their evidence (a seeded sample when there
are more): the reports stay readable at any corpus size; every unit's record stays in units.jsonl /
verdicts.jsonl of the run (`examiner trace RUN_DIR UNIT_ID`, `examiner export`)."""
LISTED_SKIPS = 50
"""Skipped files and passages listed by name in the reports (the counts are always whole; run.json lists all)."""
JSON_CLUSTER_ROWS = 2000
"""report.json keeps the per-cluster rows of this many clusters per target, the worst first when there are
more (the number of clusters grows with the corpus); the full outcomes are in outcomes.jsonl."""
FULL_RECORDS = "units.jsonl, questions.jsonl, answers.jsonl, verdicts.jsonl and outcomes.jsonl"
"""Where the full per-unit data of a run lies (named in the reports wherever they show a sample)."""


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def accuracy_of(labels: Counter[str]) -> dict[str, Any]:
    """correct, incorrect, abstained and accuracy = correct / covered (correct + incorrect + abstained: a
    declined answer is a unit the target was asked about and did not know), None when none was given."""
    c, i, a = labels["correct"], labels["incorrect"], labels["abstained"]
    return {"correct": c, "incorrect": i, "abstained": a, "accuracy": c / (c + i + a) if c + i + a else None}


def worst_clusters(rows: list[Any], n: int) -> list[Any]:
    """The `n` clusters with the lowest accuracy (the most incorrect units first among equals); rows are
    dicts (while summarising) or the report's ClusterRow models (while rendering)."""
    def key(r: Any) -> tuple[float, int, str]:
        row = r if isinstance(r, dict) else r.model_dump()
        return (row["accuracy"] if row["accuracy"] is not None else 2.0, -row["incorrect"], natural_key(row["cluster"]))

    return sorted(rows, key=key)[:n]


def _cluster_key(outcome: UnitOutcome) -> str:
    # A unit never clustered (stopped early) is its own cluster: resampling it alone is the honest choice.
    return outcome.cluster_id or f"unit:{outcome.unit_id}"


def _question_of(run: RunData, outcome: UnitOutcome) -> QuestionRecord | None:
    verdict = run.verdicts.get(outcome.verdict_id or "")
    return run.questions.get(verdict.question_id) if verdict else None


def qtype_of(run: RunData, outcome: UnitOutcome) -> str:
    """Question type of the question whose verdict covered the unit."""
    question = _question_of(run, outcome)
    if question is not None:
        return question.qtype
    return outcome.qtype or "other"


def target_scores(run: RunData, target: str, seed: int = 0, *, topics: bool = True) -> dict[str, Any]:
    """Accuracy and coverage with intervals, status counts, per-cluster and per-question-type accuracy;
    topics=False leaves the clusters unnamed (naming them loads scikit-learn, which compare does not need)."""
    outcomes = list(run.outcomes.get(target, {}).values())
    status = Counter(o.status for o in outcomes)
    accuracy, coverage = target_estimates(run, outcomes)
    per_cluster: dict[str, Counter[str]] = defaultdict(Counter)
    per_qtype: dict[str, Counter[str]] = {q: Counter() for q in QTYPES}
    for o in outcomes:
        if o.status in COVERING:
            per_cluster[_cluster_key(o)][o.status] += 1
            per_qtype.setdefault(qtype_of(run, o), Counter())[o.status] += 1
    rounds_of = run.cluster_of()
    names = cluster_names(run, target) if topics else {}
    cluster_rows = [{"cluster": cid, "round": rounds_of.get(cid, (None, ""))[0], **accuracy_of(counts),
                     **names.get(cid, {})} for cid, counts in per_cluster.items()]
    total_clusters = len(cluster_rows)
    if total_clusters > JSON_CLUSTER_ROWS:
        cluster_rows = worst_clusters(cluster_rows, JSON_CLUSTER_ROWS)
    cluster_rows.sort(key=lambda r: (r["round"] if r["round"] is not None else 10**9, natural_key(r["cluster"])))
    qtype_rows = [{"qtype": qtype, **accuracy_of(counts)} for qtype, counts in per_qtype.items()]
    return {
        "target": target,
        "units": len(outcomes),
        "counts": {s: status.get(s, 0) for s in ("correct", "incorrect", "abstained", "unanswered", "uncovered")},
        "accuracy": accuracy,
        "coverage": coverage,
        "per_cluster": cluster_rows,
        "per_cluster_total": total_clusters,
        "per_qtype": qtype_rows,
    }


def convergence(run: RunData, target: str) -> list[dict[str, Any]]:
    """Uncovered units left after each round (round 0 = the whole corpus)."""
    rows = [{"round": 0, "remaining": run.n_units}]
    summaries = sorted((r for r in run.info.rounds if r.target == target), key=lambda r: r.round)
    if summaries:
        rows += [{"round": r.round, "remaining": r.pool_after, "pool_before": r.pool_before,
                  "clusters": r.clusters, "questions": r.questions, "probes": r.probes, "covered": r.covered}
                 for r in summaries]
        return rows
    # No round summaries (killed run): the pool at the start of round N+1 is what round N left.
    pools = [(rnd.round, sum(len(c.members) for c in rnd.clusters)) for rnd in run.clusters.get(target, [])]
    for (rnd, _), (_, next_pool) in zip(pools, pools[1:]):
        rows.append({"round": rnd, "remaining": next_pool})
    if pools:
        last = pools[-1][0]
        left = sum(1 for o in run.outcomes.get(target, {}).values() if o.status not in COVERING
                   and o.status != "unanswered")
        rows.append({"round": last, "remaining": left})
    return rows


def ignored_histogram(run: RunData, target: str) -> dict[int, int]:
    """How many units were targeted k times without being covered, for every k seen."""
    counts = Counter(o.times_targeted_uncovered for o in run.outcomes.get(target, {}).values())
    return {k: counts[k] for k in sorted(counts)}


def _per_unit(row: dict[str, Any], units: int) -> dict[str, Any]:
    """A group's counters (calls, tokens split as billed, dollars, batch part) and the per-unit figures."""
    u = max(units, 1)
    return {
        **{name: row[name] for name in Usage().counters()},
        "calls_per_unit": row["calls"] / u,
        "input_tokens_per_unit": row["prompt_tokens"] / u,
        "output_tokens_per_unit": row["completion_tokens"] / u,
        "cents_per_unit": 100.0 * row["cost_usd"] / u,
    }


def _total(records: list[LedgerRecord]) -> dict[str, Any]:
    rows = aggregate(records, by=())
    return rows[0] if rows else Usage().counters()


JUDGING_ROLES = ("judge", "reviser", "geval")
"""Roles that judge answers: the Ref-Eval judge, or RevisEval's reviser + judge, or G-Eval scoring."""


def cost_tables(run: RunData) -> dict[str, Any]:
    """Cost per unit of the corpus in the paper's layout, plus per role and per stage.

    Units are all units of the corpus (the paper divides by the KUs examined, not the KUs covered).
    Calls are billed requests; cache hits are counted apart and cost nothing. Calls lost after
    sending or killed in flight (possibly billed: `in_flight` those killed in flight no resume has settled
    yet) and calls cancelled with a request out are shown apart with the most they can have cost (`settlement`), never added to the known figures.
    Every row carries its tokens split as providers bill them (uncached and cached input, cache writes,
    output, reasoning) and its batch part; `by_pricing` splits each role into standard and batch calls.
    """
    ok = answered(run.ledger)
    units = run.n_units
    qgen = [r for r in ok if r.role == "examiner" and r.stage in QUESTION_STAGES]
    beside = (SELF_CHECK_STAGE, Stage.REWORDING.value, Stage.CONTROL.value)
    judge = [r for r in ok if r.role in JUDGING_ROLES and r.stage not in beside]
    self_check = [r for r in ok if r.stage == SELF_CHECK_STAGE]
    rewording = [r for r in ok if r.stage == Stage.REWORDING]
    controls = [r for r in ok if r.stage == Stage.CONTROL]
    candidate = [r for r in ok if r.role == "candidate" and r.stage not in beside]
    questions = [q for q in run.questions.values() if q.status == "ok"]
    judged = {v.answer_id for v in run.verdicts.values()}
    paper = [
        {"stage": "question generation", "questions": len(questions), **_per_unit(_total(qgen), units)},
        {"stage": "judging", "questions": len(judged), **_per_unit(_total(judge), units)},
        {"stage": "evaluation total", "questions": len(questions), **_per_unit(_total(qgen + judge), units)},
        {"stage": "candidate (beside)", "questions": len(run.answers), **_per_unit(_total(candidate), units)},
        {"stage": "judge self-check (beside)", "questions": len(run.self_checks),
         **_per_unit(_total(self_check), units)},
    ]
    if rewording:
        paper.append({"stage": "wording check (beside)", "questions": len({r.call_id for r in rewording}),
                      **_per_unit(_total(rewording), units)})
    if controls:  # control questions: the examiner's, the targets' answers and the judge's labels
        paper.append({"stage": "control questions (beside)",
                      "questions": len({r.call_id for r in controls if r.role == "examiner"}),
                      **_per_unit(_total(controls), units)})
    by_role = [{"role": r["role"], **_per_unit(r, units)} for r in aggregate(ok, by=("role",))]
    by_stage = [{"role": r["role"], "stage": r["stage"], **_per_unit(r, units)}
                for r in aggregate(ok, by=("role", "stage"))]
    by_endpoint = [{"role": r["role"], "endpoint": r["endpoint"], **_per_unit(r, units)}
                   for r in aggregate(ok, by=("role", "endpoint"))]
    by_pricing = [{"role": r["role"], "batch": r["batch"], **_per_unit(r, units)}
                  for r in aggregate(ok, by=("role", "batch"))]
    return {"units": units, "paper": paper, "by_role": by_role, "by_stage": by_stage, "by_endpoint": by_endpoint,
            "by_pricing": by_pricing, "total": _per_unit(_total(ok), units), "failed_requests": failed(run.ledger),
            "in_flight": {"calls": len(in_flight(run.ledger)), "worst_case_usd": round(in_flight_usd(run.ledger), 8)},
            "settlement": settlement(run.ledger),
            "torn_ledger_lines": torn_lines(run.path, torn_tail=bool(run.unreadable_lines.get(LEDGER)))}


def baselines(run: RunData, target: str) -> dict[str, Any]:
    """Mean BLEU / embedding similarity of the answers and how they track the judge's verdicts.

    The per-answer share of correct verdicts (correct / (correct + incorrect) among that answer's
    verdicts) is the judge's view of the answer; answers without a covering verdict are left out.
    """
    verdicts_of: dict[str, Counter[str]] = defaultdict(Counter)
    for v in run.verdicts.values():
        if v.target == target:
            verdicts_of[v.answer_id][v.verdict] += 1
    answers = [a for a in run.answers.values() if a.target == target]
    out: dict[str, Any] = {"answers": len(answers)}
    for name in ("bleu", "embedding_similarity"):
        values = [getattr(a, name) for a in answers if getattr(a, name) is not None]
        pairs = []
        for a in answers:
            score = getattr(a, name)
            share = accuracy_of(verdicts_of.get(a.id, Counter()))["accuracy"]
            if score is not None and share is not None:
                pairs.append((float(score), share))
        corr = sample_level([p[0] for p in pairs], [p[1] for p in pairs]) if pairs else None
        out[name] = {
            "mean": float(np.mean(values)) if values else None,
            "n": len(values),
            "pearson": _finite(corr.pearson) if corr else None,
            "spearman": _finite(corr.spearman) if corr else None,
            "kendall": _finite(corr.kendall) if corr else None,
            "n_pairs": len(pairs),
        }
    return out


PASSAGES_ORIGIN = "run passages.jsonl"
"""`origin` of a source passage read from the run's passages.jsonl."""
UNIT_TEXT_ORIGIN = "unit text"
"""`origin` of a source shown as its unit's text (no passage recorded for it)."""


class PassageReader:
    """Source passage text from the run's own passages.jsonl (the passages as the exam read them).

    Why not the corpus files run.json names: a run folder may come from someone else, and its
    `corpus_paths` may name any file on the reader's machine; a report that read them would copy that
    file's text into report.md/html/json. The run folder holds the text it needs.
    """

    def __init__(self, run: RunData) -> None:
        self.run = run
        self._snapshot: dict[str, tuple[str, int, int, str]] | None = None

    @property
    def error(self) -> str | None:
        """Why source passages show the unit text: a run folder without passages.jsonl (older runs)."""
        if self._passages() or not any(u.sources for u in self.run.units.values()):
            return None
        return "the run folder has no passages.jsonl (the run predates it): each source shows its unit's text"

    def _passages(self) -> dict[str, tuple[str, int, int, str]]:
        if self._snapshot is None:
            self._snapshot = {pid: (row["document"], int(row["start"]), int(row["end"]), row["text"])
                              for pid, row in self.run.passages.items()}
        return self._snapshot

    def source(self, document: str, passage_id: str, start: int, end: int) -> dict[str, Any] | None:
        """The recorded span's text and the passage around it from the run's passages.jsonl, or None when
        it holds no passage that matches the record. `origin` says what was read."""
        snap = self._passages().get(passage_id)
        if snap and snap[0] == document and snap[1] <= start < end <= snap[2]:
            p_doc, p_start, p_end, p_text = snap
            return {"span_text": p_text[start - p_start:end - p_start], "passage_text": p_text,
                    "passage_start": p_start, "passage_end": p_end, "origin": PASSAGES_ORIGIN}
        return None


def unit_sources(unit: UnitRecord | None, reader: PassageReader) -> list[dict[str, Any]]:
    """A unit's source spans with their passages (document, start, end, page when the passage has one),
    read from the run's passages.jsonl, else the unit's own text. `from_corpus` stays in the rows for
    readers of older reports; it is false since no corpus file is read again."""
    sources = []
    for src in unit.sources if unit else []:
        found = reader.source(src.document, src.passage_id, src.start, src.end)
        row = {"document": src.document, "passage_id": src.passage_id, "start": src.start, "end": src.end,
               "from_corpus": False}
        page = reader.run.passages.get(src.passage_id, {}).get("page")
        if page is not None:
            row["page"] = page
        row.update(found or {"span_text": unit.text, "passage_text": unit.text, "passage_start": src.start,
                             "passage_end": src.end, "origin": UNIT_TEXT_ORIGIN})
        sources.append(row)
    return sources


def incorrect_units(run: RunData, target: str, reader: PassageReader, seed: int = 0) -> dict[str, Any]:
    """The units the target got wrong, with the answer, the judge's reason and the source passages.

    {"incorrect": rows, "incorrect_sample": {"shown": N, "total": M, ...}}: every one when
    M <= INCORRECT_SAMPLE, else a sample of INCORRECT_SAMPLE drawn with `seed` (the same run and seed give
    the same sample), in round order.
    """
    wrong = sorted((o for o in run.outcomes.get(target, {}).values() if o.status == "incorrect"),
                   key=lambda o: (o.covered_round or 0, o.unit_id))
    chosen = wrong if len(wrong) <= INCORRECT_SAMPLE else sorted(
        random.Random(seed).sample(wrong, INCORRECT_SAMPLE), key=lambda o: (o.covered_round or 0, o.unit_id))
    rows = []
    for o in chosen:
        unit = run.units.get(o.unit_id)
        verdict = run.verdicts.get(o.verdict_id or "")
        answer = run.answers.get(verdict.answer_id) if verdict else None
        question = run.questions.get(verdict.question_id) if verdict else None
        rows.append({
            "unit_id": o.unit_id,
            "unit_text": unit.text if unit else "",
            "round": o.covered_round,
            "cluster": o.cluster_id,
            "question_id": question.id if question else None,
            "question": question.text if question else "",
            "answer_id": answer.id if answer else None,
            "answer_excerpt": excerpt(answer.text) if answer else "",
            "verdict_id": verdict.id if verdict else None,
            "reason": verdict.reason if verdict else "",
            "sources": unit_sources(unit, reader),
        })
    return {"incorrect": rows, "incorrect_sample": {"shown": len(rows), "total": len(wrong), "seed": seed,
                                                    "full_records": FULL_RECORDS}}


def counts(run: RunData) -> dict[str, Any]:
    """What was skipped, unparseable, rejected or ignored: from run.json, or the records when higher."""
    info = run.info
    unparseable_verdicts = sum(1 for v in run.verdicts.values() if v.verdict == "unscored")
    unparseable_questions = sum(1 for q in run.questions.values() if q.status == "unparseable")
    leaks = sum(q.leak_rejections for q in run.questions.values())
    dropped = sum(len(q.dropped_targets) for q in run.questions.values())
    return {
        "skipped_files": len(info.skipped_files),
        "skipped_file_list": info.skipped_files[:LISTED_SKIPS],
        "skipped_passages": len(info.skipped_passages),
        "skipped_passage_list": info.skipped_passages[:LISTED_SKIPS],
        "decoded_with_replacement": len(info.decoded_with_replacement),
        "unparseable_judgments": max(info.unparseable_judgments, unparseable_verdicts),
        "unparseable_questions": max(info.unparseable_questions, unparseable_questions),
        "leak_rejections": max(info.leak_rejections, leaks),
        "ignored_verdicts": info.ignored_verdicts,
        "dropped_targets": dropped,
        "questions_without_targets": sum(1 for q in run.questions.values() if q.status == "no_targets"),
        "failed_requests": failed(run.ledger),
        "unreadable_record_lines": dict(run.unreadable_lines),
    }


def judge_panel(run: RunData) -> dict[str, Any] | None:
    """Per-member agreement with the panel's verdict (all targets, then per target); None without a panel.

    Agreement = share of the units where the member and the panel both gave a label on which the labels
    are the same; `unscored` counts the units where the member gave no usable label."""
    marks = [(v.target, v.mark()) for v in run.verdicts.values() if v.members]
    if not marks:
        return None
    rows = []
    for target in [None, *run.targets]:
        chosen = [m for t, m in marks if target is None or t == target]
        rows += [{"target": target or "all", "member": a.member, "agreed": a.agreed, "compared": a.compared,
                  "unscored": a.unscored, "agreement": a.rate} for a in agreement_with_panel(chosen)]
    return {"members": list(dict.fromkeys(r["member"] for r in rows)), "verdicts": len(marks),
            "tied_or_unscored": sum(not m.scored for _, m in marks), "agreement": rows}


def summarize(run: RunData, seed: int = 0, *, topics: bool = True) -> dict[str, Any]:
    """All report figures of one run as JSON-ready data (topics=False: clusters without their key terms)."""
    info = run.info
    reader = PassageReader(run)
    targets = {}
    for target in run.targets:
        targets[target] = {
            **target_scores(run, target, seed, topics=topics),
            "convergence": convergence(run, target),
            "ignored_histogram": ignored_histogram(run, target),
            "baselines": baselines(run, target),
            "per_language": per_language(run, target),
            **incorrect_units(run, target, reader, seed),
            "rounds": len(run.clusters.get(target, [])) or len([r for r in info.rounds if r.target == target]),
        }
    return {
        "run": {
            "path": str(run.path),
            "run_id": info.run_id,
            "status": info.status,
            "stop_reason": info.stop_reason,
            "mode": info.mode,
            "judge_mode": info.judge_mode,
            "judges": info.judges,
            "targets": run.targets,
            "corpus_paths": info.corpus_paths,
            "documents": info.documents,
            "passages": info.passages,
            "units": run.n_units,
            "questions": len(run.questions),
            "answers": len(run.answers),
            "verdicts": len(run.verdicts),
            "started": info.started,
            "finished": info.finished,
            "duration_s": (info.finished - info.started) if info.finished and info.started else None,
            "outcomes_derived": run.outcomes_derived,
            "passage_source_note": reader.error,
            "language": info.language,
            "languages": info.languages,
        },
        "targets": targets,
        "cost": cost_tables(run),
        "counts": counts(run),
        "judge_panel": judge_panel(run),
    }
