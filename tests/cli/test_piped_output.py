"""Output piped to a file or another program (issue 29, finding 7): tables are not folded at 80 columns
(no "candid/ate"), sentences stay one line, progress comes as whole lines (no carriage return), each
with the time elapsed and an ETA; `COLUMNS` is the width when set."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from examiner.core.console import PIPED_WIDTH, make_console, output_width, prose_width
from examiner.exam.progress import eta_text
from examiner.reporting.terminal import fitted_table, print_summary

WORDS = ("candidate", "correctness", "unanswered", "uncovered", "self-agreement", "acknowledgement")


def _wide_table() -> object:
    table = fitted_table("a table wider than 80 columns", [f"{w} column" for w in WORDS])
    table.add_row(*(f"{w} value" for w in WORDS))
    return table


def _printed(console: Console) -> str:
    print_summary([_wide_table()], console)
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_a_piped_console_is_wide_unless_columns_says_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    assert output_width(io.StringIO()) == PIPED_WIDTH and prose_width(io.StringIO()) is None
    monkeypatch.setenv("COLUMNS", "100")
    assert output_width(io.StringIO()) == 100 and prose_width(io.StringIO()) == 100
    monkeypatch.delenv("COLUMNS")
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert make_console().width == PIPED_WIDTH


def test_no_word_is_split_in_a_piped_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    wide = _printed(Console(file=io.StringIO(), width=output_width(io.StringIO())))
    assert all(w in wide for w in WORDS)
    narrow = _printed(Console(file=io.StringIO(), width=80))  # what a pipe got before: words folded
    assert not all(w in narrow for w in WORDS)


def test_eta_from_the_rate_so_far() -> None:
    assert eta_text(10, 40, 20.0) == "20s elapsed, ETA 1m00s"
    assert eta_text(0, 40, 3.0) == "3s elapsed, ETA unknown"


def test_piped_run_prints_whole_lines_with_eta(corpus: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR", "FORCE_TERMINAL")}
    env["EXAMINER_PROGRESS_EVERY_S"] = "0"  # every quarter of a stage, however fast the simulator is
    result = subprocess.run([sys.executable, "-m", "examiner.cli.main", "run", str(corpus), "--simulate",
                             "--max-rounds", "1", "--out", str(tmp_path / "run")],
                            capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    both = result.stdout + result.stderr
    assert "\r" not in both and "\x1b[" not in both  # no redrawn bars, no colour codes in a pipe
    progress = [line for line in both.splitlines() if line.startswith("round ")
                and re.search(r"·\s+pool\s+\d+ · ", line)]
    assert progress, both[-2000:]
    for line in progress:  # complete: the stage, the count, the time, the money at the end
        assert re.search(r" · (\d+/\d+ · \d+\S* elapsed, ETA \S+|\d+ done in \S+) · calls \d+ .*\$\d+\.\d{4}$",
                         line), line
    assert any("ETA" in line for line in progress)
    examined = next(line for line in result.stdout.splitlines() if line.startswith("Examined:"))
    assert examined.endswith(".") and str(corpus.name) in examined  # one line, not wrapped at 80
