"""Fine-tune a local judge on `examiner distil` data (`examiner finetune`) and serve a model folder
(`examiner serve-local --model`).

Why: JudgeLM's point is that a small model trained on a strong judge's verdicts can stand in for it;
the training data come from `examiner distil`, the tuned model is served over the OpenAI API, and a
config endpoint then names it as a judge like any other (docs/DISTIL.md).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, field_validator

from examiner.api.settings import path_text
from examiner.core.errors import UserError

if TYPE_CHECKING:
    from examiner.judging.finetune import FinetuneResult

TRAIN = "train.jsonl"


class FinetuneOptions(BaseModel):
    """`examiner finetune`: a LoRA adapter and a merged model from a distil folder."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    data: str
    """The `examiner distil` folder (its train.jsonl is read) or a train.jsonl file."""
    out: str
    """The output folder: adapter/, merged/, checkpoint/ and finetune.json; an unfinished run there resumes."""
    base: str = "smollm2"
    """`smollm2` (the embedded model, converted from its GGUF once) or a transformers model folder."""
    max_steps: int = Field(200, ge=1)
    """Optimiser steps (each one grad_accum examples); more than a finished run's steps continues it."""
    max_minutes: float | None = Field(None, gt=0)
    """Stop and save after this many minutes whatever the step."""
    grad_accum: int = Field(4, ge=1)
    learning_rate: float = Field(2e-4, gt=0)
    lora_r: int = Field(8, ge=1)
    max_length: int = Field(1024, ge=32)
    """Tokens per example; a longer prompt loses its middle."""
    save_every: int = Field(20, ge=1)
    seed: int = 0
    device: str | None = None
    """`cuda` or `cpu`; None: the GPU when there is one."""
    threads: int | None = Field(None, ge=1)
    """torch's CPU threads; None: torch's default (one per core). On a CPU other work is using, fewer threads
    than cores is faster: threads that wait for a descheduled sibling at every operation slowed a 512-token
    step of SmolLM2 from 9-23 s (1 thread) to 34-71 s (2 threads) on a 2-core machine (docs/DISTIL.md)."""

    _paths = field_validator("data", "out", "base", mode="before")(path_text)


def finetune(options: FinetuneOptions, *, notes: Callable[[str], None] = print) -> FinetuneResult:
    """Train (or resume) and write the adapter, the merged model and finetune.json."""
    from examiner.judging.finetune import FinetuneSettings, finetune as run
    from examiner.llm.hf_models import require_finetune_packages, resolve_base

    require_finetune_packages()
    data = Path(options.data)
    train = data / TRAIN if data.is_dir() else data
    if not train.is_file():
        raise UserError(f"{data}: no {TRAIN} (run `examiner distil` first)")
    settings = FinetuneSettings(max_steps=options.max_steps, max_minutes=options.max_minutes,
                                grad_accum=options.grad_accum, learning_rate=options.learning_rate,
                                lora_r=options.lora_r, lora_alpha=2 * options.lora_r, max_length=options.max_length,
                                save_every=options.save_every, seed=options.seed)
    if options.threads is not None:
        import torch

        torch.set_num_threads(options.threads)
    base = resolve_base(options.base, notes)
    return run(train, Path(options.out), base, base_name=options.base, settings=settings, notes=notes,
               device=options.device)


def serve_model(model: str, host: str = "127.0.0.1", port: int = 8077) -> None:
    """Serve a transformers model folder (e.g. `examiner finetune`'s merged/) over the OpenAI API until Ctrl-C."""
    from examiner.llm.encoder_judge import is_encoder_judge
    from examiner.llm.hf_models import require_finetune_packages, resolve_base
    from examiner.llm.hf_server import serve_model as serve

    folder = Path(model)
    if is_encoder_judge(folder):  # `examiner distil --student encoder`'s judge: no finetune packages needed
        serve(folder, host, port)
        return
    require_finetune_packages()
    if (folder / "merged").is_dir() and not (folder / "config.json").is_file():
        folder = folder / "merged"  # the finetune output folder itself
    serve(resolve_base(str(folder) if model != "smollm2" else model), host, port)
