"""The `examiner` command line. Each sub-command lives in examiner/commands/<name>.py.

Errors the user can act on (bad config, missing file, unknown role...) print one line and exit 2;
a budget stop exits 3 after saving what was computed; anything else is a bug and shows a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from typing import Sequence

from examiner import __version__
from examiner.errors import BudgetExhausted, UserError

COMMAND_MODULES = ("setup", "cost", "exam", "report", "judging", "meta")
"""Modules under examiner.commands; each has `register(subparsers)` and sets `func` on its parsers."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="examiner",
        description="Audit what language models know about a reference corpus, and audit their judges.",
    )
    parser.add_argument("--version", action="version", version=f"examiner {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"examiner.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"examiner.commands.{name}":
                continue
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        print(f"examiner: error: {exc}", file=sys.stderr)
        return 2
    except BudgetExhausted as exc:
        print(f"examiner: stopped: {exc}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        print("examiner: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
