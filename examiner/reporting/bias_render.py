"""The judge bias audit section rendered the same way in every report (Markdown, HTML, the terminal): one
sentence per item, "not measured: <reason>" where its data do not exist, and the panel's kappa table."""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

from examiner.reporting.model.bias import BiasAudit, FlipRateItem, LengthSlopeItem, PanelItem, SelfPreferenceItem
from examiner.reporting.writer import cell

TITLE = "Judge bias audit"
NOTE = ("Intervals are 95 %. Flags: flip rate when its interval lies above 0.10; length slope when its interval "
        "excludes 0; self-preference when judge and judged model are the same model or family. Definitions: "
        "docs/STATISTICS.md, \"Judge bias audit\".")
PANEL_HEADER = ["member A", "member B", "units", "agreement", "Cohen's kappa", "95% CI", "interval"]
GAP_HEADER = ["judge", "own family: n", "mean", "others: n", "mean", "gap", "95% CI", "flag", "interval"]

Table = Callable[[list[str], list[list[Any]]], str]


def _interval(low: float | None, high: float | None, digits: int = 3) -> str:
    return f"[{cell(low, digits)}, {cell(high, digits)}]"


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.3f}"


def position_text(item: FlipRateItem) -> str:
    if not item.measured:
        return f"Position flips under swap: not measured: {item.reason}"
    flag = " FLAGGED" if item.flagged else ""
    return (f"Position flips under swap: {cell(item.rate)} {_interval(item.low, item.high)} ({item.flips} of "
            f"{item.pairs} pairs judged in both orders changed winner){flag}")


def length_text(item: LengthSlopeItem) -> str:
    if not item.measured:
        return f"Length slope: not measured: {item.reason}"
    verdict = ("FLAGGED: longer answers judged more favourably" if item.flagged and (item.slope or 0) > 0 else
               "FLAGGED: shorter answers judged more favourably" if item.flagged else "no detectable length effect")
    return (f"Length slope: {_signed(item.slope)} per {item.per} {item.length} {_interval(item.low, item.high)}, "
            f"{verdict} ({item.outcome}; n = {item.n}; {item.method})")


def self_text(item: SelfPreferenceItem) -> str:
    if not item.measured:
        return f"Self-preference: not measured: {item.reason}"
    if not item.matches:
        who = ", ".join(f"{j} ({m})" for j, m in item.judges.items())
        return f"Self-preference: none ({item.gap_reason}{'; judge ' + who if who else ''})"
    pairs = "; ".join(f"judge {m.judge} ({m.judge_model}) judges {m.target} ({m.target_model}): {m.match}"
                      for m in item.matches)
    gap = "" if item.gaps else f"; gap not measured: {item.gap_reason}"
    return f"Self-preference: FLAGGED: {pairs}{gap}"


def gap_rows(item: SelfPreferenceItem) -> list[list[str]]:
    return [[g.judge, str(g.n_self), cell(g.self_mean), str(g.n_other), cell(g.other_mean), _signed(g.gap),
             _interval(g.low, g.high), "FLAGGED" if g.flagged else "-", g.method or ""] for g in item.gaps]


def panel_text(item: PanelItem) -> str:
    if not item.measured:
        return f"Panel agreement: not measured: {item.reason}"
    return (f"Panel agreement: Fleiss' kappa {cell(item.fleiss_kappa)} over the {item.fleiss_n} units every "
            f"member labelled ({', '.join(item.members)})")


def panel_rows(item: PanelItem) -> list[list[str]]:
    return [[p.a, p.b, str(p.n), cell(p.agreement), cell(p.kappa), _interval(p.low, p.high), p.method or ""]
            for p in item.pairs]


def bias_markdown(audit: BiasAudit | None, table: Table) -> list[str]:
    """The section's Markdown lines (`table`: the Markdown table renderer)."""
    if audit is None:
        return [f"## {TITLE}", "", "Not computed for this report.", ""]
    lines = [f"## {TITLE}", "", f"- {position_text(audit.position)}", f"- {length_text(audit.length)}",
             f"- {self_text(audit.self_preference)}", f"- {panel_text(audit.panel)}", ""]
    if audit.self_preference.gaps:
        lines += [table(GAP_HEADER, gap_rows(audit.self_preference)), ""]
        lines += [audit.self_preference.note, ""] if audit.self_preference.note else []
    if audit.panel.pairs:
        lines += [table(PANEL_HEADER, panel_rows(audit.panel)), ""]
    return lines + [NOTE, ""]


def bias_html(audit: BiasAudit | None, table: Table) -> list[str]:
    """The section's HTML parts (`table`: the HTML table renderer)."""
    if audit is None:
        return [f"<h2>{TITLE}</h2><p>Not computed for this report.</p>"]
    items = "".join(f"<li>{escape(text)}</li>" for text in (
        position_text(audit.position), length_text(audit.length), self_text(audit.self_preference),
        panel_text(audit.panel)))
    parts = [f"<h2>{TITLE}</h2>", f"<ul>{items}</ul>"]
    if audit.self_preference.gaps:
        parts.append(table(GAP_HEADER, gap_rows(audit.self_preference)))
        if audit.self_preference.note:
            parts.append(f"<p class=\"note\">{escape(audit.self_preference.note)}</p>")
    if audit.panel.pairs:
        parts.append(table(PANEL_HEADER, panel_rows(audit.panel)))
    return parts + [f"<p class=\"note\">{escape(NOTE)}</p>"]


def bias_line(audit: BiasAudit | None) -> str | None:
    """One terminal line: each item's figure or `-`, and which items are flagged."""
    if audit is None:
        return None
    p, length, s, panel = audit.position, audit.length, audit.self_preference, audit.panel
    parts = [f"flips {cell(p.rate) if p.measured else '-'}",
             f"length slope {_signed(length.slope) + '/' + str(length.per) + ' tok' if length.measured else '-'}",
             f"self-preference {'yes' if s.flagged else 'no' if s.measured else '-'}",
             f"panel Fleiss kappa {cell(panel.fleiss_kappa) if panel.measured else '-'}"]
    flagged = [name for name, on in (("position", p.flagged), ("length", length.flagged), ("self-preference", s.flagged))
               if on]
    return "judge bias: " + ", ".join(parts) + (f" (FLAGGED: {', '.join(flagged)})" if flagged else "")


__all__ = ["TITLE", "bias_html", "bias_line", "bias_markdown", "length_text", "panel_text", "position_text",
           "self_text"]
