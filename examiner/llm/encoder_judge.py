"""A small discriminative judge for a CPU: a cross-encoder reading (instruction, answer) with the bundled
all-MiniLM-L6-v2 weights, and a head trained on a teacher's pairwise verdicts (docs/DISTIL.md).

Why this shape: a generative 135M model tuned on a CPU learnt the reply format and nothing else, while a
discriminative head needs no format and trains in seconds once the texts are encoded. The encoder reads
each answer together with its instruction (so attention relates the two); its mean-pooled and [CLS]
states and the answer's length are the features. The head is antisymmetric by construction,

    logit(A, B) = h(x_A) - h(x_B) + (g(x_A, x_B) - g(x_B, x_A)) / 2,

so logit(B, A) = -logit(A, B): the judge gives the same verdict in both answer orders and cannot have a
position bias. p(A better) = sigmoid(logit / T), with the temperature T fitted on a held-out split
(temperature scaling, Guo et al. 2017), so that its confidence can drive a cascade.

The encoder weights stay frozen: on 2 shared CPU cores a backward pass through 6 layers at 256 tokens
costs seconds per pair, so the time bound would allow a few hundred updates; encoding each text once
and training the head on the cached features uses all the teacher's verdicts.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from examiner.llm.encoder_cross import SCORE_FILE, TINY, load_backbone, load_scorer, pair_logits

MAX_TOKENS = 256
"""Tokens per (instruction, answer) encoding; all-MiniLM-L6-v2 was trained at 256 and the longer of the
two texts is cut first."""
HEAD_FILE, INFO_FILE, CACHE_FILE = "head.pt", "encoder_judge.json", "features.npz"


def features_key(first: str, second: str) -> str:
    """Cache key of one (instruction, answer) encoding."""
    return hashlib.sha256(json.dumps([first, second]).encode()).hexdigest()[:24]


class TextEncoder:
    """The frozen cross-encoder: (instruction, answer) -> a feature vector (mean-pooled states, [CLS]
    state, log characters and log words of the answer)."""

    def __init__(self, base: str = "minilm", *, threads: int | None = None, max_tokens: int = MAX_TOKENS) -> None:
        import torch

        if threads:
            torch.set_num_threads(threads)
        self.base, self.max_tokens = base, max_tokens
        self.tokenizer, self.model = load_backbone(base)
        self.model.eval()
        self.width = 2 * int(self.model.config.hidden_size) + 2

    def encode(self, pairs: Sequence[tuple[str, str]], batch: int = 16) -> np.ndarray:
        """Features of each (instruction, answer) pair, in order (batched by length to pad little)."""
        import torch

        out = np.zeros((len(pairs), self.width), dtype=np.float32)
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        for start in range(0, len(order), batch):
            picks = order[start:start + batch]
            firsts = [pairs[i][0] for i in picks]
            seconds = [pairs[i][1] for i in picks]
            tokens = self.tokenizer(firsts, seconds, truncation="longest_first", max_length=self.max_tokens,
                                    padding=True, return_tensors="pt")
            with torch.no_grad():
                states = self.model(**tokens).last_hidden_state
            mask = tokens["attention_mask"].unsqueeze(-1).float()
            mean = (states * mask).sum(1) / mask.sum(1).clamp(min=1)
            extra = torch.tensor([[math.log1p(len(s)), math.log1p(len(s.split()))] for s in seconds])
            rows = torch.cat([mean, states[:, 0], extra], dim=1).numpy()
            out[picks] = rows
        return out


class FeatureCache:
    """Encoded pairs saved under the model folder, so a stopped training resumes where it was."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.rows: dict[str, np.ndarray] = {}
        if path is not None and path.is_file():
            with np.load(path) as saved:
                self.rows = dict(zip(saved["keys"].tolist(), saved["values"]))

    def save(self) -> None:
        if self.path is None or not self.rows:
            return
        keys = list(self.rows)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, keys=np.array(keys), values=np.stack([self.rows[k] for k in keys]))
        tmp.replace(self.path)


def encode_cached(encoder: TextEncoder, pairs: Sequence[tuple[str, str]], cache: FeatureCache, *,
                  deadline: float | None = None, chunk: int = 64,
                  progress: Callable[[str], None] | None = None) -> bool:
    """Encode the pairs the cache lacks, chunk by chunk, saving after each; False when `deadline`
    (time.monotonic()) passed first (what was encoded is kept)."""
    todo = list(dict.fromkeys(features_key(a, b) for a, b in pairs if features_key(a, b) not in cache.rows))
    by_key = {features_key(a, b): (a, b) for a, b in pairs}
    began, total = time.monotonic(), len(todo)
    for start in range(0, total, chunk):
        if deadline is not None and time.monotonic() > deadline:
            return False
        keys = todo[start:start + chunk]
        for key, row in zip(keys, encoder.encode([by_key[k] for k in keys])):
            cache.rows[key] = row
        cache.save()
        done = min(start + chunk, total)
        rate = done / max(time.monotonic() - began, 1e-9)
        if progress:
            progress(f"encoder: encoded {done}/{total} texts ({rate:.1f}/s, about {(total - done) / rate:.0f} s left)")
    return True


def make_head(width: int, hidden: int = 64) -> Any:
    """The antisymmetric pairwise head (see the module's docstring)."""
    import torch
    from torch import nn

    class PairHead(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("mean", torch.zeros(width))
            self.register_buffer("scale", torch.ones(width))
            self.point = nn.Sequential(nn.Dropout(0.1), nn.Linear(width, hidden), nn.GELU(), nn.Linear(hidden, 1))
            self.pair = nn.Sequential(nn.Dropout(0.1), nn.Linear(2 * width, hidden), nn.GELU(), nn.Linear(hidden, 1))

        def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            mean, scale = self.get_buffer("mean"), self.get_buffer("scale")
            a, b = (a - mean) / scale, (b - mean) / scale
            point = self.point(a) - self.point(b)
            pair = (self.pair(torch.cat([a, b], 1)) - self.pair(torch.cat([b, a], 1))) / 2
            out: torch.Tensor = (point + pair).squeeze(-1)
            return out

    return PairHead()


@dataclass(frozen=True)
class PairVerdict:
    """The judge's reading of one pair: p(first answer better) and its confidence max(p, 1 - p)."""

    p_first: float

    @property
    def confidence(self) -> float:
        return max(self.p_first, 1 - self.p_first)

    @property
    def first_wins(self) -> bool:
        return self.p_first >= 0.5


class EncoderJudge:
    """A trained encoder judge loaded from its folder (`examiner distil --student encoder` output): the frozen
    encoder with its head, or the fine-tuned cross-encoder (`--encoder-mode cross`)."""

    def __init__(self, folder: Path, *, threads: int | None = None) -> None:
        import torch

        info = json.loads((folder / INFO_FILE).read_text(encoding="utf-8"))
        self.info = info
        self.temperature = float(info["temperature"])
        self.scorer: Any = None
        if threads:
            torch.set_num_threads(threads)
        if info.get("mode") == "cross":  # the fine-tuned cross-encoder (examiner/llm/encoder_cross.py)
            self.scorer = load_scorer(folder, int(info["max_tokens"]))
            return
        self.encoder = TextEncoder(info["base"], threads=threads, max_tokens=int(info["max_tokens"]))
        self.head = make_head(self.encoder.width, int(info["hidden"]))
        self.head.load_state_dict(torch.load(folder / HEAD_FILE, weights_only=True))
        self.head.eval()

    def judge(self, pairs: Sequence[tuple[str, str, str]]) -> list[PairVerdict]:
        """(instruction, answer A, answer B) -> calibrated p(A better), the same in either answer order."""
        from scipy.special import expit

        if self.scorer is not None:
            logits = np.array(pair_logits(self.scorer, pairs))
        else:
            features = self.encoder.encode([(i, a) for i, a, _ in pairs] + [(i, b) for i, _, b in pairs])
            n = len(pairs)
            logits = head_logits(self.head, features[:n], features[n:])
        return [PairVerdict(float(p)) for p in expit(logits / self.temperature)]


def head_logits(head: Any, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The head's raw logits for (A, B) feature rows, without dropout."""
    import torch

    head.eval()
    with torch.no_grad():
        out: np.ndarray = head(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    return out


def is_encoder_judge(folder: Path) -> bool:
    """Whether `folder` holds a trained encoder judge."""
    return (folder / INFO_FILE).is_file() and ((folder / HEAD_FILE).is_file() or (folder / SCORE_FILE).is_file())


__all__ = ["CACHE_FILE", "EncoderJudge", "FeatureCache", "HEAD_FILE", "INFO_FILE", "MAX_TOKENS", "PairVerdict",
           "TINY", "TextEncoder", "encode_cached", "features_key", "head_logits", "is_encoder_judge", "make_head"]
