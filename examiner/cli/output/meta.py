"""What `examiner meta` prints: the ranking (baseline, win rate, Elo, Bradley-Terry), the agreement with
gold labels where there are some, and how the Elo ranking agrees with the baseline's."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from examiner.cli.flags import fitted_table, print_table

if TYPE_CHECKING:
    from examiner.meta.pipeline import MetaRun


def print_summary(run: MetaRun) -> None:
    from examiner.meta.sections import ranking_rows

    def f(x: float | None, d: int = 3) -> str:
        return "-" if x is None or not math.isfinite(x) else f"{x:.{d}f}"

    numbers = ("baseline", "win rate", "Elo ± std", "BT [95%]")
    table = fitted_table(f"meta-evaluation ({run.config.method}), {run.rankings.get('matches', 0)} matches",
                         ("evaluator", *numbers), numeric=numbers)
    for row in ranking_rows(run):
        table.add_row(row["evaluator"], f(row["baseline"]), f(row["win_rate"]),
                      f"{f(row['elo'], 1)} ± {f(row['elo_std'], 1)}",
                      f"{f(row['bt'], 1)} [{f(row['bt_low'], 1)}, {f(row['bt_high'], 1)}]")
    print_table(table)
    _print_gold_agreement(run)
    agree = run.rankings.get("agreement", {}).get("elo")
    if agree:
        print(agreement_line(agree, run.baseline.get("scores", {})))


def _print_gold_agreement(run: object) -> None:
    """Verdict items with gold labels (--human-labels): each evaluator's agreement and Cohen's kappa."""
    from examiner.meta.sections import gold_agreement_table

    found = gold_agreement_table(run)  # type: ignore[arg-type]
    if not found:
        return
    header, rows = found
    numbers = [col for col in header if col != "evaluator"]
    table = fitted_table("agreement with the gold labels (people's overrides)", header, numeric=numbers)
    for row in rows:
        table.add_row(*row)
    print_table(table)


def agreement_line(agree: Mapping[str, Any], baseline: Mapping[str, float]) -> str:
    """Elo ranking vs the baseline ranking, or why the comparison is undefined: a rank correlation (and
    a top-1 match) means nothing when every evaluator has the same baseline score (or the same Elo)."""
    tau, rho = agree.get("kendall_tau"), agree.get("spearman_rho")
    if tau is not None and rho is not None and math.isfinite(tau) and math.isfinite(rho):
        return (f"Elo vs baseline: Kendall tau {tau:.3f}, Spearman rho {rho:.3f}, "
                f"top-1 match {'yes' if agree.get('top1_match') else 'no'}")
    compared = [baseline[p] for p in agree.get("players", []) if p in baseline]
    why = "baselines tie" if len(set(compared)) <= 1 else "Elo ratings tie"
    return f"Elo vs baseline: rank correlation and top-1 match undefined: {why}"
