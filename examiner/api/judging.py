"""Judging a dataset as a library call: one method over every row, judgments.jsonl and the reports
written into a folder, the judgments returned as rows.

A dataset without one usable row raises UserError after its report (listing the skipped rows) is written;
a budget stop is a result whose status says so. Messages name an option by its flag, as the command line
prints them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from examiner.api.checks import Notes, output_dir, to_stderr
from examiner.api.judge_method_options import check_method_options
from examiner.api.rows import CallCost, JudgmentRow, Rows, judgment_rows, read_costs
from examiner.api.settings import JobOptions, SettingsSource, path_text, resolve_settings
from examiner.core.errors import UserError
from examiner.core.names import JudgeMethod
from examiner.core.passed_text import count_cut

if TYPE_CHECKING:
    from examiner.reporting.model import JudgeReport
    from examiner.core.config import Settings
    from examiner.corpus.datasets import FieldMap
    from examiner.judging.dataset import Row



class JudgeOptions(JobOptions):
    """`examiner judge`: judge every row of a dataset with one method."""

    data: str
    """A .jsonl or .json file, or llmbar:SUBSET[,SUBSET] (LLMBar's field names)."""
    method: JudgeMethod
    """pairwise (JudgeLM-style, optionally both orders), reviseval, geval, or reference (graded against
    the row's reference)."""
    out: str
    """Folder for judgments.jsonl, report.json/.md, the ledger and the response cache."""
    judges: tuple[str, ...] = ()
    """Endpoint for every judging call (`--judge`; empty: each role's endpoint); two or more make a
    pairwise judge panel whose majority decides."""
    judge_cascade: tuple[str, ...] = ()
    """Cheap then strong pairwise judge (`--judge-cascade CHEAP,STRONG`): the cheap judge's confident
    verdicts stand, the other pairs go to the strong judge (docs/CASCADE.md); --method pairwise only."""
    target_agreement: float = 0.9
    """A cascade's promised agreement rate (risk-controlled, not every run's realised share) with the strong
    judge on the pairs the cheap judge keeps."""
    cascade_risk: float = 0.1
    """Chance allowed that a cascade's promise fails."""
    cascade_reference: Literal["strong", "gold"] = "strong"
    """What a cascade's promised agreement is with: the strong judge, or the rows' gold labels (calibrated
    on the gold labels of its calibration rows)."""
    cascade_confidence: Literal["auto", "logprobs", "samples"] = "auto"
    """How a cascade's cheap judge's confidence is read: verdict probabilities from its grade line's
    log-probabilities, the agreement of its samples, or auto (logprobs where the endpoint gives them)."""
    calibration_share: float = 0.2
    """Share of rows a cascade's strong judge also judges, to calibrate the cheap judge's threshold."""
    limit: int | None = None
    """Only the first N rows."""
    no_cache: bool = False
    """Do not reuse cached replies in `out`."""
    quiet: bool = True
    """No progress display."""
    id_field: str | None = None
    """Key of the row id (default: id)."""
    instruction_field: str | None = None
    """Key of the instruction (default: instruction; LLMBar's `input` for its files)."""
    output_field: str | None = None
    """Key of the one output of single-output methods (default: output)."""
    output1_field: str | None = None
    """Key of the first output of a pair (default: output_1)."""
    output2_field: str | None = None
    """Key of the second output of a pair (default: output_2)."""
    reference_field: str | None = None
    """Key of the reference answer (default: reference)."""
    label_field: str | None = None
    """Key of the gold preference 0 (tie) / 1 / 2 (default: label)."""
    human_field: str | None = None
    """Key of the human score (default: human_score)."""
    source_field: str | None = None
    """Key of the source text a summary is scored against (default: source)."""
    group_field: str | None = None
    """Key of the input a row scores, for summary-level correlations (default: group)."""
    system_field: str | None = None
    """Key of the system that wrote the output, for system-level correlations (default: system)."""
    human_range: tuple[float, float] | None = None
    """Human scores must lie within (low, high); rows outside are skipped."""
    swap: bool = False
    """Judge each pair in both orders (consistency, position bias)."""
    grade_only: bool = False
    """Ask for the grade line only (no reason)."""
    tie_threshold: float = 0.0
    """|score1 - score2| <= this is a tie."""
    json_grades: bool = False
    """Ask for the grades as a JSON object (for models that break the text line format)."""
    with_reference: bool = False
    """Pairwise: give the row's reference to the judge."""
    single: bool = False
    """RevisEval: one response per row (`output_field`), not pairs."""
    rubric: str | None = None
    """RevisEval: rubric given to the reviser."""
    seed: int = 0
    """RevisEval: seed for which response gets revised."""
    classic_metrics: tuple[str, ...] | None = None
    """RevisEval: metrics against the revised reference (None: all of examiner.judging.reviseval's
    CLASSIC_METRICS; empty: none)."""
    task: str | None = None
    """G-Eval: task introduction (None: the default task)."""
    criterion: str | None = None
    """G-Eval: criterion with its scale, e.g. 'Coherence (1-5): ...' (None: the default criterion)."""
    form_label: str = "Score"
    """G-Eval: the form field to fill."""
    scale: int | None = None
    """Top of the score scale (None: 5 for G-Eval, 10 for the reference judge and RevisEval)."""
    samples: int = 20
    """G-Eval: samples when log-probabilities are unavailable."""
    no_logprobs: bool = False
    """G-Eval: always use the sampling estimate."""

    _paths = field_validator("data", "out", mode="before")(path_text)


@dataclass(frozen=True)
class JudgeResult:
    """A judging run: rows judged, agreement with the gold labels where there were any, the files, and
    every judgment as a row."""

    run_dir: Path
    method: str
    status: str
    """ok or budget_exhausted."""
    rows: int
    """Rows read and sent to the judge (skipped rows not counted)."""
    judged: int
    """Judgments with a verdict or a score; 0 is the case `examiner judge` exits 4 on."""
    skipped: int
    accuracy: float | None
    """Pairwise methods: agreement with the gold labels (None without labels or for single scores)."""
    cost_usd: float
    report: JudgeReport
    """The report model report.json and report.md were written from (figures a JSON file holds as null,
    with their reason, are NaN here)."""
    paths: Mapping[str, Path]
    """The files written: report_json, report_md and (when a row was judged) judgments."""
    judgments: Rows[JudgmentRow]
    """Every judgment, in row order (a swapped pair: two rows)."""
    outage: str | None = None
    """When every model call failed (endpoint down, unreachable, 5xx past its retries): one line naming the
    endpoint, the case `examiner judge` exits 75 on (a retry may succeed); None otherwise."""

    def costs(self) -> Rows[CallCost]:
        """Every answered model call of the run, with its tokens and dollars (the ledger)."""
        return read_costs(self.run_dir)


def _judge_endpoint(settings: Settings, name: str | None, simulate: bool) -> str | None:
    """The endpoint a judge name is sent to (its simulated twin when simulated)."""
    if name is None:
        return None
    if simulate:
        return f"sim-{name}" if f"sim-{name}" in settings.endpoints else "simulated"
    settings.endpoint(name)  # ConfigError for a typo
    return name


_FIELD_OPTIONS = {"id": "id_field", "instruction": "instruction_field", "output": "output_field",
                  "output_1": "output1_field", "output_2": "output2_field", "reference": "reference_field",
                  "label": "label_field", "human": "human_field", "source": "source_field", "group": "group_field",
                  "system": "system_field"}
"""FieldMap attribute -> the option naming its key."""


def _field_map(options: JudgeOptions, notes: Notes) -> FieldMap:
    """The keys given over the dataset's defaults: LLMBar's for an llmbar: subset (as `examiner meta`
    reads them), otherwise examiner judge's own."""
    from examiner.corpus.datasets import LLMBAR_FIELDS, FieldMap

    given = {name: getattr(options, option) for name, option in _FIELD_OPTIONS.items()
             if getattr(options, option) is not None}
    llmbar = options.data.startswith("llmbar:") or _in_llmbar_shape(options.data, given, notes)
    return dataclasses.replace(LLMBAR_FIELDS if llmbar else FieldMap(), **given)


def _in_llmbar_shape(data: str, given: dict[str, str], notes: Notes) -> bool:
    """Whether a dataset file is one of LLMBar's own (its first record has LLMBar's `input` where examiner
    judge's default `instruction` is missing) and no option names the instruction's key: then LLMBar's
    keys are read, as `examiner meta` reads them, instead of skipping every row for a missing `instruction`."""
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
    notes("examiner: the records have LLMBar's keys (input, output_1, output_2, label): reading them as "
          "`examiner meta` does")
    return True


def judge(options: JudgeOptions, settings: SettingsSource = None, *, notes: Notes = to_stderr) -> JudgeResult:
    """Judge the dataset with one method and write judgments.jsonl and the reports into `options.out`, as
    `examiner judge` does. `notes` receives the lines the command prints on stderr (skipped rows, the
    gateway's notes)."""
    from examiner.judging.dataset import Requirements, load_rows
    from examiner.judging.outage import outage_line
    from examiner.judging.sections import as_judge_report, build_report, write_outputs

    check_method_options(options)
    resolved = resolve_settings(settings, options)
    out = output_dir(options.out)
    if options.limit is not None and options.limit < 1:
        raise UserError(f"--limit must be 1 or more, got {options.limit}")
    fields = _field_map(options, notes)
    human_range = options.human_range
    if human_range is not None and human_range[0] > human_range[1]:
        raise UserError(f"--human-range: LO must not exceed HI, got '{human_range[0]:g},{human_range[1]:g}'")
    pair_method = options.method == "pairwise" or (options.method == "reviseval" and not options.single)
    if pair_method:
        req = Requirements(("instruction", "output_1", "output_2"), need_reference=options.with_reference,
                           human_range=human_range)
    elif options.method == "geval":
        req = Requirements(("output",), optional_text=("instruction", "source"), human_range=human_range)
    elif options.method == "reference":
        req = Requirements(("instruction", "output"), need_reference=True, human_range=human_range)
    else:
        req = Requirements(("instruction", "output"), human_range=human_range)
    rows, skipped = load_rows(options.data, fields, req, limit=options.limit)
    for s in skipped[:20]:
        notes(f"examiner: skipped {s.message}")
    if len(skipped) > 20:
        notes(f"examiner: ... and {len(skipped) - 20} more skipped rows (see the report)")
    out.mkdir(parents=True, exist_ok=True)
    judges = list(dict.fromkeys(options.judges))
    if options.judge_cascade and (options.method != "pairwise" or judges):
        raise UserError("--judge-cascade works with --method pairwise and without --judge")
    if len(judges) > 1 and options.method != "pairwise":
        raise UserError(f"a judge panel (--judge given {len(judges)} times) works with --method pairwise")
    panel = {name: _judge_endpoint(resolved, name, options.simulate) for name in judges} if len(judges) > 1 else None
    endpoint = _judge_endpoint(resolved, judges[0] if judges else None, options.simulate)
    if not judges and resolved.judge_panel:  # `roles: {judge: [A, B, C]}` (already resolved, simulated too)
        if options.method == "pairwise":
            panel = {name: name for name in resolved.judge_panel}
        else:
            notes(f"examiner: the configured judge panel applies to --method pairwise; --method {options.method} "
                  f"judges with its first member, {resolved.judge_panel[0]}")
    started = time.perf_counter()
    records, meta = asyncio.run(_judge_rows(options, resolved, rows, endpoint, out, pair_method, panel, notes))
    meta.update(dataset=options.data, wall_s=round(time.perf_counter() - started, 3),
                passed_cut=count_cut({t for r in rows for t in (r.output, r.output_1, r.output_2)},
                                     resolved.max_passed_chars))
    report = build_report(options.method, records, [s.to_dict() for s in skipped], meta)
    typed = as_judge_report(report)
    paths = write_outputs(out, records, typed)
    if not rows:
        raise UserError(f"no usable rows in {options.data} ({len(skipped)} skipped; see {paths['report_md']})")
    judged = sum(1 for r in records if r.get("verdict") is not None or r.get("score") is not None)
    agreement = (report.get("pairwise") or {}).get("agreement") or {}
    return JudgeResult(run_dir=out, method=options.method, status=str(report.get("status", "ok")), rows=len(rows),
                       judged=judged, skipped=int(report.get("rows_skipped", 0)),
                       accuracy=agreement.get("accuracy"), cost_usd=float(report.get("cost_usd") or 0.0),
                       report=typed, paths=paths, judgments=judgment_rows(records),
                       outage=outage_line(records, resolved))


async def _judge_rows(options: JudgeOptions, settings: Settings, rows: list[Row], endpoint: str | None, out: Path,
                      pair_method: bool, panel: dict[str, str | None] | None, notes: Notes,
                      ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every row through the method, on one gateway (ledger and cache in `out`); the records and the run's
    facts (judge, status, calls, tokens, dollars)."""
    from examiner.exam.progress import ExamProgress
    from examiner.judging.pairwise import PairwiseOptions, run_pairwise
    from examiner.judging.pairwise_cascade import (
        PairCascadePlan,
        cascade_summary,
        register_pairwise_gold,
        run_pairwise_cascade,
    )
    from examiner.judging.reviseval import CLASSIC_METRICS as KNOWN_METRICS, RevisEvalOptions, run_reviseval
    from examiner.judging.row_runner import RunFlags
    from examiner.judging.single import DEFAULT_CRITERION, DEFAULT_TASK, GEvalOptions, run_geval, run_reference
    from examiner.llm.gateway import Gateway

    pw = PairwiseOptions(swap=options.swap, grade_only=options.grade_only, tie_threshold=options.tie_threshold,
                         use_reference=options.with_reference, endpoint=endpoint, structured=options.json_grades)
    given = KNOWN_METRICS if options.classic_metrics is None else options.classic_metrics
    metrics = tuple(m for m in given if m and m != "none")
    unknown = [m for m in metrics if m not in KNOWN_METRICS]
    if unknown:
        raise UserError(f"unknown --classic-metrics {', '.join(unknown)} (known: {', '.join(KNOWN_METRICS)})")
    opts_g = GEvalOptions(task=options.task or DEFAULT_TASK, criterion=options.criterion or DEFAULT_CRITERION,
                          form_label=options.form_label, scale=options.scale or 5, n=options.samples,
                          use_logprobs=False if options.no_logprobs else None, endpoint=endpoint)
    if options.method == "geval" and (opts_g.scale < 2 or opts_g.scale > 10):
        raise UserError(f"--scale must be between 2 and 10 for geval, got {opts_g.scale}")
    cascade: dict[str, Any] | None = None
    async with Gateway(settings, run_dir=out, cache=not options.no_cache,
                       notes=lambda line: notes(f"examiner: {line}")) as gw:
        # the exam's progress display: one bar over the rows, with calls, tokens and dollars so far
        progress = ExamProgress(gw.totals, enabled=not options.quiet)
        with progress.task(f"judge {options.method}", len(rows)) as tick:
            flags = RunFlags(on_row_done=tick.advance)
            if options.method == "pairwise" and options.judge_cascade:
                plan = PairCascadePlan(*_cascade_tiers(settings, options), target_agreement=options.target_agreement,
                                       risk=options.cascade_risk, calibration_share=options.calibration_share,
                                       seed=options.seed, confidence=options.cascade_confidence,
                                       reference=options.cascade_reference)
                if plan.reference == "gold":  # simulated judges then aim at the rows' gold labels
                    await register_pairwise_gold(gw, rows, (plan.cheap, plan.strong))
                records, threshold = await run_pairwise_cascade(gw, rows, pw, plan, flags,
                                                                notes=lambda line: notes(f"examiner: {line}"))
                cascade = cascade_summary(records, plan, threshold)
            elif options.method == "pairwise":
                records = await run_pairwise(gw, rows, pw, flags, panel=panel)
            elif options.method == "reviseval":
                opts = RevisEvalOptions(pairwise=pw, rubric=options.rubric, seed=options.seed, metrics=metrics,
                                        scale=options.scale or 10, endpoint=endpoint)
                records = await run_reviseval(gw, rows, opts, pairwise=pair_method, flags=flags)
            elif options.method == "geval":
                records = await run_geval(gw, rows, opts_g, flags)
            else:
                records = await run_reference(gw, rows, scale=options.scale or 10, endpoint=endpoint, flags=flags)
        totals = gw.totals
        judge_name = f"panel of {', '.join(panel)}" if panel else (endpoint or "role defaults")
        if cascade is not None:
            judge_name = f"cascade of {cascade['cheap']} and {cascade['strong']}"
        meta = {"judge": judge_name, "status": "budget_exhausted" if flags.budget_exhausted else "ok",
                "calls": totals.calls, "batch_calls": totals.batch_calls, "cache_hits": totals.cache_hits,
                "prompt_tokens": totals.prompt_tokens, "cached_tokens": totals.cached_tokens,
                "completion_tokens": totals.completion_tokens, "reasoning_tokens": totals.reasoning_tokens,
                "cost_usd": round(totals.cost_usd, 6),
                "failed_calls": flags.failed_calls, **({"cascade": cascade} if cascade else {})}
    if cascade is not None:  # the ledger is complete once the gateway has closed
        from examiner.core.rundir import RunDir
        from examiner.judging.pairwise_cascade import cascade_spend

        cascade.update(cascade_spend(RunDir(out).ledger_records(), cascade))
    return records, meta


def _cascade_tiers(settings: Settings, options: JudgeOptions) -> tuple[str, str]:
    """The cascade's two endpoints, as the settings name them (simulated twins under --simulate)."""
    from examiner.api.settings import simulated_name

    tiers = [simulated_name(settings, t) if options.simulate else t for t in options.judge_cascade]
    if len(tiers) != 2:
        raise UserError(f"--judge-cascade takes two endpoints, CHEAP,STRONG; got {','.join(options.judge_cascade)}")
    for name in tiers:
        settings.endpoint(name)  # a one-line error for an unknown endpoint
    return tiers[0], tiers[1]


class JudgeStatsOptions(BaseModel):
    """`examiner judge-stats`: the judging metrics of judgments made anywhere (a JSONL file)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    judgments: str
    """JSONL of judgments (from `judge` or another tool): pairwise verdicts or single scores."""
    labels: str | None = None
    """JSONL with gold labels (id + label; single scores: id + human score); None: those in the judgments."""
    teacher: str | None = None
    """JSONL of a teacher's pairwise judgments (same format) to agree with."""
    out: str | None = None
    """Also write report.json and report.md into this folder."""
    unparseable: Literal["drop", "wrong", "own-class"] = "drop"
    """Judgments without a usable verdict or score: dropped, counted as wrong (pairwise: a label other
    than the gold one; scores: the low end of score_range), or (pairwise only) `own-class`: a class of their
    own, never correct, with macro averages over the gold classes (PandaLM's published convention)."""
    id_field: str = "id"
    """Key of the row id."""
    order_field: str = "order"
    """Key of the order shown: original/swapped (also ab/ba, 0/1, false/true)."""
    verdict_field: str = "verdict"
    """Key of the verdict: 0 tie, 1, 2; null = unparseable."""
    label_field: str = "label"
    """Key of the gold label."""
    score_fields: tuple[str, str] = ("score_1", "score_2")
    """Keys of the two grades in the order shown, used when a record has no verdict."""
    score_range: tuple[float, float] = (1.0, 10.0)
    """The valid grade range (low, high)."""
    tie_threshold: float = 0.0
    """|grade1 - grade2| <= this is a tie."""
    verdict_in_shown_order: bool = False
    """Verdicts refer to the order shown (swapped ones are mapped back)."""
    score_field: str = "score"
    """Single scores: key of the judge's score; null = unparseable."""
    human_field: str = "human"
    """Single scores: key of the human score."""
    group_field: str = "group"
    """Single scores: key of the input a row scores (summary-level correlations)."""
    system_field: str = "system"
    """Single scores: key of the system that wrote the output (system-level correlations)."""

    _paths = field_validator("judgments", "labels", "teacher", "out", mode="before")(path_text)


@dataclass(frozen=True)
class JudgeStatsResult:
    """The judging metrics of a judgments file (the report model report.json is written from) and the files
    written."""

    report: JudgeReport
    paths: Mapping[str, Path]
    """report_json and report_md when `out` was given; empty otherwise."""


def judge_stats(options: JudgeStatsOptions, *, notes: Notes = to_stderr) -> JudgeStatsResult:
    """Agreement with gold labels, swap consistency and bias, agreement with a teacher, or correlations
    with human scores, of judgments made anywhere, as `examiner judge-stats` computes them."""
    from examiner.judging.judgment_files import JudgmentFields, judgments_report
    from examiner.judging.sections import as_judge_report, write_outputs

    out = output_dir(options.out) if options.out else None
    fields = JudgmentFields(**options.model_dump(include=set(JudgmentFields.__dataclass_fields__)))
    report = judgments_report(options.judgments, fields, labels=options.labels, teacher=options.teacher,
                              unparseable=options.unparseable, notes=notes)
    typed = as_judge_report(report)
    return JudgeStatsResult(report=typed, paths=write_outputs(out, [], typed) if out is not None else {})
