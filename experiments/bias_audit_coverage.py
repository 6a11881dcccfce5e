"""Coverage of the judge bias audit's 95 % intervals (examiner.stats.bias) on clustered data of known truth.

    python experiments/bias_audit_coverage.py     # about 40 s; figures in experiments/results/bias_audit_coverage.json

Verdicts of 8 units per document, documents sharing a difficulty (a normal shift of sd 0.15 around a 0.6
chance of "correct") and an answer-length shift, so both the verdict and the length are clustered:

- length slope with no length effect (truth 0), `length_slope` with the documents as groups;
- self-preference gap with no preference (truth 0): half the units "own family", `self_gap`;
- Cohen's kappa of two members flipping a true verdict independently 10 % of the time (truth 0.631 from
  agreement 0.82 and marginals 0.58), `panel_agreement` with the documents as groups.

Each at 60 documents (the cluster methods) and 10 (below 30 groups: the small-sample intervals).
RESULT: length_cov_60, length_cov_10, gap_cov_60, gap_cov_10, kappa_cov_60, kappa_cov_10.
"""

from __future__ import annotations

import numpy as np

from examiner.stats.bias import length_slope, panel_agreement, self_gap
from finish import RESULTS, print_result, save_json

PER = 8
TRUE_KAPPA = (0.82 - (0.58**2 + 0.42**2)) / (1 - (0.58**2 + 0.42**2))


def verdicts(rng: np.random.Generator, docs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    doc = np.repeat(np.arange(docs), PER)
    truth = (rng.random(doc.size) < np.clip(0.6 + rng.normal(0, 0.15, docs)[doc], 0.02, 0.98)).astype(int)
    length = (rng.integers(20, 400, doc.size) + rng.normal(0, 60, docs)[doc]).clip(1, None)
    return truth, length, doc, rng.random(doc.size)


def main() -> None:
    figures: dict[str, float] = {}
    for docs in (60, 10):
        rng = np.random.default_rng(docs)
        length_hits = gap_hits = kappa_hits = 0
        reps = 400
        for r in range(reps):
            truth, length, doc, _ = verdicts(rng, docs)
            slope = length_slope(truth.astype(float), length, doc)
            length_hits += slope.low <= 0 <= slope.high
            gap = self_gap(truth.astype(float), np.tile([True, False], truth.size // 2), doc, n_resamples=400, seed=r)
            gap_hits += gap.low <= 0 <= gap.high
            a = np.where(rng.random(truth.size) < 0.1, 1 - truth, truth)
            b = np.where(rng.random(truth.size) < 0.1, 1 - truth, truth)
            pair = panel_agreement({"a": dict(enumerate(a)), "b": dict(enumerate(b))}, dict(enumerate(doc)),
                                   n_resamples=400, seed=r).pairs[0]
            kappa_hits += pair.low <= TRUE_KAPPA <= pair.high
        figures[f"length_cov_{docs}"] = length_hits / reps
        figures[f"gap_cov_{docs}"] = gap_hits / reps
        figures[f"kappa_cov_{docs}"] = kappa_hits / reps
    save_json({"replications": 400, "units_per_document": PER, "true_kappa": TRUE_KAPPA, **figures},
              RESULTS / "bias_audit_coverage.json")
    print_result({k: f"{v:.3f}" for k, v in figures.items()})


if __name__ == "__main__":
    main()
