"""A reply from a transformers model with the log-probability of each generated token and its most likely
alternatives, in the shape of OpenAI's `choices[i].logprobs.content`.

Why: a judge cascade reads its cheap judge's confidence from logprobs (examiner.judging.cascade), and the
cheap judge is often a small local model fine-tuned by `examiner finetune` and served by
`examiner serve-local --model`. Log-probabilities come from the model's raw logits at each step (before
temperature), so they say how sure the model is, whatever the sampling.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from examiner.llm.hf_models import chat_ids, clip_middle

MAX_TOP_LOGPROBS = 20
"""OpenAI's ceiling on `top_logprobs`."""

__all__ = ["MAX_TOP_LOGPROBS", "ScoredReply", "generate_scored"]


@dataclass(frozen=True)
class ScoredReply:
    text: str
    prompt_tokens: int
    completion_tokens: int
    logprobs: list[dict[str, Any]]
    """One entry per generated token (special tokens left out): token, logprob, bytes, top_logprobs."""


def _entry(token: str, logprob: float) -> dict[str, Any]:
    return {"token": token, "logprob": logprob, "bytes": list(token.encode("utf-8"))}


def generate_scored(model: Any, tokenizer: Any, messages: list[dict[str, str]], *, max_new_tokens: int = 128,
                    temperature: float = 0.0, top_logprobs: int = 0,
                    max_prompt_tokens: int | None = None) -> ScoredReply:
    """Generate as `hf_models.generate_reply` does (greedy at temperature 0, the prompt's middle cut past
    max_prompt_tokens), keeping each step's log-softmax over the raw logits."""
    import torch

    ids = clip_middle(chat_ids(tokenizer, messages, generation_prompt=True), max_prompt_tokens)
    device = next(model.parameters()).device
    tensor = torch.tensor([ids], device=device)
    options: dict[str, Any] = {"max_new_tokens": max_new_tokens, "pad_token_id": tokenizer.pad_token_id,
                               "return_dict_in_generate": True, "output_logits": True}
    options.update(do_sample=True, temperature=temperature) if temperature > 0 else options.update(do_sample=False)
    with torch.no_grad():
        out = model.generate(tensor, attention_mask=torch.ones_like(tensor), **options)
    new = out.sequences[0][len(ids):].tolist()
    special = set(tokenizer.all_special_ids)
    top = max(0, min(top_logprobs, MAX_TOP_LOGPROBS))
    entries: list[dict[str, Any]] = []
    for step, token_id in enumerate(new):
        if token_id in special:
            continue
        logprobs = torch.log_softmax(out.logits[step][0].float(), dim=-1)
        entry = _entry(tokenizer.decode([token_id]), float(logprobs[token_id]))
        if top:
            values, indices = torch.topk(logprobs, top)
            entry["top_logprobs"] = [_entry(tokenizer.decode([int(i)]), float(v)) for v, i in zip(values, indices)]
        else:
            entry["top_logprobs"] = []
        entries.append(entry)
    text = tokenizer.decode(new, skip_special_tokens=True)
    return ScoredReply(text.strip(), len(ids), len(new), entries)
