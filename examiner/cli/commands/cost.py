"""`examiner cost RUN_DIR`: the ledger's money and tokens by role, stage and round, and below the table
how the sent calls ended: billed; possibly billed (lost after sending: late, cut or dropped; or killed
in flight), with their worst case; cancelled with a request out, with their worst case; and the ledger
lines torn by a kill. The last two kinds are held against the budget at their worst case.

Tokens are split the way providers bill them: uncached input, cached input (the provider's prompt cache),
cache writes (only shown where a provider reported some), visible output and hidden reasoning. Calls
answered through a provider's batch API get rows of their own (`batch` is added to the grouping), so the
table stays narrow."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from examiner.cli.flags import add_command, fitted_table, print_table
from examiner.core.errors import UserError

if TYPE_CHECKING:
    from examiner.core.ledger_record import LedgerRecord

TOKEN_NOTE = ("input: uncached prompt tokens; cached: read from the provider's prompt cache; write: written to "
              "it; output: visible completion; reason: hidden reasoning; hits: replies from examiner's own "
              "cache (free)")


def register(sub: argparse._SubParsersAction) -> None:
    parser = add_command(
        sub, "cost", "print the cost ledger of a run by role, stage and round",
        "Sum a run's ledger.jsonl: calls, cache hits, tokens and dollars grouped by role, stage, round or\n"
        "endpoint, then how the calls ended: billed, possibly billed (lost after sending, or killed in\n"
        "flight) and cancelled with a request out, and the ledger lines torn by a kill.",
        "examiner cost runs/water --by role,stage,round\nexaminer cost runs/water --per-unit --top 5")
    parser.add_argument("run_dir", help="a run directory (holds ledger.jsonl)")
    parser.add_argument("--by", default="role,stage",
                        help="comma-separated grouping fields (role, stage, round, endpoint, batch); batch is added "
                             "when the run made batch calls")
    parser.add_argument("--per-unit", action="store_true",
                        help="also show cost per knowledge unit (each call split evenly over the units it was about)")
    parser.add_argument("--top", type=int, default=10, help="with --per-unit: the most expensive units to list")
    parser.set_defaults(func=run_cost)


def token_cells(row: Mapping[str, Any], parts: list[str], digits: int = 0) -> list[str]:
    """A row's tokens in the chosen billed parts."""
    from examiner.llm.ledger import billed_parts

    split = billed_parts(row)
    return [f"{split[part]:,.{digits}f}" for part in parts]


def _key_cell(name: str, value: Any) -> str:
    return ("batch" if value else "std") if name == "batch" else str(value)


def run_cost(args: argparse.Namespace) -> int:
    from examiner.core.rundir import LEDGER, RunDir
    from examiner.core.sim_prices import illustrative_note
    from examiner.llm.ledger import PART_HEADERS, aggregate, answered, settlement, settlement_lines, shown_parts, torn_lines

    run = RunDir(args.run_dir)
    if not run.file(LEDGER).is_file():
        raise UserError(f"no ledger at {run.file(LEDGER)}")
    ledger = run.ledger_records()
    records = answered(ledger)
    by = tuple(field.strip() for field in args.by.split(",") if field.strip())
    if "batch" not in by and any(r.batch for r in records):
        by += ("batch",)
    rows = aggregate(records, by=by)
    parts = shown_parts(rows)
    figures = ("calls", "hits", *(PART_HEADERS[p] for p in parts), "dollars")
    table = fitted_table(f"cost of {args.run_dir}", [*by, *figures], numeric=figures)
    totals = aggregate(records, by=()) if records else []
    labelled = [([_key_cell(name, row[name]) for name in by], row) for row in rows]
    labelled += [(["total"] + [""] * (len(by) - 1), row) for row in totals]
    for keys, row in labelled:
        table.add_row(*keys, str(row["calls"]), str(row["cache_hits"]), *token_cells(row, parts),
                      f"{row['cost_usd']:.6f}")
    print_table(table)
    if totals:
        share = totals[0]["cached_input_share"]
        batch = totals[0]["batch_calls"]
        print(f"prompt-cache hit share: {100 * (share or 0):.1f}% of prompt tokens; batch calls: {batch} "
              f"of {totals[0]['calls']} (${totals[0]['batch_usd']:.6f})")
        print(TOKEN_NOTE)
    if note := illustrative_note(run.path):
        print(f"dollars: {note}")
    for line in settlement_lines(settlement(ledger), torn_lines(run.path, torn_tail=bool(run.torn.get(LEDGER)))):
        print(line)
    if args.per_unit:
        print_per_unit(records, args.top)
    return 0


def print_per_unit(records: list[LedgerRecord], top: int) -> None:
    """Mean and most expensive units: what one knowledge unit costs to examine."""
    from examiner.llm.ledger import PART_HEADERS, per_unit, shown_parts

    units = per_unit(records)
    if not units:
        print("no call in this ledger names knowledge units")
        return
    n = len(units)
    fields = next(iter(units.values())).keys()
    mean = {key: sum(u[key] for u in units.values()) / n for key in fields}
    parts = shown_parts(list(units.values()))
    figures = ("calls", *(PART_HEADERS[p] for p in parts), "dollars")
    table = fitted_table(f"per knowledge unit ({n} units named by calls)", ["unit", *figures], numeric=figures)
    ranked = sorted(units.items(), key=lambda kv: (-kv[1]["cost_usd"], -kv[1]["prompt_tokens"] - kv[1]["completion_tokens"]))
    for unit, row in [("mean", mean), *ranked[:top]]:
        table.add_row(unit, f"{row['calls']:.2f}", *token_cells(row, parts), f"{row['cost_usd']:.6f}")
    print_table(table)
