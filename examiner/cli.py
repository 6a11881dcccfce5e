"""The `examiner` command line. Each sub-command lives in examiner/commands/<name>.py.

Errors the user can act on (bad config, missing file, unknown role, a file or folder the system
refuses...) print one line and exit 2; a budget stop exits 3 after saving what was computed and saying
so on stderr; `examiner judge` exits 4 when it could judge nothing (its files still written) and
`examiner doctor` 1 when a check failed; anything else is a bug and shows a traceback.

Building the parser must stay light (`examiner --help`): command modules import what they run with
inside their run functions (tests/test_cli_help.py lists the libraries that must not load).
"""

from __future__ import annotations

import os

# Before faiss / torch load: OpenMP threads that spin while waiting make k-means and embeddings several
# times slower on small, shared machines (measured in examiner/vectors.py). A user's own setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # every model examiner loads ships in an installed package

import argparse  # noqa: E402
import importlib  # noqa: E402
import logging  # noqa: E402
import sys  # noqa: E402
from typing import Sequence  # noqa: E402

from examiner.core.version import VERSION  # noqa: E402
from examiner.errors import BudgetExhausted, UserError  # noqa: E402

COMMAND_MODULES = ("setup", "cost", "exam", "report", "view", "judging", "meta", "metric_stats", "export",
                   "trace")
"""Modules under examiner.commands; each has `register(subparsers)` and sets `func` on its parsers."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="examiner",
        description="Audit what language models know about a reference corpus, and audit their judges.",
        epilog="Examples:\n  examiner run corpora/pubmedqa-mini --simulate --out runs/sim\n"
               "  examiner report runs/sim\n  examiner COMMAND --help   (what a command does, with an example)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"examiner {VERSION}")
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


def os_error_line(exc: OSError) -> str:
    """One line for a file or folder the system refused (permission, a file where a folder is needed,
    disk full...), naming the path, as the commands' own checks would."""
    name = exc.filename if exc.filename2 is None else f"{exc.filename} -> {exc.filename2}"
    reason = exc.strerror or type(exc).__name__
    if isinstance(exc, NotADirectoryError):
        reason += " (a part of the path is a file, not a folder)"
    return f"cannot use {name}: {reason}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if not getattr(args, "func", None):
        parser.print_usage(sys.stderr)
        print("examiner: error: no command given (`examiner --help` lists them)", file=sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        print(f"examiner: error: {exc}", file=sys.stderr)
        return 2
    except BudgetExhausted as exc:
        print(f"examiner: stopped: {exc}", file=sys.stderr)
        return 3
    except OSError as exc:
        if exc.filename is None:  # not about a file or folder (sockets, ...): a bug, keep the traceback
            raise
        print(f"examiner: error: {os_error_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("examiner: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
