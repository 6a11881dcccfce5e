"""What `examiner run`, `resume`, `estimate` and `demo` print: the run's headline figures and health,
its judge panel and languages, a budget stop, and the estimate's tables (each fits 80 columns)."""

from __future__ import annotations

import math
import shlex
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from examiner.cli.flags import fitted_table, print_table
from examiner.core.console import prose_width

if TYPE_CHECKING:
    from examiner.exam.estimate import Estimate, Figure


class RunOutcome(Protocol):
    """How a run ended, as run.json (RunInfo) and the API's ExamResult both say it."""

    @property
    def run_id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def stop_reason(self) -> str | None: ...
    @property
    def mode(self) -> str: ...


def summarise(info: RunOutcome, run_dir: Path) -> None:
    """Print the headline figures of a finished (or stopped) run: which judge gave the verdicts, accuracy
    and coverage with their intervals, the unit counts, the panel's agreement, and where the reports are.
    The figures come from report.json read through the report model (examiner.reporting.terminal)."""
    from examiner.core import rundir
    from examiner.core.plain_text import one_line

    print(one_line(f"exam {info.run_id}: {info.status} ({info.stop_reason})"))  # a resumed folder wrote them
    report_path = run_dir / rundir.REPORT_JSON
    if report_path.exists():
        from examiner.reporting.model import ExamReport
        from examiner.reporting.reading import load_report
        from examiner.reporting.terminal import exam_summary, print_summary

        report = load_report(report_path).report
        if isinstance(report, ExamReport):
            print_summary(exam_summary(report, run_dir))
    from examiner.reporting.wording import wording_line, wording_section

    wording = wording_section(run_dir)
    if wording is not None:
        print(one_line(wording_line(wording)))
    for name in (rundir.REPORT_HTML, rundir.REPORT_MD, rundir.REPORT_JSON):
        if (run_dir / name).exists():
            print(f"{name}: {run_dir / name}")


def print_health(health: Mapping[str, Any] | None) -> None:
    """The run's health first: its status, the checks that did not pass with their examples, and the
    judge self-agreement (`examiner report` prints it after writing the reports)."""
    from examiner.core.plain_text import visible_controls
    from examiner.reporting.model.exam import HealthSection
    from examiner.reporting.terminal import health_lines

    for line in health_lines(HealthSection.model_validate(health) if health else None):
        print(visible_controls(line))  # its examples quote reasons and answers


def budget_stop_message(run_dir: Path) -> str:
    """What a budget stop spent of the cap, what it left undone, and the command that continues it."""
    from examiner.exam.runner import budget_stop

    stop = budget_stop(run_dir)
    cap = "no" if stop.cap_usd is None else f"the ${stop.cap_usd:.4f}"
    left = ", ".join(f"{n} of {stop.units} units not yet covered for {target}" for target, n in stop.uncovered.items())
    # A suggestion, not a prediction: twice the cap, at least a cent above what was spent.
    suggested = math.ceil(max(2 * (stop.cap_usd or 0.0), stop.spent_usd + 0.01) * 100) / 100
    return "\n".join([
        f"examiner: stopped: {stop.stage or 'budget exhausted'} in round {stop.round}: "
        f"spent ${stop.spent_usd:.4f} of {cap} cap",
        f"examiner: left undone: {left or 'every unit (no knowledge units were made yet)'}; "
        "the records so far are kept",
        f"examiner: to continue with a larger cap: examiner resume {shlex.quote(str(run_dir))} "
        f"--budget-usd {suggested:.2f}",
    ])


def _figure(f: Figure, money: bool = False) -> str:
    """A figure with its range below it (one line when the range is a point)."""
    def text(x: float) -> str:
        return f"${x:.4f}" if money else f"{x:,.0f}"

    return text(f.value) if f.low == f.high else f"{text(f.value)}\n[{text(f.low)}-{text(f.high)}]"


def print_estimate(estimate: Estimate) -> None:
    """The estimate as tables: measured figures, the extrapolated run with ranges, the pilot's cost."""
    from examiner.exam.estimate import INTERVAL, PRICINGS

    print(f"measured (the whole corpus was read): {estimate.documents} documents, {estimate.passages} passages, "
          f"{estimate.units} knowledge units")
    print(f"pilot (real calls, ledger in {estimate.pilot_dir}): {estimate.pilot_units} units in "
          f"{estimate.pilot_clusters} clusters, {estimate.pilot_rounds} rounds")
    numbers = ("calls", "prompt tok", "compl. tok", "dollars")
    spent = fitted_table("what the pilot cost (measured)", ("role", "endpoint", *numbers), numeric=numbers)
    for row in estimate.pilot_spent:
        spent.add_row(row["role"], row["endpoint"], str(row["calls"]), f"{row['prompt_tokens']:,}",
                      f"{row['completion_tokens']:,}", f"${row['cost_usd']:.4f}")
    print_table(spent)
    table = fitted_table(f"the full run (extrapolated; ranges: {round(INTERVAL * 100)}% bootstrap interval)",
                         ("role", *numbers), numeric=numbers)
    for usage in [*estimate.by_role, estimate.total]:
        name = usage.role if not usage.endpoint else f"{usage.role}\n({usage.endpoint})"
        table.add_row(name, _figure(usage.calls), _figure(usage.prompt_tokens), _figure(usage.completion_tokens),
                      _figure(usage.dollars, money=True))
    print_table(table)
    pricing = fitted_table("the full run's dollars priced three ways (same tokens; ranges as above)",
                           ("role", "standard", "batch", "cached prefix"), numeric=("standard", "batch", "cached prefix"))
    for usage in [*estimate.by_role, estimate.total]:
        pricing.add_row(usage.role, *(_figure(usage.dollars_by_pricing[p], money=True) for p in PRICINGS))
    print_table(pricing)
    print(_wrapped("batch: every call through the provider's batch API (batch_price_factor); cached "
                        "prefix: the share of prompt tokens the pilot's endpoints served from their prompt cache, "
                        "at the cached input price"))
    print(f"rounds {_figure(estimate.rounds).replace(chr(10), ' ')}, clusters "
          f"{_figure(estimate.clusters).replace(chr(10), ' ')} (extrapolated)")
    for note in estimate.notes:
        print(f"note: {note}")


def _wrapped(text: str) -> str:
    """`text` wrapped at the terminal's width; one line when piped (examiner.core.console)."""
    width = prose_width()
    return text if width is None else textwrap.fill(text, width)


def print_replay(figures: Mapping[str, Any]) -> None:
    """The simulated replay, labelled as what it is."""
    numbers = ("calls", "prompt tokens", "completion tokens", "dollars")
    table = fitted_table("SIMULATED REPLAY (the simulator's replies at the configured prices; not a prediction "
                         "for a real model)", ("role", *numbers), numeric=numbers)
    for row in figures["by_role"] + [dict(figures["total"], role="total")]:
        table.add_row(row["role"], str(row["calls"]), f"{row['prompt_tokens']:,}", f"{row['completion_tokens']:,}",
                      f"{row['cost_usd']:.4f}")
    print(f"{figures['documents']} documents, {figures['units']} knowledge units, "
          f"{figures['clusters']} clusters over {figures['rounds']} rounds ({figures['stop_reason']})")
    print_table(table)
