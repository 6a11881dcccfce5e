"""Terminal tables fit an 80-column terminal: nothing is cut short with an ellipsis (a number or a label
folds or wraps instead), no line is wider than 80, and no summary says nan."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from examiner.cli.main import main
from examiner.cli.output.exam import summarise
from examiner.reporting.model.exam import JudgePanel
from examiner.reporting.model.meta import RankingAgreement
from examiner.reporting.terminal import agreement_line as model_agreement_line
from examiner.reporting.terminal import panel_table
from examiner.core.rundir import RunDir
from tests.helpers.sample_run import write_sample_run


BOX = set("│┃┏┗┡└┌━─")


def assert_fits(text: str) -> None:
    """No ellipsis, no nan, and every line of a table (a box line, or the title above it) within 80
    columns; a prose line (a file path, a note) may wrap in the terminal like any text."""
    assert text.strip(), "nothing was printed"
    assert "…" not in text, f"an ellipsis hides part of a cell:\n{text}"
    assert not re.search(r"\bnan\b", text, re.I), f"nan in a terminal summary:\n{text}"
    lines = text.splitlines()
    tables = [line for i, line in enumerate(lines)
              if BOX & set(line) or (i + 1 < len(lines) and lines[i + 1].startswith("┏"))]
    assert tables, f"no table printed:\n{text}"
    wide = [line for line in tables if len(line) > 80]
    assert not wide, "table lines wider than 80 columns:\n" + "\n".join(wide)


@pytest.fixture(autouse=True)
def eighty_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tables")
    run = write_sample_run(root / "a-run-directory-with-a-rather-long-name", root / "corpus",
                           targets=("a-target-model-with-a-long-endpoint-name", "beta"))
    assert main(["report", str(run)]) == 0
    return run


def test_exam_summary_fits(sample_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    summarise(RunDir(sample_run).read_info(), sample_run)
    out = capsys.readouterr().out
    assert_fits(out)
    assert "judge refeval" in out  # the terminal summary names the judge mode, as the reports do
    report = json.loads((sample_run / "report.json").read_text())
    for figures in report["targets"].values():
        assert str(figures["counts"]["incorrect"]) in out and "incorrect" in out


def test_judge_panel_table_fits(capsys: pytest.CaptureFixture[str]) -> None:
    from examiner.cli.flags import print_table

    panel = {"members": [f"judge-endpoint-number-{i}" for i in range(3)], "verdicts": 120, "tied_or_unscored": 7,
             "agreement": [
        {"target": "a-target-model-with-a-long-endpoint-name", "member": f"judge-endpoint-number-{i}",
         "agreement": 0.8125, "agreed": 975, "compared": 1200, "unscored": 12} for i in range(3)]}
    print_table(panel_table(JudgePanel.model_validate(panel)))
    out = capsys.readouterr().out
    assert_fits(out)
    assert "975 / 1200" in out.replace("\n", " ") or "975 /" in out


@pytest.mark.parametrize("by", ["role,stage", "role,stage,round", "role,endpoint"])
def test_cost_table_fits(sample_run: Path, by: str, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["cost", str(sample_run), "--by", by]) == 0
    assert_fits(capsys.readouterr().out)


def test_cost_per_unit_fits(sample_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["cost", str(sample_run), "--per-unit"]) == 0
    assert_fits(capsys.readouterr().out)


def test_models_table_fits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({
        "endpoints": {"a-long-endpoint-name": {
            "base_url": "https://a-very-long-host-name.example.org/some/deep/path/v1", "model": "vendor/a-model-name-2026-11-22",
            "api_key_env": "A_RATHER_LONG_API_KEY_VARIABLE_NAME", "price_input_per_1m": 2.5,
            "price_output_per_1m": 10.0, "max_concurrency": 16}},
        "roles": {"judge": "a-long-endpoint-name", "examiner": "a-long-endpoint-name"}}))
    assert main(["models", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert_fits(out)
    assert all(header in out for header in ("$/1M in", "$/1M out", "concurrency", "api key"))
    assert re.search(r"│\s+2\.5 │\s+10 │\s+16 │", out), "a number was folded or cut"


@pytest.mark.usefixtures("fixture_data")
def test_meta_summary_fits_and_says_why_agreement_is_undefined(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Two evaluators with the same baseline accuracy: no rank correlation, and no top-1 'match'."""
    assert main(["meta", "llmbar:Natural", "--evaluators", "local,simulated", "--limit", "6", "--simulate",
                 "--quiet", "--out", str(tmp_path / "m")]) == 0
    out = capsys.readouterr().out
    assert_fits(out)
    report = json.loads((tmp_path / "m" / "report.json").read_text())
    baselines = set(report["baseline"]["scores"].values())
    if len(baselines) == 1:
        assert "undefined: baselines tie" in out and "top-1 match True" not in out
    else:
        assert "Kendall tau" in out


def agreement_line(agree: dict[str, object], baseline: dict[str, float]) -> str:
    """The terminal's Elo-vs-baseline line for an agreement as report.json holds it."""
    return model_agreement_line(RankingAgreement.model_validate({"n": 2, **agree}), baseline)


def test_agreement_line_undefined_when_baselines_or_ratings_tie() -> None:
    tied = {"kendall_tau": float("nan"), "spearman_rho": float("nan"), "top1_match": True, "players": ["a", "b"]}
    assert agreement_line(tied, {"a": 0.5, "b": 0.5}).endswith("undefined: baselines tie")
    assert agreement_line(tied, {"a": 0.5, "b": 0.7}).endswith("undefined: Elo ratings tie")
    from_json = dict(tied, kendall_tau=None, spearman_rho=None)  # report.json writes an undefined figure as null
    assert "undefined" in agreement_line(from_json, {"a": 0.5, "b": 0.5})
    line = agreement_line({"kendall_tau": 1.0, "spearman_rho": 1.0, "top1_match": True, "players": ["a", "b"]},
                          {"a": 0.5, "b": 0.7})
    assert line == "Elo vs baseline: Kendall tau 1.000, Spearman rho 1.000, top-1 match yes"


@pytest.mark.usefixtures("fixture_data")
def test_judge_and_judge_stats_summaries_fit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "natural"
    assert main(["judge", "llmbar:Natural", "--method", "pairwise", "--swap", "--limit", "6", "--simulate", "--quiet",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert_fits(printed)
    assert "judge vs labels" in printed and "position swap" in printed
    assert main(["judge-stats", str(out / "judgments.jsonl")]) == 0
    assert_fits(capsys.readouterr().out)


def test_single_score_summary_fits_with_undefined_figures(capsys: pytest.CaptureFixture[str]) -> None:
    """An all-unparseable single-score report: every undefined figure shows as n/a, never nan."""
    from examiner.cli.output.judging import print_summary

    report = {"method": "geval", "dataset": "scores.jsonl", "skipped": [], "judge": "a-long-judge-endpoint-name", "status": "ok",
              "rows_judged": 3, "rows_skipped": 0, "calls": 9, "cache_hits": 0, "cost_usd": 0.0, "wall_s": 1.5,
              "single": {"n_judgments": 3, "n_scored": 0, "n_unparseable": 3, "n_failed_calls": 0,
                         "mean_score": None, "unparseable_convention": "drop", "lowest_score": None,
                         "correlation_with_human": {"judge": {
                             level: {"n": 3, "pearson": float("nan"), "spearman": None, "kendall": float("nan")}
                             for level in ("sample", "summary", "system")}}}}
    from examiner.reporting.model import JudgeReport

    print_summary(JudgeReport.model_validate(report), {"report_md": Path("o/report.md")})
    printed = capsys.readouterr().out
    assert_fits(printed)
    assert "n/a" in printed
