"""`examiner finetune`: a LoRA-tuned local judge from `examiner distil` data."""

from __future__ import annotations

import argparse

from examiner.cli.flags import add_command


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub, "finetune", "fine-tune a small local judge (LoRA) on `examiner distil` data",
        "Trains a LoRA adapter on train.jsonl of an `examiner distil` folder, the loss on the teacher's reply\n"
        "only, on the GPU when there is one, else the CPU. Bounded by --max-steps and --max-minutes; saves a\n"
        "checkpoint every --save-every steps and resumes from it when run again with the same --out. Writes\n"
        "OUT/adapter (LoRA weights), OUT/merged (a transformers folder: `examiner serve-local --model\n"
        "OUT/merged` serves it over the OpenAI API) and OUT/finetune.json. Needs `pip install\n"
        "'examiner[finetune]'`; the embedded model is converted from its GGUF file once (minutes).",
        "examiner distil --data llmbar:Natural --out runs/distil\n"
        "examiner finetune --data runs/distil --out runs/judge --max-steps 100 --max-minutes 10\n"
        "examiner serve-local --model runs/judge/merged --port 8078")
    p.add_argument("--data", required=True, metavar="DIR", help="the `examiner distil` folder (or a train.jsonl)")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (an unfinished run there resumes)")
    p.add_argument("--base", default="smollm2", metavar="smollm2|DIR",
                   help="base model: the embedded smollm2 or a transformers folder (default %(default)s)")
    p.add_argument("--max-steps", type=int, default=200, metavar="N", help="optimiser steps (default %(default)s)")
    p.add_argument("--max-minutes", type=float, metavar="M", help="stop and save after M minutes")
    p.add_argument("--grad-accum", type=int, default=4, metavar="N",
                   help="examples per optimiser step (default %(default)s)")
    p.add_argument("--learning-rate", type=float, default=2e-4, metavar="LR", help="(default %(default)s)")
    p.add_argument("--lora-r", type=int, default=8, metavar="R", help="LoRA rank (default %(default)s)")
    p.add_argument("--max-length", type=int, default=1024, metavar="TOKENS",
                   help="tokens per example; longer prompts lose their middle (default %(default)s)")
    p.add_argument("--save-every", type=int, default=20, metavar="N", help="checkpoint interval (default %(default)s)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", choices=("cuda", "cpu"), help="default: the GPU when there is one")
    p.add_argument("--threads", type=int, metavar="N",
                   help="torch CPU threads (default one per core; on a CPU busy with other work 1 is faster)")
    p.set_defaults(func=run_finetune)


def run_finetune(args: argparse.Namespace) -> int:
    from examiner.api.finetune import FinetuneOptions, finetune
    from examiner.cli.flag_errors import options_from_flags

    options = options_from_flags(FinetuneOptions, data=args.data, out=args.out, base=args.base, max_steps=args.max_steps,
                                 max_minutes=args.max_minutes, grad_accum=args.grad_accum,
                                 learning_rate=args.learning_rate, lora_r=args.lora_r,
                                 max_length=args.max_length, save_every=args.save_every, seed=args.seed,
                                 device=args.device, threads=args.threads)
    result = finetune(options)
    loss = "" if result.last_loss is None else f", loss {result.first_loss:.4f} -> {result.last_loss:.4f}"
    print(f"finetune: {result.steps}/{result.max_steps} steps (stopped by {result.stopped}{loss}) on {result.device} "
          f"in {result.train_s:.0f} s, peak memory {result.peak_rss_gb:.2f} GB")
    print(f"  serve it: examiner serve-local --model {result.out / 'merged'}")
    return 0
