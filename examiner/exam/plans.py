"""Sample-size plans from `examiner estimate`'s pilot: how many units (and dollars) an exam needs to detect
a given difference with 80 % power, or to pin a figure to a given interval half-width.

Why from the pilot: the variance an exam's figures will have depends on how alike the verdicts of one
source document (and of one exam cluster) are, which only examining some of the corpus can measure. The
pilot's sample is such an exam, so examiner.stats.planning measures it (`design_from_pilot`: the per-unit
variance, the intraclass correlation within documents and within clusters) and plans from it (`plan`).

With two or more targets the plan is for the paired difference of the first two (what `examiner compare`
and `examiner gate` test); with one target it is for that target's accuracy (a change from a fixed value,
or its interval). The planned exam has the corpus's documents' size (its units per document); the dollars
are the estimate's predicted dollars per unit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from examiner.core import rundir
from examiner.core.errors import UserError
from examiner.stats.planning import Design, Plan, design_from_pilot, plan

POWER = 0.8
"""The power a `detect` plan asks for."""
ALPHA = 0.05
"""Two-sided test level of a `detect` plan; a half-width plan's interval is at 1 - ALPHA."""


@dataclass(frozen=True)
class PilotPlans:
    """What the pilot measured (`design`: of which targets) and a plan per goal asked for."""

    targets: tuple[str, ...]
    """The pilot's targets the design is of: one (its accuracy) or two (the difference second - first)."""
    design: Design
    plans: tuple[Plan, ...]
    corpus_units: int
    """Units in the whole corpus: a plan asking for more needs a larger corpus."""


def pilot_design(pilot_dir: str | Path) -> tuple[tuple[str, ...], Design]:
    """The design (variance, ICCs, document size) of the pilot's sample, from its run folder."""
    from examiner.reporting.paired import OUTCOME, paired_units
    from examiner.reporting.run_reader import load_run

    folder = Path(pilot_dir)
    sample = set(json.loads((folder / rundir.PILOT).read_text(encoding="utf-8")).get("units") or [])
    run = load_run(folder)
    targets = tuple(run.targets[:2])
    if not targets:
        raise UserError(f"the pilot in {folder} examined no target: there is nothing to plan from")
    units = paired_units(run, targets[0], run, targets[-1])
    keep = [i for i, unit_id in enumerate(units.unit_ids) if unit_id in sample]
    outcomes = {t: [OUTCOME.get(run.outcomes[t][units.unit_ids[i]].status) for i in keep] for t in targets}
    try:
        design = design_from_pilot(outcomes[targets[0]], [units.documents[i] for i in keep],
                                   [units.clusters[i] for i in keep],
                                   outcomes[targets[1]] if len(targets) == 2 else None)
    except ValueError as exc:
        raise UserError(f"cannot plan from the pilot in {folder}: {exc}") from None
    return targets, design


def pilot_plans(pilot_dir: str | Path, *, detect: float | None, half_width: float | None, corpus_units: int,
                corpus_documents: int, dollars_per_unit: float | None) -> PilotPlans:
    """A plan for each goal given (detect a difference, reach a half-width) from the pilot in `pilot_dir`,
    for documents the size of the corpus's."""
    for name, value in (("--detect", detect), ("--half-width", half_width)):
        if value is not None and not 0 < value < 1:
            raise UserError(f"{name} is an accuracy difference between 0 and 1 (e.g. 0.03), got {value}")
    targets, design = pilot_design(pilot_dir)
    size = corpus_units / corpus_documents if corpus_documents else None
    goals = [{"detect": detect}] if detect is not None else []
    goals += [{"half_width": half_width}] if half_width is not None else []
    try:
        plans = tuple(plan(design, power=POWER, alpha=ALPHA, units_per_document=size, cost_per_unit=dollars_per_unit,
                           **goal) for goal in goals)
    except ValueError as exc:
        raise UserError(f"cannot plan from the pilot in {pilot_dir}: {exc}") from None
    return PilotPlans(targets, design, plans, corpus_units)
