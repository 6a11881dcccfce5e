"""The regression gate as a library call: is a NEW run not worse than a BASE run by more than a margin?

Why a decision of its own: a CI pipeline needs one yes or no with a known error rate, not two intervals
to eyeball. The gate pairs the two targets on the units both runs hold (the same corpus gives the same
unit ids) and asks examiner.stats.paired.non_inferiority whether the one-sided lower bound of the accuracy
difference NEW - BASE lies above -margin (docs/STATISTICS.md section 1). When both runs re-asked questions in
other wordings (`--paraphrases`), the variance their wording adds widens the bound (section 11).

The gate reads each run as its report does: people's overrides (overrides.jsonl) in force. It refuses to
decide (a UserError: exit 2 on the command line) when either run's health failed, since the figures of a
degenerate examiner or judge would let a broken run pass; `allow_unhealthy` decides anyway and says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from examiner.api.settings import path_text
from examiner.core.errors import UserError
from examiner.stats.paired import NonInferiority

if TYPE_CHECKING:
    from examiner.reporting.run_reader import RunData


class GateOptions(BaseModel):
    """`examiner gate`: pass when NEW's accuracy is not below BASE's by more than `margin`."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    base: str
    """The run folder NEW is held against."""
    new: str
    """The run folder under test (may be BASE itself, with another target)."""
    margin: float
    """The largest drop in accuracy (absolute: 0.02 is two points) that still passes."""
    level: float = 0.95
    """Confidence of the one-sided decision: a NEW truly worse by more than the margin passes with
    probability at most 1 - level."""
    target: str | None = None
    """The target read in both runs (None: each run's only target)."""
    base_target: str | None = None
    """The target read in BASE (None: `target`)."""
    new_target: str | None = None
    """The target read in NEW (None: `target`)."""
    allow_unhealthy: bool = False
    """Decide even when a run's health failed (the decision's line then says so); False: refuse."""
    metric: Literal["accuracy", "correct_given_attempted", "hallucination_rate", "abstention_rate", "f_score",
                    "penalised_0.5", "penalised_0.75", "penalised_0.9", "ece", "brier", "aurc"] = "accuracy"
    """The figure decided on. A rate where lower is better (hallucination, abstention) is held as its
    complement: NEW passes when its rate is not above BASE's by more than `margin`; so is ECE, Brier or
    AURC, whose difference is negated. F and the penalised scores are decided on their paired cluster
    interval (examiner.reporting.knowledge_compare.figure_non_inferiority), the margin on their scale."""

    _paths = field_validator("base", "new", mode="before")(path_text)


@dataclass(frozen=True)
class GateResult:
    """The decision, and what it was made on."""

    decision: NonInferiority
    """passed, difference NEW - BASE, one-sided lower bound, margin, alpha, p-value, power, method."""
    base_run: str
    base_target: str
    new_run: str
    new_target: str
    shared_units: int
    base_health: str | None = None
    """BASE's health: pass, warn or fail (fail only with allow_unhealthy)."""
    new_health: str | None = None
    """NEW's health: pass, warn or fail (fail only with allow_unhealthy)."""
    overrides: int = 0
    """People's overrides in force in the two runs together (the decision reads the labels with them)."""
    metric: str = "accuracy"
    """The figure decided on; for a rate where lower is better the decision's figures are of its complement."""

    @property
    def passed(self) -> bool:
        return self.decision.passed

    def line(self) -> str:
        """One line for a CI log: PASS or FAIL, difference, lower bound against the margin, power; and,
        when a run's health failed (allowed), which."""
        failed = [side for side, health in (("BASE", self.base_health), ("NEW", self.new_health)) if health == "fail"]
        mark = f" [UNTRUSTWORTHY: {' and '.join(failed)} health FAILED, --allow-unhealthy]" if failed else ""
        return self.decision.line() + mark + self._metric_note()

    def _metric_note(self) -> str:
        if self.metric == "accuracy":
            return ""
        from examiner.stats.knowledge_intervals import LOWER_IS_BETTER

        if self.metric in LOWER_IS_BETTER:
            d = self.decision
            held = "1 - rate" if self.metric.endswith("_rate") else "its negative"
            return (f" [metric {self.metric}, held as {held}: NEW - BASE {-d.difference:+.4f}, upper bound "
                    f"{-d.lower_bound:+.4f} against +{d.margin}]")
        return f" [metric {self.metric}]"

    def as_dict(self) -> dict[str, Any]:
        """What `examiner gate --json` prints: the decision's figures and the two sides."""
        return {**self.decision.to_dict(),
                "base": {"run": self.base_run, "target": self.base_target, "health": self.base_health},
                "new": {"run": self.new_run, "target": self.new_target, "health": self.new_health},
                "shared_units": self.shared_units, "overrides": self.overrides, "metric": self.metric}


def _target(run: Any, asked: str | None, side: str) -> str:
    names = run.targets
    if asked is not None:
        if asked not in names:
            raise UserError(f"{side} run {run.path} has no target {asked!r} (it has: {', '.join(names) or 'none'})")
        return asked
    if len(names) != 1:
        raise UserError(f"{side} run {run.path} has targets {', '.join(names) or 'none'}: name one with --target "
                        f"(or --{side}-target)")
    return str(names[0])


def _health(run: Any, side: str, allow: bool) -> str:
    """The run's health status; a UserError when it failed and that is not allowed."""
    from examiner.exam.health import exam_health
    from examiner.reporting.health_section import headline

    health = exam_health(run).to_dict()
    if health["status"] == "fail" and not allow:
        raise UserError(f"cannot decide: {side} run's health FAILED ({run.path}: {headline(health)}); its figures "
                        "describe a degenerate examiner or judge (--allow-unhealthy decides anyway)")
    return str(health["status"])


def _wording_variance(options: GateOptions, base_target: str, new_target: str, units: Any) -> float:
    """What the questions' wording adds to the variance of NEW - BASE when the runs measured it
    (`--paraphrases`): its covariance between units of one round-1 question in different documents
    (examiner.stats.wording); nan when a run did not measure it (the decision is then blind to wording
    and says so)."""
    import math

    from examiner.reporting.wording import difference_wording_variance
    from examiner.stats.wording import cross_document_weight

    variance = difference_wording_variance(options.base, base_target, options.new, new_target)
    if not math.isfinite(variance):
        return math.nan
    return variance * cross_document_weight(units.clusters, units.documents)


@dataclass(frozen=True)
class GateRuns:
    """The two runs a gate reads, with people's overrides in force, their targets and their health."""

    base: RunData
    new: RunData
    base_target: str
    new_target: str
    base_health: str | None
    new_health: str | None
    overrides: int
    """People's overrides in force in the two runs together."""


def gate_runs(options: GateOptions) -> GateRuns:
    """BASE and NEW read as their reports read them (overrides applied; one run read once when both are the
    same folder), each target resolved, and a run whose health failed refused unless allowed."""
    from examiner.reporting.run_reader import load_run
    from examiner.reporting.with_overrides import apply_overrides

    judged_base = load_run(options.base)
    judged_new = judged_base if options.new == options.base else load_run(options.new)
    base_target = _target(judged_base, options.base_target or options.target, "base")
    new_target = _target(judged_new, options.new_target or options.target, "new")
    new_health = _health(judged_new, "NEW", options.allow_unhealthy)  # the run under test is named first
    base_health = new_health if judged_new is judged_base else _health(judged_base, "BASE", options.allow_unhealthy)
    base = apply_overrides(judged_base)
    new = base if judged_new is judged_base else apply_overrides(judged_new)
    overrides = len(judged_base.overrides) + (0 if judged_new is judged_base else len(judged_new.overrides))
    return GateRuns(base, new, base_target, new_target, base_health, new_health, overrides)


def gate(options: GateOptions) -> GateResult:
    """Decide whether NEW is not worse than BASE by more than the margin, as `examiner gate` does."""
    from examiner.reporting.paired import METRIC_OUTCOMES, paired_units
    from examiner.stats.paired import non_inferiority

    if not options.margin >= 0:
        raise UserError(f"--margin must be 0 or more (an accuracy difference such as 0.02), got {options.margin}")
    if not 0.5 < options.level < 1:
        raise UserError(f"--level must lie between 0.5 and 1 (e.g. 0.95), got {options.level}")
    runs = gate_runs(options)
    base, new, base_target, new_target = runs.base, runs.new, runs.base_target, runs.new_target
    base_health, new_health, overrides = runs.base_health, runs.new_health, runs.overrides
    share = options.metric in METRIC_OUTCOMES
    units = paired_units(base, base_target, new, new_target, subgroups=False,
                         metric=options.metric if share else "accuracy")
    if not units.unit_ids:
        raise UserError(f"{options.base} and {options.new} share no unit: gate two runs over the same corpus")
    if not units.covered_by_both:
        raise UserError(f"no unit is covered by both {base_target} ({options.base}) and {new_target} "
                        f"({options.new}): there is no accuracy difference to test")
    if not share:
        from examiner.reporting.knowledge_compare import figure_non_inferiority

        decision = figure_non_inferiority(base, base_target, new, new_target, options.metric, options.margin,
                                          round(1 - options.level, 12))
        return GateResult(decision, str(base.path), base_target, str(new.path), new_target, len(units.unit_ids),
                          base_health, new_health, overrides, options.metric)
    decision = non_inferiority(units.a, units.b, units.documents, options.margin, units.clusters,
                               alpha=round(1 - options.level, 12),
                               wording_variance=_wording_variance(options, base_target, new_target, units))
    return GateResult(decision, str(base.path), base_target, str(new.path), new_target, len(units.unit_ids),
                      base_health, new_health, overrides, options.metric)
