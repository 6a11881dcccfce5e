"""`examiner gate BASE NEW --margin M --sequential`: the paired sequential gate (examiner.stats.sequential)
over the two runs' exam clusters, replayed in a seeded random order, stopping at the first cluster after
which the difference's anytime-valid interval decides against the margin.

Why replay finished runs: the decision and the number of clusters it needed are what a sequential exam
of both targets would have reached and spent; the line says how many clusters that is against the
fixed-size gate, which reads them all. Each cluster contributes the units both runs covered with a
right-or-wrong verdict (units are grouped by their round-1 cluster in BASE, as `gate` groups them).

Its bounds bet on per-cluster differences and take no variance from outside them, so a wording variance
the runs measured (`--paraphrases`) is not in them; the line and --json say so, beside the variance the
fixed gate would add (examiner.api.gating), rather than leave the reader to think the decision used it.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

import numpy as np

from examiner.api.gating import GateOptions, _wording_variance, gate_runs
from examiner.core.errors import UserError
from examiner.stats.sequential import GATES, SequentialGate, sequential_gate

EXIT_CODES = {"not worse": 0, "worse": 1, "undecided": 3, "equivalent": 4}
"""`examiner gate --sequential`'s exit code per outcome (2 stays bad input or cannot decide)."""
SEQUENTIAL_VARIANCE = "betting bounds on per-cluster differences, blind to wording"
"""The variance the sequential gate's bounds use, in words: the spread of the per-cluster differences alone."""


@dataclass(frozen=True)
class SequentialGateResult:
    """The sequential decision and the two sides it read."""

    decision: SequentialGate
    base_run: str
    base_target: str
    new_run: str
    new_target: str
    seed: int
    wording_variance: float = math.nan
    """What the runs' measured wording adds to the difference's variance in the fixed gate (nan: not
    measured); the sequential bounds do not use it."""

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.decision.outcome]

    def line(self) -> str:
        """The CI line: the outcome, the clusters it needed of all, the difference and its interval."""
        d = self.decision
        level = f"{100 * (1 - d.alpha):g}%"
        bounds = (f"bounds [{d.lower:+.4f}, {d.upper:+.4f}], each anytime-valid at {level} alone"
                  if d.scheme == "one-sided" else f"{level} anytime-valid interval [{d.lower:+.4f}, {d.upper:+.4f}]")
        return (f"sequential gate {self.new_target} - {self.base_target} accuracy, margin {d.margin:g}: "
                f"{d.outcome.upper()} after {d.clusters} of {d.population} clusters "
                f"(the fixed-size gate reads all {d.population}); difference {d.estimate:+.4f}, {bounds}; "
                f"variance: {self.variance_text()}")

    def variance_text(self) -> str:
        """Which variance the bounds use, in words, and the measured wording variance they leave out."""
        if math.isfinite(self.wording_variance):
            return (f"{SEQUENTIAL_VARIANCE} (the runs measured it by rewording: the fixed gate adds "
                    f"+{self.wording_variance:.2g})")
        return f"{SEQUENTIAL_VARIANCE} (no --paraphrases in the runs)"

    def as_dict(self) -> dict[str, Any]:
        d = self.decision
        return {"outcome": d.outcome, "clusters": d.clusters, "clusters_total": d.population,
                "difference": d.estimate, "lower": d.lower, "upper": d.upper, "margin": d.margin, "alpha": d.alpha,
                "scheme": d.scheme, "seed": self.seed, "exit_code": self.exit_code,
                "variance": SEQUENTIAL_VARIANCE, "wording_measured": math.isfinite(self.wording_variance),
                "wording_variance": self.wording_variance if math.isfinite(self.wording_variance) else None,
                "base": {"run": self.base_run, "target": self.base_target},
                "new": {"run": self.new_run, "target": self.new_target}}


def cluster_totals(base: tuple[int | None, ...], new: tuple[int | None, ...],
                   clusters: tuple[str, ...]) -> dict[str, tuple[int, int, int]]:
    """Cluster -> (units both covered right or wrong, right in BASE, right in NEW)."""
    out: dict[str, list[int]] = {}
    for a, b, cluster in zip(base, new, clusters):
        if a is None or b is None:
            continue
        row = out.setdefault(cluster, [0, 0, 0])
        row[0] += 1
        row[1] += int(a)
        row[2] += int(b)
    return {k: (v[0], v[1], v[2]) for k, v in out.items()}


def sequential_gate_runs(options: GateOptions, seed: int = 0, scheme: str = "one-sided") -> SequentialGateResult:
    """Decide as `examiner gate --sequential` does; `scheme` as `--sequential-bounds` (examiner.stats.sequential
    GATES: "one-sided", the default, or "two-sided", the gate as first written)."""
    from examiner.reporting.paired import paired_units

    if not 0 < options.margin < 1:
        raise UserError(f"--sequential needs a --margin between 0 and 1 (e.g. 0.05), got {options.margin}")
    if scheme not in GATES:
        raise UserError(f"--sequential-bounds must be one of {', '.join(GATES)}, got {scheme!r}")
    if not 0.5 < options.level < 1:
        raise UserError(f"--level must lie between 0.5 and 1 (e.g. 0.95), got {options.level}")
    runs = gate_runs(options)
    base, new, base_target, new_target = runs.base, runs.new, runs.base_target, runs.new_target
    units = paired_units(base, base_target, new, new_target, subgroups=False)
    totals = cluster_totals(units.a, units.b, units.clusters)
    if not totals:
        raise UserError(f"{options.base} and {options.new} share no unit both judged right or wrong: "
                        "gate two runs over the same corpus")
    order = sorted(totals)
    random.Random(f"sequential-gate:{seed}").shuffle(order)
    sizes = np.array([totals[c][0] for c in order], dtype=float)
    decision = sequential_gate(np.array([totals[c][2] for c in order], dtype=float),
                               np.array([totals[c][1] for c in order], dtype=float), sizes, sizes,
                               margin=options.margin, alpha=round(1 - options.level, 12), scheme=scheme)
    return SequentialGateResult(decision, str(base.path), base_target, str(new.path), new_target, seed,
                                _wording_variance(options, base_target, new_target, units))


__all__ = ["EXIT_CODES", "SEQUENTIAL_VARIANCE", "SequentialGateResult", "cluster_totals", "sequential_gate_runs"]
