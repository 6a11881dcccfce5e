"""G-Eval agents: the evaluation-steps writer (auto chain-of-thought) and the form-filling scorer.

Steps are written once per (task, criterion) and shared by every item of a run (in memory per
gateway, and across runs through the gateway's response cache). The scorer asks for the score token's
log-probabilities when the endpoint gives them and takes the expected value; otherwise it samples n
completions at temperature 1 and averages (see agents/judge/geval_math.py).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from examiner.agents.card import AgentCard, Prompt
from examiner.agents.judge.geval_math import GEvalScore, allowed_scores, expected_from_logprobs, mean_of_samples
from examiner.llm import CallContext, Gateway, GenerationConfig
from examiner.agents.prompting.passing import passed

ROLE = "geval"
DEFAULT_SAMPLES = 20

FORM_GENERATION = GenerationConfig(max_tokens=4, temperature=0.0, logprobs=True)
"""Form filling: the score token alone, greedy, with its alternatives' logprobs (top_logprobs follows the
scale: `score_config`). Without logprobs, n samples at temperature 1 instead (`sample_config`)."""
STEPS = Prompt.of("geval_steps", "task", "criterion", generation=GenerationConfig(max_tokens=320, temperature=0.0))
SCORE = Prompt.of("geval_score", "task", "criterion", "steps", "source", "text", "scale", "form_label",
                  generation=FORM_GENERATION)
CARD = AgentCard(agent="judge", name="G-Eval", role=ROLE, prompts=(STEPS, SCORE),
                 text_reply="geval_steps: the evaluation steps as written; geval_score: the score token, read "
                            "from its logprobs or from n samples (agents/judge/geval_math.py)")


def score_config(scale: int, low: int = 1) -> GenerationConfig:
    """The logprob path's settings: enough alternatives to see every score low..scale (5 to 20)."""
    return replace(FORM_GENERATION, top_logprobs=min(20, max(5, len(allowed_scores(scale, low)))))


def sample_config(n: int) -> GenerationConfig:
    """The sampling path's settings: n completions of the score token at temperature 1."""
    return GenerationConfig(max_tokens=FORM_GENERATION.max_tokens, temperature=1.0, n=n)

_STEPS: dict[tuple[int, str | None, str, str], asyncio.Future[str]] = {}


async def evaluation_steps(gw: Gateway, *, task: str, criterion: str, endpoint: str | None = None) -> str:
    """The evaluation steps for (task, criterion), written by the model once and then reused."""
    key = (id(gw), endpoint, task, criterion)
    future = _STEPS.get(key)
    if future is None:
        future = asyncio.get_running_loop().create_future()
        _STEPS[key] = future
        try:
            result = await gw.chat(ROLE, STEPS.render(task=task, criterion=criterion), STEPS.config(),
                                   CallContext(stage="steps"), endpoint=endpoint)
            future.set_result((result.text or "").strip())
        except BaseException as exc:
            _STEPS.pop(key, None)
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters re-raise it themselves
            raise
    return await asyncio.shield(future)


def forget_steps(gw: Gateway) -> None:
    """Drop the in-memory steps of a gateway (call when it closes, so ids are not reused stale)."""
    for key in [k for k in _STEPS if k[0] == id(gw)]:
        _STEPS.pop(key, None)


async def form_fill(
    gw: Gateway,
    messages: list[dict[str, str]],
    *,
    scale: int,
    stage: str,
    n: int = DEFAULT_SAMPLES,
    use_logprobs: bool | None = None,
    item_id: str = "",
    round: int = 0,
    unit_ids: tuple[str, ...] = (),
    endpoint: str | None = None,
    low: int = 1,
) -> GEvalScore:
    """Score a filled-in form: expected value from logprobs when available, else the mean of n samples.

    `use_logprobs=None` follows the endpoint's `supports_logprobs`; the result's `path` says which
    way was taken and `fallback_reason` why sampling was used after logprobs were asked for. `low`: the
    lowest score the form allows (the exam's agreement form allows 0, a category of its own: declined).
    """
    allowed = allowed_scores(scale, low)
    _, spec = gw.resolve(ROLE, endpoint)
    want_logprobs = spec.supports_logprobs if use_logprobs is None else use_logprobs
    context = CallContext(stage=stage, round=round, unit_ids=tuple(unit_ids), item_id=item_id,
                          hints={"scale": scale})
    reason = ""
    if want_logprobs:
        result = await gw.chat(ROLE, messages, score_config(scale, low), context, endpoint=endpoint)
        scored = expected_from_logprobs(result.logprobs, allowed)
        if scored is not None:
            return scored
        reason = "no logprobs returned" if not result.logprobs else f"no score token in {result.text[:40]!r}"
    result = await gw.chat(ROLE, messages, sample_config(n), context, endpoint=endpoint)
    texts = result.texts or [result.text]
    return mean_of_samples(texts, allowed, fallback_reason=reason)


async def geval_score(
    gw: Gateway,
    *,
    task: str,
    criterion: str,
    text: str,
    source: str = "",
    scale: int = 5,
    form_label: str = "Score",
    n: int = DEFAULT_SAMPLES,
    use_logprobs: bool | None = None,
    item_id: str = "",
    endpoint: str | None = None,
) -> GEvalScore:
    """G-Eval score of `text` (given its `source`) on `criterion`, 1..scale."""
    steps = await evaluation_steps(gw, task=task, criterion=criterion, endpoint=endpoint)
    messages = SCORE.render(task=task, criterion=criterion, steps=steps, source=source or "(none)",
                            text=passed(gw, text), scale=scale, form_label=form_label)
    return await form_fill(gw, messages, scale=scale, stage="score", n=n, use_logprobs=use_logprobs,
                           item_id=item_id, endpoint=endpoint)
