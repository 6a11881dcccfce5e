"""Text written by someone else (a judge's reason, an answer, a question) cannot steer report.md: control
sequences come out as visible escapes, and line breaks cannot start a heading or a bare command line."""

from __future__ import annotations

import json
import os
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
    assert "> \\x1b]52;c;" in markdown, "the planted reason is shown, escaped"
    assert "\x1b" not in markdown and "\x07" not in markdown
    lines = markdown.splitlines()
    assert not [line for line in lines if line.startswith(("# Verdict", "ssh-rsa"))]
    assert any("# Verdict: everything correct ssh-rsa" in line for line in lines if line.lstrip().startswith("- answer:"))


def test_a_reason_is_a_quoted_block_whose_lines_form_no_heading(sample_run_copy: Path) -> None:
    """A judge's reason over several lines is quoted line by line: every line of it starts `> ` (inside the
    unit's list item), and a line that would open a heading, a list or a fence is escaped."""
    from markdown_it import MarkdownIt

    _plant(sample_run_copy / rundir.VERDICTS, "reason", "first line\n# Heading of the judge\n\n- a list\n```\n")
    build_reports(sample_run_copy)
    markdown = (sample_run_copy / rundir.REPORT_MD).read_text(encoding="utf-8")
    lines = [line.lstrip() for line in markdown.splitlines()]
    for quoted in ("> first line", "> \\# Heading of the judge", ">", "> \\- a list", "> \\```"):
        assert quoted in lines, quoted
    assert not [line for line in lines if line.startswith(("# Heading", "- a list"))]
    html = MarkdownIt().render(markdown)
    assert "<h1>Heading of the judge" not in html and "<li>a list" not in html
    assert "<blockquote>\n<p>first line\n# Heading of the judge</p>\n<p>- a list\n```" in html


def test_a_hostile_target_name_reaches_the_terminal_with_no_escape_byte(corpus: Path, tmp_path: Path) -> None:
    """`examiner run` of a target whose name holds terminal sequences and rich markup: progress lines,
    the summary's lines and tables and the figures' warnings show them as text, with no ESC byte."""
    import subprocess
    import sys

    import yaml

    from tests.helpers.simulated_exam import every_role_settings

    name = "evil" + CLIPBOARD_WRITE + "[bold red]X[/bold red]" + RESET
    settings = every_role_settings().model_dump(mode="json")
    settings["endpoints"][name] = settings["endpoints"]["sim"]
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(settings), encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if key != "COLUMNS"}
    done = subprocess.run([sys.executable, "-m", "examiner.cli.main", "run", str(corpus), "--config", str(config),
                           "--target", name, "--out", str(tmp_path / "run")],
                          capture_output=True, env={**env, "PYTHONPATH": str(Path.cwd())}, timeout=600)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    out, err = done.stdout.decode(), done.stderr.decode()
    assert "evil\\x1b]52;c;" in out and "[bold red]X[/bold red]" in out, "the name is shown, as text"
    assert "evil\\x1b]52;c;" in err, "the progress lines name the target"
    assert done.stdout.count(b"\x1b") == 0 and done.stderr.count(b"\x1b") == 0
    assert b"\x07" not in done.stdout + done.stderr


def test_trace_prints_no_control_sequence(sample_run_copy: Path, capsys) -> None:
    from examiner.cli.main import main

    _plant(sample_run_copy / rundir.VERDICTS, "reason", CLIPBOARD_WRITE + RESET)
    _plant(sample_run_copy / rundir.ANSWERS, "text", RESET)
    question = json.loads((sample_run_copy / rundir.QUESTIONS).read_text(encoding="utf-8").splitlines()[0])["id"]
    assert main(["trace", str(sample_run_copy), question]) == 0
    out = capsys.readouterr().out
    assert "\\x1b]52;c;" in out and "\x1b" not in out and "\x07" not in out


def test_a_log_line_shows_control_characters_as_text() -> None:
    """A warning naming a document (or quoting an error text) that holds a terminal sequence: the filter on
    every log handler shows it escaped, as it redacts credentials."""
    import logging

    from examiner.core.redact import RedactingFilter

    record = logging.LogRecord("examiner.corpus", logging.WARNING, __file__, 1, "skipped %s", ("doc" + RESET + ".md",),
                               None)
    assert RedactingFilter().filter(record)
    assert record.getMessage() == "skipped doc\\x1bc.md"


def test_report_and_compare_print_a_hostile_target_name_as_text(tmp_path: Path, capsys) -> None:
    """`examiner report` (the summary's lines and tables) and `examiner compare` (its Markdown on stdout) of
    a run folder whose target is named with a terminal sequence and rich markup."""
    from examiner.cli.main import main
    from tests.helpers.sample_run import write_sample_run

    name = "alpha" + RESET + "[bold red]X[/bold red]"
    first = write_sample_run(tmp_path / "one", tmp_path / "corpus", targets=(name, "beta"), with_passages=True)
    second = write_sample_run(tmp_path / "two", tmp_path / "corpus", targets=(name, "beta"), with_passages=True)
    _plant(first / rundir.VERDICTS, "reason", RESET)  # the health check's examples quote reasons
    assert main(["report", str(first)]) == 0
    report = capsys.readouterr()
    assert main(["compare", str(first), str(second)]) == 0
    compared = capsys.readouterr()
    assert "\\x1bc" in report.out, "a reason quoted by the health check, escaped"
    assert "alpha\\x1bc[bold red]X[/bold red]" in compared.out
    assert "\x1b" not in report.out + report.err + compared.out + compared.err
