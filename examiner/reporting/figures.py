"""The report's figures as PNG files (matplotlib, Agg backend: no display needed).

Each function draws one figure from the summary data (or, for the maps, the run's cluster rounds) and
returns the PNG path; build.py embeds the same bytes in report.html.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from examiner.core.plain_text import one_line  # noqa: E402
from examiner.core.records import ClusterRound  # noqa: E402

DPI = 110


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "target"


def shown(name: str) -> str:
    """A target's name as a figure draws it: one line, control characters as visible escapes (matplotlib
    warns with the raw character, which reaches the terminal), `$` as text rather than a formula's start."""
    return one_line(name).replace("$", r"\$")


def _save(fig: plt.Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def interval_caption(targets: dict[str, dict[str, Any]]) -> str:
    """The figure's caption: the method(s) that actually made the intervals shown (each estimate's `method`:
    the Wilson interval with design effect, t on documents - 1 df or on clusters - 1 df)."""
    methods = sorted({str(est["method"]) for target in targets.values() for key in ("accuracy", "coverage")
                      if isinstance(est := target.get(key), dict) and est.get("method")
                      and est.get("low") is not None})
    return "95% intervals" + (f": {'; '.join(methods)}" if methods else "")


def scores_figure(targets: dict[str, dict[str, Any]], path: Path) -> Path:
    """Accuracy and coverage per target with their 95% intervals, captioned with the method that made them."""
    names = list(targets)
    fig, axes = plt.subplots(1, 2, figsize=(max(6, 1.6 * len(names) + 3), 3.2))
    for ax, key in zip(axes, ("accuracy", "coverage")):
        values, lows, highs = [], [], []
        for name in names:
            est = targets[name][key]
            v = est["value"] if est["value"] is not None else 0.0
            values.append(v)
            lows.append(v - est["low"] if est["low"] is not None else 0.0)
            highs.append(est["high"] - v if est["high"] is not None else 0.0)
        ax.bar(range(len(names)), values, yerr=[lows, highs], capsize=4, color="#4c78a8")
        ax.set_xticks(range(len(names)), [shown(n) for n in names], rotation=20 if len(names) > 3 else 0)
        ax.set_ylim(0, 1.05)
        ax.set_title(key)
    fig.suptitle(interval_caption(targets), fontsize=9)
    return _save(fig, path)


def convergence_figure(targets: dict[str, dict[str, Any]], path: Path) -> Path:
    """Uncovered units left after each round, one line per target."""
    fig, ax = plt.subplots(figsize=(6, 3.2))
    for name, data in targets.items():
        rows = data["convergence"]
        ax.plot([r["round"] for r in rows], [r["remaining"] for r in rows], marker="o", label=shown(name))
    ax.set_xlabel("round")
    ax.set_ylabel("uncovered units left")
    ax.set_title("convergence")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.legend()
    return _save(fig, path)


def ignored_figure(targets: dict[str, dict[str, Any]], path: Path) -> Path:
    """How many units were targeted k times without being covered (grouped bars per target)."""
    fig, ax = plt.subplots(figsize=(6, 3.2))
    names = list(targets)
    ks = sorted({int(k) for d in targets.values() for k in d["ignored_histogram"]})
    width = 0.8 / max(len(names), 1)
    for j, name in enumerate(names):
        hist = {int(k): v for k, v in targets[name]["ignored_histogram"].items()}
        ax.bar([k + (j - (len(names) - 1) / 2) * width for k in ks], [hist.get(k, 0) for k in ks], width,
               label=shown(name))
    ax.set_xticks(ks)
    ax.set_xlabel("times targeted without coverage")
    ax.set_ylabel("units")
    ax.set_title("targeted without coverage")
    ax.legend()
    return _save(fig, path)


def qtype_figure(targets: dict[str, dict[str, Any]], path: Path) -> Path:
    """Accuracy per question type (types with no covered unit are left blank)."""
    fig, ax = plt.subplots(figsize=(7, 3.2))
    names = list(targets)
    qtypes = [r["qtype"] for r in next(iter(targets.values()))["per_qtype"]] if targets else []
    width = 0.8 / max(len(names), 1)
    for j, name in enumerate(names):
        rows = {r["qtype"]: r for r in targets[name]["per_qtype"]}
        xs = [i + (j - (len(names) - 1) / 2) * width for i in range(len(qtypes))]
        ys = [rows[q]["accuracy"] if rows.get(q) and rows[q]["accuracy"] is not None else 0.0 for q in qtypes]
        ax.bar(xs, ys, width, label=shown(name))
    ax.set_xticks(range(len(qtypes)), qtypes)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("accuracy")
    ax.set_title("accuracy per question type")
    ax.legend()
    return _save(fig, path)


def default_map_rounds(rounds: list[ClusterRound]) -> list[int]:
    """Rounds 1, 2 and the last one (those that exist)."""
    present = [r.round for r in rounds if r.projection]
    chosen = [r for r in (1, 2) if r in present]
    if present and present[-1] not in chosen:
        chosen.append(present[-1])
    return chosen


MAP_POINTS = 4000
"""Most points one map draws. A larger pool is drawn as a seeded sample of whole clusters (each with its
starred center), and the map's title says "N of M points shown": a map of 200,000 points is a blot that
takes minutes to draw, while a few thousand show the shape of the pool."""


@dataclass(frozen=True)
class MapSample:
    """What one round's map draws: (index of the cluster in the round, its drawn member ids) pairs."""

    clusters: list[tuple[int, list[str]]]
    shown: int
    """Points drawn."""
    total: int
    """Units in the round's pool."""

    @property
    def note(self) -> str:
        """"N of M points shown" when the map is a sample, else empty."""
        return f"{self.shown:,} of {self.total:,} points shown" if self.shown < self.total else ""


def map_sample(data: ClusterRound, cap: int = MAP_POINTS, seed: int = 0) -> MapSample:
    """The clusters one map draws: all of them when their projected points fit under `cap`, else whole
    clusters in a seeded random order while they fit (same run and seed, same map)."""
    drawable = [(j, [m for m in c.members if m in data.projection]) for j, c in enumerate(data.clusters)]
    drawable = [(j, pts) for j, pts in drawable if pts]
    total = sum(len(c.members) for c in data.clusters)
    if sum(len(pts) for _, pts in drawable) > cap:
        picked, room = [], cap
        for i in np.random.default_rng([seed, data.round]).permutation(len(drawable)).tolist():
            if len(drawable[i][1]) <= room:
                picked.append(i)
                room -= len(drawable[i][1])
                if room == 0:
                    break
        drawable = [drawable[i] for i in sorted(picked)]
    return MapSample(drawable, sum(len(pts) for _, pts in drawable), total)


def map_figure(rounds: list[ClusterRound], target: str, path: Path, chosen: list[int] | None = None,
               *, seed: int = 0, cap: int = MAP_POINTS) -> Path | None:
    """2-D projection of the pool's units at chosen rounds, coloured by cluster, centers starred; at most
    `cap` points per map (see MAP_POINTS)."""
    by_round = {r.round: r for r in rounds}
    chosen = [r for r in (chosen or default_map_rounds(rounds)) if r in by_round and by_round[r].projection]
    if not chosen:
        return None
    fig, axes = plt.subplots(1, len(chosen), figsize=(3.6 * len(chosen), 3.4), squeeze=False)
    for ax, rnd in zip(axes[0], chosen):
        data = by_round[rnd]
        sample = map_sample(data, cap, seed)
        cmap = plt.get_cmap("tab10" if len(data.clusters) <= 10 else "tab20")
        points: dict[int, list[tuple[float, float]]] = {}  # by colour: one scatter per colour draws
        stars: dict[int, list[tuple[float, float]]] = {}  # fast and keeps markers on the pixel grid (small PNG)
        for j, members in sample.clusters:
            points.setdefault(j % cmap.N, []).extend(data.projection[m] for m in members)
            center = data.clusters[j].center
            if center in data.projection:
                stars.setdefault(j % cmap.N, []).append(data.projection[center])
        for colour, pts in points.items():
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=14, color=cmap(colour))
        for colour, pts in stars.items():
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=90, marker="*", color=cmap(colour),
                       edgecolors="black", linewidths=0.6)
        title = f"round {rnd}: {sample.total} units, {len(data.clusters)} clusters"
        ax.set_title(title + (f"\n{sample.note}" if sample.note else ""), fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle(f"uncovered units by cluster - {shown(target)}", fontsize=10)
    return _save(fig, path)


UNTRUSTWORTHY_STAMP = "UNTRUSTWORTHY: the exam's health check failed"
STAMP_BAND = 24
"""Height in pixels of the red band stamped above a figure of a run whose health failed."""


def stamp_untrustworthy(path: Path) -> Path:
    """Add a red UNTRUSTWORTHY band above a figure (in place), so the mark stays with the PNG wherever it is
    copied: report.md links the files, and a reader may take one out of the report."""
    from PIL import Image, ImageDraw, ImageFont  # Pillow comes with matplotlib

    with Image.open(path) as figure:
        image = figure.convert("RGB")
    out = Image.new("RGB", (image.width, image.height + STAMP_BAND), "#c62828")
    out.paste(image, (0, STAMP_BAND))
    try:
        font: Any = ImageFont.load_default(size=15)
    except TypeError:  # Pillow before 10.1: the small bitmap font
        font = ImageFont.load_default()
    ImageDraw.Draw(out).text((8, 3), UNTRUSTWORTHY_STAMP, fill="white", font=font)
    out.save(path)
    return path
