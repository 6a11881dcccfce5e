"""report.html: one self-contained page (inline CSS, figures as base64 PNG data URIs, no scripts).

Self-contained so that the file can be mailed, archived or opened offline and still show everything.
"""

from __future__ import annotations

import base64
from html import escape
from pathlib import Path
from typing import Any

from examiner.reporting.calibration_section import calibration_html
from examiner.reporting.bias_render import bias_html
from examiner.reporting.health_section import UNTRUSTWORTHY, failed, health_html
from examiner.reporting.markdown import (
    BASELINE_HEADER,
    CLUSTER_HEADER,
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
.note{color:#666;font-size:.9em}
.health-fail,.untrustworthy{color:#c62828}.health-warn{color:#b35900}.health-pass{color:#1a7f37}
code{font-size:.85em;background:#f3f3f3;padding:0 .2em}
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
    origin = {"corpus": "", "unit text": " <span class=\"note\">(unit text: corpus file unavailable)</span>"}.get(
        src.origin, f" <span class=\"note\">(from the {escape(src.origin)}: corpus file unavailable)</span>")
    page = f"page {escape(str(src.page))}, " if src.page is not None else ""
    return (f"<div><span class=\"label\">source</span> <code>{escape(src.document)}</code> "
            f"{page}chars {src.start}–{src.end}{origin}<blockquote>{body}</blockquote></div>")


def render_html(report: ExamReport, figures: dict[str, Path]) -> str:
    """The whole report as one HTML page; `figures` maps a figure name to its PNG file."""
    run = report.run
    p: list[str] = [
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<title>Exam report {escape(run.run_id)}</title><style>{CSS}</style></head><body>",
        f"<h1>Exam report: {escape(run.run_id)}</h1>",
        *health_html(report.health, table),
        "<dl class=\"run\">",
    ]
    graph = provenance_line(report)
    for key, value in [*run_lines(run), *([graph] if graph else [])]:
        cls = f" class=\"status-{escape(run.status)}\"" if key == "status" else ""
        p.append(f"<dt>{escape(key)}</dt><dd{cls}>{escape(str(value))}</dd>")
    p.append("</dl>")

    def fig(name: str, alt: str) -> None:
        if name in figures:
            p.append(image(figures[name], alt))

    p.append("<h2>Accuracy and coverage</h2>")
    if notice := stop_notice(report):
        p.append(f"<p class=\"untrustworthy\"><strong>{escape(notice)}</strong></p>")
    if failed(report.health):
        p.append(f"<p class=\"untrustworthy\"><strong>{escape(UNTRUSTWORTHY)}</strong></p>")
    p += [f"<p class=\"note\">{SCORE_NOTE}</p>",
          table(SCORE_HEADER, score_rows(report))]
    if report.overrides:
        p += ["<h3>With people's overrides</h3>", f"<p class=\"note\">{escape(override_note(report.overrides))}</p>",
              table(OVERRIDE_HEADER, override_rows(report.overrides))]
    p += calibration_html(report.calibration, table)
    fig("scores", "accuracy and coverage per target")
    header, rows = qtype_table(report)
    p += ["<h2>Accuracy per question type</h2>", table(header, rows)]
    fig("qtypes", "accuracy per question type")
    if shows_languages(run):
        p += ["<h2>Accuracy per language</h2>", f"<p class=\"note\">{LANGUAGE_NOTE}</p>",
              table(LANGUAGE_HEADER, language_table(report))]
    p.append("<h2>Accuracy per cluster</h2>")
    for name, t in report.targets.items():
        p += [f"<h3>{escape(name)}</h3>", table(CLUSTER_HEADER, cluster_rows(t))]
        note = cluster_note(t)
        if note:
            p.append(f"<p class=\"note\">{escape(note)}</p>")
    p.append("<h2>Convergence</h2>")
    fig("convergence", "uncovered units left after each round")
    p.append(table(["round", *[f"{n}: uncovered left" for n in report.targets]], convergence_rows(report)))
    p.append("<h2>Units targeted without coverage</h2>")
    fig("ignored", "histogram of times targeted without coverage")
    maps = [k for k in figures if k.startswith("map:")]
    if maps:
        p.append("<h2>Maps of the uncovered units</h2><p class=\"note\">2-D projection of each round's pool, "
                 "coloured by cluster; stars mark cluster centers. A large pool is drawn as a seeded sample of "
                 "whole clusters, and the map's title says how many points it shows.</p>")
        for key in maps:
            fig(key, f"map {key[4:]}")
    cost = report.cost
    p += ["<h2>Cost per unit (paper layout)</h2>", f"<p class=\"note\">{cost_note(cost.units)}</p>",
          table(COST_HEADER, cost_rows(cost)), "<h3>Per role</h3>",
          table(["role", *GROUP_TAIL], group_rows(cost.by_role, ("role",))), "<h3>Per stage</h3>",
          table(["role", "stage", *GROUP_TAIL], group_rows(cost.by_stage, ("role", "stage"))),
          f"<h3>{PRICING_TITLE}</h3>", f"<p class=\"note\">{escape(PRICING_NOTE)}</p>", table(*pricing_table(cost)),
          "<h2>Classic baselines</h2>",
          "<p class=\"note\">Correlation of each answer's score with its share of correct verdicts.</p>",
          table(BASELINE_HEADER, baseline_rows(report))]
    panel = report.judge_panel
    if panel:
        p += ["<h2>Judge panel</h2>", f"<p class=\"note\">{escape(PANEL_NOTE)}</p>",
              f"<p>Members: {escape(', '.join(panel.members))}; {panel.verdicts} verdicts, "
              f"{panel.tied_or_unscored} tied or unscored.</p>", table(PANEL_HEADER, panel_rows(panel))]
    p += bias_html(report.bias_audit, table)
    p.append("<h2>Incorrect units</h2>")
    for name, t in report.targets.items():
        sample = t.incorrect_sample
        p.append(f"<h3>{escape(name)} ({sample.total})</h3>")
        if not t.incorrect:
            p.append("<p>None.</p>")
        else:
            p.append(f"<p class=\"note\">{escape(incorrect_note(sample))}</p>")
        for row in t.incorrect:
            p += ["<div class=\"wrong\">",
                  f"<div><span class=\"label\">unit</span> <strong>{escape(row.unit_text)}</strong> "
                  f"<span class=\"note\"><code>{escape(row.unit_id)}</code>, round {row.round}</span></div>",
                  f"<div><span class=\"label\">question</span> {escape(row.question)}</div>",
                  f"<div><span class=\"label\">answer</span> {escape(row.answer_excerpt)}</div>",
                  f"<div><span class=\"label\">judge</span> {escape(row.reason)}</div>"]
            p += [passage_html(src) for src in row.sources]
            p.append("</div>")
    c = report.counts
    p += ["<h2>Skipped, unparseable, rejected, ignored</h2>",
          table(["what", "count"], [[label, getattr(c, key)] for key, label in COUNT_LABELS])]
    if c.skipped_file_list:
        p.append("<ul>" + "".join(f"<li><code>{escape(i.path)}</code>: {escape(i.reason)}</li>"
                                  for i in c.skipped_file_list) + "</ul>")
    if c.skipped_passage_list:
        p.append("<ul>" + "".join(f"<li>no unit from passage <code>{escape(i.passage_id)}</code> of "
                                  f"<code>{escape(i.document)}</code>: {escape(i.reason)}</li>"
                                  for i in c.skipped_passage_list) + "</ul>")
    more = skipped_note(c)
    if more:
        p.append(f"<p class=\"note\">{escape(more)}</p>")
    p.append("</body></html>")
    return "\n".join(p)
