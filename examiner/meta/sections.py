"""Meta-evaluation report: report.json, report.md and a self-contained report.html (written by the one
report writer, examiner/reporting/writer.py).

The HTML embeds the win-rate heatmap as a base64 PNG (matplotlib, Agg backend) so it can be mailed or
archived as one file; it also holds the Elo / Bradley-Terry tables with their intervals, the baseline
comparison and every debate transcript.
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import Any

from examiner.core.assessments import Debate
from examiner.core.labels import preference_to_assistant
from examiner.meta.pipeline import MetaRun
from examiner.reporting.html import table as html_table
from examiner.reporting.markdown import table as md_table
from examiner.reporting.writer import cell, dumps, write_report


def _verdict(d: Debate) -> str:
    """A debate's verdict as the referee gave it (Assistant1 / Assistant2 / equally good)."""
    return preference_to_assistant(d.verdict) if d.verdict is not None else "none"


def ranking_rows(run: MetaRun) -> list[dict[str, Any]]:
    """One row per evaluator: baseline, overall win rate, Elo (mean, std, min-max), BT rating and interval."""
    r = run.rankings
    base = run.baseline.get("scores", {})
    elo = {x["player"]: x for x in r.get("elo", {}).get("ratings", [])}
    bt = {x["player"]: x for x in r.get("bradley_terry", {}).get("ratings", [])}
    overall = r.get("win_rates", {}).get("overall_win_rate", {})
    means = r.get("mean_scores", {})
    order = [x["player"] for x in r.get("elo", {}).get("ratings", [])] or list(run.config.evaluators)
    order += [e for e in run.config.evaluators if e not in order]
    rows = []
    for e in order:
        rows.append({
            "evaluator": e, "baseline": base.get(e), "win_rate": overall.get(e), "mean_score": means.get(e),
            "elo": elo.get(e, {}).get("mean"), "elo_std": elo.get(e, {}).get("std"),
            "elo_min": elo.get(e, {}).get("min"), "elo_max": elo.get(e, {}).get("max"),
            "bt": bt.get(e, {}).get("rating"), "bt_low": bt.get(e, {}).get("rating_low"),
            "bt_high": bt.get(e, {}).get("rating_high"),
        })
    return rows


def ranking_table(run: MetaRun) -> tuple[list[str], list[list[str]]]:
    """The ranking table as both report formats show it: header and formatted cells, one row per evaluator."""
    has_mean = bool(run.rankings.get("mean_scores"))
    header = ["evaluator", "baseline", "win rate"] + (["mean score"] if has_mean else []) + [
        "Elo (mean ± std)", "Elo min-max", "BT rating [95% CI]"]
    rows = []
    for row in ranking_rows(run):
        rows.append([row["evaluator"], cell(row["baseline"]), cell(row["win_rate"])]
                    + ([cell(row["mean_score"], 2)] if has_mean else [])
                    + [f"{cell(row['elo'], 1)} ± {cell(row['elo_std'], 1)}",
                       f"{cell(row['elo_min'], 1)}-{cell(row['elo_max'], 1)}",
                       f"{cell(row['bt'], 1)} [{cell(row['bt_low'], 1)}, {cell(row['bt_high'], 1)}]"])
    return header, rows


def agreement_table(run: MetaRun) -> tuple[list[str], list[list[str]]]:
    """Each ranking's agreement with the baseline ranking, formatted for both report formats."""
    rows = [[name, cell(a["kendall_tau"]), cell(a["spearman_rho"]), str(a["top1_match"])]
            for name, a in run.rankings.get("agreement", {}).items()]
    return ["ranking", "Kendall tau", "Spearman rho", "top-1 match"], rows


def gold_agreement_table(run: MetaRun) -> tuple[list[str], list[list[str]]] | None:
    """Verdict items with gold labels (people's overrides of an exam): each evaluator's agreement with
    them and Cohen's kappa (confusion tables in report.json); None when there are no such figures."""
    detail = run.baseline.get("detail", {})
    rows = [[e, str(d["with_gold"]), cell(d.get("correct", 0) / d["with_gold"] if d["with_gold"] else None),
             cell(d["cohen_kappa"])] for e, d in detail.items() if "cohen_kappa" in d]
    return (["evaluator", "items with gold", "agreement", "Cohen's kappa"], rows) if rows else None


def baseline_order(run: MetaRun) -> list[str]:
    scores = run.baseline.get("scores", {})
    return sorted(scores, key=lambda e: -scores[e])


def to_markdown(run: MetaRun) -> str:
    c, r = run.config, run.rankings
    metric = run.baseline.get("metric") or "none (no gold labels)"
    lines = [f"# Meta-evaluation ({c.method})", "",
             f"Items: {len(run.items)} ({run.items[0].kind if run.items else '-'}); evaluators: {', '.join(c.evaluators)}; "
             f"meta-judge: {c.meta_judge or 'meta_judge role default'}; seed {c.seed}; Elo shuffles {c.shuffles}.", ""]
    if run.problems:
        lines += ["## Problems", ""] + [f"- {p}" for p in run.problems] + [""]
    lines += ["## Ranking", "", f"Baseline metric: {metric}. Matches used: {r.get('matches', 0)}.", "",
              md_table(*ranking_table(run)), ""]
    if baseline_order(run):
        lines.append(f"Baseline order: {' > '.join(baseline_order(run))}")
    if r.get("elo"):
        lines.append(f"Elo order: {' > '.join(x['player'] for x in r['elo']['ratings'])}")
    lines.append("")
    if r.get("agreement"):
        lines += ["## Agreement with the baseline", "", md_table(*agreement_table(run)), ""]
    gold = gold_agreement_table(run)
    if gold:
        lines += ["## Agreement with the gold labels", "", md_table(*gold), ""]
    wr = r.get("win_rates")
    if wr:
        players = wr["players"]
        lines += ["## Win rates (row over column; ties excluded from wins)", "",
                  "| | " + " | ".join(players) + " |", "|---" * (len(players) + 1) + "|"]
        for p in players:
            lines.append(f"| {p} | " + " | ".join("-" if q == p else cell(wr["win_rate"][p][q]) for q in players) + " |")
        lines.append("")
    lines += ["## Counts", "", "```", dumps(run.counts), "```", "",
              "## Usage", "", "```", dumps(run.usage), "```", ""]
    if run.debates:
        shown = run.debates[:20]
        lines += [f"## Debates (first {len(shown)} of {len(run.debates)}; all in debates.jsonl)", ""]
        for d in shown:
            lines.append(f"### {d.judgment_id}: {d.rounds} round(s), {d.questions} question(s), verdict {_verdict(d)}"
                         + (" (forced)" if d.forced else ""))
            lines += [f"- r{t.round} {t.speaker} ({t.kind}): {t.text}" for t in d.turns] + [""]
    return "\n".join(lines)


def heatmap_png(run: MetaRun) -> str | None:
    """Base64 PNG of the win-rate matrix, or None when there are no matches."""
    wr = run.rankings.get("win_rates")
    if not wr:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    elo_order = [x["player"] for x in run.rankings.get("elo", {}).get("ratings", [])]
    players = [p for p in elo_order if p in wr["players"]] or wr["players"]  # best first
    m = np.array([[np.nan if p == q or wr["win_rate"][p][q] is None else wr["win_rate"][p][q] for q in players]
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


def to_html(run: MetaRun) -> str:
    esc = html.escape
    c, r = run.config, run.rankings
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>Meta-evaluation ({esc(c.method)})</title>",
             "<style>body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}"
             "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}"
             "td:first-child,th:first-child{text-align:left}.turn{margin:2px 0 2px 1em}.referee{color:#035}"
             ".problem{color:#a00}details{margin:4px 0}</style></head><body>",
             f"<h1>Meta-evaluation: {esc(c.method)}</h1>",
             f"<p>{len(run.items)} items; evaluators {esc(', '.join(c.evaluators))}; meta-judge "
             f"{esc(c.meta_judge or 'meta_judge role default')}; seed {c.seed}; {c.shuffles} Elo shuffles; "
             f"{r.get('matches', 0)} matches used.</p>"]
    if run.problems:
        parts.append("<h2>Problems</h2><ul>" + "".join(f"<li class='problem'>{esc(p)}</li>" for p in run.problems) + "</ul>")
    parts.append(f"<h2>Ranking</h2><p>Baseline: {esc(str(run.baseline.get('metric') or 'none (no gold labels)'))}</p>"
                 + html_table(*ranking_table(run)))
    if baseline_order(run):
        parts.append(f"<p>Baseline order: {esc(' > '.join(baseline_order(run)))}<br>")
        if r.get("elo"):
            parts.append(f"Elo order: {esc(' > '.join(x['player'] for x in r['elo']['ratings']))}</p>")
    if r.get("agreement"):
        parts.append("<h2>Agreement with the baseline</h2>" + html_table(*agreement_table(run)))
    gold = gold_agreement_table(run)
    if gold:
        parts.append("<h2>Agreement with the gold labels</h2>" + html_table(*gold))
    png = heatmap_png(run)
    if png:
        parts.append(f"<h2>Win rates</h2><img alt='win-rate heatmap' src='data:image/png;base64,{png}'>")
    parts.append(f"<h2>Counts</h2><pre>{esc(dumps(run.counts))}</pre>"
                 f"<h2>Usage</h2><pre>{esc(dumps(run.usage))}</pre>")
    if run.debates:
        parts.append(f"<h2>Debates ({len(run.debates)})</h2>")
        for d in run.debates:
            head = (f"{esc(d.judgment_id)}: {d.rounds} round(s), {d.questions} question(s), verdict "
                    f"{esc(_verdict(d))}{' (forced)' if d.forced else ''}")
            body = "".join(f"<div class='turn {t.speaker}'><b>r{t.round} {esc(t.speaker)}</b> ({esc(t.kind)}): "
                           f"{esc(t.text)}</div>" for t in d.turns)
            parts.append(f"<details><summary>{head}</summary>{body}</details>")
    parts.append("</body></html>")
    return "".join(parts)


def write_reports(run: MetaRun, out_dir: Path) -> dict[str, Path]:
    """report.json (strict: an undefined figure, e.g. a rank correlation against a tied baseline, is null
    with its reason), report.md and report.html in `out_dir`."""
    return write_report(out_dir, run.to_dict(), markdown=to_markdown(run), html=to_html(run))
