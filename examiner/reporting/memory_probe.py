"""The memorisation probe's report in Markdown (`examiner probe-memory`): the figures per side with their
intervals (Min-K%++ among them where the target gave it), the AUROCs, what they do not show, and every
document's own figures."""

from __future__ import annotations

from collections.abc import Sequence

from examiner.reporting.model.memory_probe import DocumentAuroc, DocumentMean, MeanDifference, MemoryProbeReport
from examiner.reporting.writer import cell

CAVEAT = ("The two sides differ in more than exposure: length, style and topic differ too, and a sentence "
          "that is easy to predict from its first half narrows the gap on either side. The figures are over "
          "documents with their intervals; no document or sentence is declared memorised or not.")
"""What every probe report says beside its figures."""

MIN_K_LABEL = "Min-K%++"


def min_k_computed(report: MemoryProbeReport) -> bool:
    """Whether the report carries Min-K%++ figures."""
    return report.min_k_computed


def min_k_note(report: MemoryProbeReport) -> str:
    """What Min-K%++ is in this report and its AUROC line, or why it was not computed."""
    info, s = report.min_k_plus_plus, report.summary
    if info is None or not report.min_k_computed or s.min_k_auroc is None or s.min_k_difference is None:
        return f"Min-K%++ is not computed: {(info.reason if info else None) or 'no sentence was scored'}."
    return (f"Min-K%++ (Zhang et al., 2024; k = {info.k_percent:g} %): each probed sentence, whole, is scored by "
            f"the mean of its lowest k % standardised token log-probabilities ({info.method}); a document's "
            "figure is the mean over its sentences, higher reads as more like training text. AUROC of Min-K%++, "
            f"corpus over control documents: {interval(s.min_k_auroc)}; mean Min-K%++, corpus minus control: "
            f"{interval(s.min_k_difference)} (Welch).")


def interval(figure: DocumentMean | DocumentAuroc | MeanDifference, digits: int = 3) -> str:
    """`mean [low, high]` of a figure with an interval."""
    value = (figure.mean if isinstance(figure, DocumentMean) else
             figure.auroc if isinstance(figure, DocumentAuroc) else figure.estimate)
    return f"{cell(value, digits)} [{cell(figure.low, digits)}, {cell(figure.high, digits)}]"


def side_rows(report: MemoryProbeReport) -> list[tuple[str, ...]]:
    """(side, documents, sentences, guided, general, gap, exact guided/general, held-back words, and
    Min-K%++ where computed) per side: the columns of side_columns(report)."""
    rows = []
    for side, fig in report.summary.sides.items():
        name = f"{side}: {report.sources[side]}"
        row = (name, str(fig.documents), str(fig.sentences), interval(fig.guided_rouge_l),
               interval(fig.general_rouge_l), interval(fig.gap),
               f"{fig.guided_exact} / {fig.general_exact}", cell(fig.ending_words.mean, 1))
        min_k = (interval(fig.min_k_plus_plus),) if report.min_k_computed and fig.min_k_plus_plus else ()
        rows.append(row + min_k)
    return rows


SIDE_COLUMNS = ("side", "documents", "sentences", "guided ROUGE-L", "general ROUGE-L", "gap (guided - general)",
                "exact guided / general", "words held back")


def side_columns(report: MemoryProbeReport) -> tuple[str, ...]:
    """SIDE_COLUMNS, and Min-K%++ where the report has it."""
    return SIDE_COLUMNS + ((MIN_K_LABEL,) if report.min_k_computed else ())


def headline(report: MemoryProbeReport) -> str:
    """The AUROC line and the difference of the mean gaps."""
    s = report.summary
    return (f"AUROC of the gap, corpus over control documents: {interval(s.auroc)} "
            f"({s.auroc.probed} vs {s.auroc.control} documents; 0.5 = no separation). "
            f"Mean gap, corpus minus control: {interval(s.difference)} (Welch).")


def _table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return lines


def render_markdown(report: MemoryProbeReport) -> str:
    """The whole report as Markdown."""
    out = [f"# Memorisation probe of {report.target}", "",
           f"Guided versus general completion of held-back sentence halves, {report.per_document} seeded "
           f"sentences per document at most (seed {report.seed}), greedy; ROUGE-L F1 of each completion "
           "cut to the held-back half's length. Intervals are 95 % over documents.", "",
           *_table(side_columns(report), side_rows(report)), "", headline(report), "", min_k_note(report), "",
           CAVEAT, ""]
    if report.status != "ok":
        out += [f"Status: {report.status}; {report.failed} sentences have no completion "
                "(see completions.jsonl).", ""]
    out += [f"Calls {report.calls} ({report.cache_hits} more answered from the response cache), tokens "
            f"{report.prompt_tokens} in + {report.completion_tokens} out, ${report.cost_usd:.4f} "
            "(ledger.jsonl, `examiner cost`).", "", "## Per document", ""]
    extra = report.min_k_computed
    rows = [(d.side, d.document, str(d.sentences), cell(d.guided_rouge_l), cell(d.general_rouge_l),
             cell(d.gap), f"{d.guided_exact} / {d.general_exact}",
             *((cell(d.min_k_plus_plus),) if extra else ())) for d in report.documents]
    out += _table(("side", "document", "sentences", "guided", "general", "gap", "exact guided / general",
                   *((MIN_K_LABEL,) if extra else ())), rows)
    if report.skipped_documents:
        out += ["", "Documents without a sentence to probe (no prose sentence of "
                f"{report.min_words}-{report.max_words} words): " + ", ".join(report.skipped_documents)]
    return "\n".join(out) + "\n"


__all__ = ["CAVEAT", "MIN_K_LABEL", "SIDE_COLUMNS", "headline", "interval", "min_k_computed", "min_k_note",
           "render_markdown", "side_columns", "side_rows"]
