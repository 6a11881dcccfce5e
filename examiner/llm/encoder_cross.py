"""The fine-tuned cross-encoder scorer of the encoder judge (`--encoder-mode cross`): the encoder's own
weights learn, not only a head on frozen features.

Why: a frozen sentence encoder's features did not say which answer is better (docs/DISTIL.md, section 5).
Here the encoder reads (instruction, answer) as one cross-encoder input and a linear layer on its
mean-pooled state (and the answer's log length) gives a score s; the pairwise logit is

    logit(A, B) = s(instruction, A) - s(instruction, B),

the same weights scoring both answers, so logit(B, A) = -logit(A, B): no position bias is possible.
Each answer is encoded on its own and clipped on its own (the instruction first cut to
`instruction_tokens`, the answer to what is left of `max_tokens`), so a long first answer cannot push the
second out of view.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

MODEL_FOLDER, SCORE_FILE = "model", "score.pt"
INSTRUCTION_TOKENS = 64
"""Most tokens of the instruction kept in each (instruction, answer) input; the answer gets the rest."""


TINY = "tiny"
"""A base named `tiny`: a randomly initialised 2-layer BERT on the bundled tokenizer (tests only)."""


def load_backbone(base: str) -> tuple[Any, Any]:
    """(tokenizer, encoder) for `base`: `minilm` (bundled all-MiniLM-L6-v2), `tiny` (a random 2-layer BERT
    on the bundled tokenizer, for tests) or a folder."""
    import torch
    from transformers import AutoModel, AutoTokenizer, BertConfig, BertModel

    from examiner.corpus.vectors import bundled_model_path

    path = bundled_model_path() if base in ("minilm", TINY) else Path(base)
    tokenizer = AutoTokenizer.from_pretrained(str(path))
    if base == TINY:
        torch.manual_seed(0)
        model = BertModel(BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=64))
    else:
        model = AutoModel.from_pretrained(str(path))
    return tokenizer, model


def clipped_inputs(tokenizer: Any, pairs: Sequence[tuple[str, str]], max_tokens: int,
                   instruction_tokens: int = INSTRUCTION_TOKENS) -> dict[str, Any]:
    """A padded batch of BERT-style inputs, [CLS] instruction [SEP] answer [SEP], each part clipped
    separately to its budget (the answer keeps its beginning)."""
    import torch

    firsts = tokenizer([p[0] for p in pairs], add_special_tokens=False)["input_ids"]
    seconds = tokenizer([p[1] for p in pairs], add_special_tokens=False)["input_ids"]
    cls, sep, pad = tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id or 0
    rows, types = [], []
    for first, second in zip(firsts, seconds):
        first = first[:instruction_tokens]
        room = max(max_tokens - len(first) - 3, 1)
        second = second[:room]
        rows.append([cls, *first, sep, *second, sep])
        types.append([0] * (len(first) + 2) + [1] * (len(second) + 1))
    width = max(len(r) for r in rows)
    return {"input_ids": torch.tensor([r + [pad] * (width - len(r)) for r in rows]),
            "token_type_ids": torch.tensor([t + [0] * (width - len(t)) for t in types]),
            "attention_mask": torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows])}


def make_scorer(tokenizer: Any, encoder: Any, max_tokens: int, *, outputs: int = 1,
                instruction_tokens: int = INSTRUCTION_TOKENS) -> Any:
    """The scorer module: (instruction, answer) pairs -> one score each (see the module's docstring), or
    `outputs` logits each (the exam-unit judge's label classes, examiner/llm/encoder_units.py)."""
    import torch
    from torch import nn

    class CrossScorer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder
            self.tokenizer = tokenizer
            """The backbone's tokenizer: what an input's parts are clipped by before they reach forward."""
            self.score = nn.Linear(int(encoder.config.hidden_size) + 1, outputs)
            nn.init.normal_(self.score.weight, std=0.02)
            nn.init.zeros_(self.score.bias)

        def forward(self, pairs: Sequence[tuple[str, str]]) -> torch.Tensor:
            batch = clipped_inputs(tokenizer, pairs, max_tokens, instruction_tokens)
            states = self.encoder(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(states.dtype)
            pooled = (states * mask).sum(1) / mask.sum(1).clamp(min=1)
            length = torch.tensor([[math.log1p(len(p[1])) / 10] for p in pairs], dtype=states.dtype)
            out: torch.Tensor = self.score(torch.cat([pooled, length], 1))
            return out.squeeze(-1) if outputs == 1 else out

    return CrossScorer()


def pair_logits(scorer: Any, pairs: Sequence[tuple[str, str, str]], batch: int = 16) -> list[float]:
    """logit(A, B) = s(A) - s(B) for (instruction, A, B) triples, without gradients (eval mode)."""
    import torch

    texts = [(i, a) for i, a, _ in pairs] + [(i, b) for i, _, b in pairs]
    order = sorted(range(len(texts)), key=lambda k: len(texts[k][0]) + len(texts[k][1]))
    scores = [0.0] * len(texts)
    scorer.eval()
    with torch.no_grad():
        for start in range(0, len(order), batch):
            picks = order[start:start + batch]
            for k, s in zip(picks, scorer([texts[k] for k in picks]).tolist()):
                scores[k] = float(s)
    n = len(pairs)
    return [scores[k] - scores[n + k] for k in range(n)]


def save_scorer(scorer: Any, tokenizer: Any, folder: Path) -> None:
    """The fine-tuned encoder (save_pretrained, with its tokenizer) and the score layer under `folder`."""
    import torch

    scorer.encoder.save_pretrained(str(folder / MODEL_FOLDER))
    tokenizer.save_pretrained(str(folder / MODEL_FOLDER))
    torch.save(scorer.score.state_dict(), folder / SCORE_FILE)


def load_scorer(folder: Path, max_tokens: int, *, outputs: int = 1,
                instruction_tokens: int = INSTRUCTION_TOKENS) -> Any:
    """A scorer saved by save_scorer."""
    import torch

    tokenizer, encoder = load_backbone(str(folder / MODEL_FOLDER))
    scorer = make_scorer(tokenizer, encoder, max_tokens, outputs=outputs, instruction_tokens=instruction_tokens)
    scorer.score.load_state_dict(torch.load(folder / SCORE_FILE, weights_only=True))
    scorer.eval()
    return scorer


__all__ = ["INSTRUCTION_TOKENS", "MODEL_FOLDER", "SCORE_FILE", "clipped_inputs", "load_backbone", "load_scorer",
           "make_scorer", "pair_logits", "save_scorer"]
