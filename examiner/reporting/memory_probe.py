"""The memorisation probe's report in Markdown (`examiner probe-memory`): the figures per side with their
intervals (Min-K%++ among them where the target gave it), the AUROCs, what they do not show, and every
document's own figures."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from examiner.reporting.writer import cell

CAVEAT = ("The two sides differ in more than exposure: length, style and topic differ too, and a sentence "
          "that is easy to predict from its first half narrows the gap on either side. The figures are over "
          "documents with their intervals; no document or sentence is declared memorised or not.")
"""What every probe report says beside its figures."""

MIN_K_LABEL = "Min-K%++"


def min_k_computed(report: Mapping[str, Any]) -> bool:
    """Whether the report carries Min-K%++ figures."""
    info = report.get("min_k_plus_plus")
    return isinstance(info, Mapping) and bool(info.get("computed")) and "min_k_auroc" in report["summary"]


def min_k_note(report: Mapping[str, Any]) -> str:
    """What Min-K%++ is in this report and its AUROC line, or why it was not computed."""
    info = report.get("min_k_plus_plus")
    if not isinstance(info, Mapping) or not min_k_computed(report):
        reason = info.get("reason") if isinstance(info, Mapping) else None
        return f"Min-K%++ is not computed: {reason or 'no sentence was scored'}."
    s = report["summary"]
    return (f"Min-K%++ (Zhang et al., 2024; k = {info['k_percent']:g} %): each probed sentence, whole, is scored by "
            f"the mean of its lowest k % standardised token log-probabilities ({info['method']}); a document's "
            "figure is the mean over its sentences, higher reads as more like training text. AUROC of Min-K%++, "
            f"corpus over control documents: {interval(s['min_k_auroc'])}; mean Min-K%++, corpus minus control: "
            f"{interval(s['min_k_difference'])} (Welch).")


def interval(figure: Mapping[str, Any], digits: int = 3) -> str:
    """`mean [low, high]` of a figure with an interval."""
    value = figure.get("mean", figure.get("estimate", figure.get("auroc")))
    return f"{cell(value, digits)} [{cell(figure.get('low'), digits)}, {cell(figure.get('high'), digits)}]"


def side_rows(report: Mapping[str, Any]) -> list[tuple[str, ...]]:
    """(side, documents, sentences, guided, general, gap, exact guided/general, held-back words, and
    Min-K%++ where computed) per side: the columns of side_columns(report)."""
    rows = []
    for side, fig in report["summary"]["sides"].items():
        name = f"{side}: {report['sources'][side]}"
        row = (name, str(fig["documents"]), str(fig["sentences"]), interval(fig["guided_rouge_l"]),
               interval(fig["general_rouge_l"]), interval(fig["gap"]),
               f"{fig['guided_exact']} / {fig['general_exact']}", cell(fig["ending_words"]["mean"], 1))
        rows.append(row + ((interval(fig["min_k_plus_plus"]),) if min_k_computed(report) else ()))
    return rows


SIDE_COLUMNS = ("side", "documents", "sentences", "guided ROUGE-L", "general ROUGE-L", "gap (guided - general)",
                "exact guided / general", "words held back")


def side_columns(report: Mapping[str, Any]) -> tuple[str, ...]:
    """SIDE_COLUMNS, and Min-K%++ where the report has it."""
    return SIDE_COLUMNS + ((MIN_K_LABEL,) if min_k_computed(report) else ())


def headline(report: Mapping[str, Any]) -> str:
    """The AUROC line and the difference of the mean gaps."""
    s = report["summary"]
    return (f"AUROC of the gap, corpus over control documents: {interval(s['auroc'])} "
            f"({s['auroc']['probed']} vs {s['auroc']['control']} documents; 0.5 = no separation). "
            f"Mean gap, corpus minus control: {interval(s['difference'])} (Welch).")


def _table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return lines


def render_markdown(report: Mapping[str, Any]) -> str:
    """The whole report as Markdown."""
    out = [f"# Memorisation probe of {report['target']}", "",
           f"Guided versus general completion of held-back sentence halves, {report['per_document']} seeded "
           f"sentences per document at most (seed {report['seed']}), greedy; ROUGE-L F1 of each completion "
           "cut to the held-back half's length. Intervals are 95 % over documents.", "",
           *_table(side_columns(report), side_rows(report)), "", headline(report), "", min_k_note(report), "",
           CAVEAT, ""]
    if report.get("status") != "ok":
        out += [f"Status: {report['status']}; {report.get('failed', 0)} sentences have no completion "
                "(see completions.jsonl).", ""]
    out += [f"Calls {report['calls']} ({report.get('cache_hits', 0)} more answered from the response cache), tokens "
            f"{report['prompt_tokens']} in + {report['completion_tokens']} out, ${report['cost_usd']:.4f} "
            "(ledger.jsonl, `examiner cost`).", "", "## Per document", ""]
    extra = min_k_computed(report)
    rows = [(d["side"], d["document"], str(d["sentences"]), cell(d["guided_rouge_l"]), cell(d["general_rouge_l"]),
             cell(d["gap"]), f"{d['guided_exact']} / {d['general_exact']}",
             *((cell(d.get("min_k_plus_plus")),) if extra else ())) for d in report["documents"]]
    out += _table(("side", "document", "sentences", "guided", "general", "gap", "exact guided / general",
                   *((MIN_K_LABEL,) if extra else ())), rows)
    if report.get("skipped_documents"):
        out += ["", "Documents without a sentence to probe (no prose sentence of "
                f"{report['min_words']}-{report['max_words']} words): " + ", ".join(report["skipped_documents"])]
    return "\n".join(out) + "\n"


__all__ = ["CAVEAT", "MIN_K_LABEL", "SIDE_COLUMNS", "headline", "interval", "min_k_computed", "min_k_note",
           "render_markdown", "side_columns", "side_rows"]
