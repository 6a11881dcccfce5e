"""The scores figure's caption names the method that made the intervals it draws (the Wilson interval with
design effect at every size since issue 40), never a bootstrap the report did not run."""

from __future__ import annotations

from examiner.reporting.figures import interval_caption
from examiner.reporting.score_intervals import ratio_estimate


def _target(n_documents: int) -> dict[str, dict[str, object]]:
    values = [i % 3 != 0 for i in range(120)]
    documents = [f"d{i % n_documents}" for i in range(120)]
    clusters = [f"c{i % 40}" for i in range(120)]
    est = ratio_estimate([int(v) for v in values], documents, clusters)
    return {"accuracy": est, "coverage": est}


def test_small_and_large_samples_are_captioned_with_wilson_and_no_bootstrap() -> None:
    for documents in (12, 60):
        caption = interval_caption({"t": _target(documents)})
        assert "Wilson with design effect, t on documents - 1 df" in caption and "bootstrap" not in caption


def test_two_methods_are_both_named_and_no_method_claims_none() -> None:
    caption = interval_caption({"by documents": _target(12), "by clusters": _target(1)})
    assert "t on documents - 1 df" in caption and "t on clusters - 1 df" in caption
    assert interval_caption({"t": {"accuracy": {"value": 0.5, "low": 0.4, "high": 0.6}}}) == "95% intervals"
