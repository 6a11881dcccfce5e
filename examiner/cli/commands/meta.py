"""`examiner meta`: which judge to trust? Meta-evaluate evaluators with JDEval, MDEval, JDEval-i or BSMEval."""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from examiner.cli.flags import add_command, add_config_flags, fitted_table, output_dir, print_table, settings_from_args
from examiner.core.errors import UserError

if TYPE_CHECKING:
    from examiner.core.config import Settings
    from examiner.meta.pipeline import MetaRun


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
        "examiner meta --exam runs/pubmed --evaluators J1,J2 --out runs/m2")
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


def _simulated_copy(settings: Settings, names: list[str]) -> Settings:
    """--simulate: the named endpoints become simulated ones with the same names and models."""
    from examiner.core.config import EndpointSpec, Settings

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
    run, paths = meta(args)
    _print_summary(run)
    for p in run.problems:
        print(f"warning: {p}", file=sys.stderr)
    print(f"reports: {paths['md']}  {paths['html']}  {paths['json']}", file=sys.stderr)
    return 0


def meta(args: argparse.Namespace) -> tuple[MetaRun, dict[str, Path]]:
    """Run (or resume) the meta-evaluation `args` describe and write its reports: what `examiner meta`
    and examiner.meta (the Python API) share. Progress goes to stderr."""
    from examiner.meta.exam_source import EXAM_JUDGE, load_exam_triples
    from examiner.corpus.datasets import FieldMap
    from examiner.meta.items import load_items
    from examiner.meta.pipeline import MetaConfig, load_imported, run_meta
    from examiner.meta.sections import write_reports

    def say(message: str) -> None:  # progress and skipped records go to stderr, the summary to stdout
        print(message, file=sys.stderr)

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
        say(f"skipped {s.message}")
    if len(skipped) > 20:
        say(f"... and {len(skipped) - 20} more skipped records (see the report)")
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
                               progress=None if args.quiet else say))
    return run, write_reports(run, out)


def _print_summary(run: MetaRun) -> None:
    from examiner.meta.sections import ranking_rows

    def f(x: float | None, d: int = 3) -> str:
        return "-" if x is None or not math.isfinite(x) else f"{x:.{d}f}"

    numbers = ("baseline", "win rate", "Elo ± std", "BT [95%]")
    table = fitted_table(f"meta-evaluation ({run.config.method}), {run.rankings.get('matches', 0)} matches",
                         ("evaluator", *numbers), numeric=numbers)
    for row in ranking_rows(run):
        table.add_row(row["evaluator"], f(row["baseline"]), f(row["win_rate"]),
                      f"{f(row['elo'], 1)} ± {f(row['elo_std'], 1)}",
                      f"{f(row['bt'], 1)} [{f(row['bt_low'], 1)}, {f(row['bt_high'], 1)}]")
    print_table(table)
    _print_gold_agreement(run)
    agree = run.rankings.get("agreement", {}).get("elo")
    if agree:
        print(agreement_line(agree, run.baseline.get("scores", {})))


def _print_gold_agreement(run: object) -> None:
    """Verdict items with gold labels (--human-labels): each evaluator's agreement and Cohen's kappa."""
    from examiner.meta.sections import gold_agreement_table

    found = gold_agreement_table(run)  # type: ignore[arg-type]
    if not found:
        return
    header, rows = found
    numbers = [col for col in header if col != "evaluator"]
    table = fitted_table("agreement with the gold labels (people's overrides)", header, numeric=numbers)
    for row in rows:
        table.add_row(*row)
    print_table(table)


def agreement_line(agree: Mapping[str, Any], baseline: Mapping[str, float]) -> str:
    """Elo ranking vs the baseline ranking, or why the comparison is undefined: a rank correlation (and
    a top-1 match) means nothing when every evaluator has the same baseline score (or the same Elo)."""
    tau, rho = agree.get("kendall_tau"), agree.get("spearman_rho")
    if tau is not None and rho is not None and math.isfinite(tau) and math.isfinite(rho):
        return (f"Elo vs baseline: Kendall tau {tau:.3f}, Spearman rho {rho:.3f}, "
                f"top-1 match {'yes' if agree.get('top1_match') else 'no'}")
    compared = [baseline[p] for p in agree.get("players", []) if p in baseline]
    why = "baselines tie" if len(set(compared)) <= 1 else "Elo ratings tie"
    return f"Elo vs baseline: rank correlation and top-1 match undefined: {why}"
