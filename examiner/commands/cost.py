"""`examiner cost RUN_DIR`: the ledger's money and tokens by role, stage and round."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.table import Table

from examiner.errors import UserError
from examiner.llm.ledger import aggregate, read_ledger


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("cost", help="print the cost ledger of a run by role, stage and round")
    parser.add_argument("run_dir", help="a run directory (holds ledger.jsonl)")
    parser.add_argument("--by", default="role,stage", help="comma-separated grouping fields (role, stage, round, endpoint)")
    parser.set_defaults(func=run_cost)


def run_cost(args: argparse.Namespace) -> int:
    path = Path(args.run_dir) / "ledger.jsonl"
    if not path.is_file():
        raise UserError(f"no ledger at {path}")
    records = [r for r in read_ledger(path) if r.get("outcome", "ok") == "ok"]
    by = tuple(field.strip() for field in args.by.split(",") if field.strip())
    rows = aggregate(records, by=by)
    table = Table(title=f"cost of {args.run_dir}")
    for name in by:
        table.add_column(name)
    for name in ("calls", "cache hits", "prompt tok", "completion tok", "dollars"):
        table.add_column(name, justify="right")
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
    Console().print(table)
    return 0
