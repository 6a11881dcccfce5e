"""The exam report's "Stopping rule" section from the run's sequence.json (written by the exam's
`--stop-when`, examiner/exam/stopping.py) and the ledger: the rule, the stop point, clusters asked of
the total, the calls and dollars the clusters not asked would have taken (estimated from the clusters
asked), and a figure of each target's estimate and interval against clusters asked."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from examiner.llm.ledger import answered
from examiner.reporting.model.stopping import StoppingSection
from examiner.reporting.run_reader import RunData

SEQUENCE_FILE = "sequence.json"
"""The run folder's record of the stopping rule and the sequences."""
TITLE = "Stopping rule"
NOT_EXAM = {"self_check"}
"""Ledger stages that are not the clusters' own work (the judge's self-check runs after the stop)."""


def exam_stopping_section(run: RunData) -> dict[str, Any] | None:
    """The section's data, None for a run without `--stop-when`."""
    path = Path(run.path) / SEQUENCE_FILE
    if not path.is_file():
        return None
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    rows = [r for r in answered(run.ledger) if r.stage not in NOT_EXAM]
    calls, cost = len(rows), sum(r.cost_usd for r in rows)
    asked, total = int(data["clusters_asked"]), int(data["clusters_total"])
    left = max(total - asked, 0)
    data.update(calls=calls, cost_usd=round(cost, 8),
                saved_calls=round(calls / asked * left, 1) if asked else None,
                saved_usd=round(cost / asked * left, 8) if asked else None)
    return data


def stopping_figure(section: StoppingSection, path: Path) -> Path:
    """Each target's accuracy estimate and anytime-valid interval against clusters asked, the stop marked."""
    from examiner.reporting.figures import DPI, shown  # first: it sets the Agg backend

    import matplotlib.pyplot as plt  # noqa: I001  (the chart library only when a figure is drawn)

    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    for name, target in section.targets.items():
        seq = target.accuracy
        if seq is None:
            continue
        x = list(range(1, len(seq.lower) + 1))
        line = ax.plot(x, [float("nan") if v is None else v for v in seq.estimate], label=shown(name))[0]
        ax.fill_between(x, seq.lower, seq.upper, alpha=0.2, color=line.get_color())
    if section.stopped_at is not None:
        ax.axvline(section.stopped_at, color="black", linestyle="--", linewidth=1,
                   label=f"rule {section.rule} met")
    ax.set_xlim(0, section.clusters_total)
    ax.set_ylim(0, 1)
    ax.set_xlabel(f"clusters asked (of {section.clusters_total})")
    ax.set_ylabel("accuracy")
    level = f"{100 * (1 - section.alpha):.0f}%"
    ax.set_title(f"accuracy and its anytime-valid bounds, each {level} alone" if section.rule.startswith("accuracy")
                 else f"accuracy and its {level} anytime-valid interval")
    ax.legend(fontsize=8)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def _money(value: float | None) -> str:
    return "-" if value is None else f"${value:.4f}"


def stopping_sentences(section: StoppingSection) -> list[str]:
    """The section's prose: the rule and where it stopped, the saving, then each target's interval there."""
    if section.stopped_at is None:
        where = f"not met: all {section.clusters_total} clusters asked"
    elif section.stopped_at >= section.clusters_total:
        where = f"met only when the clusters ran out ({section.clusters_total}): stopping saved nothing"
    else:
        where = f"met after {section.stopped_at} of {section.clusters_total} clusters"
    first = (f"Rule {section.rule} ({section.population}, {section.ordering} order): {where}; "
             f"{section.clusters_asked} asked in all (clusters in flight at the stop finished). "
             f"The clusters took {section.calls} calls ({_money(section.cost_usd)}); the "
             f"{section.clusters_total - section.clusters_asked} not asked would have taken about "
             f"{'-' if section.saved_calls is None else f'{section.saved_calls:.0f}'} calls "
             f"({_money(section.saved_usd)}), estimated from the clusters asked.")
    per_target = []
    for name, target in section.targets.items():
        if target.accuracy is not None and target.accuracy.lower:
            acc = target.accuracy
            est = acc.estimate[-1]
            per_target.append(f"{name}: accuracy {'-' if est is None else f'{est:.3f}'} "
                              f"[{acc.lower[-1]:.3f}, {acc.upper[-1]:.3f}]")
    level = f"{100 * (1 - section.alpha):.0f}%"
    valid = (f"each bound valid alone at {level} whenever the exam stops, as the threshold's call needs"
             if section.rule.startswith("accuracy") else f"{level} intervals valid whenever the exam stops")
    second = ((f"At the stop ({valid}, for the accuracy over {section.population}): ") + "; ".join(per_target)
              + ".") if per_target else ""
    third = ""
    if (diff := section.difference) is not None and diff.lower:
        third = (f"{diff.new} - {diff.base} (units both answered right or wrong), margin {diff.margin:g}: "
                 f"{diff.outcome.upper()}, difference "
                 f"{'-' if diff.estimate[-1] is None else f'{diff.estimate[-1]:+.3f}'} "
                 f"[{diff.lower[-1]:+.3f}, {diff.upper[-1]:+.3f}] (each bound valid alone at "
                 f"{100 * (1 - section.alpha):.0f}% whenever the exam stops) after {section.clusters_asked} clusters.")
    return [s for s in (first, second, third) if s]


def stopping_markdown(section: StoppingSection | None, figure: str | None) -> list[str]:
    if section is None:
        return []
    out = [f"## {TITLE}", ""]
    for sentence in stopping_sentences(section):
        out += [sentence, ""]
    return out + ([f"![sequence]({figure})", ""] if figure else [])


def stopping_html(section: StoppingSection | None, image: str | None) -> list[str]:
    """HTML parts; `image` is the figure's <img> element when drawn."""
    if section is None:
        return []
    return [f"<h2>{TITLE}</h2>", *(f"<p>{escape(s)}</p>" for s in stopping_sentences(section)),
            *([image] if image else [])]


def stopping_line(section: StoppingSection | None) -> str | None:
    """One terminal line."""
    if section is None:
        return None
    where = f"met at {section.stopped_at}" if section.stopped_at is not None else "not met"
    if section.difference is not None:
        where += f" ({section.difference.new} - {section.difference.base}: {section.difference.outcome})"
    return (f"stop-when {section.rule}: {where}; {section.clusters_asked} of {section.clusters_total} clusters "
            f"asked; saved about {'-' if section.saved_calls is None else f'{section.saved_calls:.0f}'} calls "
            f"({_money(section.saved_usd)}) against the full exam")


__all__ = ["SEQUENCE_FILE", "exam_stopping_section", "stopping_figure", "stopping_html", "stopping_line",
           "stopping_markdown", "stopping_sentences"]
