"""The knowledge figures' cluster intervals and paired differences (examiner/stats/knowledge_intervals.py)."""

from __future__ import annotations

import numpy as np
import pytest

from examiner.stats.knowledge import expected_calibration_error, penalised_score, risk_coverage_area, simpleqa_f
from examiner.stats.knowledge_intervals import (FIGURES, figure_interval, figure_range, figure_value,
                                                paired_figure_difference)


def _units(seed: int, documents: int = 30, per: int = 8, know: float = 0.6) -> tuple[list[str], list[float | None],
                                                                                     list[str]]:
    rng = np.random.default_rng(seed)
    status, conf, docs = [], [], []
    for d in range(documents):
        p = float(np.clip(rng.normal(know, 0.15), 0.05, 0.95))
        for _ in range(per):
            chance = float(np.clip(p + rng.normal(0, 0.1), 0.02, 0.98))
            declined = rng.random() < 0.2
            status.append("abstained" if declined else "correct" if rng.random() < chance else "incorrect")
            conf.append(None if declined else chance)
            docs.append(f"d{d}")
    return status, conf, docs


def test_every_figure_equals_the_report_functions() -> None:
    status, conf, docs = _units(1)
    right, wrong, asked = status.count("correct"), status.count("incorrect"), len(status)
    accuracy, given = right / asked, right / (right + wrong)
    assert figure_value("f_score", status, conf) == pytest.approx(simpleqa_f(accuracy, given))
    for t in (0.5, 0.75, 0.9):
        assert figure_value(f"penalised_{t}", status, conf) == pytest.approx(penalised_score(right, wrong, asked, t))
    attempted = [(c, int(s == "correct")) for s, c in zip(status, conf) if s != "abstained"]
    assert figure_value("ece", status, conf) == pytest.approx(
        expected_calibration_error([c for c, _ in attempted], [y for _, y in attempted]))
    assert figure_value("aurc", status, conf) == pytest.approx(
        risk_coverage_area([c for c, _ in attempted], [y for _, y in attempted]))
    assert figure_value("brier", status, conf) == pytest.approx(
        np.mean([(c - y) ** 2 for c, y in attempted]))


@pytest.mark.parametrize("name", FIGURES)
def test_each_interval_holds_its_figure_and_lies_in_its_range(name: str) -> None:
    status, conf, docs = _units(2)
    est = figure_interval(name, status, conf, docs)
    bottom, top = figure_range(name)
    assert est.estimate is not None and est.low is not None and est.high is not None
    assert bottom <= est.low < est.estimate < est.high <= top
    assert est.n_groups == 30 and est.grouped_by == "documents"
    assert ("jackknife" in est.method) == (name in ("ece", "aurc"))


def test_clustering_widens_the_interval_of_a_ratio_figure() -> None:
    # units of one document share their outcome: the same counts as independent units give a wider interval
    status = ["correct"] * 80 + ["incorrect"] * 80
    conf: list[float | None] = [None] * 160
    alike = figure_interval("f_score", status, conf, [f"d{i // 8}" for i in range(160)])
    mixed = figure_interval("f_score", status, conf, [f"d{i % 20}" for i in range(160)])
    assert alike.estimate == mixed.estimate
    assert alike.standard_error is not None and mixed.standard_error is not None
    assert alike.standard_error > 2 * mixed.standard_error


def test_one_document_groups_by_cluster_and_undefined_figures_have_no_interval() -> None:
    status, conf, _ = _units(3, documents=6)
    clusters = [f"c{i // 8}" for i in range(len(status))]
    est = figure_interval("ece", status, conf, ["one"] * len(status), clusters)
    assert est.grouped_by == "clusters" and est.n_groups == 6
    none = figure_interval("ece", status, [None] * len(status), ["one"] * len(status), clusters)
    assert none.estimate is None and none.low is None
    with pytest.raises(ValueError, match="unknown knowledge figure"):
        figure_interval("fscore", status, conf, ["one"] * len(status))


def test_paired_difference_cancels_what_the_documents_share() -> None:
    status_a, conf_a, docs = _units(4)
    # B: the same units, a few more right; the document effects are shared
    rng = np.random.default_rng(5)
    status_b = ["correct" if s == "incorrect" and rng.random() < 0.3 else s for s in status_a]
    d = paired_figure_difference("penalised_0.75", status_a, conf_a, status_b, conf_a, docs)
    value_a, value_b = figure_value("penalised_0.75", status_a, conf_a), figure_value("penalised_0.75", status_b, conf_a)
    assert value_a is not None and value_b is not None
    assert d.estimate == pytest.approx(value_b - value_a)
    assert d.low is not None and d.high is not None and 0 < d.low < d.estimate < d.high
    single = figure_interval("penalised_0.75", status_b, conf_a, docs)
    assert d.standard_error is not None and single.standard_error is not None
    assert d.standard_error < single.standard_error
    # one target against itself: difference 0, and still an interval (the independent-units floor), never
    # a zero-width one
    same = paired_figure_difference("ece", status_a, conf_a, status_a, conf_a, docs)
    assert same.estimate == 0 and same.low is not None and same.high is not None and same.low < 0 < same.high


def test_a_zero_ece_on_few_documents_still_gets_a_width() -> None:
    """Every document states 75 % on four answers (three right) and 50 % on two (one right): the ECE and every
    leave-one-out ECE are 0, so the jackknife variance is 0; the independent-units floor keeps the
    interval open above 0 (six documents cannot show a target calibrated to the hundredth)."""
    status = ["correct", "correct", "correct", "incorrect", "correct", "incorrect"] * 6
    conf: list[float | None] = [0.75, 0.75, 0.75, 0.75, 0.5, 0.5] * 6
    docs = [f"d{i // 6}" for i in range(36)]
    est = figure_interval("ece", status, conf, docs)
    assert est.estimate == 0 and est.low == 0
    assert est.high is not None and est.high > 0.05
    aurc = figure_interval("aurc", status, conf, docs)
    assert aurc.low is not None and aurc.high is not None and aurc.high - aurc.low > 0.05


def test_a_topic_whose_units_all_agree_still_gets_a_width() -> None:
    """A document topic of two units, both wrong: every unit has the same value, so the linearised variance
    is 0 and the interval was once -3.000 [-3.00, -3.00]; the floor with values shrunk by half a unit keeps it
    open, leaves the estimate alone, and narrows as the units grow (a 0/1 figure: p(1 - p)/n at (k + 0.5)/(n + 1))."""
    status, conf = ["incorrect", "incorrect"], [0.9, 0.9]
    for name in ("penalised_0.75", "penalised_0.5", "f_score", "brier"):
        est = figure_interval(name, status, conf, ["d", "d"], ["c1", "c2"])
        assert est.estimate == figure_value(name, status, conf)
        assert est.low is not None and est.high is not None and est.estimate is not None
        assert est.high - est.low > 0 and est.low <= est.estimate <= est.high
    wide = figure_interval("f_score", status, conf, ["d", "d"]).standard_error
    many = figure_interval("f_score", ["incorrect"] * 40, [0.9] * 40, [f"d{i}" for i in range(40)])
    share = 0.5 / 41
    assert many.standard_error == pytest.approx(np.sqrt(share * (1 - share) / 40))
    assert wide is not None and many.standard_error < wide
    assert many.low == 0 and many.high is not None and 0 < many.high < 0.1


def test_interval_coverage_of_f_and_ece_on_clustered_draws() -> None:
    """A small coverage check (the experiment runs 500 repetitions): the F interval holds the F of the
    model the draws come from in most of 60 draws; a false interval (the independent-units one on strongly
    clustered units) would hold it far less often."""
    rng = np.random.default_rng(11)
    held = 0
    for _ in range(60):
        status, docs = [], []
        for d in range(30):
            p = float(rng.beta(3, 2))  # mean 0.6: every unit attempted, F = 2k / 2n = accuracy
            status += ["correct" if rng.random() < p else "incorrect" for _ in range(8)]
            docs += [f"d{d}"] * 8
        est = figure_interval("f_score", status, [None] * len(status), docs)
        held += int(est.low is not None and est.high is not None and est.low <= 0.6 <= est.high)
    assert held >= 52
