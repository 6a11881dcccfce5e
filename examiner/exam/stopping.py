"""`--stop-when`: an exam that stops asking once its answer is known, with an interval valid at the stop.

The rule (`width<=W`, `accuracy>=A`, `accuracy<=A`) is read against each target's anytime-valid
confidence sequence for accuracy (examiner.stats.sequential) over round 1's clusters, asked in a seeded
random order. Why round 1 only: its clusters split every unit of the corpus once per target, so they are
a finite population whose accuracy is the exam's, and a uniformly random order is what the sequence's
guarantee needs; later rounds re-ask what round 1 left uncovered, chosen by what it found, which no
random order covers. A run with a stopping rule is therefore one round (docs/METHODS.md). A threshold
rule's call rests on one bound, so it reads bounds each valid alone (`StopRule.sides`); a width rule
reads the joint interval.

The sequence is fed in the asking order, not the order chains finish in (a slow chain, with more
probes, may be a harder cluster): `StopWatch.done` holds finished clusters until every cluster asked
before them is done, so the sequence at each point is the one a strictly sequential exam would have, and
the rule is read after each cluster of that prefix (never only where the prefix jumped to), so the stop
point is a function of the clusters' results, not of which chain finished first.

Which clusters are asked is also a function of the results alone: the cluster at place j of the order
starts only once the first j - `window` clusters are done, and once the rule is met at prefix k exactly
the first k + `window` clusters are asked (those that could have started before the stop, each of them
whether or not it had started yet), never more. So a run killed and resumed, or one whose calls take
other times, asks the same clusters and stops at the same point as any other run with its settings; and
the interval printed at the end, over all k + `window` clusters, is still valid there: k + `window` is a
stopping time (decided by the first k clusters), and a confidence sequence holds at any stopping time.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from examiner.core.errors import UserError
from examiner.reporting.stopping_section import SEQUENCE_FILE
from examiner.stats.sequential import GATES, Sequence, confidence_sequence, gate_outcome

_RULE = re.compile(r"^\s*(width|accuracy)\s*(<=|>=)\s*([0-9]*\.?[0-9]+)\s*$")
_DECIDED = re.compile(r"^\s*decided\s*:\s*([0-9]*\.?[0-9]+)\s*$")


@dataclass(frozen=True)
class StopRule:
    """A parsed `--stop-when`: `kind` width or accuracy, `op` <= or >=, `value` in (0, 1)."""

    kind: str
    op: str
    value: float

    @property
    def text(self) -> str:
        return f"decided:{self.value:g}" if self.kind == "decided" else f"{self.kind}{self.op}{self.value:g}"

    @property
    def sides(self) -> str:
        """How the accuracy bounds hold (examiner.stats.sequential `sides`): a threshold rule's call rests
        on one bound ("at least A" on the lower, "below A" on the upper), so each bound alone at the level
        ("each"); a width rule needs both together ("joint")."""
        return "each" if self.kind == "accuracy" else "joint"

    def met(self, lower: float, upper: float) -> bool:
        """Whether an accuracy interval settles the rule: narrow enough, or wholly on one side of the threshold."""
        if self.kind == "width":
            return upper - lower <= self.value + 1e-12
        return lower >= self.value or upper < self.value if self.op == ">=" else upper <= self.value or lower > self.value


def parse_rule(text: str) -> StopRule:
    """`width<=W`, `accuracy>=A`, `accuracy<=A` or `decided:M` (W, A, M in (0, 1)); anything else is a
    UserError."""
    decided = _DECIDED.match(text)
    if decided is not None:
        margin = float(decided.group(1))
        if not 0 < margin < 1:
            raise UserError(f"--stop-when {text}: the margin must lie strictly between 0 and 1")
        return StopRule("decided", ":", margin)
    match = _RULE.match(text)
    if match is None or (match.group(1) == "width" and match.group(2) != "<="):
        raise UserError(f"--stop-when {text}: expected width<=W, accuracy>=A, accuracy<=A or decided:M")
    value = float(match.group(3))
    if not 0 < value < 1:
        raise UserError(f"--stop-when {text}: the value must lie strictly between 0 and 1")
    return StopRule(match.group(1), match.group(2), value)


def asking_order(cluster_ids: list[str], seed: int) -> list[str]:
    """Round 1's clusters in the seeded random order they are asked in (the same on a resume)."""
    order = sorted(cluster_ids)
    random.Random(f"stop-when:{seed}").shuffle(order)
    return order


@dataclass
class Tally:
    """One asked cluster's units for one target: right, right or wrong (answered with a claim), all."""

    correct: int = 0
    answered: int = 0
    units: int = 0
    right: dict[str, bool] = field(default_factory=dict)
    """Unit id -> right (True) or wrong (False), for the units answered right or wrong."""


@dataclass
class StopWatch:
    """Round 1's sequences while it runs: which clusters are asked in which order, what they gave."""

    rule: StopRule
    order: list[str]
    sizes: dict[str, dict[str, int]]
    """target -> cluster id -> the cluster's units for that target (the population)."""
    alpha: float = 0.05
    tallies: dict[str, dict[str, Tally]] = field(default_factory=dict)
    """cluster id -> target -> its tally, for finished clusters."""
    prefix: int = 0
    """Clusters at the front of `order` that are all finished (the sequence's length)."""
    window: int = 1
    """How far beyond the finished prefix a cluster may start (the clusters in flight)."""
    stopped_at: int | None = None
    """The prefix length at which the rule was first met for every target."""
    halted: bool = False
    """A chain failed or the budget ran out: no cluster waiting to start starts (a resume asks them)."""

    @property
    def met(self) -> bool:
        return self.stopped_at is not None

    def may_start(self, position: int) -> bool:
        """Whether the cluster at `position` of the order need wait no longer: the prefix is close enough,
        or the rule is met or the exam halted (then `asks` says whether it is asked)."""
        return self.met or self.halted or self.prefix >= position - self.window

    def asks(self, position: int) -> bool:
        """Whether the cluster at `position` is asked: before the stop every one is; after it, the first
        `stopped_at` + `window` (those that could have started before the stop), whatever started meanwhile."""
        if self.halted:
            return False
        return self.stopped_at is None or position < self.stopped_at + self.window

    def done(self, cluster_id: str, tallies: dict[str, Tally]) -> None:
        """A finished cluster; the sequence moves on over every finished cluster at the front of the order,
        and the rule is read after each of them."""
        self.tallies[cluster_id] = tallies
        while self.prefix < len(self.order) and self.order[self.prefix] in self.tallies:
            self.prefix += 1
            if self.stopped_at is None and self.rule_met():
                self.stopped_at = self.prefix

    def rule_met(self) -> bool:
        """Whether the rule holds on the current prefix (every target; with `decided:M`, the difference)."""
        if self.rule.kind == "decided":
            diff = self.difference()
            return diff is not None and gate_outcome(float(diff.lower[-1]), float(diff.upper[-1]),
                                                     self.rule.value) != "undecided"
        return all(self.rule.met(*self.interval(target)) for target in self.sizes)

    def difference(self) -> Sequence | None:
        """With `decided:M`: the paired sequence of the second target's accuracy minus the first's, over
        the units both answered right or wrong (None before any such unit); its bounds as the default
        sequential gate reads them (each valid alone: the calls are one-sided; examiner.stats.sequential)."""
        base, new = list(self.sizes)
        population = np.array([n for n in self.sizes[base].values() if n > 0], dtype=float)
        shifted, counted, units = [], [], []
        for cid in self.order[:self.prefix]:
            if cid not in self.sizes[base]:
                continue
            a, b = self.tallies[cid].get(base, Tally()), self.tallies[cid].get(new, Tally())
            both = set(a.right) & set(b.right)
            y = sum(b.right[u] for u in both) - sum(a.right[u] for u in both)
            shifted.append((y + len(both)) / 2)
            counted.append(len(both))
            units.append(max(a.units, 1))
        if not any(counted):
            return None
        sides, truncation = GATES["one-sided"]
        seq = confidence_sequence(np.array(shifted), np.array(units, dtype=float), population,
                                  denominators=np.array(counted, dtype=float), alpha=self.alpha, breaks=2000,
                                  sides=sides, truncation=truncation)
        return Sequence(2 * seq.estimate - 1, 2 * seq.lower - 1, 2 * seq.upper - 1, seq.alpha, seq.population)

    def arrays(self, target: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Correct, answered and units of the asked prefix in order, and the population's cluster sizes."""
        asked = [self.tallies[cid].get(target, Tally()) for cid in self.order[:self.prefix]
                 if cid in self.sizes[target]]
        population = np.array([n for n in self.sizes[target].values() if n > 0], dtype=float)
        correct = np.array([t.correct for t in asked], dtype=float)
        answered = np.array([t.answered for t in asked], dtype=float)
        units = np.array([max(t.units, 1) for t in asked], dtype=float)
        return correct, answered, units, population

    def interval(self, target: str) -> tuple[float, float]:
        """The target's current accuracy interval ((0, 1) before any cluster)."""
        correct, answered, units, population = self.arrays(target)
        if correct.size == 0:
            return 0.0, 1.0
        seq = confidence_sequence(correct, units, population, denominators=answered, alpha=self.alpha,
                                  sides=self.rule.sides)
        return float(seq.lower[-1]), float(seq.upper[-1])

    def record(self) -> dict[str, Any]:
        """What the report shows: the rule, the stop point, and per target the accuracy and coverage
        sequences over the clusters asked (estimate, lower, upper after each)."""
        targets: dict[str, Any] = {}
        for target in self.sizes:
            correct, answered, units, population = self.arrays(target)
            entry: dict[str, Any] = {"clusters_total": int(population.size)}
            if correct.size:
                acc = confidence_sequence(correct, units, population, denominators=answered, alpha=self.alpha,
                                          sides=self.rule.sides)
                cov = confidence_sequence(answered, units, population, alpha=self.alpha)
                for name, seq in (("accuracy", acc), ("coverage", cov)):
                    entry[name] = {"estimate": [_num(v) for v in seq.estimate],
                                   "lower": [round(float(v), 6) for v in seq.lower],
                                   "upper": [round(float(v), 6) for v in seq.upper]}
            targets[target] = entry
        decision: dict[str, Any] | None = None
        if self.rule.kind == "decided" and (diff := self.difference()) is not None:
            base, new = list(self.sizes)
            decision = {"base": base, "new": new, "margin": self.rule.value,
                        "outcome": gate_outcome(float(diff.lower[-1]), float(diff.upper[-1]), self.rule.value),
                        "estimate": [_num(v) for v in diff.estimate],
                        "lower": [round(float(v), 6) for v in diff.lower],
                        "upper": [round(float(v), 6) for v in diff.upper]}
        return {"rule": self.rule.text, "alpha": self.alpha, "difference": decision, "population": "round 1's clusters",
                "ordering": "seeded uniform random", "clusters_total": len(self.order),
                "clusters_asked": self.prefix, "stopped_at": self.stopped_at, "met": self.met, "targets": targets}

    def save(self, run_dir: Path) -> None:
        (run_dir / SEQUENCE_FILE).write_text(json.dumps(self.record(), indent=1) + "\n")


def _num(value: float) -> float | None:
    return None if not np.isfinite(value) else round(float(value), 6)


def read_sequence(run_dir: Path) -> dict[str, Any] | None:
    """A run's sequence record, None for a run without `--stop-when`."""
    path = run_dir / SEQUENCE_FILE
    if not path.is_file():
        return None
    data: dict[str, Any] = json.loads(path.read_text())
    return data


__all__ = ["SEQUENCE_FILE", "StopRule", "StopWatch", "Tally", "asking_order", "parse_rule", "read_sequence"]
