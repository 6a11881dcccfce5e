"""Meta-evaluation as a library call: which judge to trust? Evaluators assess the items, a meta-judge (or
a debate) decides between pairs of assessments, and the evaluators are ranked.

Running the same options again resumes: finished assessments and meta-judgments are read from the folder
and model replies come from its cache.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator

from examiner.api.checks import Notes, output_dir, to_stderr
from examiner.api.rows import CallCost, Rows, read_costs
from examiner.api.settings import JobOptions, SettingsSource, path_text, resolve_settings
from examiner.core.errors import UserError

if TYPE_CHECKING:
    from examiner.core.assessments import Assessment
    from examiner.core.config import Settings
    from examiner.corpus.datasets import Skipped
    from examiner.meta.pipeline import MetaRun
    from examiner.reporting.model.meta import MetaReport


class MetaOptions(JobOptions):
    """`examiner meta`: meta-evaluate evaluators (JDEval, MDEval, JDEval-i, BSMEval) and rank them."""

    evaluators: tuple[str, ...] = Field(min_length=1)
    """Evaluator endpoint names (at least two distinct, with the exam's own judge when `exam` is given)."""
    out: str
    """The run folder (records, cache, reports); running again with it resumes."""
    data: str | None = None
    """Items: a .jsonl / .json file, or llmbar:SUBSET[,SUBSET]; or give `exam` instead."""
    exam: str | None = None
    """Meta-evaluate judges on an exam run's (question, answer, unit) triples (its run folder)."""
    sample: int | None = None
    """With `exam`: triples sampled from the run (None: 50; with human_labels all)."""
    human_labels: bool = False
    """With `exam`: the run's overrides (from `examiner view`) are the gold labels."""
    min_gold: int = 10
    """Fewest gold-labelled items evaluators are ranked on (examiner.meta.gold.MIN_GOLD): with fewer, a run
    on `human_labels` stops before any call and a dataset's report says so among its problems."""
    no_exam_judge: bool = False
    """With `exam`: leave the run's own judge out of the ranking."""
    method: Literal["jdeval", "mdeval", "jdeval-i", "bsmeval"] = "jdeval"
    """The meta-evaluation method."""
    meta_judge: str | None = None
    """Endpoint of the meta-judge / referee (None: the meta_judge role)."""
    limit: int | None = None
    """Use only the first N items."""
    seed: int = 0
    """Pair draws, Elo shuffles and bootstrap seed."""
    shuffles: int = 200
    """Elo shuffles of the match list."""
    bootstrap: int = 1000
    """Bradley-Terry bootstrap resamples."""
    draws: int = 3
    """Evaluator pairs drawn per item."""
    both_orders: bool = False
    """Show each pair both ways and report the meta-judge's consistency."""
    rules: Literal["enforce", "trust"] = "enforce"
    """JDEval: the outcome follows the rules where they decide (enforce) or the stated better assistant."""
    max_rounds: int = 5
    """MDEval: rounds before a forced verdict."""
    statement_words: int = 200
    """MDEval: word limit of a debater statement."""
    debater: str | None = None
    """MDEval: one endpoint argues both sides (None: each evaluator)."""
    assessments: str | None = None
    """JSONL of ready-made assessments (item_id, evaluator, decision|score, explanation)."""
    concurrency: int = 64
    """Items in flight (endpoints keep their own limits)."""
    quiet: bool = True
    """No progress lines."""
    id_field: str = "id"
    """Key of the item id in the input records."""
    instruction_field: str = "input"
    """Key of the instruction."""
    output1_field: str = "output_1"
    """Key of the first output."""
    output2_field: str = "output_2"
    """Key of the second output."""
    label_field: str = "label"
    """Key of the gold preference 0 (tie) / 1 / 2."""
    text_field: str = "text"
    """Individual items: key of the text scored."""
    score_field: str = "score"
    """Individual items: key of the gold human score."""

    _paths = field_validator("out", "data", "exam", "assessments", mode="before")(path_text)


@dataclass(frozen=True)
class RankedEvaluator:
    """An evaluator's place in a meta-evaluation ranking (None where the method gives no such figure)."""

    evaluator: str
    baseline: float | None
    """Accuracy on the gold labels, where the items have them."""
    win_rate: float | None
    elo: float | None
    """Median Elo over FastChat's bootstrap rounds over matches."""
    elo_std: float | None
    """Match-order spread: std of the Elo rating over shuffles of the same matches (not an interval)."""
    bradley_terry: float | None
    bradley_terry_low: float | None
    bradley_terry_high: float | None
    """Bradley-Terry's 95% bootstrap interval over matches (FastChat's procedure)."""
    elo_low: float | None = None
    elo_high: float | None = None
    """Elo's 95% bootstrap interval over matches."""
    elo_rank: int | None = None
    bradley_terry_rank: int | None = None
    """1 + the evaluators whose interval lies wholly above this one's (equal ranks: a rank group)."""
    win_rate_low: float | None = None
    win_rate_high: float | None = None
    """The overall win rate's 95% interval over matches grouped by item."""


@dataclass(frozen=True)
class MetaResult:
    """A meta-evaluation: the evaluators best first (by Elo), the problems met, the report files."""

    run_dir: Path
    method: str
    ranking: Rows[RankedEvaluator]
    problems: tuple[str, ...]
    report: MetaReport
    """The report model report.json, report.md and report.html were written from (figures a JSON file
    holds as null, with their reason, are NaN here)."""
    paths: Mapping[str, Path]
    """The reports written: json, md and html."""
    run: MetaRun
    """The whole run as the pipeline returned it (assessments, matches, rankings) for the reports."""

    def costs(self) -> Rows[CallCost]:
        """Every answered model call of the run, with its tokens and dollars (the ledger)."""
        return read_costs(self.run_dir)


def _simulated_copy(settings: Settings, names: list[str]) -> Settings:
    """The named endpoints as simulated ones with the same names and models."""
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


def _finite(value: Any) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def meta_evaluate(options: MetaOptions, settings: SettingsSource = None, *, notes: Notes = to_stderr) -> MetaResult:
    """Run (or resume) the meta-evaluation and write its reports, as `examiner meta` does. `notes`
    receives the skipped records and (unless quiet) the progress lines. (Not named `meta`: that is the
    examiner.meta package.)"""
    from examiner.corpus.datasets import FieldMap
    from examiner.meta.exam_source import EXAM_JUDGE, load_exam_triples
    from examiner.meta.gold import check_gold
    from examiner.meta.items import load_items
    from examiner.meta.pipeline import MetaConfig, load_imported, run_meta
    from examiner.meta.sections import meta_report, ranking_rows, write_reports

    evaluators = [e.strip() for e in options.evaluators if e.strip()]
    if (options.data is None) == (options.exam is None):
        raise UserError("give either a data file (or llmbar:SUBSET) or --exam RUN_DIR")
    if options.human_labels and not options.exam:
        raise UserError("--human-labels takes the labels from an exam run's overrides: use it with --exam RUN_DIR")
    resolved = resolve_settings(settings, options)
    out = output_dir(options.out)
    imported: list[Assessment] = []
    skipped: list[Skipped] = []
    if options.exam:
        sample = options.sample if options.sample is not None else (None if options.human_labels else 50)
        items, own = load_exam_triples(Path(options.exam), sample=sample, seed=options.seed,
                                       human_labels=options.human_labels)
        if not options.no_exam_judge:
            imported += own
            evaluators.append(EXAM_JUDGE)
    elif options.data is not None:
        fields = FieldMap(id=options.id_field, instruction=options.instruction_field, output_1=options.output1_field,
                          output_2=options.output2_field, label=options.label_field, output=options.text_field,
                          human=options.score_field)
        items, skipped = load_items(options.data, fields, options.limit)
    if options.limit:
        items = items[: options.limit]
    too_few = check_gold(items, options.min_gold, human_labels=options.human_labels)
    if options.assessments:
        ready, bad = load_imported(Path(options.assessments))
        imported += ready
        skipped += [replace(s, message=f"assessments file {s.message}") for s in bad]
    for s in skipped[:20]:
        notes(f"skipped {s.message}")
    if len(skipped) > 20:
        notes(f"... and {len(skipped) - 20} more skipped records (see the report)")
    if len(set(evaluators)) < 2:
        raise UserError("meta-evaluation needs at least two distinct evaluators (--evaluators E1,E2[,...])")
    called = [e for e in evaluators if e not in {a.evaluator for a in imported}]
    if options.simulate:
        names = called + [n for n in (options.meta_judge, options.debater) if n]
        resolved = _simulated_copy(resolved, names)
    config = MetaConfig(evaluators=evaluators, method=options.method, meta_judge=options.meta_judge,
                        seed=options.seed, draws=options.draws, both_orders=options.both_orders, rules=options.rules,
                        max_rounds=options.max_rounds, statement_words=options.statement_words,
                        shuffles=options.shuffles, bootstrap=options.bootstrap, concurrency=options.concurrency,
                        debater=options.debater)
    run = asyncio.run(run_meta(items, config, resolved, out, imported=imported, skipped=skipped,
                               progress=None if options.quiet else notes))
    if too_few:
        run.problems.append(too_few)
    report = meta_report(run)
    paths = write_reports(run, out, report)
    ranking = Rows(RankedEvaluator, (RankedEvaluator(
        r["evaluator"], _finite(r["baseline"]), _finite(r["win_rate"]), _finite(r["elo"]), _finite(r.get("elo_std")),
        _finite(r["bt"]), _finite(r.get("bt_low")), _finite(r.get("bt_high")), _finite(r["elo_low"]),
        _finite(r["elo_high"]), r["elo_rank"], r["bt_rank"], _finite(r["win_rate_low"]), _finite(r["win_rate_high"]))
        for r in ranking_rows(run)))
    return MetaResult(run_dir=out, method=run.config.method, ranking=ranking, problems=tuple(run.problems),
                      report=report, paths=paths, run=run)
