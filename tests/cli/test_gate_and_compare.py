"""`examiner gate` decides on real simulated runs (exit 0 / 1, one line, --json, bad input exit 2), and
`examiner compare` prints the paired headline and writes its paired section (Markdown, HTML, JSON)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from examiner.cli.main import main
from tests.helpers.cli_runs import assert_one_error, run_cli
from tests.helpers.paired_runs import strong_and_weak_run
from tests.helpers.report_schema import validator


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return strong_and_weak_run(tmp_path_factory)


def test_gate_passes_a_target_held_against_itself(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["gate", str(run_dir), str(run_dir), "--target", "strong", "--margin", "0.1"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 0 and len(lines) == 1
    assert lines[0].startswith("PASS: new - base = +0.000") and "vs margin -0.100" in lines[0]


def test_gate_fails_a_weak_target_against_a_strong_one(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["gate", str(run_dir), str(run_dir), "--base-target", "strong", "--new-target", "weak",
                 "--margin", "0.05"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1 and len(lines) == 1 and lines[0].startswith("FAIL: new - base = -")
    assert "power" in lines[0] and "documents" in lines[0]


def test_gate_json_is_the_decision(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["gate", str(run_dir), str(run_dir), "--base-target", "strong", "--new-target", "weak",
                 "--margin", "0.05", "--level", "0.9", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["passed"] is False
    assert data["alpha"] == pytest.approx(0.1) and data["margin"] == 0.05
    assert data["lower_bound"] < data["difference"] < 0
    assert data["base"]["target"] == "strong" and data["new"]["target"] == "weak"
    assert data["shared_units"] == data["n_units"] > 0


@pytest.mark.parametrize(("args", "words"), [
    (["--margin", "0.05"], ("targets strong, weak", "--target")),
    (["--target", "strong", "--margin", "-0.1"], ("--margin",)),
    (["--target", "strong", "--margin", "0.05", "--level", "1.5"], ("--level",)),
    (["--target", "nobody", "--margin", "0.05"], ("no target 'nobody'",)),
])
def test_gate_bad_input_is_one_line_exit_2(run_dir: Path, args: list[str], words: tuple[str, ...],
                                           capsys: pytest.CaptureFixture[str],
                                           caplog: pytest.LogCaptureFixture) -> None:
    code, lines, out = run_cli(["gate", str(run_dir), str(run_dir), *args], capsys, caplog)
    assert out == ""
    assert_one_error(code, lines, *words)


def test_gate_of_a_missing_run_is_one_line(run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           caplog: pytest.LogCaptureFixture) -> None:
    code, lines, _ = run_cli(["gate", str(run_dir), str(tmp_path / "nope"), "--margin", "0.05"], capsys, caplog)
    assert_one_error(code, lines, "nope")


def test_compare_prints_the_paired_headline_and_writes_the_section(run_dir: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cmp.md"
    assert main(["compare", str(run_dir), "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == [f"md: {out}", f"html: {out.with_suffix('.html')}", f"json: {out.with_suffix('.json')}"]
    assert len(lines) == 5 and lines[3].startswith("weak - strong: accuracy -")
    assert lines[4].startswith("weak - strong: abstention_rate ")  # its own paired figure, always
    for words in ("McNemar p", "cluster p", "power", "(95% CI)"):
        assert words in lines[3]
    markdown = out.read_text(encoding="utf-8")
    assert "## Paired differences (the same units)" in markdown and f"- {lines[3]}" in markdown
    assert "### Subgroups: weak - strong" in markdown
    assert "Paired differences" in out.with_suffix(".html").read_text(encoding="utf-8")
    data = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert list(validator().iter_errors(data)) == []
    (pair,) = data["paired"]
    (abstention,) = data["abstention_differences"]
    assert (abstention["metric"], abstention["a"], abstention["b"]) == ("abstention_rate", "strong", "weak")
    assert "## Paired difference in the abstention rate" in markdown and f"- {lines[4]}" in markdown
    assert (pair["a"], pair["b"]) == ("strong", "weak")
    assert {g["by"] for g in pair["subgroups"]} >= {"topic", "document"}
    topics = [g["key"] for g in pair["subgroups"] if g["by"] == "topic"]
    assert all(re.fullmatch(r"\w[\w ,'-]* \[r1-c\d+-\w+\]", t) for t in topics), topics  # key terms, then the id
    assert main(["compare", str(run_dir)]) == 0
    assert f"- {lines[3]}" in capsys.readouterr().out


def test_gate_against_itself_passes_at_the_printed_smallest_margin_and_fails_below(
        run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The 4-document handbook cannot support a margin of 0.01: the line says which it can, the gate
    passes at that margin and fails 0.001 below it with the hint; --json carries the figure."""
    base = ["gate", str(run_dir), str(run_dir), "--target", "strong"]
    assert main([*base, "--margin", "0.01"]) == 1
    line = capsys.readouterr().out.strip()
    match = re.search(r"smallest margin these runs can support: (\d\.\d{3})", line)
    assert match and "a NEW measured as good as BASE fails it too" in line
    smallest = float(match.group(1))
    assert smallest > 0.01
    assert main([*base, "--margin", f"{smallest:.3f}"]) == 0
    assert "fails it too" not in capsys.readouterr().out
    assert main([*base, "--margin", f"{smallest - 0.001:.3f}", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert smallest - 0.001 <= data["smallest_margin"] < smallest


def test_compare_prints_and_writes_the_smallest_margin(run_dir: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cmp.md"
    assert main(["compare", str(run_dir), "--out", str(out)]) == 0
    headline = capsys.readouterr().out.splitlines()[3]
    match = re.search(r"smallest margin these runs can support: (\d\.\d{3})", headline)
    assert match
    section = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))["paired"][0]
    assert float(match.group(1)) - 0.001 <= section["smallest_margin"] < float(match.group(1))
