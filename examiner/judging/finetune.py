"""LoRA fine-tuning of a local judge on `examiner distil` data (JudgeLM's recipe on a small budget).

Why this shape: the examples are chat conversations in examiner's own judge prompts, so the tuned
model is asked exactly what examiner's judges ask; the loss counts only the assistant turn (the
teacher's verdict), not the prompt. Training is bounded by steps and by minutes, checkpoints the
adapter, optimiser and position every `save_every` steps and resumes from there, and keeps memory low
(one example at a time with gradient accumulation, over-long prompts cut in the middle). A plain
torch loop with peft does it; trl's SFTTrainer would add a dependency for the same few lines.

The output folder holds `adapter/` (the LoRA weights), `merged/` (the base with the adapter merged in,
safetensors + tokenizer: what `examiner serve-local --model` serves) and `finetune.json` (a summary).
"""

from __future__ import annotations

import json
import math
import random
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from examiner.core.errors import UserError
from examiner.llm.hf_models import chat_ids, clip_middle, load_model

CHECKPOINT, ADAPTER, MERGED, SUMMARY = "checkpoint", "adapter", "merged", "finetune.json"
IGNORE = -100

Notes = Callable[[str], None]


@dataclass(frozen=True)
class FinetuneSettings:
    """How long and how hard to train."""

    max_steps: int = 200
    """Optimiser steps (each one `grad_accum` examples)."""
    max_minutes: float | None = None
    """Stop (and save) after this many minutes of training, whatever the step."""
    grad_accum: int = 4
    learning_rate: float = 2e-4
    lora_r: int = 8
    lora_alpha: int = 16
    lora_dropout: float = 0.05
    max_length: int = 1024
    """Tokens per example; longer ones lose the middle of the prompt (clip_middle), never the verdict."""
    save_every: int = 20
    """Checkpoint every N steps (and at the end)."""
    seed: int = 0
    progress_every: int = 5


@dataclass
class FinetuneResult:
    """What a run did: steps (all runs together), the last losses, the time and memory of this run."""

    out: Path
    base: str
    steps: int
    max_steps: int
    examples: int
    stopped: str
    """`steps` (max_steps reached) or `time` (max_minutes)."""
    resumed_from: int
    train_s: float
    peak_rss_gb: float
    first_loss: float | None
    last_loss: float | None
    device: str
    losses: list[float] = field(default_factory=list)


def read_examples(path: Path) -> list[list[dict[str, str]]]:
    """The chat conversations of a distil file (rows without a final assistant turn are skipped)."""
    if not path.is_file():
        raise UserError(f"{path} not found (run `examiner distil` first)")
    conversations = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            messages = json.loads(line)["messages"]
        except (ValueError, KeyError, TypeError):
            raise UserError(f"{path}:{number}: not a distil example (JSON with 'messages')") from None
        if (isinstance(messages, list) and len(messages) >= 2 and all(isinstance(m, dict) for m in messages)
                and messages[-1].get("role") == "assistant"):
            conversations.append([{"role": str(m.get("role")), "content": str(m.get("content") or "")}
                                  for m in messages])
    if not conversations:
        raise UserError(f"{path} holds no training conversations")
    return conversations


def encode(tokenizer: Any, messages: list[dict[str, str]], max_length: int) -> tuple[list[int], list[int]]:
    """(input ids, labels): labels are IGNORE on the prompt so that only the assistant turn is learnt."""
    prompt = chat_ids(tokenizer, messages[:-1], generation_prompt=True)
    full = chat_ids(tokenizer, messages, generation_prompt=False)
    shared = 0
    while shared < min(len(prompt), len(full)) and prompt[shared] == full[shared]:
        shared += 1
    reply = full[shared:]
    if not reply:
        reply = [tokenizer.eos_token_id]
    reply = reply[:max_length // 2]
    prompt_part = clip_middle(full[:shared], max_length - len(reply))
    return prompt_part + reply, [IGNORE] * len(prompt_part) + reply


def reply_loss(model: Any, ids: list[int], labels: list[int], device: str) -> Any:
    """Mean cross-entropy of the reply tokens. Only the logits that predict them are computed
    (`logits_to_keep`): the vocabulary projection of every prompt position (49,152 columns for SmolLM2)
    was a fifth of a training step's time and most of its activation memory, for tokens whose loss is
    masked anyway. Equal to the model's own loss with `labels` (the reply sits at the end of `ids`)."""
    import torch

    first = max(1, next((i for i, t in enumerate(labels) if t != IGNORE), len(labels)))
    keep = len(ids) - first + 1  # the logits at positions first-1 .. end predict tokens first .. end
    x = torch.tensor([ids], device=device)
    logits = model(input_ids=x, attention_mask=torch.ones_like(x), logits_to_keep=keep).logits[0, :-1]
    target = torch.tensor(labels[first:], device=device)
    return torch.nn.functional.cross_entropy(logits.float(), target, ignore_index=IGNORE)


def peak_rss_gb() -> float:
    """This process's peak resident memory (Linux reports kilobytes, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1e9 if sys.platform == "darwin" else 1e6)


def _with_lora(model: Any, settings: FinetuneSettings) -> Any:
    from peft import LoraConfig, get_peft_model

    config = LoraConfig(r=settings.lora_r, lora_alpha=settings.lora_alpha, lora_dropout=settings.lora_dropout,
                        target_modules="all-linear", task_type="CAUSAL_LM")
    return get_peft_model(model, config)


def _load_checkpoint(folder: Path, model: Any, optimizer: Any) -> dict[str, Any]:
    import torch
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    state: dict[str, Any] = json.loads((folder / "state.json").read_text())
    set_peft_model_state_dict(model, load_file(str(folder / "adapter_model.safetensors")))
    optimizer.load_state_dict(torch.load(folder / "optimizer.pt", weights_only=True))
    return state


def _save_checkpoint(folder: Path, model: Any, optimizer: Any, state: dict[str, Any]) -> None:
    import torch

    partial = folder.with_name(folder.name + ".partial")
    partial.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(partial))
    torch.save(optimizer.state_dict(), partial / "optimizer.pt")
    (partial / "state.json").write_text(json.dumps(state))
    if folder.exists():
        old = folder.with_name(folder.name + ".old")
        folder.replace(old)
        partial.replace(folder)
        for f in old.iterdir():
            f.unlink()
        old.rmdir()
    else:
        partial.replace(folder)


def finetune(train: Path, out: Path, base_folder: Path, *, base_name: str = "", settings: FinetuneSettings,
             notes: Notes = print, device: str | None = None) -> FinetuneResult:
    """Train a LoRA adapter on `train` (resuming from `out/checkpoint`), then write the adapter, the merged
    model and the summary into `out`."""
    import torch

    started = time.monotonic()
    random.seed(settings.seed)
    torch.manual_seed(settings.seed)
    conversations = read_examples(train)
    model, tokenizer = load_model(base_folder, device=device)
    where = str(next(model.parameters()).device)
    model = _with_lora(model, settings)
    model.train()
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=settings.learning_rate)
    out.mkdir(parents=True, exist_ok=True)
    state: dict[str, Any] = {"step": 0, "losses": []}
    if (out / CHECKPOINT / "state.json").is_file():
        state = _load_checkpoint(out / CHECKPOINT, model, optimizer)
        notes(f"finetune: resuming from step {state['step']} ({out / CHECKPOINT})")
    resumed_from = int(state["step"])
    order = list(range(len(conversations)))
    encoded: dict[int, tuple[list[int], list[int]]] = {}

    def example(position: int) -> tuple[list[int], list[int]]:
        epoch, index = divmod(position, len(order))
        shuffled = order[:]
        random.Random(settings.seed + epoch).shuffle(shuffled)
        key = shuffled[index]
        if key not in encoded:
            encoded[key] = encode(tokenizer, conversations[key], settings.max_length)
        return encoded[key]

    deadline = started + settings.max_minutes * 60 if settings.max_minutes else math.inf
    loop_began, stopped = time.monotonic(), "steps"
    while state["step"] < settings.max_steps:
        if time.monotonic() >= deadline:
            stopped = "time"
            break
        total = 0.0
        for micro in range(settings.grad_accum):
            ids, labels = example(state["step"] * settings.grad_accum + micro)
            loss = reply_loss(model, ids, labels, where) / settings.grad_accum
            loss.backward()
            total += float(loss.detach())
        torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        state["step"] += 1
        state["losses"].append(round(total, 5))
        done = state["step"] - resumed_from
        if state["step"] % settings.progress_every == 0 or state["step"] == settings.max_steps:
            per_step = (time.monotonic() - loop_began) / done
            eta = per_step * (settings.max_steps - state["step"])
            if settings.max_minutes:
                eta = min(eta, max(0.0, deadline - time.monotonic()))
            recent = state["losses"][-settings.progress_every:]
            notes(f"finetune: step {state['step']}/{settings.max_steps}  loss {sum(recent) / len(recent):.4f}  "
                  f"{per_step:.1f} s/step  ETA {eta / 60:.1f} min  peak {peak_rss_gb():.2f} GB")
        if state["step"] % settings.save_every == 0:
            _save_checkpoint(out / CHECKPOINT, model, optimizer, state)
    train_s = time.monotonic() - started
    _save_checkpoint(out / CHECKPOINT, model, optimizer, state)
    model.save_pretrained(str(out / ADAPTER))
    tokenizer.save_pretrained(str(out / ADAPTER))
    merged = model.merge_and_unload()
    merged.save_pretrained(str(out / MERGED))
    tokenizer.save_pretrained(str(out / MERGED))
    losses = [float(v) for v in state["losses"]]
    result = FinetuneResult(out=out, base=base_name or str(base_folder), steps=int(state["step"]),
                            max_steps=settings.max_steps, examples=len(conversations), stopped=stopped,
                            resumed_from=resumed_from, train_s=round(train_s, 1), peak_rss_gb=round(peak_rss_gb(), 3),
                            first_loss=losses[0] if losses else None, last_loss=losses[-1] if losses else None,
                            device=where, losses=losses)
    summary = {k: v for k, v in asdict(result).items() if k != "out"}
    summary["settings"] = asdict(settings)
    (out / SUMMARY).write_text(json.dumps(summary, indent=2))
    return result
