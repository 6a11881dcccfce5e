"""`examiner estimate`: a small seeded pilot on the configured endpoints, extrapolated to the whole exam.

Method (README "Estimating a run" says the same for users):

1. Pilot. The exam itself (the same graph, nodes, roles, prompts and endpoints) runs on a seeded sample
   of its units. The corpus is loaded and cut into units exactly as the full run would (so documents,
   passages and units are measured; in `llm` unit mode the extraction calls are made for the whole corpus
   and measured, not extrapolated). The units are clustered as round 1 clusters them; `clusters` of
   those clusters, chosen with the exam's seed (more until the sample holds MIN_PILOT_UNITS units),
   form the pilot's pool, which then goes through every round (question, answer, judge, probes,
   coverage) until the exam's own stop rule ends it. Every call is real and recorded in the pilot
   directory's ledger.jsonl: what the pilot cost is measured.
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
   to that stop counts. Each round makes the clusters the mode makes of the full pool (ceil(pool /
   cluster_size) for Ref-Eval); per-cluster usage is the pilot's usage per cluster in that round times
   those clusters, per-unit usage the pilot's usage per pool unit times the pool. Dollars come from tokens
   at the endpoints' prices (`dollars`, the one place).
4. Range. A bootstrap over the sample's units (BOOTSTRAP resamples with replacement, seeded): each
   resample has its own trajectories, hence its own round count, and its own usage, hence its own totals.
   The range is the INTERVAL central share of those totals (5th to 95th percentile), per role and in
   total, so it holds both the per-unit spread of cost and the uncertainty of the round count. A
   resample that would run one round longer than the pilot did costs that round at the pilot's last
   round's usage per unit in the pool. The central figure is the extrapolation of the sample itself.
   What the range cannot hold: a corpus whose unsampled part behaves unlike the sample, and calls that a
   shared response cache answers for free (they are not counted, neither in the pilot nor in the run).

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

from examiner.config import EndpointSpec, Settings
from examiner.core import rundir
from examiner.core.records import UnitOutcome, VerdictRecord
from examiner.core.rundir import RunDir
from examiner.errors import UserError
from examiner.exam.bookends import start_state
from examiner.exam.graph import Sample
from examiner.exam.modes import MODES
from examiner.exam.nodes.context import ExamContext
from examiner.exam.runner import ExamRequest, start_exam
from examiner.exam.store import RunStore
from examiner.llm.ledger import aggregate, answered, per_unit

PILOT_CLUSTERS = 4
"""Round-1 clusters the pilot examines by default (`estimate --pilot-clusters`)."""
MIN_PILOT_UNITS = 12
"""Fewest units in the pilot's sample (more clusters are taken until it holds this many)."""
BOOTSTRAP = 2000
"""Bootstrap resamples behind each range."""
INTERVAL = 0.90
"""Central share of the bootstrap totals that a range spans (5th to 95th percentile)."""
METRICS = ("calls", "prompt_tokens", "completion_tokens")


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
    by_role: list[Usage]
    total: Usage
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"method": "pilot", "interval": INTERVAL, "bootstrap": BOOTSTRAP, "measured": list(MEASURED),
                "extrapolated": list(EXTRAPOLATED), **asdict(self)}


MEASURED = ("documents", "passages", "units", "pilot_units", "pilot_clusters", "pilot_rounds", "pilot_spent")
"""Estimate fields that were counted (the corpus was read whole; the pilot's calls are in its ledger)."""
EXTRAPOLATED = ("rounds", "clusters", "by_role", "total")
"""Estimate fields extrapolated from the pilot, each with a range."""


# --------------------------------------------------------------------------------------------- pilot

def pilot_sample(clusters: int, chosen: dict[str, Any]) -> Sample:
    """The graph's `sample` hook: narrow every target's pool to `clusters` seeded round-1 clusters (at
    least MIN_PILOT_UNITS units); `chosen` receives the sample's unit ids and cluster counts."""

    def narrow(ctx: ExamContext, start: dict[str, Any]) -> dict[str, Any]:
        ids = sorted(ctx.units)
        groups = ctx.mode.groups(ids, ctx.vectors(ids), ctx.exam.cluster_size, ctx.exam.seed + 1)
        order = random.Random(ctx.exam.seed).sample(range(len(groups)), len(groups))
        picked: list[list[str]] = []
        for index in order:
            if len(picked) >= clusters and sum(len(g) for g in picked) >= MIN_PILOT_UNITS:
                break
            picked.append(groups[index])
        pool = sorted(uid for group in picked for uid in group)
        chosen.update(units=pool, clusters=len(picked), round1_clusters=len(groups))
        return start_state(ctx, pool)

    return narrow


async def run_pilot(settings: Settings, request: ExamRequest, pilot_dir: Path, *, clusters: int = PILOT_CLUSTERS,
                    quiet: bool = True) -> dict[str, Any]:
    """Run the pilot into `pilot_dir` (a normal run directory plus pilot.json naming the sample)."""
    chosen: dict[str, Any] = {}
    request = ExamRequest(**{**asdict(request), "run_id": request.run_id or "pilot"})
    info = await start_exam(settings, request, pilot_dir, quiet=quiet, report=False,
                            sample=pilot_sample(clusters, chosen))
    chosen.update(status=info.status, stop_reason=info.stop_reason)
    (pilot_dir / rundir.PILOT).write_text(json.dumps(chosen, indent=1), encoding="utf-8")
    return chosen


async def estimate_exam(settings: Settings, request: ExamRequest, pilot_dir: str | Path, *,
                        clusters: int = PILOT_CLUSTERS, quiet: bool = True) -> Estimate:
    """Pilot on the configured endpoints, then the extrapolation (written to pilot_dir/estimate.json)."""
    pilot_dir = Path(pilot_dir)
    chosen = await run_pilot(settings, request, pilot_dir, clusters=clusters, quiet=quiet)
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


NEVER = 10**6
"""Exit round of a unit that never left the pool."""


def _pilot_data(pilot_dir: Path) -> tuple[PilotData, dict[str, Any]]:
    """Usage, trajectories and cluster density of the pilot (module docstring, step 2), and its records."""
    chosen = json.loads((pilot_dir / rundir.PILOT).read_text(encoding="utf-8"))
    run = RunDir(pilot_dir)
    info = run.read_info()
    units: list[str] = chosen["units"]
    index = {uid: i for i, uid in enumerate(units)}
    records = answered(run.read_ledger())
    rounds = max([int(r.get("round", 0)) for r in records] + [1])
    keys = sorted({(r["role"], r["endpoint"]) for r in records if r.get("unit_ids")})
    # Stages with a call about several units make their calls per cluster (question), not per unit.
    per_cluster = {r["stage"] for r in records if len(r.get("unit_ids") or []) > 1}
    usage = np.zeros((len(units), rounds + 1, len(keys), len(METRICS), 2))
    for k, (role, endpoint) in enumerate(keys):
        for rnd in range(1, rounds + 1):
            for kind, of_kind in enumerate((lambda s: s in per_cluster, lambda s: s not in per_cluster)):
                group = [r for r in records if (r["role"], r["endpoint"]) == (role, endpoint)
                         and r.get("round") == rnd and of_kind(r["stage"])]
                for uid, shares in per_unit(group).items():
                    if uid in index:
                        usage[index[uid], rnd - 1, k, :, kind] = [shares[m] for m in METRICS]
    fixed: dict[tuple[str, str], np.ndarray] = defaultdict(lambda: np.zeros(len(METRICS)))
    for record in records:
        if not record.get("unit_ids") and not record.get("cache_hit"):
            fixed[(record["role"], record["endpoint"])] += [1, record["prompt_tokens"], record["completion_tokens"]]
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
    data = PilotData(units, keys, usage, exits, covered, dict(fixed), density)
    return data, {"info": info, "chosen": chosen, "records": records, "rounds": len({r.round for r in info.rounds})}


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


def _per_pool_unit(data: PilotData, pick: np.ndarray) -> np.ndarray:
    """[round - 1, key, metric, kind]: usage per unit in a target's pool, per pilot round, over units `pick`."""
    rounds = data.usage.shape[1] - 1
    present = np.stack([(data.exits[:, pick] >= r).sum() for r in range(1, rounds + 1)]).astype(float)
    used = data.usage[pick, :rounds].sum(axis=0)
    return used / np.maximum(present, 1)[:, None, None, None]


def _draw(data: PilotData, counts: np.ndarray, units: int, settings: Settings, mode: str,
          rng: np.random.Generator | None) -> tuple[int, float, np.ndarray]:
    """One full-exam draw (rng None: the central one): (rounds, clusters, usage[key, metric]).

    Usage per pool unit comes from a bootstrap resample of the sample's units; each target's rates of
    leaving the pool from a Dirichlet draw given the pilot's counts (Jeffreys prior, so a round that
    covered nothing in a small sample still allows a little coverage at full size)."""
    n = data.usage.shape[0]
    pick = rng.integers(0, n, n) if rng is not None else np.arange(n)
    per_unit_round = _per_pool_unit(data, pick)
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
    usage = (weights[..., 1] * pools_by_round[:, None, None]).sum(axis=0) + (
        weights[..., 0] * (clusters_by_round / data.density[past])[:, None, None]).sum(axis=0)
    return rounds, float(clusters_by_round.sum()), usage


def extrapolate(settings: Settings, pilot_dir: str | Path, *, seed: int = 0) -> Estimate:
    """Figures of the full exam from a finished pilot directory (module docstring, steps 2 to 4)."""
    pilot_dir = Path(pilot_dir)
    data, extra = _pilot_data(pilot_dir)
    info, chosen, records = extra["info"], extra["chosen"], extra["records"]
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
              for row in aggregate(records, by=("role", "endpoint"))}

    def usd(u: np.ndarray, pricing: str) -> np.ndarray:
        return np.array([dollars(u[k, 1], u[k, 2], settings.endpoint(endpoint), pricing=pricing,
                                 cached_share=shares.get((role, endpoint), 0.0))
                         for k, (role, endpoint) in enumerate(keys)])

    middle = with_fixed(central[2])
    drawn = np.stack([with_fixed(u) for _, _, u in draws])  # [draw, key, metric]
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
    if info.status != "completed":
        notes.append(f"the pilot did not finish ({info.status}: {info.stop_reason}); the figures are a lower bound")
    return Estimate(
        documents=info.documents, passages=info.passages, units=info.units, pilot_units=len(data.units),
        pilot_clusters=int(chosen.get("clusters", 0)), pilot_rounds=extra["rounds"], pilot_dir=str(pilot_dir),
        pilot_spent=aggregate(records, by=("role", "endpoint")),
        rounds=Figure.from_draws(central[0], np.array([r for r, _, _ in draws])),
        clusters=Figure.from_draws(central[1], np.array([c for _, c, _ in draws])),
        by_role=by_role, total=total, notes=notes,
    )


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
        records = answered(RunDir(run_dir).read_ledger())
        by_role = aggregate(records, by=("role",))
        total = aggregate(records, by=())[0] if records else {}
        clusters = sum(r.clusters for r in info.rounds)
    return {
        "method": "simulated replay", "units": info.units, "documents": info.documents,
        "rounds": len({r.round for r in info.rounds}), "clusters": clusters, "by_role": by_role, "total": total,
        "stop_reason": info.stop_reason,
    }


__all__ = ["PRICINGS", "Estimate", "Figure", "Usage", "dollars", "estimate_exam", "extrapolate", "replay_simulated", "run_pilot"]
