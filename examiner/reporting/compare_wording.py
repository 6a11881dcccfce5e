"""Which variance a compared pair's accuracy difference is read with, for compare's JSON, Markdown, HTML
and terminal: wording-aware when both runs measured the questions' wording (`--paraphrases`), else
document-clustered and blind to wording.

Why: the document-clustered interval counts the covariance a shared wording makes only between units of
one document; when the runs re-asked questions in other wordings, the rest of it (examiner.stats.wording)
widens the interval, and the reader is told which of the two they are looking at.
"""

from __future__ import annotations

import math
from pathlib import Path

from examiner.reporting.model.compare import PairedSection, PairedWording
from examiner.reporting.paired import PairedUnits
from examiner.reporting.wording import difference_wording_variance
from examiner.stats.distributions import t_ppf
from examiner.stats.paired import BLIND, WORDING_AWARE
from examiner.stats.wording import cross_document_weight


def pair_wording(section: PairedSection, units: PairedUnits, run_a: str | Path, target_a: str,
                 run_b: str | Path, target_b: str) -> PairedWording:
    """The pair's variance: wording-aware with its interval when both runs measured the wording."""
    d = section.accuracy_difference
    variance = difference_wording_variance(run_a, target_a, run_b, target_b)
    if not math.isfinite(variance) or d.estimate is None or d.standard_error is None:
        return PairedWording(variance=BLIND)
    added = variance * cross_document_weight(units.clusters, units.documents)
    se = math.sqrt(d.standard_error**2 + added)
    t = t_ppf(1 - (1 - d.level) / 2, max(d.n_groups - 1, 1))
    return PairedWording(variance=WORDING_AWARE, wording_variance=variance, added_variance=added,
                         low=max(-1.0, d.estimate - t * se), high=min(1.0, d.estimate + t * se))


def with_wording(section: PairedSection, units: PairedUnits, run_a: str | Path, target_a: str,
                 run_b: str | Path, target_b: str) -> PairedSection:
    """The section with its `wording` filled in."""
    return section.model_copy(update={"wording": pair_wording(section, units, run_a, target_a, run_b, target_b)})


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.3f}"


def wording_line(section: PairedSection) -> str:
    """One line: which variance the pair's accuracy interval used (and the wording-aware interval beside
    the blind one); "" for a comparison written before it."""
    w, d = section.wording, section.accuracy_difference
    if w is None:
        return ""
    if w.variance != WORDING_AWARE or w.low is None or w.high is None or d.estimate is None:
        return f"{section.b} - {section.a}: variance {BLIND} (no --paraphrases in the runs)"
    return (f"{section.b} - {section.a}: {d.estimate:+.3f}, {WORDING_AWARE} {d.level:.0%} interval "
            f"[{w.low:+.3f}, {w.high:+.3f}] (blind [{_signed(d.low)}, {_signed(d.high)}]; wording variance of the "
            f"difference {w.wording_variance:.2g}, measured by rewording)")


__all__ = ["pair_wording", "wording_line", "with_wording"]
