"""The scores figure's caption names the method that made the intervals it draws: the small-sample Wilson
interval below 30 documents, the cluster bootstrap above, never a bootstrap the report did not run."""

from __future__ import annotations

from examiner.reporting.figures import interval_caption
from examiner.reporting.score_intervals import ratio_estimate


def _target(n_documents: int) -> dict[str, dict[str, object]]:
    values = [i % 3 != 0 for i in range(120)]
    documents = [f"d{i % n_documents}" for i in range(120)]
    clusters = [f"c{i % 40}" for i in range(120)]
    est = ratio_estimate([int(v) for v in values], documents, clusters, n_resamples=200)
    return {"accuracy": est, "coverage": est}


def test_a_small_sample_figure_is_captioned_with_wilson() -> None:
    caption = interval_caption({"t": _target(12)})
    assert "Wilson" in caption and "bootstrap" not in caption


def test_a_large_sample_figure_is_captioned_with_the_bootstrap() -> None:
    caption = interval_caption({"t": _target(60)})
    assert "cluster bootstrap" in caption and "Wilson" not in caption


def test_two_methods_are_both_named_and_no_method_claims_none() -> None:
    caption = interval_caption({"small": _target(12), "large": _target(60)})
    assert "Wilson" in caption and "cluster bootstrap" in caption
    assert interval_caption({"t": {"accuracy": {"value": 0.5, "low": 0.4, "high": 0.6}}}) == "95% intervals"
