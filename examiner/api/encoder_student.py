"""`examiner distil --student encoder`: train the encoder judge (examiner/llm/encoder_judge.py) on the
examples `examiner distil` wrote, into OUT/encoder: a head on the frozen encoder, or (mode `cross`)
the encoder itself fine-tuned.

Why a second student: the LoRA-tuned generative model learnt the reply format and nothing else on a CPU
(docs/DISTIL.md); a frozen cross-encoder with a small antisymmetric head trains on every verdict in minutes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from examiner.api.settings import path_text
from examiner.core.errors import UserError

if TYPE_CHECKING:
    from examiner.judging.encoder_distil import EncoderTraining

ENCODER_FOLDER = "encoder"


class EncoderStudentOptions(BaseModel):
    """Training of the encoder student on a distil folder's train.jsonl."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    data: str
    """A folder written by `examiner distil` (its train.jsonl teaches)."""
    out: str | None = None
    """Where the judge goes (default: DATA/encoder)."""
    mode: Literal["frozen", "cross"] = "frozen"
    """`frozen`: a head on the frozen encoder's features (minutes); `cross`: the encoder's own weights
    fine-tuned as a cross-encoder scorer (slower, learns more)."""
    base: str = "minilm"
    """The encoder: `minilm` (the bundled all-MiniLM-L6-v2), `tiny` (random 2-layer BERT, for tests) or a folder."""
    max_minutes: float = Field(30.0, gt=0)
    """Wall-time bound from the start; a stopped run continues when run again."""
    calibration_share: float = Field(0.2, gt=0, lt=1)
    """Share of the training items (by item) held out to pick the stopping point and fit the temperature."""
    seed: int = 0
    threads: int | None = Field(None, ge=1)
    """torch CPU threads (1 is fastest on a CPU other work is using)."""

    _paths = field_validator("data", "out", mode="before")(path_text)


def train_encoder_student(options: EncoderStudentOptions,
                          progress: Callable[[str], None] | None = None) -> "EncoderTraining":
    """Train (or resume) the encoder judge: a pairwise judge from pairwise examples, an exam-unit judge from
    exam examples; UserError when the folder holds neither."""
    from examiner.judging.encoder_distil import taught_pairs, train_encoder_judge
    from examiner.judging.encoder_finetune import finetune_encoder_judge
    from examiner.judging.encoder_units_train import finetune_unit_judge, taught_units

    train = Path(options.data) / "train.jsonl"
    if not train.is_file():
        raise UserError(f"{options.data} holds no train.jsonl (write it with `examiner distil` first)")
    examples = [json.loads(line) for line in train.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = Path(options.out) if options.out else Path(options.data) / ENCODER_FOLDER
    pairs = taught_pairs(examples)
    if pairs:
        trainer = finetune_encoder_judge if options.mode == "cross" else train_encoder_judge
        return trainer(pairs, out, base=options.base, max_minutes=options.max_minutes,
                       calibration_share=options.calibration_share, seed=options.seed, threads=options.threads,
                       progress=progress)
    units = taught_units(examples)
    if not units:
        raise UserError(f"{train} holds neither a pairwise example with its pair's texts nor an exam example "
                        "(data written before the encoder student existed must be rewritten)")
    if options.mode != "cross":
        raise UserError("exam units are taught to the fine-tuned encoder only: add --encoder-mode cross")
    return finetune_unit_judge(units, out, base=options.base, max_minutes=options.max_minutes,
                               calibration_share=options.calibration_share, seed=options.seed,
                               threads=options.threads, progress=progress)


__all__ = ["ENCODER_FOLDER", "EncoderStudentOptions", "train_encoder_student"]
