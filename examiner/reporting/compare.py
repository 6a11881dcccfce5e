"""Several targets side by side: accuracy, coverage, cost per unit, the paired difference of each pair of
targets on the units they share (examiner/reporting/paired.py), and the units they disagree on.

Targets may come from one run (several `--target`s sitting the same paper) or from several runs over the
same corpus; unit ids are content hashes, so the same unit has the same id in every run.
"""

from __future__ import annotations

import tempfile
from html import escape
from pathlib import Path
from typing import Any, Sequence

from examiner.core.errors import UserError
from examiner.reporting import figures as fg
from examiner.reporting import html as h
from examiner.reporting import markdown as md
from examiner.reporting.model import CompareReport
from examiner.reporting.model.compare import ComparedTarget, Disagreement, DisagreementUnit, PairedSection
from examiner.reporting.paired import (PAIRED_HEADER, PAIRED_NOTE, SUBGROUP_HEADER, headline, paired_rows,
                                       paired_section, paired_units, subgroup_rows)
from examiner.reporting.run_reader import RunData, load_run
from examiner.reporting.summary import summarize
from examiner.reporting.writer import cell

LISTED_DISAGREEMENTS = 25
"""Units listed per pair of targets in Markdown and HTML (all are counted, and listed in the model)."""
LISTED_SUBGROUPS = 15
"""Subgroup rows shown per pair of targets in Markdown and HTML, the significant first (all in the model)."""

HEADER = ["target", "run", "status", "accuracy [95% CI]", "coverage [95% CI]", "correct", "incorrect",
          "evaluation cents / unit", "evaluation calls / unit", "candidate calls / unit"]
NOTE = ("Accuracy = correct / covered, coverage = covered / all units; 95% intervals resample clusters. "
        "Evaluation = examiner question generation + judging, per unit of the corpus; a run with several "
        "targets splits its cost evenly among them.")


def _entries(run_dirs: Sequence[str | Path]) -> list[dict[str, Any]]:
    """Every target of every run, with its figures, its unit statuses and the run's units."""
    entries = []
    for run_dir in run_dirs:
        run = load_run(run_dir)
        summary = summarize(run)
        paper = {r["stage"]: r for r in summary["cost"]["paper"]}
        n_targets = max(len(summary["targets"]), 1)
        for target, data in summary["targets"].items():
            entries.append({"target": target, "run": run.info.run_id, "path": str(run.path),
                            "status": run.info.status, "scores": data, "paper": paper, "share": n_targets,
                            "statuses": {u: o.status for u, o in run.outcomes.get(target, {}).items()},
                            "units": run.units, "run_data": run})
    labels = [e["target"] for e in entries]
    for e in entries:  # the same target name in two runs: tell them apart by run
        e["label"] = e["target"] if labels.count(e["target"]) == 1 else f"{e['target']} ({e['run']})"
    return entries


def _compared(e: dict[str, Any]) -> ComparedTarget:
    s, paper = e["scores"], e["paper"]
    ev, cand = paper["evaluation total"], paper["candidate (beside)"]
    # A run with several targets shares its evaluation cost among them.
    return ComparedTarget(label=e["label"], target=e["target"], run=e["run"], path=e["path"], status=e["status"],
                          accuracy=s["accuracy"], coverage=s["coverage"], counts=s["counts"],
                          evaluation_cents_per_unit=ev["cents_per_unit"] / e["share"],
                          evaluation_calls_per_unit=ev["calls_per_unit"] / e["share"],
                          candidate_calls_per_unit=cand["calls_per_unit"] / e["share"])


def disagreements(entries: list[dict[str, Any]]) -> list[Disagreement]:
    """For each ordered pair (A, B): units A got correct and B got incorrect."""
    pairs = []
    for a in entries:
        for b in entries:
            if a is b:
                continue
            ids = sorted(u for u, s in a["statuses"].items() if s == "correct" and b["statuses"].get(u) == "incorrect")
            units = {**b["units"], **a["units"]}
            pairs.append(Disagreement(correct_for=a["label"], incorrect_for=b["label"], count=len(ids),
                                      units=[DisagreementUnit(id=u, text=units[u].text if u in units else "")
                                             for u in ids]))
    return pairs


def paired(entries: list[dict[str, Any]], seed: int = 0) -> list[PairedSection]:
    """For each pair of targets (A listed before B) with a unit both covered: B - A on their shared units."""
    sections = []
    for i, a in enumerate(entries):
        for b in entries[i + 1:]:
            units = paired_units(a["run_data"], a["target"], b["run_data"], b["target"])
            if units.covered_by_both:
                sections.append(paired_section(a["label"], b["label"], units, seed=seed))
    return sections


def compare_report(run_dirs: Sequence[str | Path]) -> CompareReport:
    """The comparison of every target of the given runs, built once (render it with compare_markdown,
    compare_html or examiner.reporting.terminal)."""
    if not run_dirs:
        raise UserError("compare needs at least one run directory")
    entries = _entries(run_dirs)
    return CompareReport(targets=[_compared(e) for e in entries], disagreements=disagreements(entries),
                         paired=paired(entries))


def rows(report: CompareReport) -> list[list[Any]]:
    """The comparison table's cells (HEADER), one row per target."""
    return [[t.label, t.run, t.status, md.with_ci(t.accuracy), md.with_ci(t.coverage), t.counts.correct,
             t.counts.incorrect, cell(t.evaluation_cents_per_unit, 3), cell(t.evaluation_calls_per_unit, 2),
             cell(t.candidate_calls_per_unit, 2)] for t in report.targets]


def pair_rows(report: CompareReport) -> list[list[Any]]:
    return [[p.correct_for, p.incorrect_for, p.count] for p in report.disagreements]


def compare_markdown(report: CompareReport) -> str:
    """The comparison as Markdown."""
    out = ["# Comparison", "", NOTE, "", md.table(HEADER, rows(report)), ""]
    if report.paired:
        out += ["## Paired differences (the same units)", "", PAIRED_NOTE, ""]
        out += [f"- {headline(s)}" for s in report.paired]
        out += ["", md.table(PAIRED_HEADER, paired_rows(report.paired)), ""]
        for s in report.paired:
            if s.subgroups:
                out += [f"### Subgroups: {s.b} - {s.a}", "",
                        md.table(SUBGROUP_HEADER, subgroup_rows(s, LISTED_SUBGROUPS))]
                if len(s.subgroups) > LISTED_SUBGROUPS:
                    out.append(f"\n{len(s.subgroups) - LISTED_SUBGROUPS} more subgroups in the JSON report.")
                out.append("")
    out += ["## Correct for one, incorrect for another", ""]
    out.append(md.table(["correct for", "incorrect for", "units"], pair_rows(report)))
    for p in report.disagreements:
        if p.units:
            out += ["", f"### correct for {p.correct_for}, incorrect for {p.incorrect_for}", ""]
            out += [f"- `{u.id}` {u.text}" for u in p.units[:LISTED_DISAGREEMENTS]]
            if p.count > LISTED_DISAGREEMENTS:
                out.append(f"- ... {p.count - LISTED_DISAGREEMENTS} more")
    return "\n".join(out) + "\n"


def compare_html(report: CompareReport) -> str:
    """The comparison as one self-contained HTML page (the chart inlined)."""
    scores = {t.label: {"accuracy": t.accuracy.model_dump(), "coverage": t.coverage.model_dump()}
              for t in report.targets}
    with tempfile.TemporaryDirectory() as tmp:
        chart = fg.scores_figure(scores, Path(tmp) / "scores.png")
        img = h.image(chart, "accuracy and coverage per target")
    body = [f"<h1>Comparison</h1><p class=\"note\">{escape(NOTE)}</p>", h.table(HEADER, rows(report)), img]
    if report.paired:
        body += ["<h2>Paired differences (the same units)</h2>", f"<p class=\"note\">{escape(PAIRED_NOTE)}</p><ul>",
                 *(f"<li>{escape(headline(s))}</li>" for s in report.paired), "</ul>",
                 h.table(PAIRED_HEADER, paired_rows(report.paired))]
        for s in report.paired:
            if s.subgroups:
                body += [f"<h3>Subgroups: {escape(s.b)} - {escape(s.a)}</h3>",
                         h.table(SUBGROUP_HEADER, subgroup_rows(s, LISTED_SUBGROUPS))]
                if len(s.subgroups) > LISTED_SUBGROUPS:
                    body.append(f"<p>{len(s.subgroups) - LISTED_SUBGROUPS} more subgroups in the JSON report.</p>")
    body += ["<h2>Correct for one, incorrect for another</h2>",
            h.table(["correct for", "incorrect for", "units"], pair_rows(report))]
    for p in report.disagreements:
        if p.units:
            body.append(f"<h3>correct for {escape(p.correct_for)}, incorrect for {escape(p.incorrect_for)}</h3><ul>")
            body += [f"<li><code>{escape(u.id)}</code> {escape(u.text)}</li>" for u in p.units[:LISTED_DISAGREEMENTS]]
            if p.count > LISTED_DISAGREEMENTS:
                body.append(f"<li>... {p.count - LISTED_DISAGREEMENTS} more</li>")
            body.append("</ul>")
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Comparison</title>"
            f"<style>{h.CSS}</style></head><body>" + "\n".join(body) + "</body></html>")


def compare(run_dirs: Sequence[str | Path]) -> tuple[str, str]:
    """Markdown and self-contained HTML comparing every target of the given runs."""
    report = compare_report(run_dirs)
    return compare_markdown(report), compare_html(report)


__all__ = ["compare", "compare_html", "compare_markdown", "compare_report", "disagreements", "paired", "RunData"]
