"""A pairwise cascade's spend against the strong judge alone (examiner.judging.pairwise_cascade.cascade_spend),
the figure the judging report's "Judge cascade" section states beside the promise."""

from __future__ import annotations

import pytest

from examiner.core.ledger_record import LedgerRecord
from examiner.judging.pairwise_cascade import cascade_spend
from examiner.reporting.cascade_section import pair_cascade_markdown
from examiner.reporting.model.cascade import PairCascadeSection

SUMMARY = {"cheap": "small", "strong": "big", "target_agreement": 0.9, "risk": 0.1, "calibration_share": 0.2,
           "samples": 5, "confidence_source": "logprobs", "threshold": 0.8, "calibration_agreement": 0.85,
           "kept_agreement": 0.95, "reference": "strong", "rows": 10, "settled_cheap": 6, "settled_strong": 2,
           "calibration_rows": 2}


def test_strong_only_is_the_strong_judges_dollars_per_row_times_every_row() -> None:
    ledger = [LedgerRecord.build(endpoint="small", cost_usd=0.01, outcome="ok") for _ in range(20)]
    ledger += [LedgerRecord.build(endpoint="big", cost_usd=0.5, outcome="ok") for _ in range(8)]  # 4 rows, both orders
    ledger += [LedgerRecord.build(endpoint="big", cost_usd=0.5, outcome="ok", cache_hit=True),  # free
               LedgerRecord.build(endpoint="big", cost_usd=0.5, outcome="started")]  # its outcome: the record above
    spend = cascade_spend(ledger, SUMMARY)
    assert spend["cheap_usd"] == pytest.approx(0.2) and spend["strong_usd"] == pytest.approx(4.0)
    assert spend["strong_only_usd"] == pytest.approx(10.0)  # $1 per row judged by the strong judge, 10 rows
    assert spend["spend_ratio"] == pytest.approx(0.42)
    text = "\n".join(pair_cascade_markdown(PairCascadeSection(**SUMMARY, **spend)))
    assert "Spend: $0.2000 on small and $4.0000 on big, 42.0% of the strong judge alone" in text


def test_no_strong_dollars_leaves_the_ratio_unstated() -> None:
    spend = cascade_spend([LedgerRecord.build(endpoint="small", cost_usd=0.0, outcome="ok")], SUMMARY)
    assert spend["strong_only_usd"] is None and spend["spend_ratio"] is None
    assert not any(line.startswith("Spend:") for line in pair_cascade_markdown(PairCascadeSection(**SUMMARY, **spend)))
