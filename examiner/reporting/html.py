"""report.html: one self-contained page (inline CSS, figures as base64 PNG data URIs, no scripts).

Self-contained so that the file can be mailed, archived or opened offline and still show everything.
"""

from __future__ import annotations

import base64
from html import escape
from collections.abc import Callable
from pathlib import Path
from typing import Any

from examiner.reporting.calibration_section import calibration_html
from examiner.reporting.bias_render import bias_html
from examiner.reporting.cascade_section import cascade_html
from examiner.reporting.stopping_section import stopping_html
from examiner.reporting.wording_section import wording_html
from examiner.reporting.gate_section import gate_lines
from examiner.reporting.health_section import UNTRUSTWORTHY, health_html
from examiner.reporting.score_intervals import small_sample_notes
from examiner.reporting.knowledge_section import html_knowledge as knowledge_html
from examiner.reporting.markdown import (
    BASELINE_HEADER,
    CLUSTER_HEADER,
    CLUSTER_NOTE,
    COST_HEADER,
    COUNT_LABELS,
    GROUP_TAIL,
    OVERRIDE_HEADER,
    PANEL_HEADER,
    LANGUAGE_HEADER,
    LANGUAGE_NOTE,
    PANEL_NOTE,
    PRICING_NOTE,
    PRICING_TITLE,
    SCORE_HEADER,
    SCORE_NOTE,
    baseline_rows,
    cluster_note,
    cluster_rows,
    convergence_rows,
    cost_note,
    cost_rows,
    group_rows,
    incorrect_note,
    language_table,
    override_note,
    override_rows,
    panel_rows,
    pricing_table,
    provenance_line,
    qtype_table,
    run_lines,
    stop_notice,
    score_rows,
    skipped_note,
)
from examiner.reporting.languages import shows_languages
from examiner.reporting.layout import (
    HEADLINE_HEADER,
    UNTRUSTWORTHY_TAG,
    cost_line,
    examined_lines,
    headline_rows,
    health_line,
    report_title,
    untrustworthy,
    went_wrong,
)
from examiner.reporting.model import ExamReport
from examiner.reporting.model.exam import SourceSpan

CSS = """
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em auto;max-width:1100px;
color:#222;line-height:1.45;padding:0 1em}
h1{font-size:1.6em;border-bottom:2px solid #4c78a8;padding-bottom:.2em}
h2{font-size:1.25em;margin-top:2em;border-bottom:1px solid #ddd}
h3{font-size:1.05em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#eef2f7}
td.n{text-align:right;font-variant-numeric:tabular-nums}
dl.run{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}
dl.run dt{font-weight:600}
dl.run dd{margin:0}
.status-completed{color:#1a7f37}.status-budget_exhausted,.status-running{color:#b35900}
.status-failed{color:#c62828}
img{max-width:100%;border:1px solid #eee;margin:.4em 0}
.wrong{border:1px solid #e0c0c0;border-left:4px solid #c62828;padding:.5em .8em;margin:.8em 0;
background:#fffafa}
.wrong .label{font-weight:600;color:#555;display:inline-block;min-width:6em}
blockquote{margin:.3em 0 .3em 1em;padding:.3em .8em;background:#f6f6f6;border-left:3px solid #999}
mark{background:#ffe08a}
details.more-wrong>summary{cursor:pointer;color:#4c78a8;margin:.6em 0}
.note{color:#666;font-size:.9em}
.health-fail,.untrustworthy{color:#c62828}.health-warn{color:#b35900}.health-pass{color:#1a7f37}
code{font-size:.85em;background:#f3f3f3;padding:0 .2em}
p.examined{color:#444;margin-top:-.4em}
section.headline{border:1px solid #c9d6e8;background:#f5f8fc;padding:.2em 1em .6em;margin:1em 0}
section.headline h2,section.went-wrong h2{margin-top:.6em;border:0}
section.headline table{font-size:1.05em}
section.went-wrong ul{margin:.3em 0;padding-left:1.4em}
.tag{font-size:.7em;color:#fff;background:#c62828;padding:.1em .4em;border-radius:3px;vertical-align:middle}
figure.untrustworthy{margin:.4em 0;border:3px solid #c62828;display:inline-block}
figure.untrustworthy figcaption{color:#c62828;font-weight:600;padding:0 .4em}
"""


def _is_number(v: Any) -> bool:
    text = str(v).split(" ")[0].rstrip("%")
    try:
        float(text)
        return True
    except ValueError:
        return False


def table(header: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{escape(str(h))}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td class=\"n\">{escape(str(v))}</td>" if _is_number(v) else f"<td>{escape(str(v))}</td>"
                         for v in row) + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def image(path: Path, alt: str) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<img alt="{escape(alt)}" src="data:image/png;base64,{data}">'


def passage_html(src: SourceSpan) -> str:
    """The passage with the recorded span highlighted (also the review page's source block)."""
    text, a, b = src.passage_text, src.start - src.passage_start, src.end - src.passage_start
    if src.origin != "unit text" and 0 <= a < b <= len(text):
        body = escape(text[:a]) + "<mark>" + escape(text[a:b]) + "</mark>" + escape(text[b:])
    else:
        body = escape(text)
    origin = " <span class=\"note\">(the unit's text: the run recorded no passage for it)</span>" \
        if src.origin == "unit text" else ""
    page = f"page {escape(str(src.page))}, " if src.page is not None else ""
    return (f"<div><span class=\"label\">source</span> <code>{escape(src.document)}</code> "
            f"{page}chars {src.start}–{src.end}{origin}<blockquote>{body}</blockquote></div>")


HtmlSection = Callable[[ExamReport, dict[str, Path]], list[str]]
"""One section of report.html: (report, figure name -> PNG) -> its HTML parts (none when it does not apply)."""


def _figures(report: ExamReport, figures: dict[str, Path], *names: tuple[str, str]) -> list[str]:
    """The named figures present, each marked UNTRUSTWORTHY when the run's health failed."""
    mark = untrustworthy(report)
    parts = []
    for name, alt in names:
        if name in figures:
            img = image(figures[name], alt)
            parts.append(f"<figure class=\"untrustworthy\">{img}<figcaption>{escape(UNTRUSTWORTHY_TAG)}: health "
                         "failed</figcaption></figure>" if mark else img)
    return parts


def _h2(title: str, report: ExamReport | None = None) -> str:
    """A section heading; with `report`, tagged UNTRUSTWORTHY when the run's health failed."""
    tag = (f" <span class=\"tag\">{escape(UNTRUSTWORTHY_TAG)}</span>"
           if report is not None and untrustworthy(report) else "")
    return f"<h2>{escape(title)}{tag}</h2>"


def html_front(report: ExamReport, figures: dict[str, Path]) -> list[str]:
    """Title, what was examined and by whom, the headline block and what went wrong (layout.py)."""
    health = report.health.status if report.health else "none"
    p = [f"<h1>{escape(report_title(report))}</h1>",
         "<p class=\"examined\">" + "<br>".join(escape(line) for line in examined_lines(report)) + "</p>",
         "<section class=\"headline\" id=\"headline\"><h2>Headline</h2>"]
    if notice := stop_notice(report):
        p.append(f"<p class=\"untrustworthy\"><strong>{escape(notice)}</strong></p>")
    if untrustworthy(report):
        p.append(f"<p class=\"untrustworthy\"><strong>{escape(UNTRUSTWORTHY)}</strong></p>")
    p += [table(HEADLINE_HEADER, headline_rows(report)), f"<p>{escape(cost_line(report))}</p>",
          f"<p class=\"health-{escape(health)}\"><strong>{escape(health_line(report))}</strong></p></section>",
          "<section class=\"went-wrong\" id=\"went-wrong\"><h2>What went wrong</h2><ul>",
          *(f"<li>{escape(item)}</li>" for item in went_wrong(report)), "</ul></section>"]
    return p


def html_scores(report: ExamReport, figures: dict[str, Path]) -> list[str]:
    p = [_h2("Accuracy and coverage", report), f"<p class=\"note\">{SCORE_NOTE}</p>",
         table(SCORE_HEADER, score_rows(report))]
    p += [f"<p class=\"note\">{escape(line)}</p>" for line in small_sample_notes(report.targets.items())]
    if report.overrides:
        p += ["<h3>With people's overrides</h3>", f"<p class=\"note\">{escape(override_note(report.overrides))}</p>",
              table(OVERRIDE_HEADER, override_rows(report.overrides))]
    p += calibration_html(report.calibration, table)
    return p + _figures(report, figures, ("scores", "accuracy and coverage per target"))


def html_knowledge(report: ExamReport, figures: dict[str, Path]) -> list[str]:
    """Rates, calibration and topics per target, the knowledge map and the reliability diagram."""
    return knowledge_html(report, figures, table, lambda title: _h2(title, report), _figures, escape)


def html_qtypes(report: ExamReport, figures: dict[str, Path]) -> list[str]:
    header, rows = qtype_table(report)
    return [_h2("Accuracy per question type", report), table(header, rows),
            *_figures(report, figures, ("qtypes", "accuracy per question type"))]


def html_languages(report: ExamReport, figures: dict[str, Path]) -> list[str]:
    if not shows_languages(report.run):
        return []
    return [_h2("Accuracy per language", report), f"<p class=\"note\">{LANGUAGE_NOTE}</p>",
            table(LANGUAGE_HEADER, language_table(report))]


def html_clusters(report: ExamReport, figures: dict[str, Path]) -> list[str]:
    p = [_h2("Accuracy per cluster", report), f"<p class=\"note\">{escape(CLUSTER_NOTE)}</p>"]
    for name, t in report.targets.items():
        p += [f"<h3>{escape(name)}</h3>", table(CLUSTER_HEADER, cluster_rows(t))]
        note = cluster_note(t)
        if note:
            p.append(f"<p class=\"note\">{escape(note)}</p>")
    return p


INCORRECT_OPEN = 5
"""Incorrect units shown open per target; the rest are folded under one <details> (a click opens them): the
section was most of a report's height (a 49-unit demo report ran to about 12,000 px)."""


def html_incorrect(report: ExamReport, figures: dict[str, Path]) -> list[str]:
    p = [_h2("Incorrect units")]
    for name, t in report.targets.items():
        sample = t.incorrect_sample
        p.append(f"<h3>{escape(name)} ({sample.total})</h3>")
        p.append("<p>None.</p>" if not t.incorrect else f"<p class=\"note\">{escape(incorrect_note(sample))}</p>")
        for i, row in enumerate(t.incorrect):
            if i == INCORRECT_OPEN:
                p.append(f"<details class=\"more-wrong\"><summary>{len(t.incorrect) - INCORRECT_OPEN} more incorrect "
                         f"units of {escape(name)}</summary>")
            p += ["<div class=\"wrong\">",
                  f"<div><span class=\"label\">unit</span> <strong>{escape(row.unit_text)}</strong> "
                  f"<span class=\"note\"><code>{escape(row.unit_id)}</code>, round {row.round}</span></div>",
                  f"<div><span class=\"label\">question</span> {escape(row.question)}</div>",
                  f"<div><span class=\"label\">answer</span> {escape(row.answer_excerpt)}</div>",
                  f"<div><span class=\"label\">judge</span> {escape(row.reason)}</div>"]
            p += [passage_html(src) for src in row.sources]
            p.append("</div>")
        if len(t.incorrect) > INCORRECT_OPEN:
            p.append("</details>")
    return p


def html_convergence(report: ExamReport, figures: dict[str, Path]) -> list[str]:
    p = [_h2("Convergence"), *_figures(report, figures, ("convergence", "uncovered units left after each round")),
         table(["round", *[f"{n}: uncovered left" for n in report.targets]], convergence_rows(report)),
         _h2("Units targeted without coverage"),
         *_figures(report, figures, ("ignored", "histogram of times targeted without coverage"))]
    maps = [k for k in figures if k.startswith("map:")]
    if maps:
        p.append(_h2("Maps of the uncovered units") + "<p class=\"note\">2-D projection of each round's pool, "
                 "coloured by cluster; stars mark cluster centers. A large pool is drawn as a seeded sample of "
                 "whole clusters, and the map's title says how many points it shows.</p>")
        p += _figures(report, figures, *((key, f"map {key[4:]}") for key in maps))
    return p


def html_cost(report: ExamReport, figures: dict[str, Path]) -> list[str]:
    cost = report.cost
    return [_h2("Cost per unit (paper layout)"), f"<p class=\"note\">{cost_note(cost.units)}</p>",
            table(COST_HEADER, cost_rows(cost)), "<h3>Per role</h3>",
            table(["role", *GROUP_TAIL], group_rows(cost.by_role, ("role",))), "<h3>Per stage</h3>",
            table(["role", "stage", *GROUP_TAIL], group_rows(cost.by_stage, ("role", "stage"))),
            f"<h3>{PRICING_TITLE}</h3>", f"<p class=\"note\">{escape(PRICING_NOTE)}</p>", table(*pricing_table(cost))]


def html_baselines(report: ExamReport, figures: dict[str, Path]) -> list[str]:
    return [_h2("Classic baselines"),
            "<p class=\"note\">Correlation of each answer's score with its share of correct verdicts.</p>",
            table(BASELINE_HEADER, baseline_rows(report))]


def html_panel(report: ExamReport, figures: dict[str, Path]) -> list[str]:
    panel = report.judge_panel
    if not panel:
        return []
    return [_h2("Judge panel"), f"<p class=\"note\">{escape(PANEL_NOTE)}</p>",
            f"<p>Members: {escape(', '.join(panel.members))}; {panel.verdicts} verdicts, "
            f"{panel.tied_or_unscored} tied or unscored.</p>", table(PANEL_HEADER, panel_rows(panel))]


def html_cascade(report: ExamReport, figures: dict[str, Path]) -> list[str]:
    """The judge cascade (examiner/reporting/cascade_section.py); nothing without one."""
    return cascade_html(report.cascade, table)


def html_stopping(report: ExamReport, figures: dict[str, Path]) -> list[str]:
    """The stopping rule (examiner/reporting/stopping_section.py); nothing without one."""
    shown = _figures(report, figures, ("stopping", "accuracy and its anytime-valid interval against clusters asked"))
    return stopping_html(report.stopping, shown[0] if shown else None)


def html_wording(report: ExamReport, figures: dict[str, Path]) -> list[str]:
    """The wording check (examiner/reporting/wording_section.py); nothing without `--paraphrases`."""
    return wording_html(report.wording, table, lambda title: _h2(title, report))


def html_bias(report: ExamReport, figures: dict[str, Path]) -> list[str]:
    """The judge bias audit (examiner/reporting/bias_render.py)."""
    return bias_html(report.bias_audit, table)


def html_health(report: ExamReport, figures: dict[str, Path]) -> list[str]:
    """The health checks in full (the headline gives their verdict in one line)."""
    return ["<section id=\"health\">", *health_html(report.health, table), "</section>"]


def html_run(report: ExamReport, figures: dict[str, Path]) -> list[str]:
    run, graph = report.run, provenance_line(report)
    p = [_h2("Run"), "<dl class=\"run\">"]
    for key, value in [*run_lines(run), *([graph] if graph else [])]:
        cls = f" class=\"status-{escape(run.status)}\"" if key == "status" else ""
        p.append(f"<dt>{escape(key)}</dt><dd{cls}>{escape(str(value))}</dd>")
    return [*p, "</dl>"]


def html_counts(report: ExamReport, figures: dict[str, Path]) -> list[str]:
    c = report.counts
    p = [_h2("Skipped, unparseable, rejected, ignored"),
         table(["what", "count"], [[label, getattr(c, key)] for key, label in COUNT_LABELS])]
    if c.skipped_file_list:
        p.append("<ul>" + "".join(f"<li><code>{escape(i.path)}</code>: {escape(i.reason)}</li>"
                                  for i in c.skipped_file_list) + "</ul>")
    if c.skipped_passage_list:
        p.append("<ul>" + "".join(f"<li>no unit from passage <code>{escape(i.passage_id)}</code> of "
                                  f"<code>{escape(i.document)}</code>: {escape(i.reason)}</li>"
                                  for i in c.skipped_passage_list) + "</ul>")
    more = skipped_note(c)
    gate = [line if line.startswith("<table") else f"<p>{escape(line)}</p>" for line in gate_lines(report, table) if line]
    return p + ([f"<p class=\"note\">{escape(more)}</p>"] if more else []) + gate


HTML_SECTIONS: list[HtmlSection] = [
    html_front,  # title, examined, headline, what went wrong: always first
    # details, in the order of markdown.MARKDOWN_SECTIONS; a new section is a function added here
    html_scores, html_stopping, html_wording, html_knowledge, html_qtypes, html_languages, html_clusters, html_incorrect, html_convergence,
    html_cost, html_baselines, html_panel, html_cascade, html_bias, html_health, html_run, html_counts,
]
"""report.html's sections in order."""


def render_html(report: ExamReport, figures: dict[str, Path]) -> str:
    """The whole report as one HTML page (HTML_SECTIONS in order); `figures` maps a figure name to its PNG."""
    p = ["<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
         f"<title>{escape(report_title(report))}</title><style>{CSS}</style></head><body>"]
    for section in HTML_SECTIONS:
        p += section(report, figures)
    p.append("</body></html>")
    return "\n".join(p)
