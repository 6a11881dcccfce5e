"""`examiner gate --metric`: the hallucination and abstention rates as the quantity decided on. Two simulated
targets sit one exam: `careful` declines what it does not know, `inventive` invents it; on the hallucination
rate `inventive` fails against `careful`, on the abstention rate `careful` fails against `inventive`."""

from __future__ import annotations

from pathlib import Path

import pytest

from examiner.api.gating import GateOptions, gate
from examiner.cli.main import main
from examiner.exam.runner import ExamRequest, start_exam
from tests.helpers.simulated_exam import sim_settings

CAREFUL = {"known": 0.6, "wrong": 0.05, "declined": 0.35}
INVENTIVE = {"known": 0.6, "wrong": 0.35, "declined": 0.05}


@pytest.fixture(scope="module")
def two_targets(small_corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    import asyncio

    settings = sim_settings(max_rounds=2, models=("careful", "inventive"))
    settings.endpoints["careful"].options["knowledge"] = CAREFUL
    settings.endpoints["inventive"].options["knowledge"] = INVENTIVE
    out = tmp_path_factory.mktemp("gate-metrics")
    asyncio.run(start_exam(settings, ExamRequest([str(small_corpus)], targets=["careful", "inventive"]), out,
                           quiet=True, report=False))
    return out


def _gate(run: Path, base: str, new: str, metric: str) -> object:
    return gate(GateOptions(base=str(run), new=str(run), base_target=base, new_target=new, margin=0.05,
                            metric=metric, allow_unhealthy=True))


def test_hallucination_and_abstention_rates_decide_apart(two_targets: Path) -> None:
    inventing = _gate(two_targets, "careful", "inventive", "hallucination_rate")
    assert not inventing.passed and inventing.decision.difference < -0.15
    assert "metric hallucination_rate, held as 1 - rate" in inventing.line()
    declining = _gate(two_targets, "inventive", "careful", "abstention_rate")
    assert not declining.passed and declining.decision.difference < -0.15
    # the other way round each rate falls (22 units are too few for a non-inferiority pass at 0.05)
    assert _gate(two_targets, "inventive", "careful", "hallucination_rate").decision.difference > 0.15
    falling = _gate(two_targets, "careful", "inventive", "abstention_rate")
    assert falling.decision.difference > 0.15 and falling.as_dict()["metric"] == "abstention_rate"


def test_the_command_line_takes_the_metric(two_targets: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["gate", str(two_targets), str(two_targets), "--base-target", "careful", "--new-target", "inventive",
                 "--margin", "0.05", "--metric", "hallucination_rate", "--allow-unhealthy"])
    assert code == 1 and "hallucination_rate" in capsys.readouterr().out
    with pytest.raises(SystemExit) as bad:
        main(["gate", str(two_targets), str(two_targets), "--margin", "0.05", "--metric", "halucination"])
    assert bad.value.code == 2


def test_compare_shows_each_targets_rates(two_targets: Path) -> None:
    from examiner.reporting.compare import compare_report, rows

    report = compare_report([two_targets])
    by_name = {t.target: t for t in report.targets}
    careful, inventive = by_name["careful"], by_name["inventive"]
    assert careful.hallucination_rate is not None and inventive.hallucination_rate is not None
    assert inventive.hallucination_rate.value > careful.hallucination_rate.value + 0.15
    assert careful.abstention_rate is not None and careful.abstention_rate.value > 0.15
    assert careful.abstention_rate.value == careful.counts.abstained / (
        careful.counts.correct + careful.counts.incorrect + careful.counts.abstained)
    assert any("%" in str(cell) and "[" in str(cell) for cell in rows(report)[0][9:11])
