"""Configuration: endpoints, the roles that use them, and exam settings.

Sources, later ones winning: built-in defaults (every role on the embedded local model), a YAML file
(`--config FILE`), environment variables (`EXAMINER_ROLE_<ROLE>=<endpoint>`, `EXAMINER_BUDGET_USD`),
then CLI flags. API keys are never part of the configuration: an endpoint names the environment
variable that holds its key, and the key is read only when the client is built.

Settings are frozen once validated: a command that changes a knob after loading makes a validated copy
with `Settings.merged({...})`, so no part of a run sees settings change under it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from examiner.core.errors import ConfigError
from examiner.core.passed_text import DEFAULT_MAX_PASSED_CHARS, MIN_PASSED_CHARS

PROVIDERS = ("openai", "local", "simulated")
"""`openai`: any OpenAI-compatible HTTP endpoint (OpenAI, vLLM, Ollama, llama.cpp server, LM Studio);
`local`: the embedded SmolLM2 model served by llama-cpp-python; `simulated`: the deterministic test server."""

ROLES = (
    "examiner",
    "candidate",
    "judge",
    "reviser",
    "geval",
    "pairwise",
    "evaluator",
    "debater",
    "meta_judge",
)
"""Model roles. Every role defaults to the `local` endpoint."""


SEED_MODULUS = 2**30
"""Exam seeds at or above this are reduced modulo it (see ExamSettings.seed)."""

MAX_DEPTH = 32
"""Deepest nesting of mappings and lists a settings file may hold; deeper is refused in one line."""
MAX_VALUES = 100_000
"""Most values (mappings, lists and scalars, counted as YAML aliases expand them) a settings file may hold."""

PRICE_FIELDS = ("price_input_per_1m", "price_output_per_1m", "price_cached_input_per_1m", "price_cache_write_per_1m",
                "price_reasoning_per_1m", "batch_price_factor")
"""EndpointSpec fields that say what a call costs."""


class EndpointSpec(BaseModel):
    """One model endpoint reachable over the OpenAI chat-completions protocol."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True, allow_inf_nan=False)

    provider: Literal["openai", "local", "simulated"] = "openai"
    """Which kind of endpoint this is; `local` and `simulated` are started by examiner itself."""
    base_url: str | None = None
    """Root URL of the OpenAI-compatible API (e.g. http://localhost:8000/v1). Required for `openai`; a
    `simulated` endpoint with one uses the simulated server running there instead of starting its own."""
    replicas: list[str] = Field(default_factory=list)
    """Root URLs of further servers of the same model (`openai` endpoints only): calls are spread over
    base_url and these by least outstanding requests, each server with its own max_concurrency and
    tokens_per_minute, and a server that stops answering is left out for `replica_cooloff_s`
    (examiner.llm.replicas). The cache keys on base_url alone, so keep base_url when the list changes."""
    replica_cooloff_s: float = Field(30.0, gt=0)
    """How long a replica that keeps failing gets no new calls, in seconds, before it is tried again."""
    model: str = "default"
    """Model name sent with each request."""
    api_key_env: str | None = None
    """Name of the environment variable holding the API key (the key itself never enters config)."""
    price_input_per_1m: float = Field(0.0, ge=0)
    """Price of prompt tokens, in US dollars per one million tokens."""
    price_output_per_1m: float = Field(0.0, ge=0)
    """Price of completion tokens, in US dollars per one million tokens."""
    price_cached_input_per_1m: float | None = Field(None, ge=0)
    """Price of prompt tokens served from the provider's prompt cache (`cached_tokens`), in US dollars per
    one million tokens (None: billed at price_input_per_1m)."""
    price_cache_write_per_1m: float | None = Field(None, ge=0)
    """Price of prompt tokens written to the provider's prompt cache (`cache_write_tokens`), in US dollars per
    one million tokens, for providers that charge cache writes (None: billed at price_input_per_1m)."""
    price_reasoning_per_1m: float | None = Field(None, ge=0)
    """Price of hidden reasoning tokens (`reasoning_tokens`), in US dollars per one million tokens (None:
    billed at price_output_per_1m)."""
    batch_price_factor: float = Field(0.5, gt=0, le=1)
    """Share (0-1] of the standard price that a call answered through the provider's batch API costs."""
    max_concurrency: int = Field(8, ge=1)
    """Most requests in flight at once against this endpoint (a count)."""
    tokens_per_minute: int | None = Field(None, ge=1)
    """Optional rate limit, in prompt + completion tokens per minute (None: no limit)."""
    temperature: float = Field(0.0, ge=0, le=2)
    """Sampling temperature (0-2) of calls that do not set their own."""
    seed: int | None = 0
    """Sampling seed of calls that do not set their own, sent where the endpoint honours it (None: none)."""
    timeout_s: float = Field(120.0, gt=0)
    """Timeout of each step of one HTTP attempt, in seconds: connecting, sending, and each read of the reply
    (a reply that keeps sending a few bytes never passes it; `attempt_deadline_s` bounds the whole)."""
    attempt_deadline_s: float | None = Field(None, gt=0)
    """Longest one HTTP attempt may take in all (connect, send and every read of the reply), in seconds;
    an attempt still running then is ended, counted as possibly billed and retried (None: 2 x timeout_s + 10)."""
    max_attempts: int = Field(6, ge=1, le=20)
    """Attempts per call (a count), first try included, for 429 / 5xx / timeouts / connection errors."""
    backoff_base_s: float = Field(0.5, ge=0)
    """First retry back-off, in seconds; doubles each attempt (with full jitter), capped at 30 s.
    A Retry-After header wins."""
    supports_n: bool = True
    """Whether the endpoint returns several choices for `n` > 1; if not, the gateway sends n requests."""
    structured_output: Literal["json_schema", "json_object_schema", "json_object", "text"] = "json_schema"
    """How to ask for structured output: OpenAI `json_schema`; `json_object_schema` (llama.cpp servers:
    JSON mode plus a schema compiled to a grammar); plain JSON mode; or text + tolerant extraction."""
    context_tokens: int = Field(8192, ge=256)
    """Context window of the model, in tokens; longer inputs are split by callers that can."""
    supports_logprobs: bool = True
    """Whether the endpoint returns top_logprobs (G-Eval falls back to sampling when it does not)."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Provider-specific options (e.g. the simulated backend's knowledge profile and fault rates)."""
    batch: bool = False
    """Send this endpoint's calls through the provider's Batch API (OpenAI Files + Batches): the calls a
    step makes are submitted together as one JSONL file and billed at `batch_price_factor` of the list
    prices; the results may take up to `batch_completion_window` to arrive (examiner.llm.batch)."""
    batch_completion_window: Literal["24h"] = "24h"
    """How long the provider may take to finish a batch (the Batches API accepts only `24h`)."""
    batch_poll_seconds: float = Field(30.0, gt=0)
    """First wait between two status checks of a submitted batch, in seconds; each wait is 1.5 times the
    last, up to `batch_poll_max_seconds`."""
    batch_poll_max_seconds: float = Field(600.0, gt=0)
    """Longest wait between two status checks of a submitted batch, in seconds."""
    batch_quiet_seconds: float = Field(2.0, gt=0)
    """A batch is submitted once no new call has been queued for this many seconds (the calls a step
    makes arrive together), or at once when `batch_max_requests` calls wait."""
    batch_max_requests: int = Field(50_000, ge=1, le=50_000)
    """Most calls in one batch (a count; OpenAI accepts up to 50,000 requests per batch file)."""

    @model_validator(mode="after")
    def _needs_url(self) -> "EndpointSpec":
        if self.provider == "openai" and not self.base_url:
            raise ValueError("an `openai` endpoint needs base_url (e.g. https://api.openai.com/v1)")
        if self.replicas and self.provider != "openai":
            raise ValueError("replicas are root URLs of `openai` endpoints; examiner starts one server for "
                             f"a `{self.provider}` endpoint")
        if len({self.base_url, *self.replicas}) != len(self.replicas) + 1:
            raise ValueError(f"replicas must be distinct URLs, other than base_url, got {self.replicas}")
        return self

    @property
    def deadline_s(self) -> float:
        """The whole-attempt deadline: `attempt_deadline_s`, or twice `timeout_s` plus 10 s (a reply may take
        up to timeout_s to start and as long again to arrive; the 10 s spare a loaded machine's short timeouts)."""
        return self.attempt_deadline_s if self.attempt_deadline_s is not None else 2 * self.timeout_s + 10

    def api_key(self) -> str:
        """The key from the environment; a clear error when the variable is named but unset."""
        if not self.api_key_env:
            return "not-needed"
        value = os.environ.get(self.api_key_env)
        if not value:
            raise ConfigError(f"environment variable {self.api_key_env} (API key) is not set")
        return value

    def cost_usd(self, prompt_tokens: int, completion_tokens: int, *, cached_tokens: int = 0,
                 cache_write_tokens: int = 0, reasoning_tokens: int = 0, batch: bool = False) -> float:
        """Dollars for one call at this endpoint's prices: the one pricing function of examiner.

        The counts are those of an OpenAI chat completion's `usage`, where the details are parts of the
        totals, never additions to them:
        - `prompt_tokens` includes `cached_tokens` (usage.prompt_tokens_details.cached_tokens: a prefix read
          from the provider's prompt cache, billed at price_cached_input_per_1m) and `cache_write_tokens`
          (usage.prompt_tokens_details.cache_write_tokens: tokens written to the cache, reported by providers
          that charge writes the way Anthropic does, billed at price_cache_write_per_1m); the rest is billed
          at price_input_per_1m.
        - `completion_tokens` includes `reasoning_tokens` (usage.completion_tokens_details.reasoning_tokens:
          hidden reasoning, billed at price_reasoning_per_1m); the visible rest is billed at
          price_output_per_1m. Each token is priced once, so reasoning is never counted twice.
        - `batch`: the call was answered through the provider's batch API; the whole call costs
          batch_price_factor times its standard price (OpenAI, Anthropic: 0.5).
        A detail larger than its total (a server that reports them apart) is capped at the total."""
        cached = min(max(cached_tokens, 0), prompt_tokens)
        written = min(max(cache_write_tokens, 0), prompt_tokens - cached)
        reasoning = min(max(reasoning_tokens, 0), completion_tokens)
        cached_price = self.price_input_per_1m if self.price_cached_input_per_1m is None else \
            self.price_cached_input_per_1m
        write_price = self.price_input_per_1m if self.price_cache_write_per_1m is None else \
            self.price_cache_write_per_1m
        reasoning_price = self.price_output_per_1m if self.price_reasoning_per_1m is None else \
            self.price_reasoning_per_1m
        dollars = ((prompt_tokens - cached - written) * self.price_input_per_1m + cached * cached_price
                   + written * write_price + (completion_tokens - reasoning) * self.price_output_per_1m
                   + reasoning * reasoning_price) / 1e6
        return dollars * self.batch_price_factor if batch else dollars

    def worst_case_usd(self, prompt_tokens: int, completion_tokens: int) -> float:
        """The most a call can cost before its usage is known (what a budget reserves): each prompt token
        at the dearer of the input and cache-write prices, each completion token at the dearer of the
        output and reasoning prices, at the standard (not batch) rate."""
        written = prompt_tokens if (self.price_cache_write_per_1m or 0.0) > self.price_input_per_1m else 0
        reasoning = completion_tokens if (self.price_reasoning_per_1m or 0.0) > self.price_output_per_1m else 0
        return self.cost_usd(prompt_tokens, completion_tokens, cache_write_tokens=written, reasoning_tokens=reasoning)

    def prices(self) -> dict[str, float | None]:
        """The pricing fields, for a copy of this endpoint that must bill alike (a simulated twin)."""
        return {name: getattr(self, name) for name in PRICE_FIELDS}


class ExamSettings(BaseModel):
    """Knobs of the Ref-Eval examination loop (see docs/METHODS.md section 1)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True, allow_inf_nan=False)

    unit_mode: Literal["sentences", "llm"] = "sentences"
    """How the corpus becomes knowledge units: `sentences` (one unit per sentence, no model calls) or
    `llm` (the examiner role condenses each passage into atomic statements)."""
    max_unit_tokens: int = Field(80, ge=8)
    """Longest knowledge unit, in tokens; longer sentences are split."""
    min_unit_tokens: int = Field(8, ge=1)
    """Shortest knowledge unit, in tokens; shorter sentences are joined to a neighbour."""
    dedup_threshold: float = Field(0.95, gt=0, le=1)
    """Cosine similarity (0-1] of unit embeddings at or above which units are merged as near-duplicates."""
    dedup_exact_up_to: int = Field(250_000, ge=0)
    """Most units whose near-duplicate pairs are all found exactly. Above it each unit is compared only with
    the units of the 32 k-means cells nearest it, which can miss a rare pair (docs/METHODS.md 1.1): the
    exact search grows as the square of the units (82 s of CPU at 219,204 units on 2 cores, about 1,700 s
    projected at 1,000,000, against 230 s probed)."""
    max_corpus_mb: float = Field(10, gt=0)
    """Largest corpus accepted, in megabytes (10^6 bytes) of input files; a larger one is refused before
    anything is read. Each MB of prose makes about 7,000 units, embedded at about 110 units/s on 2 shared CPU
    cores (far faster on a GPU): raise it (--max-corpus-mb) when that time is acceptable."""
    follow_links: bool = False
    """Read symbolic links inside the corpus folder that point outside it (default: skipped and listed, so a
    link to /etc/shadow never reaches a model); links within the corpus are always read."""
    max_document_mb: float = Field(100, gt=0)
    """Most megabytes (10^6 bytes) one document may decompress to (an Office file's parts together, any
    one PDF stream), and the largest plain file read; a larger one is skipped (docs/CORPORA-LIMITS.md)."""
    max_document_text_mb: float = Field(50, gt=0)
    """Most megabytes of text extracted from one document (one JSONL record); more: the document is skipped."""
    max_document_pages: int = Field(2000, ge=1)
    """Most pages of a PDF or Word file, slides of a deck (a count); more: the file is skipped."""
    max_document_seconds: float = Field(60, gt=0)
    """Most seconds spent reading one file, checked between its pages, slides, records and parts."""
    max_nesting_depth: int = Field(100, ge=1)
    """Deepest nesting of JSON arrays and objects in a JSONL record or a JSON dataset (a count)."""
    cluster_size: int = Field(6, ge=1)
    """Wanted units per cluster (a count); each round makes ceil(uncovered units / cluster_size) clusters,
    and each cluster gets one question."""
    max_rounds: int = Field(8, ge=1)
    """Most exam rounds (cluster, question, answer, judge, update) before the run stops."""
    min_round_coverage: float = Field(0.02, ge=0, le=1)
    """Share (0-1) of a target's remaining units that a round must cover for the target to go on to the
    next round."""
    max_probes: int = Field(1, ge=0)
    """Follow-up (probe) questions per round, a count; 0 turns probing off."""
    max_targeted: int = Field(3, ge=1)
    """Times (a count) a unit may be judged unrelated in answers before it is recorded as unanswered."""
    leak_threshold: float = Field(0.6, gt=0, le=1)
    """Share (0-1] of a target unit's distinctive words that, found in a question, marks the question
    as leaking that unit's answer."""
    question_max_words: int = Field(50, ge=5)
    """Word limit of a question (longer questions are asked again with feedback)."""
    question_gate: bool = False
    """Check every question before any target is asked it (examiner/exam/gate/, docs/METHODS.md): answerable
    from its cluster's units alone, every claimed unit supported, not guessable without the corpus, not a
    near-copy of an earlier question, in the exam's language, no unit labels. A rejected question is
    rewritten once, else its units go back to the pool. Two calls per question (a guess and a check),
    billed as the ledger stage `question_gate`."""
    gate_duplicate_threshold: float = Field(0.9, gt=0, le=1)
    """Cosine similarity (0-1] of question embeddings at or above which the gate rejects a question as a
    near-copy of an earlier one."""
    gate_min_quote_match: float = Field(0.8, ge=0, le=1)
    """Share (0-1) of the checker's quote for a claimed unit that must be found in that unit's text."""
    gate_drop_guessable: bool = False
    """Reject (rewrite or drop) a question the guesser answers right without the corpus; off: only tag it."""
    gate_guesser: str = ""
    """Endpoint that guesses without the corpus (a cheap model); empty: the examiner role's endpoint."""
    answer_max_words: int = Field(200, ge=5)
    """Word limit of a candidate's answer (asked for in the prompt; max_tokens follows from it)."""
    answer_logprobs: bool = False
    """Ask the targets for their answers' token log-probabilities and record exp(mean logprob) as each
    answer's token confidence (off: some endpoints refuse logprobs; the stated confidence is always read)."""
    stop_when: str = ""
    """A stopping rule (`width<=W`, `accuracy>=A`, `accuracy<=A`; examiner/exam/stopping.py): round 1's
    clusters are asked in a seeded random order and no new one starts once every target's anytime-valid
    accuracy interval meets it; the run is then one round. Empty: every cluster, every round."""
    seed: int = Field(0, ge=0)
    """Seed of the exam's own random choices (clustering, projection), 0 or more; not the models' sampling
    seed. Any size is accepted: a seed of 2**30 or more is reduced modulo 2**30 (FAISS takes a signed 32-bit
    seed, and the exam adds the round and cluster group to it), so seeds that differ by 2**30 give the same
    exam."""

    @field_validator("seed")
    @classmethod
    def _seed_in_range(cls, seed: int) -> int:
        return seed % SEED_MODULUS if seed >= SEED_MODULUS else seed
    self_check_share: float = Field(0.05, ge=0, le=1)
    """Share (0-1) of the judged answers (with two or more target units) that the judge marks a second
    time, its units in another seeded order, to measure its self-agreement; 0 turns the self-check off."""
    self_check_min: int = Field(20, ge=0)
    """Fewest answers re-judged by the self-check when that many are available (a count; applies only
    when `self_check_share` is above 0)."""
    paraphrases: int = Field(0, ge=0, le=10)
    """Wordings (a count) the examiner writes of each question the wording check re-asks; every target
    answers each and the judge marks it, beside the exam (rewording.jsonl). 0 turns the check off."""
    paraphrase_share: float = Field(0.25, ge=0, le=1)
    """Share (0-1) of round 1's questions the wording check re-asks in `paraphrases` other wordings
    (seeded; at least 2 questions when that many exist)."""
    control_share: float = Field(0.0, ge=0, le=1)
    """Share (0-1) of round 1's questions beside which the examiner writes a control question the corpus
    cannot answer (a false premise, a swapped entity, an out-of-corpus detail); every target answers it
    and the judge labels the answer declined_or_corrected or accepted_premise (controls.jsonl; never
    counted in accuracy, outcomes or coverage). 0 (the default) turns them off."""
    language: str = Field("auto", pattern=r"^(auto|[a-z]{2,3})$")
    """Language the examiner writes questions, the candidate answers and the judge reasons in: `auto` (the
    language holding most of the corpus text, detected per document) or an ISO 639-1 code such as `zh`."""
    prepare_engine: Literal["local", "ray"] = "local"
    """Where the corpus is read, cut into `sentences` units and embedded: `local` (this process) or `ray`
    (Ray Data stages on a Ray cluster; needs `pip install 'examiner[ray]'`). Same unit ids either way."""
    ray_address: str = ""
    """Ray cluster for `prepare_engine: ray`: `auto` (the cluster this machine belongs to), `ray://head:10001`
    (Ray Client), or empty to start a Ray instance on this machine for the prepare stage."""
    ray_embed_workers: int = Field(1, ge=1)
    """Embedding workers of `prepare_engine: ray`, each loading the model once (e.g. one per GPU)."""
    ray_embed_gpus: float = Field(0, ge=0)
    """GPUs Ray gives each embedding worker (0: CPU workers; 1: a GPU each, for a cluster with GPUs)."""


class JudgeCascade(BaseModel):
    """A cascade of judges (written `roles: {judge: {cascade: [cheap, strong], target_agreement: 0.9,
    risk: 0.1}}`): the cheap judge's verdict on a unit stands where its confidence reaches a threshold
    calibrated on a random sample judged by both, so that with probability at least 1 - risk the cheap
    judge's agreement rate with the strong judge on the units it keeps is at least `target_agreement` (a
    rate over units like these, not the share realised on one exam's kept units; docs/CASCADE.md); every
    other unit goes to the strong judge."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True, allow_inf_nan=False)

    tiers: list[str] = Field(min_length=2, max_length=2)
    """Endpoint names, cheapest first; the last is the strong judge (the `judge` role resolves to it)."""
    target_agreement: float = Field(0.9, gt=0, lt=1)
    """Agreement rate with the strong judge promised (risk-controlled) on the units the cheap judge settles."""
    risk: float = Field(0.1, gt=0, lt=1)
    """Chance allowed that the promise fails (over the draw of the calibration sample)."""
    calibration_share: float = Field(0.1, gt=0, le=1)
    """Share of answers, drawn at random in every round, that both judges mark (the calibration sample)."""
    confidence: Literal["auto", "logprobs", "samples"] = "auto"
    """How the cheap judge's confidence is read: `logprobs`, the probability its one greedy reply gave each
    label (one call per answer); `samples`, the share of `samples` sampled replies that agree; `auto`,
    logprobs where the cheap endpoint says it returns them (`supports_logprobs`), falling back to samples
    for the rest of the run when a reply comes without them."""
    samples: int = Field(5, ge=2, le=20)
    """Verdicts the cheap judge samples per answer when reading confidence from samples; a unit's
    confidence is then the share of samples that give its majority label."""
    temperature: float = Field(0.7, ge=0, le=2)
    """Sampling temperature of the cheap judge's samples."""
    cheap_passages: bool = False
    """Send the cheap judge the Ref-Eval prompt with each unit's source passage below the units
    (prompts/exam_judge_passages.md), for a cheap judge taught to read them: the encoder student distilled
    from an exam (docs/DISTIL.md 5c). The strong judge's prompt stays the one without passages."""

    @property
    def cheap(self) -> str:
        return self.tiers[0]

    @property
    def strong(self) -> str:
        return self.tiers[-1]


class Settings(BaseModel):
    """Everything a command needs: endpoints, role assignments, budget, exam knobs."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True, allow_inf_nan=False)

    endpoints: dict[str, EndpointSpec] = Field(default_factory=dict)
    """Model endpoints by name; `local` (the embedded model) and `simulated` are always defined."""
    roles: dict[str, str] = Field(default_factory=dict)
    """The endpoint name each model role uses (see ROLES); a role not named uses `local`."""
    budget_usd: float | None = Field(None, ge=0)
    """Most a run may spend, in US dollars at the endpoints' prices (None: no limit); a call that could
    exceed it is not made and the run stops as `budget_exhausted`."""
    allow_simulated_roles: bool = False
    """Let an exam mix simulated and real endpoints among its examiner, judge(s) and target(s)
    (`--allow-simulated-roles`). Off, such a mix is refused before the run starts: a simulated examiner asks
    filler questions and a simulated judge's verdicts say nothing about a real target (examiner.exam.role_mix)."""
    cache: bool = True
    """Whether model replies are cached (cache.sqlite) and reused on resume."""
    cache_dir: str | None = None
    """Folder of a response cache shared between runs (`--cache DIR`): a new run answers from it every
    request an earlier run already paid for. None: the cache lives in the run directory."""
    embedding_cache: str | None = None
    """SQLite file of unit and answer embeddings shared between runs (`--embedding-cache FILE`): a new run
    on a corpus an earlier run embedded loads its vectors instead of embedding them again (keys are sha256
    of model and text, so runs on other texts or models never collide). None: `<run>/embeddings.sqlite`."""
    max_passed_chars: int = Field(DEFAULT_MAX_PASSED_CHARS, ge=MIN_PASSED_CHARS)
    """Most characters of one model's text (a target's answer, a judge's reason, a revision, a debate
    statement) put into another model's prompt; a longer text is cut there and ends with the marker
    `[... cut by examiner: N of M characters shown]` (examiner.core.passed_text), and reports count the cuts."""
    exam: ExamSettings = Field(default_factory=ExamSettings)
    """Knobs of the Ref-Eval exam."""
    judge_panel: list[str] = Field(default_factory=list)
    """Endpoints of a judge panel (written `roles: {judge: [A, B, C]}`): each judges every answer and
    the majority label is the verdict; ties and all-unscored stay unscored. Empty: the `judge` role's
    endpoint judges alone."""
    judge_cascade: JudgeCascade | None = None
    """A cheap judge that escalates to a strong one (written `roles: {judge: {cascade: [cheap, strong],
    ...}}`); None: no cascade."""

    @model_validator(mode="before")
    @classmethod
    def _judge_panel_from_roles(cls, data: Any) -> Any:
        """`roles: {judge: [A, B, C]}` names a panel; the judge role then resolves to its first member.
        `roles: {judge: {cascade: [cheap, strong], ...}}` names a cascade; the role resolves to the strong
        judge."""
        roles = data.get("roles") if isinstance(data, dict) else None
        if isinstance(roles, dict) and isinstance(roles.get("judge"), dict):
            spec = dict(roles["judge"])
            if "cascade" not in spec:
                raise ValueError("roles.judge: a mapping must name `cascade: [cheap, strong]`")
            tiers = spec.pop("cascade")
            if not isinstance(tiers, list) or len(tiers) != 2:
                raise ValueError("roles.judge.cascade: name two endpoints, the cheap judge first, then the strong one")
            tiers = [str(t) for t in tiers]
            data = {**data, "roles": {**roles, "judge": tiers[-1]}, "judge_cascade": {"tiers": tiers, **spec}}
        elif isinstance(roles, dict) and isinstance(roles.get("judge"), list):
            members = [str(m) for m in roles["judge"]]
            if not members:
                raise ValueError("roles.judge: a judge panel needs at least one endpoint")
            data = {**data, "roles": {**roles, "judge": members[0]}, "judge_panel": members}
        return data

    @field_validator("embedding_cache")
    @classmethod
    def _expand_home(cls, path: str | None) -> str | None:
        """`~` stands for the home folder, as on the command line; an empty value means none."""
        return str(Path(path).expanduser()) if path else None

    @field_validator("roles")
    @classmethod
    def _known_roles(cls, roles: dict[str, str]) -> dict[str, str]:
        for role in roles:
            if role not in ROLES:
                raise ValueError(f"unknown role '{role}' (known: {', '.join(ROLES)})")
        return roles

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        """The built-in endpoints and role assignments, filled in before validation (settings are frozen)."""
        if not isinstance(data, dict):
            return data
        endpoints = dict(data.get("endpoints") or {})
        endpoints.setdefault("local", EndpointSpec(
            provider="local", model="smollm2-135m-instruct", max_concurrency=1, supports_n=False,
            structured_output="json_object_schema",
        ))
        endpoints.setdefault("simulated", EndpointSpec(provider="simulated", model="sim"))
        roles = dict(data.get("roles") or {})
        for role in ROLES:
            roles.setdefault(role, "local")
        return {**data, "endpoints": endpoints, "roles": roles}

    @model_validator(mode="after")
    def _references(self) -> "Settings":
        for role, name in [*self.roles.items(), *(("judge", m) for m in self.judge_panel)]:
            if name not in self.endpoints:
                raise ValueError(
                    f"role '{role}' uses endpoint '{name}', which is not defined "
                    f"(defined: {', '.join(sorted(self.endpoints))})"
                )
        if len(set(self.judge_panel)) != len(self.judge_panel):
            raise ValueError(f"judge panel members must be distinct endpoints, got {self.judge_panel}")
        if self.judge_cascade is not None:
            tiers = self.judge_cascade.tiers
            for name in tiers:
                if name not in self.endpoints:
                    raise ValueError(f"judge cascade uses endpoint '{name}', which is not defined "
                                     f"(defined: {', '.join(sorted(self.endpoints))})")
            if len(set(tiers)) != len(tiers):
                raise ValueError(f"judge cascade tiers must be distinct endpoints, got {tiers}")
            if self.judge_panel:
                raise ValueError("a judge cascade and a judge panel cannot be combined")
        return self

    def endpoint_for(self, role: str) -> tuple[str, EndpointSpec]:
        """The (name, spec) a role resolves to."""
        if role not in self.roles:
            raise ConfigError(f"unknown role '{role}' (known: {', '.join(ROLES)})")
        name = self.roles[role]
        return name, self.endpoints[name]

    def endpoint(self, name: str) -> EndpointSpec:
        """An endpoint by name, with a clear error for a typo."""
        if name not in self.endpoints:
            raise ConfigError(f"unknown endpoint '{name}' (defined: {', '.join(sorted(self.endpoints))})")
        return self.endpoints[name]

    def merged(self, changes: Mapping[str, Any]) -> "Settings":
        """A validated copy with `changes` merged in: a nested mapping merges key by key (so
        `{"exam": {"max_rounds": 2}}` keeps the other exam knobs), any other value replaces.
        Raises ConfigError when the result is not valid."""
        return validate_settings(_merge(self.model_dump(), changes))

    def simulated(self) -> "Settings":
        """A copy where every endpoint `X` gains a simulated twin `sim-X` (same prices and concurrency,
        the `simulated` endpoint's options) and every role uses the twin of its endpoint.

        A twin's transport settings (timeout, attempts, back-off) are the `simulated` endpoint's, not
        X's: where that endpoint injects faults, a short timeout makes its `timeout` fault fire the
        client timeout and exercise the retry path, as a slow real server would. Batch mode and its
        settings are X's, so a simulated run predicts batch prices and exercises the batch path."""
        data = self.model_dump()
        sim = self.endpoints["simulated"]
        sim_options = sim.options
        for name, spec in self.endpoints.items():
            if spec.provider == "simulated" or name.startswith("sim-"):
                continue
            data["endpoints"][f"sim-{name}"] = EndpointSpec(
                provider="simulated",
                model=spec.model,
                **spec.prices(),
                max_concurrency=max(spec.max_concurrency, 8),
                timeout_s=sim.timeout_s,
                max_attempts=sim.max_attempts,
                backoff_base_s=sim.backoff_base_s,
                options=sim_options,
                **{k: v for k, v in spec.model_dump().items() if k.startswith("batch") and k not in PRICE_FIELDS},
            ).model_dump()
        for role, name in self.roles.items():
            if self.endpoints[name].provider != "simulated":
                data["roles"][role] = f"sim-{name}"
        data["judge_panel"] = [n if self.endpoints[n].provider == "simulated" else f"sim-{n}" for n in self.judge_panel]
        if self.judge_cascade is not None:
            data["judge_cascade"]["tiers"] = [n if self.endpoints[n].provider == "simulated" else f"sim-{n}"
                                              for n in self.judge_cascade.tiers]
        return Settings.model_validate(data)


def _merge(base: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `changes` merged in, recursively for mappings on both sides."""
    out = dict(base)
    for key, value in changes.items():
        old = out.get(key)
        out[key] = _merge(old, value) if isinstance(old, Mapping) and isinstance(value, Mapping) else value
    return out


_KINDS = {
    "float_parsing": "must be a number", "float_type": "must be a number",
    "int_parsing": "must be a whole number", "int_type": "must be a whole number",
    "int_from_float": "must be a whole number", "int_parsing_size": "must be a whole number of at most 4300 digits",
    "bool_parsing": "must be true or false", "bool_type": "must be true or false",
    "string_type": "must be text", "dict_type": "must be a mapping (name: value lines)",
    "model_type": "must be a mapping (name: value lines)", "model_attributes_type": "must be a mapping",
    "list_type": "must be a list", "finite_number": "must be a finite number",
    "extra_forbidden": "is not a known setting", "missing": "is required",
}
"""Pydantic error types, said in words a user of the config file knows."""


def _shown(value: object) -> str:
    """A bad value as the error line shows it: short, one line, without credentials."""
    from examiner.core.redact import redact_text

    text = repr(value) if isinstance(value, str) else str(value) if isinstance(value, (int, float, bool)) else \
        type(value).__name__
    text = redact_text(" ".join(text.split()))
    return text if len(text) <= 60 else text[:57] + "..."


def _describe(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "config"
    kind = str(first.get("type", ""))
    message = _KINDS.get(kind) or str(first["msg"]).removeprefix("Value error, ").removeprefix("Input ")
    if kind not in ("missing", "extra_forbidden") and not kind.startswith("value_error") and "input" in first:
        message += f", got {_shown(first['input'])}"
    return f"{where}: {message}" if where != "config" else message


def _shape_problem(value: object, limit: int) -> str:
    """Why `value` is no settings mapping a person wrote: mappings and lists nested deeper than `limit`
    levels, or more than MAX_VALUES values (a YAML alias bomb expands to billions through shared
    references); empty when neither. Iterative, and it stops counting at the first problem."""
    todo: list[tuple[object, int]] = [(value, 1)]
    seen = 0
    while todo:
        item, level = todo.pop()
        seen += 1
        if seen > MAX_VALUES:
            return f"holds more than {MAX_VALUES:,} values (YAML aliases that expand?)"
        if isinstance(item, Mapping):
            children: Iterable[object] = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if level > limit:
            return f"nested too deeply (at most {MAX_DEPTH} levels)"
        todo += [(child, level + 1) for child in children]
    return ""


def budget_from_env(env: Mapping[str, str]) -> float | None:
    """EXAMINER_BUDGET_USD in dollars (None when unset): read on its own by `resume`, whose other
    settings come from the run directory."""
    if not env.get("EXAMINER_BUDGET_USD"):
        return None
    try:
        return float(env["EXAMINER_BUDGET_USD"])
    except ValueError:
        raise ConfigError("EXAMINER_BUDGET_USD must be a number of dollars") from None


def load_settings(
    path: str | Path | None = None,
    *,
    role_overrides: dict[str, str] | None = None,
    budget_usd: float | None = None,
    environ: dict[str, str] | None = None,
) -> Settings:
    """Merge defaults, YAML file, environment and flags into validated Settings (ConfigError on any problem)."""
    env = os.environ if environ is None else environ
    data: dict[str, Any] = read_settings_file(path) if path is not None else {}
    given_roles = data.get("roles") or {}
    if not isinstance(given_roles, Mapping):
        where = f"{path}: " if path is not None else ""
        raise ConfigError(f"{where}invalid configuration: roles: must be a mapping of role to endpoint name, "
                          f"got {type(given_roles).__name__}")
    roles = dict(given_roles)
    for key, value in env.items():
        if key.startswith("EXAMINER_ROLE_") and value:
            roles[key.removeprefix("EXAMINER_ROLE_").lower()] = value
    roles.update(role_overrides or {})
    data["roles"] = roles
    if (env_budget := budget_from_env(env)) is not None:
        data["budget_usd"] = env_budget
    if budget_usd is not None:
        data["budget_usd"] = budget_usd
    return validate_settings(data, "" if path is None else str(path))


def read_settings_file(path: str | Path) -> dict[str, Any]:
    """The mapping a settings YAML file holds (a user's --config or a run's config.yaml): a missing,
    unreadable or non-YAML file, or one that is not a mapping, is a ConfigError naming the file."""
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"config file {file} does not exist")
    try:
        loaded = yaml.safe_load(file.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {file} is not UTF-8 text (byte {exc.start})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"config file {file} is not valid YAML{where}") from None
    except RecursionError:
        raise ConfigError(f"config file {file} is nested too deeply (at most {MAX_DEPTH} levels)") from None
    except (ValueError, TypeError, OverflowError) as exc:  # e.g. an integer of more than 4300 digits
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:120]
        raise ConfigError(f"config file {file} holds a value YAML cannot read ({reason})") from None
    except OSError as exc:
        raise ConfigError(f"config file {file} cannot be read ({exc.strerror or exc})") from None
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise ConfigError(f"config file {file} must hold a mapping at the top level")
    if problem := _shape_problem(loaded, MAX_DEPTH):
        raise ConfigError(f"config file {file} {'is ' if problem.startswith('nested') else ''}{problem}")
    return loaded


def validate_settings(data: Mapping[str, Any], source: str = "") -> Settings:
    """Settings from a mapping, with the one validation every command uses (`run` on flags and files,
    `resume` on the run's config.yaml): a ConfigError naming the first bad field, and `source` if given."""
    where = f"{source}: " if source else ""
    if problem := _shape_problem(data, MAX_DEPTH + 1):
        raise ConfigError(f"{where}invalid configuration: {problem}")
    try:
        return Settings.model_validate(dict(data))
    except ValidationError as exc:
        raise ConfigError(f"{where}invalid configuration: {_describe(exc)}") from None
    except RecursionError:
        raise ConfigError(f"{where}invalid configuration: nested too deeply (at most {MAX_DEPTH} levels)") from None
