"""Which `examiner judge` options each method reads, so an option a method cannot honour is refused in one
line instead of being dropped (e.g. --human-field with --method pairwise, whose report has no human scores)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from examiner.core.errors import UserError

PAIRS = ("pairwise", "reviseval")
"""Methods (reviseval without --single) that judge a pair of outputs against a gold preference."""
SINGLE = ("reviseval --single", "geval", "reference")
"""Methods that score one output, correlated with a human score."""
REVISEVAL = ("reviseval", "reviseval --single")

READ_BY: dict[str, tuple[str, ...]] = {
    "output_field": SINGLE, "output1_field": PAIRS, "output2_field": PAIRS, "label_field": PAIRS,
    "reference_field": ("pairwise", "reference"),
    "human_field": SINGLE, "human_range": SINGLE, "group_field": SINGLE, "system_field": SINGLE,
    "source_field": ("geval",),
    "swap": PAIRS, "grade_only": PAIRS, "tie_threshold": PAIRS, "json_grades": PAIRS, "with_reference": ("pairwise",),
    "judge_cascade": ("pairwise",), "target_agreement": ("pairwise",), "cascade_risk": ("pairwise",),
    "cascade_reference": ("pairwise",), "cascade_confidence": ("pairwise",), "calibration_share": ("pairwise",),
    "single": REVISEVAL, "rubric": REVISEVAL, "classic_metrics": ("reviseval",),
    "seed": ("pairwise", *REVISEVAL),
    "task": ("geval",), "criterion": ("geval",), "form_label": ("geval",), "samples": ("geval",),
    "no_logprobs": ("geval",), "scale": SINGLE + ("reviseval",),
}
"""Option -> the methods that read it (options not named here are read by every method)."""
CASCADE_KNOBS = ("target_agreement", "cascade_risk", "cascade_reference", "cascade_confidence", "calibration_share")
"""Options only a judge cascade reads."""


def method_of(options: Any) -> str:
    """The method as READ_BY names it (RevisEval on single outputs is its own). `options`: a JudgeOptions, read
    by its field names (this module sits below examiner.api.judging, which calls it)."""
    return "reviseval --single" if options.method == "reviseval" and options.single else str(options.method)


def flag(option: str) -> str:
    """The command-line flag of an option (`human_field` -> --human-field)."""
    return "--" + option.replace("_", "-")


def check_method_options(options: BaseModel) -> None:
    """UserError (one line) naming the first option given (not at its default) that the method does not
    read, and the methods that do; likewise a cascade's knobs (and pairwise's --seed) without
    --judge-cascade, and a pair method's --reference-field without --with-reference."""
    method = method_of(options)
    fields: Any = options  # a JudgeOptions: its fields are read by name below
    defaults = type(options).model_fields
    given = [name for name in READ_BY if getattr(options, name) != defaults[name].get_default(call_default_factory=True)]
    for name in given:
        if method not in READ_BY[name]:
            raise UserError(f"{flag(name)} is not read by --method {method} (it applies to "
                            f"{', '.join(READ_BY[name])}): drop it or choose a method that reads it")
    knobs = [name for name in given if name in CASCADE_KNOBS or (name == "seed" and method == "pairwise")]
    if knobs and not fields.judge_cascade:
        raise UserError(f"{flag(knobs[0])} applies to a judge cascade with --method {method}: give "
                        "--judge-cascade CHEAP,STRONG or drop it")
    if "reference_field" in given and method == "pairwise" and not fields.with_reference:
        raise UserError(f"--reference-field is read by --method {method} only with --with-reference: give it or "
                        "drop --reference-field")


__all__ = ["READ_BY", "check_method_options"]
