"""Build report.json, report.md, report.html and figures/*.png for one run directory."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from examiner.report import figures as fg
from examiner.report.html import render_html
from examiner.report.markdown import render_markdown
from examiner.report.store import load_run
from examiner.report.summary import summarize


def _clean(value: Any) -> Any:
    """JSON-safe: nan/inf -> None, dict keys -> str."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def build_report(run_dir: str | Path, *, map_rounds: list[int] | None = None, seed: int = 0) -> dict[str, Path]:
    """Write the reports of a run; returns {"json", "md", "html", "figure:<name>"...} -> path.

    map_rounds picks the rounds drawn in the 2-D maps (default: 1, 2 and the last).
    """
    run = load_run(run_dir)
    summary = summarize(run, seed=seed)
    out_dir = run.path
    fig_dir = out_dir / "figures"
    pngs: dict[str, Path] = {}
    targets = summary["targets"]
    if targets:
        pngs["scores"] = fg.scores_figure(targets, fig_dir / "scores.png")
        pngs["qtypes"] = fg.qtype_figure(targets, fig_dir / "qtypes.png")
        pngs["convergence"] = fg.convergence_figure(targets, fig_dir / "convergence.png")
        pngs["ignored"] = fg.ignored_figure(targets, fig_dir / "ignored.png")
    for target in targets:
        path = fg.map_figure(run.clusters.get(target, []), target, fig_dir / f"map-{fg.slug(target)}.png",
                             map_rounds)
        if path is not None:
            pngs[f"map:{target}"] = path
    summary["figures"] = {k: str(v.relative_to(out_dir)) for k, v in pngs.items()}
    paths = {
        "json": out_dir / "report.json",
        "md": out_dir / "report.md",
        "html": out_dir / "report.html",
    }
    paths["json"].write_text(json.dumps(_clean(summary), indent=2), encoding="utf-8")
    paths["md"].write_text(render_markdown(summary, summary["figures"]), encoding="utf-8")
    paths["html"].write_text(render_html(summary, pngs), encoding="utf-8")
    paths.update({f"figure:{k}": v for k, v in pngs.items()})
    return paths
