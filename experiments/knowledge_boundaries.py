"""Knowledge boundaries (issue 42): do the report's hallucination and abstention rates cover their truth, is
the ECE estimate near the true ECE, and does the judge's `abstained` label follow the simulator's truth?

Part 1, coverage (the report's own interval function, score_intervals.ratio_estimate, on data with known
truth): each repetition draws DOCUMENTS documents, each a topic of the simulated target with its own
probability of knowing (Beta around one of TOPICS means) and of abstaining when it does not know; CLUSTERS
clusters of UNITS units per document share a cluster effect. The truth is the superpopulation ratio
(expected incorrect / expected attempted; expected abstained / expected asked), computed from 2,000,000
draws of the same model. Coverage = share of REPS intervals holding it (target 0.93-0.97).

Part 2, calibration: the attempted units of each repetition state a confidence, `calibrated` (the unit's true
chance of being right) or `overconfident` (0.5 + 0.5 x that chance, capped at 0.99); the true ECE is the
binned ECE of the stated confidence against the true chance over 2,000,000 draws; the estimate is
examiner.stats.knowledge.expected_calibration_error (debiased, as the report gives it; the plug-in figure is
saved beside) against the drawn outcomes. |estimate - truth| averaged over REPS (the larger of the two
targets is reported).

Part 3, the judged label: a simulated exam of corpora/harbor-water whose target declines about 30 % of the
units (profile share `declined`), judged by a simulated judge that flips 5 % of labels (`judge_noise`); the
share of verdicts whose label is `abstained` exactly when the simulator's truth is a declined unit.

Part 4, control questions (false premise, swapped entity, out-of-corpus detail; `exam.control_share`): a
simulated exam of the same corpus with CONTROL_SHARE of round 1's clusters given a control, and three
targets: `answers` always goes along with a control's premise (and otherwise knows as PROFILE says),
`declines` declines every question, ordinary or control (profile all `declined`), `knowledge` corrects the
premise of a unit it knows and goes along with the rest. The figures are report.json's (the knowledge
section's controls, with their cluster intervals). Caught: the always-answering target's false-premise
acceptance is at least CAUGHT and the lower end of its interval above 0.5; the always-declining target's
over-refusal (abstention rate on the ordinary, answerable questions) and its control refusal rate are both at
least CAUGHT with the lower ends above 0.5.

    python experiments/knowledge_boundaries.py [--reps 500] [--skip-exam]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from examiner.reporting.score_intervals import ratio_estimate
from examiner.stats.knowledge import ECE_BINS, PENALTY_TARGETS, expected_calibration_error, risk_coverage_area
from examiner.stats.knowledge_intervals import figure_interval
from finish import RESULTS, print_result, save_json

DOCUMENTS, CLUSTERS, UNITS = 40, 3, 6
TOPICS = ((0.85, 0.6), (0.55, 0.3), (0.25, 0.8), (0.6, 0.05))
"""(mean chance of knowing, chance of abstaining when not knowing) of the target's topic kinds."""
KNOW_CONCENTRATION = 12.0
"""Beta concentration of a document's chance of knowing around its topic's mean."""
CLUSTER_SD = 0.6
"""Logit-scale spread of a cluster's chance of knowing around its document's."""
TRUTH_DRAWS = 2_000_000


def _logit(p: np.ndarray) -> np.ndarray:
    return np.log(p / (1 - p))


def draw_units(rng: np.random.Generator, documents: int) -> dict[str, np.ndarray]:
    """Per unit: document, cluster, true chance of knowing, chance of abstaining when not, and outcomes."""
    topic = rng.integers(len(TOPICS), size=documents)
    mean = np.array([TOPICS[t][0] for t in topic])
    abstain = np.array([TOPICS[t][1] for t in topic])
    know_doc = rng.beta(mean * KNOW_CONCENTRATION, (1 - mean) * KNOW_CONCENTRATION)
    know_doc = np.clip(know_doc, 1e-4, 1 - 1e-4)
    cluster_shift = rng.normal(0.0, CLUSTER_SD, size=(documents, CLUSTERS))
    know = 1 / (1 + np.exp(-(_logit(know_doc)[:, None] + cluster_shift)))
    know = np.repeat(know[:, :, None], UNITS, axis=2).reshape(-1)
    abstains = np.repeat(abstain, CLUSTERS * UNITS)
    doc = np.repeat(np.arange(documents), CLUSTERS * UNITS)
    cluster = np.repeat(np.arange(documents * CLUSTERS), UNITS)
    knows = rng.random(know.size) < know
    declines = ~knows & (rng.random(know.size) < abstains)
    # a unit's chance of being right given that it is attempted: it knows, or it tried without knowing
    right_if_tried = know / (know + (1 - know) * (1 - abstains))
    return {"doc": doc, "cluster": cluster, "knows": knows, "declines": declines, "right_if_tried": right_if_tried,
            "topic": np.repeat(topic, CLUSTERS * UNITS)}


def subset(units: dict[str, np.ndarray], keep: np.ndarray) -> dict[str, np.ndarray]:
    """The units where `keep` holds (every per-unit array cut alike)."""
    return {k: v[keep] for k, v in units.items()}


def stated(kind: str, chance: np.ndarray) -> np.ndarray:
    return chance if kind == "calibrated" else np.minimum(0.5 + 0.5 * chance, 0.99)


def population_ece(conf: np.ndarray, chance: np.ndarray) -> float:
    """Binned ECE of `conf` against the true chance of being right (no sampling noise in the outcomes)."""
    index = np.minimum((conf * ECE_BINS).astype(int), ECE_BINS - 1)
    return float(sum((index == b).sum() * abs(conf[index == b].mean() - chance[index == b].mean())
                     for b in np.unique(index)) / conf.size)


def figure_truths(units: dict[str, np.ndarray]) -> dict[str, float]:
    """The superpopulation value of every figure, from many units drawn from the model."""
    # an attempted unit it does not know is an error: hallucination = 1 - known / attempted
    tried = units["right_if_tried"]
    out = {
        "hallucination": float(1 - (units["knows"].sum() / (~units["declines"]).sum())),
        "abstention": float(units["declines"].mean()),
    }
    attempted = ~units["declines"]
    for kind in ("calibrated", "overconfident"):
        conf, chance = stated(kind, tried[attempted]), tried[attempted]
        out[f"ece_{kind}"] = population_ece(conf, chance)
        # expected squared gap of a unit right with chance p: (c - 1)^2 p + c^2 (1 - p)
        out[f"brier_{kind}"] = float(np.mean(conf**2 - 2 * conf * chance + chance))
        # the risk of each prefix is unbiased for the mean chance of error of its units: AURC with the chance
        out[f"aurc_{kind}"] = float(risk_coverage_area(conf.tolist(), chance.tolist()) or 0.0)
    right, wrong = float(units["knows"].sum()), float((attempted & ~units["knows"]).sum())
    asked, tried_n = float(units["knows"].size), float(attempted.sum())
    out["f_score"] = 2 * right / (asked + tried_n)
    for t in PENALTY_TARGETS:
        out[f"penalised_{t}"] = (right - wrong * t / (1 - t)) / asked
    return out


TOPIC_CHECKED = 0
"""The topic kind whose rows' coverage is measured too: the units of its documents (about a quarter of them,
10 of 40), as a per-topic row of the report is a target's units of one topic."""


def truths(seed: int) -> dict[str, float]:
    """The superpopulation figures from TRUTH_DRAWS units of the same model: the target's, and (keys
    prefixed `topic_`) those of topic kind TOPIC_CHECKED."""
    units = draw_units(np.random.default_rng(seed), TRUTH_DRAWS // (CLUSTERS * UNITS))
    topic = figure_truths(subset(units, units["topic"] == TOPIC_CHECKED))
    return figure_truths(units) | {f"topic_{k}": v for k, v in topic.items()}


FIGURE_NAMES = ("f_score", *(f"penalised_{t}" for t in PENALTY_TARGETS))
CONFIDENCE_FIGURES = ("ece", "brier", "aurc")


def statuses(u: dict[str, np.ndarray]) -> list[str]:
    """Each unit's label: declined -> abstained, else correct when it knew, incorrect when not."""
    return ["abstained" if d else "correct" if k else "incorrect" for k, d in zip(u["knows"], u["declines"])]


def row_intervals(u: dict[str, np.ndarray]) -> dict[str, tuple[float | None, float | None]]:
    """Every figure's interval over the units `u`, as the report computes a row's."""
    docs, clusters = [f"d{d}" for d in u["doc"]], [f"c{c}" for c in u["cluster"]]
    attempted = ~u["declines"]
    wrong = [int(not k) if a else None for k, a in zip(u["knows"], attempted)]
    out: dict[str, tuple[float | None, float | None]] = {}
    for name, values in (("hallucination", wrong), ("abstention", [int(d) for d in u["declines"]])):
        est = ratio_estimate(values, docs, clusters)
        out[name] = (est["low"], est["high"])
    status = statuses(u)
    for name in FIGURE_NAMES:
        est = figure_interval(name, status, [None] * len(status), docs, clusters)
        out[name] = (est.low, est.high)
    for kind in ("calibrated", "overconfident"):
        every = [float(c) if a else None for c, a in zip(stated(kind, u["right_if_tried"]), attempted)]
        for f in CONFIDENCE_FIGURES:
            est = figure_interval(f, status, every, docs, clusters)
            out[f"{f}_{kind}"] = (est.low, est.high)
    return out


def coverage_and_ece(reps: int, truth: dict[str, float], seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    errors: dict[str, list[float]] = {k: [] for k in ("calibrated", "overconfident", "calibrated_plug_in",
                                                       "overconfident_plug_in")}
    held: dict[str, list[int]] = {}
    spans: dict[str, list[float]] = {}
    topic_documents = []
    for _ in range(reps):
        u = draw_units(rng, DOCUMENTS)
        attempted = ~u["declines"]
        # stated confidence of the attempted units; outcome: right (it knew) or not
        chance = u["right_if_tried"][attempted]
        right = u["knows"][attempted].astype(int).tolist()
        for kind in ("calibrated", "overconfident"):
            conf = stated(kind, chance).tolist()
            for debias in (True, False):
                ece = expected_calibration_error(conf, right, debias=debias)
                errors[kind + ("" if debias else "_plug_in")].append(abs(float(ece or 0.0) - truth[f"ece_{kind}"]))
        rows = {"": u}
        in_topic = u["topic"] == TOPIC_CHECKED
        topic_documents.append(len(set(u["doc"][in_topic].tolist())))
        if topic_documents[-1] >= 2:
            rows["topic_"] = subset(u, in_topic)
        for prefix, units in rows.items():
            for name, (low, high) in row_intervals(units).items():
                key = prefix + name
                held.setdefault(key, []).append(int(low is not None and high is not None and low <= truth[key] <= high))
                spans.setdefault(key, []).append((high or 0.0) - (low or 0.0))
    return {
        "halluc_coverage": float(np.mean(held["hallucination"])), "abstain_coverage": float(np.mean(held["abstention"])),
        "halluc_mean_width": float(np.mean(spans["hallucination"])),
        "abstain_mean_width": float(np.mean(spans["abstention"])),
        **{f"ece_abs_error_{k}": float(np.mean(v)) for k, v in errors.items()},
        **{f"ece_abs_error_{k}_p95": float(np.quantile(v, 0.95)) for k, v in errors.items()},
        "figure_coverage": {name: float(np.mean(v)) for name, v in held.items()},
        "figure_mean_width": {name: float(np.mean(w)) for name, w in spans.items()},
        "figure_repetitions": {name: len(v) for name, v in held.items()},
        "topic_documents_mean": float(np.mean(topic_documents)),
    }


PROFILE = {"known": 0.5, "wrong": 0.2, "declined": 0.3}
JUDGE_NOISE = 0.05


async def label_agreement(corpus: str) -> dict[str, float]:
    """Share of verdicts whose label is `abstained` exactly when the simulator's truth is a declined unit."""
    from examiner.core.config import EndpointSpec, Settings
    from examiner.core.records import VerdictRecord
    from examiner.exam.run_writer import RunStore
    from examiner.exam.runner import ExamRequest, start_exam
    from examiner.simulator import unit_category

    spec = EndpointSpec(provider="simulated", model="sim", price_input_per_1m=2.5, price_output_per_1m=10.0,
                        max_concurrency=16, options={"knowledge": PROFILE, "judge_noise": JUDGE_NOISE})
    settings = Settings(endpoints={"sim": spec}, roles={r: "sim" for r in ("examiner", "candidate", "judge")},
                        exam={"max_rounds": 2})
    with tempfile.TemporaryDirectory() as tmp:
        await start_exam(settings, ExamRequest([corpus], targets=["sim"]), Path(tmp), quiet=True, report=False)
        verdicts = [v for v in RunStore(Path(tmp)).all(VerdictRecord).values() if v.verdict != "unscored"]
    agree = sum((v.verdict == "abstained") == (unit_category(0, "sim", v.unit_id, PROFILE) == "declined")
                for v in verdicts)
    declined = sum(unit_category(0, "sim", v.unit_id, PROFILE) == "declined" for v in verdicts)
    return {"abstain_label_agreement": agree / len(verdicts), "verdicts": len(verdicts),
            "verdicts_on_declined_units": declined}


CONTROL_SHARE = 0.5
CAUGHT = 0.9
CONTROL_TARGETS = {"answers": ("answers", {"known": 0.6, "wrong": 0.2, "unknown": 0.2}),
                   "declines": ("declines", {"declined": 1.0}),
                   "knowledge": ("knowledge", {"known": 0.6, "wrong": 0.2, "unknown": 0.2})}
"""Target name -> (its option false_premise, its knowledge profile)."""


def _shown(rate: dict[str, Any]) -> dict[str, Any]:
    return {k: rate.get(k) for k in ("value", "low", "high", "num", "den", "groups", "grouped_by", "method")}


def _caught(rate: dict[str, Any]) -> bool:
    return rate["value"] is not None and rate["value"] >= CAUGHT and rate["low"] is not None and rate["low"] > 0.5


async def control_questions(corpus: str) -> dict[str, Any]:
    """Part 4: report.json's control figures for the three simulated targets."""
    from examiner.core.config import EndpointSpec, Settings
    from examiner.exam.runner import ExamRequest, start_exam

    endpoints = {"sim": EndpointSpec(provider="simulated", model="sim", max_concurrency=16,
                                     options={"knowledge": PROFILE})}
    endpoints |= {name: EndpointSpec(provider="simulated", model=f"sim-{name}", max_concurrency=16,
                                     options={"knowledge": profile, "false_premise": policy})
                  for name, (policy, profile) in CONTROL_TARGETS.items()}
    settings = Settings(endpoints=endpoints, roles={r: "sim" for r in ("examiner", "candidate", "judge")},
                        exam={"max_rounds": 1, "control_share": CONTROL_SHARE})
    with tempfile.TemporaryDirectory() as tmp:
        await start_exam(settings, ExamRequest([corpus], targets=list(CONTROL_TARGETS)), Path(tmp), quiet=True)
        knowledge = json.loads((Path(tmp) / "report.json").read_text(encoding="utf-8"))["knowledge"]
    out: dict[str, Any] = {}
    for name in CONTROL_TARGETS:
        k = knowledge[name]
        out[name] = {"controls_asked": k["controls"]["asked"], "by_kind": k["controls"]["by_kind"],
                     "refusal_rate": _shown(k["controls"]["refusal_rate"]),
                     "false_premise_acceptance": _shown(k["controls"]["false_premise_acceptance"]),
                     "over_refusal": _shown(k["overall"]["abstention_rate"])}
    out["false_premise_caught"] = _caught(out["answers"]["false_premise_acceptance"])
    out["overrefusal_caught"] = (_caught(out["declines"]["over_refusal"])
                                 and _caught(out["declines"]["refusal_rate"]))
    return out


def _with_interval(rate: dict[str, Any]) -> str:
    return f"{rate['value']:.3f}[{rate['low']:.3f},{rate['high']:.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=500)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--corpus", default="corpora/harbor-water")
    parser.add_argument("--skip-exam", action="store_true", help="leave out part 3 (the simulated exam)")
    args = parser.parse_args()
    started = time.perf_counter()
    truth = truths(args.seed + 1)
    figures = coverage_and_ece(args.reps, truth, args.seed)
    labels = {} if args.skip_exam else asyncio.run(label_agreement(args.corpus))
    controls = {} if args.skip_exam else asyncio.run(control_questions(args.corpus))
    data = {"reps": args.reps, "documents": DOCUMENTS, "clusters_per_document": CLUSTERS, "units_per_cluster": UNITS,
            "topics": TOPICS, "truth": truth, **figures, **labels, "judge_noise": JUDGE_NOISE, "profile": PROFILE,
            "controls": controls, "control_share": CONTROL_SHARE,
            "wall_s": round(time.perf_counter() - started, 1)}
    save_json(data, RESULTS / "knowledge_boundaries.json")
    ece_error = max(figures["ece_abs_error_calibrated"], figures["ece_abs_error_overconfident"])
    coverage = figures["figure_coverage"]
    print_result({
        **{f"{name.replace('.', '')}_coverage": f"{value:.3f}" for name, value in coverage.items()
           if name not in ("hallucination", "abstention")},
        "halluc_coverage": f"{figures['halluc_coverage']:.3f}", "abstain_coverage": f"{figures['abstain_coverage']:.3f}",
        "ece_abs_error": f"{ece_error:.4f}",
        "ece_abs_error_p95": f"{max(figures['ece_abs_error_calibrated_p95'], figures['ece_abs_error_overconfident_p95']):.4f}",
        "abstain_label_agreement": f"{labels['abstain_label_agreement']:.3f}" if labels else "not_measured",
        "control_false_premise_caught": (
            f"{'yes' if controls['false_premise_caught'] else 'no'}:acceptance="
            f"{_with_interval(controls['answers']['false_premise_acceptance'])}" if controls else "not_measured"),
        "control_overrefusal_caught": (
            f"{'yes' if controls['overrefusal_caught'] else 'no'}:over_refusal="
            f"{_with_interval(controls['declines']['over_refusal'])},control_refusal="
            f"{_with_interval(controls['declines']['refusal_rate'])}" if controls else "not_measured"),
    })


if __name__ == "__main__":
    main()
