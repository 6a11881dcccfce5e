"""`examiner gate BASE NEW --margin M`: a regression decision for CI pipelines.

Exit 0 when NEW's accuracy is not below BASE's by more than M at the chosen level, 1 when it may be; one
line gives the difference, the one-sided lower bound and the power (`--json`: the figures as JSON). Bad
input is one `examiner: error:` line and exit 2, as for every command; so is a run whose health failed
("cannot decide"), unless --allow-unhealthy.
"""

from __future__ import annotations

import argparse
import json

from examiner.cli.flags import add_command

EXIT_PASSED, EXIT_FAILED = 0, 1


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub, "gate", "fail a CI pipeline when a new run is worse than a base run by more than a margin",
        "Non-inferiority decision on the units both runs hold (runs over the same corpus): the accuracy\n"
        "difference NEW - BASE, paired unit by unit, with a one-sided lower bound (t on documents - 1 df,\n"
        "never narrower than an exact bound on the units). Exit 0 when the bound lies above -MARGIN (NEW is not\n"
        "worse by more than MARGIN), 1 when it does not; one line gives the difference, the bound and the\n"
        "power to pass were NEW as good as BASE. People's overrides count, as in the run's report. A run\n"
        "whose health failed cannot pass: exit 2, \"cannot decide\" (--allow-unhealthy decides anyway).\n"
        "Makes no model call (docs/STATISTICS.md).",
        "examiner gate runs/main runs/candidate --margin 0.02\n"
        "examiner gate runs/two runs/two --base-target gpt-a --new-target gpt-b --margin 0.05 --json")
    p.add_argument("base", metavar="BASE", help="the run folder NEW is held against")
    p.add_argument("new", metavar="NEW", help="the run folder under test (may be BASE, with another target)")
    p.add_argument("--margin", type=float, required=True, metavar="M",
                   help="largest accuracy drop that still passes (absolute: 0.02 is two points)")
    p.add_argument("--level", type=float, default=0.95, metavar="L",
                   help="confidence of the one-sided decision (default %(default)s)")
    p.add_argument("--target", metavar="NAME", help="the target read in both runs (default: each run's only one)")
    p.add_argument("--base-target", metavar="NAME", help="the target read in BASE (default: --target)")
    p.add_argument("--new-target", metavar="NAME", help="the target read in NEW (default: --target)")
    p.add_argument("--metric", default="accuracy",
                   choices=("accuracy", "correct_given_attempted", "hallucination_rate", "abstention_rate",
                            "f_score", "penalised_0.5", "penalised_0.75", "penalised_0.9", "ece", "brier", "aurc"),
                   help="the figure decided on (default %(default)s); for hallucination_rate, abstention_rate, "
                        "ece, brier and aurc NEW fails when its figure is higher than BASE's by more than the "
                        "margin; the margin is on the figure's scale (a penalised score's too)")
    p.add_argument("--json", action="store_true", help="print the decision's figures as JSON")
    p.add_argument("--allow-unhealthy", action="store_true",
                   help="decide even when a run's health failed (default: exit 2, cannot decide)")
    p.add_argument("--sequential", action="store_true",
                   help="the paired sequential gate: the clusters in a seeded random order until an anytime-valid "
                        "interval decides; exit 0 not worse, 1 worse, 3 undecided, 4 equivalent within +-MARGIN")
    p.add_argument("--sequential-bounds", choices=("one-sided", "two-sided"), default=None,
                   help="with --sequential: 'one-sided' (default) decides on bounds each valid alone at --level; "
                        "'two-sided' on the joint interval, the gate as first written (decides later)")
    p.set_defaults(func=run_gate)


def run_gate(args: argparse.Namespace) -> int:
    from examiner.api.gating import GateOptions, gate
    from examiner.reporting.writer import strict

    if args.sequential:
        return run_sequential_gate(args)
    if getattr(args, "sequential_bounds", None) is not None:
        from examiner.core.errors import UserError

        raise UserError("--sequential-bounds goes with --sequential")
    result = gate(GateOptions(base=args.base, new=args.new, margin=args.margin, level=args.level,
                              target=args.target, base_target=args.base_target, new_target=args.new_target,
                              allow_unhealthy=args.allow_unhealthy, metric=args.metric))
    if args.json:
        print(json.dumps(strict(result.as_dict()), indent=1, allow_nan=False))
    else:
        print(result.line())
    return EXIT_PASSED if result.passed else EXIT_FAILED


def run_sequential_gate(args: argparse.Namespace) -> int:
    """`--sequential` (examiner/api/sequential_gate.py): the outcome's exit code, one line or --json."""
    from examiner.api.gating import GateOptions
    from examiner.api.sequential_gate import sequential_gate_runs
    from examiner.core.errors import UserError

    if getattr(args, "metric", "accuracy") != "accuracy":
        raise UserError("--sequential decides on accuracy only: leave out --metric")
    result = sequential_gate_runs(GateOptions(base=args.base, new=args.new, margin=args.margin, level=args.level,
                                              target=args.target, base_target=args.base_target,
                                              new_target=args.new_target, allow_unhealthy=args.allow_unhealthy),
                                  scheme=getattr(args, "sequential_bounds", None) or "one-sided")
    print(json.dumps(result.as_dict(), indent=1) if args.json else result.line())
    return result.exit_code
