"""A judging dataset with gold labels on only a few rows: the judge's figures calibrated by them (PPI++).

Why: `examiner judge-stats` reports the judge's agreement with the gold labels on the rows that have one;
when only a few rows do (a team labelled a sample), the judge's figure over all rows is still its own
opinion. With the labelled rows as a random sample, prediction-powered inference (examiner/stats/ppi.py)
corrects the judge's figure over every row: for pairwise verdicts, the share of rows whose gold label is
1, 2 or a tie (output 1's win rate and so on); for single scores, the mean human score. The labelled rows
must be a random sample of the rows: the report says so, examiner cannot check it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from examiner.core.labels import Preference, preference_to_number
from examiner.judging.swap_metrics import Judgment
from examiner.reporting.calibration_section import LEVEL, MIN_LABELS, judge_calibration
from examiner.reporting.model.calibration import ScoreCalibration
from examiner.stats.ppi import ppi_mean


UNPARSEABLE = "unparseable"
"""The judge's class on a row without a usable verdict in either order."""


def pairwise_calibration(js: Sequence[Judgment], gold: Mapping[Any, Preference]) -> dict[str, Any] | None:
    """JudgeCalibration (as data) of pairwise verdicts: one verdict per judged row (the original order's,
    else the swapped one's; verdicts are in the original order's labelling; `unparseable` when neither is
    usable, a class of its own, so the population is every judged row and no gold label is dropped), gold
    labels on some rows; labels are spelled 1, 2, 0 (tie). None when every judged row has a gold label, or
    none has."""
    judged: dict[str, str] = {}
    for j in sorted(js, key=lambda j: j.order != "original"):  # the original order first
        if isinstance(j.verdict, Preference) and judged.get(j.id, UNPARSEABLE) == UNPARSEABLE:
            judged[j.id] = str(preference_to_number(j.verdict))
        judged.setdefault(j.id, UNPARSEABLE)
    labels = {row_id: str(preference_to_number(label)) for row_id, label in gold.items() if row_id in judged}
    return judge_calibration(judged, labels, UNPARSEABLE)


def score_calibration(records: Sequence[Mapping[str, Any]], judged: int | None = None) -> dict[str, Any] | None:
    """ScoreCalibration (as data) of single scores with a human score on some rows; None when every
    scored row has one, or fewer than two have. A row without a score has no prediction to calibrate, so
    the population is the scored rows: `judged` (every judged row) makes the report say how many are
    outside it."""
    scored = [r for r in records if r.get("score") is not None]
    unscored = max(0, (len(records) if judged is None else judged) - len(scored))
    labelled = [r for r in scored if r.get("human") is not None]
    unlabelled = [float(r["score"]) for r in scored if r.get("human") is None]
    if len(labelled) < 2 or not unlabelled:
        return None
    human = [float(r["human"]) for r in labelled]
    judge = [float(r["score"]) for r in labelled]
    human_only, _ = ppi_mean(human, judge, unlabelled, level=LEVEL, lam=0.0)
    ppi, lam = ppi_mean(human, judge, unlabelled, level=LEVEL)
    small = len(labelled) < MIN_LABELS
    note = (f"{len(labelled)} of {len(scored)} scored rows have a human score: too few for the calibrated (PPI++) "
            f"figure, which needs at least {MIN_LABELS} (docs/STATISTICS.md, section 3)." if small else None)
    return ScoreCalibration.model_validate({
        "estimand": "the mean human score over every scored row" + (
            f" ({unscored} judged rows without a score are outside it, with any human score on them)"
            if unscored else ""), "minimum": MIN_LABELS, "rows": len(scored), "unscored": unscored,
        "labelled": len(labelled), "judge_mean": sum(float(r["score"]) for r in scored) / len(scored),
        "human_only": human_only.to_dict(), "ppi": None if small else ppi.to_dict(),
        "lam": None if small else lam, "note": note}).model_dump()


__all__ = ["pairwise_calibration", "score_calibration"]


def calibration_markdown(section: Any) -> list[str]:
    """report.md's lines for a pairwise or single-score section's `calibration` (nothing when absent)."""
    from examiner.reporting.calibration_section import judge_calibration_markdown, mean_text
    from examiner.reporting.markdown import table

    data = getattr(section, "calibration", None)
    if data is None:
        return []
    if hasattr(data, "labels"):
        return judge_calibration_markdown(data, table)
    rows = [["judge's mean score (its own scale)", str(data.rows), f"{data.judge_mean:.3f}"],
            ["people's scores alone", str(data.labelled), mean_text(data.human_only)],
            ["PPI++ (calibrated)", f"{data.labelled} + {data.rows - data.labelled}", mean_text(data.ppi)]]
    out = ["", "## Calibrated by the human scores", "",
           f"{data.labelled} of {data.rows} scored rows carry a human score. Estimated: {data.estimand}; PPI++ "
           "(docs/STATISTICS.md, section 3) is valid when those rows are a random sample of the rows.", "",
           table(["figure", "rows", "estimate [95% CI]"], rows)]
    return out + (["", data.note] if data.note else [])
