"""The judge bias audit's statistics against known truths: a Wilson interval written out, a judge with a
built-in length bias (slope found) and one without (interval covers 0), model families, the self gap,
and the panel kappas equal to scikit-learn's and statsmodels' own."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from examiner.stats.bias import flip_rate, length_slope, model_family, panel_agreement, self_gap, self_match


def test_flip_rate_is_the_share_with_its_wilson_interval() -> None:
    result = flip_rate(6, 40)
    z = 1.959963984540054
    p, n = 6 / 40, 40
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert result.rate == pytest.approx(0.15)
    assert (result.low, result.high) == pytest.approx((centre - half, centre + half))
    assert not result.flagged  # the interval reaches below 10 %
    assert flip_rate(30, 100).flagged
    with pytest.raises(ValueError):
        flip_rate(0, 0)


def _simulated_judge(bias: float, seed: int, documents: int = 60, per_document: int = 8,
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Verdicts whose chance of "correct" rises by `bias` per 100 tokens of answer, documents sharing a
    difficulty (so units of one document are correlated)."""
    rng = np.random.default_rng(seed)
    doc = np.repeat(np.arange(documents), per_document)
    difficulty = rng.normal(0, 0.1, documents)[doc]
    length = rng.integers(20, 400, doc.size)
    p = np.clip(0.6 + difficulty + bias * (length - 200) / 100, 0.02, 0.98)
    return (rng.random(doc.size) < p).astype(float), length.astype(float), doc


def test_a_length_biased_judge_is_flagged_and_an_unbiased_one_is_not() -> None:
    y, length, doc = _simulated_judge(0.08, seed=1)
    biased = length_slope(y, length, doc)
    assert biased.flagged and biased.low > 0 and biased.low < 0.08 < biased.high
    assert biased.groups == 60 and "cluster-robust" in biased.method
    covered = 0
    for seed in range(20):
        y, length, doc = _simulated_judge(0.0, seed=seed)
        fair = length_slope(y, length, doc)
        covered += fair.low <= 0 <= fair.high
    assert covered >= 17  # 95 % intervals: 19 of 20 expected


def test_the_slope_equals_least_squares_and_needs_enough_answers() -> None:
    length = np.array([100, 200, 300, 400, 500, 600, 700, 800, 900, 1000], dtype=float)
    y = 0.1 + 0.02 * length / 100 + np.array([0.01, -0.01] * 5)
    expected = np.polyfit(length / 100, y, 1)[0]
    assert length_slope(y, length).slope == pytest.approx(expected)
    with pytest.raises(ValueError, match="at least"):
        length_slope(y[:5], length[:5])
    with pytest.raises(ValueError, match="same length"):
        length_slope(y, np.full(10, 50.0))


def test_strata_take_out_a_better_target_that_writes_longer() -> None:
    """Target B writes longer and knows more; the judge has no taste for length: within targets, no slope."""
    rng = np.random.default_rng(3)
    target = np.repeat(["A", "B"], 300)
    length = np.where(target == "A", rng.integers(20, 120, 600), rng.integers(200, 300, 600)).astype(float)
    y = (rng.random(600) < np.where(target == "A", 0.4, 0.8)).astype(float)
    assert length_slope(y, length).flagged  # pooled: length stands in for the target
    within = length_slope(y, length, strata=target)
    assert within.low <= 0 <= within.high


@pytest.mark.parametrize(("judge", "target", "expected"), [
    ("gpt-4o", "gpt-4o", "same model"),
    ("openai/gpt-4o", "gpt-4o", "same model"),
    ("gpt-4o", "gpt-4o-mini", "same family"),
    ("gpt-4o-2024-08-06", "gpt-4o-mini-2024-07-18", "same family"),
    ("llama-3.1-8b", "Llama-3.1-70B-Instruct", "same family"),
    ("meta-llama/Meta-Llama-3.1-8B-Instruct", "meta-llama-3.1-70b-instruct", "same family"),
    ("qwen2.5:7b", "qwen2.5-72b-instruct", "same family"),
    ("claude-3-5-sonnet-20241022", "claude-3-5-haiku-20241022", "same family"),
    ("gpt-4o", "gpt-4", None),
    ("llama-3.1-8b", "llama-3.2-3b", None),
    ("gpt-4o", "claude-3-5-sonnet", None),
    ("sim", "sim2", None),
    ("j0", "j0", "same model"),
])
def test_self_match_by_model_and_family(judge: str, target: str, expected: str | None) -> None:
    assert self_match(judge, target) == expected


def test_model_family_drops_size_tier_date_and_version() -> None:
    assert model_family("Mistral-7B-Instruct-v0.2") == "mistral"
    assert model_family("gpt-4o-mini") == "gpt-4o"


def test_self_gap_is_the_difference_of_means_with_an_interval() -> None:
    rng = np.random.default_rng(0)
    doc = np.repeat(np.arange(50), 10)
    is_self = np.tile([True, False], 250)
    y = (rng.random(500) < np.where(is_self, 0.85, 0.6)).astype(float)
    gap = self_gap(y, is_self, doc)
    assert gap.gap == pytest.approx(y[is_self].mean() - y[~is_self].mean())
    assert gap.flagged and gap.low < 0.25 < gap.high
    equal = self_gap((rng.random(500) < 0.7).astype(float), is_self, doc)
    assert equal.low <= 0 <= equal.high
    with pytest.raises(ValueError):
        self_gap([1.0, 0.0], [True, True])


def test_panel_kappas_equal_sklearn_and_statsmodels() -> None:
    rng = np.random.default_rng(5)
    truth = rng.integers(0, 2, 80)
    noisy = {name: np.where(rng.random(80) < noise, 1 - truth, truth) for name, noise in
             (("j0", 0.0), ("j1", 0.15), ("j2", 0.4))}
    labels = {name: {f"u{i}": ("correct" if v else "incorrect") for i, v in enumerate(values)}
              for name, values in noisy.items()}
    labels["j2"]["u0"] = None  # a member without a label on one unit
    result = panel_agreement(labels, seed=1)
    by_pair = {(p.a, p.b): p for p in result.pairs}
    assert by_pair[("j0", "j1")].kappa == pytest.approx(cohen_kappa_score(noisy["j0"], noisy["j1"]))
    assert by_pair[("j0", "j2")].n == 79
    assert by_pair[("j0", "j2")].kappa == pytest.approx(cohen_kappa_score(noisy["j0"][1:], noisy["j2"][1:]))
    for pair in result.pairs:
        assert pair.low <= pair.kappa <= pair.high
    assert by_pair[("j0", "j1")].low > by_pair[("j0", "j2")].high  # the noisier member agrees less
    counts, _ = aggregate_raters(np.column_stack([v[1:] for v in noisy.values()]))
    assert result.fleiss_n == 79
    assert result.fleiss_kappa == pytest.approx(fleiss_kappa(counts, method="fleiss"))


def test_few_documents_switch_to_the_small_sample_intervals_never_zero_width() -> None:
    """Two members who agree in the same share within each of 3 documents: the bootstrap over documents
    alone would see no variation; the small-sample interval (t on 2 df, the units' error) still does."""
    a = {f"u{i}": i % 2 for i in range(30)}
    b = {f"u{i}": (i % 2) if i % 5 else 1 - i % 2 for i in range(30)}
    groups = {f"u{i}": i // 10 for i in range(30)}
    (pair,) = panel_agreement({"a": a, "b": b}, groups).pairs
    assert pair.method == "small sample: t on 2 df" and pair.low < pair.kappa < pair.high and pair.high - pair.low > 0.1
    gap = self_gap([1.0, 0.0, 1.0, 1.0] * 6, [True, False] * 12, [i // 8 for i in range(24)])
    assert gap.method.startswith("small sample") and gap.high - gap.low > 0.1
