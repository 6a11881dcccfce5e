"""`examiner distil`: a teacher judge's verdicts as training data for a distilled judge (JudgeLM-style)."""

from __future__ import annotations

import argparse
import sys

from examiner.cli.flags import add_command


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
    p.set_defaults(func=run_distil)


def run_distil(args: argparse.Namespace) -> int:
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
    return 0


def _say_skipped(skipped: tuple[str, ...]) -> None:
    """The rows distil could not use, on stderr (the first ones by name, the rest counted)."""
    from examiner.api.distil import SKIPPED_SHOWN
    from examiner.core.plain_text import one_line

    for message in skipped[:SKIPPED_SHOWN]:
        print(one_line(f"examiner: skipped {message}"), file=sys.stderr)
    if len(skipped) > SKIPPED_SHOWN:
        print(f"examiner: ... and {len(skipped) - SKIPPED_SHOWN} more skipped rows (distil.json counts them)",
              file=sys.stderr)
