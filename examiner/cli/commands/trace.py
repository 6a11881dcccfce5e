"""`examiner trace RUN_DIR ID`: one unit or question of an exam run, from its source passages to the verdicts.

Reads the run's record files (streamed), not provenance.graphml, so it works at any run size.
"""

from __future__ import annotations

import argparse

from examiner.cli.flags import add_command


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub, "trace", "show one unit or question of a run: sources, questions, answers, verdicts, overrides",
        "For a unit id: the unit's text, its source passages (document, span, page when known), every\n"
        "question that targeted it with the answer excerpt and the verdict with its reason, and people's\n"
        "overrides. For a question id: the question, the units it targeted with their sources, its answers\n"
        "and the verdict on each unit. Reads the run's JSONL records, so it works on runs of any size\n"
        "(provenance.graphml is only written for smaller runs). Unit and question ids are in report.md,\n"
        "units.jsonl and questions.jsonl.",
        "examiner trace runs/water ku-8e9756792e\n"
        "examiner trace runs/water q-d7653e6e5a")
    p.add_argument("run_dir", metavar="RUN_DIR", help="an exam run directory")
    p.add_argument("record_id", metavar="ID", help="a unit id or a question id of the run")
    p.set_defaults(func=run_trace)


def run_trace(args: argparse.Namespace) -> int:
    from examiner.core.plain_text import visible_controls
    from examiner.reporting.tracing import trace_lines, trace_record

    for line in trace_lines(trace_record(args.run_dir, args.record_id)):
        print(visible_controls(line))  # answers, questions and reasons are others' text: no sequence reaches the terminal
    return 0
