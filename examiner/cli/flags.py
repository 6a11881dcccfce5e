"""Flags shared by many commands: configuration file, role overrides, budget, simulation, output folders.

Command modules stay light at import time (`examiner --help` builds every parser): what a command needs
beyond argparse is imported inside its run function.
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from examiner.core.errors import ConfigError, UserError

if TYPE_CHECKING:
    from rich.table import Table

    from examiner.core.config import Settings


def add_command(sub: argparse._SubParsersAction, name: str, summary: str, description: str,
                examples: str) -> argparse.ArgumentParser:
    """A sub-command whose --help says what it does (`description`) and ends with `Example:` lines.

    `summary` is the one line `examiner --help` lists; `examples` is one command per line."""
    lines = "\n".join(f"  {line}" for line in examples.strip().splitlines())
    return sub.add_parser(name, help=summary, description=description.strip(),
                          epilog=f"Example{'s' if len(examples.strip().splitlines()) > 1 else ''}:\n{lines}",
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def add_config_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE", help="YAML file with endpoints, roles and settings")
    parser.add_argument(
        "--role",
        action="append",
        default=[],
        metavar="ROLE=ENDPOINT",
        help="assign a role to a configured endpoint (repeatable), e.g. --role judge=openai",
    )
    parser.add_argument("--budget-usd", type=float, metavar="X", help="stop cleanly before spending more than X dollars")
    add_cache_flag(parser)
    parser.add_argument(
        "--simulate",
        action="store_true",
        help="send every role to the simulated backend (predicts calls, tokens and dollars at no cost)",
    )


def add_cache_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cache", metavar="DIR",
                        help="keep model replies in a response cache in DIR, shared between runs, so a new run "
                             "reuses (and does not pay again for) every call an earlier run made "
                             "(default: a cache inside the run's own folder)")


def cache_dir_from_args(args: argparse.Namespace) -> str | None:
    """--cache DIR as an absolute path (so `resume` finds it from any directory), checked as an output
    folder before any work starts; None without the flag."""
    folder = getattr(args, "cache", None)
    if folder is None:
        return None
    return str(output_dir(Path(folder).expanduser(), "--cache").resolve())


def parse_roles(pairs: list[str]) -> dict[str, str]:
    roles = {}
    for pair in pairs:
        role, sep, endpoint = pair.partition("=")
        if not sep or not role or not endpoint:
            raise ConfigError(f"--role expects ROLE=ENDPOINT, got '{pair}'")
        roles[role.strip()] = endpoint.strip()
    return roles


def check_budget_flag(budget: float | None) -> float | None:
    """--budget-usd as given, refused in one line unless a finite number of dollars, zero or more."""
    if budget is not None and (not math.isfinite(budget) or budget < 0):
        raise ConfigError(f"--budget-usd must be a finite number of dollars, zero or more, got {budget}")
    return budget


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Validated settings from --config, the environment and the flags."""
    from examiner.core.config import load_settings

    budget = check_budget_flag(getattr(args, "budget_usd", None))
    settings = load_settings(
        getattr(args, "config", None), role_overrides=parse_roles(getattr(args, "role", [])), budget_usd=budget
    )
    cache_dir = cache_dir_from_args(args)
    if cache_dir is not None:
        settings = settings.merged({"cache_dir": cache_dir})
    if getattr(args, "simulate", False):
        settings = settings.simulated()
    return settings


def output_dir(path: str | Path, flag: str = "--out") -> Path:
    """`path` as an output folder, checked before any work (and any spending) starts; nothing is created.

    The nearest existing folder on the way must be a folder we may write into: a path below a regular
    file, or in a read-only place, is one line naming the flag and the part of the path at fault."""
    folder = Path(path)
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise UserError(f"{flag} {folder}: cannot make a folder there, {existing} is a file")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UserError(f"{flag} {folder}: cannot write into {existing} (permission denied or read-only)")
    return folder


def fitted_table(title: str, columns: Sequence[str], numeric: Collection[str] = ()) -> Table:
    """A rich table that fits an 80-column terminal without hiding anything: text columns wrap (a word
    too long for its column folds onto the next line), number columns keep their width, and no cell or
    header is ever cut short with an ellipsis. Keep tables narrow enough (split a wide one) that the
    numbers fit."""
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for name in columns:
        if name in numeric:
            table.add_column(name, justify="right", no_wrap=True, overflow="fold")
        else:
            table.add_column(name, overflow="fold")
    return table


def print_table(table: Table, *, stderr: bool = False) -> None:
    """Print a rich table (or other renderable) on stdout, or stderr."""
    from rich.console import Console

    Console(stderr=stderr).print(table)
