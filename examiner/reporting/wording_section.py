"""The exam report's "Wording check" section (report.json `wording`, report.md, report.html) from the
figures examiner/reporting/wording.py computes out of rewording.jsonl, the verdicts and the self-check,
with the check's size (clusters re-asked of round 1's, K) and its calls from the ledger.

Why a section of its own: a result that moves when the questions are reworded is not only the target's
knowledge; the reader sees how much of the accuracy spread is wording and how likely the targets' order
is to flip, beside the accuracy it qualifies. None for a run without `--paraphrases`."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict
from html import escape
from typing import Any

from examiner.core.stages import Stage
from examiner.llm.ledger import answered
from examiner.reporting.model.wording import WordingCheckSection
from examiner.reporting.run_reader import RunData
from examiner.reporting.wording import wording_section

TITLE = "Wording check"
PARTS_HEADER = ["target", "cluster", "wording", "judge", "answer noise", "total", "wording share", "questions",
                "paraphrased"]
PAIRS_HEADER = ["pair", "difference on round 1's units", "wording variance (unit)", "added to the difference's variance",
                "chance a rewording reverses the order"]
NOTE = ("Variance of one question's accuracy (round 1's questions as asked) in parts: between questions "
        "(cluster), the wording (a rewording moves all of a question's units together), the judge's marking "
        "(from the self-check; - when nothing was re-judged) and the answers' remaining noise "
        "(docs/STATISTICS.md section 11). A pair's difference here is on round 1's units (each asked once, in "
        "the wording the check starts from), not the final accuracy. The re-asked questions are never counted in "
        "accuracy.")


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _share(run: RunData) -> float | None:
    exam = run.config.get("exam") if isinstance(run.config, dict) else None
    value = exam.get("paraphrase_share") if isinstance(exam, dict) else None
    return float(value) if isinstance(value, int | float) else None


def exam_wording_section(run: RunData) -> dict[str, Any] | None:
    """The section's data; None when the run re-asked no question."""
    section = wording_section(run.path)
    if section is None:
        return None
    round_one = {q.cluster_id for q in run.questions.values()
                 if q.kind == "question" and q.round == 1 and q.status == "ok"}
    rows = [r for r in answered(run.ledger) if r.stage == Stage.REWORDING]
    return {"paraphrases": section.paraphrases, "share": _share(run), "clusters_total": len(round_one),
            "clusters_reasked": section.questions, "calls": len(rows),
            "cost_usd": round(sum(r.cost_usd for r in rows), 8),
            "targets": {t: {k: (_finite(v) if isinstance(v, float) else v) for k, v in asdict(p).items()}
                        for t, p in section.targets.items()},
            "pairs": [{k: (_finite(v) if isinstance(v, float) else v) for k, v in asdict(p).items()}
                      for p in section.pairs]}


def _number(value: float | None, spec: str = ".4f") -> str:
    return "-" if value is None else format(value, spec)


def wording_sentence(section: WordingCheckSection) -> str:
    """What was re-asked, how and at what cost."""
    share = "" if section.share is None else f" (share {section.share:g})"
    return (f"{section.clusters_reasked} of round 1's {section.clusters_total} clusters{share} had their question "
            f"re-asked in {section.paraphrases} other wordings, each answered by every target and judged: "
            f"{section.calls} calls (${section.cost_usd:.4f}).")


def parts_rows(section: WordingCheckSection) -> list[list[Any]]:
    return [[name, _number(p.cluster), _number(p.wording), _number(p.judge), _number(p.answer_noise),
             _number(p.total), _number(p.wording_share, ".0%"), p.questions, p.paraphrased]
            for name, p in section.targets.items()]


def pair_rows(section: WordingCheckSection) -> list[list[Any]]:
    return [[f"{p.b} - {p.a}", _number(p.difference, "+.3f"), _number(p.wording_variance),
             _number(p.added_variance, ".2g"), _number(p.rank_flip, ".0%")] for p in section.pairs]


Table = Callable[[list[str], list[list[Any]]], str]


def wording_markdown(section: WordingCheckSection | None, table: Table, mark: str = "") -> list[str]:
    """report.md's lines (none without the check); `mark` follows the heading (UNTRUSTWORTHY)."""
    if section is None:
        return []
    out = [f"## {TITLE}{mark}", "", wording_sentence(section), "", NOTE, "",
           table(PARTS_HEADER, parts_rows(section)), ""]
    return out + ([table(PAIRS_HEADER, pair_rows(section)), ""] if section.pairs else [])


def wording_html(section: WordingCheckSection | None, table: Table, heading: Callable[[str], str]) -> list[str]:
    """report.html's parts (none without the check); `heading` makes the (possibly UNTRUSTWORTHY) <h2>."""
    if section is None:
        return []
    out = [heading(TITLE), f"<p>{escape(wording_sentence(section))}</p>", f"<p class=\"note\">{escape(NOTE)}</p>",
           table(PARTS_HEADER, parts_rows(section))]
    return out + ([table(PAIRS_HEADER, pair_rows(section))] if section.pairs else [])


__all__ = ["TITLE", "exam_wording_section", "pair_rows", "parts_rows", "wording_html", "wording_markdown",
           "wording_sentence"]
