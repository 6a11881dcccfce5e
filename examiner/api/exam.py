"""The exam as library calls: run, resume, estimate (and the demo), each with typed options and a typed
result that reads the run's rows (units, verdicts, outcomes, model calls) from its folder.

A budget stop, a failed or an incomplete run is a result with its status, not an exception; input the
tool cannot use raises examiner.core.errors.UserError (ConfigError for configuration) before any folder
is made. Messages name an option by its flag (`--max-rounds 0: ...`), as the command line prints them.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from examiner.api.checks import cache_folder, check_budget, output_dir
from examiner.api.rows import (CallCost, OutcomeRow, Rows, UnitRow, VerdictRow, read_costs, read_outcomes,
                               read_units, read_verdicts)
from examiner.api.settings import (JobOptions, SettingsSource, path_text, path_texts, resolve_settings,
                                   simulated_name)
from examiner.core.errors import ConfigError, UserError
from examiner.core.names import ExamJudgeMethod, ExamModeName
from examiner.core.stopping import run_stoppable

if TYPE_CHECKING:
    from examiner.core.config import Settings
    from examiner.core.records import RunInfo
    from examiner.exam.estimate import Estimate
    from examiner.exam.plans import PilotPlans
    from examiner.exam.runner import ExamRequest
    from examiner.reporting.model import ExamReport
    from examiner.reporting.model.exam import Estimate as ReportEstimate


class CorpusOptions(JobOptions):
    """What `examiner run` and `examiner estimate` share: the corpus, who is examined and judged, and the
    exam's knobs (None: the configuration's value)."""

    corpus: tuple[str, ...] = Field(min_length=1)
    """Corpus files or folders (.txt .md .jsonl .html .pdf .docx ...): the PATH arguments."""
    targets: tuple[str, ...] = ()
    """Endpoints to examine (`--target`, repeatable); empty: the candidate role's endpoint."""
    allow_simulated_roles: bool = False
    """Let simulated and real endpoints share the exam (`--allow-simulated-roles`); otherwise such a mix
    is refused in one line (examiner.exam.role_mix). True sets the setting `allow_simulated_roles`."""
    mode: ExamModeName = "refeval"
    """refeval (clustered questions), top (one unit at a time), noref (judged without reference text)."""
    judge_mode: ExamJudgeMethod = "refeval"
    """How answers are judged: the reference judge, RevisEval (reviser + judge) or G-Eval."""
    judges: tuple[str, ...] = ()
    """Judge endpoints (`--judge`); two or more make a panel whose majority gives each verdict."""
    judge_cascade: tuple[str, ...] = ()
    """Cheap then strong judge endpoint (`--judge-cascade CHEAP,STRONG`): the cheap judge's verdict stands
    where it is confident enough, with a promised agreement with the strong one (docs/CASCADE.md)."""
    target_agreement: float | None = None
    """A cascade's promised agreement with the strong judge (`--target-agreement`; default 0.9)."""
    cascade_risk: float | None = None
    """Chance allowed that a cascade's promise fails (`--cascade-risk`; default 0.1)."""
    cascade_confidence: Literal["auto", "logprobs", "samples"] | None = None
    """How a cascade's cheap judge's confidence is read (`--cascade-confidence`; default auto)."""
    units: Literal["sentences", "llm"] | None = None
    """Knowledge-unit extraction mode (`--units`)."""
    jsonl_field: str = "text"
    """Text field of .jsonl corpus files."""
    cluster_size: int | None = None
    """Target number of units per cluster."""
    max_rounds: int | None = None
    """Stop after this many rounds."""
    max_probes: int | None = None
    """Follow-up probes per question in a round."""
    seed: int | None = None
    """Seed for clustering and sampling."""
    max_corpus_mb: float | None = None
    """Largest corpus accepted, in MB."""
    language: str | None = None
    """Language of questions, answers and judging: auto (the corpus's) or an ISO 639-1 code."""
    question_gate: bool | None = None
    """Check every question before it is asked (`--question-gate`; ExamSettings.question_gate)."""
    gate_drop_guessable: bool | None = None
    """The gate rejects guessable questions instead of tagging them (`--gate-drop-guessable`)."""
    paraphrases: int | None = None
    """Wordings of each re-asked question in the wording check (`--paraphrases`; ExamSettings.paraphrases)."""
    paraphrase_share: float | None = None
    """Share of round 1's questions the wording check re-asks (`--paraphrase-share`)."""
    control_share: float | None = None
    """Share of round 1's questions given a control question (`--control-share`; ExamSettings.control_share)."""
    follow_links: bool | None = None
    """Read symbolic links that point outside the corpus folder."""
    max_document_mb: float | None = None
    """Most MB one document may decompress to, and the largest plain file."""
    max_document_text_mb: float | None = None
    """Most MB of text extracted from one document."""
    max_document_pages: int | None = None
    """Most pages of a PDF or Word file, slides of a deck."""
    max_document_seconds: float | None = None
    """Most seconds spent reading one file."""
    max_nesting_depth: int | None = None
    """Deepest JSON nesting in a JSONL record."""
    embedding_cache: str | None = None
    """SQLite file of embeddings shared between runs; None: embeddings.sqlite in the run's folder."""
    quiet: bool = True
    """No progress display (the command line shows one unless --quiet)."""

    _corpus = field_validator("corpus", mode="before")(path_texts)
    _files = field_validator("embedding_cache", mode="before")(path_text)


class ExamOptions(CorpusOptions):
    """`examiner run`: examine target model(s) on a reference corpus."""

    out: str | None = None
    """The run folder, new or empty (None: runs/exam-<time>)."""
    paper: str | None = None
    """Sit an earlier run's exam paper (its run folder) instead of the adaptive exam."""
    paper_target: str | None = None
    """With `paper`: whose questions in that run (None: its only target)."""
    prepare_engine: Literal["local", "ray"] | None = None
    """Where the corpus is read, cut into units and embedded: local (default) or ray."""
    ray_address: str | None = None
    """With prepare_engine ray: the Ray cluster (None: a Ray instance on this machine)."""
    stop_when: str | None = None
    """Stop asking round 1's clusters once every target's anytime-valid accuracy interval meets this rule
    (`width<=W`, `accuracy>=A`, `accuracy<=A`); the run is then one round (docs/METHODS.md)."""

    _folders = field_validator("out", "paper", mode="before")(path_text)


class EstimateOptions(CorpusOptions):
    """`examiner estimate`: predict what the run with the same options would make and spend."""

    out: str | None = None
    """Folder for the pilot's records, ledger and estimate.json (None: runs/estimate-<time>)."""
    pilot_clusters: int = 4
    """Round-1 clusters the pilot examines (examiner.exam.estimate.PILOT_CLUSTERS)."""
    pilot_rounds: int = 1
    """Rounds the pilot runs (examiner.exam.estimate.PILOT_ROUNDS): 1 is the run's own round 1, which a run
    with the same cache reuses; more also measure later rounds and the judge self-check (not reusable)."""
    replay_simulated: bool = False
    """No pilot: replay the whole exam on the simulated backend at the configured prices."""
    detect: float | None = None
    """Also plan, from the pilot, the units (and dollars) that detect this accuracy difference with 80% power."""
    half_width: float | None = None
    """Also plan, from the pilot, the units (and dollars) that give a 95% interval of this half-width."""

    _folder = field_validator("out", mode="before")(path_text)


class ResumeOptions(BaseModel):
    """`examiner resume`: continue a stopped run with its own configuration."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    run_dir: str
    """The run folder `run_exam` wrote (holds run.json)."""
    budget_usd: float | None = None
    """The run's new spending cap, money spent included (None: EXAMINER_BUDGET_USD, else the run's cap)."""
    cache_dir: str | None = None
    """A response cache folder shared between runs (None: the one the run was started with)."""
    config_file: str | None = None
    """The configuration file the run was started with: gives back the credentials of endpoint URLs, and
    vouches for the endpoints that get a key from the environment and the caches outside the run folder
    (each must be named as the run folder does)."""
    trust_run_config: bool = False
    """Use the endpoints (and their keys) and the cache paths outside the folder that the run folder's
    config.yaml names without a config_file naming them (needed for a folder someone else wrote)."""
    quiet: bool = True
    """No progress display."""

    _folders = field_validator("run_dir", "cache_dir", "config_file", mode="before")(path_text)


class DemoOptions(BaseModel):
    """`examiner demo`: examine the embedded local model on a shipped corpus."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    corpus: str = "corpora/examiner-handbook"
    """The corpus folder."""
    out: str = "runs/demo"
    """The run folder: new, empty, or an earlier demo run, which is replaced (nothing else is)."""
    max_rounds: int = 2
    """Stop after this many rounds."""
    quiet: bool = True
    """No progress display."""

    _folders = field_validator("corpus", "out", mode="before")(path_text)


# ------------------------------------------------------------------ results

@dataclass(frozen=True)
class Figure:
    """A proportion with its 95% interval; None where it is undefined (nothing to divide by)."""

    value: float | None
    low: float | None
    high: float | None

    @classmethod
    def of(cls, estimate: ReportEstimate) -> Figure:
        """The figure of a report's estimate (NaN, which report.json writes as null, is None)."""
        def finite(x: float | None) -> float | None:
            return None if x is None or x != x else float(x)

        return cls(finite(estimate.value), finite(estimate.low), finite(estimate.high))


@dataclass(frozen=True)
class TargetResult:
    """One examined model's headline figures (report.json `targets`)."""

    target: str
    accuracy: Figure
    """correct / covered units (correct + incorrect + abstained), cluster-bootstrap interval."""
    coverage: Figure
    """covered units / all units."""
    correct: int
    incorrect: int
    unanswered: int
    uncovered: int
    abstained: int = 0
    """Covered units whose answer declined (the judge's `abstained`)."""


@dataclass(frozen=True)
class ExamResult:
    """An exam run: where it is, how it ended, who judged, the figures per target and what it cost; its
    rows (units, verdicts, outcomes, model calls) are read from the run folder when asked for."""

    run_dir: Path
    run_id: str
    status: str
    """completed, budget_exhausted, incomplete, interrupted or failed."""
    stop_reason: str | None
    mode: str
    judge_mode: str
    targets: Mapping[str, TargetResult]
    cost_usd: float
    report: ExamReport | None
    """The run's report model (report.json, read through the versioned reader
    examiner.reporting.reading.load_report); None when the run stopped before its report."""

    @property
    def target(self) -> str:
        """The first (often the only) target's name."""
        return next(iter(self.targets))

    def units(self) -> Rows[UnitRow]:
        """The knowledge units the corpus was condensed into."""
        return read_units(self.run_dir)

    def verdicts(self) -> Rows[VerdictRow]:
        """Every verdict of the exam's judge, one per (answer, unit)."""
        return read_verdicts(self.run_dir)

    def outcomes(self) -> Rows[OutcomeRow]:
        """Each unit's standing per target at the end (correct, incorrect, unanswered, uncovered)."""
        return read_outcomes(self.run_dir)

    def costs(self) -> Rows[CallCost]:
        """Every answered model call of the run, with its tokens and dollars (the ledger)."""
        return read_costs(self.run_dir)


def read_exam(run_dir: str | Path) -> ExamResult:
    """The result of an exam run already on disk (run.json and, where written, report.json)."""
    from examiner.core import rundir
    from examiner.core.rundir import RunDir

    folder = Path(run_dir)
    if not (folder / rundir.RUN_INFO).is_file():
        raise UserError(f"no exam run at {folder} (no {rundir.RUN_INFO})")
    return _exam_result(folder, RunDir(folder).read_info())


def _exam_result(folder: Path, info: RunInfo) -> ExamResult:
    """How a run ended (`info`, as the runner returned it) with the figures of its report."""
    from examiner.core import rundir
    from examiner.reporting.model import ExamReport
    from examiner.reporting.reading import load_report

    path = folder / rundir.REPORT_JSON
    report = load_report(path).report if path.is_file() else None
    if report is not None and not isinstance(report, ExamReport):
        raise UserError(f"{path} is a {getattr(report, 'kind', '?')} report, not an exam's")
    sections = report.targets if report is not None else {}
    targets = {name: TargetResult(name, Figure.of(f.accuracy), Figure.of(f.coverage), f.counts.correct,
                                  f.counts.incorrect, f.counts.unanswered, f.counts.uncovered, f.counts.abstained)
               for name, f in sections.items()}
    cost = report.cost.total.cost_usd if report is not None else 0.0
    return ExamResult(run_dir=folder, run_id=info.run_id, status=info.status, stop_reason=info.stop_reason,
                      mode=info.mode, judge_mode=info.judge_mode, targets=targets, cost_usd=float(cost or 0.0),
                      report=report)


# ------------------------------------------------------------------ the exam

READING_OPTIONS = ("follow_links", "max_document_mb", "max_document_text_mb", "max_document_pages",
                   "max_document_seconds", "max_nesting_depth")
"""Exam settings bounding how the corpus is read (examiner.corpus.documents.ReadLimits), each an option."""

EXAM_SETTINGS = {"unit_mode": "units", "cluster_size": "cluster_size", "max_rounds": "max_rounds",
                 "max_probes": "max_probes", "seed": "seed", "max_corpus_mb": "max_corpus_mb",
                 "language": "language", "question_gate": "question_gate",
                 "gate_drop_guessable": "gate_drop_guessable", "paraphrases": "paraphrases",
                 "paraphrase_share": "paraphrase_share", "control_share": "control_share", **{name: name for name in READING_OPTIONS},
                 "prepare_engine": "prepare_engine", "ray_address": "ray_address", "stop_when": "stop_when"}
"""Exam settings the options set: setting -> option (the last three are ExamOptions' only)."""


def _with_exam_options(settings: Settings, options: CorpusOptions) -> Settings:
    """The settings with the exam options applied, each validated as config.yaml is (so a resume accepts
    exactly what the run accepted); a bad value is one line naming its flag."""
    for key, name in EXAM_SETTINGS.items():
        value = getattr(options, name, None)
        if value is None:
            continue
        try:
            settings = settings.merged({"exam": {key: value}})
        except ConfigError as exc:
            reason = str(exc).rpartition(f"exam.{key}: ")[2]
            raise ConfigError(f"--{name.replace('_', '-')} {value}: {reason}") from None
    return settings


def _with_stop_rule(settings: Settings, options: CorpusOptions) -> Settings:
    """A `--stop-when` rule checked, and the run made one round; refused (one line) where its guarantee
    cannot hold: a judge cascade (judged over the whole round), a paper re-sit, more than one round."""
    rule = settings.exam.stop_when
    if not rule:
        return settings
    from examiner.exam.stopping import parse_rule

    if parse_rule(rule).kind == "decided" and len(options.targets) != 2:
        raise UserError("--stop-when decided:M compares two targets: give exactly two --target")
    if settings.judge_cascade is not None:
        raise UserError("--stop-when cannot go with a judge cascade: the cascade judges the whole round at once")
    if getattr(options, "max_rounds", None) not in (None, 1):
        raise UserError("--stop-when covers round 1's clusters only (later rounds re-ask what round 1 left uncovered, "
                        "chosen by its results, so no random order covers them and the interval would not hold): "
                        "leave out --max-rounds or give 1")
    return settings.merged({"exam": {"max_rounds": 1}})


def _with_cascade(settings: Settings, options: CorpusOptions) -> Settings:
    """The settings with `--judge-cascade` / `--target-agreement` / `--cascade-risk` / `--cascade-confidence` applied (over a cascade
    the configuration names, if any); a bad value is one line naming its flag."""
    tiers = list(getattr(options, "judge_cascade", ()))
    knobs = {key: value for key, value in (("target_agreement", getattr(options, "target_agreement", None)),
                                           ("risk", getattr(options, "cascade_risk", None)),
                                           ("confidence", getattr(options, "cascade_confidence", None)))
             if value is not None}
    if not tiers and not knobs:
        return settings
    if tiers and len(tiers) != 2:
        raise UserError(f"--judge-cascade takes two endpoints, CHEAP,STRONG; got {','.join(tiers)}")
    if not tiers and settings.judge_cascade is None:
        raise UserError("--target-agreement, --cascade-risk and --cascade-confidence need a judge cascade "
                        "(--judge-cascade CHEAP,STRONG)")
    if options.simulate:
        tiers = [simulated_name(settings, t) for t in tiers]
    current = settings.judge_cascade.model_dump() if settings.judge_cascade is not None else {}
    plan = {**current, **({"tiers": tiers} if tiers else {}), **knobs}
    try:
        return settings.merged({"judge_cascade": plan, "roles": {"judge": plan["tiers"][-1]}})
    except ConfigError as exc:
        raise ConfigError(f"--judge-cascade: {exc}") from None


def _embedding_cache_file(path: str) -> str:
    """The embedding cache file as an absolute path (config.yaml records it, so a resume finds it from any
    directory), its folder checked as an output folder before any work starts."""
    file = Path(path).expanduser()
    if file.is_dir():
        raise UserError(f"--embedding-cache {path}: a folder, not an SQLite file (e.g. {file / 'embeddings.sqlite'})")
    output_dir(file.parent, "--embedding-cache")
    return str(file.resolve())


def prepare_exam(options: CorpusOptions, settings: SettingsSource = None) -> tuple[ExamRequest, Settings]:
    """The exam request and settings the options describe, checked before anything is created (a typo in
    a corpus path leaves no run folder behind); configures the corpus reader's limits."""
    from examiner.corpus.reading import configure_reading, limits_from_settings
    from examiner.exam.option_fit import check_options_fit
    from examiner.exam.role_mix import check_role_mix
    from examiner.exam.runner import ExamRequest

    check_options_fit(options)
    resolved = resolve_settings(settings, options)
    for path in options.corpus:
        if not Path(path).expanduser().exists():
            raise UserError(f"corpus path does not exist: {path}")
    resolved = _with_exam_options(resolved, options)
    configure_reading(limits_from_settings(resolved.exam))  # before anything reads the corpus (its size included)
    if resolved.exam.prepare_engine == "ray":  # an unsupported unit mode or a missing extra: no run folder
        from examiner.exam.ray_prepare import check_ray_engine

        check_ray_engine(resolved.exam)
    if options.embedding_cache:
        resolved = resolved.merged({"embedding_cache": _embedding_cache_file(options.embedding_cache)})
    targets, judges = list(options.targets), list(options.judges)
    if options.simulate:
        targets = [simulated_name(resolved, t) for t in targets]
        judges = [simulated_name(resolved, j) for j in judges]
    resolved = _with_cascade(resolved, options)
    resolved = _with_stop_rule(resolved, options)
    if options.allow_simulated_roles:
        resolved = resolved.merged({"allow_simulated_roles": True})
    check_role_mix(resolved, targets, judges)
    paper = getattr(options, "paper", None) or ""
    request = ExamRequest(corpus_paths=list(options.corpus), targets=targets, mode=options.mode,
                          judge_mode=options.judge_mode, judges=judges, jsonl_field=options.jsonl_field,
                          paper=paper, paper_target=getattr(options, "paper_target", None) or "")
    return request, resolved


def run_exam(options: ExamOptions, settings: SettingsSource = None) -> ExamResult:
    """Examine the target model(s) on the corpus into a new run folder (reports included), as `examiner
    run` does; the result holds the figures and reads the rows."""
    from examiner.exam.runner import default_run_dir, start_exam

    from examiner.exam.config_trust import remember_endpoints

    request, resolved = prepare_exam(options, settings)
    run_dir = output_dir(options.out) if options.out else default_run_dir()
    remember_endpoints(run_dir, resolved)  # the user configured these: a resume of this folder may use them
    return _exam_result(run_dir, run_stoppable(start_exam(resolved, request, run_dir, quiet=options.quiet)))


def resume_exam(options: ResumeOptions) -> ExamResult:
    """Continue a killed, interrupted or budget-stopped run from its checkpoint with the run's own
    configuration, as `examiner resume` does (a finished run only gets its reports rebuilt)."""
    from examiner.core.config import budget_from_env
    from examiner.exam.config_trust import check_resume_endpoints
    from examiner.exam.runner import resume_exam as resume

    run_dir = Path(options.run_dir)
    if not run_dir.is_dir():
        raise UserError(f"no run directory at {run_dir}")
    check_resume_endpoints(run_dir, config_file=options.config_file, trust=options.trust_run_config,
                           cache_dir=cache_folder(options.cache_dir))
    if options.budget_usd is not None:
        budget = check_budget(options.budget_usd)
    else:
        budget = check_budget(budget_from_env(os.environ), "EXAMINER_BUDGET_USD")
    info = run_stoppable(resume(run_dir, quiet=options.quiet, budget_usd=budget,
                                cache_dir=cache_folder(options.cache_dir), config_file=options.config_file))
    return _exam_result(run_dir, info)


def run_demo(options: DemoOptions) -> ExamResult:
    """Examine the embedded local model (no configuration, nothing downloaded) on a shipped corpus, as
    `examiner demo` does: an earlier demo run in the folder is replaced, any other content refused."""
    from examiner.core.config import load_settings
    from examiner.exam.demo import clear_earlier_demo
    from examiner.exam.runner import ExamRequest, start_exam

    settings = load_settings(None).merged({"exam": {"max_rounds": options.max_rounds}})
    corpus = Path(options.corpus)
    if not corpus.exists():
        raise UserError(f"demo corpus {corpus} not found (run from the repository root)")
    run_dir = output_dir(options.out)
    clear_earlier_demo(run_dir)
    info = run_stoppable(start_exam(settings, ExamRequest(corpus_paths=[str(corpus)], demo=True), run_dir,
                                    quiet=options.quiet))
    return _exam_result(run_dir, info)


# ------------------------------------------------------------------ the estimate

@dataclass(frozen=True)
class RoleEstimate:
    """Predicted calls, tokens and dollars of one role (or `total`), each with its range (equal to the
    value for the simulated replay, which is exact for a simulated run)."""

    role: str
    endpoint: str
    calls: float
    calls_low: float
    calls_high: float
    prompt_tokens: float
    prompt_tokens_low: float
    prompt_tokens_high: float
    completion_tokens: float
    completion_tokens_low: float
    completion_tokens_high: float
    dollars: float
    dollars_low: float
    dollars_high: float


@dataclass(frozen=True)
class EstimateResult:
    """A pilot's extrapolation (`estimate`), or the simulated replay (`replay`): one of the two is set."""

    estimate: Estimate | None
    replay: Mapping[str, Any] | None
    by_role: Rows[RoleEstimate]
    """One row per role, then `total`."""
    plans: PilotPlans | None = None
    """With `detect` or `half_width`: the pilot's design (variance, ICC within documents and clusters) and a
    sample-size plan per goal (examiner.exam.plans)."""

    def as_dict(self) -> dict[str, Any]:
        """What `examiner estimate --json` prints (with a plan asked for: under `plan`)."""
        if self.estimate is None:
            return dict(self.replay or {})
        data = self.estimate.as_dict()
        if self.plans is not None:
            from examiner.reporting.writer import strict

            data["plan"] = strict({"targets": list(self.plans.targets), "design": self.plans.design.to_dict(),
                                   "plans": [p.to_dict() for p in self.plans.plans]})
        return data


def _pilot_rows(estimate: Estimate) -> Rows[RoleEstimate]:
    def cells(figure: Any) -> tuple[float, float, float]:
        return figure.value, figure.low, figure.high

    return Rows(RoleEstimate, (RoleEstimate(u.role, u.endpoint, *cells(u.calls), *cells(u.prompt_tokens),
                                            *cells(u.completion_tokens), *cells(u.dollars))
                               for u in [*estimate.by_role, estimate.total]))


def _replay_rows(replay: Mapping[str, Any]) -> Rows[RoleEstimate]:
    def cells(value: Any) -> tuple[float, float, float]:
        return float(value), float(value), float(value)

    rows = [*replay["by_role"], dict(replay["total"], role="total")] if replay.get("total") else replay["by_role"]
    return Rows(RoleEstimate, (RoleEstimate(r["role"], "", *cells(r["calls"]), *cells(r["prompt_tokens"]),
                                            *cells(r["completion_tokens"]), *cells(r["cost_usd"])) for r in rows))


def estimate_exam(options: EstimateOptions, settings: SettingsSource = None) -> EstimateResult:
    """Predict units, rounds, calls, tokens and dollars of the run the options describe, as `examiner
    estimate` does: a small seeded pilot on the configured endpoints (real calls, own ledger), or the
    simulated replay."""
    from examiner.exam.estimate import estimate_exam as estimate, replay_simulated

    if options.pilot_clusters < 1:
        raise ConfigError(f"--pilot-clusters must be 1 or more, got {options.pilot_clusters}")
    if options.pilot_rounds < 1:
        raise ConfigError(f"--pilot-rounds must be 1 or more, got {options.pilot_rounds}")
    for flag, goal in (("--detect", options.detect), ("--half-width", options.half_width)):
        if goal is not None and not 0 < goal < 1:
            raise ConfigError(f"{flag} is an accuracy difference between 0 and 1 (e.g. 0.03), got {goal}")
        if goal is not None and options.replay_simulated:
            raise ConfigError(f"{flag} plans from the pilot, and --replay-simulated runs none")
    request, resolved = prepare_exam(options, settings)
    if options.replay_simulated:
        replay = asyncio.run(replay_simulated(resolved, request))
        return EstimateResult(estimate=None, replay=replay, by_role=_replay_rows(replay))
    pilot_dir = output_dir(options.out) if options.out else Path("runs") / time.strftime("estimate-%Y%m%d-%H%M%S")
    figures = asyncio.run(estimate(resolved, request, pilot_dir, clusters=options.pilot_clusters,
                                   rounds=options.pilot_rounds, quiet=options.quiet))
    plans = None
    if options.detect is not None or options.half_width is not None:
        from examiner.exam.plans import pilot_plans

        plans = pilot_plans(pilot_dir, detect=options.detect, half_width=options.half_width,
                            corpus_units=figures.units, corpus_documents=figures.documents,
                            dollars_per_unit=figures.total.dollars.value / figures.units if figures.units else None)
    return EstimateResult(estimate=figures, replay=None, by_role=_pilot_rows(figures), plans=plans)

