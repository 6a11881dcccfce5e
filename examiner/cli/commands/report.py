"""`examiner report RUN_DIR` rebuilds a run's reports and provenance graph; `examiner compare RUN_DIR...`
puts several targets side by side."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from examiner.cli.flags import add_command
from examiner.core.errors import UserError
from examiner.core.plain_text import visible_controls


def register(sub: argparse._SubParsersAction) -> None:
    parser = add_command(
        sub, "report", "rebuild report.json/.md/.html, figures and provenance.graphml of a run",
        "Rebuild an exam run's reports from its records (run.json, units, questions, answers, verdicts,\n"
        "ledger): report.json, report.md, report.html with their figures, and the provenance graph that\n"
        "links every verdict to its question, answer, unit and source passage. Makes no model call.",
        "examiner report runs/water\nexaminer report runs/water --map-rounds 1,3")
    parser.add_argument("run_dir", help="a run directory (holds run.json)")
    parser.add_argument("--map-rounds", metavar="N,N,...",
                        help="rounds drawn in the 2-D maps (default: 1, 2 and the last)")
    parser.add_argument("--strict", action="store_true",
                        help="exit 4 when the run's health check fails (the reports are written first)")
    parser.set_defaults(func=run_report)
    parser = add_command(
        sub, "compare", "compare the targets of one or more runs side by side",
        "Put the targets of one or more exam runs side by side: accuracy and coverage with their intervals,\n"
        "unit counts, rounds and cost. Each pair of targets examined on the same units (one run with several\n"
        "targets, or runs over one corpus) is compared on those units: the difference B - A in accuracy and\n"
        "coverage with a cluster-bootstrap interval, McNemar's exact test and the cluster test, power, and\n"
        "subgroups (docs/STATISTICS.md). Prints Markdown, or writes Markdown, HTML and JSON with --out and\n"
        "prints one line per pair.",
        "examiner compare runs/two\nexaminer compare runs/a runs/b --out compare.md\n"
        "examiner compare runs/a runs/b --metric hallucination_rate")
    parser.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="exam run directories")
    parser.add_argument("--out", metavar="FILE.md",
                        help="write Markdown here, HTML and JSON beside it (FILE.html, FILE.json); default: "
                             "print Markdown")
    parser.add_argument("--metric", metavar="NAME",
                        help="also give each pair's difference B - A in this knowledge figure with its interval: "
                             "accuracy, hallucination_rate, abstention_rate, correct_given_attempted, f_score, "
                             "penalised_0.5, penalised_0.75, penalised_0.9, ece, brier, aurc")
    parser.set_defaults(func=run_compare)


def _rounds(text: str | None) -> list[int] | None:
    if not text:
        return None
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UserError(f"--map-rounds expects comma-separated round numbers, got '{text}'") from None


def run_report(args: argparse.Namespace) -> int:
    from examiner.exam.reports import build_reports

    paths = build_reports(args.run_dir, map_rounds=_rounds(args.map_rounds))
    report = json.loads(paths["json"].read_text(encoding="utf-8"))
    for line in override_lines(report):
        print(visible_controls(line))  # lines naming targets
    from examiner.reporting.calibration_section import calibration_lines

    for line in calibration_lines(report.get("calibration")):  # accuracy calibrated by a labelled random sample
        print(visible_controls(line))
    for name in ("html", "md", "json", "provenance"):
        if name in paths:
            print(f"{name}: {paths[name]}")
    graph = report.get("provenance") or {}
    if not graph.get("written", True):
        print(f"note: {graph['note']}")
    figures = [p for k, p in paths.items() if k.startswith("figure:")]
    if figures:
        print(f"figures: {len(figures)} in {figures[0].parent}")
    from examiner.cli.commands.exam import strict_exit
    from examiner.cli.output.exam import print_health

    print_health(report.get("health"))
    return strict_exit(0, Path(args.run_dir), args.strict)


def override_lines(report: dict[str, Any]) -> list[str]:
    """Per target, accuracy and coverage as the judge gave them and with people's overrides (none: [])."""
    overrides = report.get("overrides")
    if not overrides:
        return []

    def pct(estimate: dict[str, Any]) -> str:
        return "n/a" if estimate["value"] is None else f"{100 * estimate['value']:.1f}%"

    lines = [f"overrides: {overrides['overrides']} ({overrides['changed']} change the label) from {overrides['file']}"]
    for target, t in overrides["targets"].items():
        lines.append(f"{target}: accuracy {pct(t['accuracy_judge'])} (judge) -> {pct(t['accuracy_with_overrides'])} "
                     f"with overrides; coverage {pct(t['coverage_judge'])} -> {pct(t['coverage_with_overrides'])}")
    return lines


def run_compare(args: argparse.Namespace) -> int:
    from examiner.api.compare import CompareOptions, compare_runs

    result = compare_runs(CompareOptions(run_dirs=tuple(args.run_dirs), out=args.out, metric=args.metric))
    if result.markdown_path is None:
        print(visible_controls(result.markdown), end="")  # target names are others' text
        for line in result.wording_lines():
            print(visible_controls(line))
        return 0
    print(f"md: {result.markdown_path}\nhtml: {result.html_path}\njson: {result.json_path}")
    for line in [*result.warnings(), *result.headlines(), *result.abstention_lines(), *result.metric_lines(),
                 *result.control_lines(), *result.wording_lines()]:
        print(visible_controls(line))
    return 0
