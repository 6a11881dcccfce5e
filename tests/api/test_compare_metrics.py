"""`examiner compare --metric NAME`: each pair's difference B - A in a knowledge figure, with its interval, in
every output. Two simulated targets sit one exam: `careful` declines what it does not know and states a
calibrated confidence, `inventive` invents it and states 95-99 % whatever it knows; the corpus is ten
documents of harbor-water, so the intervals have ten groups."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from examiner.api.compare import CompareOptions, compare_runs
from examiner.api.gating import GateOptions, gate
from examiner.cli.main import main
from examiner.exam.runner import ExamRequest, start_exam
from tests.helpers.simulated_exam import sim_settings

CAREFUL = {"known": 0.6, "wrong": 0.05, "declined": 0.35}
INVENTIVE = {"known": 0.6, "wrong": 0.35, "declined": 0.05}


@pytest.fixture(scope="module")
def two_targets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import asyncio

    corpus = tmp_path_factory.mktemp("ten-documents")
    for source in sorted(Path("corpora/harbor-water").glob("*.md"))[:10]:
        (corpus / source.name).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")

    settings = sim_settings(max_rounds=1, models=("careful", "inventive"))
    settings.endpoints["careful"].options.update(knowledge=CAREFUL, stated_confidence="calibrated")
    settings.endpoints["inventive"].options.update(knowledge=INVENTIVE, stated_confidence="overconfident")
    out = tmp_path_factory.mktemp("compare-metrics")
    asyncio.run(start_exam(settings, ExamRequest([str(corpus)], targets=["careful", "inventive"]), out,
                           quiet=True, report=False))
    return out


def test_a_share_gets_the_gates_difference_turned_back_into_the_rate(two_targets: Path) -> None:
    result = compare_runs(CompareOptions(run_dirs=(str(two_targets),), metric="hallucination_rate"))
    (m,) = result.report.metric_differences
    assert (m.a, m.b, m.lower_is_better) == ("careful", "inventive", True)
    d = m.difference
    assert m.value_a is not None and m.value_b is not None and d.estimate is not None
    assert d.estimate == pytest.approx(m.value_b - m.value_a) and d.estimate > 0.15
    assert d.low is not None and d.high is not None and 0 < d.low < d.estimate < d.high
    # the gate holds the rate as its complement: the same difference, sign turned
    decision = gate(GateOptions(base=str(two_targets), new=str(two_targets), base_target="careful",
                                new_target="inventive", margin=0.05, metric="hallucination_rate",
                                allow_unhealthy=True)).decision
    assert decision.difference == pytest.approx(-d.estimate)
    assert "hallucination_rate" in result.metric_lines()[0] and "lower is better" in result.metric_lines()[0]


@pytest.mark.parametrize("metric, sign", [("ece", 1), ("brier", 1), ("penalised_0.75", -1), ("f_score", 0)])
def test_calibration_and_scores_part_the_two_targets(two_targets: Path, metric: str, sign: int) -> None:
    (m,) = compare_runs(CompareOptions(run_dirs=(str(two_targets),), metric=metric)).report.metric_differences
    d = m.difference
    assert d.estimate is not None and d.low is not None and d.high is not None
    assert d.low < d.estimate < d.high
    # inventive states 95-99 % and is often wrong: worse calibration and a lower penalised score
    if sign:
        assert sign * d.estimate > 0 and sign * (d.low if sign > 0 else d.high) > 0
    assert ("jackknife" in d.method) == (metric == "ece")


def test_the_command_line_writes_the_metric_to_every_output(two_targets: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cmp.md"
    assert main(["compare", str(two_targets), "--metric", "aurc", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "inventive - careful: aurc" in printed
    assert "## Paired difference in aurc" in out.read_text(encoding="utf-8")
    assert "Paired difference in aurc" in out.with_suffix(".html").read_text(encoding="utf-8")
    data = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert data["metric_differences"][0]["metric"] == "aurc"
    assert data["metric_differences"][0]["difference"]["low"] is not None


def test_an_unknown_metric_is_one_line_and_exit_2(two_targets: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(two_targets), "--metric", "fscore"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "unknown --metric 'fscore'" in err and "f_score" in err


@pytest.mark.parametrize("metric, base, new, passes", [("ece", "careful", "inventive", False),
                                                      ("penalised_0.75", "inventive", "careful", True),
                                                      ("penalised_0.75", "careful", "inventive", False)])
def test_the_gate_decides_on_a_figure_that_is_not_a_share(two_targets: Path, metric: str, base: str, new: str,
                                                          passes: bool) -> None:
    result = gate(GateOptions(base=str(two_targets), new=str(two_targets), base_target=base, new_target=new,
                              margin=0.05, metric=metric, allow_unhealthy=True))
    d = result.decision
    assert result.passed is passes and (d.p_value < 0.05) is passes
    # the bound is the paired interval's end at level 0.90, held so that higher is better
    (m,) = compare_runs(CompareOptions(run_dirs=(str(two_targets),), metric=metric)).report.metric_differences
    sign = -1 if metric == "ece" else 1
    forward = (base, new) == (m.a, m.b)
    assert m.difference.estimate is not None
    assert d.difference == pytest.approx(sign * m.difference.estimate * (1 if forward else -1))
    assert d.lower_bound < d.difference
    if metric == "ece":
        assert "held as its negative" in result.line()


def test_the_gate_command_line_takes_a_knowledge_figure(two_targets: Path) -> None:
    code = main(["gate", str(two_targets), str(two_targets), "--base-target", "careful", "--new-target",
                 "inventive", "--margin", "0.05", "--metric", "brier", "--allow-unhealthy"])
    assert code == 1
