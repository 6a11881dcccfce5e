"""`examiner run`, `resume`, `estimate` and `demo`: the flags of the Ref-Eval examination, parsed into
the options of examiner.api.exam, whose result is printed (examiner.cli.output.exam)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from examiner.core.names import EXAM_JUDGE_METHODS, EXAM_MODES
from examiner.cli.flags import add_cache_flag, add_command, add_config_flags, job_flags
from examiner.cli.output.exam import budget_stop_message, print_estimate, print_replay, summarise

if TYPE_CHECKING:
    from examiner.api.exam import EstimateOptions, ExamOptions, ExamResult


PILOT_CLUSTERS = 4
"""`estimate --pilot-clusters` default: examiner.exam.estimate.PILOT_CLUSTERS, spelled out so that building
the parser does not load the exam (tests/cli/test_cli_help.py holds them equal)."""
MIN_PILOT_UNITS = 12
"""examiner.exam.estimate.MIN_PILOT_UNITS, for the --pilot-clusters help (held equal likewise)."""
PILOT_ROUNDS = 1
"""`estimate --pilot-rounds` default: examiner.exam.estimate.PILOT_ROUNDS (held equal likewise)."""

HEALTH_FAILED = 4
"""Exit code of `run`, `resume` and `report` with --strict when the run's health failed."""
EXIT_INCOMPLETE = 5
"""A model call failed for good (every replica down past its retries): the run stopped where it was."""



def corpus_formats() -> str:
    """The file types a corpus may hold, from the readers' registry (`.pdf .docx .pptx` need an extra)."""
    from examiner.corpus.documents import READERS, TEXT_SUFFIXES

    return f"{' '.join(TEXT_SUFFIXES)}; with the documents extra also {' '.join(READERS)}"


def _exam_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help=f"corpus files or folders ({corpus_formats()})")
    parser.add_argument("--target", action="append", default=[], metavar="ENDPOINT",
                        help="endpoint to examine (repeat to give several targets the same paper); "
                             "default: the candidate role's endpoint")
    parser.add_argument("--mode", choices=EXAM_MODES, default="refeval",
                        help="refeval (clustered questions), top (one unit at a time, judged against its "
                             "passage), noref (judge without reference text)")
    parser.add_argument("--judge-mode", choices=EXAM_JUDGE_METHODS, default="refeval",
                        help="how answers are judged: refeval judge, RevisEval reviser+judge, or G-Eval")
    parser.add_argument("--judge", action="append", default=[], metavar="ENDPOINT",
                        help="judge endpoint; repeat for a panel whose majority gives each unit's verdict "
                             "(default: the judge role, or `roles: {judge: [A, B, C]}` in the config)")
    parser.add_argument("--judge-cascade", type=_endpoint_pair, default=(), metavar="CHEAP,STRONG",
                        help="a cheap judge whose confident verdicts stand, the rest escalated to the strong judge "
                             "with a promised agreement (docs/CASCADE.md)")
    parser.add_argument("--target-agreement", type=float, metavar="A",
                        help="a cascade's promised agreement rate with the strong judge on the units the cheap "
                             "judge keeps (risk-controlled: a rate, not every run's realised share; default 0.9)")
    parser.add_argument("--cascade-risk", type=float, metavar="R",
                        help="chance allowed that the cascade's promise fails (default 0.1)")
    parser.add_argument("--cascade-confidence", choices=("auto", "logprobs", "samples"),
                        help="how the cascade's cheap judge's confidence is read: its label log-probabilities, "
                             "the agreement of its samples, or auto (logprobs where the endpoint gives them)")
    parser.add_argument("--units", choices=("sentences", "llm"), help="knowledge-unit extraction mode")
    parser.add_argument("--jsonl-field", default="text", help="text field of .jsonl corpus files")
    parser.add_argument("--cluster-size", type=int, help="target number of units per cluster")
    parser.add_argument("--max-rounds", type=int, help="stop after this many rounds")
    parser.add_argument("--max-probes", type=int, help="follow-up probes per question in a round")
    parser.add_argument("--seed", type=int, help="seed for clustering and sampling")
    parser.add_argument("--question-gate", action="store_true", default=None,
                        help="check every question before it is asked: answerable from its units, citations "
                             "supported, not guessable, no near-copy, exam language, no unit labels (two extra "
                             "calls per question; docs/METHODS.md)")
    parser.add_argument("--gate-drop-guessable", action="store_true", default=None,
                        help="with --question-gate: reject a question a model answers without the corpus "
                             "(default: tag it)")
    parser.add_argument("--paraphrases", type=int, metavar="K",
                        help="the wording check: re-ask a seeded share of round 1's questions in K other wordings, "
                             "answered by every target and judged, beside the exam (rewording.jsonl; default 0, off)")
    parser.add_argument("--paraphrase-share", type=float, metavar="S",
                        help="with --paraphrases: share of round 1's questions re-asked (default 0.25)")
    parser.add_argument("--control-share", type=float, metavar="S",
                        help="control questions: beside a seeded share S (0-1) of round 1's questions, one the "
                             "corpus cannot answer (false premise, swapped entity, out-of-corpus detail), answered "
                             "by every target and judged declined_or_corrected or accepted_premise, never counted "
                             "in accuracy (controls.jsonl; default 0, off)")
    parser.add_argument("--max-corpus-mb", type=float, metavar="MB",
                        help="largest corpus accepted, in MB (default 10: each MB takes about a minute to embed on 2 CPU cores)")
    parser.add_argument("--language", metavar="CODE",
                        help="language of questions, answers and judging: auto (the corpus's, detected; default) "
                             "or an ISO 639-1 code such as zh")
    _reading_flags(parser)
    parser.add_argument("--embedding-cache", metavar="FILE",
                        help="SQLite file of embeddings shared between runs, so a corpus examined before is not "
                             "embedded again (default: embeddings.sqlite inside the run's own folder)")
    parser.add_argument("--allow-simulated-roles", action="store_true",
                        help="let simulated and real endpoints share the exam (refused otherwise: a simulated "
                             "examiner or judge says nothing about a real target)")
    add_config_flags(parser)


def register(sub: argparse._SubParsersAction) -> None:
    run = add_command(
        sub, "run", "examine target model(s) on a reference corpus (the main job)",
        "Condense the corpus into knowledge units, cluster them, have the examiner ask one question per\n"
        "cluster, collect each target's answers, judge every unit against its reference text and ask again\n"
        "until the pool of uncovered units stops shrinking. Writes run.json, the records, the ledger and\n"
        "report.json/.md/.html into the run directory; a budget stop exits 3 and keeps what was computed.",
        "examiner run corpora/harbor-water --simulate --out runs/sim\n"
        "examiner run corpora/harbor-water --config examples/config.yaml --out runs/water --budget-usd 2")
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
    run.add_argument("--stop-when", metavar="RULE",
                     help="width<=W, accuracy>=A, accuracy<=A or (two targets) decided:M: ask round 1's clusters in a seeded random order "
                          "and stop once every target's anytime-valid accuracy interval meets the rule (one round; "
                          "docs/METHODS.md)")
    add_strict_flag(run)
    run.set_defaults(func=run_exam)

    resume = add_command(
        sub, "resume", "continue a killed or budget-stopped exam run from its checkpoint",
        "Continue an exam run where it stopped (killed, interrupted or stopped by its budget), from the\n"
        "run directory's LangGraph checkpoint, with the run's own configuration. Replies already paid for\n"
        "come from the run's response cache, so no finished call is paid twice; a finished run only gets\n"
        "its reports rebuilt.",
        "examiner resume runs/water\nexaminer resume runs/water --budget-usd 4")
    resume.add_argument("run_dir", help="the run directory `examiner run` wrote (holds run.json)")
    resume.add_argument("--budget-usd", type=float, metavar="X",
                        help="the run's new spending cap, money already spent included (default: "
                             "EXAMINER_BUDGET_USD, else the cap the run was started with)")
    add_cache_flag(resume)
    resume.add_argument("--config", metavar="FILE",
                        help="the configuration file the run was started with: gives back credentials of endpoint "
                             "URLs (the run folder keeps URLs without them) and vouches for the endpoints that get "
                             "an API key and the caches outside the run folder, each named as the run folder does")
    resume.add_argument("--trust-run-config", action="store_true",
                        help="use the endpoints (with your API keys) and the cache paths the run folder's "
                             "config.yaml names (a folder someone else wrote is refused otherwise: it could send "
                             "your key anywhere)")
    resume.add_argument("--quiet", action="store_true", help="no progress display")
    add_strict_flag(resume)
    resume.set_defaults(func=run_resume)

    estimate = add_command(
        sub, "estimate", "predict units, rounds, calls, tokens and dollars before a run, with a range",
        "Predict what `examiner run` with the same arguments would make and spend. The whole corpus is read\n"
        "and cut into units (measured); a small seeded pilot (a few round-1 clusters) then sits the exam on\n"
        "the configured endpoints (real calls, with their own ledger), and rounds, calls, tokens and dollars\n"
        "per role are extrapolated with a 90% range. --simulate runs the pilot on the simulator;\n"
        "--replay-simulated replays the whole exam on the simulator instead (exact only for simulated runs).\n"
        "--detect D / --half-width W add a sample-size plan from the pilot's verdicts (their intraclass\n"
        "correlation within documents and clusters): the units, documents and dollars needed.",
        "examiner estimate corpora/harbor-water --config examples/config.yaml\n"
        "examiner estimate corpora/harbor-water --simulate --json\n"
        "examiner estimate corpora/harbor-water --target gpt-a --target gpt-b --detect 0.03")
    _exam_flags(estimate)
    estimate.add_argument("--out", metavar="PILOT_DIR",
                          help="folder for the pilot's records, its ledger and estimate.json "
                               "(default: runs/estimate-<time>)")
    estimate.add_argument("--pilot-clusters", type=int, default=PILOT_CLUSTERS, metavar="N",
                          help=f"round-1 clusters the pilot examines (default {PILOT_CLUSTERS}; at least "
                               f"{MIN_PILOT_UNITS} units)")
    estimate.add_argument("--pilot-rounds", type=int, default=PILOT_ROUNDS, metavar="N",
                          help=f"rounds the pilot runs (default {PILOT_ROUNDS}: the run's own round 1, which a run "
                               "with the same --cache reuses; more also measure later rounds and the judge "
                               "self-check, calls a run cannot reuse)")
    estimate.add_argument("--replay-simulated", action="store_true",
                          help="no pilot: replay the whole exam on the simulated backend at the configured "
                               "prices (exact for a simulated run, not a prediction for a real model)")
    estimate.add_argument("--detect", type=float, metavar="D",
                          help="also plan from the pilot the units (and dollars) that detect an accuracy difference D "
                               "(e.g. 0.03) with 80%% power: between two targets with two --target, else a change "
                               "of the one target's accuracy")
    estimate.add_argument("--half-width", type=float, metavar="W",
                          help="also plan the units (and dollars) that give a 95%% interval of half-width W")
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


# ------------------------------------------------------------------ flags -> options

CORPUS_FLAGS = ("jsonl_field", "cluster_size", "max_rounds", "max_probes", "seed", "max_corpus_mb", "language",
                "follow_links", "max_document_mb", "max_document_text_mb", "max_document_pages",
                "max_document_seconds", "max_nesting_depth", "embedding_cache", "mode", "judge_mode", "units",
                "quiet", "judge_cascade", "target_agreement", "cascade_risk",
                "cascade_confidence", "allow_simulated_roles", "question_gate", "gate_drop_guessable",
                "paraphrases", "paraphrase_share", "control_share")
"""Flags of `run` and `estimate` whose option has the flag's own name."""


def _endpoint_pair(text: str) -> tuple[str, ...]:
    """`CHEAP,STRONG` as two endpoint names."""
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    if len(names) != 2:
        raise argparse.ArgumentTypeError(f"expected two endpoints, CHEAP,STRONG; got {text!r}")
    return names


def _corpus_options(args: argparse.Namespace) -> dict[str, Any]:
    """What `run` and `estimate` share, as option values: the corpus, targets, judges and exam knobs."""
    return {**job_flags(args), "corpus": tuple(args.paths), "targets": tuple(args.target),
            "judges": tuple(args.judge), **{name: getattr(args, name) for name in CORPUS_FLAGS}}


def exam_options(args: argparse.Namespace) -> ExamOptions:
    """`examiner run`'s flags as the API's options."""
    from examiner.api.exam import ExamOptions

    return ExamOptions(**_corpus_options(args), out=args.out, paper=args.paper, paper_target=args.paper_target,
                       prepare_engine=args.prepare_engine, ray_address=args.ray_address, stop_when=args.stop_when)


def estimate_options(args: argparse.Namespace) -> EstimateOptions:
    """`examiner estimate`'s flags as the API's options (--json shows no progress display)."""
    from examiner.api.exam import EstimateOptions

    return EstimateOptions(**dict(_corpus_options(args), quiet=args.quiet or args.json), out=args.out,
                           pilot_clusters=args.pilot_clusters, pilot_rounds=args.pilot_rounds,
                           replay_simulated=args.replay_simulated,
                           detect=args.detect, half_width=args.half_width)


# ------------------------------------------------------------------ the commands

def run_exam(args: argparse.Namespace) -> int:
    from examiner.api.exam import run_exam as run

    result = run(exam_options(args), args.config)
    summarise(result, result.run_dir)
    return strict_exit(_exit_code(result), result.run_dir, args.strict)


def run_resume(args: argparse.Namespace) -> int:
    from examiner.api.exam import ResumeOptions, resume_exam

    result = resume_exam(ResumeOptions(run_dir=args.run_dir, budget_usd=args.budget_usd,
                                       cache_dir=args.cache, config_file=args.config,
                                       trust_run_config=args.trust_run_config, quiet=args.quiet))
    summarise(result, result.run_dir)
    return strict_exit(_exit_code(result), result.run_dir, args.strict)


def run_estimate(args: argparse.Namespace) -> int:
    """A pilot on the configured endpoints (`--simulate`: on the simulator), or the simulated replay."""
    from examiner.api.exam import estimate_exam

    result = estimate_exam(estimate_options(args), args.config)
    if args.json:
        print(json.dumps(result.as_dict(), indent=1))
    elif result.estimate is not None:
        print_estimate(result.estimate)
        if result.plans is not None:
            from examiner.cli.output.plans import plan_lines

            print("\n".join(plan_lines(result.plans)))
    else:
        print_replay(result.as_dict())
    if result.estimate is not None and result.estimate.pilot_status == "failed":
        from examiner.core.errors import EXIT_OUTAGE

        print(f"examiner: error: the pilot failed, so the figures rest on nothing: {result.estimate.pilot_stop_reason}; "
              "estimate again when the endpoint answers", file=sys.stderr)
        return EXIT_OUTAGE
    return 0


def run_demo(args: argparse.Namespace) -> int:
    from examiner.api.exam import DemoOptions, run_demo as demo

    result = demo(DemoOptions(corpus=args.corpus, out=args.out, max_rounds=args.max_rounds, quiet=False))
    summarise(result, result.run_dir)
    print(f"demo report: {result.run_dir / 'report.html'}")
    return 0


# ------------------------------------------------------------------ exit codes

def _exit_code(result: ExamResult) -> int:
    """0 completed, 3 budget stop (results kept), 5 incomplete (calls failed for good; results kept),
    75 failed (every call of a stage failed, e.g. an endpoint unreachable: an outage a later resume may get
    past, told apart from bad input's 2; or a request every call made was refused, which a resume gets past
    once the run folder's config.yaml is fixed; one clear line)."""
    from examiner.core.errors import EXIT_OUTAGE

    if result.status == "failed":
        print(f"examiner: error: {result.stop_reason}; once the endpoint answers again (or what it refused is "
              f"fixed): examiner resume {shlex.quote(str(result.run_dir))}", file=sys.stderr)
        return EXIT_OUTAGE
    if result.status == "budget_exhausted":
        print(budget_stop_message(result.run_dir), file=sys.stderr)
        return 3
    if result.status == "incomplete":
        print(f"examiner: incomplete: {result.stop_reason}\n"
              f"examiner: to ask those calls again and finish: examiner resume {shlex.quote(str(result.run_dir))}",
              file=sys.stderr)
        return EXIT_INCOMPLETE
    return 0


def strict_exit(code: int, run_dir: Path, strict: bool) -> int:
    """With --strict, a run whose health failed exits HEALTH_FAILED (after its reports were written),
    unless a failure or budget stop already chose the exit code."""
    from examiner.core import rundir
    from examiner.reporting.health_section import failed as health_failed, headline

    if not strict or code != 0:
        return code
    report_path = run_dir / rundir.REPORT_JSON
    health = json.loads(report_path.read_text(encoding="utf-8")).get("health") if report_path.exists() else None
    if health is not None and health_failed(health):
        print(f"examiner: health check failed ({headline(health)}); exit {HEALTH_FAILED} (--strict)", file=sys.stderr)
        return HEALTH_FAILED
    return code
