"""`examiner judge` (judge a JSONL dataset with one method) and `examiner judge-stats` (metrics of
judgments made anywhere).

    examiner judge pairs.jsonl --method pairwise --swap --judge openai --out runs/j1
    examiner judge summ.jsonl --method geval --criterion "Coherence (1-5): ..." --human-field coherence \
        --group-field doc_id --system-field system_id --out runs/g1 --simulate
    examiner judge-stats runs/j1/judgments.jsonl --labels gold.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from examiner.commands.common import add_config_flags, output_dir, settings_from_args
from examiner.config import Settings
from examiner.errors import BudgetExhausted, UserError

if TYPE_CHECKING:
    from examiner.datasets import FieldMap

METHODS = ("pairwise", "reviseval", "geval", "reference")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("judge", help="judge a JSONL dataset (RevisEval, G-Eval, pairwise, reference judge)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("data", help="a .jsonl or .json file, or llmbar:SUBSET[,SUBSET] (LLMBar's field names)")
    p.add_argument("--method", required=True, choices=METHODS)
    p.add_argument("--judge", metavar="ENDPOINT", action="append", default=[],
                   help="endpoint for every judging call (default: each role's endpoint); give it two or more "
                        "times for a judge panel (pairwise): the majority decides, ties stay unscored")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for judgments.jsonl, report.json/.md, ledger, cache")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N rows")
    p.add_argument("--no-cache", action="store_true", help="do not reuse cached replies in --out")
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

    s = sub.add_parser("judge-stats", help="agreement, swap consistency/bias and correlations of a judgments JSONL")
    s.add_argument("judgments", help="JSONL of judgments (from `examiner judge` or elsewhere)")
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
    from examiner.datasets import LLMBAR_FIELDS, FieldMap  # noqa: F811 - the runtime import (kept lazy for --help)

    base = LLMBAR_FIELDS if str(args.data).startswith("llmbar:") else FieldMap()
    given = {name: getattr(args, dest) for name, dest in _FIELD_FLAGS.items() if getattr(args, dest) is not None}
    return dataclasses.replace(base, **given)


def run_judge(args: argparse.Namespace) -> int:
    from examiner.judging.dataset import Requirements, load_rows

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
    from examiner.judging.report import build_report, write_outputs

    report = build_report(args.method, records, [s.to_dict() for s in skipped], meta)
    paths = write_outputs(out, records, report)
    _print_summary(report, paths)
    if meta.get("status") == "budget_exhausted":
        raise BudgetExhausted(f"budget reached; {report['rows_judged']} rows written to {out}")
    if not rows:
        raise UserError(f"no usable rows in {args.data} ({len(skipped)} skipped; see {paths['report_md']})")
    return 0


async def _judge(args: argparse.Namespace, settings: Settings, rows: list, endpoint: str | None, out: Path,
                 pair_method: bool, panel: dict[str, str | None] | None,
                 ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    import examiner.simulator.judging_roles  # noqa: F401 - simulated behaviours for in-process simulated endpoints
    from examiner.judging.common import RunFlags
    from examiner.judging.pairwise import PairwiseOptions, run_pairwise
    from examiner.judging.reviseval import CLASSIC_METRICS, RevisEvalOptions, run_reviseval
    from examiner.judging.single import DEFAULT_CRITERION, DEFAULT_TASK, GEvalOptions, run_geval, run_reference
    from examiner.llm.gateway import Gateway

    flags = RunFlags()
    pw = PairwiseOptions(swap=args.swap, grade_only=args.grade_only, tie_threshold=args.tie_threshold,
                         use_reference=args.with_reference, endpoint=endpoint, structured=args.json_grades)
    metrics = tuple(m.strip() for m in args.classic_metrics.split(",") if m.strip() and m.strip() != "none")
    unknown = [m for m in metrics if m not in CLASSIC_METRICS]
    if unknown:
        raise UserError(f"unknown --classic-metrics {', '.join(unknown)} (known: {', '.join(CLASSIC_METRICS)})")
    async with Gateway(settings, run_dir=out, cache=not args.no_cache,
                       notes=lambda line: print(f"examiner: {line}", file=sys.stderr)) as gw:
        if args.method == "pairwise":
            records = await run_pairwise(gw, rows, pw, flags, panel=panel)
        elif args.method == "reviseval":
            opts = RevisEvalOptions(pairwise=pw, rubric=args.rubric, seed=args.seed, metrics=metrics,
                                    scale=args.scale or 10, endpoint=endpoint)
            records = await run_reviseval(gw, rows, opts, pairwise=pair_method, flags=flags)
        elif args.method == "geval":
            opts_g = GEvalOptions(task=args.task or DEFAULT_TASK, criterion=args.criterion or DEFAULT_CRITERION,
                                  form_label=args.form_label, scale=args.scale or 5, n=args.samples,
                                  use_logprobs=False if args.no_logprobs else None, endpoint=endpoint)
            if opts_g.scale < 2 or opts_g.scale > 10:
                raise UserError(f"--scale must be between 2 and 10 for geval, got {opts_g.scale}")
            records = await run_geval(gw, rows, opts_g, flags)
        else:
            records = await run_reference(gw, rows, scale=args.scale or 10, endpoint=endpoint, flags=flags)
        totals = gw.totals
        judge = f"panel of {', '.join(panel)}" if panel else (endpoint or "role defaults")
        meta = {"judge": judge, "status": "budget_exhausted" if flags.budget_exhausted else "ok",
                "calls": totals.calls, "cache_hits": totals.cache_hits, "cost_usd": round(totals.cost_usd, 6),
                "failed_calls": flags.failed_calls}
    return records, meta


def _print_summary(report: dict[str, Any], paths: dict[str, Path]) -> None:
    from examiner.judging.report import markdown

    print(markdown(report))
    for name, path in paths.items():
        print(f"{name}: {path}")


# ------------------------------------------------------------------ examiner judge-stats

_ORIGINAL = {"original", "forward", "ab", "0", "false", "1-2", "12"}
_SWAPPED = {"swapped", "swap", "reverse", "reversed", "ba", "1", "true", "2-1", "21"}


def read_judgments(path: str, args: argparse.Namespace, what: str = "judgments file",
                   ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Normalised pairwise records (id, order, verdict in original labelling, label) and skipped rows."""
    from examiner.datasets import RowError, SourceRecord, load_dataset, parse_number, parse_preference
    from examiner.judging.pairwise import number
    from examiner.roles.parsing import verdict_from_scores

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


def _labels(path: str, args: argparse.Namespace) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from examiner.datasets import RowError, SourceRecord, load_dataset, parse_preference

    def label(source: SourceRecord) -> tuple[str, Any]:
        obj = source.data
        if obj.get(args.id_field) is None:
            raise RowError(args.id_field, f"missing field '{args.id_field}'")
        if obj.get(args.label_field) is None:
            raise RowError(args.label_field, f"missing field '{args.label_field}'")
        return str(obj[args.id_field]), parse_preference(obj[args.label_field], args.label_field)

    labels, skipped = load_dataset(path, label, lambda pair: pair[0], id_field=args.id_field, what="labels file")
    return dict(labels), [dict(s.to_dict(), message=f"labels {s.message}") for s in skipped]


def run_judge_stats(args: argparse.Namespace) -> int:
    from examiner.judging.report import build_report, markdown, write_outputs

    out = output_dir(args.out) if args.out else None
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
    if not records:
        raise UserError(f"no usable judgments in {args.judgments} ({len(skipped)} skipped)")
    report = build_report("judge-stats", records, skipped, {"dataset": args.judgments}, labels=labels, teacher=teacher)
    if out is not None:
        paths = write_outputs(out, [], report)
        print(markdown(report))
        for name, path in paths.items():
            print(f"{name}: {path}")
    else:
        print(markdown(report))
    return 0
