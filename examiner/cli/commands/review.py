"""`examiner review RUN_DIR --sample N`: label a random sample of a run's verdicts without a browser.

The headless sibling of the review page's sample mode (`examiner view`): draw the sample (recorded in
human_sample.jsonl), write a sheet of the drawn units to fill in, import the filled-in labels. `examiner
report RUN_DIR` then shows each target's accuracy calibrated by them (examiner.api.human_sample).
"""

from __future__ import annotations

import argparse

from examiner.cli.flags import add_command


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub, "review", "draw a random sample of a run's verdicts and import people's labels of it",
        "Draw a random sample of the run's judged units (seeded, uniformly over all targets or --per-target),\n"
        "recorded in human_sample.jsonl with how it was drawn; write the drawn units as a JSONL sheet to fill\n"
        "in (--sheet; the judge's verdict is left out), and import the filled-in labels (--labels: one JSON\n"
        "object per line with target, unit_id and verdict: correct, incorrect, abstained or unrelated). `examiner report`\n"
        "then calibrates each target's accuracy with them (PPI++, from 20 labels per target; --extend N adds\n"
        "the next N units of the same seeded order, keeping the labels given). Overrides made in `examiner view` are\n"
        "never used as sample labels. The review page offers the same sample to label in a browser.",
        "examiner review runs/water --sample 100 --seed 1 --sheet sample.jsonl\n"
        "examiner review runs/water --labels sample.jsonl && examiner report runs/water\n"
        "examiner review runs/water --extend 10 --sheet sample.jsonl   # too few labels: draw 10 more")
    p.add_argument("run_dir", help="an exam run directory (holds run.json)")
    p.add_argument("--sample", type=int, metavar="N", help="draw N judged units (per target with --per-target) "
                   "when the run has no sample yet")
    p.add_argument("--seed", type=int, default=0, help="seed of the draw (default 0)")
    p.add_argument("--extend", type=int, metavar="N", help="add N units (per target for a per-target draw) to the "
                   "run's sample: the next of its seeded order, so the labels given stay valid")
    p.add_argument("--per-target", action="store_true", help="draw N units from each target (stratified)")
    p.add_argument("--sheet", metavar="FILE.jsonl", help="write the drawn units here to fill in")
    p.add_argument("--labels", metavar="FILE.jsonl", help="import people's labels of the drawn units")
    p.add_argument("--who", help="name recorded with the draw and the labels (default: your login name)")
    p.set_defaults(func=run_review)


def run_review(args: argparse.Namespace) -> int:
    from examiner.api import ReviewSampleOptions, review_sample
    from examiner.cli.commands.view import _default_who
    from examiner.cli.flag_errors import options_from_flags
    from examiner.core.errors import UserError

    if args.seed < 0:  # the draw's generator takes none below 0 (it raised ValueError: exit 70)
        raise UserError(f"--seed must be 0 or more, got {args.seed}")
    options = options_from_flags(ReviewSampleOptions, {"size": "--sample"}, run_dir=args.run_dir, size=args.sample,
                                 seed=args.seed, per_target=args.per_target, who=args.who or _default_who(),
                                 sheet=args.sheet, labels=args.labels, extend=args.extend)
    for line in review_sample(options).lines():
        print(line)
    return 0
