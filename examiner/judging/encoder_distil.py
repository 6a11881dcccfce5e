"""Training the encoder judge (examiner/llm/encoder_judge.py) on a teacher's pairwise verdicts.

Each training item is (instruction, answer 1, answer 2, target): the target is the teacher's probability
that answer 1 is better (1 or 0 for one verdict; the mean when the teacher judged both orders and changed
its mind; 0.5 for a tie). Items are split by a seeded hash of their group into a fitting set and a
calibration set (`calibration_share`): the head is fitted on the first, with early stopping on the second,
and the temperature is fitted on the second (nothing of the calibration items is in the head's weights'
gradient steps). Bounded by `max_minutes` (counted from the start, the encoder's loading included);
resumable (encodings are cached in the output folder after every chunk); a progress line per chunk.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from scipy.special import expit

from examiner.core.errors import UserError
from examiner.judging.distil import split_of
from examiner.llm.encoder_judge import (CACHE_FILE, HEAD_FILE, INFO_FILE, MAX_TOKENS, FeatureCache, TextEncoder,
                                        encode_cached, features_key, head_logits, make_head)


@dataclass(frozen=True)
class TaughtPair:
    """One pair with the teacher's probability that answer 1 is better."""

    group: str
    instruction: str
    answer_1: str
    answer_2: str
    target: float


@dataclass(frozen=True)
class EncoderTraining:
    """What a training did: items per side, why it stopped, the fitted temperature and held-out figures."""

    folder: Path
    stopped: str
    """`done`, or `time` when the bound passed before every text was encoded (rerun to continue)."""
    fit_items: int
    calibration_items: int
    encoded: int
    to_encode: int
    temperature: float | None
    calibration_agreement: float | None
    calibration_nll: float | None
    train_s: float


def fit_temperature(logits: np.ndarray, targets: np.ndarray) -> float:
    """The temperature minimising the log-loss of sigmoid(logit / T) on the calibration items."""
    from scipy.optimize import minimize_scalar

    def loss(log_t: float) -> float:
        p = expit(logits / np.exp(log_t))
        p = np.clip(p, 1e-7, 1 - 1e-7)
        return float(-np.mean(targets * np.log(p) + (1 - targets) * np.log(1 - p)))

    return float(np.exp(minimize_scalar(loss, bounds=(-4, 4), method="bounded").x))


def train_head(fa: np.ndarray, fb: np.ndarray, targets: np.ndarray, val: tuple[np.ndarray, np.ndarray, np.ndarray],
               *, hidden: int, epochs: int, seed: int) -> object:
    """Fit the antisymmetric head by full-batch AdamW on the teacher's targets (binary cross-entropy), keeping
    the epoch with the lowest calibration-set loss."""
    import torch

    torch.manual_seed(seed)
    head = make_head(fa.shape[1], hidden)
    both = np.concatenate([fa, fb])
    head.mean.copy_(torch.from_numpy(both.mean(0)))
    head.scale.copy_(torch.from_numpy(both.std(0) + 1e-4))
    opt = torch.optim.AdamW(head.parameters(), lr=3e-3, weight_decay=1e-2)
    a, b, y = torch.from_numpy(fa), torch.from_numpy(fb), torch.from_numpy(targets.astype(np.float32))
    va, vb, vy = (torch.from_numpy(v.astype(np.float32)) for v in val)
    lossf = torch.nn.BCEWithLogitsLoss()
    best, best_state = float("inf"), {k: v.clone() for k, v in head.state_dict().items()}
    for _ in range(epochs):
        head.train()
        opt.zero_grad()
        loss = lossf(head(a, b), y)
        loss.backward()
        opt.step()
        if len(vy):
            head.eval()
            with torch.no_grad():
                held = float(lossf(head(va, vb), vy))
            if held < best:
                best, best_state = held, {k: v.clone() for k, v in head.state_dict().items()}
    if len(vy):
        head.load_state_dict(best_state)
    head.eval()
    return head


def train_encoder_judge(pairs: Sequence[TaughtPair], out: Path, *, base: str = "minilm", max_minutes: float = 30.0,
                        calibration_share: float = 0.2, seed: int = 0, hidden: int = 64, epochs: int = 300,
                        threads: int | None = None, max_tokens: int = MAX_TOKENS,
                        progress: Callable[[str], None] | None = None) -> EncoderTraining:
    """Train (or resume training) an encoder judge into `out`; see the module's docstring."""
    import torch

    began = time.monotonic()
    if not pairs:
        raise UserError("no taught pair to train the encoder judge on")
    out.mkdir(parents=True, exist_ok=True)
    encoder = TextEncoder(base, threads=threads, max_tokens=max_tokens)
    cache = FeatureCache(out / CACHE_FILE)
    texts = [(p.instruction, p.answer_1) for p in pairs] + [(p.instruction, p.answer_2) for p in pairs]
    complete = encode_cached(encoder, texts, cache, deadline=began + max_minutes * 60, progress=progress)
    to_encode = len({features_key(a, b) for a, b in texts})
    usable = [p for p in pairs if features_key(p.instruction, p.answer_1) in cache.rows
              and features_key(p.instruction, p.answer_2) in cache.rows]
    sides = [split_of(f"encoder:{p.group}", calibration_share, seed) for p in usable]
    fit = [p for p, s in zip(usable, sides) if s == "train"]
    cal = [p for p, s in zip(usable, sides) if s == "validation"]

    def arrays(items: list[TaughtPair]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        width = encoder.width
        fa = np.array([cache.rows[features_key(p.instruction, p.answer_1)] for p in items], dtype=np.float32).reshape(-1, width)
        fb = np.array([cache.rows[features_key(p.instruction, p.answer_2)] for p in items], dtype=np.float32).reshape(-1, width)
        return fa, fb, np.array([p.target for p in items], dtype=np.float32)

    encoded = len(cache.rows)
    if not complete:
        if progress:
            progress(f"encoder: stopped at the {max_minutes:g}-minute bound with {encoded}/{to_encode} texts encoded; "
                     "run the same command again to continue")
        if len(fit) < 2:
            return EncoderTraining(out, "time", len(fit), len(cal), encoded, to_encode, None, None, None,
                                   time.monotonic() - began)
    if len(fit) < 2:
        raise UserError(f"too few taught pairs to fit the encoder judge ({len(fit)} after the calibration split)")
    held = arrays(cal)
    head = train_head(*arrays(fit), held, hidden=hidden, epochs=epochs, seed=seed)
    logits = head_logits(head, held[0], held[1]) if cal else np.zeros(0)
    temperature = fit_temperature(logits, held[2]) if cal else 1.0
    p = expit(logits / temperature)
    agreement = float(np.mean((p >= 0.5) == (held[2] >= 0.5))) if cal else None
    nll = (float(-np.mean(held[2] * np.log(np.clip(p, 1e-7, 1)) + (1 - held[2]) * np.log(np.clip(1 - p, 1e-7, 1))))
           if cal else None)
    torch.save(head.state_dict(), out / HEAD_FILE)
    result = EncoderTraining(out, "done" if complete else "time", len(fit), len(cal), encoded, to_encode, temperature,
                             agreement, nll, time.monotonic() - began)
    info = {"base": base, "max_tokens": max_tokens, "hidden": hidden, "temperature": temperature, "seed": seed,
            "calibration_share": calibration_share, "epochs": epochs,
            **{k: v for k, v in asdict(result).items() if k not in ("folder", "temperature")}}
    (out / INFO_FILE).write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    return result


def taught_pairs(examples: Sequence[dict[str, object]]) -> list[TaughtPair]:
    """Pairs from `examiner distil` examples (train.jsonl lines): each item once, its target the mean over
    its examples of the teacher's preference read back into the original order."""
    by_group: dict[str, tuple[dict[str, str], list[float]]] = {}
    for example in examples:
        meta = example.get("meta")
        pair = meta.get("pair") if isinstance(meta, dict) else None
        if example.get("kind") != "pairwise" or not isinstance(pair, dict):
            continue
        label = str(example.get("label"))
        first = {"first": 1.0, "second": 0.0, "tie": 0.5}.get(label)
        if first is None:
            continue
        if example.get("order") == "swapped":
            first = 1 - first
        entry = by_group.setdefault(str(example["group"]), (pair, []))
        entry[1].append(first)
    return [TaughtPair(group, pair["instruction"], pair["output_1"], pair["output_2"], sum(v) / len(v))
            for group, (pair, v) in by_group.items()]


__all__ = ["EncoderTraining", "TaughtPair", "fit_temperature", "taught_pairs", "train_encoder_judge", "train_head"]
