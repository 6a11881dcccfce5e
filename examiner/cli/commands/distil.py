"""`examiner distil`: a teacher judge's verdicts as training data for a distilled judge (JudgeLM-style)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from examiner.cli.flags import add_command

if TYPE_CHECKING:
    from examiner.api.encoder_student import EncoderStudentOptions


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub, "distil", "turn a teacher judge's verdicts into training data for a small judge",
        "Writes train.jsonl and validation.jsonl of chat examples in examiner's own judge prompts, the\n"
        "teacher's reply as the assistant turn, so a model fine-tuned on them can be named as a judge.\n"
        "Pairwise (--data, with --judgments from `examiner judge --method pairwise`, or the dataset's gold\n"
        "labels): each pair in both orders (swap augmentation) and, with a reference, with and without it\n"
        "(reference drop). Exam (--exam RUN): one example per judged answer, units also in reverse order.\n"
        "Split by item or source document, so nothing is on both sides. Makes no model call.",
        "examiner distil --data llmbar:Natural --out runs/distil-llmbar\n"
        "examiner distil --data llmbar:Natural --data llmbar:Processed_MT-Bench_200 --out runs/distil-mix\n"
        "examiner distil --data pairs.jsonl --judgments runs/gpt4-judge/judgments.jsonl --out runs/distil\n"
        "examiner distil --exam runs/water --out runs/distil-exam --validation-share 0.25")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--data", metavar="DATA", action="append",
                        help="a pairwise dataset (.jsonl, .json, llmbar:SUBSET); repeat it to combine several "
                             "(gold labels; ids prefixed with the dataset)")
    source.add_argument("--exam", metavar="RUN_DIR", help="an exam run folder: its judge's verdicts teach")
    p.add_argument("--judgments", metavar="FILE", help="the teacher's judgments of --data (default: its gold labels)")
    p.add_argument("--out", required=True, metavar="DIR", help="a new (or empty) folder for the data")
    p.add_argument("--teacher", metavar="NAME", help="the teacher's name in the examples")
    p.add_argument("--validation-share", type=float, default=0.2, metavar="P",
                   help="share of items / documents held out (default %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="seed of the split (default %(default)s)")
    p.add_argument("--no-swap", action="store_true", help="leave out the other-order copies")
    p.add_argument("--no-reference-drop", action="store_true", help="keep references on every pairwise example")
    p.add_argument("--limit", type=int, metavar="N", help="use only the first N rows or judged answers")
    p.add_argument("--student", choices=("none", "encoder"), default="none",
                   help="also train a student: `encoder` = a MiniLM cross-encoder judge on the CPU, into OUT/encoder "
                        "(rerun the same command to resume it; docs/DISTIL.md)")
    p.add_argument("--max-minutes", type=float, default=30.0, metavar="M",
                   help="the encoder student's wall-time bound (default %(default)s)")
    p.add_argument("--threads", type=int, metavar="N", help="torch CPU threads for the encoder student")
    p.add_argument("--encoder-mode", choices=("frozen", "cross"), default="frozen",
                   help="frozen: a head on the frozen encoder (minutes); cross: fine-tune the encoder itself as a "
                        "cross-encoder scorer (slower, bounded by --max-minutes; default %(default)s)")
    p.add_argument("--encoder-base", default="minilm", metavar="NAME",
                   help="the student's encoder: minilm (bundled), tiny (random, for tests) or a folder")
    p.set_defaults(func=run_distil)


def run_distil(args: argparse.Namespace) -> int:
    from pathlib import Path

    from examiner.api.distil import SUMMARY

    student = _encoder_options(args) if args.student == "encoder" else None  # bad flags refused before any writing
    if student is not None and (Path(args.out) / SUMMARY).is_file():
        print(f"distil: {args.out} already holds the data ({SUMMARY}); training the student on it")
    else:
        _write_data(args)
    if student is not None:
        return _train_encoder(student)
    return 0


def _encoder_options(args: argparse.Namespace) -> "EncoderStudentOptions":
    from examiner.api.encoder_student import EncoderStudentOptions
    from examiner.cli.flag_errors import options_from_flags

    return options_from_flags(EncoderStudentOptions, {"base": "--encoder-base"}, data=args.out,
                              base=args.encoder_base, mode=args.encoder_mode, max_minutes=args.max_minutes, seed=args.seed,
                              threads=args.threads)


def _train_encoder(options: "EncoderStudentOptions") -> int:
    from examiner.api.encoder_student import train_encoder_student

    result = train_encoder_student(options, progress=lambda line: print(line, file=sys.stderr, flush=True))
    if result.stopped == "time" and result.temperature is None:
        print(f"encoder student: stopped at the time bound with {result.encoded}/{result.to_encode} texts encoded; "
              "run the same command again to continue")
        return 0
    done = (f"{result.encoded}/{result.to_encode} steps" if options.mode == "cross"
            else f"{result.encoded}/{result.to_encode} texts encoded")
    again = "; run the same command again to continue" if result.stopped == "time" else ""
    print(f"encoder student: {result.folder} ({options.mode}, {result.stopped}, {done}, {result.train_s:.0f} s): "
          f"fitted on {result.fit_items} items, calibrated on {result.calibration_items}, temperature "
          f"{result.temperature:.2f}, agreement with the teacher on the calibration items "
          f"{_share(result.calibration_agreement)}{again}")
    return 0


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _write_data(args: argparse.Namespace) -> None:
    from examiner.api.distil import DistilOptions, distil

    result = distil(DistilOptions(out=args.out, data=args.data, judgments=args.judgments, exam=args.exam,
                                  teacher=args.teacher, validation_share=args.validation_share, seed=args.seed,
                                  swap=not args.no_swap, reference_drop=not args.no_reference_drop,
                                  limit=args.limit))
    orders = ", ".join(f"{k} {v}" for k, v in sorted(result.by_order.items()))
    print(f"distil: {result.train} training and {result.validation} validation examples "
          f"({result.groups['train']} / {result.groups['validation']} groups), teacher {result.teacher}")
    print(f"  by kind/order/reference: {orders}")
    print(f"  {', '.join(str(f) for f in result.files)}")
    _say_skipped(result.skipped)


def _say_skipped(skipped: tuple[str, ...]) -> None:
    """The rows distil could not use, on stderr (the first ones by name, the rest counted)."""
    from examiner.api.distil import SKIPPED_SHOWN
    from examiner.core.plain_text import one_line

    for message in skipped[:SKIPPED_SHOWN]:
        print(one_line(f"examiner: skipped {message}"), file=sys.stderr)
    if len(skipped) > SKIPPED_SHOWN:
        print(f"examiner: ... and {len(skipped) - SKIPPED_SHOWN} more skipped rows (distil.json counts them)",
              file=sys.stderr)
