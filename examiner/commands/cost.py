"""`examiner cost RUN_DIR`: the ledger's money and tokens by role, stage and round, and below the table
what the ledger cannot know: calls in flight at a kill (with their worst case) and lines torn by a kill."""

from __future__ import annotations

import argparse

from examiner.commands.common import add_command, fitted_table, print_table
from examiner.errors import UserError


def register(sub: argparse._SubParsersAction) -> None:
    parser = add_command(
        sub, "cost", "print the cost ledger of a run by role, stage and round",
        "Sum a run's ledger.jsonl: calls, cache hits, tokens and dollars grouped by role, stage, round or\n"
        "endpoint, then what the ledger cannot know (calls in flight at a kill, lines torn by a kill).",
        "examiner cost runs/pubmed --by role,stage,round\nexaminer cost runs/pubmed --per-unit --top 5")
    parser.add_argument("run_dir", help="a run directory (holds ledger.jsonl)")
    parser.add_argument("--by", default="role,stage", help="comma-separated grouping fields (role, stage, round, endpoint)")
    parser.add_argument("--per-unit", action="store_true",
                        help="also show cost per knowledge unit (each call split evenly over the units it was about)")
    parser.add_argument("--top", type=int, default=10, help="with --per-unit: the most expensive units to list")
    parser.set_defaults(func=run_cost)


def run_cost(args: argparse.Namespace) -> int:
    from examiner.core.rundir import LEDGER, RunDir
    from examiner.llm.ledger import aggregate, answered, in_flight, in_flight_usd, torn_lines, unknown_lines

    run = RunDir(args.run_dir)
    if not run.file(LEDGER).is_file():
        raise UserError(f"no ledger at {run.file(LEDGER)}")
    ledger = run.read_ledger()
    records = answered(ledger)
    by = tuple(field.strip() for field in args.by.split(",") if field.strip())
    rows = aggregate(records, by=by)
    figures = ("calls", "cached", "prompt", "completion", "dollars")
    table = fitted_table(f"cost of {args.run_dir}: calls (cache hits), tokens (prompt, completion), dollars",
                         [*by, *figures], numeric=figures)
    for row in rows:
        table.add_row(
            *(str(row[name]) for name in by),
            str(row["calls"]), str(row["cache_hits"]), str(row["prompt_tokens"]), str(row["completion_tokens"]),
            f"{row['cost_usd']:.6f}",
        )
    total = aggregate(records, by=())[0] if records else None
    if total:
        table.add_row(
            *(["total"] + [""] * (len(by) - 1)),
            str(total["calls"]), str(total["cache_hits"]), str(total["prompt_tokens"]),
            str(total["completion_tokens"]), f"{total['cost_usd']:.6f}",
        )
    print_table(table)
    for line in unknown_lines(len(in_flight(ledger)), in_flight_usd(ledger),
                              torn_lines(run.path, torn_tail=bool(run.torn.get(LEDGER)))):
        print(line)
    if args.per_unit:
        print_per_unit(records, args.top)
    return 0


def print_per_unit(records: list[dict], top: int) -> None:
    """Mean and most expensive units: what one knowledge unit costs to examine."""
    from examiner.llm.ledger import per_unit

    units = per_unit(records)
    if not units:
        print("no call in this ledger names knowledge units")
        return
    n = len(units)
    mean = {key: sum(u[key] for u in units.values()) / n for key in ("calls", "prompt_tokens", "completion_tokens", "cost_usd")}
    figures = ("calls", "prompt", "completion", "dollars")
    table = fitted_table(f"per knowledge unit ({n} units named by calls): calls, tokens, dollars", ["unit", *figures],
                         numeric=figures)
    table.add_row("mean", f"{mean['calls']:.2f}", f"{mean['prompt_tokens']:.0f}", f"{mean['completion_tokens']:.0f}",
                  f"{mean['cost_usd']:.6f}")
    for unit, row in sorted(units.items(), key=lambda kv: (-kv[1]["cost_usd"], -kv[1]["prompt_tokens"] - kv[1]["completion_tokens"]))[:top]:
        table.add_row(unit, f"{row['calls']:.2f}", f"{row['prompt_tokens']:.0f}", f"{row['completion_tokens']:.0f}",
                      f"{row['cost_usd']:.6f}")
    print_table(table)
