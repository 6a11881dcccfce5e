"""`examiner run`, `resume`, `estimate` and `demo`: the Ref-Eval examination from the command line."""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import shlex
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from examiner.commands.common import add_config_flags, output_dir, settings_from_args
from examiner.config import Settings, budget_from_env
from examiner.judging.exam_judges import JUDGE_METHODS
from examiner.errors import ConfigError, UserError
from examiner.core import rundir
from examiner.core.records import RunInfo
from examiner.report.languages import LANGUAGE_HEADER, language_line, language_rows, shows_languages
from examiner.exam.modes import MODES
from examiner.exam.runner import (
    ExamRequest,
    budget_stop,
    default_run_dir,
    estimate_exam,
    resume_exam,
    start_exam,
)

console = Console()


def _exam_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="corpus files or folders (.txt .md .jsonl .html)")
    parser.add_argument("--target", action="append", default=[], metavar="ENDPOINT",
                        help="endpoint to examine (repeat to give several targets the same paper); "
                             "default: the candidate role's endpoint")
    parser.add_argument("--mode", choices=list(MODES), default="refeval",
                        help="refeval (clustered questions), top (one unit at a time, judged against its "
                             "passage), noref (judge without reference text)")
    parser.add_argument("--judge-mode", choices=JUDGE_METHODS, default="refeval",
                        help="how answers are judged: refeval judge, RevisEval reviser+judge, or G-Eval")
    parser.add_argument("--judge", action="append", default=[], metavar="ENDPOINT",
                        help="judge endpoint; repeat for a panel whose majority gives each unit's verdict "
                             "(default: the judge role, or `roles: {judge: [A, B, C]}` in the config)")
    parser.add_argument("--units", choices=("sentences", "llm"), help="knowledge-unit extraction mode")
    parser.add_argument("--jsonl-field", default="text", help="text field of .jsonl corpus files")
    parser.add_argument("--cluster-size", type=int, help="target number of units per cluster")
    parser.add_argument("--max-rounds", type=int, help="stop after this many rounds")
    parser.add_argument("--max-probes", type=int, help="follow-up probes per question in a round")
    parser.add_argument("--seed", type=int, help="seed for clustering and sampling")
    parser.add_argument("--max-corpus-mb", type=float, metavar="MB",
                        help="largest corpus accepted, in MB (default 10: each MB takes about a minute to embed on 2 CPU cores)")
    parser.add_argument("--language", metavar="CODE",
                        help="language of questions, answers and judging: auto (the corpus's, detected; default) "
                             "or an ISO 639-1 code such as zh")
    add_config_flags(parser)


def register(sub: argparse._SubParsersAction) -> None:
    run = sub.add_parser("run", help="examine target model(s) on a reference corpus (the main job)")
    _exam_flags(run)
    run.add_argument("--out", metavar="RUN_DIR", help="run directory (default: runs/exam-<time>)")
    run.add_argument("--quiet", action="store_true", help="no progress display")
    run.set_defaults(func=run_exam)

    resume = sub.add_parser("resume", help="continue a killed or budget-stopped exam run from its checkpoint")
    resume.add_argument("run_dir")
    resume.add_argument("--budget-usd", type=float, metavar="X",
                        help="the run's new spending cap, money already spent included (default: "
                             "EXAMINER_BUDGET_USD, else the cap the run was started with)")
    resume.add_argument("--quiet", action="store_true")
    resume.set_defaults(func=run_resume)

    estimate = sub.add_parser("estimate", help="predict units, clusters, calls, tokens and dollars before a run")
    _exam_flags(estimate)
    estimate.set_defaults(func=run_estimate)

    demo = sub.add_parser("demo", help="examine the embedded local model on a shipped corpus")
    demo.add_argument("--corpus", default="corpora/examiner-handbook")
    demo.add_argument("--out", default="runs/demo")
    demo.add_argument("--max-rounds", type=int, default=2)
    demo.set_defaults(func=run_demo)


def _request(args: argparse.Namespace) -> tuple[ExamRequest, object]:
    settings = settings_from_args(args)
    for path in args.paths:  # before anything is created: a typo must leave no run directory behind
        if not Path(path).expanduser().exists():
            raise UserError(f"corpus path does not exist: {path}")
    settings = _with_exam_flags(settings, args)
    targets, judges = list(args.target), list(args.judge)
    if getattr(args, "simulate", False):
        targets = [f"sim-{t}" if f"sim-{t}" in settings.endpoints else t for t in targets]
        judges = [f"sim-{j}" if f"sim-{j}" in settings.endpoints else j for j in judges]
    request = ExamRequest(
        corpus_paths=[str(p) for p in args.paths], targets=targets, mode=args.mode,
        judge_mode=args.judge_mode, judges=judges, jsonl_field=args.jsonl_field,
    )
    return request, settings


EXAM_FLAGS = {"unit_mode": "units", "cluster_size": "cluster_size", "max_rounds": "max_rounds",
              "max_probes": "max_probes", "seed": "seed", "max_corpus_mb": "max_corpus_mb",
              "language": "language"}
"""Exam settings that `run` and `estimate` take as flags: setting -> argparse attribute (--units, ...)."""


def _with_exam_flags(settings: Settings, args: argparse.Namespace) -> Settings:
    """The settings with the exam flags applied, each validated as config.yaml is (so `resume` accepts
    exactly what `run` accepted); a bad value is one line naming its flag."""
    for key, attribute in EXAM_FLAGS.items():
        value = getattr(args, attribute)
        if value is None:
            continue
        try:
            settings = settings.merged({"exam": {key: value}})
        except ConfigError as exc:
            reason = str(exc).rpartition(f"exam.{key}: ")[2]
            raise ConfigError(f"--{attribute.replace('_', '-')} {value}: {reason}") from None
    return settings


def summarise(info: RunInfo, run_dir: Path) -> None:
    """Print the headline figures of a finished (or stopped) run."""
    import json

    report_path = run_dir / rundir.REPORT_JSON
    table = Table(title=f"exam {info.run_id}: {info.status} ({info.stop_reason})")
    for column in ("target", "accuracy", "coverage", "correct", "incorrect", "unanswered", "uncovered"):
        table.add_column(column)
    if report_path.exists():
        report = json.loads(report_path.read_text(encoding="utf-8"))
        for target, figures in (report.get("targets") or {}).items():
            acc, cov = figures.get("accuracy") or {}, figures.get("coverage") or {}
            counts = figures.get("counts") or {}

            def fmt(x: dict) -> str:
                if x.get("value") is None:
                    return "-"
                return f"{x['value']:.3f} [{x.get('low', 0):.3f}, {x.get('high', 0):.3f}]"

            table.add_row(
                target, fmt(acc), fmt(cov), str(counts.get("correct", "")), str(counts.get("incorrect", "")),
                str(counts.get("unanswered", "")), str(counts.get("uncovered", "")),
            )
        console.print(table)
        if report.get("run") and shows_languages(report):
            console.print(language_table_view(report))
        if report.get("judge_panel"):
            console.print(panel_table(report["judge_panel"]))
    for name in (rundir.REPORT_HTML, rundir.REPORT_MD, rundir.REPORT_JSON):
        if (run_dir / name).exists():
            console.print(f"{name}: {run_dir / name}")


def language_table_view(report: dict) -> Table:
    """Accuracy per target and language (report.json's `per_language`), under the exam's language."""
    table = Table(title=f"language: {language_line(report['run'])}")
    for column in LANGUAGE_HEADER:
        table.add_column(column)
    for row in language_rows(report):
        table.add_row(*(("-" if v is None else f"{v:.3f}") if i == len(row) - 1 else str(v)
                        for i, v in enumerate(row)))
    return table


def panel_table(panel: dict) -> Table:
    """Per-member agreement with the judge panel (report.json's `judge_panel`)."""
    table = Table(title=f"judge panel: {panel['verdicts']} verdicts, {panel['tied_or_unscored']} tied or unscored")
    for column in ("target", "member", "agreement with panel", "agreed / compared", "member unscored"):
        table.add_column(column)
    for row in panel["agreement"]:
        rate = "-" if row["agreement"] is None else f"{row['agreement']:.3f}"
        table.add_row(row["target"], row["member"], rate, f"{row['agreed']} / {row['compared']}", str(row["unscored"]))
    return table


def _exit_code(info: RunInfo, run_dir: Path) -> int:
    """0 completed, 3 budget stop (results kept), 2 failed (e.g. an endpoint unreachable; one clear line)."""
    if info.status == "failed":
        print(f"examiner: error: {info.stop_reason}", file=sys.stderr)
        return 2
    if info.status == "budget_exhausted":
        print(budget_stop_message(run_dir), file=sys.stderr)
        return 3
    return 0


def budget_stop_message(run_dir: Path) -> str:
    """What a budget stop spent of the cap, what it left undone, and the command that continues it."""
    stop = budget_stop(run_dir)
    cap = "no" if stop.cap_usd is None else f"the ${stop.cap_usd:.4f}"
    left = ", ".join(f"{n} of {stop.units} units not yet covered for {target}" for target, n in stop.uncovered.items())
    # A suggestion, not a prediction: twice the cap, at least a cent above what was spent.
    suggested = math.ceil(max(2 * (stop.cap_usd or 0.0), stop.spent_usd + 0.01) * 100) / 100
    return "\n".join([
        f"examiner: stopped: {stop.stage or 'budget exhausted'} in round {stop.round}: "
        f"spent ${stop.spent_usd:.4f} of {cap} cap",
        f"examiner: left undone: {left or 'every unit (no knowledge units were made yet)'}; "
        "the records so far are kept",
        f"examiner: to continue with a larger cap: examiner resume {shlex.quote(str(run_dir))} "
        f"--budget-usd {suggested:.2f}",
    ])


def run_exam(args: argparse.Namespace) -> int:
    request, settings = _request(args)
    run_dir = output_dir(args.out) if args.out else default_run_dir()
    info = asyncio.run(start_exam(settings, request, run_dir, quiet=args.quiet))  # type: ignore[arg-type]
    summarise(info, run_dir)
    return _exit_code(info, run_dir)


def run_resume(args: argparse.Namespace) -> int:
    run_dir = Path(args.run_dir)
    if not run_dir.is_dir():
        raise UserError(f"no run directory at {run_dir}")
    # --budget-usd, else EXAMINER_BUDGET_USD, else the run's own cap (in config.yaml).
    budget = args.budget_usd if args.budget_usd is not None else budget_from_env(os.environ)
    if budget is not None and budget < 0:
        raise ConfigError(f"budget must be zero or more dollars, got {budget}")
    info = asyncio.run(resume_exam(run_dir, quiet=args.quiet, budget_usd=budget))
    summarise(info, run_dir)
    return _exit_code(info, run_dir)


def run_estimate(args: argparse.Namespace) -> int:
    args.simulate = False
    request, settings = _request(args)
    figures = asyncio.run(estimate_exam(settings, request))  # type: ignore[arg-type]
    table = Table(title="predicted by a simulated run (tiktoken counts, configured prices)")
    for column in ("role", "calls", "prompt tokens", "completion tokens", "dollars"):
        table.add_column(column, justify="right")
    for row in figures["by_role"] + [dict(figures["total"], role="total")]:
        table.add_row(row["role"], str(row["calls"]), f"{row['prompt_tokens']:,}", f"{row['completion_tokens']:,}",
                      f"{row['cost_usd']:.4f}")
    console.print(f"{figures['documents']} documents, {figures['units']} knowledge units, "
                  f"{figures['clusters']} clusters over {figures['rounds']} rounds ({figures['stop_reason']})")
    console.print(table)
    return 0


def run_demo(args: argparse.Namespace) -> int:
    from examiner.config import load_settings

    settings = load_settings(None).merged({"exam": {"max_rounds": args.max_rounds}})
    corpus = Path(args.corpus)
    if not corpus.exists():
        raise UserError(f"demo corpus {corpus} not found (run from the repository root)")
    run_dir = Path(args.out)
    if run_dir.exists() and any(run_dir.iterdir()):
        import shutil

        shutil.rmtree(run_dir)
    request = ExamRequest(corpus_paths=[str(corpus)])
    info = asyncio.run(start_exam(settings, request, run_dir))
    summarise(info, run_dir)
    console.print(f"[bold]demo report:[/bold] {run_dir / 'report.html'}")
    return 0
