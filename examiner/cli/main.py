"""The `examiner` command line. Each sub-command lives in examiner/cli/commands/<name>.py: it parses its
flags into the options of the Python API (examiner.api), calls it, and prints the result
(examiner/cli/output/); the work itself lives below, in the API and the methods.

Errors the user can act on (bad config, missing file, unknown role, a file or folder the system
refuses, a full disk...) print one line and exit 2; a budget stop exits 3 after saving what was computed
and saying so on stderr; `examiner judge` exits 4 when it could judge nothing (its files still written)
and `examiner doctor` 1 when a check failed; `examiner gate` exits 1 when the new run may be worse than
the base by more than the margin. Anything else is a bug: one line naming the error and where
its full traceback was written (the run folder's examiner.log, else a temporary file), exit 70. No
traceback reaches the terminal, and no credential either: every line printed or logged goes through
examiner.core.redact.

Building the parser must stay light (`examiner --help`): command modules import what they run with
inside their run functions (tests/cli/test_cli_help.py lists the libraries that must not load).
"""

from __future__ import annotations

import os

# Before faiss / torch load: OpenMP threads that spin while waiting make k-means and embeddings several
# times slower on small, shared machines (measured in examiner/corpus/vectors.py). A user's own setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # every model examiner loads ships in an installed package

import argparse  # noqa: E402
import importlib  # noqa: E402
import logging  # noqa: E402
import shlex  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Sequence  # noqa: E402

from examiner.core.stopping import Interrupted, forget_stops, hold_stop_signals, restore_signals  # noqa: E402
from examiner.core.version import VERSION  # noqa: E402
from examiner.core.errors import (EXIT_INTERNAL_ERROR, EXIT_USER_ERROR, BudgetExhausted, UserError,  # noqa: E402
                             current_run_dir, disk_full, forget_run_dirs)

COMMAND_MODULES = ("setup", "cost", "exam", "report", "gate", "view", "review", "judging", "meta", "metric_stats",
                   "export", "trace", "distil", "finetune", "data", "memory_probe")
"""Modules under examiner.cli.commands; each has `register(subparsers)` and sets `func` on its parsers."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="examiner",
        description="Audit what language models know about a reference corpus, and audit their judges.",
        epilog="Examples:\n  examiner run corpora/harbor-water --simulate --out runs/sim\n"
               "  examiner report runs/sim\n  examiner COMMAND --help   (what a command does, with an example)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"examiner {VERSION}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"examiner.cli.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"examiner.cli.commands.{name}":
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


def _say(line: str) -> None:
    """One line on stderr, without credentials or control sequences (a file or endpoint name may carry one)."""
    from examiner.core.plain_text import one_line
    from examiner.core.redact import redact_text

    print(one_line(redact_text(line)), file=sys.stderr)


def _flag_dir(args: argparse.Namespace) -> Path | None:
    """The run folder a command's arguments name (RUN_DIR, --out), if it exists."""
    for name in ("run_dir", "out"):
        value = getattr(args, name, None)
        if isinstance(value, (str, Path)) and value and Path(value).is_dir():
            return Path(value)
    return None


def disk_full_line(exc: BaseException, args: argparse.Namespace) -> str:
    """What to do when the disk filled up: the file being written, and the command that goes on."""
    import shlex

    run_dir = current_run_dir() or _flag_dir(args)
    what = getattr(exc, "filename", None) or (f"into {run_dir}" if run_dir is not None else "a file")
    if run_dir is not None and (run_dir / "request.json").is_file() and (run_dir / "config.yaml").is_file():
        then = f"run `examiner resume {shlex.quote(str(run_dir))}`"
    else:
        then = "run the command again"
    return f"disk full while writing {what}: free space and {then}"


def _keep_trace(exc: BaseException, args: argparse.Namespace, command: Sequence[str] = ()) -> str:
    """Write the full traceback (credentials redacted) to the run folder's examiner.log, else to a
    temporary file; returns where it went ('' when nowhere could be written)."""
    import tempfile
    import time
    import traceback

    from examiner.core.redact import redact_text

    text = redact_text("".join(traceback.format_exception(exc)))
    header = f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} examiner {VERSION}: examiner {' '.join(command)}\n"
    for folder in (current_run_dir(), _flag_dir(args)):
        if folder is not None and folder.is_dir():
            try:
                with open(folder / "examiner.log", "a", encoding="utf-8") as log_file:
                    log_file.write(redact_text(header) + text)
                return str(folder / "examiner.log")
            except OSError:
                continue
    try:
        handle, name = tempfile.mkstemp(prefix="examiner-", suffix=".log")
        with os.fdopen(handle, "w", encoding="utf-8") as log_file:
            log_file.write(redact_text(header) + text)
        return name
    except OSError:
        return ""


def interrupted_line(stop: Interrupted) -> str:
    """What a stop signal left, and how to continue when a run folder was being written (a run that had
    finished when the signal came, during its reports, needs only them)."""
    run_dir = current_run_dir()
    if run_dir is None or not (run_dir / "run.json").is_file():
        return f"examiner: interrupted by {stop}"
    if _run_status(run_dir) == "completed":
        return (f"examiner: interrupted by {stop} while writing the reports of a completed run: write them with "
                f"examiner report {shlex.quote(str(run_dir))}")
    return (f"examiner: interrupted by {stop}; the run is saved as interrupted: continue it with "
            f"examiner resume {shlex.quote(str(run_dir))}")


def _run_status(run_dir: Path) -> str:
    """run.json's status ('' when it cannot be read)."""
    import json

    try:
        return str(json.loads((run_dir / "run.json").read_text(encoding="utf-8")).get("status", ""))
    except (OSError, ValueError, AttributeError):
        return ""


def internal_error_line(exc: BaseException, where: str) -> str:
    first = (str(exc).strip().splitlines() or [""])[0][:300]
    kept = f"full trace in {where}" if where else "no log could be written"
    return f"examiner: internal error: {type(exc).__name__}: {first} ({kept})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    from examiner.core.redact import install_log_filter

    install_log_filter()  # httpx, openai and urllib3 log URLs at -v: never with their credentials
    forget_run_dirs()
    if not getattr(args, "func", None):
        parser.print_usage(sys.stderr)
        print("examiner: error: no command given (`examiner --help` lists them)", file=sys.stderr)
        return 2
    forget_stops()
    # SIGTERM and SIGINT are handled until the process ends (examiner.core.stopping); called from Python
    # with arguments (a test, a script), the caller's own handlers come back when the command returns.
    previous = hold_stop_signals()
    try:
        return _run(args, argv)
    finally:
        if argv is not None:
            restore_signals(previous)


def _run(args: argparse.Namespace, argv: Sequence[str] | None) -> int:
    """The command, every error turned into one line and an exit code."""
    try:
        return int(args.func(args) or 0)
    except Interrupted as stop:
        _say(interrupted_line(stop))
        return stop.exit_code
    except KeyboardInterrupt:
        print("examiner: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the one place that turns every error into one line
        return _handle(exc, args, sys.argv[1:] if argv is None else list(argv))


def _handle(exc: BaseException, args: argparse.Namespace, command: Sequence[str] = ()) -> int:
    if isinstance(exc, UserError):
        _say(f"examiner: error: {exc}")
        return EXIT_USER_ERROR
    if isinstance(exc, BudgetExhausted):
        _say(f"examiner: stopped: {exc}")
        return 3
    full = disk_full(exc)
    if full is not None:
        _say(f"examiner: error: {disk_full_line(full, args)}")
        return EXIT_USER_ERROR
    if isinstance(exc, OSError) and exc.filename is not None:
        _say(f"examiner: error: {os_error_line(exc)}")
        return EXIT_USER_ERROR
    if isinstance(exc, RecursionError):
        _say("examiner: error: the input is nested too deeply to read (a configuration or data file "
             f"with thousands of levels){_where(args)}")
        return EXIT_USER_ERROR
    where = _keep_trace(exc, args, command)
    _say(internal_error_line(exc, where))
    return EXIT_INTERNAL_ERROR


def _where(args: argparse.Namespace) -> str:
    config = getattr(args, "config", None)
    return f": {config}" if config else ""


if __name__ == "__main__":
    sys.exit(main())
