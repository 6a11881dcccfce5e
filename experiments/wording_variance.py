"""Does examiner recover an injected wording effect, and does the wording-aware interval of a paired
difference cover? (issue 43, item 2)

Statistics level (many repetitions, this script's own draws; no exam runs): each repetition draws an exam
like examiner's. D documents of m units; each target's chance on a unit is its mean plus a document effect
shared by both targets, a target's own document effect and a unit effect (clipped to [0.05, 0.95]). The
units are grouped into questions of Q units drawn across documents (examiner's clusters gather similar
units from several documents). Each target answers each question in its first wording with a shift
delta ~ N(0, sd^2) of the chance of every unit of that question (one shift per target and wording: the
injected wording effect), each unit right with the shifted chance (clipped to [0, 1]), the judge flipping
each label with probability f. A seeded share S of the questions is asked again in K paraphrases (new
shifts, new answers), and a seeded share of the first-wording answers is marked twice (the self-check).
Then:
- the wording share of the variance of a question's accuracy, per target: recovered as the mean over
  repetitions of the unclipped moment estimate of the wording part (examiner.stats.wording.crossed_parts)
  over the mean variance of a question's accuracy (the sum of the parts), against the truth computed from the generating model (wording part (1 - 2f)^2 Var_delta of the
  expected accuracy of a question, over the variance of observed first-wording accuracies across 200,000
  fresh questions); the mean of the share one exam reports (examiner.stats.wording.decompose, parts
  clipped at 0) and the share of single exams within 25 % of the truth are printed beside;
- the 95 % interval of B - A from examiner.stats.paired.compare_paired (document-clustered, blind to
  wording) and the same interval with examiner.stats.wording.wording_aware_variance, both on t with D - 1
  degrees of freedom; coverage of the expected difference (the generating model's, by Monte Carlo over
  2,000,000 fresh units);
- extra calls: counted for this design as the exam makes them, per paraphrased question one examiner call
  (it writes the K paraphrases) and K x targets answers and judge calls, against one question call and
  targets x (answer + judge) calls per question of the base exam (extraction, probes and self-check left
  out of both, so the share is an upper bound on the whole exam's).

End to end (simulated exams, `--exams N`, default 4 seeds): `examiner run`'s exam on corpora/harbor-water
with two simulated targets whose answers carry the simulator's `wording_sd` effect (0.10), the judge
self-check on and `--paraphrases 2 --paraphrase-share 0.75`. From each run's records
(examiner/reporting/wording.py) the wording part of the variance of a question's accuracy is compared with
the truth the simulator's rule gives (the estimate unclipped, as averaged over runs) from each unit's known category (a known unit is right unless the
wording's shift delta < 0 turns it wrong, with chance -delta/p; a wrong one turns right with chance
delta/(1 - p) when delta > 0; p = known/(known + wrong); a unit is recalled with chance `recall`), its
variance over delta ~ N(0, sd^2) averaged over the run's round-1 questions; both are divided by the same
observed variance of the questions' first-wording accuracies. The extra calls are the ledger's `rewording`
calls over every other call of the run. Coverage is not measured end to end (it needs thousands of exams).

    python experiments/wording_variance.py [--reps 2000] [--sd 0.05 0.10 0.15] [--exams 4]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import tempfile
from pathlib import Path
from dataclasses import dataclass

import numpy as np
from finish import RESULTS, print_result, save_json
from scipy.stats import norm, t as student_t

from examiner.core.config import EndpointSpec, Settings
from examiner.core.records import QuestionRecord, VerdictRecord, WordingRecord
from examiner.core.rundir import RunDir
from examiner.exam.runner import ExamRequest, start_exam
from examiner.llm.ledger import answered
from examiner.reporting.wording import first_round, tables_of, wording_section
from examiner.simulator.behaviours import DEFAULT_RECALL, unit_category
from examiner.stats.paired import compare_paired
from examiner.stats.wording import crossed_parts, decompose, judge_variance, wording_aware_variance


@dataclass(frozen=True)
class Design:
    documents: int = 60
    units: int = 6
    question_size: int = 6
    share: float = 0.25
    paraphrases: int = 2
    flip: float = 0.05
    rejudge: float = 0.1
    means: tuple[float, float] = (0.6, 0.65)
    shared_sd: float = 0.12
    own_sd: float = 0.06
    unit_sd: float = 0.12


def chances(rng: np.random.Generator, d: Design, documents: int) -> tuple[np.ndarray, np.ndarray]:
    """Per unit (documents x units, flattened) each target's chance, and the unit's document."""
    doc = np.repeat(np.arange(documents), d.units)
    shared = rng.normal(0, d.shared_sd, documents)[doc]
    unit = rng.normal(0, d.unit_sd, doc.size)
    p = np.stack([np.clip(mean + shared + rng.normal(0, d.own_sd, documents)[doc] + unit, 0.05, 0.95)
                  for mean in d.means])
    return p, doc


def clipped_mean(p: np.ndarray, sd: float) -> np.ndarray:
    """E[clip(p + delta, 0, 1)], delta ~ N(0, sd^2), in closed form."""
    if sd == 0:
        return p
    a, b = (0 - p) / sd, (1 - p) / sd
    inside = p * (norm.cdf(b) - norm.cdf(a)) + sd * (norm.pdf(a) - norm.pdf(b))
    return inside + norm.sf(b)


def answer(rng: np.random.Generator, p: np.ndarray, sd: float, flip: float) -> np.ndarray:
    """0/1 labels of one wording of one question's units for one target (p: the units' chances)."""
    right = rng.random(p.size) < np.clip(p + rng.normal(0, sd), 0, 1)
    flipped = rng.random(p.size) < flip
    return np.where(flipped, ~right, right).astype(float)


def truth(d: Design, sd: float, seed: int) -> tuple[float, list[float]]:
    """The expected difference B - A and each target's true wording share (see the module docstring)."""
    rng = np.random.default_rng(seed)
    p, _ = chances(rng, d, 2_000_000 // d.units)
    expected = d.flip + (1 - 2 * d.flip) * clipped_mean(p, sd)
    difference = float(expected[1].mean() - expected[0].mean())
    n_q = 200_000
    p, _ = chances(rng, d, -(-n_q * d.question_size // d.units))
    p = p[:, rng.permutation(p.shape[1])][:, : n_q * d.question_size].reshape(2, n_q, d.question_size)
    shares = []
    for target in range(2):
        deltas = rng.normal(0, sd, (64, n_q, 1))
        means = np.clip(p[target][None] + deltas, 0, 1).mean(axis=2)
        wording = (1 - 2 * d.flip) ** 2 * float(np.mean(np.var(means, axis=0, ddof=1)))
        shift = rng.normal(0, sd, (n_q, 1))
        right = rng.random(p[target].shape) < np.clip(p[target] + shift, 0, 1)
        observed = np.where(rng.random(right.shape) < d.flip, ~right, right).mean(axis=1)
        shares.append(wording / float(np.var(observed, ddof=1)))
    return difference, shares


def one_exam(rng: np.random.Generator, d: Design, sd: float) -> dict[str, object]:
    """One drawn exam: labels, documents, questions, the paraphrase tables and the self-check pairs."""
    p, doc = chances(rng, d, d.documents)
    order = rng.permutation(doc.size)
    n_q = doc.size // d.question_size
    question = np.empty(doc.size, dtype=int)
    question[order[: n_q * d.question_size]] = np.repeat(np.arange(n_q), d.question_size)
    question[order[n_q * d.question_size:]] = n_q - 1
    labels = np.zeros_like(p)
    for q in range(n_q):
        at = question == q
        for target in range(2):
            labels[target, at] = answer(rng, p[target, at], sd, d.flip)
    paraphrased = rng.choice(n_q, size=max(2, round(d.share * n_q)), replace=False)
    tables: list[list[np.ndarray]] = [[], []]
    differences = []
    for q in paraphrased:
        at = question == q
        rows = [[labels[target, at]] + [answer(rng, p[target, at], sd, d.flip) for _ in range(d.paraphrases)]
                for target in range(2)]
        for target in range(2):
            tables[target].append(np.array(rows[target]))
        differences.append(np.array(rows[1]) - np.array(rows[0]))
    rejudged = rng.random(labels.shape) < d.rejudge
    # a second marking of the same answer: the judge flips each label afresh against the first marking's truth
    second = np.where(rng.random(labels.shape) < 2 * d.flip * (1 - d.flip), 1 - labels, labels)
    return {"labels": labels, "doc": doc, "question": question, "n_q": n_q, "tables": tables,
            "differences": differences, "first": labels[rejudged], "second": second[rejudged],
            "paraphrased": len(paraphrased)}


def shares(exam: dict[str, object], d: Design) -> list[tuple[float, float, float]]:
    """Per target: the wording share one exam reports, the unclipped moment estimate of the wording part
    and the total variance of a question's accuracy (the parts' sum before any clipping)."""
    labels, question = exam["labels"], exam["question"]
    assert isinstance(labels, np.ndarray) and isinstance(question, np.ndarray)
    n_q = int(exam["n_q"])  # type: ignore[call-overload]
    judge = judge_variance(exam["first"], exam["second"])  # type: ignore[arg-type]
    found = []
    for target in range(2):
        acc = [float(labels[target, question == q].mean()) for q in range(n_q)]
        sizes = [int(np.sum(question == q)) for q in range(n_q)]
        crossed = crossed_parts(exam["tables"][target])  # type: ignore[index]
        found.append((decompose(acc, sizes, crossed, judge).wording_share, crossed.wording_unclipped,
                      float(np.var(acc, ddof=1))))
    return found


def intervals(exam: dict[str, object], d: Design) -> tuple[float, float, float]:
    """(estimate, blind standard error, wording-aware standard error) of B - A."""
    labels, doc, question = exam["labels"], exam["doc"], exam["question"]
    assert isinstance(labels, np.ndarray) and isinstance(doc, np.ndarray) and isinstance(question, np.ndarray)
    result = compare_paired(labels[0].astype(int).tolist(), labels[1].astype(int).tolist(), doc.tolist())
    blind = result.accuracy_difference.standard_error
    wording = crossed_parts(exam["differences"]).wording  # type: ignore[arg-type]
    aware = math.sqrt(wording_aware_variance(blind**2, wording, question.tolist(), doc.tolist()))
    estimate = float(labels[1].mean() - labels[0].mean())
    return estimate, blind, aware


def calls(d: Design, exam: dict[str, object], targets: int = 2) -> float:
    n_q, extra_q = int(exam["n_q"]), int(exam["paraphrased"])  # type: ignore[call-overload]
    return extra_q * (1 + d.paraphrases * targets * 2) / (n_q * (1 + targets * 2))


CORPUS = Path(__file__).resolve().parent.parent / "corpora" / "harbor-water"
PROFILE = {"known": 0.6, "wrong": 0.2, "unknown": 0.2}
ROLES = ("examiner", "judge")


def exam_settings(seed: int, sd: float) -> Settings:
    endpoints = {name: EndpointSpec(provider="simulated", model=f"sim-{name}", max_concurrency=16,
                                    options={"knowledge": PROFILE, "wording_sd": sd})
                 for name in ("sim", "a", "b")}
    return Settings(endpoints=endpoints, roles={r: "sim" for r in ROLES},
                    exam={"max_rounds": 3, "seed": seed, "paraphrases": 2, "paraphrase_share": 0.75,
                          "self_check_share": 0.05})


def true_wording(categories: list[str], sd: float, draws: np.ndarray) -> float:
    """Var over delta of a question's expected share right under the simulator's rule (module docstring)."""
    p = PROFILE["known"] / (PROFILE["known"] + PROFILE["wrong"])
    delta = sd * draws
    known = 1 - np.minimum(1, np.maximum(0, -delta) / p)
    wrong = np.minimum(1, np.maximum(0, delta) / (1 - p))
    right = sum(known if c == "known" else wrong if c == "wrong" else 0 * delta for c in categories)
    return float(np.var(DEFAULT_RECALL * right / len(categories)))


async def end_to_end(seed: int, sd: float, folder: Path) -> dict[str, float]:
    """One simulated exam with the wording check: estimated and true wording parts, extra call share."""
    await start_exam(exam_settings(seed, sd), ExamRequest([str(CORPUS)], targets=["a", "b"]), folder, quiet=True,
                     report=False)
    section = wording_section(folder)
    assert section is not None
    store = RunDir(folder)
    exam = first_round(store.records(QuestionRecord), store.records(VerdictRecord))
    draws = np.random.default_rng(seed).standard_normal(20_000)
    tables = tables_of(store.records(WordingRecord))
    found: dict[str, float] = {}
    for target, parts in section.targets.items():
        truth_part = float(np.mean([true_wording([unit_category(0, f"sim-{target}", u, PROFILE) for u in units],
                                                 sd, draws) for units in exam[target].values()]))
        found[f"{target}_estimate"] = crossed_parts(list(tables[target].values())).wording_unclipped
        found[f"{target}_truth"] = truth_part
        found[f"{target}_total"] = parts.total
    ledger = answered(store.ledger_records())
    extra = sum(1 for r in ledger if r.stage == "rewording")
    found["extra_call_share"] = extra / max(1, len(ledger) - extra)
    found["questions"] = section.questions
    found["rank_flip"] = section.pairs[0].rank_flip if section.pairs else math.nan
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--sd", type=float, nargs="+", default=[0.05, 0.10, 0.15])
    parser.add_argument("--seed", type=int, default=43)
    parser.add_argument("--exams", type=int, default=4, help="simulated exams end to end (0: none)")
    parser.add_argument("--exam-sd", type=float, default=0.10)
    args = parser.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.exams):
            runs.append(asyncio.run(end_to_end(seed, args.exam_sd, Path(tmp) / f"run-{seed}")))
            r = runs[-1]
            print(f"exam seed {seed}: {r['questions']} questions re-asked; wording part a {r['a_estimate']:.4f} "
                  f"(truth {r['a_truth']:.4f}), b {r['b_estimate']:.4f} (truth {r['b_truth']:.4f}); share a "
                  f"{r['a_estimate'] / r['a_total']:.3f} (truth {r['a_truth'] / r['a_total']:.3f}), b "
                  f"{r['b_estimate'] / r['b_total']:.3f} (truth {r['b_truth'] / r['b_total']:.3f}); rank flip "
                  f"{r['rank_flip']:.3f}; extra calls {r['extra_call_share']:.3f} of the rest")
    d = Design()
    rows = []
    for i, sd in enumerate(args.sd):
        true_diff, true_shares = truth(d, sd, args.seed + 1000 + i)
        rng = np.random.default_rng(args.seed + i)
        tq = float(student_t.ppf(0.975, d.documents - 1))
        found, cover_blind, cover_aware, extra = [], 0, 0, 0.0
        for _ in range(args.reps):
            exam = one_exam(rng, d, sd)
            found.append(shares(exam, d))
            estimate, blind, aware = intervals(exam, d)
            cover_blind += abs(estimate - true_diff) <= tq * blind
            cover_aware += abs(estimate - true_diff) <= tq * aware
            extra = calls(d, exam)
        drawn = np.array(found)  # reps x targets x (reported share, unclipped wording part, total)
        est = np.nanmean(drawn[:, :, 0], axis=0)
        unbiased = np.nanmean(drawn[:, :, 1], axis=0) / np.nanmean(drawn[:, :, 2], axis=0)
        per_rep = np.abs(drawn[:, :, 0] / np.array(true_shares)[None, :] - 1)
        row = {"sd": sd, "true_difference": true_diff, "true_share": true_shares, "mean_share": est.tolist(),
               "mean_unclipped_share": unbiased.tolist(),
               "share_rel_error": float(np.max(np.abs(unbiased / np.array(true_shares) - 1))),
               "reported_share_rel_error": float(np.max(np.abs(est / np.array(true_shares) - 1))),
               "share_within_25pct": float(np.mean(per_rep <= 0.25)),
               "coverage_aware": cover_aware / args.reps, "coverage_blind": cover_blind / args.reps,
               "extra_call_share": extra}
        rows.append(row)
        print(f"sd={sd:.2f}: true share A/B {true_shares[0]:.3f}/{true_shares[1]:.3f}; recovered (mean unclipped "
              f"wording part over mean total) {unbiased[0]:.3f}/{unbiased[1]:.3f} (relative error {row['share_rel_error']:.3f}); mean "
              f"of the reported (clipped at 0) {est[0]:.3f}/{est[1]:.3f} (relative error "
              f"{row['reported_share_rel_error']:.3f}); single exams within 25 %: "
              f"{row['share_within_25pct']:.2f}; coverage of B - A = {true_diff:.4f}: "
              f"aware {row['coverage_aware']:.3f}, blind {row['coverage_blind']:.3f} ({args.reps} exams); "
              f"extra calls {extra:.3f} of the base exam's")
    exam_error = math.nan
    if runs:
        estimate = np.mean([[r["a_estimate"], r["b_estimate"]] for r in runs])
        truth_part = np.mean([[r["a_truth"], r["b_truth"]] for r in runs])
        exam_error = float(abs(estimate / truth_part - 1))
        print(f"end to end, {len(runs)} exams (wording_sd {args.exam_sd}): mean wording part {estimate:.4f} against "
              f"truth {truth_part:.4f} (relative error {exam_error:.3f}); extra calls at most "
              f"{max(r['extra_call_share'] for r in runs):.3f} of the rest of the exam")
    save_json({"design": d.__dict__, "reps": args.reps, "rows": rows, "exams": runs},
              RESULTS / "wording_variance.json")
    middle = rows[len(rows) // 2]  # coverage_aware / coverage_blind: at the middle sd (0.10 by default)
    print_result({
        "wording_share_rel_error": f"{max(r['share_rel_error'] for r in rows):.3f}",
        "exam_wording_rel_error": f"{exam_error:.3f}",
        "exam_extra_call_share": f"{max((r['extra_call_share'] for r in runs), default=math.nan):.3f}",
        "coverage_aware": f"{middle['coverage_aware']:.3f}",
        "coverage_blind": f"{middle['coverage_blind']:.3f}",
        "coverage_aware_range": f"{min(r['coverage_aware'] for r in rows):.3f}-{max(r['coverage_aware'] for r in rows):.3f}",
        "coverage_blind_range": f"{min(r['coverage_blind'] for r in rows):.3f}-{max(r['coverage_blind'] for r in rows):.3f}",
        "extra_call_share": f"{max(r['extra_call_share'] for r in rows):.3f}",
    })


if __name__ == "__main__":
    main()
