"""The front of the exam report, as a team lead reads it in a minute: a title (corpus, targets, date), what
was examined and by whom, the headline (accuracy and coverage per target with intervals, cost, health in
one line), then what went wrong; everything else follows as details.

Plain text and rows only, so Markdown, HTML and the terminal show the same words (markdown.py, html.py,
terminal.py render them). When the run's health failed, every figure is marked UNTRUSTWORTHY.
"""

from __future__ import annotations

import datetime as dt
from pathlib import PurePath

from examiner.core.sim_prices import illustrative_note
from examiner.reporting.endpoint_identity import endpoints_line
from examiner.reporting.health_section import failed, headline, health_rows
from examiner.reporting.model import ExamReport
from examiner.reporting.model.cascade import CascadeSection
from examiner.reporting.model.exam import ClusterRow, Estimate, TargetSection
from examiner.reporting.topics import natural_key

UNTRUSTWORTHY_TAG = "UNTRUSTWORTHY"
"""The mark on every figure of a run whose health failed."""
HEADLINE_HEADER = ["target", "accuracy [95% CI]", "coverage [95% CI]",
                   "units correct / incorrect / abstained / not covered"]
WORST_SHOWN = 3
"""Clusters with the most wrong units named per target under "What went wrong"."""
NAME_CHARS = 60
"""A cluster named by its question (no key terms) shows at most this many characters of it."""


def pct(x: float | None) -> str:
    """A share as a percentage with one decimal, `n/a` when there is none."""
    return "n/a" if x is None else f"{100 * x:.1f}%"


def cascade_headline(section: CascadeSection | None) -> str | None:
    """The cascade in a headline sentence: who settled what share, and the spend against strong-only."""
    if section is None:
        return None
    return (f"Judge cascade: {section.cheap} settled {section.settled_cheap} of {section.units} verdicts "
            f"({pct(section.cheap_share)}), spend {pct(section.spend_ratio)} of {section.strong} alone"
            + (" (it settled nothing: see Judge cascade)." if not section.settled_cheap else "."))


def with_ci(est: Estimate) -> str:
    """A share with its 95% interval, e.g. `83.3% [50.0, 100.0]`."""
    if est.value is None:
        return "n/a"
    if est.low is None or est.high is None:
        return pct(est.value)
    return f"{pct(est.value)} [{100 * est.low:.1f}, {100 * est.high:.1f}]"


def corpus_name(report: ExamReport) -> str:
    """The corpus as a reader names it: the last part of its first path (`harbor-water`), `+N more`."""
    paths = report.run.corpus_paths
    if not paths:
        return "an empty corpus"
    first = PurePath(paths[0].rstrip("/\\")).name or paths[0]
    return first + (f" +{len(paths) - 1} more" if len(paths) > 1 else "")


def run_date(report: ExamReport) -> str | None:
    """The UTC day the run started (or finished), None when the run recorded neither."""
    when = report.run.started or report.run.finished
    return dt.datetime.fromtimestamp(when, tz=dt.timezone.utc).strftime("%Y-%m-%d") if when else None


def report_title(report: ExamReport) -> str:
    """`Exam of harbor-water: sim-local, 2026-11-26` (the run id is in the details, not the title)."""
    targets = ", ".join(report.run.targets) or "no target"
    date = run_date(report)
    return f"Exam of {corpus_name(report)}: {targets}" + (f", {date}" if date else "")


def untrustworthy(report: ExamReport) -> bool:
    """Whether the figures are to be marked (the run's health failed)."""
    return failed(report.health)


def figure_mark(report: ExamReport) -> str:
    """` (UNTRUSTWORTHY: health failed)` after the heading of every figure, or nothing."""
    return f" ({UNTRUSTWORTHY_TAG}: health failed)" if untrustworthy(report) else ""


def _endpoints(report: ExamReport, roles: tuple[str, ...]) -> list[str]:
    return list(dict.fromkeys(r.endpoint for r in report.cost.by_endpoint if r.role in roles))


def examined_lines(report: ExamReport) -> list[str]:
    """What was examined and by whom, in two sentences, then what each endpoint is (its model and server)."""
    run = report.run
    corpus = ", ".join(run.corpus_paths) or "-"
    what = (f"Examined: {run.units} knowledge units from {run.documents} documents ({run.passages} passages) "
            f"of {corpus}.")
    examiner = ", ".join(_endpoints(report, ("examiner",))) or "-"
    judges = ", ".join(run.judges) or ", ".join(_endpoints(report, ("judge", "reviser", "geval"))) or "-"
    who = (f"Who: {', '.join(run.targets) or 'no target'} answered; {examiner} asked; {judges} judged "
           f"(judge {run.judge_mode}, mode {run.mode}).")
    endpoints = endpoints_line(report.endpoints)
    return [what, who, *([endpoints] if endpoints else [])]


def headline_rows(report: ExamReport) -> list[list[str]]:
    """One row per target (HEADLINE_HEADER); the figures prefixed UNTRUSTWORTHY when health failed."""
    tag = f"{UNTRUSTWORTHY_TAG} " if untrustworthy(report) else ""
    rows = []
    for name, t in report.targets.items():
        c = t.counts
        rows.append([name, tag + with_ci(t.accuracy), tag + with_ci(t.coverage),
                     f"{c.correct} / {c.incorrect} / {c.abstained} / {c.unanswered + c.uncovered}"])
    return rows


def cost_line(report: ExamReport) -> str:
    """The run's cost in one line, then, for a run with a judge cascade, what the cascade settled and spent
    (the headline of report.md and report.html shows this line)."""

    total, units = report.cost.total, max(report.cost.units, 1)
    note = illustrative_note(report.run.path)
    cascade = cascade_headline(report.cascade)
    return (f"Cost: ${total.cost_usd:.4f} for {total.calls} model calls ({100 * total.cost_usd / units:.3f} cents "
            f"per unit; {total.cache_hits} answered from the cache)" + (f"; {note}." if note else ".")
            + (f" {cascade}" if cascade else ""))


def health_line(report: ExamReport) -> str:
    """The health verdict in one line."""
    if not report.health:
        return "Health: not checked for this report."
    return f"Health: {headline(report.health)[len('health: '):]}"


def status_line(report: ExamReport) -> str:
    """The run id, how it ended and how long it took."""
    run = report.run
    took = f" in {run.duration_s:.0f} s" if run.duration_s is not None else ""
    return f"Run {run.run_id}: {run.status} ({run.stop_reason or 'no stop reason recorded'}){took}."


def cluster_name(row: ClusterRow) -> str:
    """What a reader calls a cluster: its key terms, else the start of the examiner's question, else its id."""
    if row.topic:
        return row.topic
    if row.question:
        return row.question if len(row.question) <= NAME_CHARS else row.question[:NAME_CHARS - 3].rstrip() + "..."
    return row.cluster


def clusters_in_order(target: TargetSection) -> list[ClusterRow]:
    """The target's clusters by round, then id in natural order (r1-c2 before r1-c10)."""
    return sorted(target.per_cluster, key=lambda r: (r.round if r.round is not None else 10**9,
                                                     natural_key(r.cluster)))


def _weakest(target: TargetSection) -> str:
    """The clusters with the most wrong units (then the lowest accuracy), by name: where the errors are."""
    wrong = sorted((r for r in target.per_cluster if r.incorrect),
                   key=lambda r: (-r.incorrect, r.accuracy if r.accuracy is not None else 2.0, natural_key(r.cluster)))
    return "; ".join(f"\"{cluster_name(r)}\" {r.incorrect} of {r.correct + r.incorrect} wrong"
                     for r in wrong[:WORST_SHOWN])


def run_problems(report: ExamReport) -> list[str]:
    """What went wrong with the exam itself: the stop, the health checks that did not pass, failed or
    unparseable calls, skipped input, answers the judge read cut. Empty when nothing did."""
    run, c, cost = report.run, report.counts, report.cost
    out: list[str] = []
    if run.status != "completed":
        out.append(f"The run did not finish: {run.status} ({run.stop_reason or 'no reason recorded'}); "
                   "`examiner resume` on its folder continues it.")
    if report.health:
        for row in health_rows(report.health):
            if row[1] in ("warn", "fail"):
                example = f"; e.g. {row[5]}" if row[5] else ""
                out.append(f"Health check {row[0]} {row[1].upper()}: {row[4]} (thresholds {row[3]}){example}.")
            elif row[1] == "not_measured":  # e.g. the self-check of a frozen-paper re-sit: not a pass
                out.append(f"Health check {row[0]} NOT MEASURED ({row[4].removeprefix('not measured: ')}), so "
                           "the health is INCOMPLETE, not PASS.")
    counted = [(c.failed_requests, "model requests failed for good"),
               (cost.in_flight.calls, "calls were killed in flight (possibly billed)"),
               (c.unparseable_questions, "questions could not be parsed"),
               (c.unparseable_judgments, "judgments could not be parsed"),
               (c.questions_without_targets, "questions were left without targets"),
               (c.leak_rejections, "questions were rejected for leaking an answer"),
               (c.skipped_files, "input files were skipped"),
               (c.skipped_passages, "passages gave no knowledge unit"),
               (sum(c.unreadable_record_lines.values()), "record lines could not be read")]
    out += [f"{n} {what}." for n, what in counted if n]
    cut = report.passed_text
    if cut is not None and cut.answers_cut:  # the judge did not read those answers whole
        out.append(f"{cut.answers_cut} of {cut.answers} answers reached the judge cut to max_passed_chars "
                   f"({cut.limit:,} characters).")
    return out


def target_problems(report: ExamReport) -> list[str]:
    """Per target: how many units it got wrong or left uncovered, and the clusters (by topic) with most errors."""
    out = []
    for name, t in report.targets.items():
        c = t.counts
        line = f"{name}: {c.incorrect} of {t.units} units answered wrongly"
        if c.unanswered:
            line += f", {c.unanswered} unanswered"
        if c.uncovered:
            line += f", {c.uncovered} never covered"
        weakest = _weakest(t)
        out.append(line + (f". Most errors in: {weakest}." if weakest else "."))
    return out


def went_wrong(report: ExamReport) -> list[str]:
    """The items of "What went wrong": first the topics where each target invents (issue 42: what an auditor
    must fence off), then the exam's problems (or a line saying there were none), then the targets' errors."""
    problems = run_problems(report)
    if not problems:
        checked = "health passed" if report.health and report.health.status == "pass" else "no health check failed"
        problems = [f"The exam itself: nothing (completed, {checked}, no failed or unparseable call, nothing "
                    "skipped)."]
    from examiner.reporting.knowledge_section import invented_lines

    return [*invented_lines(report), *problems, *target_problems(report)]


__all__ = ["HEADLINE_HEADER", "UNTRUSTWORTHY_TAG", "cascade_headline", "cluster_name", "clusters_in_order", "corpus_name", "cost_line",
           "examined_lines", "figure_mark", "headline_rows", "health_line", "report_title", "run_date",
           "status_line", "untrustworthy", "went_wrong"]
