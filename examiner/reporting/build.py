"""Build the exam report of one run directory once (an ExamReport), draw its figures, and write
report.json, report.md and report.html from it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from examiner.core.rundir import FIGURES
from examiner.reporting import figures as fg
from examiner.reporting.graph_limit import provenance_plan
from examiner.reporting.gate_section import exam_question_gate
from examiner.reporting.health_section import failed
from examiner.reporting.knowledge import exam_knowledge
from examiner.reporting.knowledge_figures import knowledge_map, reliability_diagram
from examiner.reporting.html import render_html
from examiner.reporting.markdown import render_markdown
from examiner.reporting.model import ExamReport
from examiner.reporting.with_overrides import overrides_summary
from examiner.reporting.calibration_section import exam_calibration
from examiner.reporting.bias_audit import exam_bias_audit
from examiner.reporting.cascade_section import exam_cascade_section
from examiner.reporting.endpoint_identity import endpoint_identities
from examiner.reporting.passed_section import exam_passed_text
from examiner.reporting.run_reader import load_run
from examiner.reporting.summary import summarize
from examiner.reporting.stopping_section import exam_stopping_section, stopping_figure
from examiner.reporting.wording_section import exam_wording_section
from examiner.reporting.writer import write_report


def build_report(run_dir: str | Path, *, map_rounds: list[int] | None = None, seed: int = 0,
                 health: Mapping[str, Any] | None = None) -> dict[str, Path]:
    """Write the reports of a run; returns {"json", "md", "html", "figure:<name>"...} -> path.

    map_rounds picks the rounds drawn in the 2-D maps (default: 1, 2 and the last). `health` is the
    run's health (examiner.exam.health, computed by the exam layer above this one): its verdict in every
    report's headline, and when it failed the headline and every figure (the PNGs too) are marked
    untrustworthy.
    """
    run = load_run(run_dir)
    summary = summarize(run, seed=seed)
    summary["overrides"] = overrides_summary(run, seed=seed)
    summary["calibration"] = exam_calibration(run, {t: f["accuracy"] for t, f in summary["targets"].items()})
    summary["health"] = dict(health) if health is not None else None
    summary["provenance"] = provenance_plan(run)
    summary["bias_audit"] = exam_bias_audit(run, seed=seed)
    summary["cascade"] = exam_cascade_section(run)
    summary["endpoints"] = {name: ident.model_dump() for name, ident in endpoint_identities(run).items()}
    summary["passed_text"] = exam_passed_text(run)
    summary["question_gate"] = exam_question_gate(run)
    summary["knowledge"] = exam_knowledge(run)
    summary["stopping"] = exam_stopping_section(run)
    summary["wording"] = exam_wording_section(run)
    out_dir = run.path
    fig_dir = out_dir / FIGURES
    pngs: dict[str, Path] = {}
    targets = summary["targets"]  # the figures take the plain per-target data
    if targets:
        pngs["scores"] = fg.scores_figure(targets, fig_dir / "scores.png")
        pngs["qtypes"] = fg.qtype_figure(targets, fig_dir / "qtypes.png")
        pngs["convergence"] = fg.convergence_figure(targets, fig_dir / "convergence.png")
        pngs["ignored"] = fg.ignored_figure(targets, fig_dir / "ignored.png")
    for name, draw in (("knowledge_map", knowledge_map), ("reliability", reliability_diagram)):
        drawn = draw(summary["knowledge"], fig_dir / f"{name}.png")
        if drawn is not None:
            pngs[name] = drawn
    for target in targets:
        path = fg.map_figure(run.clusters.get(target, []), target, fig_dir / f"map-{fg.slug(target)}.png",
                             map_rounds, seed=seed)
        if path is not None:
            pngs[f"map:{target}"] = path
    if summary["stopping"] is not None:
        pngs["stopping"] = stopping_figure(ExamReport.model_validate(summary).stopping,  # type: ignore[arg-type]
                                           fig_dir / "stopping.png")
    if failed(health):  # the mark travels with each PNG, not only with the page around it
        for png in pngs.values():
            fg.stamp_untrustworthy(png)
    summary["figures"] = {k: str(v.relative_to(out_dir)) for k, v in pngs.items()}
    report = ExamReport.model_validate(summary)
    paths: dict[str, Path] = write_report(out_dir, report, markdown=render_markdown(report),
                                          html=render_html(report, pngs), run_folder=True)
    paths.update({f"figure:{k}": v for k, v in pngs.items()})
    return paths
