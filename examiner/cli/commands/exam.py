"""`examiner run`, `resume`, `estimate` and `demo`: the Ref-Eval examination from the command line."""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shlex
import sys
import textwrap
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from examiner.cli.flags import (add_cache_flag, add_command, add_config_flags, cache_dir_from_args,
                                      check_budget_flag, fitted_table, output_dir, print_table, settings_from_args)
from examiner.core.stopping import run_stoppable
from examiner.core.errors import ConfigError, UserError

if TYPE_CHECKING:
    from rich.table import Table

    from examiner.core.config import Settings
    from examiner.core.records import RunInfo
    from examiner.exam.estimate import Estimate, Figure
    from examiner.exam.runner import ExamRequest

MODE_NAMES = ("refeval", "top", "noref")
"""`--mode` choices: the names of examiner.exam.modes.MODES, spelled out so that building the parser
(`examiner --help`) does not load the exam (tests/test_cli_help.py holds them equal)."""
JUDGE_MODE_NAMES = ("refeval", "reviseval", "geval")
"""`--judge-mode` choices: examiner.judging.exam_judges.JUDGE_METHODS, spelled out for the same reason."""

PILOT_CLUSTERS = 4
"""`estimate --pilot-clusters` default: examiner.exam.estimate.PILOT_CLUSTERS, spelled out so that building
the parser does not load the exam (tests/test_cli_help.py holds them equal)."""
MIN_PILOT_UNITS = 12
"""examiner.exam.estimate.MIN_PILOT_UNITS, for the --pilot-clusters help (held equal likewise)."""

HEALTH_FAILED = 4
"""Exit code of `run`, `resume` and `report` with --strict when the run's health failed."""


def _exam_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="corpus files or folders (.txt .md .jsonl .html)")
    parser.add_argument("--target", action="append", default=[], metavar="ENDPOINT",
                        help="endpoint to examine (repeat to give several targets the same paper); "
                             "default: the candidate role's endpoint")
    parser.add_argument("--mode", choices=MODE_NAMES, default="refeval",
                        help="refeval (clustered questions), top (one unit at a time, judged against its "
                             "passage), noref (judge without reference text)")
    parser.add_argument("--judge-mode", choices=JUDGE_MODE_NAMES, default="refeval",
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
    _reading_flags(parser)
    parser.add_argument("--embedding-cache", metavar="FILE",
                        help="SQLite file of embeddings shared between runs, so a corpus examined before is not "
                             "embedded again (default: embeddings.sqlite inside the run's own folder)")
    add_config_flags(parser)


def register(sub: argparse._SubParsersAction) -> None:
    run = add_command(
        sub, "run", "examine target model(s) on a reference corpus (the main job)",
        "Condense the corpus into knowledge units, cluster them, have the examiner ask one question per\n"
        "cluster, collect each target's answers, judge every unit against its reference text and ask again\n"
        "until the pool of uncovered units stops shrinking. Writes run.json, the records, the ledger and\n"
        "report.json/.md/.html into the run directory; a budget stop exits 3 and keeps what was computed.",
        "examiner run corpora/pubmedqa-mini --simulate --out runs/sim\n"
        "examiner run corpora/pubmedqa-mini --config examples/config.yaml --out runs/pubmed --budget-usd 2")
    _exam_flags(run)
    run.add_argument("--out", metavar="RUN_DIR", help="run directory (default: runs/exam-<time>)")
    run.add_argument("--quiet", action="store_true", help="no progress display")
    run.add_argument("--paper", metavar="RUN_DIR",
                     help="sit an earlier run's exam paper: every question it asked (all rounds, as recorded), "
                          "judged against the same units, instead of the adaptive exam")
    run.add_argument("--paper-target", metavar="ENDPOINT",
                     help="--paper: whose questions in that run (default: its only target)")
    run.add_argument("--prepare-engine", choices=("local", "ray"),
                     help="where the corpus is read, cut into units and embedded: local (default) or ray "
                          "(Ray Data stages; pip install 'examiner[ray]')")
    run.add_argument("--ray-address", metavar="ADDR",
                     help="--prepare-engine ray: the Ray cluster (auto, ray://head:10001); default: a Ray "
                          "instance started on this machine")
    add_strict_flag(run)
    run.set_defaults(func=run_exam)

    resume = add_command(
        sub, "resume", "continue a killed or budget-stopped exam run from its checkpoint",
        "Continue an exam run where it stopped (killed, interrupted or stopped by its budget), from the\n"
        "run directory's LangGraph checkpoint, with the run's own configuration. Replies already paid for\n"
        "come from the run's response cache, so no finished call is paid twice; a finished run only gets\n"
        "its reports rebuilt.",
        "examiner resume runs/pubmed\nexaminer resume runs/pubmed --budget-usd 4")
    resume.add_argument("run_dir", help="the run directory `examiner run` wrote (holds run.json)")
    resume.add_argument("--budget-usd", type=float, metavar="X",
                        help="the run's new spending cap, money already spent included (default: "
                             "EXAMINER_BUDGET_USD, else the cap the run was started with)")
    add_cache_flag(resume)
    resume.add_argument("--config", metavar="FILE",
                        help="the configuration file the run was started with, when an endpoint URL in it holds "
                             "credentials (the run folder keeps URLs without them); only those URLs are read")
    resume.add_argument("--quiet", action="store_true", help="no progress display")
    add_strict_flag(resume)
    resume.set_defaults(func=run_resume)

    estimate = add_command(
        sub, "estimate", "predict units, rounds, calls, tokens and dollars before a run, with a range",
        "Predict what `examiner run` with the same arguments would make and spend. The whole corpus is read\n"
        "and cut into units (measured); a small seeded pilot (a few round-1 clusters) then sits the exam on\n"
        "the configured endpoints (real calls, with their own ledger), and rounds, calls, tokens and dollars\n"
        "per role are extrapolated with a 90% range. --simulate runs the pilot on the simulator;\n"
        "--replay-simulated replays the whole exam on the simulator instead (exact only for simulated runs).",
        "examiner estimate corpora/pubmedqa-mini --config examples/config.yaml\n"
        "examiner estimate corpora/pubmedqa-mini --simulate --json")
    _exam_flags(estimate)
    estimate.add_argument("--out", metavar="PILOT_DIR",
                          help="folder for the pilot's records, its ledger and estimate.json "
                               "(default: runs/estimate-<time>)")
    estimate.add_argument("--pilot-clusters", type=int, default=PILOT_CLUSTERS, metavar="N",
                          help=f"round-1 clusters the pilot examines (default {PILOT_CLUSTERS}; at least "
                               f"{MIN_PILOT_UNITS} units)")
    estimate.add_argument("--replay-simulated", action="store_true",
                          help="no pilot: replay the whole exam on the simulated backend at the configured "
                               "prices (exact for a simulated run, not a prediction for a real model)")
    estimate.add_argument("--json", action="store_true", help="print the estimate as JSON")
    estimate.add_argument("--quiet", action="store_true", help="no progress display")
    estimate.set_defaults(func=run_estimate)

    demo = add_command(
        sub, "demo", "examine the embedded local model on a shipped corpus",
        "Examine the embedded local model (no configuration, no API key, nothing downloaded) on a corpus\n"
        "shipped with the repository and print where its report is; what `make demo` runs. --out must be a\n"
        "new or empty folder, or an earlier demo run, which is replaced (a folder holding anything else is\n"
        "refused, and no file examiner did not write is ever removed).",
        "examiner demo --out runs/demo --max-rounds 2")
    demo.add_argument("--corpus", default="corpora/examiner-handbook", help="corpus folder (default: %(default)s)")
    demo.add_argument("--out", default="runs/demo",
                      help="run directory: new, empty, or an earlier demo run it replaces (default: %(default)s)")
    demo.add_argument("--max-rounds", type=int, default=2, help="stop after this many rounds (default: %(default)s)")
    demo.set_defaults(func=run_demo)


def add_strict_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--strict", action="store_true",
                        help=f"exit {HEALTH_FAILED} when the run's health check fails (reports are written first)")


def _request(args: argparse.Namespace) -> tuple[ExamRequest, Settings]:
    from examiner.exam.runner import ExamRequest

    settings = settings_from_args(args)
    for path in args.paths:  # before anything is created: a typo must leave no run directory behind
        if not Path(path).expanduser().exists():
            raise UserError(f"corpus path does not exist: {path}")
    settings = _with_exam_flags(settings, args)
    from examiner.corpus.reading import configure_reading, limits_from_settings

    configure_reading(limits_from_settings(settings.exam))  # before anything reads the corpus (its size included)
    if settings.exam.prepare_engine == "ray":  # an unsupported unit mode or a missing extra: no run directory
        from examiner.exam.ray_prepare import check_ray_engine

        check_ray_engine(settings.exam)
    if args.embedding_cache:
        settings = settings.merged({"embedding_cache": _embedding_cache_file(args.embedding_cache)})
    targets, judges = list(args.target), list(args.judge)
    if getattr(args, "simulate", False):
        targets = [f"sim-{t}" if f"sim-{t}" in settings.endpoints else t for t in targets]
        judges = [f"sim-{j}" if f"sim-{j}" in settings.endpoints else j for j in judges]
    request = ExamRequest(
        corpus_paths=[str(p) for p in args.paths], targets=targets, mode=args.mode,
        judge_mode=args.judge_mode, judges=judges, jsonl_field=args.jsonl_field,
        paper=getattr(args, "paper", None) or "", paper_target=getattr(args, "paper_target", None) or "",
    )
    return request, settings


READING_FLAGS = ("follow_links", "max_document_mb", "max_document_text_mb", "max_document_pages",
                 "max_document_seconds", "max_nesting_depth")
"""Exam settings bounding how the corpus is read (examiner.corpus.documents.ReadLimits), each a flag of its name."""

EXAM_FLAGS = {"unit_mode": "units", "cluster_size": "cluster_size", "max_rounds": "max_rounds",
              "max_probes": "max_probes", "seed": "seed", "max_corpus_mb": "max_corpus_mb",
              "language": "language", **{name: name for name in READING_FLAGS},
              "prepare_engine": "prepare_engine", "ray_address": "ray_address"}
"""Exam settings that `run` and `estimate` take as flags: setting -> argparse attribute (--units, ...); the
last two are `run`'s only."""


def _reading_flags(parser: argparse.ArgumentParser) -> None:
    """The corpus reading limits (docs/CORPORA-LIMITS.md); a file past one is skipped with one warning."""
    parser.add_argument("--follow-links", action="store_true", default=None,
                        help="read symbolic links that point outside the corpus folder (default: skipped and listed)")
    parser.add_argument("--max-document-mb", type=float, metavar="MB",
                        help="most MB one document may decompress to, and the largest plain file (default 100)")
    parser.add_argument("--max-document-text-mb", type=float, metavar="MB",
                        help="most MB of text extracted from one document (default 50)")
    parser.add_argument("--max-document-pages", type=int, metavar="N",
                        help="most pages of a PDF or Word file, slides of a deck (default 2000)")
    parser.add_argument("--max-document-seconds", type=float, metavar="S",
                        help="most seconds spent reading one file (default 60)")
    parser.add_argument("--max-nesting-depth", type=int, metavar="N",
                        help="deepest JSON nesting in a JSONL record (default 100)")


def _with_exam_flags(settings: Settings, args: argparse.Namespace) -> Settings:
    """The settings with the exam flags applied, each validated as config.yaml is (so `resume` accepts
    exactly what `run` accepted); a bad value is one line naming its flag."""
    for key, attribute in EXAM_FLAGS.items():
        value = getattr(args, attribute, None)
        if value is None:
            continue
        try:
            settings = settings.merged({"exam": {key: value}})
        except ConfigError as exc:
            reason = str(exc).rpartition(f"exam.{key}: ")[2]
            raise ConfigError(f"--{attribute.replace('_', '-')} {value}: {reason}") from None
    return settings


def _embedding_cache_file(path: str) -> str:
    """--embedding-cache FILE as an absolute path (config.yaml records it, so `resume` finds it from any
    directory), its folder checked as an output folder before any work starts."""
    file = Path(path).expanduser()
    if file.is_dir():
        raise UserError(f"--embedding-cache {path}: a folder, not an SQLite file (e.g. {file / 'embeddings.sqlite'})")
    output_dir(file.parent, "--embedding-cache")
    return str(file.resolve())


def summarise(info: RunInfo, run_dir: Path) -> None:
    """Print the headline figures of a finished (or stopped) run: which judge gave the verdicts, accuracy
    and coverage with their intervals, the unit counts, the panel's agreement, and where the reports are."""
    import json

    from examiner.core import rundir
    from examiner.reporting.health_section import UNTRUSTWORTHY, failed as health_failed
    from examiner.reporting.languages import shows_languages
    from examiner.reporting.markdown import judge_line

    report_path = run_dir / rundir.REPORT_JSON
    print(f"exam {info.run_id}: {info.status} ({info.stop_reason})")
    if report_path.exists():
        report = json.loads(report_path.read_text(encoding="utf-8"))
        print_health(report.get("health"))
        run = report.get("run") or {}
        print(f"mode {run.get('mode', info.mode)}, judge {judge_line(run)}")
        if health_failed(report.get("health")):
            print(UNTRUSTWORTHY)
        for table in score_tables(report.get("targets") or {}):
            print_table(table)
        total = (report.get("cost") or {}).get("total")
        if total:
            share = total.get("cached_input_share") or 0.0
            print(f"cost ${total['cost_usd']:.4f}: {total['calls']} calls ({total.get('batch_calls', 0)} batch), "
                  f"{100 * share:.1f}% of prompt tokens from the provider's prompt cache "
                  f"(examiner cost {run_dir} splits it)")
        if report.get("run") and shows_languages(report):
            print_table(language_table_view(report))
        if report.get("judge_panel"):
            print_table(panel_table(report["judge_panel"]))
    for name in (rundir.REPORT_HTML, rundir.REPORT_MD, rundir.REPORT_JSON):
        if (run_dir / name).exists():
            print(f"{name}: {run_dir / name}")


def interval(figure: Mapping[str, Any]) -> str:
    """A value with its 95% interval below it (two short lines fit an 80-column table); '-' for none."""
    if figure.get("value") is None:
        return "-"
    if figure.get("low") is None or figure.get("high") is None:
        return f"{figure['value']:.3f}"
    return f"{figure['value']:.3f}\n[{figure['low']:.3f}, {figure['high']:.3f}]"


def score_tables(targets: Mapping[str, Mapping[str, Any]]) -> list[Table]:
    """report.json's per-target figures as two narrow tables: the scores, then the unit counts."""
    scores = fitted_table("accuracy and coverage [95% interval]", ("target", "accuracy", "coverage"),
                          numeric=("accuracy", "coverage"))
    kinds = ("correct", "incorrect", "unanswered", "uncovered")
    counts = fitted_table("knowledge units", ("target", *kinds), numeric=kinds)
    for target, figures in targets.items():
        scores.add_row(target, interval(figures.get("accuracy") or {}), interval(figures.get("coverage") or {}))
        n = figures.get("counts") or {}
        counts.add_row(target, *(str(n.get(kind, "-")) for kind in kinds))
    return [scores, counts]


def print_health(health: Mapping[str, Any] | None) -> None:
    """The run's health first: its status, the checks that did not pass with their examples, and the
    judge self-agreement."""
    from examiner.reporting.health_section import headline, health_rows, self_agreement_text

    if not health:
        return
    print(headline(health))
    for row in health_rows(health):
        if row[1] in ("warn", "fail"):
            print(f"  {row[0]}: {row[1]}, {row[4]} (threshold {row[3]})" + (f"; e.g. {row[5]}" if row[5] else ""))
    print(f"  {self_agreement_text(health)}")


def strict_exit(code: int, run_dir: Path, strict: bool) -> int:
    """With --strict, a run whose health failed exits HEALTH_FAILED (after its reports were written),
    unless a failure or budget stop already chose the exit code."""
    import json

    from examiner.core import rundir
    from examiner.reporting.health_section import failed as health_failed, headline

    if not strict or code != 0:
        return code
    report_path = run_dir / rundir.REPORT_JSON
    health = json.loads(report_path.read_text(encoding="utf-8")).get("health") if report_path.exists() else None
    if health_failed(health):
        print(f"examiner: health check failed ({headline(health)}); exit {HEALTH_FAILED} (--strict)", file=sys.stderr)
        return HEALTH_FAILED
    return code


def language_table_view(report: Mapping[str, Any]) -> Table:
    """Accuracy per target and language (report.json's `per_language`), under the exam's language."""
    from examiner.reporting.languages import LANGUAGE_HEADER, language_line, language_rows

    table = fitted_table(f"language: {language_line(report['run'])}", LANGUAGE_HEADER,
                         numeric=LANGUAGE_HEADER[2:])
    for row in language_rows(report):
        table.add_row(*(("-" if v is None else f"{v:.3f}") if i == len(row) - 1 else str(v)
                        for i, v in enumerate(row)))
    return table


def panel_table(panel: Mapping[str, Any]) -> Table:
    """Per-member agreement with the judge panel (report.json's `judge_panel`)."""
    numbers = ("agreement", "agreed / compared", "unscored")
    table = fitted_table(f"judge panel: {panel['verdicts']} verdicts, {panel['tied_or_unscored']} tied or unscored",
                         ("target", "member", *numbers), numeric=numbers)
    for row in panel["agreement"]:
        rate = "-" if row["agreement"] is None else f"{row['agreement']:.3f}"
        table.add_row(row["target"], row["member"], rate, f"{row['agreed']} / {row['compared']}", str(row["unscored"]))
    return table


EXIT_INCOMPLETE = 5
"""A model call failed for good (every replica down past its retries): the run stopped where it was."""


def _exit_code(info: RunInfo, run_dir: Path) -> int:
    """0 completed, 3 budget stop (results kept), 5 incomplete (calls failed for good; results kept),
    2 failed (e.g. an endpoint unreachable; one clear line)."""
    if info.status == "failed":
        print(f"examiner: error: {info.stop_reason}", file=sys.stderr)
        return 2
    if info.status == "budget_exhausted":
        print(budget_stop_message(run_dir), file=sys.stderr)
        return 3
    if info.status == "incomplete":
        print(f"examiner: incomplete: {info.stop_reason}\n"
              f"examiner: to ask those calls again and finish: examiner resume {shlex.quote(str(run_dir))}",
              file=sys.stderr)
        return EXIT_INCOMPLETE
    return 0


def budget_stop_message(run_dir: Path) -> str:
    """What a budget stop spent of the cap, what it left undone, and the command that continues it."""
    from examiner.exam.runner import budget_stop

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
    info, run_dir = exam(args)
    summarise(info, run_dir)
    return strict_exit(_exit_code(info, run_dir), run_dir, args.strict)


def exam(args: argparse.Namespace) -> tuple[RunInfo, Path]:
    """Run the exam `args` describe into its run directory (reports included): what `examiner run` and
    examiner.run_exam (the Python API) share."""
    from examiner.exam.runner import default_run_dir, start_exam

    request, settings = _request(args)
    run_dir = output_dir(args.out) if args.out else default_run_dir()
    return run_stoppable(start_exam(settings, request, run_dir, quiet=args.quiet)), run_dir


def run_resume(args: argparse.Namespace) -> int:
    from examiner.core.config import budget_from_env
    from examiner.exam.runner import resume_exam

    run_dir = Path(args.run_dir)
    if not run_dir.is_dir():
        raise UserError(f"no run directory at {run_dir}")
    # --budget-usd, else EXAMINER_BUDGET_USD, else the run's own cap (in config.yaml).
    budget = check_budget_flag(args.budget_usd) if args.budget_usd is not None else budget_from_env(os.environ)
    if budget is not None and (not math.isfinite(budget) or budget < 0):
        raise ConfigError(f"EXAMINER_BUDGET_USD must be a finite number of dollars, zero or more, got {budget}")
    info = run_stoppable(resume_exam(run_dir, quiet=args.quiet, budget_usd=budget, cache_dir=cache_dir_from_args(args),
                                   config_file=args.config))
    summarise(info, run_dir)
    return strict_exit(_exit_code(info, run_dir), run_dir, args.strict)


def run_estimate(args: argparse.Namespace) -> int:
    """A pilot on the configured endpoints (`--simulate`: on the simulator), or the simulated replay."""
    from examiner.exam.estimate import estimate_exam, replay_simulated

    if args.pilot_clusters < 1:
        raise ConfigError(f"--pilot-clusters must be 1 or more, got {args.pilot_clusters}")
    request, settings = _request(args)
    if args.replay_simulated:
        replay = asyncio.run(replay_simulated(settings, request))
        if args.json:
            print(json.dumps(replay, indent=1))
        else:
            print_replay(replay)
        return 0
    pilot_dir = output_dir(args.out) if args.out else Path("runs") / time.strftime("estimate-%Y%m%d-%H%M%S")
    estimate = asyncio.run(estimate_exam(settings, request, pilot_dir, clusters=args.pilot_clusters,
                                         quiet=args.quiet or args.json))
    if args.json:
        print(json.dumps(estimate.as_dict(), indent=1))
    else:
        print_estimate(estimate)
    return 0


def _figure(f: Figure, money: bool = False) -> str:
    text = (lambda x: f"${x:.4f}") if money else (lambda x: f"{x:,.0f}")
    return text(f.value) if f.low == f.high else f"{text(f.value)}\n[{text(f.low)}-{text(f.high)}]"


def print_estimate(estimate: Estimate) -> None:
    """The estimate as tables: measured figures, the extrapolated run with ranges, the pilot's cost."""
    from examiner.exam.estimate import INTERVAL, PRICINGS

    print(f"measured (the whole corpus was read): {estimate.documents} documents, {estimate.passages} passages, "
          f"{estimate.units} knowledge units")
    print(f"pilot (real calls, ledger in {estimate.pilot_dir}): {estimate.pilot_units} units in "
          f"{estimate.pilot_clusters} clusters, {estimate.pilot_rounds} rounds")
    numbers = ("calls", "prompt tok", "compl. tok", "dollars")
    spent = fitted_table("what the pilot cost (measured)", ("role", "endpoint", *numbers), numeric=numbers)
    for row in estimate.pilot_spent:
        spent.add_row(row["role"], row["endpoint"], str(row["calls"]), f"{row['prompt_tokens']:,}",
                      f"{row['completion_tokens']:,}", f"${row['cost_usd']:.4f}")
    print_table(spent)
    table = fitted_table(f"the full run (extrapolated; ranges: {round(INTERVAL * 100)}% bootstrap interval)",
                         ("role", *numbers), numeric=numbers)
    for row in [*estimate.by_role, estimate.total]:
        name = row.role if not row.endpoint else f"{row.role}\n({row.endpoint})"
        table.add_row(name, _figure(row.calls), _figure(row.prompt_tokens), _figure(row.completion_tokens),
                      _figure(row.dollars, money=True))
    print_table(table)
    pricing = fitted_table("the full run's dollars priced three ways (same tokens; ranges as above)",
                           ("role", "standard", "batch", "cached prefix"), numeric=("standard", "batch", "cached prefix"))
    for row in [*estimate.by_role, estimate.total]:
        pricing.add_row(row.role, *(_figure(row.dollars_by_pricing[p], money=True) for p in PRICINGS))
    print_table(pricing)
    print(textwrap.fill("batch: every call through the provider's batch API (batch_price_factor); cached "
                        "prefix: the share of prompt tokens the pilot's endpoints served from their prompt cache, "
                        "at the cached input price", 80))
    print(f"rounds {_figure(estimate.rounds).replace(chr(10), ' ')}, clusters "
          f"{_figure(estimate.clusters).replace(chr(10), ' ')} (extrapolated)")
    for note in estimate.notes:
        print(f"note: {note}")


def print_replay(figures: Mapping[str, Any]) -> None:
    """The simulated replay, labelled as what it is."""
    numbers = ("calls", "prompt tokens", "completion tokens", "dollars")
    table = fitted_table("SIMULATED REPLAY (the simulator's replies at the configured prices; not a prediction "
                         "for a real model)", ("role", *numbers), numeric=numbers)
    for row in figures["by_role"] + [dict(figures["total"], role="total")]:
        table.add_row(row["role"], str(row["calls"]), f"{row['prompt_tokens']:,}", f"{row['completion_tokens']:,}",
                      f"{row['cost_usd']:.4f}")
    print(f"{figures['documents']} documents, {figures['units']} knowledge units, "
          f"{figures['clusters']} clusters over {figures['rounds']} rounds ({figures['stop_reason']})")
    print_table(table)


def _clear_earlier_demo(run_dir: Path) -> None:
    """Make room for a demo run in `run_dir`: nothing to do when it is new or empty; an earlier demo run
    (request.json says so) has the files an exam run writes removed, and only those; any other folder
    is refused in one line, so no file examiner did not write is ever deleted."""
    from examiner.core import rundir
    from examiner.core.runlock import refuse_if_in_use

    if not run_dir.exists():
        return
    if not run_dir.is_dir():
        raise UserError(f"--out {run_dir}: a file, not a folder")
    if not any(p.name != rundir.LOCK for p in run_dir.iterdir()):
        return
    foreign = rundir.foreign_entries(run_dir)
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise UserError(f"--out {run_dir} is not empty and holds files examiner did not write ({shown}): "
                        "give `examiner demo --out` a new or empty folder")
    try:
        demo = bool(json.loads((run_dir / rundir.REQUEST).read_text(encoding="utf-8")).get("demo"))
    except (OSError, ValueError, AttributeError):
        demo = False
    if not demo:
        raise UserError(f"--out {run_dir} holds an exam run that `examiner demo` did not make: give `examiner demo "
                        "--out` a new or empty folder (`examiner resume` continues that run)")
    refuse_if_in_use(run_dir)
    rundir.remove_exam_outputs(run_dir)


def run_demo(args: argparse.Namespace) -> int:
    from examiner.core.config import load_settings
    from examiner.exam.runner import ExamRequest, start_exam

    settings = load_settings(None).merged({"exam": {"max_rounds": args.max_rounds}})
    corpus = Path(args.corpus)
    if not corpus.exists():
        raise UserError(f"demo corpus {corpus} not found (run from the repository root)")
    run_dir = output_dir(args.out)
    _clear_earlier_demo(run_dir)
    request = ExamRequest(corpus_paths=[str(corpus)], demo=True)
    info = run_stoppable(start_exam(settings, request, run_dir))
    summarise(info, run_dir)
    print(f"demo report: {run_dir / 'report.html'}")
    return 0
