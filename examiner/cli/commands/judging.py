"""`examiner judge` (judge a JSONL dataset with one method) and `examiner judge-stats` (metrics of
judgments made anywhere)."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import sys
import textwrap
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from examiner.cli.flags import add_command, add_config_flags, fitted_table, output_dir, print_table, settings_from_args
from examiner.core.errors import BudgetExhausted, UserError

if TYPE_CHECKING:
    from examiner.core.config import Settings
    from examiner.corpus.datasets import FieldMap

METHODS = ("pairwise", "reviseval", "geval", "reference")
UNPARSEABLE = ("drop", "wrong")


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub, "judge", "judge a JSONL dataset (RevisEval, G-Eval, pairwise, reference judge)",
        "Judge every row of a dataset (.jsonl, a .json array, or a shipped llmbar:SUBSET) with one method and\n"
        "write judgments.jsonl, report.json/.md (agreement with gold labels, swap consistency, correlations\n"
        "with human scores), the ledger and a response cache into --out. Exits 4 when no row could be\n"
        "judged (every judgment failed or was unparseable), after writing what was computed.",
        "examiner judge pairs.jsonl --method pairwise --swap --judge openai --out runs/j1\n"
        "examiner judge llmbar:Natural --method pairwise --limit 20 --simulate --out runs/natural\n"
        "examiner judge summ.jsonl --method geval --criterion 'Coherence (1-5): ...' --human-field coherence "
        "--out runs/g1 --simulate")
    p.add_argument("data", help="a .jsonl or .json file, or llmbar:SUBSET[,SUBSET] (LLMBar's field names)")
    p.add_argument("--method", required=True, choices=METHODS)
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
    pw.add_argument("--single", action="store_true", help="reviseval: one response per row (--output-field), not pairs")
    pw.add_argument("--rubric", help="reviseval: rubric given to the reviser")
    pw.add_argument("--seed", type=int, default=0, help="reviseval: seed for which response gets revised")
    pw.add_argument("--classic-metrics", default="bleu,rouge1,rouge2,rougeL,bertscore,embedding",
                    help="reviseval: metrics vs the revised reference, comma-separated, or 'none'")
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
        "examiner judge-stats --human-from-run runs/pubmed")
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
                   help="judgments without a usable verdict or score: drop them (default) or count them as wrong "
                        "(pairwise: a label other than the gold one; scores: the low end of --score-range)")
    s.add_argument("--out", metavar="DIR", help="also write report.json and report.md there")
    s.set_defaults(func=run_judge_stats)


# ------------------------------------------------------------------ examiner judge

def _range(text: str | None, flag: str) -> tuple[float, float] | None:
    if not text:
        return None
    try:
        lo, hi = (float(x) for x in text.split(","))
    except ValueError:
        raise UserError(f"{flag} expects LO,HI (e.g. 1,5), got '{text}'") from None
    if lo > hi:
        raise UserError(f"{flag}: LO must not exceed HI, got '{text}'")
    return lo, hi


def _judge_endpoint(settings: Settings, name: str | None, simulate: bool) -> str | None:
    """The endpoint a --judge name is sent to (its simulated twin under --simulate)."""
    if name is None:
        return None
    if simulate:
        return f"sim-{name}" if f"sim-{name}" in settings.endpoints else "simulated"
    settings.endpoint(name)  # ConfigError for a typo
    return name


_FIELD_FLAGS = {"id": "id_field", "instruction": "instruction_field", "output": "output_field",
                "output_1": "output1_field", "output_2": "output2_field", "reference": "reference_field",
                "label": "label_field", "human": "human_field", "source": "source_field", "group": "group_field",
                "system": "system_field"}
"""FieldMap attribute -> the argparse destination of its --*-field flag."""


def _field_map(args: argparse.Namespace) -> FieldMap:
    """The flags given over the dataset's defaults: LLMBar's keys for an llmbar: subset (as `examiner meta`
    reads them), otherwise examiner judge's own."""
    from examiner.corpus.datasets import LLMBAR_FIELDS, FieldMap  # noqa: F811 - the runtime import (kept lazy for --help)

    given = {name: getattr(args, dest) for name, dest in _FIELD_FLAGS.items() if getattr(args, dest) is not None}
    base = LLMBAR_FIELDS if str(args.data).startswith("llmbar:") or _in_llmbar_shape(args.data, given) else FieldMap()
    return dataclasses.replace(base, **given)


def _in_llmbar_shape(data: str, given: dict[str, str]) -> bool:
    """Whether a dataset file is one of LLMBar's own (its first record has LLMBar's `input` where examiner
    judge's default `instruction` is missing) and no flag names the instruction's key: then LLMBar's keys
    are read, as `examiner meta` reads them, instead of skipping every row for a missing `instruction`."""
    from examiner.corpus.datasets import read_records

    if "instruction" in given or not Path(data).is_file():
        return False
    # A peek: the rows are read (and any decoding warned about) once more by load_rows.
    datasets_log = logging.getLogger("examiner.corpus.datasets")
    was_disabled, datasets_log.disabled = datasets_log.disabled, True
    try:
        first = next((r.data for r in read_records(data) if isinstance(r.data, dict)), None)
    finally:
        datasets_log.disabled = was_disabled
    if first is None or "instruction" in first or "input" not in first:
        return False
    print("examiner: the records have LLMBar's keys (input, output_1, output_2, label): reading them as "
          "`examiner meta` does", file=sys.stderr)
    return True


NOTHING_JUDGED = 4
"""Exit code of `examiner judge` when rows were read but not one got a verdict or a score."""


@dataclasses.dataclass(frozen=True)
class JudgeRun:
    """What a judging run wrote: the report (as report.json holds it) and the files."""

    report: dict[str, Any]
    paths: dict[str, Path]
    rows: int
    """Rows read and sent to the judge (skipped rows not counted)."""
    judged: int
    """Judgments with a verdict or a score (not failed, not unparseable)."""


def run_judge(args: argparse.Namespace) -> int:
    run = judge(args)
    _print_summary(run.report, run.paths)
    if run.report.get("status") == "budget_exhausted":
        raise BudgetExhausted(f"budget reached; {run.report['rows_judged']} rows written to {args.out}")
    if run.judged == 0:
        print(f"examiner: error: nothing could be judged: every judgment of the {run.rows} rows "
              f"failed or was unparseable (see {run.paths['report_md']})", file=sys.stderr)
        return NOTHING_JUDGED
    return 0


def judge(args: argparse.Namespace) -> JudgeRun:
    """Judge the dataset `args` describe and write judgments.jsonl and the reports (a budget stop too):
    what `examiner judge` and examiner.judge (the Python API) share. A dataset without one usable row
    is a UserError, raised after its report (listing the skipped rows) is written."""
    from examiner.judging.dataset import Requirements, load_rows
    from examiner.judging.sections import build_report, write_outputs

    settings = settings_from_args(args)
    out = output_dir(args.out)
    if args.limit is not None and args.limit < 1:
        raise UserError(f"--limit must be 1 or more, got {args.limit}")
    fields = _field_map(args)
    human_range = _range(args.human_range, "--human-range")
    pair_method = args.method == "pairwise" or (args.method == "reviseval" and not args.single)
    if pair_method:
        req = Requirements(("instruction", "output_1", "output_2"), need_reference=args.with_reference,
                           human_range=human_range)
    elif args.method == "geval":
        req = Requirements(("output",), optional_text=("instruction", "source"), human_range=human_range)
    elif args.method == "reference":
        req = Requirements(("instruction", "output"), need_reference=True, human_range=human_range)
    else:
        req = Requirements(("instruction", "output"), human_range=human_range)
    rows, skipped = load_rows(args.data, fields, req, limit=args.limit)
    for s in skipped[:20]:
        print(f"examiner: skipped {s.message}", file=sys.stderr)
    if len(skipped) > 20:
        print(f"examiner: ... and {len(skipped) - 20} more skipped rows (see the report)", file=sys.stderr)
    out.mkdir(parents=True, exist_ok=True)
    judges = list(dict.fromkeys(args.judge))
    if len(judges) > 1 and args.method != "pairwise":
        raise UserError(f"a judge panel (--judge given {len(judges)} times) works with --method pairwise")
    panel = {name: _judge_endpoint(settings, name, args.simulate) for name in judges} if len(judges) > 1 else None
    endpoint = _judge_endpoint(settings, judges[0] if judges else None, args.simulate)
    if not judges and settings.judge_panel:  # `roles: {judge: [A, B, C]}` (already resolved, --simulate too)
        if args.method == "pairwise":
            panel = {name: name for name in settings.judge_panel}
        else:
            print(f"examiner: the configured judge panel applies to --method pairwise; --method {args.method} "
                  f"judges with its first member, {settings.judge_panel[0]}", file=sys.stderr)
    started = time.perf_counter()
    records, meta = asyncio.run(_judge(args, settings, rows, endpoint, out, pair_method, panel))
    meta.update(dataset=str(args.data), wall_s=round(time.perf_counter() - started, 3))
    report = build_report(args.method, records, [s.to_dict() for s in skipped], meta)
    paths = write_outputs(out, records, report)
    if not rows:
        raise UserError(f"no usable rows in {args.data} ({len(skipped)} skipped; see {paths['report_md']})")
    judged = sum(1 for r in records if r.get("verdict") is not None or r.get("score") is not None)
    return JudgeRun(report=report, paths=paths, rows=len(rows), judged=judged)


async def _judge(args: argparse.Namespace, settings: Settings, rows: list, endpoint: str | None, out: Path,
                 pair_method: bool, panel: dict[str, str | None] | None,
                 ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    import examiner.simulator.judging_roles  # noqa: F401 - simulated behaviours for in-process simulated endpoints
    from examiner.exam.progress import ExamProgress
    from examiner.judging.row_runner import RunFlags
    from examiner.judging.pairwise import PairwiseOptions, run_pairwise
    from examiner.judging.reviseval import CLASSIC_METRICS, RevisEvalOptions, run_reviseval
    from examiner.judging.single import DEFAULT_CRITERION, DEFAULT_TASK, GEvalOptions, run_geval, run_reference
    from examiner.llm.gateway import Gateway

    pw = PairwiseOptions(swap=args.swap, grade_only=args.grade_only, tie_threshold=args.tie_threshold,
                         use_reference=args.with_reference, endpoint=endpoint, structured=args.json_grades)
    metrics = tuple(m.strip() for m in args.classic_metrics.split(",") if m.strip() and m.strip() != "none")
    unknown = [m for m in metrics if m not in CLASSIC_METRICS]
    if unknown:
        raise UserError(f"unknown --classic-metrics {', '.join(unknown)} (known: {', '.join(CLASSIC_METRICS)})")
    opts_g = GEvalOptions(task=args.task or DEFAULT_TASK, criterion=args.criterion or DEFAULT_CRITERION,
                          form_label=args.form_label, scale=args.scale or 5, n=args.samples,
                          use_logprobs=False if args.no_logprobs else None, endpoint=endpoint)
    if args.method == "geval" and (opts_g.scale < 2 or opts_g.scale > 10):
        raise UserError(f"--scale must be between 2 and 10 for geval, got {opts_g.scale}")
    async with Gateway(settings, run_dir=out, cache=not args.no_cache,
                       notes=lambda line: print(f"examiner: {line}", file=sys.stderr)) as gw:
        # the exam's progress display: one bar over the rows, with calls, tokens and dollars so far
        progress = ExamProgress(gw.totals, enabled=not args.quiet)
        with progress.task(f"judge {args.method}", len(rows)) as tick:
            flags = RunFlags(on_row_done=tick.advance)
            if args.method == "pairwise":
                records = await run_pairwise(gw, rows, pw, flags, panel=panel)
            elif args.method == "reviseval":
                opts = RevisEvalOptions(pairwise=pw, rubric=args.rubric, seed=args.seed, metrics=metrics,
                                        scale=args.scale or 10, endpoint=endpoint)
                records = await run_reviseval(gw, rows, opts, pairwise=pair_method, flags=flags)
            elif args.method == "geval":
                records = await run_geval(gw, rows, opts_g, flags)
            else:
                records = await run_reference(gw, rows, scale=args.scale or 10, endpoint=endpoint, flags=flags)
        totals = gw.totals
        judge = f"panel of {', '.join(panel)}" if panel else (endpoint or "role defaults")
        meta = {"judge": judge, "status": "budget_exhausted" if flags.budget_exhausted else "ok",
                "calls": totals.calls, "batch_calls": totals.batch_calls, "cache_hits": totals.cache_hits,
                "prompt_tokens": totals.prompt_tokens, "cached_tokens": totals.cached_tokens,
                "completion_tokens": totals.completion_tokens, "reasoning_tokens": totals.reasoning_tokens,
                "cost_usd": round(totals.cost_usd, 6),
                "failed_calls": flags.failed_calls}
    return records, meta


def _print_summary(report: Mapping[str, Any], paths: Mapping[str, Path]) -> None:
    """The report's figures as 80-column tables (undefined figures as n/a); report.md has them all."""
    for part in summary_parts(report):
        if isinstance(part, str):
            print(part)
        else:
            print_table(part)
    for name, path in paths.items():
        print(f"{name}: {path}")


def summary_parts(report: Mapping[str, Any]) -> list[Any]:
    """Lines and tables of a judging report (examiner judge / judge-stats), each table narrow enough
    for an 80-column terminal."""
    from examiner.judging.sections import LEVELS_NOTE, convention_text
    from examiner.reporting.writer import cell

    facts = [f"{key.replace('_', ' ')} {cell(report[key])}" for key in
             ("judge", "status", "rows_judged", "rows_skipped", "calls", "cache_hits", "cost_usd", "wall_s")
             if key in report]
    parts: list[Any] = [f"judging report: {report.get('method')} on {report.get('dataset', '-')}",
                        textwrap.fill(", ".join(facts), 80)]
    section = report.get("pairwise")
    if section:
        parts.append(f"judgments {section['n_judgments']}, unparseable {section['n_unparseable']}, failed calls "
                     f"{section['n_failed_calls']}; verdicts {section['verdicts']}")
        parts.append(convention_text(section))
        rows = [("judge vs labels", section.get("agreement")), ("judge vs teacher", section.get("teacher_agreement"))]
        rows += [(f"metric {k} vs labels", v) for k, v in (section.get("classic_metric_agreement") or {}).items()]
        numbers = ("n", "accuracy", "macro P", "macro R", "macro F1")
        table = fitted_table("agreement", ("comparison", *numbers), numeric=numbers)
        for name, m in rows:
            if m:
                table.add_row(name, str(m["n"]), *(cell(m[k]) for k in
                                                    ("accuracy", "macro_precision", "macro_recall", "macro_f1")))
        if table.rows:
            parts.append(table)
        members = section.get("panel_agreement")
        if members:
            numbers = ("agrees with panel", "compared", "unscored")
            table = fitted_table("judge panel", ("member", *numbers), numeric=numbers)
            for m in members:
                table.add_row(m["member"], cell(m["rate"]), str(m["compared"]), str(m["unscored"]))
            parts.append(table)
        swap = section.get("swap")
        if swap:
            numbers = ("pairs in both orders", "all pairs")
            table = fitted_table(f"position swap: {swap['n_pairs_both_orders']} pairs judged in both orders, "
                                 f"consistency {cell(swap['consistency'])}", ("bias", *numbers), numeric=numbers)
            for name, key in (("first position", "bias_first"), ("second position", "bias_second"),
                              ("delta", "delta_bias")):
                table.add_row(name, cell(swap[key]), cell(swap[f"{key}_all_pairs"]))
            parts.append(table)
    section = report.get("single")
    if section:
        parts.append(f"judgments {section['n_judgments']}, scored {section['n_scored']}, unparseable "
                     f"{section['n_unparseable']}, failed calls {section['n_failed_calls']}; mean score "
                     f"{cell(section['mean_score'])}")
        if section.get("geval_paths"):
            parts.append(f"G-Eval paths {section['geval_paths']}, unparseable samples excluded "
                         f"{section['geval_unparseable_samples']}")
        parts.append(convention_text(section))
        corr = section.get("correlation_with_human")
        if corr:
            numbers = ("n", "Pearson", "Spearman", "Kendall")
            table = fitted_table("correlation with human scores", ("scorer", "level", *numbers), numeric=numbers)
            for name, levels in corr.items():
                for level, c in levels.items():
                    table.add_row(name, level, str(c.get("n", c.get("n_groups_used"))),
                                  *(cell(c[k]) for k in ("pearson", "spearman", "kendall")))
            parts += [table, textwrap.fill(LEVELS_NOTE, 80)]
    return parts


# ------------------------------------------------------------------ examiner judge-stats

_ORIGINAL = {"original", "forward", "ab", "0", "false", "1-2", "12"}
_SWAPPED = {"swapped", "swap", "reverse", "reversed", "ba", "1", "true", "2-1", "21"}


def read_judgments(path: str, args: argparse.Namespace, what: str = "judgments file",
                   ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Normalised pairwise records (id, order, verdict in original labelling, label) and skipped rows."""
    from examiner.corpus.datasets import RowError, SourceRecord, load_dataset, parse_number, parse_preference
    from examiner.judging.pairwise import number
    from examiner.agents.parsing import verdict_from_scores

    bounds = _range(args.score_range, "--score-range")
    names = [x.strip() for x in args.score_fields.split(",")]
    if len(names) != 2:
        raise UserError(f"--score-fields expects two names, got '{args.score_fields}'")

    def record(source: SourceRecord) -> dict[str, Any]:
        obj = source.data
        if obj.get(args.id_field) is None:
            raise RowError(args.id_field, f"missing field '{args.id_field}'")
        order_raw = str(obj.get(args.order_field, "original")).strip().lower()
        if order_raw in _ORIGINAL:
            order = "original"
        elif order_raw in _SWAPPED:
            order = "swapped"
        else:
            raise RowError(args.order_field, f"field '{args.order_field}' must be original or swapped, got {order_raw!r}")
        if args.verdict_field in obj:
            value = obj[args.verdict_field]
            verdict = None if value is None else parse_preference(value, args.verdict_field)
            if verdict is not None and args.verdict_in_shown_order and order == "swapped":
                verdict = verdict.swapped()
        elif all(n in obj for n in names):
            if any(obj[n] is None for n in names):
                verdict = None
            else:
                s1, s2 = (parse_number(obj[n], n, bounds) for n in names)
                verdict = verdict_from_scores(s1, s2, args.tie_threshold)
                verdict = verdict.swapped() if order == "swapped" else verdict
        else:
            raise RowError(args.verdict_field, f"missing field '{args.verdict_field}' (and no {args.score_fields})")
        label = obj.get(args.label_field)
        label = parse_preference(label, args.label_field) if label is not None else None
        return {"id": str(obj[args.id_field]), "order": order, "verdict": number(verdict), "label": number(label),
                "failed": bool(obj.get("failed")), "panel": obj.get("panel")}

    # one pair has two records (one per order), so ids repeat: key rows by (id, order) instead
    records, skipped = load_dataset(path, record, lambda r: f"{r['id']}|{r['order']}", id_field=args.id_field,
                                    what=what)
    return records, [s.to_dict() for s in skipped]


def holds_single_scores(path: str, args: argparse.Namespace) -> bool:
    """True when no record carries a pairwise verdict (--verdict-field, or both --score-fields) and some
    record carries --score-field: the file holds single-score judgments (G-Eval, reference judge)."""
    from examiner.corpus.datasets import read_records

    reader_log = logging.getLogger("examiner.corpus.datasets")
    reader_log.disabled = True  # a decoding warning is given once, by the load that follows this look
    try:
        objects = [r.data for r in read_records(path, "judgments file") if isinstance(r.data, dict)]
    finally:
        reader_log.disabled = False
    names = [x.strip() for x in args.score_fields.split(",")]
    pairwise = any(args.verdict_field in o or all(n in o for n in names) for o in objects)
    return not pairwise and any(args.score_field in o for o in objects)


def read_scores(path: str, args: argparse.Namespace, human: dict[str, float] | None = None,
                ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Normalised single-score records (id, score or None, human, group, system, failed; G-Eval's path and
    unparseable-sample count when present) and skipped rows. `human` (id -> score, from --labels) replaces
    the records' own human scores."""
    from examiner.corpus.datasets import RowError, SourceRecord, load_dataset, parse_number

    bounds = _range(args.score_range, "--score-range")

    def record(source: SourceRecord) -> dict[str, Any]:
        obj = source.data
        if obj.get(args.id_field) is None:
            raise RowError(args.id_field, f"missing field '{args.id_field}'")
        row_id = str(obj[args.id_field])
        if args.score_field not in obj:
            raise RowError(args.score_field, f"missing field '{args.score_field}'")
        score = obj[args.score_field]
        gold = human.get(row_id) if human is not None else obj.get(args.human_field)
        return {"id": row_id, "score": None if score is None else parse_number(score, args.score_field, bounds),
                "human": None if gold is None else parse_number(gold, args.human_field),
                "group": obj.get(args.group_field), "system": obj.get(args.system_field),
                "failed": bool(obj.get("failed")), "path": obj.get("path"),
                "n_unparseable": obj.get("n_unparseable")}

    records, skipped = load_dataset(path, record, lambda r: r["id"], id_field=args.id_field, what="judgments file")
    return records, [s.to_dict() for s in skipped]


def _by_id(path: str, args: argparse.Namespace, key: str, parse: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """id -> parse(value of `key`) from a --labels file, and its skipped rows (named as the labels')."""
    from examiner.corpus.datasets import RowError, SourceRecord, load_dataset

    def label(source: SourceRecord) -> tuple[str, Any]:
        obj = source.data
        if obj.get(args.id_field) is None:
            raise RowError(args.id_field, f"missing field '{args.id_field}'")
        if obj.get(key) is None:
            raise RowError(key, f"missing field '{key}'")
        return str(obj[args.id_field]), parse(obj[key], key)

    labels, skipped = load_dataset(path, label, lambda pair: pair[0], id_field=args.id_field, what="labels file")
    return dict(labels), [dict(s.to_dict(), message=f"labels {s.message}") for s in skipped]


def _human_labels(path: str, args: argparse.Namespace) -> tuple[dict[str, float], list[dict[str, Any]]]:
    """id -> human score from a --labels file (its --human-field), for single-score judgments."""
    from examiner.corpus.datasets import parse_number

    return _by_id(path, args, args.human_field, parse_number)


def _labels(path: str, args: argparse.Namespace) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """id -> gold preference from a --labels file (its --label-field), for pairwise judgments."""
    from examiner.corpus.datasets import parse_preference

    return _by_id(path, args, args.label_field, parse_preference)


def run_judge_stats(args: argparse.Namespace) -> int:
    from examiner.judging.sections import build_report, write_outputs

    if args.human_from_run:
        from examiner.cli.commands.human_labels import run_judge_vs_people

        return run_judge_vs_people(args)
    if not args.judgments:
        raise UserError("give a judgments file (or --human-from-run RUN_DIR)")

    out = output_dir(args.out) if args.out else None
    if holds_single_scores(args.judgments, args):
        records, skipped, labels, teacher = _single_inputs(args)
    else:
        records, skipped, labels, teacher = _pairwise_inputs(args)
    if not records:
        raise UserError(f"no usable judgments in {args.judgments} ({len(skipped)} skipped)")
    lowest = _range(args.score_range, "--score-range")[0]  # type: ignore[index]  # the flag has a default
    report = build_report("judge-stats", records, skipped, {"dataset": args.judgments}, labels=labels, teacher=teacher,
                          unparseable=args.unparseable, lowest_score=lowest)
    _print_summary(report, write_outputs(out, [], report) if out is not None else {})
    return 0


_Inputs = tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any] | None, dict[Any, Any] | None]


def _pairwise_inputs(args: argparse.Namespace) -> _Inputs:
    """Pairwise judgments, skipped rows, gold labels (--labels) and a teacher's verdicts (--teacher)."""
    records, skipped = read_judgments(args.judgments, args)
    for s in skipped[:20]:
        print(f"examiner: skipped {s['message']}", file=sys.stderr)
    labels = None
    if args.labels:
        labels, bad = _labels(args.labels, args)
        skipped += bad
    teacher = None
    if args.teacher:
        teacher_records, bad = read_judgments(args.teacher, args, "teacher file")
        skipped += [dict(s, message=f"teacher {s['message']}") for s in bad]
        teacher = {(r["id"], r["order"]): r["verdict"] for r in teacher_records if r["verdict"] is not None}
    return records, skipped, labels, teacher


def _single_inputs(args: argparse.Namespace) -> _Inputs:
    """Single-score judgments (human scores from --labels when given) and skipped rows."""
    if args.teacher:
        raise UserError("--teacher compares pairwise verdicts; this judgments file holds single scores")
    human, skipped = _human_labels(args.labels, args) if args.labels else (None, [])
    records, bad = read_scores(args.judgments, args, human)
    for s in bad[:20]:
        print(f"examiner: skipped {s['message']}", file=sys.stderr)
    return records, bad + skipped, None, None
