"""`examiner estimate`: a small seeded pilot on the configured endpoints, extrapolated to the whole exam.

Method (docs/GUIDE.md "Estimating a run" says the same for users):

1. Pilot. The exam itself (the same graph, nodes, roles, prompts and endpoints) runs on a seeded sample
   of its units. The corpus is loaded and cut into units exactly as the full run would (so documents,
   passages and units are measured; in `llm` unit mode the extraction calls are made for the whole corpus
   and measured, not extrapolated). The units are clustered exactly as the run's round 1 clusters them
   (nodes.cluster.round_clusters: same pool, seed and ids); `clusters` of those clusters, a simple random
   sample drawn with the exam's seed (more until the sample holds MIN_PILOT_UNITS units), are the pilot's
   round 1 as they are: the run's own questions, answers, judgments and probes for those clusters, the
   same requests, so a run with the same response cache (`--cache`) gets every one of them from it and
   pays each once (experiments/estimate_reuse.py measures the share). By default (`rounds` = PILOT_ROUNDS
   = 1) the pilot stops there and runs no judge self-check: a later round of a pilot clusters the sample's
   leftover units among themselves, and its self-check draws from the sample's answers, where the run
   clusters and draws from the whole corpus's, so those calls would be paid twice. With `rounds` above 1
   the pilot goes on through later rounds (question, answer, judge, probes, coverage) until that many or
   the exam's own stop rule, and re-judges as the run does: it measures later rounds and the self-check
   at calls the run cannot reuse. Every call is real and recorded in the pilot directory's ledger.jsonl:
   what the pilot cost is measured.
2. Attribution. Each pilot call is split evenly over the units it names (the ledger's unit_ids), giving
   each unit its calls, prompt tokens and completion tokens per round and per (role, endpoint). Each
   unit also has a trajectory per target: the round it left the pool (covered, or unanswered after
   `max_targeted` unrelated verdicts), or never. A call about several units is a call per cluster (a
   question, its answers and judgments); a call about one unit in a stage that never names more (e.g.
   G-Eval per unit) is a call per unit.
3. Extrapolation. The sample stands for the corpus: totals are the sample's scaled by N/n (N units in
   the corpus, n in the sample). The round count is the exam's stop rule applied to the trajectories
   (after round r the pool is the units that have not left; the exam stops when a round covers less than
   `min_round_coverage` of its pool, the pool is empty, or the mode's last round); only usage of rounds up
   to that stop counts; rounds past the pilot's (with the default one-round pilot: rounds 2 on) take the
   pilot's last round's shares and usage per unit and per cluster, so the range holds the sampling
   spread of those shares but not a later round that covers less than round 1 did. Each round makes the
   clusters the mode makes of the full pool (ceil(pool / cluster_size) for Ref-Eval); per-cluster usage is the pilot's usage per cluster in that round times
   those clusters, per-unit usage the pilot's usage per pool unit times the pool. Dollars come from tokens
   at the endpoints' prices (`dollars`, the one place).
3b. The judge self-check (stage `self_check`) is a term of its own, left out of step 2's usage: it
   re-judges max(ceil(share x answers), self_check_min) of the judged answers with two or more target
   units, a floor (20 by default) rather than a share, so scaling the pilot's re-judgments by the corpus
   is wrong whenever the floor decides (a pilot re-judges all of its few answers). The answers it may
   draw are extrapolated like a per-cluster figure (each split over its question's target units), the
   node's own `sample_size` turns them into the answers re-judged, times the pilot's requests per
   re-judged answer. A request is one judgment: its call and the re-asks of a reply that did not parse
   (same call_id). Its tokens come from the pilot's `self_check` requests, resampled in each draw (so the
   range holds their spread: a small model's replies on reordered units vary widely). A reply cut at
   max_tokens makes the costliest request (the limit's tokens, re-asked up to MAX_REPAIRS times with the
   replies carried along); it is rare, so a small pilot may see none: each draw takes the share of cut
   requests from a Beta draw given the pilot's judge requests (first judgments and re-judgments, Jeffreys
   prior, as for the rounds' shares) and prices a cut request as the pilot measured one, else as the worst
   case (every call of it cut at the judge's reply limit); the central figure uses the share the pilot
   saw. With fewer than MIN_SELF_CHECK_CALLS self-check calls, the judge's first judgments of answers
   about two or more units (pooled with the few re-judgments) stand in, and each draw scales their tokens
   by a log-uniform factor in [1/FALLBACK_SPREAD, FALLBACK_SPREAD] (the estimate's notes say so).
4. Range. A bootstrap over the sample's units (BOOTSTRAP resamples with replacement, seeded): each
   resample has its own trajectories, hence its own round count, and its own usage, hence its own totals.
   The range is the INTERVAL central share of those totals (5th to 95th percentile), per role and in
   total, so it holds both the per-unit spread of cost and the uncertainty of the round count (and,
   through the predicted answers and the resampled calls, of the self-check). A
   resample that would run one round longer than the pilot did costs that round at the pilot's last
   round's usage per unit in the pool. The central figure is the extrapolation of the sample itself.
   What the range cannot hold: a corpus whose unsampled part behaves unlike the sample. The figures are
   every call of the run priced as if nothing were cached: a pilot call its response cache answered
   (a warm shared `--cache`) counts as the call it reuses, at the tokens of the reply it carries
   (`_as_sent`), so a cold and a warm cache give the same figures. What a shared cache saves is said
   apart: the run gets the pilot's round-1 calls from it (the notes say how many and what they cost at
   list prices, and how many the cache already held, `_pilot_notes`).

`replay_simulated` keeps the older estimate: the whole exam replayed against the simulated backend at the
configured prices. It predicts a simulated run exactly and a real one poorly (simulated replies have
their own lengths and coverage); the command labels it as such.
"""

from __future__ import annotations

import json
import random
import tempfile
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from examiner.core.config import EndpointSpec, Settings
from examiner.core import rundir
from examiner.core.ledger_record import LedgerRecord
from examiner.core.records import (SELF_CHECK_STAGE, AnswerRecord, QuestionRecord, SelfCheckRecord, UnitOutcome,
                                   VerdictRecord)
from examiner.core.rundir import RunDir
from examiner.core.errors import UserError
from examiner.exam.bookends import start_state
from examiner.exam.graph import Sample
from examiner.exam.modes import MODES
from examiner.exam.nodes.cluster import round_clusters
from examiner.exam.nodes.context import ExamContext
from examiner.exam.nodes.self_check import candidates as self_check_candidates
from examiner.exam.nodes.self_check import sample_size
from examiner.exam.runner import ExamRequest, start_exam
from examiner.exam.state import ClusterState
from examiner.exam.run_writer import RunStore
from examiner.llm.gateway import MAX_REPAIRS
from examiner.llm.ledger import aggregate, answered, per_unit
from examiner.agents.judge.unit_judge import reply_limit

PILOT_CLUSTERS = 4
"""Round-1 clusters the pilot examines by default (`estimate --pilot-clusters`)."""
PILOT_ROUNDS = 1
"""Rounds the pilot runs by default (`estimate --pilot-rounds`): round 1 is the run's own (a run with the
same --cache reuses every call of it); later rounds of a pilot cluster its leftover units among themselves,
which the run never does, so a run cannot reuse them (module docstring, step 1)."""
MIN_PILOT_UNITS = 12
"""Fewest units in the pilot's sample (more clusters are taken until it holds this many)."""
BOOTSTRAP = 2000
"""Bootstrap resamples behind each range."""
INTERVAL = 0.90
"""Central share of the bootstrap totals that a range spans (5th to 95th percentile)."""
METRICS = ("calls", "prompt_tokens", "completion_tokens")
MIN_SELF_CHECK_CALLS = 5
"""Fewest self-check calls in the pilot for their per-call tokens to stand for the full run's; with fewer,
the judge's own calls stand in, widened by FALLBACK_SPREAD (module docstring, step 3b)."""
FALLBACK_SPREAD = 3.0
"""How far a re-judgment's tokens per call may differ from a first judgment's when the pilot measured too
few re-judgments: each draw scales them by a factor drawn log-uniformly in [1/3, 3]. Why 3: on the local
model a re-judgment's reply was 2.8 times as long as a first judgment's (139 against 49 output tokens per
call, docs/MEASUREMENTS.md "Estimates a user can plan with")."""


PRICINGS = ("standard", "batch", "cached")
"""How an estimate prices the same tokens side by side: `standard` (list prices), `batch` (every call
through the provider's batch API, at the endpoint's batch_price_factor) and `cached` (list prices, with the
share of prompt tokens the pilot's endpoint reported as read from its prompt cache billed at the cached
input price)."""


def dollars(prompt_tokens: float, completion_tokens: float, spec: EndpointSpec, *, pricing: str = "standard",
            cached_share: float = 0.0) -> float:
    """The one place an estimate turns one role's tokens on one endpoint into dollars (EndpointSpec.cost_usd);
    `cached_share`: the share of prompt tokens the pilot saw served from the provider's prompt cache."""
    cached = cached_share * prompt_tokens if pricing == "cached" else 0.0
    return spec.cost_usd(prompt_tokens, completion_tokens, cached_tokens=cached,  # type: ignore[arg-type]
                         batch=pricing == "batch")


@dataclass(frozen=True)
class Figure:
    """One extrapolated figure: the central value and its range."""

    value: float
    low: float
    high: float

    @staticmethod
    def from_draws(value: float, draws: np.ndarray) -> "Figure":
        tail = (1 - INTERVAL) / 2 * 100
        low, high = (float(x) for x in np.percentile(draws, [tail, 100 - tail]))
        return Figure(float(value), min(low, float(value)), max(high, float(value)))


@dataclass
class Usage:
    """Calls, tokens and dollars of one (role, endpoint), or of everything (role `total`)."""

    role: str
    endpoint: str
    calls: Figure
    prompt_tokens: Figure
    completion_tokens: Figure
    dollars: Figure
    """At the list prices (pricing `standard`)."""
    dollars_by_pricing: dict[str, Figure] = field(default_factory=dict)
    """The same tokens priced each way of PRICINGS."""


@dataclass
class Estimate:
    """What `examiner estimate` prints and writes to estimate.json."""

    documents: int
    passages: int
    units: int
    pilot_units: int
    pilot_clusters: int
    pilot_rounds: int
    pilot_dir: str
    pilot_spent: list[dict[str, Any]]
    """What the pilot itself paid, per role and endpoint (measured, from its ledger)."""
    rounds: Figure
    clusters: Figure
    self_check_calls: Figure
    """Calls of the judge self-check (their tokens are in the judge's row of by_role and in total)."""
    by_role: list[Usage]
    total: Usage
    notes: list[str] = field(default_factory=list)
    pilot_status: str = "completed"
    """The pilot run's status (run.json): `failed` when every call of a stage failed (an outage: the figures
    rest on nothing, and `examiner estimate` exits 75 as `run` does)."""
    pilot_stop_reason: str = ""
    """Why the pilot stopped, when it did not complete."""

    def as_dict(self) -> dict[str, Any]:
        return {"method": "pilot", "interval": INTERVAL, "bootstrap": BOOTSTRAP, "measured": list(MEASURED),
                "extrapolated": list(EXTRAPOLATED), **asdict(self)}


MEASURED = ("documents", "passages", "units", "pilot_units", "pilot_clusters", "pilot_rounds", "pilot_spent")
"""Estimate fields that were counted (the corpus was read whole; the pilot's calls are in its ledger)."""
EXTRAPOLATED = ("rounds", "clusters", "self_check_calls", "by_role", "total")
"""Estimate fields extrapolated from the pilot, each with a range."""


# --------------------------------------------------------------------------------------------- pilot

def pilot_sample(clusters: int, chosen: dict[str, Any]) -> Sample:
    """The graph's `sample` hook: narrow every target's pool to `clusters` of the run's own round-1 clusters,
    a seeded random sample of them (more until it holds MIN_PILOT_UNITS units), which round 1 then asks
    about as they are (ids and member order included: the run's prompts); `chosen` receives the sample's
    unit ids and cluster counts."""

    def narrow(ctx: ExamContext, start: dict[str, Any]) -> dict[str, Any]:
        groups = round_clusters(ctx, sorted(ctx.units), 1)
        order = random.Random(ctx.exam.seed).sample(range(len(groups)), len(groups))
        picked: list[ClusterState] = []
        for index in order:
            if len(picked) >= clusters and sum(len(g["members"]) for g in picked) >= MIN_PILOT_UNITS:
                break
            picked.append(groups[index])
        pool = sorted(uid for group in picked for uid in group["members"])
        chosen.update(units=pool, clusters=len(picked), round1_clusters=len(groups),
                      cluster_ids=[group["id"] for group in picked])
        state = start_state(ctx, pool)
        key = ctx.keep(picked)  # round 1 asks about these as they are (nodes.cluster keeps preset clusters)
        return {**state, "clusters": {target: key for target in ctx.targets}}

    return narrow


def pilot_settings(settings: Settings, rounds: int) -> Settings:
    """The settings the pilot runs with: at most `rounds` rounds, and with one round no judge self-check
    (its sample of answers is drawn from all of a run's answers, so a pilot's re-judgments are never the
    run's); everything a prompt depends on is the run's."""
    exam = settings.exam
    changes: dict[str, Any] = {"max_rounds": min(rounds, exam.max_rounds)}
    if rounds == 1:
        changes["self_check_share"] = 0.0
    # Control questions are asked once, after the last round: the extrapolation's per-round usage would
    # count them in every predicted round, so the pilot asks none and a note says what they add.
    changes["control_share"] = 0.0
    # The wording check too runs once, after the last round: left out of the pilot, given in a note.
    changes["paraphrases"] = 0
    return settings.merged({"exam": changes})


async def run_pilot(settings: Settings, request: ExamRequest, pilot_dir: Path, *, clusters: int = PILOT_CLUSTERS,
                    rounds: int = PILOT_ROUNDS, quiet: bool = True) -> dict[str, Any]:
    """Run the pilot into `pilot_dir` (a normal run directory plus pilot.json naming the sample)."""
    chosen: dict[str, Any] = {"rounds_asked": rounds}
    request = ExamRequest(**{**asdict(request), "run_id": request.run_id or "pilot"})
    info = await start_exam(pilot_settings(settings, rounds), request, pilot_dir, quiet=quiet, report=False,
                            sample=pilot_sample(clusters, chosen))
    chosen.update(status=info.status, stop_reason=info.stop_reason)
    (pilot_dir / rundir.PILOT).write_text(json.dumps(chosen, indent=1), encoding="utf-8")
    return chosen


async def estimate_exam(settings: Settings, request: ExamRequest, pilot_dir: str | Path, *,
                        clusters: int = PILOT_CLUSTERS, rounds: int = PILOT_ROUNDS, quiet: bool = True) -> Estimate:
    """Pilot on the configured endpoints, then the extrapolation (written to pilot_dir/estimate.json)."""
    pilot_dir = Path(pilot_dir)
    chosen = await run_pilot(settings, request, pilot_dir, clusters=clusters, rounds=rounds, quiet=quiet)
    if not chosen.get("units"):
        raise UserError(f"the pilot stopped before it had units to examine ({chosen['status']}: "
                        f"{chosen['stop_reason']}); its ledger is in {pilot_dir}")
    estimate = extrapolate(settings, pilot_dir)
    (pilot_dir / rundir.ESTIMATE).write_text(json.dumps(estimate.as_dict(), indent=1), encoding="utf-8")
    return estimate


# --------------------------------------------------------------------------------------- extrapolation

@dataclass
class PilotData:
    """The pilot's figures as arrays over its sample's units (see the module docstring, step 2)."""

    units: list[str]
    keys: list[tuple[str, str]]
    """(role, endpoint) of the usage axis."""
    usage: np.ndarray
    """[unit, round - 1, key, metric, kind]: the unit's share of calls, prompt and completion tokens, of
    calls made per cluster (kind 0) and per unit (kind 1)."""
    exits: np.ndarray
    """[target, unit]: round the unit left the target's pool (a large number: never)."""
    covered: np.ndarray
    """[target, unit]: whether it left covered (else unanswered)."""
    fixed: dict[tuple[str, str], np.ndarray]
    """Usage that belongs to no unit (unit extraction), counted once, as measured."""
    density: np.ndarray
    """[round - 1]: the pilot's clusters per unit in the pool (summed over targets)."""
    candidates: np.ndarray
    """[unit, round - 1]: the unit's share of the judged answers the self-check may draw (those whose
    question has two or more target units), split over those units like a call about them."""
    self_check: "SelfCheckPilot"


@dataclass
class SelfCheckPilot:
    """What one re-judged answer costs, from the pilot (module docstring, step 3b). A request is one
    judgment: its first call and the re-asks of a reply that did not parse (same call_id)."""

    requests_per_answer: dict[tuple[str, str], float]
    """(role, endpoint) -> requests per re-judged answer (1 for a judge that marks an answer in one call)."""
    whole: dict[tuple[str, str], np.ndarray]
    """(role, endpoint) -> [request, (calls, prompt, completion tokens)] of the requests no reply of which
    was cut at max_tokens."""
    cut: dict[tuple[str, str], np.ndarray]
    """The same for requests with a reply cut at max_tokens: those measured, else the worst case (every
    reply of the request and of its MAX_REPAIRS re-asks cut at the judge's reply limit)."""
    seen: dict[tuple[str, str], tuple[int, int]]
    """(requests cut, requests) among the judge's pilot requests, first judgments and re-judgments."""
    fallback: bool
    """Whether the judge's first judgments stand in for too few measured re-judgments."""


NEVER = 10**6
"""Exit round of a unit that never left the pool."""


def _pilot_data(pilot_dir: Path) -> tuple[PilotData, dict[str, Any]]:
    """Usage, trajectories and cluster density of the pilot (module docstring, step 2), from its calls as
    sent (`_as_sent`); its answered ledger records as they are (`ledger`) and as sent (`sent`)."""
    chosen = json.loads((pilot_dir / rundir.PILOT).read_text(encoding="utf-8"))
    run = RunDir(pilot_dir)
    info = run.read_info()
    units: list[str] = chosen["units"]
    index = {uid: i for i, uid in enumerate(units)}
    ledger = answered(run.ledger_records())
    records = _as_sent(ledger)
    rounds = max([r.round or 0 for r in records] + [1])
    keys = sorted({(r.role, r.endpoint) for r in records if r.unit_ids})
    # The self-check's calls are a term of their own (step 3b), not usage per unit or per cluster.
    exam_records = [r for r in records if r.stage != SELF_CHECK_STAGE]
    # Stages with a call about several units make their calls per cluster (question), not per unit.
    per_cluster = {str(r.stage) for r in exam_records if len(r.unit_ids) > 1}
    usage = np.zeros((len(units), rounds + 1, len(keys), len(METRICS), 2))
    for k, (role, endpoint) in enumerate(keys):
        for rnd in range(1, rounds + 1):
            for kind, of_kind in enumerate((lambda s: s in per_cluster, lambda s: s not in per_cluster)):
                group = [r for r in exam_records if (r.role, r.endpoint) == (role, endpoint)
                         and r.round == rnd and of_kind(str(r.stage))]
                for uid, shares in per_unit(group).items():
                    if uid in index:
                        usage[index[uid], rnd - 1, k, :, kind] = [shares[m] for m in METRICS]
    fixed: dict[tuple[str, str], np.ndarray] = defaultdict(lambda: np.zeros(len(METRICS)))
    for record in records:
        if not record.unit_ids:
            fixed[(record.role, record.endpoint)] += [1, record.prompt_tokens, record.completion_tokens]
    targets = list(info.targets)
    exits = np.full((len(targets), len(units)), NEVER)
    covered = np.zeros((len(targets), len(units)), dtype=bool)
    store = RunStore(pilot_dir)
    last_verdict: dict[tuple[str, str], int] = {}
    for verdict in store.all(VerdictRecord).values():
        key = (verdict.target, verdict.unit_id)
        last_verdict[key] = max(last_verdict.get(key, 0), verdict.round)
    for outcome in store.all(UnitOutcome).values():
        if outcome.unit_id not in index or outcome.target not in targets:
            continue
        t, u = targets.index(outcome.target), index[outcome.unit_id]
        if outcome.verdict_id is not None and outcome.covered_round is not None:
            exits[t, u], covered[t, u] = outcome.covered_round, True
        elif outcome.status == "unanswered":
            exits[t, u] = last_verdict.get((outcome.target, outcome.unit_id), 1)
    density = np.ones(rounds)
    for rnd in range(1, rounds + 1):
        rows = [r for r in info.rounds if r.round == rnd]
        if sum(r.pool_before for r in rows):
            density[rnd - 1] = sum(r.clusters for r in rows) / sum(r.pool_before for r in rows)
    questions, answers = store.all(QuestionRecord), store.all(AnswerRecord)
    judged = {v.answer_id for v in store.all(VerdictRecord).values()}
    drawable = np.zeros((len(units), rounds + 1))
    for aid in self_check_candidates(answers.values(), questions, judged):
        answer = answers[aid]
        named = questions[answer.question_id].targets
        for uid in named:
            if uid in index:
                drawable[index[uid], answer.round - 1] += 1 / len(named)
    check = _self_check_pilot(records, len(store.all(SelfCheckRecord)), len(judged))
    data = PilotData(units, keys, usage, exits, covered, dict(fixed), density, drawable, check)
    return data, {"info": info, "chosen": chosen, "ledger": ledger, "sent": records,
                  "rounds": len({r.round for r in info.rounds})}


def _as_sent(records: list[LedgerRecord]) -> list[LedgerRecord]:
    """The pilot's answered calls as a run with nothing cached sends them: a response-cache hit carries
    the tokens of the reply it reuses (examiner.llm.ledger), so it counts as that call, unmarked. The
    estimate prices the run this way, whatever the cache held when the pilot ran."""
    return [r.then(cache_hit=False) if r.cache_hit else r for r in records]


def _requests(records: list[LedgerRecord]) -> list[list[LedgerRecord]]:
    """Calls grouped into requests: a call and its re-asks share a call_id."""
    groups: dict[str, list[LedgerRecord]] = defaultdict(list)
    for i, record in enumerate(records):
        groups[record.call_id or f"#{i}"].append(record)
    return list(groups.values())


def _is_cut(request: list[LedgerRecord]) -> bool:
    return any(r.finish_reason == "length" for r in request)


def _row(request: list[LedgerRecord]) -> list[float]:
    return [len(request), sum(r.prompt_tokens for r in request), sum(r.completion_tokens for r in request)]


def _worst_cut(requests: list[list[LedgerRecord]]) -> np.ndarray:
    """A request none of whose replies parsed, each cut at the judge's reply limit: the first call and
    MAX_REPAIRS re-asks, each re-ask's prompt carrying the replies before it."""
    first = [req[0] for req in requests]
    prompt = float(np.mean([r.prompt_tokens for r in first]))
    limit = reply_limit(int(round(np.mean([len(r.unit_ids or [1]) for r in first]))))
    calls = 1 + MAX_REPAIRS
    return np.array([[calls, calls * prompt + limit * MAX_REPAIRS * calls / 2, calls * limit]])


def _self_check_pilot(records: list[LedgerRecord], rejudged: int, judged: int) -> SelfCheckPilot:
    """Tokens per re-judgment and requests per re-judged answer, from the pilot's `self_check` requests, or
    from its judge's requests about two or more units when it made fewer than MIN_SELF_CHECK_CALLS calls.
    A call the response cache answered counts as the call it reuses (its record carries that reply's
    tokens): the run is priced as if nothing were cached."""
    measured = [r for r in records if r.stage == SELF_CHECK_STAGE]
    judge = [r for r in records if r.role == "judge" and r.stage != SELF_CHECK_STAGE]
    fallback = len(measured) < MIN_SELF_CHECK_CALLS or not rejudged
    if fallback:
        # A re-judgment is the judge's request with the units reordered: its first judgments of answers
        # about several units are the nearest stand-in (all its calls when none names several units),
        # pooled with the few re-judgments that were measured.
        several = [r for r in judge if len(r.unit_ids) > 1]
        pool, counted, answers = (several or judge) + measured, judge, judged
    else:
        pool, counted, answers = measured, measured, rejudged
    per_answer, whole, cut, seen = {}, {}, {}, {}
    for key in sorted({(r.role, r.endpoint) for r in counted}):
        def of_key(rows: list[LedgerRecord], key: tuple[str, str] = key) -> list[list[LedgerRecord]]:
            return _requests([r for r in rows if (r.role, r.endpoint) == key])
        requests = of_key(pool) or of_key(counted)
        per_answer[key] = len(of_key(counted)) / max(answers, 1)
        # Sorted: the ledger's order depends on which concurrent call finished first, a draw must not.
        whole[key] = np.array(sorted(_row(q) for q in requests if not _is_cut(q)), dtype=float).reshape(-1, 3)
        measured_cut = sorted(_row(q) for q in requests if _is_cut(q))
        cut[key] = np.array(measured_cut, dtype=float) if measured_cut else _worst_cut(requests)
        judged_requests = of_key(judge + measured)
        seen[key] = (sum(_is_cut(q) for q in judged_requests), len(judged_requests))
    return SelfCheckPilot(per_answer, whole, cut, seen, fallback)


def round_counts(data: PilotData) -> np.ndarray:
    """[target, round - 1, (in pool, left covered, left unanswered)] of the pilot's sample."""
    rounds = data.usage.shape[1] - 1
    out = np.zeros((len(data.exits), rounds, 3))
    for r in range(1, rounds + 1):
        leaving = data.exits == r
        out[:, r - 1] = np.stack([(data.exits >= r).sum(axis=1), (leaving & data.covered).sum(axis=1),
                                  (leaving & ~data.covered).sum(axis=1)], axis=1)
    return out


def simulate_rounds(units: int, rates: np.ndarray, settings: Settings, mode: str,
                    rng: np.random.Generator | None) -> tuple[int, np.ndarray]:
    """The exam's stop rule run at full size on one target: (rounds, pool at the start of each round).

    `rates[r]` = (share covered, share unanswered) of the pool in round r+1; rounds past the pilot's use
    its last round's. With `rng`, each round's leavers are binomial draws (a small pool stops on a round
    that covers nothing, a large one rarely does: this is why the rule is run at full size); without,
    their expected numbers."""
    exam, last = settings.exam, MODES[mode].last_round
    pools: list[float] = []
    pool: float = units
    rnd = 0
    while True:
        rnd += 1
        pools.append(pool)
        cover, gone = rates[min(rnd, len(rates)) - 1]
        if rng is None:
            covered, left = pool * cover, pool * gone
        else:
            covered = rng.binomial(int(pool), cover)
            left = rng.binomial(int(pool) - covered, min(1.0, gone / (1 - cover)) if cover < 1 else 0.0)
        share = covered / pool if pool else 1.0
        pool = pool - covered - left
        if pool < 1 or share < exam.min_round_coverage or last(rnd, exam.max_rounds):
            return rnd, np.array(pools, dtype=float)


def _per_pool_unit(data: PilotData, values: np.ndarray, pick: np.ndarray) -> np.ndarray:
    """[round - 1, ...]: `values` ([unit, round - 1, ...], e.g. data.usage) per unit in a target's pool, per
    pilot round, over units `pick`."""
    rounds = data.usage.shape[1] - 1
    present = np.stack([(data.exits[:, pick] >= r).sum() for r in range(1, rounds + 1)]).astype(float)
    used = values[pick, :rounds].sum(axis=0)
    return used / np.maximum(present, 1).reshape(-1, *[1] * (used.ndim - 1))


def _self_check_usage(data: PilotData, answers: int, rng: np.random.Generator | None) -> tuple[np.ndarray, float]:
    """usage[key, metric] and calls of re-judging `answers` answers (module docstring, step 3b).

    Central (`rng` None): the requests at the pilot's mean cost, a share of them cut at max_tokens as the
    pilot saw. A draw: the share of cut requests from a Beta draw given the pilot's counts (Jeffreys prior,
    as for the rounds' shares: a pilot that saw no reply cut still allows a few), then that many cut and
    the rest whole requests resampled from the pilot's; tokens scaled by a log-uniform factor in
    [1/FALLBACK_SPREAD, FALLBACK_SPREAD] when the judge's first judgments stand in."""
    check = data.self_check
    usage = np.zeros((len(data.keys), len(METRICS)))
    for key, per_answer in check.requests_per_answer.items():
        if key not in data.keys:
            continue
        whole, cut = check.whole[key], check.cut[key]
        k, n = check.seen[key]
        requests = answers * per_answer
        if rng is None:
            share = k / n if n else 0.0
            mean = cut.mean(axis=0) if not len(whole) else (1 - share) * whole.mean(axis=0) + share * cut.mean(axis=0)
            row = requests * mean
        else:
            total = int(round(requests))
            cuts = total if not len(whole) else int(rng.binomial(total, rng.beta(k + 0.5, n - k + 0.5)))
            row = cut[rng.integers(0, len(cut), cuts)].sum(axis=0)
            if len(whole):
                row = row + whole[rng.integers(0, len(whole), total - cuts)].sum(axis=0)
            if check.fallback:
                row[1:] = row[1:] * FALLBACK_SPREAD ** rng.uniform(-1, 1)
        usage[data.keys.index(key)] = row
    return usage, float(usage[:, 0].sum())


def _draw(data: PilotData, counts: np.ndarray, units: int, settings: Settings, mode: str,
          rng: np.random.Generator | None) -> tuple[int, float, np.ndarray, float]:
    """One full-exam draw (rng None: the central one): (rounds, clusters, usage[key, metric], self-check calls).

    Usage per pool unit comes from a bootstrap resample of the sample's units; each target's rates of
    leaving the pool from a Dirichlet draw given the pilot's counts (Jeffreys prior, so a round that
    covered nothing in a small sample still allows a little coverage at full size)."""
    n = data.usage.shape[0]
    pick = rng.integers(0, n, n) if rng is not None else np.arange(n)
    per_unit_round = _per_pool_unit(data, data.usage, pick)
    pilot_rounds = len(per_unit_round)
    target_pools: list[np.ndarray] = []
    for target in range(len(counts)):
        pool, covered, gone = counts[target].T
        stay = np.maximum(pool - covered - gone, 0)
        if rng is None:
            rates = np.stack([covered, gone], axis=1) / np.maximum(pool, 1)[:, None]
        else:
            rates = np.stack([rng.dirichlet([c + 0.5, g + 0.5, s + 0.5])[:2] for c, g, s in zip(covered, gone, stay)])
        target_pools.append(simulate_rounds(units, rates, settings, mode, rng)[1])
    rounds = max(len(p) for p in target_pools)
    pools_by_round = np.zeros(rounds)  # units in the pool per round, summed over the targets
    clusters_by_round = np.zeros(rounds)
    count = MODES[mode].cluster_count
    for pools in target_pools:
        pools_by_round[:len(pools)] += pools
        clusters_by_round[:len(pools)] += [count(int(round(p)), settings.exam.cluster_size) for p in pools]
    past = np.minimum(np.arange(rounds), pilot_rounds - 1)  # rounds past the pilot's: its last round
    weights = per_unit_round[past]
    # Calls per unit scale with the pool; calls per cluster with the clusters the full pool makes, which
    # are larger on average than a small sample's (ceil(n / size) rounds a small n up the most).
    scale = clusters_by_round / data.density[past]  # per pilot cluster -> the full run's clusters
    usage = (weights[..., 1] * pools_by_round[:, None, None]).sum(axis=0) + (
        weights[..., 0] * scale[:, None, None]).sum(axis=0)
    # The self-check: the node's own sample size of the answers it may draw, which are made per cluster.
    drawable = float((_per_pool_unit(data, data.candidates, pick)[past] * scale).sum())
    answers = sample_size(int(round(drawable)), settings.exam.self_check_share, settings.exam.self_check_min) \
        if MODES[mode].reads_references else 0
    check, check_calls = _self_check_usage(data, answers, rng)
    return rounds, float(clusters_by_round.sum()), usage + check, check_calls


def extrapolate(settings: Settings, pilot_dir: str | Path, *, seed: int = 0) -> Estimate:
    """Figures of the full exam from a finished pilot directory (module docstring, steps 2 to 4)."""
    pilot_dir = Path(pilot_dir)
    data, extra = _pilot_data(pilot_dir)
    info, chosen, records = extra["info"], extra["chosen"], extra["ledger"]
    mode = json.loads((pilot_dir / rundir.REQUEST).read_text(encoding="utf-8"))["mode"]
    counts = round_counts(data)
    rng = np.random.default_rng(seed)
    central = _draw(data, counts, info.units, settings, mode, None)
    draws = [_draw(data, counts, info.units, settings, mode, rng) for _ in range(BOOTSTRAP)]
    keys = list(data.keys) + [key for key in data.fixed if key not in data.keys]
    fixed = np.array([data.fixed.get(key, np.zeros(len(METRICS))) for key in keys]).reshape(len(keys), len(METRICS))

    def with_fixed(u: np.ndarray) -> np.ndarray:
        """Per-unit usage (rows of data.keys) plus the measured usage that belongs to no unit."""
        return np.vstack([u, np.zeros((len(keys) - len(u), len(METRICS)))]) + fixed

    shares = {(row["role"], row["endpoint"]): row["cached_input_share"] or 0.0
              for row in aggregate(extra["sent"], by=("role", "endpoint"))}

    def usd(u: np.ndarray, pricing: str) -> np.ndarray:
        return np.array([dollars(u[k, 1], u[k, 2], settings.endpoint(endpoint), pricing=pricing,
                                 cached_share=shares.get((role, endpoint), 0.0))
                         for k, (role, endpoint) in enumerate(keys)])

    middle = with_fixed(central[2])
    drawn = np.stack([with_fixed(u) for _, _, u, _ in draws])  # [draw, key, metric]
    middle_usd = {p: usd(middle, p) for p in PRICINGS}
    drawn_usd = {p: np.stack([usd(d, p) for d in drawn]) for p in PRICINGS}  # [draw, key]
    by_role = []
    for k, (role, endpoint) in enumerate(keys):
        figures = [Figure.from_draws(middle[k, m], drawn[:, k, m]) for m in range(len(METRICS))]
        priced = {p: Figure.from_draws(middle_usd[p][k], drawn_usd[p][:, k]) for p in PRICINGS}
        by_role.append(Usage(role, endpoint, *figures, priced["standard"], priced))
    priced = {p: Figure.from_draws(middle_usd[p].sum(), drawn_usd[p].sum(axis=1)) for p in PRICINGS}
    total = Usage("total", "", *[Figure.from_draws(middle[:, m].sum(), drawn[:, :, m].sum(axis=1))
                                  for m in range(len(METRICS))], priced["standard"], priced)
    notes = []
    if len(data.units) >= info.units:
        notes.append("the pilot's sample held every unit: the pilot was the whole exam")
    notes += _pilot_notes(settings, chosen, records, data, pilot_rounds=extra["rounds"], rounds=central[0],
                          self_check_calls=central[3])
    if info.status != "completed":
        notes.append(f"the pilot did not finish ({info.status}: {info.stop_reason}); the figures are a lower bound")
    return Estimate(
        documents=info.documents, passages=info.passages, units=info.units, pilot_units=len(data.units),
        pilot_clusters=int(chosen.get("clusters", 0)), pilot_rounds=extra["rounds"], pilot_dir=str(pilot_dir),
        pilot_spent=aggregate(records, by=("role", "endpoint")),
        rounds=Figure.from_draws(central[0], np.array([r for r, _, _, _ in draws])),
        clusters=Figure.from_draws(central[1], np.array([c for _, c, _, _ in draws])),
        self_check_calls=Figure.from_draws(central[3], np.array([s for _, _, _, s in draws])),
        by_role=by_role, total=total, notes=notes, pilot_status=info.status,
        pilot_stop_reason=info.stop_reason,
    )


def _pilot_notes(settings: Settings, chosen: dict[str, Any], records: list[LedgerRecord], data: PilotData, *,
                 pilot_rounds: int, rounds: int, self_check_calls: float) -> list[str]:
    """What the estimate's figures rest on beyond the pilot's measurements, and what a shared cache saves."""
    notes = []
    if rounds > pilot_rounds:
        notes.append(f"the pilot ran {pilot_rounds} round(s) of the {rounds} predicted: later rounds are extrapolated "
                     f"at its last round's shares and usage (--pilot-rounds N measures more, at calls a run cannot "
                     f"reuse)")
    if data.self_check.fallback and self_check_calls:
        why = ("the pilot ran no judge self-check (a one-round pilot leaves it out: its re-judgments would not be "
               "the run's)" if chosen.get("rounds_asked") == 1 else
               f"the pilot re-judged too few answers (fewer than {MIN_SELF_CHECK_CALLS} self-check calls)")
        notes.append(f"{why}: the judge's first judgments stand in for the self-check's tokens per call, widened "
                     f"{FALLBACK_SPREAD:g}x either way")
    if settings.exam.control_share > 0:
        targets = max(1, len({r.endpoint for r in records if r.role == "candidate"}))
        notes.append(f"control questions (--control-share {settings.exam.control_share:g}) are not in the figures "
                     f"above: the pilot asks none; the run adds 1 + 2 x {targets} calls (examiner, then an answer "
                     f"and a judgment per target) for each of {settings.exam.control_share:g} of round 1's clusters "
                     f"(at least 2)")
    if settings.exam.paraphrases > 0:
        k = settings.exam.paraphrases
        targets = max(1, len({r.endpoint for r in records if r.role == "candidate"}))
        notes.append(f"the wording check (--paraphrases {k}) is not in the figures above: the pilot runs none; the "
                     f"run adds 1 + 2 x {k} x {targets} calls (the examiner's rewordings, then an answer and a "
                     f"judgment per wording and target) for each of {settings.exam.paraphrase_share:g} of round 1's "
                     f"questions (at least 2)")
    if settings.cache_dir:
        # Every round-1 call of the pilot is in the cache now, paid by this pilot or found there.
        reusable = [r for r in records if (r.round or 0) <= 1 and r.stage != SELF_CHECK_STAGE]
        if reusable:
            notes.append(f"the cache would answer {len(reusable)} of the calls above: with this --cache the run gets the pilot's "
                         f"round-1 calls (${_list_usd(settings, reusable):.4f} at list prices) from the cache; the "
                         f"figures above count them, as if nothing were cached")
        hits = [r for r in records if r.cache_hit]
        if hits:
            held = f"all {len(hits)}" if len(hits) == len(records) else f"{len(hits)} of the {len(records)}"
            notes.append(f"the cache already held {held} of the pilot's calls (${_list_usd(settings, hits):.4f} at "
                         f"list prices, not paid by the pilot): an earlier run filled it, so the run may get more "
                         f"of its calls from it than the pilot's")
    return notes


def _list_usd(settings: Settings, records: list[LedgerRecord]) -> float:
    """What calls cost at their endpoints' list prices, from the tokens their records carry (a cache hit's
    are its reply's): what a cache saves."""
    return sum(dollars(r.prompt_tokens, r.completion_tokens, settings.endpoint(r.endpoint)) for r in records)


# -------------------------------------------------------------------------------- simulated replay

async def replay_simulated(settings: Settings, request: ExamRequest, *, quiet: bool = True) -> dict[str, Any]:
    """The whole exam against the simulated backend at the configured endpoints' prices, in a scratch
    directory: exact for a simulated run, not a prediction of a real model's (see the module docstring)."""
    simulated = settings.simulated()
    sim_request = ExamRequest(**{**asdict(request), "run_id": "estimate"})
    twin = {name: f"sim-{name}" if f"sim-{name}" in simulated.endpoints else name for name in simulated.endpoints}
    sim_request.targets = [twin[t] for t in (request.targets or [settings.roles["candidate"]])]
    sim_request.judges = [twin[j] for j in request.judges]
    with tempfile.TemporaryDirectory(prefix="examiner-estimate-") as scratch:
        run_dir = Path(scratch) / "run"
        info = await start_exam(simulated, sim_request, run_dir, quiet=quiet, report=False)
        records = answered(RunDir(run_dir).ledger_records())
        by_role = aggregate(records, by=("role",))
        total = aggregate(records, by=())[0] if records else {}
        clusters = sum(r.clusters for r in info.rounds)
    return {
        "method": "simulated replay", "units": info.units, "documents": info.documents,
        "rounds": len({r.round for r in info.rounds}), "clusters": clusters, "by_role": by_role, "total": total,
        "stop_reason": info.stop_reason,
    }


__all__ = ["PRICINGS", "Estimate", "Figure", "Usage", "dollars", "estimate_exam", "extrapolate", "replay_simulated", "run_pilot"]
