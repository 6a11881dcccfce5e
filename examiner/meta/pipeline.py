"""One meta-evaluation run: step 1 assessments, baseline, step 2 meta-judgments, rankings, report data.

Everything a run computes is appended to JSONL files in its directory as it arrives (assessments.jsonl,
judgments.jsonl, debates.jsonl, individual.jsonl) and model replies are cached by the gateway in
cache.sqlite, so running the same command again skips finished work. Problems a user can act on
(an evaluator missing items, debates without a verdict, unreadable meta-judgments) are collected as
messages in the result; the rest of the results are kept.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from examiner.agents.evaluators.evaluator import assess
from examiner.core.config import Settings
from examiner.corpus.datasets import RowError, Skipped, SourceRecord, load_dataset
from examiner.core.errors import BudgetExhausted, UserError
from examiner.core.passed_text import count_cut
from examiner.llm import Gateway
from examiner.meta import ranking
from examiner.meta.baseline import baseline
from examiner.meta.bias_audit import meta_bias_audit
from examiner.reporting.bias_audit import model_names
from examiner.meta.debate import DebateConfig, build_debate_graph, run_debate
from examiner.meta.individual import (
    bsmeval,
    individual_id,
    jdeval_i,
    matches_from_scores,
    mean_scores,
)
from examiner.meta.jdeval import (
    RulesMode,
    draw_pairs,
    judge_pair,
    judgment_id,
    order_consistency,
)
from examiner.core.assessments import (
    Assessment,
    Debate,
    IndividualJudgment,
    MetaItem,
    MetaJudgment,
)
from examiner.meta.records_file import JsonlStore
from examiner.core import rundir
from examiner.agents.prompting.meta_blocks import decision_text
from examiner.llm.fanout import Outcome, run_bounded

log = logging.getLogger(__name__)

Method = Literal["jdeval", "mdeval", "jdeval-i", "bsmeval"]
METHODS: tuple[str, ...] = ("jdeval", "mdeval", "jdeval-i", "bsmeval")
PAIRWISE_METHODS = ("jdeval", "mdeval")


@dataclass
class MetaConfig:
    """What to run. `meta_judge` None uses the meta_judge role's endpoint."""

    evaluators: list[str]
    method: Method = "jdeval"
    meta_judge: str | None = None
    seed: int = 0
    draws: int = 3
    both_orders: bool = False
    rules: RulesMode = "enforce"
    max_rounds: int = 5
    statement_words: int = 200
    reasoning_words: int = 100
    """Word limit of the meta-judge's reasoning sections (JDEval) and referee turns (MDEval)."""
    shuffles: int = 200
    bootstrap: int = 1000
    concurrency: int = 64
    debater: str | None = None
    """One endpoint for both debaters (default: each evaluator defends itself)."""
    meta_judge_endpoint: str | None = None
    """The endpoint that judged (`meta_judge`, or the meta_judge role's): filled in by the run, for the reports."""
    meta_judge_model: str | None = None
    """That endpoint's model, filled in by the run."""


@dataclass
class MetaRun:
    """Everything computed; `to_dict()` is report.json."""

    config: MetaConfig
    items: list[MetaItem]
    assessments: list[Assessment]
    baseline: dict[str, Any]
    judgments: list[MetaJudgment] = field(default_factory=list)
    debates: list[Debate] = field(default_factory=list)
    individual: list[IndividualJudgment] = field(default_factory=list)
    rankings: dict[str, Any] = field(default_factory=dict)
    counts: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    """Input records the dataset loader could not use (named and counted, never guessed)."""
    bias_audit: dict[str, Any] | None = None
    """The meta-judge's bias audit (examiner/meta/bias_audit.py)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "config": asdict(self.config),
            "items": len(self.items),
            "items_skipped": len(self.skipped),
            "skipped": [s.to_dict() for s in self.skipped],
            "item_kind": self.items[0].kind if self.items else None,
            "baseline": self.baseline,
            "rankings": self.rankings,
            "counts": self.counts,
            "problems": self.problems,
            "usage": self.usage,
            "debates": [d.model_dump() for d in self.debates],
            "bias_audit": self.bias_audit,
        }


def check_inputs(items: Sequence[MetaItem], config: MetaConfig) -> None:
    """Refuse what cannot work before spending a call."""
    if len(set(config.evaluators)) < 2:
        raise UserError("meta-evaluation needs at least two distinct evaluators (--evaluators E1,E2[,...])")
    if config.method not in METHODS:
        raise UserError(f"unknown method {config.method!r}; choose one of {', '.join(METHODS)}")
    if not items:
        raise UserError("no items to meta-evaluate")
    if config.method in PAIRWISE_METHODS and items[0].kind == "individual":
        raise UserError(f"{config.method} compares decisions; individual (scored) items need jdeval-i or bsmeval")
    if config.max_rounds < 1:
        raise UserError("--max-rounds must be at least 1")


async def register_gold(gateway: Gateway, items: Sequence[MetaItem], endpoints: Sequence[str]) -> None:
    """Tell simulated endpoints the gold labels (through the gateway), so simulated judges have an accuracy.
    Labels go in the spelling the prompts use, which is what a simulated judge reads and answers in."""
    gold: dict[str, Any] = {}
    for i in items:
        if i.kind == "individual" and i.gold_score is not None:
            gold[i.oracle_key()] = i.gold_score
        elif i.kind != "individual" and i.gold_label is not None:
            gold[i.oracle_key()] = decision_text(i.gold_label)
    for name in dict.fromkeys(endpoints):
        await gateway.register_oracle(name, gold)


async def _fan_out(works: Sequence[Callable[[], Awaitable[Any]]], limit: int, sink: Callable[[Any], None]) -> None:
    """Run every piece of work under the one runner, handing each result to `sink` as it lands (so it is
    on disk before the next finishes). A budget stop ends the run after the finished work is kept."""
    def keep(outcome: Outcome[Any]) -> None:
        if outcome.ok and outcome.value is not None:
            sink(outcome.value)

    summary = await run_bounded(works, lambda work: work(), limit=limit, on_done=keep)
    if summary.budget_stopped:
        raise BudgetExhausted("budget reached; finished records are kept and a rerun resumes from them")


async def collect_assessments(gateway: Gateway, items: Sequence[MetaItem], evaluators: Sequence[str],
                              store: JsonlStore[Assessment], concurrency: int = 64) -> list[Assessment]:
    """Step 1: every evaluator on every item, skipping (item, evaluator) pairs already in the store."""
    wanted = [(i, e) for i in items for e in evaluators if f"{i.id}|{e}" not in store]

    def factory(item: MetaItem, e: str) -> Callable[[], Awaitable[Assessment]]:
        return lambda: assess(gateway, e, item)

    await _fan_out([factory(i, e) for i, e in wanted], concurrency, store.add)
    ids = {i.id for i in items}
    return [a for a in store.values() if a.item_id in ids and a.evaluator in evaluators]


def coverage_problems(items: Sequence[MetaItem], assessments: Sequence[Assessment], evaluators: Sequence[str]) -> list[str]:
    """One message per evaluator lacking usable assessments for some items."""
    problems = []
    have = {(a.item_id, a.evaluator): a for a in assessments}
    for e in evaluators:
        missing = sum((i.id, e) not in have for i in items)
        bad = Counter(have[(i.id, e)].status for i in items if (i.id, e) in have and not have[(i.id, e)].ok)
        if missing or bad:
            parts = [f"{n} {s}" for s, n in sorted(bad.items())] + ([f"{missing} missing"] if missing else [])
            problems.append(f"evaluator {e} has no usable assessment for {missing + sum(bad.values())} of "
                            f"{len(items)} items ({', '.join(parts)}); its pairs on those items are skipped")
    return problems


def rank(matches: Sequence[ranking.Match], players: Sequence[str], base: dict[str, float], *, shuffles: int,
         bootstrap: int, seed: int, scores: dict[str, float] | None = None) -> dict[str, Any]:
    """Win rates with intervals, Elo over shuffles (match-order spread), Elo and Bradley-Terry with bootstrap
    intervals over matches and rank groups, Bradley-Terry (MM fit), and agreement with the baseline."""
    out: dict[str, Any] = {"matches": len(matches), "players": list(players)}
    seen = sorted({m.a for m in matches} | {m.b for m in matches})
    if not matches:
        return out
    wr = ranking.win_rates(matches, players=seen)
    out["win_rates"] = wr.to_dict()
    out["win_rates"]["overall_win_rate_interval"] = ranking.win_rate_intervals(matches)
    elo = ranking.elo(matches, n_shuffles=shuffles, seed=seed, players=seen)
    out["elo"] = elo.to_dict()
    out["intervals"] = ranking.rating_intervals(matches, n_rounds=bootstrap, seed=seed)
    try:
        bt = ranking.bradley_terry(matches, n_bootstrap=bootstrap, seed=seed, players=seen)
        out["bradley_terry"] = bt.to_dict()
    except ValueError as exc:
        out["bradley_terry_error"] = str(exc)
    if scores is not None:
        out["mean_scores"] = scores
    agreements: dict[str, Any] = {}
    if len([p for p in base if p in seen]) >= 2:
        # The ratings the report shows: Elo's median over bootstrap rounds, BT's fit on the observed matches.
        shown = out["intervals"]
        agreements["elo"] = ranking.ranking_agreement(
            {r["player"]: r["rating"] for r in shown["elo"]["players"]}, base).to_dict()
        agreements["win_rate"] = ranking.ranking_agreement(
            {p: float(wr.overall(p) or 0) for p in seen}, base).to_dict()
        if "bradley_terry" in shown:
            agreements["bradley_terry"] = ranking.ranking_agreement(
                {r["player"]: r["rating"] for r in shown["bradley_terry"]["players"]}, base).to_dict()
        if scores and len([p for p in base if p in scores]) >= 2:
            agreements["mean_score"] = ranking.ranking_agreement(scores, base).to_dict()
    out["agreement"] = agreements
    return out


async def run_meta(items: Sequence[MetaItem], config: MetaConfig, settings: Settings, out_dir: Path | None, *,
                   imported: Sequence[Assessment] = (), skipped: Sequence[Skipped] = (),
                   gateway: Gateway | None = None, progress: Callable[[str], None] | None = None) -> MetaRun:
    """The whole pipeline; writes JSONL records as it goes (report files are written by report.write_reports)."""
    check_inputs(items, config)
    say = progress or (lambda _m: None)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    own_gateway = gateway is None
    gw = gateway or Gateway(settings, run_dir=out_dir, cache=True, notes=progress)
    try:
        run = await _run(items, config, gw, out_dir, imported, say)
    finally:
        if own_gateway:
            await gw.aclose()
    if skipped:
        run.skipped = list(skipped)
        run.problems.insert(0, f"{len(skipped)} input record(s) could not be used and were skipped "
                               f"(first: {skipped[0].message})")
    return run


async def _run(items: Sequence[MetaItem], config: MetaConfig, gw: Gateway, out_dir: Path | None,
               imported: Sequence[Assessment], say: Callable[[str], None]) -> MetaRun:
    evaluators = list(dict.fromkeys(config.evaluators))
    path = (lambda name: out_dir / name) if out_dir is not None else (lambda name: None)
    a_store: JsonlStore[Assessment] = JsonlStore(path(rundir.ASSESSMENTS), Assessment, key="assessment")
    for a in imported:
        if f"{a.item_id}|{a.evaluator}" not in a_store:
            a_store.add(a)
    imported_names = {a.evaluator for a in imported}
    to_call = [e for e in evaluators if e not in imported_names]
    for e in to_call:
        gw.settings.endpoint(e)  # unknown endpoint -> ConfigError before any call
    await register_gold(gw, items, list(dict.fromkeys(to_call + [config.meta_judge or gw.resolve("meta_judge")[0]])))
    say(f"step 1: {len(items)} items x {len(evaluators)} evaluators")
    assessments = await collect_assessments(gw, items, to_call, a_store, config.concurrency)
    assessments = [a for a in a_store.values() if a.evaluator in evaluators and a.item_id in {i.id for i in items}]
    a_store.close()
    problems = coverage_problems(items, assessments, evaluators)
    base = baseline(items, assessments, evaluators)
    run = MetaRun(config=config, items=list(items), assessments=assessments, baseline=base, problems=problems)
    usable = {(a.item_id, a.evaluator): a for a in assessments if a.ok}

    say(f"step 2: {config.method}")
    if config.method in PAIRWISE_METHODS:
        await _pairwise(run, gw, usable, evaluators, path)
    else:
        await _individual(run, gw, usable, evaluators, path)
    run.counts["passed_cut"] = passed_cut(run, gw.settings.max_passed_chars)
    run.usage = {**gw.totals.counters(), "unparseable_replies": gw.totals.unparseable, "failed_calls": gw.totals.failed}
    judge = config.meta_judge or gw.resolve("meta_judge")[0]
    run.config = replace(config, meta_judge_endpoint=judge, meta_judge_model=gw.settings.endpoint(judge).model)
    specs = {"endpoints": {name: spec.model_dump() for name, spec in gw.settings.endpoints.items()}}
    run.bias_audit = meta_bias_audit(run, judge, model_names(specs, [judge, *evaluators]))
    return run


def passed_cut(run: MetaRun, limit: int) -> int:
    """Texts models wrote that another model read cut to `limit` (examiner.core.passed_text): the items'
    outputs (shown to the evaluators and the meta-judge), the evaluators' explanations and the debate
    statements. Each text counts once, however many prompts showed it."""
    outputs = {text for item in run.items for text in (item.output_1, item.output_2, item.text)}
    explanations = {a.explanation for a in run.assessments if a.ok}
    statements = {turn.text for debate in run.debates for turn in debate.turns}
    return count_cut(outputs | explanations | statements, limit)


async def _pairwise(run: MetaRun, gw: Gateway, usable: dict[tuple[str, str], Assessment], evaluators: list[str],
                    path: Callable[[str], Path | None]) -> None:
    config = run.config
    j_store: JsonlStore[MetaJudgment] = JsonlStore(path(rundir.JUDGMENTS), MetaJudgment)
    d_store: JsonlStore[Debate] = JsonlStore(path(rundir.DEBATES), Debate, key="judgment_id")
    graph = build_debate_graph(gw, DebateConfig(max_rounds=config.max_rounds, statement_words=config.statement_words,
                                                referee_words=config.reasoning_words, referee_endpoint=config.meta_judge)) if config.method == "mdeval" else None
    planned: list[str] = []
    tasks: list[Callable[[], Awaitable[Any]]] = []
    for item in run.items:
        present = [e for e in evaluators if (item.id, e) in usable]
        for draw, (e1, e2) in enumerate(draw_pairs(item.id, present, config.seed, config.draws)):
            orders = [("forward", e1, e2)] + ([("reversed", e2, e1)] if config.both_orders else [])
            for order, x, y in orders:
                jid = judgment_id(config.method, item.id, draw, order, x, y)
                planned.append(jid)
                if jid in j_store:
                    continue
                a1, a2 = usable[(item.id, x)], usable[(item.id, y)]
                if config.method == "jdeval":
                    tasks.append(_jd_task(gw, item, a1, a2, draw, order, config))
                else:
                    debaters = (config.debater, config.debater) if config.debater else None
                    tasks.append(_md_task(graph, item, a1, a2, draw, order, config.max_rounds, debaters))

    def sink(result: Any) -> None:
        if isinstance(result, tuple):
            judgment, debate = result
            d_store.add(debate)
            j_store.add(judgment)
        else:
            j_store.add(result)

    await _fan_out(tasks, config.concurrency, sink)
    j_store.close()
    d_store.close()
    judgments = [j_store.records[j] for j in planned if j in j_store]
    run.judgments = judgments
    run.debates = [d_store.records[j] for j in planned if j in d_store]
    statuses = Counter(j.status for j in judgments)
    excluded = [j for j in judgments if j.outcome is None]
    run.counts = {
        "planned": len(planned), "judgments": len(judgments), "usable": len(judgments) - len(excluded),
        "unparseable": statuses.get("unparseable", 0), "failed": statuses.get("failed", 0),
        "rule_violations": sum(j.rule_violation for j in judgments),
        "outcomes": {str(k): n for k, n in Counter(j.outcome for j in judgments if j.outcome is not None).items()},
    }
    gold = {i.id: i.gold_label for i in run.items if i.gold_label is not None}
    answered = [j for j in judgments if j.better_answer is not None and j.item_id in gold]
    if answered:
        run.counts["meta_judge_answer_accuracy"] = sum(j.better_answer == gold[j.item_id] for j in answered) / len(answered)
    if config.both_orders:
        run.counts["order_consistency"] = order_consistency(judgments)
    if config.method == "mdeval":
        rounds = Counter(d.rounds for d in run.debates)
        run.counts["debate_rounds"] = {str(k): v for k, v in sorted(rounds.items())}
        run.counts["forced_verdicts"] = sum(d.forced for d in run.debates)
        no_verdict = [d for d in run.debates if d.verdict is None]
        run.counts["no_verdict"] = len(no_verdict)
        if no_verdict:
            run.problems.append(f"{len(no_verdict)} debate(s) ended without a parseable verdict and are left out of "
                                f"the ranking: {', '.join(d.judgment_id for d in no_verdict[:5])}"
                                + (" ..." if len(no_verdict) > 5 else ""))
    bad = statuses.get("unparseable", 0) + statuses.get("failed", 0)
    if bad and config.method == "jdeval":
        run.problems.append(f"{bad} of {len(judgments)} meta-judgments could not be read and are left out (never counted as ties)")
    matches = [ranking.Match(j.assistant_1, j.assistant_2, j.outcome, j.item_id) for j in judgments if j.outcome is not None]
    run.rankings = rank(matches, evaluators, run.baseline["scores"], shuffles=config.shuffles,
                        bootstrap=config.bootstrap, seed=config.seed)


def _jd_task(gw: Gateway, item: MetaItem, a1: Assessment, a2: Assessment, draw: int, order: Any,
             config: MetaConfig) -> Callable[[], Awaitable[MetaJudgment]]:
    return lambda: judge_pair(gw, item, a1, a2, draw=draw, order=order, endpoint=config.meta_judge, rules=config.rules,
                              max_words=config.reasoning_words)


def _md_task(graph: Any, item: MetaItem, a1: Assessment, a2: Assessment, draw: int, order: Any, max_rounds: int,
             debaters: tuple[str | None, str | None] | None) -> Callable[[], Awaitable[tuple[MetaJudgment, Debate]]]:
    return lambda: run_debate(graph, item, a1, a2, draw=draw, order=order, max_rounds=max_rounds,
                              debater_endpoints=debaters)


async def _individual(run: MetaRun, gw: Gateway, usable: dict[tuple[str, str], Assessment], evaluators: list[str],
                      path: Callable[[str], Path | None]) -> None:
    config = run.config
    store: JsonlStore[IndividualJudgment] = JsonlStore(path(rundir.INDIVIDUAL), IndividualJudgment)
    fn = jdeval_i if config.method == "jdeval-i" else bsmeval
    planned: list[str] = []
    tasks: list[Callable[[], Awaitable[Any]]] = []
    for item in run.items:
        for e in evaluators:
            a = usable.get((item.id, e))
            if a is None:
                continue
            jid = individual_id(config.method, item.id, e)
            planned.append(jid)
            if jid not in store:
                tasks.append((lambda it=item, asm=a: fn(gw, it, asm, endpoint=config.meta_judge)))
    await _fan_out(tasks, config.concurrency, store.add)
    store.close()
    judged = [store.records[j] for j in planned if j in store]
    run.individual = judged
    statuses = Counter(j.status for j in judged)
    run.counts = {"planned": len(planned), "judgments": len(judged), "usable": sum(j.score is not None for j in judged),
                  "unparseable": statuses.get("unparseable", 0), "failed": statuses.get("failed", 0)}
    if config.method == "bsmeval":
        branches = Counter(c.lower() for j in judged for c in j.branches)
        run.counts["branches_per_judgment"] = (sum(len(j.branches) for j in judged) / len(judged)) if judged else 0
        run.counts["top_branches"] = dict(branches.most_common(15))
    bad = statuses.get("unparseable", 0) + statuses.get("failed", 0)
    if bad:
        run.problems.append(f"{bad} of {len(judged)} meta-judgments could not be read and are left out")
    scores = mean_scores(judged)
    run.rankings = rank(matches_from_scores(judged), evaluators, run.baseline["scores"], shuffles=config.shuffles,
                        bootstrap=config.bootstrap, seed=config.seed, scores=scores)


def load_imported(path: Path) -> tuple[list[Assessment], list[Skipped]]:
    """Assessments made elsewhere (JSONL of item_id, evaluator, decision|score, explanation), read by the one
    dataset loader: a record that is not an assessment is named, skipped and counted."""

    def assessment(record: SourceRecord) -> Assessment:
        data = record.data
        for key in ("item_id", "evaluator"):
            if data.get(key) is None:
                raise RowError(key, f"missing field '{key}'")
        try:
            return Assessment(item_id=str(data["item_id"]), evaluator=str(data["evaluator"]),
                              decision=data.get("decision"), score=data.get("score"),
                              explanation=str(data.get("explanation", "")), source="imported",
                              unscored=data.get("unscored"), status=data.get("status", "ok"))
        except ValidationError as exc:
            first = exc.errors()[0]
            raise RowError(".".join(str(p) for p in first["loc"]) or "-", f"not an assessment record ({first['msg']})") from None

    return load_dataset(str(path), assessment, lambda a: f"{a.item_id}|{a.evaluator}", id_field="item_id",
                        what="assessments file")
