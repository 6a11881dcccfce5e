"""The judge self-agreement interval is never zero-width (issue 40): 12 of 12 units agreeing, or 0 of 28,
printed [1.000, 1.000] and [0.000, 0.000] under the percentile bootstrap over answers."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from statsmodels.stats.proportion import proportion_confint

from examiner.exam.health import self_agreement


def _records(answers: int, units: int, same: bool) -> Any:
    verdicts, checks = {}, {}
    for a in range(answers):
        labels = {}
        for u in range(units):
            verdicts[f"v{a}-{u}"] = SimpleNamespace(answer_id=f"a{a}", unit_id=f"u{u}", verdict="correct")
            labels[f"u{u}"] = "correct" if same else "incorrect"
        checks[f"s{a}"] = SimpleNamespace(answer_id=f"a{a}", labels=labels)
    return SimpleNamespace(verdicts=verdicts, self_checks=checks)


@pytest.mark.parametrize(("answers", "units", "same"), [(3, 4, True), (7, 4, False), (1, 12, True)])
def test_unanimous_self_checks_get_an_interval_at_least_as_wide_as_wilson(answers: int, units: int, same: bool) -> None:
    found = self_agreement(_records(answers, units, same))
    n = answers * units
    assert found.compared == n and found.agreed == (n if same else 0)
    assert found.low is not None and found.high is not None and found.high - found.low > 0
    wilson_low, wilson_high = proportion_confint(n if same else 0, n, alpha=0.05, method="wilson")
    # over few answers the t reference widens it: never narrower than Wilson on independent units
    assert found.low <= wilson_low + 1e-9 and found.high >= wilson_high - 1e-9
