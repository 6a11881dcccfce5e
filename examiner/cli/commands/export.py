"""`examiner export RUN_DIR --to jsonl|parquet|hf DIR`: an exam run as a dataset with its card.

One row per (unit, question, answer, verdict); README.md in DIR is the dataset card (corpus, models,
prompts, figures, licence). Nothing is uploaded. parquet and hf need the export extra:
pip install 'examiner[export]'.
"""

from __future__ import annotations

import argparse

from examiner.cli.flags import add_command

FORMATS = ("jsonl", "parquet", "hf")
"""What --to accepts (examiner/reporting/exports.py writes each; a test keeps the two equal)."""


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub, "export", "write an exam run as a dataset (JSONL, Parquet, or a Hugging Face datasets folder)",
        "One row per (unit, question, answer, verdict) with source document, span and page, and README.md\n"
        "in DIR as the dataset card (corpus, models, prompts, figures, licence). Nothing is uploaded.\n"
        "parquet and hf need the export extra: pip install 'examiner[export]'.",
        "examiner export runs/pubmed --to parquet exports/pubmed\n"
        "examiner export runs/pubmed --to hf exports/pubmed-hf   # datasets.load_from_disk(\"exports/pubmed-hf\")")
    p.add_argument("run_dir", metavar="RUN_DIR", help="an exam run directory")
    p.add_argument("--to", required=True, choices=FORMATS, dest="format",
                   help="jsonl (no extra needed), parquet, or hf (a folder for datasets.load_from_disk)")
    p.add_argument("out", metavar="DIR", help="a new (or empty) folder for the data and README.md")
    p.set_defaults(func=run_export)


def run_export(args: argparse.Namespace) -> int:
    from examiner.api.export import ExportOptions, export_run

    written = export_run(ExportOptions(run_dir=args.run_dir, format=args.format, out=args.out))
    print(f"exported {written.rows} rows to {written.folder}: {', '.join(written.files)}")
    return 0
