"""The knowledge section of report.md and report.html: per target its rates with intervals and calibration,
then the topics where it invents most, the knowledge map and the reliability diagram."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from examiner.reporting.model import ExamReport
from examiner.reporting.model.knowledge import KnowledgeRow, Rate
from examiner.stats.knowledge import PENALTY_TARGETS

KNOWLEDGE_NOTE = ("Among the units each target was asked about and answered for (correct, incorrect or abstained): "
                  "accuracy = correct among them; hallucination = incorrect among attempted (correct + incorrect); "
                  "abstention = abstained among them; SimpleQA's F = harmonic mean of accuracy and correct given "
                  "attempted; penalised score at t = mean of +1 right, -t/(1-t) wrong, 0 abstained; ECE (10 bins), "
                  "Brier and AURC (area under the risk-coverage curve, lower is better) read the target's stated "
                  "confidence against being right over attempted units. [95% cluster intervals: Wilson with design "
                  "effect for the rates, linearised ratio variance for F, the scores and Brier, a delete-one-document "
                  "jackknife for ECE and AURC]")
KNOWLEDGE_HEADER = ["target", "asked", "accuracy", "hallucination", "abstention", "correct given attempted", "F",
                    *(f"score t={t}" for t in PENALTY_TARGETS), "ECE", "Brier", "AURC"]
TOPIC_HEADER = ["target", "by", "topic", "asked", "correct", "incorrect", "abstained", "hallucination",
                "abstention", "accuracy", "F", "score t=0.75", "ECE"]
CONTROL_NOTE = ("Control questions: questions the corpus cannot answer (a false premise, an entity the corpus never "
                "names, a detail it does not give), never counted in accuracy; the right answer declines or "
                "corrects the premise. Refusal = declined or corrected among judged controls; false-premise "
                "acceptance = answered as if the premise held. A target refusing nearly every control while its "
                "abstention above is also near 100% refuses everything. [95% cluster intervals]")
CONTROL_HEADER = ["target", "controls", "refusal", "false-premise acceptance", "abstention (answerable)", "kinds"]
TOPICS_SHOWN = 10
"""Topic rows shown per target in the reports (the most hallucinating first); report.json keeps more."""


def rate(r: Rate) -> str:
    if r.value is None:
        return "-"
    span = f" [{100 * r.low:.0f}, {100 * r.high:.0f}]" if r.low is not None and r.high is not None else ""
    return f"{100 * r.value:.1f}%{span}"


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _with_interval(row: KnowledgeRow, name: str, value: float | None) -> str:
    """`0.512 [0.47, 0.55]`: the figure and its cluster interval (the figure alone in a report written
    before intervals were given for it)."""
    est = row.intervals.get(name)
    if value is None or est is None or est.low is None or est.high is None:
        return _num(value)
    return f"{value:.3f} [{est.low:.2f}, {est.high:.2f}]"


def knowledge_rows(report: ExamReport) -> list[list[str]]:
    rows = []
    for name, k in report.knowledge.items():
        o = k.overall
        rows.append([name, str(o.asked), rate(o.accuracy), rate(o.hallucination_rate), rate(o.abstention_rate),
                     rate(o.correct_given_attempted), _with_interval(o, "f_score", o.simpleqa_f),
                     *(_with_interval(o, f"penalised_{t}", o.penalised.get(str(t))) for t in PENALTY_TARGETS),
                     _with_interval(o, "ece", o.ece), _with_interval(o, "brier", o.brier),
                     _with_interval(o, "aurc", o.aurc)])
    return rows


def _topic_cells(name: str, r: KnowledgeRow) -> list[str]:
    return [name, r.by, r.topic, str(r.asked), str(r.correct), str(r.incorrect), str(r.abstained),
            rate(r.hallucination_rate), rate(r.abstention_rate), rate(r.accuracy),
            _with_interval(r, "f_score", r.simpleqa_f), _with_interval(r, "penalised_0.75", r.penalised.get("0.75")),
            _with_interval(r, "ece", r.ece)]


def topic_rows(report: ExamReport) -> list[list[str]]:
    """The clusters where each target invents most (with at least one error), then its documents."""
    rows = []
    for name, k in report.knowledge.items():
        invented = [r for r in k.topics if r.by == "cluster" and r.incorrect > 0][:TOPICS_SHOWN]
        rows += [_topic_cells(name, r) for r in invented]
        rows += [_topic_cells(name, r) for r in k.topics if r.by in ("document", "language") and r.asked][:TOPICS_SHOWN]
    return rows


def control_rows(report: ExamReport) -> list[list[str]]:
    """One row per target that met control questions (none when the run asked none)."""
    rows = []
    for name, k in report.knowledge.items():
        c = k.controls
        if c is not None:
            kinds = ", ".join(f"{kind} {n}" for kind, n in c.by_kind.items())
            rows.append([name, str(c.asked), rate(c.refusal_rate), rate(c.false_premise_acceptance),
                         rate(k.overall.abstention_rate), kinds])
    return rows


def control_lines(report: ExamReport) -> list[str]:
    """The terminal's control lines: per target, refusal and false-premise acceptance with intervals."""
    return [f"controls {name}: {row[1]} asked, refused {row[2]}, accepted a false premise {row[3]}, "
            f"abstained on answerable {row[4]}" for name, row in ((r[0], r) for r in control_rows(report))]


def confidence_note(report: ExamReport) -> str:
    said = {name: (k.overall.confidence_source, k.overall.with_confidence) for name, k in report.knowledge.items()}
    parts = [f"{name}: {f'{n} attempted units with a {src} confidence' if src else 'no confidence stated'}"
             for name, (src, n) in said.items()]
    return "Confidence: " + "; ".join(parts) + "."


def md_knowledge(report: ExamReport) -> list[str]:
    if not report.knowledge:
        return []
    out = ["## What each target knows, invents and declines", "", KNOWLEDGE_NOTE, "",
           _table(KNOWLEDGE_HEADER, knowledge_rows(report)), "", confidence_note(report), ""]
    controls = control_rows(report)
    if controls:
        out += ["### Control questions", "", CONTROL_NOTE, "", _table(CONTROL_HEADER, controls), ""]
    rows = topic_rows(report)
    if rows:
        out += ["### Where it invents (topics, the most hallucinating first)", "", _table(TOPIC_HEADER, rows), ""]
    for fig, alt in (("knowledge_map", "knowledge map"), ("reliability", "reliability diagram")):
        if fig in report.figures:
            out += [f"![{alt}]({report.figures[fig]})", ""]
    return out


def _table(header: list[str], rows: list[list[str]]) -> str:
    from examiner.reporting.md_table import table

    return table(header, rows)


def html_knowledge(report: ExamReport, figures: dict[str, Any], table: Callable[[list[str], list[list[Any]]], str],
                   heading: Callable[[str], str], figure_parts: Callable[..., list[str]],
                   escape: Callable[[str], str]) -> list[str]:
    """The section's HTML: `heading(title)` and `figure_parts(report, figures, (name, alt)...)` are
    report.html's own, so the heading and every figure carry the UNTRUSTWORTHY mark when health failed."""
    if not report.knowledge:
        return []
    p = [heading("What each target knows, invents and declines"),
         f"<p class=\"note\">{escape(KNOWLEDGE_NOTE)}</p>", table(KNOWLEDGE_HEADER, knowledge_rows(report)),
         f"<p class=\"note\">{escape(confidence_note(report))}</p>"]
    controls = control_rows(report)
    if controls:
        p += ["<h3>Control questions</h3>", f"<p class=\"note\">{escape(CONTROL_NOTE)}</p>",
              table(CONTROL_HEADER, controls)]
    rows = topic_rows(report)
    if rows:
        p += ["<h3>Where it invents (topics, the most hallucinating first)</h3>", table(TOPIC_HEADER, rows)]
    p += figure_parts(report, figures, ("knowledge_map", "knowledge map: topics by accuracy and hallucination rate"),
                      ("reliability", "reliability diagram: stated confidence against share right"))
    return p


def invented_lines(report: ExamReport) -> list[str]:
    """"What went wrong" opens with these: per target, the topics where it answered wrongly most often."""
    out = []
    for name, k in report.knowledge.items():
        worst = [r for r in k.topics if r.by == "cluster" and r.incorrect > 0][:3]
        if not worst:
            continue
        o = k.overall
        said = "; ".join(f"\"{r.topic}\" {r.incorrect} of {r.correct + r.incorrect} attempted wrong" for r in worst)
        out.append(f"{name} invents (hallucination {rate(o.hallucination_rate)}, abstains {rate(o.abstention_rate)}) "
                   f"most in: {said}.")
    return out


__all__ = ["CONTROL_HEADER", "KNOWLEDGE_HEADER", "TOPIC_HEADER", "control_lines", "html_knowledge", "invented_lines", "md_knowledge"]
