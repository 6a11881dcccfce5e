"""Log-probabilities from a served transformers model (examiner/llm/hf_logprobs.py, `serve-local --model`):
what a cascade's cheap judge reads when it is a local fine-tuned model. A tiny random model stands in."""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers")

from examiner.core.config import EndpointSpec, Settings  # noqa: E402
from examiner.llm import CallContext, Gateway, GenerationConfig  # noqa: E402
from tests.helpers.tiny_lm import build_tiny_model  # noqa: E402

CHAT = [{"role": "system", "content": "You grade answers."}, {"role": "user", "content": "Grade these two."}]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    import torch

    from examiner.llm.hf_models import load_model

    torch.set_num_threads(1)
    return load_model(build_tiny_model(tmp_path_factory.mktemp("tiny") / "model"), device="cpu")


@pytest.fixture(scope="module")
def served(tiny_model: tuple[Any, Any]) -> Iterator[str]:
    from examiner.llm.hf_server import ChatModel, make_server

    server = make_server(ChatModel(*tiny_model, "tiny-judge"), port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_greedy_tokens_carry_their_probability_and_the_best_alternatives(tiny_model: tuple[Any, Any]) -> None:
    from examiner.llm.hf_logprobs import generate_scored
    from examiner.llm.hf_models import generate_reply

    model, tokenizer = tiny_model
    scored = generate_scored(model, tokenizer, CHAT, max_new_tokens=6, top_logprobs=3)
    assert scored.text == generate_reply(model, tokenizer, CHAT, max_new_tokens=6)[0]  # the same greedy reply
    assert scored.logprobs and len(scored.logprobs) <= scored.completion_tokens
    for entry in scored.logprobs:
        top = entry["top_logprobs"]
        assert len(top) == 3 and all(a["logprob"] >= b["logprob"] for a, b in zip(top, top[1:]))
        assert entry["logprob"] <= 0 and entry["logprob"] == pytest.approx(top[0]["logprob"])  # greedy: the best
        assert sum(math.exp(a["logprob"]) for a in top) <= 1 + 1e-6
    assert "".join(e["token"] for e in scored.logprobs).strip() == scored.text


async def test_a_served_model_returns_logprobs_through_the_gateway(served: str, tmp_path: Path) -> None:
    settings = Settings(endpoints={"tiny": EndpointSpec(provider="openai", base_url=served, model="tiny-judge",
                                                        structured_output="text")},
                        roles={"judge": "tiny"})
    async with Gateway(settings, tmp_path) as gw:
        result = await gw.chat("judge", CHAT, GenerationConfig(max_tokens=5, temperature=0.0, logprobs=True,
                                                               top_logprobs=2), CallContext(stage="judge"))
        plain = await gw.chat("judge", CHAT, GenerationConfig(max_tokens=5, temperature=0.0),
                              CallContext(stage="judge_plain"))
    assert result.logprobs and all(t.logprob <= 0 and len(t.top) <= 2 for t in result.logprobs)
    assert plain.logprobs is None and plain.text == result.text
