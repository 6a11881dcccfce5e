"""`examiner compare --metric NAME`: the paired difference B - A of one knowledge figure (hallucination rate,
abstention rate, F, a penalised score, ECE, Brier, AURC...) for each pair of targets, on the units both
were examined on, with its interval.

Why two routes: a share the gate can decide on (examiner.reporting.paired.METRIC_OUTCOMES) goes through the
gate's own per-unit outcomes and examiner.stats.paired.compare_paired, so compare and `gate --metric` give
one interval; a rate where lower is better is held there as its complement, and turned back into the rate
here. Every other figure takes examiner.stats.knowledge_intervals.paired_figure_difference (linearised
ratio variance, or the delete-one-document jackknife for ECE and AURC) over the same units and groups.
"""

from __future__ import annotations

from collections.abc import Sequence

from examiner.core.errors import UserError
from examiner.core.labels import ATTEMPTED
from examiner.reporting.knowledge import unit_confidence
from examiner.reporting.model.compare import MetricDifference, PairedDifference
from examiner.reporting.paired import LOWER_IS_BETTER as HELD_AS_COMPLEMENT
from examiner.reporting.paired import METRIC_OUTCOMES, paired_units
from examiner.reporting.run_reader import RunData
from examiner.stats.intervals import is_small_sample
from examiner.stats.knowledge_intervals import FIGURES, LOWER_IS_BETTER, figure_value, paired_figure_difference
from examiner.stats.distributions import t_sf
from examiner.stats.paired import NonInferiority, compare_paired, smallest_margin
from examiner.stats.planning import power_at

METRICS = FIGURES
"""What `--metric` accepts."""


def check_metric(metric: str) -> str:
    """The metric's name, or a UserError naming the known ones (exit 2 on the command line)."""
    if metric not in METRICS:
        raise UserError(f"unknown --metric {metric!r}: known are {', '.join(METRICS)}")
    return metric


def _confidences(run: RunData, target: str, unit_ids: Sequence[str]) -> list[float | None]:
    """The attempted units' confidence, stated when the target stated any, else the token one (as the
    knowledge section reads it); None for a unit not attempted."""
    outcomes = run.outcomes.get(target, {})
    pairs = [unit_confidence(run, outcomes[u]) if outcomes[u].status in ATTEMPTED else (None, None)
             for u in unit_ids]
    pick = 0 if any(p[0] is not None for p in pairs) else 1
    return [p[pick] for p in pairs]


def _share_difference(metric: str, run_a: RunData, target_a: str, run_b: RunData, target_b: str
                      ) -> tuple[float | None, float | None, PairedDifference, int]:
    """The gate's route: compare_paired on the metric's per-unit outcomes; a lower-is-better rate is the
    complement's difference negated (its interval mirrored)."""
    units = paired_units(run_a, target_a, run_b, target_b, subgroups=False, metric=metric)
    result = compare_paired(units.a, units.b, units.documents, units.clusters)
    d = result.accuracy_difference
    value_a, value_b = result.accuracy_a, result.accuracy_b
    estimate, low, high = d.estimate, d.low, d.high
    if metric in HELD_AS_COMPLEMENT:
        value_a, value_b = 1 - value_a, 1 - value_b
        estimate, low, high = -estimate, -high, -low
    difference = PairedDifference(estimate=estimate, low=low, high=high, level=d.level,
                                  standard_error=d.standard_error, method=d.method, small_sample=d.small_sample,
                                  n_units=d.n_units, n_groups=d.n_groups)
    return _finite(value_a), _finite(value_b), difference, len(units.unit_ids)


def _finite(value: float | None) -> float | None:
    return None if value is None or value != value else float(value)


def metric_difference(a: str, run_a: RunData, target_a: str, b: str, run_b: RunData, target_b: str, metric: str
                      ) -> MetricDifference:
    """B (`b`) against A (`a`) in `metric` on the units both runs hold."""
    check_metric(metric)
    if metric in METRIC_OUTCOMES:
        value_a, value_b, difference, shared = _share_difference(metric, run_a, target_a, run_b, target_b)
    else:
        units = paired_units(run_a, target_a, run_b, target_b, subgroups=False)
        ids = units.unit_ids
        status_a = [str(run_a.outcomes[target_a][u].status) for u in ids]
        status_b = [str(run_b.outcomes[target_b][u].status) for u in ids]
        conf_a, conf_b = _confidences(run_a, target_a, ids), _confidences(run_b, target_b, ids)
        value_a, value_b = figure_value(metric, status_a, conf_a), figure_value(metric, status_b, conf_b)
        d = paired_figure_difference(metric, status_a, conf_a, status_b, conf_b, units.documents, units.clusters)
        difference = PairedDifference(estimate=d.estimate, low=d.low, high=d.high, level=d.level,
                                      standard_error=d.standard_error, method=d.method,
                                      small_sample=is_small_sample(d.n_groups), n_units=d.n_units,
                                      n_groups=d.n_groups)
        shared = len(ids)
    return MetricDifference(metric=metric, a=a, b=b, value_a=value_a, value_b=value_b, difference=difference,
                            lower_is_better=metric in LOWER_IS_BETTER, shared_units=shared)


def figure_non_inferiority(run_a: RunData, target_a: str, run_b: RunData, target_b: str, metric: str,
                           margin: float, alpha: float) -> NonInferiority:
    """`examiner gate --metric` for a figure that is not a share (F, a penalised score, ECE, Brier, AURC):
    NEW (B) passes when the one-sided (1 - alpha) bound of its difference from BASE (A), held so that
    higher is better (a lower-is-better figure's difference negated), lies above -margin. The bound is
    the end of paired_figure_difference's interval at level 1 - 2 alpha; p-value and power from the same
    standard error on groups - 1 df, as examiner.stats.paired.non_inferiority does for the shares."""
    units = paired_units(run_a, target_a, run_b, target_b, subgroups=False)
    ids = units.unit_ids
    status_a = [str(run_a.outcomes[target_a][u].status) for u in ids]
    status_b = [str(run_b.outcomes[target_b][u].status) for u in ids]
    d = paired_figure_difference(metric, status_a, _confidences(run_a, target_a, ids), status_b,
                                 _confidences(run_b, target_b, ids), units.documents, units.clusters,
                                 level=1 - 2 * alpha)
    if d.estimate is None or d.low is None or d.high is None or d.standard_error is None:
        raise UserError(f"{metric} is undefined for these runs (no attempted unit with a stated confidence, or "
                        "nothing asked): there is no difference to test")
    flip = metric in LOWER_IS_BETTER
    difference, bound = (-d.estimate, -d.high) if flip else (d.estimate, d.low)
    se, df = d.standard_error, max(d.n_groups - 1, 1)
    p_value = t_sf((difference + margin) / se, df) if se > 0 else float(difference + margin <= 0)
    return NonInferiority(passed=bool(bound > -margin), difference=difference, lower_bound=bound, margin=margin,
                          alpha=alpha, p_value=p_value, power=power_at(margin, se, alpha, df, sides=1)
                          if margin > 0 else alpha, standard_error=se, method=d.method,
                          small_sample=is_small_sample(d.n_groups), n_units=d.n_units, n_documents=d.n_groups,
                          smallest_margin=smallest_margin(difference, bound))


def metric_line(m: MetricDifference) -> str:
    """`b - a: hallucination_rate 0.210 -> 0.340, +0.130 [+0.050, +0.210] (95% CI; lower is better)`."""
    def num(v: float | None, sign: str = "") -> str:
        return "-" if v is None else f"{v:{sign}.3f}"

    d = m.difference
    better = "lower" if m.lower_is_better else "higher"
    return (f"{m.b} - {m.a}: {m.metric} {num(m.value_a)} -> {num(m.value_b)}, difference {num(d.estimate, '+')} "
            f"[{num(d.low, '+')}, {num(d.high, '+')}] ({round(d.level * 100)}% CI, {better} is better; "
            f"{m.shared_units} shared units, {d.n_groups} groups; {d.method})")


METRIC_NOTE = ("B - A in the figure named by --metric on the units both targets were examined on. Shares the gate "
               "decides on (accuracy, correct given attempted, hallucination and abstention rates) have the paired "
               "accuracy interval of the section above; F, the penalised scores and Brier a linearised (cluster-"
               "robust) interval, ECE and AURC a delete-one-document jackknife, each t on documents - 1 df "
               "(docs/STATISTICS.md, Knowledge boundaries).")

__all__ = ["METRICS", "METRIC_NOTE", "check_metric", "figure_non_inferiority", "metric_difference", "metric_line"]
