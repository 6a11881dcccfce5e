"""`examiner judge-stats --human-from-run RUN_DIR`: the exam's own judge against people's overrides
(examiner.api.people), printed as Markdown; --out also writes report.json and report.md."""

from __future__ import annotations

import argparse

from examiner.core.errors import UserError
from examiner.core.plain_text import visible_controls


def run_judge_vs_people(args: argparse.Namespace) -> int:
    """The judge-stats entry for --human-from-run: print the figures; with --out also write report files."""
    from examiner.api.people import JudgeVsPeopleOptions, judge_vs_people

    if args.judgments:
        raise UserError("give a judgments file or --human-from-run RUN_DIR, not both")
    result = judge_vs_people(JudgeVsPeopleOptions(run_dir=args.human_from_run))
    print(visible_controls(result.markdown))  # it quotes answers and reasons: no terminal sequence of theirs
    if args.out:
        for name, path in result.write(args.out).items():
            print(f"{name}: {path}")
    return 0
