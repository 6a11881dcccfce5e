"""`examiner export RUN_DIR --to jsonl|parquet|hf|inspect|otel OUT`: an exam run as a dataset with its card,
as an Inspect AI eval log, or as OpenTelemetry GenAI spans.

One row per (unit, question, answer, verdict) with the judge's and people's labels; README.md in OUT is the
dataset card (corpus, models, prompts, figures, licence). `inspect` writes one eval log (JSON) that
inspect_ai.log.read_eval_log and `inspect view` read; `otel` writes the spans to a JSON file or sends them
to an OTLP endpoint (--otlp-endpoint). Nothing else is uploaded. parquet and hf need the export extra, otel
the otel extra.
"""

from __future__ import annotations

import argparse

from examiner.cli.flags import IntermixedParser, add_command
from examiner.core.errors import UserError

FORMATS = ("jsonl", "parquet", "hf")
"""The dataset formats --to accepts (examiner/reporting/exports.py writes each; a test keeps the two equal)."""
LOGS = ("inspect", "otel")
"""The log formats --to accepts: an Inspect AI eval log, OpenTelemetry GenAI spans."""


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub, "export", "write an exam run as a dataset (JSONL, Parquet, Hugging Face), an Inspect log or OTel spans",
        "jsonl, parquet, hf: one row per (unit, question, answer, verdict) with source document, span and page,\n"
        "the judge's label, a person's label (override or random sample, who and when), the final label, the\n"
        "run's health and the models, and README.md in OUT as the dataset card. parquet and hf need the export\n"
        "extra: pip install 'examiner[export]'.\n"
        "inspect: an Inspect AI eval log (JSON): one sample per question with its units' labels, usage and cost.\n"
        "otel: OpenTelemetry GenAI spans, one per model call, one gen_ai.evaluation.result event per verdict,\n"
        "to a JSON file or --otlp-endpoint URL: pip install 'examiner[otel]'. Nothing else is uploaded.",
        "examiner export runs/water --to parquet exports/water\n"
        "examiner export runs/water --to hf exports/water-hf   # datasets.load_from_disk(\"exports/water-hf\")\n"
        "examiner export runs/water --to inspect --out logs   # inspect view --log-dir logs\n"
        "examiner export runs/water --to otel --otlp-endpoint http://localhost:4318/v1/traces")
    p.__class__ = IntermixedParser  # `RUN_DIR --to jsonl OUT`, OUT optional
    p.add_argument("run_dir", metavar="RUN_DIR", help="an exam run directory")
    p.add_argument("--to", required=True, choices=FORMATS + LOGS, dest="format",
                   help="jsonl (no extra needed), parquet, hf (a folder for datasets.load_from_disk), inspect (an "
                        "Inspect AI eval log) or otel (OpenTelemetry spans)")
    p.add_argument("out", metavar="OUT", nargs="?",
                   help="jsonl, parquet, hf: a new (or empty) folder for the data and README.md; inspect: a folder "
                        "of logs (or a .json file); otel: the spans' JSON file")
    p.add_argument("--out", dest="out_flag", metavar="OUT", help="OUT given as a flag")
    p.add_argument("--otlp-endpoint", metavar="URL",
                   help="otel: send the spans to this OTLP/HTTP traces URL instead of a file")
    p.add_argument("--corpus", action="append", default=[], metavar="PATH",
                   help="jsonl, parquet, hf: the corpus folder the run examined (repeat for several), whose SOURCE.md "
                        "or LICENSE gives the card's licence; the run folder's own corpus paths are not read")
    p.set_defaults(func=run_export)


def run_export(args: argparse.Namespace) -> int:
    from examiner.api.export import ExportOptions, export_run

    if args.out and args.out_flag and args.out != args.out_flag:
        raise UserError("give OUT once: as the argument or as --out")
    out = args.out or args.out_flag
    if args.otlp_endpoint and args.format != "otel":
        raise UserError("--otlp-endpoint is for --to otel")
    if args.format == "otel" and bool(out) == bool(args.otlp_endpoint):
        raise UserError("--to otel takes either OUT (a JSON file) or --otlp-endpoint URL")
    if args.format != "otel" and not out:
        what = "a folder of logs or a .json file" if args.format == "inspect" else "a new folder"
        raise UserError(f"--to {args.format} needs OUT ({what})")
    written = export_run(ExportOptions(run_dir=args.run_dir, format=args.format, out=out,
                                       otlp_endpoint=args.otlp_endpoint, corpus=tuple(args.corpus)))
    if written.kind == "rows":
        print(f"exported {written.rows} rows to {written.folder}: {', '.join(written.files)}")
    elif written.kind == "samples" and written.folder is not None:
        print(f"exported {written.rows} samples as an Inspect eval log to {written.folder / written.files[0]}"
              f" (inspect view --log-dir {written.folder})")
    else:
        where = written.folder / written.files[0] if written.folder is not None else "the OTLP endpoint"
        print(f"exported {written.rows} spans with {written.events} evaluation events to {where}")
    return 0
