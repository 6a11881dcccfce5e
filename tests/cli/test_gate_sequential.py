"""`examiner gate --sequential`: the paired sequential gate on real simulated runs, an exit code per
outcome, the CI line naming the clusters needed and the variance its bounds use."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from examiner.api.sequential_gate import EXIT_CODES, SEQUENTIAL_VARIANCE, cluster_totals
from examiner.cli.main import main
from examiner.exam.runner import ExamRequest, start_exam
from examiner.stats.paired import WORDING_AWARE
from tests.helpers.cli_runs import assert_one_error, run_cli
from tests.helpers.paired_runs import strong_and_weak_run
from tests.helpers.wording_exam import TARGETS, settings


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return strong_and_weak_run(tmp_path_factory)


def test_cluster_totals_keep_units_both_judged() -> None:
    assert cluster_totals((1, 0, None, 1), (1, 1, 1, None), ("a", "a", "b", "b")) == {"a": (2, 1, 2)}


def test_a_target_against_itself_is_equivalent(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["gate", str(run_dir), str(run_dir), "--target", "strong", "--margin", "0.2", "--sequential"])
    line = capsys.readouterr().out.strip()
    assert code == EXIT_CODES["equivalent"] == 4
    assert "EQUIVALENT after" in line and "clusters (the fixed-size gate reads all" in line
    assert "each anytime-valid at 95% alone" in line


def test_weak_against_strong_is_worse_or_undecided_never_passed(run_dir: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["gate", str(run_dir), str(run_dir), "--base-target", "strong", "--new-target", "weak",
                 "--margin", "0.02", "--sequential", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["outcome"] in ("worse", "undecided") and code == EXIT_CODES[data["outcome"]]
    assert data["upper"] < 0 and 0 < data["clusters"] <= data["clusters_total"]


def test_the_two_sided_gate_stays_selectable_and_decides_no_sooner(run_dir: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["gate", str(run_dir), str(run_dir), "--target", "strong", "--margin", "0.2", "--sequential"]
    main([*argv, "--json"])
    one = json.loads(capsys.readouterr().out)
    main([*argv, "--sequential-bounds", "two-sided"])
    line = capsys.readouterr().out.strip()
    main([*argv, "--sequential-bounds", "two-sided", "--json"])
    two = json.loads(capsys.readouterr().out)
    assert one["scheme"] == "one-sided" and two["scheme"] == "two-sided"
    assert one["outcome"] == two["outcome"] == "equivalent" and one["clusters"] <= two["clusters"]
    assert "95% anytime-valid interval [" in line


def test_sequential_bounds_without_sequential_is_refused(run_dir: Path, capsys: pytest.CaptureFixture[str],
                                                         caplog: pytest.LogCaptureFixture) -> None:
    code, lines, _ = run_cli(["gate", str(run_dir), str(run_dir), "--target", "strong", "--margin", "0.2",
                              "--sequential-bounds", "two-sided"], capsys, caplog)
    assert_one_error(code, lines, "--sequential-bounds goes with --sequential")


def test_bad_margin_is_one_line_exit_2(run_dir: Path, capsys: pytest.CaptureFixture[str],
                                       caplog: pytest.LogCaptureFixture) -> None:
    code, lines, out = run_cli(["gate", str(run_dir), str(run_dir), "--target", "strong", "--margin", "0",
                                "--sequential"], capsys, caplog)
    assert out == ""
    assert_one_error(code, lines, "--sequential needs a --margin")


def test_the_line_and_json_say_the_bounds_are_blind_to_wording(run_dir: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["gate", str(run_dir), str(run_dir), "--target", "strong", "--margin", "0.2", "--sequential"]
    main(argv)
    assert capsys.readouterr().out.strip().endswith(f"variance: {SEQUENTIAL_VARIANCE} (no --paraphrases in the runs)")
    main([*argv, "--json"])
    data = json.loads(capsys.readouterr().out)
    assert (data["variance"], data["wording_measured"], data["wording_variance"]) == (SEQUENTIAL_VARIANCE, False, None)


def test_a_measured_wording_variance_is_named_not_silently_dropped(small_corpus: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    asyncio.run(start_exam(settings(2, share=1.0, wording_sd=0.8), ExamRequest([str(small_corpus)], targets=TARGETS),
                           tmp_path, quiet=True))
    argv = ["gate", str(tmp_path), str(tmp_path), "--base-target", TARGETS[0], "--new-target", TARGETS[1],
            "--margin", "0.2"]
    main([*argv, "--json"])
    fixed = json.loads(capsys.readouterr().out)
    main([*argv, "--sequential", "--json"])
    data = json.loads(capsys.readouterr().out)
    main([*argv, "--sequential"])
    line = capsys.readouterr().out.strip()
    assert fixed["variance"] == WORDING_AWARE
    assert data["variance"] == SEQUENTIAL_VARIANCE and data["wording_measured"] is True
    assert data["wording_variance"] == pytest.approx(fixed["wording_variance"])
    assert line.endswith(f"variance: {SEQUENTIAL_VARIANCE} (the runs measured it by rewording: the fixed gate adds "
                         f"+{fixed['wording_variance']:.2g})")
