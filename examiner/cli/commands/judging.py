"""`examiner judge` (judge a dataset with one method) and `examiner judge-stats` (metrics of judgments
made anywhere): their flags, parsed into the options of examiner.api.judging, whose result is printed
(examiner.cli.output.judging)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from examiner.cli.flags import add_command, add_config_flags, job_flags
from examiner.cli.output.judging import print_summary
from examiner.core.errors import EXIT_OUTAGE, BudgetExhausted, UserError
from examiner.core.names import JUDGE_METHODS

if TYPE_CHECKING:
    from examiner.reporting.model import JudgeReport

UNPARSEABLE = ("drop", "wrong", "own-class")
NOTHING_JUDGED = 4
"""Exit code of `examiner judge` when rows were read but not one got a verdict or a score."""


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub, "judge", "judge a JSONL dataset (RevisEval, G-Eval, pairwise, reference judge)",
        "Judge every row of a dataset (.jsonl, a .json array, or llmbar:SUBSET, fetched by `examiner data pull\n"
        "llmbar`) with one method and write judgments.jsonl, report.json/.md (agreement with gold labels, swap\n"
        "consistency, correlations with human scores), the ledger and a response cache into --out. Exits 4\n"
        "when no row could be judged (every judgment failed or was unparseable), 75 when every model call failed\n"
        "(an outage: run it again when the endpoint answers), after writing what was computed.",
        "examiner judge pairs.jsonl --method pairwise --swap --judge openai --out runs/j1\n"
        "examiner judge llmbar:Natural --method pairwise --limit 20 --simulate --out runs/natural\n"
        "examiner judge summ.jsonl --method geval --criterion 'Coherence (1-5): ...' --human-field coherence "
        "--out runs/g1 --simulate")
    p.add_argument("data", help="a .jsonl or .json file, or llmbar:SUBSET[,SUBSET] (LLMBar's field names)")
    p.add_argument("--method", required=True, choices=JUDGE_METHODS)
    p.add_argument("--judge", metavar="ENDPOINT", action="append", default=[],
                   help="endpoint for every judging call (default: each role's endpoint); give it two or more "
                        "times for a judge panel (pairwise): the majority decides, ties stay unscored")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for judgments.jsonl, report.json/.md, ledger, cache")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N rows")
    p.add_argument("--no-cache", action="store_true", help="do not reuse cached replies in --out")
    p.add_argument("--quiet", action="store_true", help="no progress display")
    f = p.add_argument_group("field mapping")
    for name, default in (("id", "id"), ("instruction", "instruction"), ("output", "output"), ("output1", "output_1"),
                          ("output2", "output_2"), ("reference", "reference"), ("label", "label"),
                          ("human", "human_score"), ("source", "source"), ("group", "group"), ("system", "system")):
        f.add_argument(f"--{name}-field", metavar="KEY", help=f"(default: {default})")
    f.add_argument("--human-range", metavar="LO,HI", help="human scores must lie within LO..HI (rows outside are skipped)")
    pw = p.add_argument_group("pairwise / reviseval")
    pw.add_argument("--swap", action="store_true", help="judge each pair in both orders (consistency, position bias)")
    pw.add_argument("--grade-only", action="store_true", help="ask for the grade line only (no reason)")
    pw.add_argument("--tie-threshold", type=float, default=0.0, metavar="X", help="|score1-score2| <= X is a tie")
    pw.add_argument("--json-grades", action="store_true",
                    help="ask for the grades as a JSON object (for models that break the text line format)")
    pw.add_argument("--with-reference", action="store_true", help="pairwise: give the row's reference to the judge")
    pw.add_argument("--judge-cascade", metavar="CHEAP,STRONG", default="",
                    help="pairwise: the cheap judge's confident verdicts stand, the rest go to the strong judge, "
                         "with a promised agreement (docs/CASCADE.md)")
    pw.add_argument("--target-agreement", type=float, default=0.9, metavar="A",
                    help="cascade: promised agreement rate with the strong judge on the pairs the cheap judge keeps "
                         "(risk-controlled: a rate, not every run's realised share; default %(default)s)")
    pw.add_argument("--cascade-risk", type=float, default=0.1, metavar="R",
                    help="cascade: chance allowed that the promise fails (default %(default)s)")
    pw.add_argument("--cascade-reference", choices=("strong", "gold"), default="strong",
                    help="cascade: promise agreement with the strong judge, or with the rows' gold labels "
                         "(calibrated on them; default %(default)s)")
    pw.add_argument("--cascade-confidence", choices=("auto", "logprobs", "samples"), default="auto",
                    help="cascade: read the cheap judge's confidence from its log-probabilities, its samples, or "
                         "auto: logprobs where the endpoint gives them (default %(default)s)")
    pw.add_argument("--calibration-share", type=float, default=0.2, metavar="P",
                    help="cascade: share of rows the strong judge also judges (default %(default)s)")
    pw.add_argument("--single", action="store_true", help="reviseval: one response per row (--output-field), not pairs")
    pw.add_argument("--rubric", help="reviseval: rubric given to the reviser")
    pw.add_argument("--seed", type=int, default=0, help="reviseval: seed for which response gets revised")
    pw.add_argument("--classic-metrics", metavar="NAMES",
                    help="reviseval: metrics vs the revised reference, comma-separated, or 'none' "
                         "(default: bleu,rouge1,rouge2,rougeL,bertscore,embedding)")
    g = p.add_argument_group("geval / reference")
    g.add_argument("--task", help="geval: task introduction")
    g.add_argument("--criterion", help="geval: criterion with its scale, e.g. 'Coherence (1-5): ...'")
    g.add_argument("--form-label", default="Score", help="geval: the form field to fill (default Score)")
    g.add_argument("--scale", type=int, help="top of the score scale (geval default 5, reference default 10)")
    g.add_argument("--samples", type=int, default=20, help="geval: samples when logprobs are unavailable")
    g.add_argument("--no-logprobs", action="store_true", help="geval: always use the sampling estimate")
    add_config_flags(p)
    p.set_defaults(func=run_judge)

    s = add_command(
        sub, "judge-stats", "agreement, swap consistency/bias and correlations of a judgments JSONL",
        "Compute the judging metrics of judgments made anywhere (by `examiner judge` or another tool):\n"
        "agreement with gold labels (accuracy, macro P/R/F1, kappa), swap consistency and position bias,\n"
        "agreement with a teacher's judgments. Prints them as tables; --out also writes report.json/.md.\n"
        "With --human-from-run RUN_DIR: the exam's judge against the people's overrides of that run.",
        "examiner judge-stats runs/j1/judgments.jsonl --labels gold.jsonl\n"
        "examiner judge-stats --human-from-run runs/water")
    s.add_argument("judgments", nargs="?", help="JSONL of judgments (from `examiner judge` or elsewhere)")
    s.add_argument("--human-from-run", metavar="RUN_DIR",
                   help="instead of a judgments file: the exam's judge against the run's overrides (examiner view)")
    s.add_argument("--labels", metavar="FILE", help="JSONL with gold labels (id + label); default: labels in the judgments")
    s.add_argument("--teacher", metavar="FILE", help="JSONL of a teacher's judgments (same format) to agree with")
    s.add_argument("--id-field", default="id")
    s.add_argument("--order-field", default="order", help="original/swapped (also ab/ba, 0/1, false/true)")
    s.add_argument("--verdict-field", default="verdict", help="0 tie, 1, 2; null = unparseable")
    s.add_argument("--label-field", default="label")
    s.add_argument("--score-fields", default="score_1,score_2", metavar="A,B",
                   help="grades in the order shown, used when a record has no verdict")
    s.add_argument("--score-range", default="1,10", metavar="LO,HI", help="valid grade range (default 1,10)")
    s.add_argument("--tie-threshold", type=float, default=0.0)
    s.add_argument("--verdict-in-shown-order", action="store_true",
                   help="verdicts refer to the order shown (swapped ones are mapped back)")
    sc = s.add_argument_group("single scores (G-Eval, reference judge or any scorer; read when no row has a verdict)")
    sc.add_argument("--score-field", default="score", metavar="KEY", help="the judge's score; null = unparseable")
    sc.add_argument("--human-field", default="human", metavar="KEY", help="the human score (default human)")
    sc.add_argument("--group-field", default="group", metavar="KEY",
                    help="the input a row scores (summary level: per-input correlations averaged)")
    sc.add_argument("--system-field", default="system", metavar="KEY",
                    help="the system that wrote the output (system level: per-system means correlated)")
    s.add_argument("--unparseable", choices=UNPARSEABLE, default="drop",
                   help="judgments without a usable verdict or score: drop them (default), count them as wrong "
                        "(pairwise: a label other than the gold one; scores: the low end of --score-range), or "
                        "own-class (pairwise only: a class of their own, never correct, macro averages over the "
                        "gold classes, as scikit-learn's f1_score(labels=<gold classes>, average='macro'))")
    s.add_argument("--out", metavar="DIR", help="also write report.json and report.md there")
    s.set_defaults(func=run_judge_stats)


def _range(text: str | None, flag: str) -> tuple[float, float] | None:
    """LO,HI as two numbers, low first; None without the flag."""
    if not text:
        return None
    try:
        lo, hi = (float(x) for x in text.split(","))
    except ValueError:
        raise UserError(f"{flag} expects LO,HI (e.g. 1,5), got '{text}'") from None
    if lo > hi:
        raise UserError(f"{flag}: LO must not exceed HI, got '{text}'")
    return lo, hi


JSON_GRADES_HINT = ("; the judge replied but no grade line could be read: a small judge that does not keep the "
                    "`S1 S2` line format is often read with --json-grades (its grades asked as a JSON object)")
"""What the exit-4 line adds when --json-grades would likely help."""


def nothing_judged_line(report: JudgeReport, rows: int, report_md: str, json_grades: bool) -> str:
    """The one error line of a judging run that judged nothing (exit 4); it suggests --json-grades when a single
    pairwise judge's replies arrived and none could be read, and the flag was not given (a panel that never
    agrees, or calls that all failed, are not helped by it)."""
    line = (f"examiner: error: nothing could be judged: every judgment of the {rows} rows failed or was "
            f"unparseable (see {report_md})")
    section = report.pairwise
    read_nothing = section is not None and section.n_unparseable - section.n_failed_calls > 0
    single = not str(report.judge or "").startswith(("panel of", "cascade of"))
    return line + (JSON_GRADES_HINT if read_nothing and single and not json_grades else "")


JUDGE_FLAGS = ("method", "limit", "no_cache", "quiet", "id_field", "instruction_field", "output_field",
               "output1_field", "output2_field", "reference_field", "label_field", "human_field", "source_field",
               "group_field", "system_field", "swap", "grade_only", "tie_threshold", "json_grades", "with_reference",
               "single", "rubric", "seed", "task", "criterion", "form_label", "scale", "samples", "no_logprobs")
"""Flags of `examiner judge` whose option has the flag's own name."""


def run_judge(args: argparse.Namespace) -> int:
    from examiner.api.judging import JudgeOptions, judge

    options = JudgeOptions(**job_flags(args), data=args.data, out=args.out, judges=tuple(args.judge),
                           judge_cascade=tuple(n.strip() for n in args.judge_cascade.split(",") if n.strip()),
                           target_agreement=args.target_agreement, cascade_risk=args.cascade_risk,
                           cascade_confidence=args.cascade_confidence, cascade_reference=args.cascade_reference,
                           calibration_share=args.calibration_share,
                           human_range=_range(args.human_range, "--human-range"),
                           classic_metrics=None if args.classic_metrics is None else
                           tuple(m.strip() for m in args.classic_metrics.split(",") if m.strip()),
                           **{name: getattr(args, name) for name in JUDGE_FLAGS})
    result = judge(options, args.config)
    print_summary(result.report, result.paths)
    if result.status == "budget_exhausted":
        raise BudgetExhausted(f"budget reached; {result.report.rows_judged} rows written to {args.out}")
    if result.outage is not None:  # an outage, not unreadable replies: a retry may succeed (EX_TEMPFAIL)
        print(f"examiner: error: {result.outage}; when the endpoint answers again, run the same command "
              f"(replies already received are cached in {args.out})", file=sys.stderr)
        return EXIT_OUTAGE
    if result.judged == 0:
        print(nothing_judged_line(result.report, result.rows, str(result.paths["report_md"]), args.json_grades),
              file=sys.stderr)
        return NOTHING_JUDGED
    return 0


STATS_FLAGS = ("judgments", "labels", "teacher", "out", "unparseable", "id_field", "order_field", "verdict_field",
               "label_field", "tie_threshold", "verdict_in_shown_order", "score_field", "human_field",
               "group_field", "system_field")
"""Flags of `examiner judge-stats` whose option has the flag's own name."""


def run_judge_stats(args: argparse.Namespace) -> int:
    from examiner.api.judging import JudgeStatsOptions, judge_stats

    if args.human_from_run:
        from examiner.cli.commands.human_labels import run_judge_vs_people

        return run_judge_vs_people(args)
    if not args.judgments:
        raise UserError("give a judgments file (or --human-from-run RUN_DIR)")
    names = tuple(x.strip() for x in args.score_fields.split(","))
    if len(names) != 2:
        raise UserError(f"--score-fields expects two names, got '{args.score_fields}'")
    options = JudgeStatsOptions(score_fields=names, score_range=_range(args.score_range, "--score-range"),
                                **{name: getattr(args, name) for name in STATS_FLAGS})
    result = judge_stats(options)
    print_summary(result.report, result.paths)
    return 0
