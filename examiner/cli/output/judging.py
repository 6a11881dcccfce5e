"""What `examiner judge` and `examiner judge-stats` print: a judging report's figures as lines and
80-column tables (undefined figures as n/a); report.md has them all."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from examiner.cli.flags import fitted_table, print_table


def print_summary(report: Mapping[str, Any], paths: Mapping[str, Path]) -> None:
    """The report's figures as 80-column tables (undefined figures as n/a); report.md has them all."""
    for part in summary_parts(report):
        if isinstance(part, str):
            print(part)
        else:
            print_table(part)
    for name, path in paths.items():
        print(f"{name}: {path}")


def summary_parts(report: Mapping[str, Any]) -> list[Any]:
    """Lines and tables of a judging report (examiner judge / judge-stats), each table narrow enough
    for an 80-column terminal."""
    from examiner.judging.sections import LEVELS_NOTE, convention_text
    from examiner.reporting.writer import cell

    facts = [f"{key.replace('_', ' ')} {cell(report[key])}" for key in
             ("judge", "status", "rows_judged", "rows_skipped", "calls", "cache_hits", "cost_usd", "wall_s")
             if key in report]
    parts: list[Any] = [f"judging report: {report.get('method')} on {report.get('dataset', '-')}",
                        textwrap.fill(", ".join(facts), 80)]
    section = report.get("pairwise")
    if section:
        parts.append(f"judgments {section['n_judgments']}, unparseable {section['n_unparseable']}, failed calls "
                     f"{section['n_failed_calls']}; verdicts {section['verdicts']}")
        parts.append(convention_text(section))
        rows = [("judge vs labels", section.get("agreement")), ("judge vs teacher", section.get("teacher_agreement"))]
        rows += [(f"metric {k} vs labels", v) for k, v in (section.get("classic_metric_agreement") or {}).items()]
        numbers: tuple[str, ...] = ("n", "accuracy", "macro P", "macro R", "macro F1")
        table = fitted_table("agreement", ("comparison", *numbers), numeric=numbers)
        for name, m in rows:
            if m:
                table.add_row(name, str(m["n"]), *(cell(m[k]) for k in
                                                    ("accuracy", "macro_precision", "macro_recall", "macro_f1")))
        if table.rows:
            parts.append(table)
        members = section.get("panel_agreement")
        if members:
            numbers = ("agrees with panel", "compared", "unscored")
            table = fitted_table("judge panel", ("member", *numbers), numeric=numbers)
            for m in members:
                table.add_row(m["member"], cell(m["rate"]), str(m["compared"]), str(m["unscored"]))
            parts.append(table)
        swap = section.get("swap")
        if swap:
            numbers = ("pairs in both orders", "all pairs")
            table = fitted_table(f"position swap: {swap['n_pairs_both_orders']} pairs judged in both orders, "
                                 f"consistency {cell(swap['consistency'])}", ("bias", *numbers), numeric=numbers)
            for name, key in (("first position", "bias_first"), ("second position", "bias_second"),
                              ("delta", "delta_bias")):
                table.add_row(name, cell(swap[key]), cell(swap[f"{key}_all_pairs"]))
            parts.append(table)
    section = report.get("single")
    if section:
        parts.append(f"judgments {section['n_judgments']}, scored {section['n_scored']}, unparseable "
                     f"{section['n_unparseable']}, failed calls {section['n_failed_calls']}; mean score "
                     f"{cell(section['mean_score'])}")
        if section.get("geval_paths"):
            parts.append(f"G-Eval paths {section['geval_paths']}, unparseable samples excluded "
                         f"{section['geval_unparseable_samples']}")
        parts.append(convention_text(section))
        corr = section.get("correlation_with_human")
        if corr:
            numbers = ("n", "Pearson", "Spearman", "Kendall")
            table = fitted_table("correlation with human scores", ("scorer", "level", *numbers), numeric=numbers)
            for name, levels in corr.items():
                for level, c in levels.items():
                    table.add_row(name, level, str(c.get("n", c.get("n_groups_used"))),
                                  *(cell(c[k]) for k in ("pearson", "spearman", "kendall")))
            parts += [table, textwrap.fill(LEVELS_NOTE, 80)]
    return parts
