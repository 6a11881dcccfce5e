"""The knowledge section's figures: the knowledge map (each topic by accuracy and by hallucination rate)
and the reliability diagram (stated confidence against the share right), PNGs as figures.py draws them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from examiner.reporting.figures import _save, shown  # first: it sets matplotlib's Agg backend

import matplotlib.pyplot as plt  # noqa: E402

MAP_LABELS = 8
"""Topics named on the knowledge map (the most hallucinating); the rest are points."""


def knowledge_map(knowledge: dict[str, Any], path: Path) -> Path | None:
    """One panel per target: each exam cluster a point at (accuracy, hallucination rate), its size the units
    asked; top right is where a target answers and invents. None when no target has a cluster row."""
    targets = {name: [r for r in k["topics"] if r["by"] == "cluster"] for name, k in knowledge.items()}
    targets = {name: rows for name, rows in targets.items() if rows}
    if not targets:
        return None
    fig, axes = plt.subplots(1, len(targets), figsize=(5.2 * len(targets), 4.2), squeeze=False)
    for ax, (name, rows) in zip(axes[0], targets.items()):
        xs = [r["accuracy"]["value"] or 0.0 for r in rows]
        ys = [r["hallucination_rate"]["value"] if r["hallucination_rate"]["value"] is not None else 0.0 for r in rows]
        sizes = [20 + 12 * r["asked"] for r in rows]
        ax.scatter(xs, ys, s=sizes, alpha=0.55, color="#c62828", edgecolors="#333")
        stacked: dict[tuple[float, float], int] = {}
        for r, x, y in list(zip(rows, xs, ys))[:MAP_LABELS]:
            k = stacked.get((round(x, 2), round(y, 2)), 0)  # topics on one point: their names one under another
            stacked[(round(x, 2), round(y, 2))] = k + 1
            ax.annotate(shown(str(r["topic"]))[:28], (x, y), fontsize=7, xytext=(4, 3 - 9 * k),
                        textcoords="offset points")
        ax.set_xlim(-0.05, 1.05)
        ax.set_ylim(-0.05, 1.05)
        ax.set_xlabel("accuracy (correct among asked)")
        ax.set_ylabel("hallucination rate (wrong among attempted)")
        ax.set_title(f"{shown(name)}: topics (size = units asked)", fontsize=9)
        ax.grid(alpha=0.3)
    return _save(fig, path)


def reliability_diagram(knowledge: dict[str, Any], path: Path) -> Path | None:
    """Stated confidence (binned by tenths) against the share of those units answered right, per target;
    the diagonal is a calibrated target. None when no target stated a confidence."""
    targets = {name: k["reliability"] for name, k in knowledge.items() if k.get("reliability")}
    if not targets:
        return None
    fig, ax = plt.subplots(figsize=(4.6, 4.2))
    ax.plot([0, 1], [0, 1], color="#999", linestyle="--", linewidth=1, label="calibrated")
    for name, bins in targets.items():
        ece = knowledge[name]["overall"].get("ece")
        label = shown(name) + (f" (ECE {ece:.3f})" if ece is not None else "")
        ax.plot([b["confidence"] for b in bins], [b["right"] for b in bins], marker="o", label=label)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("stated confidence")
    ax.set_ylabel("share of attempted units right")
    ax.legend(fontsize=7, loc="upper left")
    ax.grid(alpha=0.3)
    return _save(fig, path)


__all__ = ["knowledge_map", "reliability_diagram"]
