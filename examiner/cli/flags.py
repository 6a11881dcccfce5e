"""Flags shared by many commands: configuration file, role overrides, budget, simulation; and the
terminal tables every command prints with. The output folder check (`output_dir`) is the API's
(examiner.api.checks), imported here for the commands that write files of their own.

Command modules stay light at import time (`examiner --help` builds every parser): what a command needs
beyond argparse is imported inside its run function.
"""

from __future__ import annotations

import argparse
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from examiner.api.checks import output_dir
from examiner.core.errors import ConfigError

if TYPE_CHECKING:
    from rich.table import Table

    from examiner.core.config import Settings

__all__ = ["IntermixedParser", "add_cache_flag", "add_command", "add_config_flags", "fitted_table",
           "job_flags", "output_dir", "parse_roles", "print_table", "settings_from_args"]


class IntermixedParser(argparse.ArgumentParser):
    """Options and positionals in any order (`RUN_DIR --to jsonl OUT` with OUT optional, `data pull --all`
    or `data pull --base-url URL NAME`): argparse alone gives an optional positional the empty match as soon
    as it meets the positional before it. A command's parser takes it with `parser.__class__ = IntermixedParser`."""

    _inside = False

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def]
        if self._inside:  # parse_known_intermixed_args calls back here for its two passes
            return super().parse_known_args(args, namespace)
        self._inside = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._inside = False


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


def parse_roles(pairs: list[str]) -> dict[str, str]:
    roles = {}
    for pair in pairs:
        role, sep, endpoint = pair.partition("=")
        if not sep or not role or not endpoint:
            raise ConfigError(f"--role expects ROLE=ENDPOINT, got '{pair}'")
        roles[role.strip()] = endpoint.strip()
    return roles


def job_flags(args: argparse.Namespace) -> dict[str, Any]:
    """--budget-usd, --role, --cache and --simulate as the options every model-calling job of the API
    takes (examiner.api.settings.JobOptions, which checks them); --config is the job's settings source."""
    return {"budget_usd": getattr(args, "budget_usd", None), "roles": parse_roles(getattr(args, "role", [])),
            "cache_dir": getattr(args, "cache", None), "simulate": bool(getattr(args, "simulate", False))}


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Validated settings from --config, the environment and the flags."""
    from examiner.api.settings import JobOptions, resolve_settings

    return resolve_settings(getattr(args, "config", None), JobOptions(**job_flags(args)))


def fitted_table(title: str, columns: Sequence[str], numeric: Collection[str] = ()) -> Table:
    """A rich table that fits an 80-column terminal without hiding anything (the reports' own,
    examiner.reporting.terminal.fitted_table, loaded on first use so `examiner --help` stays light)."""
    from examiner.reporting.terminal import fitted_table as reports_table

    return reports_table(title, columns, numeric)


def print_table(table: Table, *, stderr: bool = False) -> None:
    """Print a rich table (or other renderable) on stdout, or stderr."""
    from examiner.core.console import make_console

    make_console(stderr=stderr).print(table)  # COLUMNS, the terminal's width, or wide when piped
