"""Per-token statistics of a GIVEN text under a target (examiner.stats.min_k.TokenStatistics), where the
target can give them: what Min-K%++ needs.

Min-K%++ standardises each token's log-probability by the mean and standard deviation of the
log-probability over the whole vocabulary at its position, so it needs the model's full distribution at
every position of the text. Where each provider stands:

- `local` (the embedded SmolLM2 GGUF): exact. The weights are loaded a second time, in this process, by
  llama-cpp-python with `logits_all=True`; one evaluation of the text gives every position's logits. The
  shared server answering chat calls cannot be asked for them (its completions return top-k log-probabilities).
- `simulated`: the simulator's POST /sim/token_logprobs, draws with a known truth (simulator/token_stats.py).
- `openai` (any OpenAI-compatible API): not computed. A completions request with `echo` and `logprobs` returns
  at most the top 5 (OpenAI) to 20 (other servers) log-probabilities per position, which do not give the
  mean and variance over the vocabulary; an approximation from them would be another statistic, so the
  report records the refusal (`unavailable`) instead.
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any, Protocol

import httpx

from examiner.stats.min_k import TokenStatistics, token_statistics

if TYPE_CHECKING:
    from examiner.llm.gateway import Gateway

N_CTX = 2048
"""Context of the in-process model: a probed sentence is at most 60 words, far below it."""


class TokenScorer(Protocol):
    """Scores one text: its per-token statistics."""

    method: str
    """How the statistics were obtained, for the report."""

    async def __call__(self, text: str) -> TokenStatistics: ...


class EmbeddedScorer:
    """The embedded GGUF model in this process, full logits at every position (exact statistics)."""

    method = "exact: full-vocabulary logits of the embedded GGUF model (llama-cpp-python, logits_all)"

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        if self._model is None:
            import llama_cpp

            from examiner.llm.llama_server import no_repack
            from examiner.llm.local import model_path

            no_repack()  # the same crash the server avoids (examiner.llm.llama_server)
            self._model = llama_cpp.Llama(model_path=str(model_path()), logits_all=True, n_ctx=N_CTX,
                                          verbose=False, seed=0)
        return self._model

    def score_now(self, text: str) -> TokenStatistics:
        """The statistics of `text`'s tokens after its first (the model adds no BOS token to give it context)."""
        import numpy as np

        with self._lock:
            model = self._load()
            tokens = model.tokenize(text.encode("utf-8"), add_bos=True, special=False)[:N_CTX]
            model.reset()
            model.eval(tokens)
            logits = np.array(model.scores[: model.n_tokens], dtype=np.float32)
        return token_statistics(logits, tokens)

    async def __call__(self, text: str) -> TokenStatistics:
        return await asyncio.to_thread(self.score_now, text)


class SimulatedScorer:
    """A simulated endpoint's drawn statistics (POST /sim/token_logprobs)."""

    method = "simulated: drawn by the simulator with a known truth, docs/SIMULATOR.md"

    def __init__(self, base_url: str) -> None:
        self.url = base_url.removesuffix("/").removesuffix("/v1") + "/sim/token_logprobs"

    async def __call__(self, text: str) -> TokenStatistics:
        async with httpx.AsyncClient(timeout=30) as client:
            reply = await client.post(self.url, json={"text": text})
            reply.raise_for_status()
            body = reply.json()
        return TokenStatistics(tuple(body["logprob"]), tuple(body["mean"]), tuple(body["sd"]))


def unavailable(provider: str, endpoint: str) -> str:
    """Why an endpoint's provider gives no Min-K%++ (one line), or "" when it does."""
    if provider in ("local", "simulated"):
        return ""
    return (f"endpoint {endpoint} is an OpenAI-compatible API, which returns at most the top 5 to 20 "
            "log-probabilities per token (completions with echo and logprobs), not the mean and variance over "
            "the whole vocabulary that Min-K%++ standardises by")


async def token_scorer(gw: Gateway, endpoint: str) -> TokenScorer | str:
    """The scorer for `endpoint` on this gateway, or the one-line reason it has none."""
    spec = gw.settings.endpoint(endpoint)
    reason = unavailable(spec.provider, endpoint)
    if reason:
        return reason
    if spec.provider == "local":
        return EmbeddedScorer()
    return SimulatedScorer(await gw.ensure_started("candidate", endpoint))


__all__ = ["EmbeddedScorer", "N_CTX", "SimulatedScorer", "TokenScorer", "token_scorer", "unavailable"]
