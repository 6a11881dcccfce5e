"""Meta-evaluation report: report.json, report.md and a self-contained report.html (written by the one
report writer, examiner/reporting/writer.py).

`meta_report` builds the report model (a MetaReport) once from a MetaRun; report.md, report.html,
report.json and the terminal summary (examiner.reporting.terminal.meta_summary) are rendered from it.
The HTML embeds the win-rate heatmap as a base64 PNG (matplotlib, Agg backend) so it can be mailed or
archived as one file; it also holds the Elo / Bradley-Terry tables with their intervals, the baseline
comparison and every debate transcript.
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path

from examiner.core.labels import preference_from_text, preference_to_assistant
from examiner.meta.pipeline import MetaRun
from examiner.reporting.bias_render import bias_html, bias_markdown
from examiner.reporting.html import table as html_table
from examiner.reporting.markdown import table as md_table
from examiner.reporting.meta_parts import (
    RANKING_NOTE,
    RankingRow,
    agreement_table,
    baseline_order,
    elo_order,
    gold_agreement_rows,
    rank_groups,
    ranking_rows as model_ranking_rows,
    ranking_table,
)
from examiner.reporting.model import MetaReport
from examiner.reporting.model.meta import DebateRecord, MetaConfigSection
from examiner.reporting.writer import cell, dumps, write_report


def meta_report(run: MetaRun) -> MetaReport:
    """The report of a meta-evaluation as its model (report.json's content)."""
    return MetaReport.model_validate(run.to_dict())


def _as_model(report: MetaReport | MetaRun) -> MetaReport:
    return report if isinstance(report, MetaReport) else meta_report(report)


def ranking_rows(report: MetaReport | MetaRun) -> list[RankingRow]:
    """One row per evaluator (see examiner.reporting.meta_parts.ranking_rows); a MetaRun, as
    examiner.api.meta and examiner/cli/output/meta.py pass it, is read through its report model."""
    return model_ranking_rows(_as_model(report))


def gold_agreement_table(report: MetaReport | MetaRun) -> tuple[list[str], list[list[str]]] | None:
    """Verdict items with gold labels (people's overrides of an exam): each evaluator's agreement with
    them and Cohen's kappa (confusion tables in report.json); None when there are no such figures. A
    MetaRun (as examiner/cli/output/meta.py passes it) is read through its report model."""
    rows = gold_agreement_rows(_as_model(report))
    return (["evaluator", "items with gold", "agreement [95% CI]", "Cohen's kappa"], rows) if rows else None


def _verdict(d: DebateRecord) -> str:
    """A debate's verdict as the referee gave it (Assistant1 / Assistant2 / equally good)."""
    return preference_to_assistant(preference_from_text(d.verdict)) if d.verdict is not None else "none"


def _counts_text(report: MetaReport) -> str:
    """The counts as report.json holds them (the fields the method set), for the Counts block."""
    return dumps(report.counts.model_dump(exclude_unset=True))


def _usage_text(report: MetaReport) -> str:
    usage = report.usage
    return dumps(usage if isinstance(usage, dict) else usage.model_dump(exclude_unset=True))


def meta_judge_name(config: MetaConfigSection) -> str:
    """`referee (model gpt-x)`: the endpoint that judged and its model; a report written before the run
    recorded them names the option given, or the role."""
    name = config.meta_judge_endpoint or config.meta_judge
    if name is None:
        return "the meta_judge role's endpoint (not recorded)"
    return f"{name} (model {config.meta_judge_model})" if config.meta_judge_model else name


def to_markdown(report: MetaReport) -> str:
    """report.md of a meta-evaluation, from its model."""
    c, r = report.config, report.rankings
    metric = report.baseline.metric or "none (no gold labels)"
    lines = [f"# Meta-evaluation ({c.method})", "",
             f"Items: {report.items} ({report.item_kind or '-'}); evaluators: {', '.join(c.evaluators)}; "
             f"meta-judge: {meta_judge_name(c)}; seed {c.seed}; Elo shuffles {c.shuffles}; "
             f"bootstrap rounds {c.bootstrap}.", ""]
    if report.problems:
        lines += ["## Problems", ""] + [f"- {p}" for p in report.problems] + [""]
    lines += ["## Ranking", "", f"Baseline metric: {metric}. Matches used: {r.matches}.", "",
              md_table(*ranking_table(report)), "", RANKING_NOTE, ""]
    lines += [f"- {g}" for g in rank_groups(report)] + ([""] if rank_groups(report) else [])
    if baseline_order(report):
        lines.append(f"Baseline order: {' > '.join(baseline_order(report))}")
    if r.elo:
        lines.append(f"Elo order: {' > '.join(elo_order(report))}")
    lines.append("")
    if r.agreement:
        lines += ["## Agreement with the baseline", "", md_table(*agreement_table(report)), ""]
    gold = gold_agreement_table(report)
    if gold:
        lines += ["## Agreement with the gold labels", "", md_table(*gold), ""]
    wr = r.win_rates
    if wr:
        players = wr.players
        lines += ["## Win rates (row over column; ties excluded from wins)", "",
                  "| | " + " | ".join(players) + " |", "|---" * (len(players) + 1) + "|"]
        for p in players:
            lines.append(f"| {p} | " + " | ".join("-" if q == p else cell(wr.win_rate[p][q]) for q in players) + " |")
        lines.append("")
    lines += bias_markdown(report.bias_audit, md_table) if report.bias_audit else []
    lines += ["## Counts", "", "```", _counts_text(report), "```", "",
              "## Usage", "", "```", _usage_text(report), "```", ""]
    if report.debates:
        shown = report.debates[:20]
        lines += [f"## Debates (first {len(shown)} of {len(report.debates)}; all in debates.jsonl)", ""]
        for d in shown:
            lines.append(f"### {d.judgment_id}: {d.rounds} round(s), {d.questions} question(s), verdict {_verdict(d)}"
                         + (" (forced)" if d.forced else ""))
            lines += [f"- r{t.round} {t.speaker} ({t.kind}): {t.text}" for t in d.turns] + [""]
    return "\n".join(lines)


def heatmap_png(report: MetaReport) -> str | None:
    """Base64 PNG of the win-rate matrix, or None when there are no matches."""
    wr = report.rankings.win_rates
    if not wr:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    players = [p for p in elo_order(report) if p in wr.players] or wr.players  # best first
    m = np.array([[np.nan if p == q or wr.win_rate[p][q] is None else wr.win_rate[p][q] for q in players]
                  for p in players], dtype=float)
    size = 1.2 + 0.8 * len(players)
    fig, ax = plt.subplots(figsize=(size + 1.5, size))
    im = ax.imshow(m, vmin=0, vmax=1, cmap="RdYlGn")
    ax.set_xticks(range(len(players)), players, rotation=45, ha="right")
    ax.set_yticks(range(len(players)), players)
    for i in range(len(players)):
        for j in range(len(players)):
            if not np.isnan(m[i, j]):
                ax.text(j, i, f"{m[i, j]:.2f}", ha="center", va="center", fontsize=9)
    ax.set_title("win rate of row over column (best first)")
    fig.colorbar(im, ax=ax, fraction=0.046)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def to_html(report: MetaReport) -> str:
    """report.html of a meta-evaluation, from its model (one file: the heatmap is embedded)."""
    esc = html.escape
    c, r = report.config, report.rankings
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>Meta-evaluation ({esc(c.method)})</title>",
             "<style>body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}"
             "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}"
             "td:first-child,th:first-child{text-align:left}.turn{margin:2px 0 2px 1em}.referee{color:#035}"
             ".problem{color:#a00}details{margin:4px 0}</style></head><body>",
             f"<h1>Meta-evaluation: {esc(c.method)}</h1>",
             f"<p>{report.items} items; evaluators {esc(', '.join(c.evaluators))}; meta-judge "
             f"{esc(meta_judge_name(c))}; seed {c.seed}; {c.shuffles} Elo shuffles; "
             f"{r.matches} matches used.</p>"]
    if report.problems:
        parts.append("<h2>Problems</h2><ul>" + "".join(f"<li class='problem'>{esc(p)}</li>" for p in report.problems)
                     + "</ul>")
    parts.append(f"<h2>Ranking</h2><p>Baseline: {esc(str(report.baseline.metric or 'none (no gold labels)'))}</p>"
                 + html_table(*ranking_table(report)) + f"<p>{esc(RANKING_NOTE)}</p>"
                 + "".join(f"<p>{esc(g)}</p>" for g in rank_groups(report)))
    if baseline_order(report):
        parts.append(f"<p>Baseline order: {esc(' > '.join(baseline_order(report)))}<br>")
        if r.elo:
            parts.append(f"Elo order: {esc(' > '.join(elo_order(report)))}</p>")
    if r.agreement:
        parts.append("<h2>Agreement with the baseline</h2>" + html_table(*agreement_table(report)))
    gold = gold_agreement_table(report)
    if gold:
        parts.append("<h2>Agreement with the gold labels</h2>" + html_table(*gold))
    png = heatmap_png(report)
    if png:
        parts.append(f"<h2>Win rates</h2><img alt='win-rate heatmap' src='data:image/png;base64,{png}'>")
    parts += bias_html(report.bias_audit, html_table) if report.bias_audit else []
    parts.append(f"<h2>Counts</h2><pre>{esc(_counts_text(report))}</pre>"
                 f"<h2>Usage</h2><pre>{esc(_usage_text(report))}</pre>")
    if report.debates:
        parts.append(f"<h2>Debates ({len(report.debates)})</h2>")
        for d in report.debates:
            head = (f"{esc(d.judgment_id)}: {d.rounds} round(s), {d.questions} question(s), verdict "
                    f"{esc(_verdict(d))}{' (forced)' if d.forced else ''}")
            body = "".join(f"<div class='turn {t.speaker}'><b>r{t.round} {esc(t.speaker)}</b> ({esc(t.kind)}): "
                           f"{esc(t.text)}</div>" for t in d.turns)
            parts.append(f"<details><summary>{head}</summary>{body}</details>")
    parts.append("</body></html>")
    return "".join(parts)


def write_reports(run: MetaRun, out_dir: Path, report: MetaReport | None = None) -> dict[str, Path]:
    """report.json (strict: an undefined figure, e.g. a rank correlation against a tied baseline, is null
    with its reason), report.md and report.html in `out_dir`, all from the one report model (`report`, or
    the run's, built here)."""
    report = report if report is not None else meta_report(run)
    return write_report(out_dir, report, markdown=to_markdown(report), html=to_html(report))


__all__ = ["gold_agreement_table", "heatmap_png", "meta_judge_name", "meta_report", "ranking_rows", "to_html", "to_markdown",
           "write_reports"]
