"""A tiny randomly initialised chat model folder (Llama, 2 layers, 64 wide) with a character-level
tokenizer and a ChatML template, built in-process: fine-tuning and serving tests run in seconds and
download nothing."""

from __future__ import annotations

import string
from pathlib import Path

CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
          "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def build_tiny_model(folder: Path, seed: int = 0) -> Path:
    """Write a random tiny causal LM and its tokenizer into `folder`; returns the folder."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["<unk>", "<|im_start|>", "<|im_end|>"]
    chars = sorted(set(string.printable))
    vocab = {token: i for i, token in enumerate(specials + chars)}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    core.decoder = decoders.Fuse()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, unk_token="<unk>", eos_token="<|im_end|>",
                                        pad_token="<|im_end|>", bos_token="<|im_start|>")
    tokenizer.add_special_tokens({"additional_special_tokens": specials[1:]})
    tokenizer.chat_template = CHATML
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=len(vocab), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
                         bos_token_id=vocab["<|im_start|>"], eos_token_id=vocab["<|im_end|>"],
                         pad_token_id=vocab["<|im_end|>"], tie_word_embeddings=True)
    model = LlamaForCausalLM(config)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder
