"""`examiner meta`: which judge to trust? Its flags, parsed into the options of examiner.api.meta
(JDEval, MDEval, JDEval-i or BSMEval), whose ranking is printed (examiner.cli.output.meta)."""

from __future__ import annotations

import argparse
import sys

from examiner.cli.flags import add_command, add_config_flags, job_flags
from examiner.cli.output.meta import print_summary


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub, "meta", "meta-evaluate judges (JDEval, MDEval debate, JDEval-i, BSMEval) and rank them",
        "Which judge to trust? Every evaluator assesses the items, a meta-judge (or a debate) decides\n"
        "between pairs of assessments, and the evaluators are ranked by win rate, Elo and Bradley-Terry,\n"
        "against a baseline (accuracy on the gold labels) where there is one. Evaluators and the meta-judge\n"
        "are endpoint names from the configuration. Running the same command again resumes: finished\n"
        "assessments and meta-judgments are read from DIR and model replies are cached.",
        "examiner meta llmbar:Natural --evaluators E1,E2 --method jdeval --limit 20 --simulate --out runs/m1\n"
        "examiner meta DATA.jsonl --evaluators E1,E2,E3 --method mdeval --meta-judge ENDPOINT --out DIR\n"
        "examiner meta --exam runs/water --evaluators J1,J2 --out runs/m2")
    add_config_flags(p)
    p.add_argument("data", nargs="?", help="items: a .jsonl / .json file, or llmbar:SUBSET[,SUBSET]")
    p.add_argument("--exam", metavar="RUN_DIR", help="meta-evaluate judges on an exam run's (question, answer, unit) triples")
    p.add_argument("--sample", type=int, help="--exam: triples sampled from the run (default 50; with --human-labels all)")
    p.add_argument("--human-labels", action="store_true",
                   help="--exam: the run's overrides (from `examiner view`) are the gold labels; items = overridden verdicts")
    p.add_argument("--min-gold", type=int, default=10, metavar="N",
                   help="fewest gold-labelled items to rank evaluators on (default %(default)s; fewer: exit 2)")
    p.add_argument("--no-exam-judge", action="store_true", help="--exam: leave the run's own judge out of the ranking")
    p.add_argument("--evaluators", required=True, help="comma-separated evaluator endpoint names (at least two)")
    p.add_argument("--method", default="jdeval", choices=("jdeval", "mdeval", "jdeval-i", "bsmeval"))
    p.add_argument("--meta-judge", metavar="ENDPOINT", help="endpoint of the meta-judge / referee (default: meta_judge role)")
    p.add_argument("--out", required=True, metavar="DIR", help="run directory (records, cache, reports)")
    p.add_argument("--limit", type=int, help="use only the first N items")
    p.add_argument("--seed", type=int, default=0, help="pair draws, Elo shuffles and bootstrap seed")
    p.add_argument("--shuffles", type=int, default=200, help="Elo shuffles of the match list (default 200)")
    p.add_argument("--bootstrap", type=int, default=1000, help="Bradley-Terry bootstrap resamples (default 1000)")
    p.add_argument("--draws", type=int, default=3, help="evaluator pairs drawn per item (default 3)")
    p.add_argument("--both-orders", action="store_true", help="show each pair both ways; report the meta-judge's consistency")
    p.add_argument("--rules", choices=("enforce", "trust"), default="enforce",
                   help="JDEval: outcome follows the rules where they decide (enforce) or the stated better assistant (trust)")
    p.add_argument("--max-rounds", type=int, default=5, help="MDEval: rounds before a forced verdict (default 5)")
    p.add_argument("--statement-words", type=int, default=200, help="MDEval: word limit of a debater statement")
    p.add_argument("--debater", metavar="ENDPOINT", help="MDEval: one endpoint argues both sides (default: each evaluator)")
    p.add_argument("--assessments", metavar="FILE", help="JSONL of ready-made assessments (item_id, evaluator, decision|score, explanation)")
    p.add_argument("--concurrency", type=int, default=64, help="items in flight (endpoints keep their own limits)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    g = p.add_argument_group("field mapping (input records)")
    g.add_argument("--id-field", default="id")
    g.add_argument("--instruction-field", default="input")
    g.add_argument("--output1-field", default="output_1")
    g.add_argument("--output2-field", default="output_2")
    g.add_argument("--label-field", default="label", help="gold preference 0 (tie) / 1 / 2")
    g.add_argument("--text-field", default="text", help="individual items: the text scored")
    g.add_argument("--score-field", default="score", help="individual items: gold human score")
    p.set_defaults(func=run_meta_command)


META_FLAGS = ("data", "exam", "sample", "human_labels", "min_gold", "no_exam_judge", "method", "meta_judge", "out", "limit",
              "seed", "shuffles", "bootstrap", "draws", "both_orders", "rules", "max_rounds", "statement_words",
              "debater", "assessments", "concurrency", "quiet", "id_field", "instruction_field", "output1_field",
              "output2_field", "label_field", "text_field", "score_field")
"""Flags of `examiner meta` whose option has the flag's own name."""


def run_meta_command(args: argparse.Namespace) -> int:
    from examiner.api.meta import MetaOptions, meta_evaluate

    options = MetaOptions(**job_flags(args), evaluators=tuple(e.strip() for e in args.evaluators.split(",")),
                          **{name: getattr(args, name) for name in META_FLAGS})
    result = meta_evaluate(options, args.config)
    print_summary(result.run)
    for p in result.problems:
        print(f"warning: {p}", file=sys.stderr)
    print(f"reports: {result.paths['md']}  {result.paths['html']}  {result.paths['json']}", file=sys.stderr)
    return 0
