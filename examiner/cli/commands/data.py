"""`examiner data list|pull|path`: the public validation sets (LLMBar, MT-bench, PubMedQA, WikiText-2,
LegalBench, SummEval), fetched on demand into the data folder instead of shipped with the package.

`pull` fetches each file from its repository at the pinned commit (or a mirror), checks size and sha256
before the file takes its name, and prints each set's licence; `list` says what the folder holds; `path`
prints a set's folder. The work is examiner.api.data's; docs/DATA.md describes the sets."""

from __future__ import annotations

import argparse

from examiner.cli.flags import IntermixedParser, add_command

ACTIONS = ("list", "pull", "path")
SET_NAMES = ("llmbar", "mt_bench", "pubmedqa", "wikitext2", "legalbench", "summeval")
"""The registry's names, spelled out so building the parser loads nothing (a test holds the two equal)."""


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub, "data", "list, fetch (pinned, hash-checked) or locate the public validation sets",
        "The public sets examiner reads by name (llmbar:SUBSET, summeval, the loaders) are not shipped: `pull`\n"
        "fetches them from their repositories at pinned commits into the data folder ($EXAMINER_DATA, else the\n"
        "user cache folder), checking each file's size and sha256 before it takes its name, and prints each\n"
        "set's licence. `list` shows every set with its source, licence, size and whether it is present,\n"
        "missing or damaged; `path` prints a set's folder. A mirror: --base-url or $EXAMINER_DATA_URL\n"
        "(laid out as BASE/REPO/COMMIT/PATH). docs/DATA.md describes the sets and placing files by hand.",
        "examiner data list\nexaminer data pull llmbar summeval\nexaminer data pull --all\n"
        "examiner data path pubmedqa")
    p.__class__ = IntermixedParser  # `pull --base-url URL NAME`: NAMEs after a flag
    p.add_argument("action", choices=ACTIONS,
                   help="list: every set with its source, licence, size and state (present, missing, or damaged: "
                        "other bytes than the pinned sha256); pull: fetch the NAMEd sets (or --all), resuming a "
                        "killed pull, files already there not fetched again; path: print set NAME's folder")
    p.add_argument("names", nargs="*", metavar="NAME", help=f"sets: {', '.join(SET_NAMES)}")
    p.add_argument("--all", action="store_true", help="pull: every set")
    p.add_argument("--base-url", metavar="URL",
                   help="pull: a mirror laid out as URL/REPO/COMMIT/PATH (default $EXAMINER_DATA_URL, else "
                        "https://raw.githubusercontent.com)")
    p.set_defaults(func=run_data)


def run_data(args: argparse.Namespace) -> int:
    from examiner.core.errors import UserError

    if args.action != "pull" and (args.all or args.base_url):
        raise UserError(f"--all and --base-url are for `examiner data pull`, not `{args.action}`")
    if args.action == "list":
        if args.names:
            raise UserError("`examiner data list` takes no NAME (it lists every set)")
        return run_list(args)
    if args.action == "path":
        if len(args.names) != 1:
            raise UserError("`examiner data path` takes one NAME: " + ", ".join(SET_NAMES))
        return run_path(args)
    if bool(args.names) == bool(args.all):
        raise UserError("name the sets to pull (" + ", ".join(SET_NAMES) + ") or give --all, not both")
    return run_pull(args)


def run_list(args: argparse.Namespace) -> int:
    from examiner.api.data import data_status
    from examiner.cli.output.data import print_status

    print_status(data_status())
    return 0


def run_pull(args: argparse.Namespace) -> int:
    from examiner.api.data import DataPullOptions, pull_data
    from examiner.cli.output.data import DownloadProgress

    options = DataPullOptions(names=tuple(args.names), all=args.all, base_url=args.base_url)
    with DownloadProgress() as progress:
        pull_data(options, notes=progress.note, progress=progress.update)
    return 0


def run_path(args: argparse.Namespace) -> int:
    import sys

    from examiner.api.data import data_path, data_status

    name = args.names[0]
    print(data_path(name))
    state = next(s for s in data_status().sets if s.set.name == name).state
    if state != "present":
        print(f"examiner: note: {name} is {state} in that folder: run \"examiner data pull {name}\"", file=sys.stderr)
    return 0
