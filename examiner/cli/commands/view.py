"""`examiner view RUN_DIR`: review a run's verdicts in the browser and override them with a reason.

The page lists every verdict (question, answer excerpt, the judge's verdict and reason, the unit's source
passage) with filters by target, cluster, verdict and question type. Overrides go to overrides.jsonl in
the run directory; `examiner report RUN_DIR` then shows accuracy and coverage with and without them.
The page's sample mode (/sample, examiner/reporting/sample_page.py) labels a random sample instead.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass

from examiner.cli.flags import add_command
from examiner.core.errors import UserError


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub, "view", "review and override a run's verdicts in a local web page (127.0.0.1 only)",
        "Serve a page on 127.0.0.1 listing every verdict (question, answer excerpt, the judge's verdict and\n"
        "reason, the unit's source passage), filterable by target, cluster, verdict and question type. An\n"
        "override (new label + reason) is appended to overrides.jsonl; the original records never change.\n"
        "`examiner report RUN_DIR` then shows accuracy and coverage with and without the overrides.\n"
        "Its \"label a random sample\" mode (/sample) draws a seeded random sample of the judged units and\n"
        "records people's labels of it in human_sample.jsonl (the judge's verdict hidden); the report then\n"
        "calibrates each target's accuracy with them (PPI++). `examiner review` does the same without a browser.",
        "examiner view runs/handbook --who ana    # then open the printed http://127.0.0.1:PORT/ address")
    p.add_argument("run_dir", help="an exam run directory (holds run.json)")
    p.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (default 8765; 0 picks a free one)")
    p.add_argument("--who", help="name recorded with each override (default: your login name)")
    p.set_defaults(func=run_view)


def _default_who() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name in this environment (a container without a passwd entry)
        return "reviewer"


def run_view(args: argparse.Namespace) -> int:
    from examiner.core.rundir import RunDir
    from examiner.reporting.view_server import serve

    if not 0 <= args.port <= 65535:
        raise UserError(f"--port must be 0..65535, got {args.port}")
    RunDir(args.run_dir).read_info()  # one-line error for a folder that is not a run

    def ready(url: str) -> None:
        print(f"examiner view: {url} (127.0.0.1 only; Ctrl-C stops)", flush=True)

    try:
        asyncio.run(serve(args.run_dir, port=args.port, who=args.who or _default_who(), ready=ready))
    except KeyboardInterrupt:
        return 0
    return 0
