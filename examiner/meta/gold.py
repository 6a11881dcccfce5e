"""The fewest gold-labelled items a meta-evaluation ranks evaluators on.

Why a floor: `examiner meta --exam --human-labels` once ranked evaluators from one overridden verdict. An
evaluator's baseline is its accuracy (or correlation) on the gold items, and with few items that figure
says almost nothing: one item gives an accuracy of 0 or 1 whose 95% Wilson interval spans [0.21, 1.00]
when right, and at 10 items an accuracy of 0.5 still spans [0.24, 0.76]. Below MIN_GOLD a run on
people's labels (`--human-labels`) stops before any model call with one line, and a dataset with a few
gold labels gets that line among its report's problems; `min_gold` (`--min-gold N`) lowers the
floor for a user who knows (docs/METHODS.md, "How many gold items").
"""

from __future__ import annotations

from collections.abc import Sequence

from examiner.core.assessments import MetaItem
from examiner.core.errors import UserError

MIN_GOLD = 10
"""Gold-labelled items below which evaluators are not ranked against gold (see the module docstring)."""


def gold_items(items: Sequence[MetaItem]) -> int:
    """Items with a gold label (pairwise, verdict) or a gold score (individual)."""
    return sum(i.gold_label is not None or i.gold_score is not None for i in items)


def check_gold(items: Sequence[MetaItem], minimum: int = MIN_GOLD, *, human_labels: bool = False) -> str | None:
    """None when there are no gold items or at least `minimum`; else the one line saying there are too few.

    With people's labels (`human_labels`: every item is a gold item, the point of the run) that line is a
    UserError, raised before any call; for a dataset with a few gold labels it is returned, and the caller
    adds it to the report's problems (the Elo ranking of the meta-judge does not need gold)."""
    n = gold_items(items)
    if not (n or human_labels) or n >= minimum:
        return None
    where = "label more verdicts in `examiner view`" if human_labels else "give more labelled items"
    line = (f"too few gold items to rank evaluators (n={n} < {minimum}): a ranking on so few is not meaningful; "
            f"{where}, or pass --min-gold {max(n, 1)} to rank anyway")
    if human_labels:
        raise UserError(line)
    return f"{line} (the baseline ranking against gold below is not to be used)"


__all__ = ["MIN_GOLD", "check_gold", "gold_items"]
