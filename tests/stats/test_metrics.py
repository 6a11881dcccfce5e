"""Classic metrics on tiny strings with hand-computed values, and metric-based preferences.

The BERTScore test is marked slow (model load through bert-score); deselect with -m "not slow"."""

from __future__ import annotations

import math

import pytest

from examiner.stats import reference_metrics as metrics


def test_bleu_by_hand():
    # hyp "the cat sat on mat" vs ref "the cat sat on the mat":
    # precisions 5/5, 3/4, 2/3, 1/2; BP = exp(1 - 6/5)
    expected = math.exp(1 - 6 / 5) * (1 * 3 / 4 * 2 / 3 * 1 / 2) ** 0.25
    assert metrics.bleu(["the cat sat on mat"], ["the cat sat on the mat"])[0] == pytest.approx(expected, abs=1e-6)
    assert metrics.bleu(["the cat sat on the mat"], [["no match here", "the cat sat on the mat"]])[0] == pytest.approx(1.0)


def test_bleu_effective_order_keeps_short_texts_nonzero():
    # no 3-/4-gram in a 2-word text: effective order uses 1- and 2-grams only; BP = exp(1 - 6/2)
    assert metrics.bleu(["the cat"], ["the cat sat on the mat"])[0] == pytest.approx(math.exp(-2), abs=1e-6)


def test_corpus_bleu_variable_reference_counts():
    score = metrics.corpus_bleu(["the cat sat on the mat", "a b c d"], [["the cat sat on the mat", "x y"], "a b c d"])
    assert score == pytest.approx(1.0)


def test_rouge_by_hand_with_stemming():
    # "the cats sat" -> [the, cat, sat] (stemmed); ref [the, cat, sat, on, the, mat]
    # R1: P 3/3, R 3/6 -> F 2/3. R2: bigrams (the cat) (cat sat) both in ref: P 2/2, R 2/5 -> F 4/7.
    r = metrics.rouge(["the cats sat"], ["the cat sat on the mat"])
    assert r["rouge1"][0] == pytest.approx(2 / 3)
    assert r["rouge2"][0] == pytest.approx(4 / 7)
    assert r["rougeL"][0] == pytest.approx(2 / 3)
    recall = metrics.rouge(["the cats sat"], ["the cat sat on the mat"], measure="recall")
    assert recall["rouge1"][0] == pytest.approx(0.5)


def test_rouge_without_stemming():
    # "cats" no longer matches "cat": R1 P 2/3, R 2/6 -> F = 2 * (2/3)(1/3) / (2/3 + 1/3) = 4/9
    r = metrics.rouge(["the cats sat"], ["the cat sat on the mat"], stemmer=False)
    assert r["rouge1"][0] == pytest.approx(4 / 9)


def test_rouge_multi_reference_max_and_mean():
    refs = [["the cat sat on the mat", "dogs bark"]]
    best = metrics.rouge(["the cats sat"], refs)
    mean = metrics.rouge(["the cats sat"], refs, aggregate="mean")
    assert best["rouge1"][0] == pytest.approx(2 / 3)  # max over references
    assert mean["rouge1"][0] == pytest.approx((2 / 3 + 0) / 2)
    table = metrics.rouge_table(["the cats sat"], refs)
    assert table.shape == (1, 2, 3, 3)


def test_rouge_lsum_uses_sentences():
    assert metrics.split_sentences("A b. C d? E") == "A b.\nC d?\nE"
    r = metrics.rouge(["It rained. The cat sat."], ["The cat sat. It rained."], types=["rougeL", "rougeLsum"])
    assert r["rougeLsum"][0] == pytest.approx(1.0)  # sentence order does not matter at summary level
    assert r["rougeL"][0] < 1.0


def test_missing_reference_rejected():
    with pytest.raises(ValueError):
        metrics.rouge(["a"], [[]])
    with pytest.raises(ValueError):
        metrics.bleu(["a", "b"], ["a"])


def test_pairwise_preference_and_majority_vote():
    assert metrics.pairwise_preference([0.5, 0.2, 0.3], [0.4, 0.6, 0.3]) == [1, 2, 0]
    assert metrics.pairwise_preference([0.50, 0.2], [0.51, 0.6], tol=0.02) == [0, 2]
    prefs = {
        "bleu": [1, 1, 0, 1, 1],
        "rouge": [2, 1, 0, 2, 2],
        "bertscore": [2, 0, 1, 0, 2],
    }
    # item 1: 2 beats 1 two to one; item 2: 1 twice; item 3: tie twice;
    # item 4: one vote each for 1, 2 and tie -> no majority -> tie; item 5: 2 twice
    assert metrics.majority_vote(prefs) == [2, 1, 0, 0, 2]
    assert metrics.majority_vote([[1, 2], [2, 1]]) == [0, 0]  # 1-1 split is a tie
    with pytest.raises(ValueError):
        metrics.majority_vote([[1, 3]])


HYPS = ["the cat sat on the mat", "stock markets fell sharply today"]
REFS = [["a cat was sitting on the mat", "the weather is cold"], "stock markets fell sharply today"]


@pytest.mark.slow  # loads the model through bert-score: ~6 s on an idle 2-core CPU
def test_bertscore_with_bundled_model():
    f1 = metrics.bertscore(HYPS, REFS)
    assert f1[1] == pytest.approx(1.0, abs=1e-4)  # identical text
    assert 0.7 < f1[0] < 1.0
    single = metrics.bertscore(HYPS[:1], ["the weather is cold"])[0]
    assert f1[0] > single  # multi-reference keeps the best reference


def test_embedding_similarity_with_bundled_model():
    sims = metrics.embedding_similarity(HYPS, REFS)
    assert sims[1] == pytest.approx(1.0, abs=1e-5)
    assert sims[0] > metrics.embedding_similarity(HYPS[:1], ["the weather is cold"])[0]
