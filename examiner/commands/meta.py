"""`examiner meta`: which judge to trust? Meta-evaluate evaluators with JDEval, MDEval, JDEval-i or BSMEval.

    examiner meta DATA.jsonl --evaluators E1,E2,E3 --method jdeval --meta-judge ENDPOINT --out DIR
    examiner meta llmbar:Natural --evaluators E1,E2 --method mdeval --out DIR
    examiner meta --exam RUN_DIR --evaluators J1,J2 --out DIR

Evaluators and the meta-judge are endpoint names from the configuration. Running the same command
again resumes: finished assessments and meta-judgments are read from DIR and model replies are cached.
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.table import Table

from examiner.commands.common import add_config_flags, output_dir, settings_from_args
from examiner.config import EndpointSpec, Settings
from examiner.errors import UserError

console = Console(stderr=True)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("meta", help="meta-evaluate judges (JDEval, MDEval debate, JDEval-i, BSMEval) and rank them",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_config_flags(p)
    p.add_argument("data", nargs="?", help="items: a .jsonl / .json file, or llmbar:SUBSET[,SUBSET]")
    p.add_argument("--exam", metavar="RUN_DIR", help="meta-evaluate judges on an exam run's (question, answer, unit) triples")
    p.add_argument("--sample", type=int, help="--exam: triples sampled from the run (default 50; with --human-labels all)")
    p.add_argument("--human-labels", action="store_true",
                   help="--exam: the run's overrides (from `examiner view`) are the gold labels; items = overridden verdicts")
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
    g = p.add_argument_group("field mapping (input records)")
    g.add_argument("--id-field", default="id")
    g.add_argument("--instruction-field", default="input")
    g.add_argument("--output1-field", default="output_1")
    g.add_argument("--output2-field", default="output_2")
    g.add_argument("--label-field", default="label", help="gold preference 0 (tie) / 1 / 2")
    g.add_argument("--text-field", default="text", help="individual items: the text scored")
    g.add_argument("--score-field", default="score", help="individual items: gold human score")
    p.set_defaults(func=run_meta_command)


def _simulated_copy(settings: Settings, names: list[str]) -> Settings:
    """--simulate: the named endpoints become simulated ones with the same names and models."""
    data = settings.model_dump()
    for name in names:
        spec = settings.endpoint(name)
        if spec.provider != "simulated":
            data["endpoints"][name] = EndpointSpec(provider="simulated", model=spec.model,
                                                   max_concurrency=max(spec.max_concurrency, 8),
                                                   price_input_per_1m=spec.price_input_per_1m,
                                                   price_output_per_1m=spec.price_output_per_1m).model_dump()
    return Settings.model_validate(data)


def run_meta_command(args: argparse.Namespace) -> int:
    from examiner.meta.exam_source import EXAM_JUDGE, load_exam_triples
    from examiner.datasets import FieldMap
    from examiner.meta.items import load_items
    from examiner.meta.pipeline import MetaConfig, load_imported, run_meta
    from examiner.meta.report import write_reports

    evaluators = [e.strip() for e in args.evaluators.split(",") if e.strip()]
    if (args.data is None) == (args.exam is None):
        raise UserError("give either a data file (or llmbar:SUBSET) or --exam RUN_DIR")
    if args.human_labels and not args.exam:
        raise UserError("--human-labels takes the labels from an exam run's overrides: use it with --exam RUN_DIR")
    settings = settings_from_args(args)
    out = output_dir(args.out)
    imported = []
    skipped = []
    if args.exam:
        sample = args.sample if args.sample is not None else (None if args.human_labels else 50)
        items, own = load_exam_triples(Path(args.exam), sample=sample, seed=args.seed, human_labels=args.human_labels)
        if not args.no_exam_judge:
            imported += own
            evaluators.append(EXAM_JUDGE)
    else:
        fields = FieldMap(id=args.id_field, instruction=args.instruction_field, output_1=args.output1_field,
                          output_2=args.output2_field, label=args.label_field, output=args.text_field, human=args.score_field)
        items, skipped = load_items(args.data, fields, args.limit)
    if args.limit:
        items = items[: args.limit]
    if args.assessments:
        ready, bad = load_imported(Path(args.assessments))
        imported += ready
        skipped += [replace(s, message=f"assessments file {s.message}") for s in bad]
    for s in skipped[:20]:
        console.print(f"[yellow]skipped[/yellow] {s.message}")
    if len(skipped) > 20:
        console.print(f"... and {len(skipped) - 20} more skipped records (see the report)")
    if len(set(evaluators)) < 2:
        raise UserError("meta-evaluation needs at least two distinct evaluators (--evaluators E1,E2[,...])")
    called = [e for e in evaluators if e not in {a.evaluator for a in imported}]
    if args.simulate:
        names = called + [n for n in (args.meta_judge, args.debater) if n]
        settings = _simulated_copy(settings, names)
    config = MetaConfig(evaluators=evaluators, method=args.method, meta_judge=args.meta_judge, seed=args.seed,
                        draws=args.draws, both_orders=args.both_orders, rules=args.rules, max_rounds=args.max_rounds,
                        statement_words=args.statement_words, shuffles=args.shuffles, bootstrap=args.bootstrap,
                        concurrency=args.concurrency, debater=args.debater)
    run = asyncio.run(run_meta(items, config, settings, out, imported=imported, skipped=skipped,
                               progress=lambda m: console.print(f"[dim]{m}[/dim]")))
    paths = write_reports(run, out)
    _print_summary(run)
    for p in run.problems:
        console.print(f"[yellow]warning:[/yellow] {p}")
    console.print(f"reports: {paths['md']}  {paths['html']}  {paths['json']}")
    return 0


def _print_summary(run: object) -> None:
    from examiner.meta.report import ranking_rows

    table = Table(title=f"meta-evaluation ({run.config.method}), {run.rankings.get('matches', 0)} matches")  # type: ignore[attr-defined]
    for col in ("evaluator", "baseline", "win rate", "Elo ± std", "BT [95%]"):
        table.add_column(col, justify="left" if col == "evaluator" else "right")
    for row in ranking_rows(run):  # type: ignore[arg-type]
        def f(x: object, d: int = 3) -> str:
            return "-" if x is None else f"{x:.{d}f}"  # type: ignore[str-format]
        table.add_row(row["evaluator"], f(row["baseline"]), f(row["win_rate"]),
                      f"{f(row['elo'], 1)} ± {f(row['elo_std'], 1)}",
                      f"{f(row['bt'], 1)} [{f(row['bt_low'], 1)}, {f(row['bt_high'], 1)}]")
    Console().print(table)
    _print_gold_agreement(run)
    agree = run.rankings.get("agreement", {}).get("elo")  # type: ignore[attr-defined]
    if agree:
        Console().print(f"Elo vs baseline: Kendall tau {agree['kendall_tau']:.3f}, Spearman rho "
                        f"{agree['spearman_rho']:.3f}, top-1 match {agree['top1_match']}")


def _print_gold_agreement(run: object) -> None:
    """Verdict items with gold labels (--human-labels): each evaluator's agreement and Cohen's kappa."""
    from examiner.meta.report import gold_agreement_table

    found = gold_agreement_table(run)  # type: ignore[arg-type]
    if not found:
        return
    header, rows = found
    table = Table(title="agreement with the gold labels (people's overrides)")
    for col in header:
        table.add_column(col, justify="left" if col == "evaluator" else "right")
    for row in rows:
        table.add_row(*row)
    Console().print(table)
