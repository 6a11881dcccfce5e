"""`examiner metric-stats`: its flags, parsed into the options of examiner.api.metrics (a classic metric
against a dataset's own references, correlated with its human scores); the report is printed as Markdown."""

from __future__ import annotations

import argparse

from examiner.cli.flags import add_command


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
                                "scores, or `summeval` (SummEval: examiner data pull summeval)")
    p.add_argument("--metric", required=True, metavar="NAMES",
                   help="comma-separated: rouge1, rouge2, rougeL (sentence-level LCS), rougeLsum (summary-level "
                        "LCS, what SummEval tables use), bleu (sacrebleu), bleu4-nltk-sentence (NLTK's unsmoothed "
                        "sentence BLEU-4, the Topical-Chat tables' BLEU-4), bertscore, embedding; the report names "
                        "each one's implementation")
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


def run_metric_stats(args: argparse.Namespace) -> int:
    from examiner.api.metrics import MetricStatsOptions, metric_stats

    result = metric_stats(MetricStatsOptions(
        data=args.data, metrics=tuple(args.metric.split(",")), candidate_field=args.candidate_field,
        reference_field=args.reference_field, human_fields=tuple(args.human_field.split(",")),
        group_field=args.group_field, system_field=args.system_field, id_field=args.id_field,
        multi_reference=args.multi_reference, no_stemmer=args.no_stemmer, limit=args.limit, out=args.out))
    print(result.markdown)
    for kind, path in result.paths.items():
        print(f"report_{kind}: {path}")
    return 0
