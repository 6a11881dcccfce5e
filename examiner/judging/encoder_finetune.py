"""Fine-tuning the cross-encoder judge (examiner/llm/encoder_cross.py) on a teacher's pairwise verdicts:
`examiner distil --student encoder --encoder-mode cross`.

The encoder's weights and a score layer learn together from binary cross-entropy between
sigmoid(s(A) - s(B)) and the teacher's probability that A is better. Items are split by a seeded hash of
their group (as the frozen student's are): the fitting items train; the calibration items pick the epoch
with the lowest held-out loss and then fit the temperature (temperature scaling), and never enter a
gradient step. Bounded by `max_minutes` from the start (time is kept back for the calibration pass);
resumable: a checkpoint (weights, optimiser, schedule, position) is written every `checkpoint_minutes` and
when the bound stops the run, and the same call again continues from it. A progress line every few steps.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import expit

from examiner.core.errors import UserError
from examiner.judging.distil import split_of
from examiner.judging.encoder_distil import EncoderTraining, TaughtPair, fit_temperature
from examiner.llm.encoder_cross import load_backbone, make_scorer, pair_logits, save_scorer
from examiner.llm.encoder_judge import INFO_FILE

CHECKPOINT_FILE, BEST_FILE = "checkpoint.pt", "best.pt"
CROSS_MAX_TOKENS = 256
"""Tokens per (instruction, answer) input, the instruction at most 64 of them."""


@dataclass(frozen=True)
class CrossSettings:
    """The fine-tuning's settings (fixed before any measurement; docs/DISTIL.md)."""

    epochs: int = 4
    batch: int = 8
    """Pairs per step (two encoder inputs each)."""
    learning_rate: float = 3e-5
    score_learning_rate: float = 1e-3
    warmup_share: float = 0.1
    max_tokens: int = CROSS_MAX_TOKENS
    checkpoint_minutes: float = 3.0
    progress_every: int = 10


DEFAULT_SETTINGS = CrossSettings()


def _calibration_loss(logits: np.ndarray, targets: np.ndarray) -> float:
    p = np.clip(expit(logits), 1e-7, 1 - 1e-7)
    return float(-np.mean(targets * np.log(p) + (1 - targets) * np.log(1 - p)))


def _order(n: int, seed: int, epoch: int) -> list[int]:
    """The fitting items' order in one epoch (the same on a resumed run)."""
    picks = list(range(n))
    random.Random(f"{seed}:{epoch}").shuffle(picks)
    return picks


def finetune_encoder_judge(pairs: Sequence[TaughtPair], out: Path, *, base: str = "minilm", max_minutes: float = 30.0,
                           calibration_share: float = 0.2, seed: int = 0, threads: int | None = None,
                           settings: CrossSettings = CrossSettings(),
                           progress: Callable[[str], None] | None = None) -> EncoderTraining:
    """Fine-tune (or resume fine-tuning) the cross-encoder judge into `out`; see the module's docstring."""
    import torch

    began = time.monotonic()
    fit, cal, tokenizer, encoder = start_training(pairs, "pair", base=base, calibration_share=calibration_share,
                                                  seed=seed, threads=threads)
    scorer = make_scorer(tokenizer, encoder, settings.max_tokens)
    cal_pairs = [(p.instruction, p.answer_1, p.answer_2) for p in cal]
    cal_targets = np.array([p.target for p in cal], dtype=np.float64)
    lossf = torch.nn.BCEWithLogitsLoss()

    def batch_loss(batch: Sequence[TaughtPair]) -> Any:
        scores = scorer([(p.instruction, p.answer_1) for p in batch] + [(p.instruction, p.answer_2) for p in batch])
        logits = scores[:len(batch)] - scores[len(batch):]
        return lossf(logits, torch.tensor([p.target for p in batch], dtype=logits.dtype))

    def cal_loss() -> float:
        return _calibration_loss(np.array(pair_logits(scorer, cal_pairs)), cal_targets)

    state, stopped, planned = train_loop(scorer, fit, len(cal), out, batch_loss=batch_loss,
                                         cal_loss=cal_loss if cal else None, base=base, seed=seed,
                                         deadline=began + max_minutes * 60, settings=settings, progress=progress)
    if stopped == "time" and progress:
        progress(f"encoder: stopped at the {max_minutes:g}-minute bound at step {state['step']}/{planned}; "
                 "the judge below is usable, and the same command again continues the training")
    return _calibrate_and_save(scorer, tokenizer, out, fit, cal, cal_pairs, cal_targets, state, stopped, began,
                               base=base, seed=seed, calibration_share=calibration_share, settings=settings,
                               planned=planned)


def start_training(items: Sequence[Any], what: str, *, base: str, calibration_share: float, seed: int,
                   threads: int | None) -> tuple[list[Any], list[Any], Any, Any]:
    """The fitting and calibration items and the loaded backbone (tokenizer, encoder), torch seeded and its
    threads set: the one start of every encoder student, pairwise or exam units, so a resumed run splits
    and starts alike."""
    import torch

    if not items:
        raise UserError(f"no taught {what} to train the encoder judge on")
    fit, cal = split_items(items, calibration_share, seed)
    if threads:
        torch.set_num_threads(threads)
    torch.manual_seed(seed)
    tokenizer, encoder = load_backbone(base)
    return fit, cal, tokenizer, encoder


def split_items(items: Sequence[Any], calibration_share: float, seed: int) -> tuple[list[Any], list[Any]]:
    """(fitting items, calibration items) by a seeded hash of each item's `group`."""
    sides = [split_of(f"encoder:{item.group}", calibration_share, seed) for item in items]
    fit = [item for item, side in zip(items, sides) if side == "train"]
    cal = [item for item, side in zip(items, sides) if side == "validation"]
    if len(fit) < 2:
        raise UserError(f"too few taught items to fit the encoder judge ({len(fit)} after the calibration split)")
    return fit, cal


def train_loop(scorer: Any, fit: Sequence[Any], cal_items: int, out: Path, *, batch_loss: Callable[[Sequence[Any]], Any],
               cal_loss: Callable[[], float] | None, base: str, seed: int, deadline: float, settings: CrossSettings,
               progress: Callable[[str], None] | None) -> tuple[dict[str, Any], str, int]:
    """The bounded, checkpointed fine-tuning loop shared by the pairwise and the exam-unit judges:
    AdamW with linear warm-up and decay over `settings.epochs`, the best epoch by `cal_loss` kept in
    BEST_FILE. Returns (state, `done` or `time`, planned steps)."""
    import torch

    out.mkdir(parents=True, exist_ok=True)
    optimizer = torch.optim.AdamW([{"params": scorer.encoder.parameters(), "lr": settings.learning_rate},
                                   {"params": scorer.score.parameters(), "lr": settings.score_learning_rate}],
                                  weight_decay=0.01)
    per_epoch = -(-len(fit) // settings.batch)
    planned = settings.epochs * per_epoch
    warmup = max(1, int(settings.warmup_share * planned))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / warmup, max(0.0, (planned - step) / max(planned - warmup, 1))))
    state: dict[str, Any] = {"step": 0, "best_loss": None, "best_epoch": None, "trained_s": 0.0}
    saved = out / CHECKPOINT_FILE
    if saved.is_file():
        checkpoint = torch.load(saved, weights_only=False)
        if checkpoint["planned"] != planned or checkpoint["base"] != base:
            raise UserError(f"{saved} is from another training (base or plan differ); remove {out} to start again")
        scorer.load_state_dict(checkpoint["scorer"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        schedule.load_state_dict(checkpoint["schedule"])
        state = checkpoint["state"]
        if progress:
            progress(f"encoder: resuming at step {state['step']}/{planned}")

    def checkpoint_now() -> None:
        tmp = saved.with_suffix(".tmp")
        torch.save({"scorer": scorer.state_dict(), "optimizer": optimizer.state_dict(),
                    "schedule": schedule.state_dict(), "state": state, "planned": planned, "base": base}, tmp)
        tmp.replace(saved)

    step_s: float | None = None
    last_checkpoint = time.monotonic()
    stopped = "done"
    while state["step"] < planned:
        # keep back the calibration pass (about a third of a training step per item) and one more step
        reserve = 30.0 + (0.0 if step_s is None else step_s * (1 + cal_items / settings.batch / 2))
        if time.monotonic() + reserve > deadline:
            stopped = "time"
            break
        t0 = time.monotonic()
        epoch, position = divmod(state["step"], per_epoch)
        picks = _order(len(fit), seed, epoch)[position * settings.batch:(position + 1) * settings.batch]
        scorer.train()
        loss = batch_loss([fit[k] for k in picks])
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(scorer.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        state["step"] += 1
        took = time.monotonic() - t0
        state["trained_s"] += took
        step_s = took if step_s is None else 0.9 * step_s + 0.1 * took
        if progress and (state["step"] % settings.progress_every == 0 or state["step"] == planned):
            left = (planned - state["step"]) * step_s
            progress(f"encoder: step {state['step']}/{planned} (epoch {epoch + 1}/{settings.epochs}), loss "
                     f"{loss.item():.4f}, {settings.batch / step_s:.1f} items/s, about {left:.0f} s left")
        if state["step"] % per_epoch == 0 and cal_loss is not None:
            held = cal_loss()
            if state["best_loss"] is None or held < state["best_loss"]:
                state["best_loss"], state["best_epoch"] = held, state["step"] // per_epoch
                torch.save(scorer.state_dict(), out / BEST_FILE)
            if progress:
                progress(f"encoder: epoch {state['step'] // per_epoch}/{settings.epochs}, calibration loss {held:.4f}")
        if time.monotonic() - last_checkpoint > settings.checkpoint_minutes * 60:
            checkpoint_now()
            last_checkpoint = time.monotonic()
    checkpoint_now()
    return state, stopped, planned


def _calibrate_and_save(scorer: Any, tokenizer: Any, out: Path, fit: list[TaughtPair], cal: list[TaughtPair],
                        cal_pairs: list[tuple[str, str, str]], cal_targets: np.ndarray, state: dict[str, Any],
                        stopped: str, began: float, *, base: str, seed: int, calibration_share: float,
                        settings: CrossSettings, planned: int) -> EncoderTraining:
    """Keep whichever is better on the calibration items, the last weights or the best epoch's; fit its
    temperature there; write the judge folder."""
    import torch

    temperature, agreement, nll, kept = 1.0, None, None, "last"
    if cal:
        logits = np.array(pair_logits(scorer, cal_pairs))
        best = out / BEST_FILE
        if (state["best_loss"] is not None and best.is_file()
                and state["best_loss"] < _calibration_loss(logits, cal_targets)):
            scorer.load_state_dict(torch.load(best, weights_only=True))
            logits, kept = np.array(pair_logits(scorer, cal_pairs)), f"epoch {state['best_epoch']}"
        temperature = fit_temperature(logits, cal_targets)
        p = expit(logits / temperature)
        agreement = float(np.mean((p >= 0.5) == (cal_targets >= 0.5)))
        nll = _calibration_loss(logits / temperature, cal_targets)
    save_scorer(scorer, tokenizer, out)
    result = EncoderTraining(out, stopped, len(fit), len(cal), state["step"], planned, temperature, agreement, nll,
                             time.monotonic() - began)
    info = {"mode": "cross", "base": base, "max_tokens": settings.max_tokens, "temperature": temperature,
            "seed": seed, "calibration_share": calibration_share, "settings": asdict(settings), "kept": kept,
            "steps": state["step"], "planned_steps": planned, "trained_s": state["trained_s"], "stopped": stopped,
            "fit_items": len(fit), "calibration_items": len(cal), "calibration_agreement": agreement,
            "calibration_nll": nll}
    (out / INFO_FILE).write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    return result


__all__ = ["BEST_FILE", "CHECKPOINT_FILE", "CROSS_MAX_TOKENS", "CrossSettings", "DEFAULT_SETTINGS", "finetune_encoder_judge", "split_items",
           "train_loop"]
