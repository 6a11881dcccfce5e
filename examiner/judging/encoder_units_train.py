"""Teaching the exam-unit encoder judge (examiner/llm/encoder_units.py) a teacher's exam verdicts:
`examiner distil --exam RUN --student encoder --encoder-mode cross`.

The examples `examiner distil --exam` wrote hold the Ref-Eval judge's prompt (with each unit's source
passage below the units, where the run kept its passages) and the teacher's JSON reply; each unit of each
answer becomes one taught item (unit, passage, question, answer, label), read back out of that very prompt,
so the student learns from the input it will be served (a cascade sends it that prompt with
`cheap_passages`). Split by the example's group (the
source document) into fitting and calibration items; the fine-tuning loop, bound, checkpoints and resume
are the pairwise cross-encoder's (examiner/judging/encoder_finetune.py); the loss is cross-entropy on the
teacher's label, and the temperature is fitted on the calibration items' softmax.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import log_softmax

from examiner.judging.encoder_distil import EncoderTraining
from examiner.judging.encoder_finetune import BEST_FILE, DEFAULT_SETTINGS, CrossSettings, start_training, train_loop
from examiner.llm.encoder_cross import make_scorer, save_scorer
from examiner.llm.encoder_judge import INFO_FILE
from examiner.llm.encoder_units import (LABELS, PASSAGE_CONTEXT_TOKENS, UNIT_CONTEXT_TOKENS, UNITS_TASK,
                                        labels_of_reply, read_exam_prompt, unit_input, unit_logits)


@dataclass(frozen=True)
class TaughtUnit:
    """One unit of one judged answer with the teacher's label."""

    group: str
    question: str
    answer: str
    unit: str
    label: str
    passage: str | None = None
    """The unit's source passage; None where the example's prompt shows none."""


def taught_units(examples: Sequence[dict[str, Any]]) -> list[TaughtUnit]:
    """Units from `examiner distil --exam` examples (train.jsonl lines), each answer once (the
    units-reversed copies add nothing to a judge that reads each unit on its own)."""
    out: list[TaughtUnit] = []
    for example in examples:
        if example.get("kind") != "exam" or example.get("order") != "original":
            continue
        messages = example.get("messages") or []
        user = "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "user")
        reply = next((str(m.get("content") or "") for m in messages if m.get("role") == "assistant"), "")
        read, labels = read_exam_prompt(user), labels_of_reply(reply)
        if read is None:
            continue
        passages = read.passages
        out.extend(TaughtUnit(str(example.get("group")), read.question, read.answer, text, labels[name],
                              None if passages is None else passages.get(name, ""))
                   for name, text in read.units if name in labels)
    return out


def fit_label_temperature(logits: np.ndarray, labels: np.ndarray) -> float:
    """The temperature minimising the log-loss of softmax(logits / T) on the calibration units."""
    from scipy.optimize import minimize_scalar

    def loss(log_t: float) -> float:
        return _nll(logits / np.exp(log_t), labels)

    return float(np.exp(minimize_scalar(loss, bounds=(-4, 4), method="bounded").x))


def _nll(logits: np.ndarray, labels: np.ndarray) -> float:
    return float(-np.mean(log_softmax(logits, axis=1)[np.arange(len(labels)), labels]))


def finetune_unit_judge(units: Sequence[TaughtUnit], out: Path, *, base: str = "minilm", max_minutes: float = 30.0,
                        calibration_share: float = 0.2, seed: int = 0, threads: int | None = None,
                        settings: CrossSettings = DEFAULT_SETTINGS,
                        progress: Callable[[str], None] | None = None) -> EncoderTraining:
    """Fine-tune (or resume) the exam-unit judge into `out`; see the module's docstring."""
    import torch

    began = time.monotonic()
    fit, cal, tokenizer, encoder = start_training(units, "exam unit", base=base, calibration_share=calibration_share,
                                                  seed=seed, threads=threads)
    passages = all(u.passage is not None for u in units)
    context = PASSAGE_CONTEXT_TOKENS if passages else UNIT_CONTEXT_TOKENS
    scorer = make_scorer(tokenizer, encoder, settings.max_tokens, outputs=len(LABELS), instruction_tokens=context)

    def taught_input(u: TaughtUnit) -> tuple[str, str]:
        return unit_input(u.unit, u.question, u.answer, u.passage if passages else None, tokenizer=tokenizer,
                          context_tokens=context)

    index = {label: k for k, label in enumerate(LABELS)}
    cal_inputs = [taught_input(u) for u in cal]
    cal_labels = np.array([index[u.label] for u in cal], dtype=np.int64)
    lossf = torch.nn.CrossEntropyLoss()

    def batch_loss(batch: Sequence[TaughtUnit]) -> Any:
        logits = scorer([taught_input(u) for u in batch])
        return lossf(logits, torch.tensor([index[u.label] for u in batch]))

    def cal_loss() -> float:
        return _nll(unit_logits(scorer, cal_inputs), cal_labels)

    state, stopped, planned = train_loop(scorer, fit, len(cal), out, batch_loss=batch_loss,
                                         cal_loss=cal_loss if cal else None, base=base, seed=seed,
                                         deadline=began + max_minutes * 60, settings=settings, progress=progress)
    temperature, agreement, nll, kept = 1.0, None, None, "last"
    if cal:
        logits = unit_logits(scorer, cal_inputs)
        best = out / BEST_FILE
        if state["best_loss"] is not None and best.is_file() and state["best_loss"] < _nll(logits, cal_labels):
            scorer.load_state_dict(torch.load(best, weights_only=True))
            logits, kept = unit_logits(scorer, cal_inputs), f"epoch {state['best_epoch']}"
        temperature = fit_label_temperature(logits, cal_labels)
        agreement = float(np.mean(logits.argmax(1) == cal_labels))
        nll = _nll(logits / temperature, cal_labels)
    save_scorer(scorer, tokenizer, out)
    result = EncoderTraining(out, stopped, len(fit), len(cal), state["step"], planned, temperature, agreement, nll,
                             time.monotonic() - began)
    info = {"task": UNITS_TASK, "mode": "cross", "base": base, "labels": list(LABELS), "max_tokens": settings.max_tokens,
            "context_tokens": context, "passages": passages, "temperature": temperature, "seed": seed,
            "calibration_share": calibration_share, "settings": asdict(settings), "kept": kept, "steps": state["step"],
            "planned_steps": planned, "trained_s": state["trained_s"], "stopped": stopped, "fit_items": len(fit),
            "calibration_items": len(cal), "calibration_agreement": agreement, "calibration_nll": nll,
            "teacher_labels": {label: sum(u.label == label for u in units) for label in LABELS}}
    (out / INFO_FILE).write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    if stopped == "time" and progress:
        progress(f"encoder: stopped at the {max_minutes:g}-minute bound at step {state['step']}/{planned}; "
                 "the judge is usable, and the same command again continues the training")
    return result


__all__ = ["TaughtUnit", "finetune_unit_judge", "fit_label_temperature", "taught_units"]
