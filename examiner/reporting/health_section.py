"""The exam report's health section (report.json's `health`, computed by examiner.exam.health), rendered
the same way in Markdown, HTML and the terminal: its verdict in the report's headline (layout.py), its
checks in full among the details, and, when it failed, a warning on the headline and every figure."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from examiner.reporting.model.exam import HealthSection

Health = HealthSection | Mapping[str, Any]
"""The report's health section; a mapping (report.json's `health` as read by callers not yet on the
model) reads the same."""


def _plain(health: Health) -> Mapping[str, Any]:
    return health.model_dump() if isinstance(health, HealthSection) else health

HEALTH_HEADER = ["check", "status", "figure", "threshold", "measured", "examples"]
NEXT_STEP = ("Next: the failing checks in Health name the role at fault (questions: the examiner; answers: the "
             "target; reasons and verdicts: the judge); give that role a stronger model (--role examiner=ENDPOINT, "
             "--role judge=ENDPOINT, or roles: in the config) and run the exam again.")
"""What to do after an UNTRUSTWORTHY verdict, in one line under it."""
UNTRUSTWORTHY = ("UNTRUSTWORTHY: the exam's health check failed (see What went wrong and Health below), so "
                 "these figures describe a degenerate examiner or judge rather than the target's knowledge. "
                 + NEXT_STEP)
NOTE = ("Each check reads the run's own records (questions, answers, verdicts, the judge self-check) and "
        "compares one figure with its thresholds; any fail makes the health fail. Thresholds: docs/GUIDE.md, "
        "\"Exam health\".")


def failed(health: Health | None) -> bool:
    """Whether the run's health failed (the headline figures are then not to be trusted)."""
    return bool(health) and _plain(health).get("status") == "fail"  # type: ignore[arg-type]


def threshold_text(threshold: Mapping[str, Any] | None) -> str:
    if not threshold:
        return "-"
    sign = ">" if threshold.get("higher_is_worse", True) else "<"
    parts = [f"{level} {sign} {threshold[level]:g}" for level in ("warn", "fail") if threshold.get(level) is not None]
    return ", ".join(parts) or "-"


def figure_text(figure: float | None) -> str:
    return "-" if figure is None else f"{figure:.3f}"


def examples_text(examples: list[Mapping[str, Any]]) -> str:
    return "; ".join(f"{e['id']}: {e['text']}" for e in examples)


def health_rows(health: Health) -> list[list[str]]:
    """One row per check (HEALTH_HEADER); examples only where the check warned or failed."""
    health = _plain(health)
    return [[c["name"], c["status"], figure_text(c["figure"]), threshold_text(c.get("threshold")), c["detail"],
             examples_text(c["examples"]) if c["status"] in ("warn", "fail") else ""]
            for c in health["checks"]]


def headline(health: Health) -> str:
    """One line: the status and the checks that did not pass (a check not measured is named too: the run's
    status is then INCOMPLETE, not PASS)."""
    health = _plain(health)
    bad = [f"{c['name']} {c['status'].replace('_', ' ')}" for c in health["checks"]
           if c["status"] in ("warn", "fail", "not_measured")]
    return f"health: {health['status'].upper()}" + (f" ({', '.join(bad)})" if bad else "")


def self_agreement_text(health: Health) -> str:
    health = _plain(health)
    agreement = health["self_agreement"]
    if agreement["value"] is None:
        return "judge self-agreement: not measured (no re-judged unit)"
    interval = "" if agreement["low"] is None else f" [{agreement['low']:.3f}, {agreement['high']:.3f}]"
    return (f"judge self-agreement: {agreement['value']:.3f}{interval} ({agreement['agreed']} of "
            f"{agreement['compared']} units, {agreement['answers']} answers re-judged, units reordered)")


def health_markdown(health: Health | None, table: Any) -> list[str]:
    """The Markdown lines of the section (`table` is the Markdown table renderer)."""
    if not health:
        return ["## Health", "", "Not computed for this report.", ""]
    return ["## Health", "", f"**{headline(health)}**", "", self_agreement_text(health), "", NOTE, "",
            table(HEALTH_HEADER, health_rows(health)), ""]


def health_html(health: Health | None, table: Any) -> list[str]:
    """The HTML parts of the section (`table` is the HTML table renderer)."""
    if not health:
        return ["<h2>Health</h2><p>Not computed for this report.</p>"]
    health = _plain(health)
    return ["<h2>Health</h2>", f"<p class=\"health-{escape(health['status'])}\"><strong>{escape(headline(health))}"
            "</strong></p>", f"<p>{escape(self_agreement_text(health))}</p>", f"<p class=\"note\">{escape(NOTE)}</p>",
            table(HEALTH_HEADER, health_rows(health))]


__all__ = ["HEALTH_HEADER", "UNTRUSTWORTHY", "failed", "headline", "health_html", "health_markdown", "health_rows",
           "self_agreement_text"]
