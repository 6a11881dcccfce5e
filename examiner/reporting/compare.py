"""Several targets side by side: accuracy, coverage, cost per unit, the paired difference of each pair of
targets on the units they share (examiner/reporting/paired.py), and the units they disagree on.

Targets may come from one run (several `--target`s sitting the same paper) or from several runs over the
same corpus; unit ids are content hashes, so the same unit has the same id in every run.

Every figure is read with the people's overrides in force (examiner/reporting/with_overrides.py), as the
run's own report gives them, and each run's health is shown beside its targets: a run whose health failed
is marked UNTRUSTWORTHY, since its figures describe a degenerate examiner or judge.
"""

from __future__ import annotations

import tempfile
from html import escape
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Sequence

from examiner.core.errors import UserError
from examiner.reporting import markdown as md
from examiner.reporting.knowledge import knowledge_row
from examiner.reporting.knowledge_compare import METRIC_NOTE, check_metric, metric_difference, metric_line
from examiner.reporting.knowledge_section import rate
from examiner.reporting.controls import control_figures, run_controls
from examiner.reporting.model import CompareReport
from examiner.reporting.model.compare import (ComparedTarget, Disagreement, DisagreementUnit, MetricDifference,
                                              PairedSection)
from examiner.reporting.score_intervals import small_sample_notes
from examiner.reporting.paired import (PAIRED_HEADER, PAIRED_NOTE, SUBGROUP_HEADER, headline, paired_rows,
                                       paired_section, paired_units, subgroup_rows)
from examiner.reporting.compare_wording import wording_line, with_wording
from examiner.reporting.run_reader import RunData, load_run
from examiner.reporting.health_section import headline as health_headline
from examiner.reporting.summary import summarize
from examiner.reporting.with_overrides import apply_overrides, override_counts
from examiner.reporting.writer import cell

LISTED_DISAGREEMENTS = 25
"""Units listed per pair of targets in Markdown and HTML (all are counted, and listed in the model)."""
LISTED_SUBGROUPS = 15
"""Subgroup rows shown per pair of targets in Markdown and HTML, the significant first (all in the model)."""

HEADER = ["target", "run", "status", "health", "accuracy [95% CI]", "coverage [95% CI]", "correct", "incorrect",
          "abstained", "hallucination [95% CI]", "abstention [95% CI]", "evaluation cents / unit",
          "evaluation calls / unit", "candidate calls / unit"]
NOTE = ("Accuracy = correct / covered, coverage = covered / all units; 95% intervals resample source documents "
        "(below 30 of them a small-sample interval, named under the table). "
        "Evaluation = examiner question generation + judging, per unit of the corpus; a run with several "
        "targets splits its cost evenly among them.")
UNTRUSTWORTHY_MARK = "FAIL - UNTRUSTWORTHY"
"""The health cell of a run whose health failed."""

HealthOf = Callable[[RunData], Mapping[str, Any] | None]
"""A run's health (report.json's `health`: `status` and `checks`), computed by the caller (the exam layer
owns the checks); None where it is not checked."""


def _entries(run_dirs: Sequence[str | Path], health_of: HealthOf | None = None) -> list[dict[str, Any]]:
    """Every target of every run, with its figures, its unit statuses and the run's units, the run's
    overrides applied (as its report applies them) and its health."""
    entries = []
    for run_dir in run_dirs:
        judged = load_run(run_dir)
        health = health_of(judged) if health_of is not None else None
        overrides = override_counts(judged)["per_target"] if judged.overrides else {}
        run = apply_overrides(judged) if judged.overrides else judged
        summary = summarize(run, topics=False)  # compare shows no cluster, so it names none
        controls = run_controls(run)
        paper = {r["stage"]: r for r in summary["cost"]["paper"]}
        n_targets = max(len(summary["targets"]), 1)
        for target, data in summary["targets"].items():
            entries.append({"target": target, "run": run.info.run_id, "path": str(run.path),
                            "status": run.info.status, "scores": data, "paper": paper, "share": n_targets,
                            "statuses": {u: o.status for u, o in run.outcomes.get(target, {}).items()},
                            "units": run.units, "run_data": run, "health": health, "controls": controls,
                            "overrides": overrides.get(target, 0)})
    labels = [e["target"] for e in entries]
    for e in entries:  # the same target name in two runs: tell them apart by run
        e["label"] = e["target"] if labels.count(e["target"]) == 1 else f"{e['target']} ({e['run']})"
    return entries


def _compared(e: dict[str, Any]) -> ComparedTarget:
    s, paper = e["scores"], e["paper"]
    ev, cand = paper["evaluation total"], paper["candidate (beside)"]
    health = e["health"]
    status = health.get("status") if health else None
    # A run with several targets shares its evaluation cost among them.
    return ComparedTarget(label=e["label"], target=e["target"], run=e["run"], path=e["path"], status=e["status"],
                          health=status, health_line=health_headline(health) if health else None,
                          trustworthy=status != "fail", overrides=e["overrides"],
                          accuracy=s["accuracy"], coverage=s["coverage"], counts=s["counts"],
                          evaluation_cents_per_unit=ev["cents_per_unit"] / e["share"],
                          evaluation_calls_per_unit=ev["calls_per_unit"] / e["share"],
                          candidate_calls_per_unit=cand["calls_per_unit"] / e["share"], **_rates(e),
                          controls=control_figures(e["run_data"], e["controls"], e["target"]))


def _rates(e: dict[str, Any]) -> dict[str, Any]:
    """The target's hallucination and abstention rates with their intervals (reporting/knowledge.py)."""
    outcomes = list(e["run_data"].outcomes.get(e["target"], {}).values())
    row = knowledge_row(e["run_data"], outcomes, by="target", key=e["target"], topic=e["target"])
    return {"hallucination_rate": row["hallucination_rate"], "abstention_rate": row["abstention_rate"]}


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


def paired(entries: list[dict[str, Any]]) -> list[PairedSection]:
    """For each pair of targets (A listed before B) with a unit both covered: B - A on their shared units."""
    sections = []
    for i, a in enumerate(entries):
        for b in entries[i + 1:]:
            units = paired_units(a["run_data"], a["target"], b["run_data"], b["target"])
            if units.covered_by_both:
                sections.append(with_wording(paired_section(a["label"], b["label"], units), units, a["path"],
                                             a["target"], b["path"], b["target"]))
    return sections


def compare_report(run_dirs: Sequence[str | Path], health_of: HealthOf | None = None,
                   metric: str | None = None) -> CompareReport:
    """The comparison of every target of the given runs, built once (render it with compare_markdown,
    compare_html or examiner.reporting.terminal); `health_of` gives each run's health (None: not checked);
    `metric` adds each pair's difference in that knowledge figure (reporting/knowledge_compare.py)."""
    if not run_dirs:
        raise UserError("compare needs at least one run directory")
    if metric is not None:
        check_metric(metric)  # before any run is read
    entries = _entries(run_dirs, health_of)
    sections = paired(entries)
    return CompareReport(targets=[_compared(e) for e in entries], disagreements=disagreements(entries),
                         paired=sections, metric_differences=_metric_differences(entries, sections, metric),
                         abstention_differences=_metric_differences(entries, sections, ABSTENTION))


def _metric_differences(entries: list[dict[str, Any]], sections: list[PairedSection], metric: str | None
                        ) -> list[MetricDifference]:
    """`metric`'s difference for each pair the paired section compares (none without a metric)."""
    if metric is None:
        return []
    by_label = {e["label"]: e for e in entries}
    return [metric_difference(s.a, by_label[s.a]["run_data"], by_label[s.a]["target"], s.b,
                              by_label[s.b]["run_data"], by_label[s.b]["target"], metric) for s in sections]


ABSTENTION = "abstention_rate"
"""The knowledge figure every comparison pairs beside accuracy: a target that declines more is safer behind a
fallback at the same accuracy (issue 42)."""
ABSTENTION_NOTE = ("B - A in the abstention rate (abstained among covered units) on the units both targets were "
                   "examined on, with the paired accuracy interval's method. The line says lower is better, as the "
                   "gate reads the rate; read it beside the hallucination rate, since declining beats inventing.")
CONTROL_HEADER = ["target", "run", "controls asked", "refusal (declined or corrected) [95% CI]",
                  "false-premise acceptance [95% CI]", "unlabelled"]
CONTROL_NOTE = ("Control questions (--control-share) ask what the corpus does not support; the right answer declines "
                "or corrects the premise. Never counted in accuracy; intervals cluster by document.")


def abstention_shown(report: CompareReport) -> list[MetricDifference]:
    """The abstention differences the outputs show (none when --metric abstention_rate already shows them)."""
    metric = report.metric_differences[0].metric if report.metric_differences else None
    return [] if metric == ABSTENTION else list(report.abstention_differences)


def control_rows(report: CompareReport) -> list[list[Any]]:
    """CONTROL_HEADER's rows: the targets whose run asked control questions, side by side."""
    return [[t.label, t.run, t.controls.asked, rate(t.controls.refusal_rate), rate(t.controls.false_premise_acceptance),
             t.controls.unlabelled] for t in report.targets if t.controls is not None]


def control_line(t: ComparedTarget) -> str:
    """One target's control figures in a line (the terminal with --out)."""
    c = t.controls
    assert c is not None
    return (f"controls {t.label}: {c.asked} asked, refused or corrected {rate(c.refusal_rate)}, accepted a false "
            f"premise {rate(c.false_premise_acceptance)}")


def health_cell(target: ComparedTarget) -> str:
    """`FAIL - UNTRUSTWORTHY`, `pass`, `warn`, or `not checked`."""
    if target.health is None:
        return "not checked"
    return UNTRUSTWORTHY_MARK if not target.trustworthy else target.health


def warnings(report: CompareReport) -> list[str]:
    """The lines every rendering puts above the table: each run whose health failed (UNTRUSTWORTHY), and
    how many people's overrides the figures include."""
    lines, seen = [], set()
    for t in report.targets:
        if not t.trustworthy and t.run not in seen:
            seen.add(t.run)
            lines.append(f"UNTRUSTWORTHY: run {t.run} ({t.path}): {t.health_line}. Its figures describe a "
                         "degenerate examiner or judge rather than the target's knowledge; do not rank it.")
    applied = [t for t in report.targets if t.overrides]
    if applied:
        lines.append(f"Overrides applied: {sum(t.overrides for t in applied)} verdicts corrected by people "
                     f"(overrides.jsonl: " + ", ".join(f"{t.label} {t.overrides}" for t in applied) + "); every "
                     "figure below is with the overrides, as in each run's report.")
    return lines


def marked_headline(report: CompareReport, section: PairedSection) -> str:
    """The pair's headline (paired.headline), prefixed UNTRUSTWORTHY when either side's run failed its health."""
    bad = [t.label for t in report.targets if not t.trustworthy and t.label in (section.a, section.b)]
    line = headline(section)
    return f"UNTRUSTWORTHY ({', '.join(bad)}: health failed) {line}" if bad else line


def rows(report: CompareReport) -> list[list[Any]]:
    """The comparison table's cells (HEADER), one row per target."""
    return [[t.label, t.run, t.status, health_cell(t), md.with_ci(t.accuracy), md.with_ci(t.coverage), t.counts.correct,
             t.counts.incorrect, t.counts.abstained, rate(t.hallucination_rate) if t.hallucination_rate else "-",
             rate(t.abstention_rate) if t.abstention_rate else "-", cell(t.evaluation_cents_per_unit, 3),
             cell(t.evaluation_calls_per_unit, 2),
             cell(t.candidate_calls_per_unit, 2)] for t in report.targets]


def pair_rows(report: CompareReport) -> list[list[Any]]:
    return [[p.correct_for, p.incorrect_for, p.count] for p in report.disagreements]


def compare_markdown(report: CompareReport) -> str:
    """The comparison as Markdown."""
    out = ["# Comparison", "", NOTE, ""]
    out += [f"**{line}**\n" for line in warnings(report)]
    out += [md.table(HEADER, rows(report)), ""]
    notes = small_sample_notes((t.label, t) for t in report.targets)
    out += [f"- {line}" for line in notes] + ([""] if notes else [])
    if report.paired:
        out += ["## Paired differences (the same units)", "", PAIRED_NOTE, ""]
        out += [f"- {marked_headline(report, s)}" for s in report.paired]
        out += [f"- {line}" for s in report.paired if (line := wording_line(s))]
        out += ["", md.table(PAIRED_HEADER, paired_rows(report.paired)), ""]
        for s in report.paired:
            if s.subgroups:
                out += [f"### Subgroups: {s.b} - {s.a}", "",
                        md.table(SUBGROUP_HEADER, subgroup_rows(s, LISTED_SUBGROUPS))]
                if len(s.subgroups) > LISTED_SUBGROUPS:
                    out.append(f"\n{len(s.subgroups) - LISTED_SUBGROUPS} more subgroups in the JSON report.")
                out.append("")
    if abstention_shown(report):
        out += ["## Paired difference in the abstention rate", "", ABSTENTION_NOTE, ""]
        out += [f"- {metric_line(m)}" for m in abstention_shown(report)] + [""]
    if report.metric_differences:
        out += [f"## Paired difference in {report.metric_differences[0].metric}", "", METRIC_NOTE, ""]
        out += [f"- {metric_line(m)}" for m in report.metric_differences] + [""]
    if control_rows(report):
        out += ["## Control questions", "", CONTROL_NOTE, "", md.table(CONTROL_HEADER, control_rows(report)), ""]
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
    """The comparison as one self-contained HTML page (the chart inlined). The chart and page modules
    (matplotlib) load here, so `examiner compare` without --out does not load them."""
    from examiner.reporting import figures as fg
    from examiner.reporting import html as h

    scores = {t.label: {"accuracy": t.accuracy.model_dump(), "coverage": t.coverage.model_dump()}
              for t in report.targets}
    with tempfile.TemporaryDirectory() as tmp:
        chart = fg.scores_figure(scores, Path(tmp) / "scores.png")
        img = h.image(chart, "accuracy and coverage per target")
    body = [f"<h1>Comparison</h1><p class=\"note\">{escape(NOTE)}</p>",
            *(f"<p class=\"{'health-fail' if line.startswith('UNTRUSTWORTHY') else 'note'}\"><strong>{escape(line)}"
              "</strong></p>" for line in warnings(report)),
            h.table(HEADER, rows(report)),
            *(f"<p class=\"note\">{escape(line)}</p>" for line in small_sample_notes((t.label, t)
                                                                        for t in report.targets)),
            img]
    if report.paired:
        body += ["<h2>Paired differences (the same units)</h2>", f"<p class=\"note\">{escape(PAIRED_NOTE)}</p><ul>",
                 *(f"<li>{escape(marked_headline(report, s))}</li>" for s in report.paired),
                 *(f"<li>{escape(line)}</li>" for s in report.paired if (line := wording_line(s))), "</ul>",
                 h.table(PAIRED_HEADER, paired_rows(report.paired))]
        for s in report.paired:
            if s.subgroups:
                body += [f"<h3>Subgroups: {escape(s.b)} - {escape(s.a)}</h3>",
                         h.table(SUBGROUP_HEADER, subgroup_rows(s, LISTED_SUBGROUPS))]
                if len(s.subgroups) > LISTED_SUBGROUPS:
                    body.append(f"<p>{len(s.subgroups) - LISTED_SUBGROUPS} more subgroups in the JSON report.</p>")
    if abstention_shown(report):
        body += ["<h2>Paired difference in the abstention rate</h2>", f"<p class=\"note\">{escape(ABSTENTION_NOTE)}</p><ul>",
                 *(f"<li>{escape(metric_line(m))}</li>" for m in abstention_shown(report)), "</ul>"]
    if control_rows(report):
        body += ["<h2>Control questions</h2>", f"<p class=\"note\">{escape(CONTROL_NOTE)}</p>",
                 h.table(CONTROL_HEADER, control_rows(report))]
    if report.metric_differences:
        body += [f"<h2>Paired difference in {escape(report.metric_differences[0].metric)}</h2>",
                 f"<p class=\"note\">{escape(METRIC_NOTE)}</p><ul>",
                 *(f"<li>{escape(metric_line(m))}</li>" for m in report.metric_differences), "</ul>"]
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


__all__ = ["HealthOf", "UNTRUSTWORTHY_MARK", "compare", "compare_html", "compare_markdown", "compare_report",
           "disagreements", "health_cell", "marked_headline", "paired", "RunData", "warnings"]
