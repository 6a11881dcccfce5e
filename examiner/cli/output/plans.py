"""`examiner estimate --detect D / --half-width W`: the pilot's sample-size plans as terminal lines."""

from __future__ import annotations

from examiner.exam.plans import PilotPlans
from examiner.reporting.writer import cell


def plan_lines(result: PilotPlans) -> list[str]:
    """The plans as lines for the terminal."""
    d = result.design
    what = (f"the accuracy difference {result.targets[1]} - {result.targets[0]}" if len(result.targets) == 2
            else f"{result.targets[0]}'s accuracy")
    lines = [f"plan for {what}, from the pilot's {d.n_units} units in {d.n_documents} documents: per-unit variance "
             f"{d.unit_variance:.3f}, ICC within documents {cell(d.icc_documents, 2)}, within clusters "
             f"{cell(d.icc_clusters, 2)}"]
    for p in result.plans:
        if p.goal == "detect":
            goal = f"to detect {p.detect:.3f} with {p.power:.0%} power (two-sided, alpha {p.alpha:g})"
        else:
            goal = f"for a {1 - p.alpha:.0%} interval of half-width {p.half_width:.3f}"
        cost = "" if p.dollars is None else f", about ${p.dollars:,.2f}"
        lines.append(f"{goal}: {p.units:,} units in {p.documents:,} documents of {p.units_per_document:.1f} units "
                     f"(design effect {p.design_effect:.2f}){cost}")
        if p.units > result.corpus_units:
            lines.append(f"  more than the corpus's {result.corpus_units:,} units: a larger corpus is needed")
    return lines
