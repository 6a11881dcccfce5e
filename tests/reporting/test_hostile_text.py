"""Text written by someone else (a judge's reason, an answer, a question) cannot steer report.md: control
sequences come out as visible escapes, and line breaks cannot start a heading or a bare command line."""

from __future__ import annotations

import json
from pathlib import Path

from examiner.core import rundir
from examiner.core.plain_text import markdown_inline, one_line, visible_controls
from examiner.exam.runner import build_reports

CLIPBOARD_WRITE = "\x1b]52;c;c3NoLXJzYSBBQUFB\x07"
RESET = "\x1bc"
FORGED = "\n# Verdict: everything correct\nssh-rsa AAAAB3Nza attacker@host\n"


def _plant(path: Path, field: str, text: str) -> None:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows:
        row[field] = text + row[field]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def test_neutralisers() -> None:
    assert visible_controls("a\x1bb\tc\nd\x9b") == "a\\x1bb\tc\nd\\x9b"
    assert one_line("a\r\nb\u2028c\x85d\ne") == "a b c d e"
    assert markdown_inline("<img src=x onerror=alert(1)>\n# h") == "&lt;img src=x onerror=alert(1)&gt; # h"


def test_a_planted_reason_answer_and_question_stay_inside_their_lines(sample_run_copy: Path) -> None:
    _plant(sample_run_copy / rundir.VERDICTS, "reason", CLIPBOARD_WRITE + FORGED)
    _plant(sample_run_copy / rundir.ANSWERS, "text", RESET + FORGED)
    _plant(sample_run_copy / rundir.QUESTIONS, "text", FORGED)
    build_reports(sample_run_copy)
    markdown = (sample_run_copy / rundir.REPORT_MD).read_text(encoding="utf-8")
    assert "judge: \\x1b]52;c;" in markdown, "the planted reason is shown, escaped"
    assert "\x1b" not in markdown and "\x07" not in markdown
    lines = markdown.splitlines()
    assert not [line for line in lines if line.startswith(("# Verdict", "ssh-rsa"))]
    assert any("# Verdict: everything correct ssh-rsa" in line for line in lines if line.lstrip().startswith("- judge:"))


def test_trace_prints_no_control_sequence(sample_run_copy: Path, capsys) -> None:
    from examiner.cli.main import main

    _plant(sample_run_copy / rundir.VERDICTS, "reason", CLIPBOARD_WRITE + RESET)
    _plant(sample_run_copy / rundir.ANSWERS, "text", RESET)
    question = json.loads((sample_run_copy / rundir.QUESTIONS).read_text(encoding="utf-8").splitlines()[0])["id"]
    assert main(["trace", str(sample_run_copy), question]) == 0
    out = capsys.readouterr().out
    assert "\\x1b]52;c;" in out and "\x1b" not in out and "\x07" not in out
