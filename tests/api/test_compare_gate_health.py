"""compare_runs and gate read each run's health: a run whose health failed is UNTRUSTWORTHY beside a
healthy one in the comparison, and the gate refuses to decide on it (a UserError, exit 2 on the command
line) unless told to allow it; targets of one run sitting the same paper are not a "repeated question"."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from examiner.api import CompareOptions, GateOptions, compare_runs, gate
from examiner.cli.main import main
from examiner.core.config import EndpointSpec, Settings
from examiner.core.errors import UserError
from examiner.exam.runner import ExamRequest, start_exam
from tests.helpers.cli_runs import assert_one_error, run_cli
from tests.helpers.paired_runs import strong_and_weak_run
from tests.helpers.simulated_exam import PROFILE, ROLES


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return strong_and_weak_run(tmp_path_factory)


@pytest.fixture(scope="module")
def degenerate(tmp_path_factory: pytest.TempPathFactory, small_corpus: Path) -> Path:
    """A run whose examiner asks one template question and whose judge gives placeholder reasons."""
    spec = EndpointSpec(provider="simulated", model="sim", price_input_per_1m=2.5, price_output_per_1m=10.0,
                        max_concurrency=16, options={"knowledge": PROFILE, "degenerate": True})
    settings = Settings(endpoints={"sim": spec}, roles={r: "sim" for r in ROLES}, exam={"max_rounds": 2})
    run_dir = tmp_path_factory.mktemp("degenerate") / "run"
    asyncio.run(start_exam(settings, ExamRequest([str(small_corpus)]), run_dir, quiet=True))
    return run_dir


def test_two_targets_on_one_paper_are_healthy(healthy: Path) -> None:
    result = compare_runs(CompareOptions(run_dirs=(str(healthy),)))
    assert [(t.target, t.health, t.trustworthy) for t in result.targets] == [("strong", "pass", True),
                                                                            ("weak", "pass", True)]
    assert result.warnings() == [] and not result.headlines()[0].startswith("UNTRUSTWORTHY")


def test_a_failed_run_is_untrustworthy_beside_a_healthy_one(healthy: Path, degenerate: Path) -> None:
    result = compare_runs(CompareOptions(run_dirs=(str(healthy), str(degenerate))))
    marks = {t.target: (t.health, t.trustworthy) for t in result.targets}
    assert marks == {"strong": ("pass", True), "weak": ("pass", True), "sim": ("fail", False)}
    [warning] = result.warnings()
    assert warning.startswith(f"UNTRUSTWORTHY: run {result.report.targets[-1].run}") and "health: FAIL" in warning
    assert "FAIL - UNTRUSTWORTHY" in result.markdown and "UNTRUSTWORTHY: run" in result.html


def test_gate_refuses_a_failed_run_unless_allowed(healthy: Path, degenerate: Path) -> None:
    with pytest.raises(UserError, match=r"^cannot decide: NEW run's health FAILED .*--allow-unhealthy"):
        gate(GateOptions(base=str(degenerate), new=str(degenerate), margin=0.1))
    allowed = gate(GateOptions(base=str(degenerate), new=str(degenerate), margin=0.1, allow_unhealthy=True))
    assert allowed.new_health == allowed.base_health == "fail" and allowed.decision.n_units > 0
    assert allowed.line().endswith("[UNTRUSTWORTHY: BASE and NEW health FAILED, --allow-unhealthy]")
    assert allowed.as_dict()["new"]["health"] == "fail"
    with pytest.raises(UserError, match="cannot decide: BASE run's health FAILED"):
        gate(GateOptions(base=str(degenerate), new=str(healthy), base_target="sim", new_target="strong", margin=0.1))


def test_gate_command_exits_2_with_one_line_on_a_failed_run(degenerate: Path, capsys: pytest.CaptureFixture[str],
                                                          caplog: pytest.LogCaptureFixture) -> None:
    code, lines, out = run_cli(["gate", str(degenerate), str(degenerate), "--margin", "0.1"], capsys, caplog)
    assert out == ""
    assert_one_error(code, lines, "cannot decide", "health FAILED", "--allow-unhealthy")
    capsys.readouterr()
    assert main(["gate", str(degenerate), str(degenerate), "--margin", "0.1", "--allow-unhealthy"]) in (0, 1)
    assert "[UNTRUSTWORTHY: BASE and NEW health FAILED, --allow-unhealthy]" in capsys.readouterr().out


def test_compare_command_prints_the_untrustworthy_run_first(healthy: Path, degenerate: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cmp.md"
    capsys.readouterr()
    assert main(["compare", str(healthy), str(degenerate), "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[3].startswith("UNTRUSTWORTHY: run ") and "health: FAIL" in lines[3]
    assert "FAIL - UNTRUSTWORTHY" in out.read_text(encoding="utf-8")
    assert main(["compare", str(healthy), str(degenerate)]) == 0  # no --out: the Markdown on stdout
    assert "**UNTRUSTWORTHY: run " in capsys.readouterr().out
