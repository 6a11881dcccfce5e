"""Role-aware synthetic behaviour of the simulated backend, and the registry that dispatches to it.

A behaviour is a function of one `SimRequest` (one choice of one chat request) that returns the
completion: text, or a JSON-able value that the server serialises (and fits to the requested schema).
Dispatch is on the `X-Examiner-Role` / `X-Examiner-Stage` headers the gateway sends; what a prompt
states in prose (debate round and last round, word limit, score scale, ...) comes in the
`X-Examiner-Hints` JSON header (`SimRequest.hints`). Behaviours never read prompt wording: only the
data blocks that code builds and substitutes into prompts (below), so rewording a prompt file changes
no simulated result (tests/agents/test_prompt_rewording.py rewrites every prompt to check it).

Other modules add behaviours without editing this one:

    from examiner.simulator import register_behaviour, SimRequest

    @register_behaviour("pairwise")              # every stage of the role
    def _pairwise(req: SimRequest) -> dict: ...

Lookup order: (role, stage), then (role, any stage), then the generic behaviour. A later registration
for the same key replaces an earlier one. The package imports judging_roles and meta_roles, so every
server, in this process or another, knows every role.

Data blocks the behaviours read (the real agents build them the same way):
  `<unit id="ID">text</unit>` (or, under a call's short names, `<U1>text` lines),
  `<passage id="ID">text</passage>`, a question ending in `[ref:ID1,ID2]`,
  in answers the claim markers `ID:known` / `ID:wrong`, and tagged blocks whose tags stand on lines of
  their own (`<instruction>` / `</instruction>` around a substituted value; see prompting/meta_blocks.py).
Every value in a prompt is escaped (agents/prompting/fence.py): behaviours find blocks by their tags,
which no value can forge, and `unescape` what they read. A forged `<unit id=...>` or `[ref:...]` in a
unit's text is therefore just text; the judge reads claim markers from the answer's fence only.
A call that shows units under short names (U1..Uk, agents/aliases.py) sends the `aliases` hint
(name -> unit id): the simulated examiner then writes unit ids in `[ref:...]` and the simulated judge
reads the answer's markers by unit id, while both reply with the names the prompt used.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from statistics import NormalDist
from typing import Any, Union

from examiner.simulator.prose import (
    filler_sentence,
    filler_text,
    rng_for,
    stable_int,
    stable_uniform,
)
from examiner.simulator.logprobs import ChosenValue
from examiner.simulator.question_language import simulated_question
from examiner.simulator.schema_faker import fake_value

Completion = Union[str, dict, list]
Behaviour = Callable[["SimRequest"], Completion]

DEFAULT_PROFILE = {"known": 0.6, "wrong": 0.2, "unknown": 0.2}
DEFAULT_RECALL = 0.85
DEFAULT_TARGETS_PER_QUESTION = 4

UNIT_RE = re.compile(r'<unit id="([^"]*)"')
NAMED_UNIT_RE = re.compile(r"^<(U\d+)>(.*?)(?:</\1>)?$", re.M)
"""A unit line of a call that names its units U1..Uk (agents/aliases.py): name, escaped text. The line's
end closes it (`<U1>text`); a closing `</U1>` (the form before) is read too."""
PASSAGE_RE = re.compile(r'<passage id="([^"]*)">(.*?)</passage>', re.S)
REF_RE = re.compile(r"\[ref:([^\]]*)\]")
MARK_RE = re.compile(r"([^\s\[\](),;]+):(known|wrong|declined)\b")
DATA_RE = re.compile(r'<(unit|passage) id="[^"]*">.*?</\1>|<([a-z][a-z0-9_]*)>\n.*?\n</\2>|\[ref:[^\]]*\]'
                     r'|^\[U\d+\] [^\n]*', re.S | re.M)
VALUE_FENCES = ("exam_question", "exam_answer", "units", "passages", "steps", "criterion", "rubric",
                "own_judgment", "other_judgment", "debate", "referee_question")
"""Fences that carry one substituted value (or a list of units or passages). Prompts showed these values
bare before values were fenced, so `data_of` keys them as the bare value: fencing changed no simulated
result. The other tagged blocks (item and assessment blocks, `<instruction>`, `<response>`, ...) are
keyed whole, as they always were."""
_VALUE_FENCE_LINE = re.compile(rf"^</?(?:{'|'.join(VALUE_FENCES)})>$\n?", re.M)
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")


@dataclass
class SimRequest:
    """One choice of one chat-completions request, with everything a behaviour may need."""

    body: dict[str, Any]
    role: str
    stage: str
    index: int
    """Choice index (0 .. n-1)."""
    seed: int
    """The server's seed (fixes knowledge profiles)."""
    options: Mapping[str, Any]
    oracle: Mapping[str, Any] = field(default_factory=dict)
    """Gold labels registered through POST /sim/oracle, keyed by sha1 of the item text."""
    schema: dict[str, Any] | None = None
    """The JSON schema of response_format json_schema, if any."""
    json_mode: bool = False
    """True when response_format asks for JSON (json_schema or json_object)."""
    hints: Mapping[str, Any] = field(default_factory=dict)
    """The call's facts sent in the `X-Examiner-Hints` header (round, max_rounds, max_words, scale, ...)."""
    chosen: list[ChosenValue] = field(default_factory=list)
    """Values the behaviour chose with a known probability; their tokens' logprobs say it (logprobs.py)."""

    @property
    def model(self) -> str:
        return str(self.body.get("model", "sim"))

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages") or []

    @property
    def temperature(self) -> float:
        value = self.body.get("temperature")
        return float(value) if value is not None else 1.0

    @property
    def request_seed(self) -> Any:
        return self.body.get("seed")

    @property
    def max_tokens(self) -> int | None:
        value = self.body.get("max_completion_tokens", self.body.get("max_tokens"))
        return int(value) if value is not None else None

    @cached_property
    def last_user(self) -> str:
        """Text of the last user message ('' when there is none)."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return content_text(message.get("content"))
        return ""

    @cached_property
    def prompt_key(self) -> int:
        """The base of this request's randomness: model, role, stage, hints and the conversation's data.

        Of a system or user message only its data blocks count (`data_of`), never its wording, so a
        reworded prompt gives the same completions; an assistant message (a model's reply) counts whole.
        A conversation without any data block (a free-form prompt) is keyed on its text."""
        data = [content_text(m.get("content")) if m.get("role") == "assistant" else data_of(content_text(m.get("content")))
                for m in self.messages]
        if not any(data):
            data = [content_text(m.get("content")) for m in self.messages]
        head = [self.model, self.role, self.stage, json.dumps(dict(self.hints), sort_keys=True, default=str)]
        return stable_int(*head, *(f"{m.get('role')}:{d}" for m, d in zip(self.messages, data)))

    def hint(self, name: str, default: Any) -> Any:
        """A hint the gateway sent with the call, or `default` when it sent none."""
        value = self.hints.get(name)
        return default if value is None else value

    @property
    def sampling_salt(self) -> tuple[Any, ...]:
        """What makes choices differ when sampling (temperature > 0): request seed, temperature, choice
        index. At temperature 0 the output depends on the conversation alone, as with a greedy model."""
        if self.temperature <= 0:
            return ()
        return (self.request_seed, self.temperature, self.index)

    def rng(self, *salt: object) -> random.Random:
        """A generator fixed by seed, conversation, request seed/temperature/choice and `salt`."""
        return rng_for(self.seed, self.prompt_key, *self.sampling_salt, *salt)

    def option(self, name: str, default: Any) -> Any:
        value = self.options.get(name)
        return default if value is None else value


def content_text(content: Any) -> str:
    """Text of a message content (a string, or a list of OpenAI content parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def oracle_key(text: str) -> str:
    """The key of an item in the oracle (POST /sim/oracle): sha1 hex of its UTF-8 text."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def unit_category(seed: int, model: str, unit_id: str, profile: Mapping[str, float] | None = None) -> str:
    """Whether the simulated `model` knows unit `unit_id`: "known", "wrong", "declined" or "unknown".

    Fixed by (seed, model, unit id) alone, so the true accuracy of a simulated candidate is known in
    advance: share known / (known + wrong + declined) of the units it is asked about. "declined" (profile
    key `declined`, default 0) is a unit the model does not know and says so when asked: its answer
    declines about it (the `ID:declined` marker), which the judge labels `abstained`; "wrong" is one it
    does not know and invents. A profile without `declined` draws exactly as before it existed.
    """
    p = profile or DEFAULT_PROFILE
    known, wrong, unknown, declined = (float(p.get(k, 0.0)) for k in ("known", "wrong", "unknown", "declined"))
    total = known + wrong + unknown + declined
    if total <= 0:
        return "unknown"
    u = stable_uniform(seed, "category", model, unit_id) * total
    if u < known:
        return "known"
    if u < known + wrong:
        return "wrong"
    if u < known + wrong + unknown:
        return "unknown"
    return "declined"


# ---------------------------------------------------------------- registry

_REGISTRY: dict[tuple[str, str | None], Behaviour] = {}
GENERIC = "*"


def register_behaviour(role: str, stage: str | None = None) -> Callable[[Behaviour], Behaviour]:
    """Decorator: use `fn` for requests of `role` (and `stage`, or any stage when None)."""

    def decorate(fn: Behaviour) -> Behaviour:
        _REGISTRY[(role, stage)] = fn
        return fn

    return decorate


def find_behaviour(role: str, stage: str) -> Behaviour:
    """The behaviour for a role and stage: exact, then role-wide, then generic."""
    return _REGISTRY.get((role, stage)) or _REGISTRY.get((role, None)) or _REGISTRY[(GENERIC, None)]


# ---------------------------------------------------------------- helpers

def ref_ids(text: str) -> list[str]:
    """Ids of the last `[ref:...]` marker in `text`."""
    end = text.rfind("[ref:")
    if end < 0:
        return []
    match = REF_RE.match(text, end)
    if not match:
        return []
    return [part.strip() for part in match.group(1).split(",") if part.strip()]


def unescape(text: str) -> str:
    """A value as it was before a prompt escaped it: the inverse of examiner.agents.prompting.fence.escape (`&lt;`,
    `&gt;`, `&amp;` back to `<`, `>`, `&`; other entities stay). The simulator sits below the prompting
    layer, so it keeps its own copy; tests/agents/test_prompt_fencing.py holds the two to each other."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def data_of(text: str) -> str:
    """The data blocks of a prompt message (unit, passage and tagged blocks, `[ref:...]` markers, claim
    markers), joined and unescaped: what code substituted into the prompt, without the prompt's wording.
    A value fence (VALUE_FENCES) counts as the value it holds, a `<U1>text` line as `[U1] text`:
    the forms these data had before prompts fenced them, so the keys (and every simulated result) stayed."""
    text = NAMED_UNIT_RE.sub(r"[\1] \2", _VALUE_FENCE_LINE.sub("", text))
    blocks = [unescape(m.group(0)) for m in DATA_RE.finditer(text)]
    blocks += [f"{uid}:{kind}" for uid, kind in MARK_RE.findall(unescape(text))]
    return "\x1f".join(blocks)


def fence_content(text: str, tag: str) -> str | None:
    """The unescaped value of the last `<tag>` fence in `text` (tags on lines of their own); None when
    there is none."""
    found = re.findall(rf"^<{tag}>\n(.*?)\n</{tag}>$", text, flags=re.S | re.M)
    return unescape(found[-1]) if found else None


def shown_units(text: str) -> list[str]:
    """Ids or names of the units a prompt shows, in order: `<unit id="ID">` blocks, or `<U1>text`
    lines (a call that names its units U1..Uk, agents/aliases.py)."""
    return list(dict.fromkeys(UNIT_RE.findall(text) or [name for name, _ in NAMED_UNIT_RE.findall(text)]))


def unit_texts(text: str) -> dict[str, str]:
    """Unit id or name -> unescaped text, of every unit a prompt shows."""
    pairs = re.findall(r'<unit id="([^"]*)">(.*?)</unit>', text, flags=re.S) + NAMED_UNIT_RE.findall(text)
    return {name: unescape(body) for name, body in pairs}


def unit_id_of(req: SimRequest, name: str) -> str:
    """The unit id behind a name the prompt shows: the call's `aliases` hint (short name -> unit id) when
    it sent one, else the name itself. Knowledge and claim markers follow unit ids, never a call's names."""
    return str(req.hint("aliases", {}).get(name, name))


def claim_markers(text: str) -> dict[str, str]:
    """Claim markers `ID:known` / `ID:wrong` in `text`, by unit id (a later marker wins)."""
    return {uid: kind for uid, kind in MARK_RE.findall(text)}


def split_sentences(text: str) -> list[str]:
    """Sentences of a passage (a light rule: end punctuation followed by a capital or digit)."""
    return [s.strip() for s in _SENTENCE_SPLIT.split(text.strip()) if s.strip()]


# ---------------------------------------------------------------- generic

@register_behaviour(GENERIC)
def generic(req: SimRequest) -> Completion:
    """Unknown roles: a schema-shaped value, a JSON object, or filler text of max_tokens/3 tokens."""
    rng = req.rng("generic")
    if req.schema is not None:
        return fake_value(req.schema, rng)
    budget = max(1, (req.max_tokens or 512) // 3)
    if req.json_mode:
        return {"text": filler_text(rng, min(budget, 60))}
    return filler_text(rng, budget)


# ---------------------------------------------------------------- examiner

@register_behaviour("examiner", "question")
@register_behaviour("examiner", "probe")
def examiner_question(req: SimRequest) -> Completion:
    """A ~40-token wh-question about the listed units, ending in `[ref:...]` with its target ids."""
    prompt = req.last_user
    units = shown_units(prompt) or ref_ids(prompt)
    if not units:  # a re-ask ("that reply could not be used...") names no units: read the earlier prompt
        for message in reversed(req.messages):
            if message.get("role") == "user" and shown_units(content_text(message.get("content"))):
                units = shown_units(content_text(message.get("content")))
                break
    per_question = int(req.option("targets_per_question", DEFAULT_TARGETS_PER_QUESTION))
    target = units[: 1 + max(0, per_question)]
    rng = req.rng("question")
    question = simulated_question(req.messages, req.options, req.seed, rng, target)  # in the exam's language
    unit_ids = [unit_id_of(req, name) for name in target]
    return {"question": f"{question} [ref:{','.join(unit_ids)}]", "target": target}


@register_behaviour("examiner", "rewording")
def examiner_paraphrase(req: SimRequest) -> Completion:
    """`count` rewordings of the shown question: a numbered lead-in before its words, its `[ref:...]`
    marker kept, so each wording is a new text about the same units (deterministic)."""
    question = fence_content(req.last_user, "exam_question") or ""
    count = int(req.hint("count", 1))
    words, _, refs = question.rpartition("[ref:")
    words, marker = (words.strip(), f" [ref:{refs}") if refs else (question.strip(), "")
    leads = ("Put another way,", "In other words,", "Said differently,", "To ask it again,", "Rephrased,")
    return {"paraphrases": [f"{leads[k % len(leads)]} ({k + 1}) {words}{marker}" for k in range(count)]}


@register_behaviour("examiner", "extract_units")
def examiner_extract_units(req: SimRequest) -> Completion:
    """Every sentence of every listed passage, as a unit."""
    units = [
        {"passage_id": pid, "text": sentence}
        for pid, text in PASSAGE_RE.findall(req.last_user)
        for sentence in split_sentences(unescape(text))
    ]
    return {"units": units}


# ---------------------------------------------------------------- candidate

def _profile(req: SimRequest) -> Mapping[str, float]:
    return req.option("knowledge", DEFAULT_PROFILE)


@register_behaviour("candidate")
def candidate_answer(req: SimRequest) -> Completion:
    """A ~150-token one-paragraph answer; recalled units carry `ID:known` / `ID:wrong` markers.

    The unit's category is fixed per (seed, model, unit); whether it is recalled for this question
    is a seeded draw with probability `recall` (re-drawn per choice only when sampling).
    """
    question = fence_content(req.last_user, "exam_question") or req.last_user
    recall = float(req.option("recall", DEFAULT_RECALL))
    profile = _profile(req)
    rng = req.rng("answer")
    claims: list[str] = []
    shift = wording_shift(req, question)
    for uid in ref_ids(question):
        category = reworded(req, unit_category(req.seed, req.model, uid, profile), profile, shift, question, uid)
        if category == "unknown":
            continue
        if category == "declined":  # a model that knows it does not know says so whenever asked
            claims.append(f"I do not know this and would rather not guess ({uid}:declined).")
            continue
        if stable_uniform(req.seed, "recall", uid, req.prompt_key, *req.sampling_salt) >= recall:
            continue
        claims.append(f"{filler_sentence(rng)[:-1]} ({uid}:{category}).")
    if claims:
        opening = "Here is what I can say about this."
        body = " ".join(claims)
    else:
        opening = "I am not sure about the specifics here, but some related background may help."
        body = ""
    used = 12 + 20 * len(claims)
    rest = filler_text(rng, max(25, 150 - used))
    answer = " ".join(part for part in (opening, body, rest) if part)
    stated = stated_confidence_line(req, claims)
    return runaway(answer, int(req.option("answer_chars", 0)), rng) + stated


def wording_shift(req: SimRequest, question: str) -> float:
    """Option `wording_sd` (default 0, no effect): the wording's shift of the chance that a unit the model
    recalls is right, normal with that standard deviation, fixed per (seed, model, question text without its
    `[ref:...]` marker), so every wording of a question moves all its units together and the true wording
    variance is known (experiments/wording_variance.py)."""
    sd = float(req.option("wording_sd", 0.0))
    if sd <= 0:
        return 0.0
    words = question.rpartition("[ref:")[0] or question
    u = min(max(stable_uniform(req.seed, "wording", req.model, words.strip()), 1e-12), 1 - 1e-12)
    return sd * NormalDist().inv_cdf(u)


def reworded(req: SimRequest, category: str, profile: Mapping[str, float], shift: float, question: str,
             uid: str) -> str:
    """A known/wrong category moved by the wording's shift: the chance of "known" among the recalled
    known-or-wrong units becomes p + shift (clipped to [0, 1]), p the profile's known / (known + wrong)."""
    if shift == 0 or category not in ("known", "wrong"):
        return category
    known, wrong = float(profile.get("known", 0.0)), float(profile.get("wrong", 0.0))
    if known + wrong <= 0:
        return category
    p = known / (known + wrong)
    u = stable_uniform(req.seed, "reworded", req.model, question, uid)
    if shift < 0 and category == "known":
        return "wrong" if p > 0 and u < min(1.0, -shift / p) else category
    if shift > 0 and category == "wrong":
        return "known" if p < 1 and u < min(1.0, shift / (1 - p)) else category
    return category


def stated_confidence_line(req: SimRequest, claims: list[str]) -> str:
    """The `Confidence: N%` line the answer prompt asks for, with option `stated_confidence`: `calibrated`
    states the share of the answer's claims that are right (so among the units of answers stating N %, N %
    are right), `overconfident` states 95-99 % whatever it knows; without the option (the default) no line,
    so simulated exams written before it are unchanged."""
    mode = req.option("stated_confidence", "")
    if not mode:
        return ""
    marks = [claim.rsplit(":", 1)[1].rstrip(").") for claim in claims]
    attempted = [m for m in marks if m in ("known", "wrong")]
    if mode == "overconfident":
        value = 95 + int(5 * stable_uniform(req.seed, "stated", req.prompt_key))
    else:
        value = round(100 * attempted.count("known") / len(attempted)) if attempted else 5
    return f"\nConfidence: {min(value, 99) if mode == 'overconfident' else value}%"


def runaway(answer: str, chars: int, rng: random.Random) -> str:
    """`answer` padded with filler to `chars` characters (option `answer_chars`, with `ignores_max_tokens`:
    a target that writes on past its max_tokens, what Settings.max_passed_chars guards the judge against);
    as it is when `chars` is not longer."""
    parts = [answer]
    size = len(answer)
    while size < chars:
        more = " " + filler_text(rng, 400)
        parts.append(more)
        size += len(more)
    return "".join(parts)[:max(chars, len(answer))]


# ---------------------------------------------------------------- judge

_OTHER_LABELS = {
    "correct": ("incorrect", "unrelated"),
    "incorrect": ("correct", "unrelated"),
    "unrelated": ("correct", "incorrect"),
    "abstained": ("incorrect", "unrelated"),
}
_REASON_OPENING = {
    "correct": "The answer states this point in a way that agrees with the reference unit.",
    "incorrect": "The answer addresses this point but contradicts what the reference unit says.",
    "unrelated": "The answer does not address the content of this reference unit.",
    "abstained": "The answer declines to say anything about this reference unit.",
}


DEFAULT_REASON_TOKENS = 44
"""Filler tokens after the opening sentence of a reason when the call states no reason policy."""


def reason_for(req: SimRequest, label: str, rng: random.Random) -> str:
    """A reason as the call's prompt asks for it: the `reason_words` hint maps each label to the most
    words the prompt allows (a label it leaves out, or 0: no reason); the simulated judge writes half of
    that. Without the hint: the opening sentence and ~44 filler tokens."""
    limits = req.hint("reason_words", None)
    if limits is None:
        return f"{_REASON_OPENING[label]} {filler_text(rng, DEFAULT_REASON_TOKENS)}"
    words = int(limits.get(label, 0)) // 2
    if words <= 0:
        return ""
    text = f"{_REASON_OPENING[label]} {filler_text(rng, words * 2)}"
    return " ".join(text.split()[:words])


MARK_LABELS = {"known": "correct", "wrong": "incorrect", "declined": "abstained"}
"""The judge's label for each claim marker of an answer (no marker: `unrelated`): the simulator's truth,
which a noiseless simulated judge reproduces and `judge_noise` departs from."""


@register_behaviour("judge")
def judge_verdicts(req: SimRequest) -> Completion:
    """One verdict per listed unit, read from the claim markers of the answer (its `<exam_answer>` fence,
    else the whole prompt); `judge_noise` flips a share. With `judge_difficulty: k` the share differs
    from unit to unit: each (unit, request) draws its own flip chance from Beta(noise k, (1 - noise) k)
    (mean `judge_noise`), so sampled verdicts disagree more on the hard units, which is what a cascade's
    sampled confidence reads (examiner.judging.cascade).

    Asked for logprobs, the judge says how sure it was of each label: the chance it gave that label
    (1 - flip chance when it kept the answer's label, the flip chance when it flipped), so a greedy
    reading of its log-probabilities is a calibrated confidence; with `judge_confidence: overconfident`
    it claims 95-100 % whatever happened (the miscalibrated judge a cascade must survive)."""
    prompt = req.last_user
    answer = fence_content(prompt, "exam_answer")
    markers = claim_markers(unescape(prompt) if answer is None else answer)
    units = shown_units(prompt) or ref_ids(prompt) or list(markers)
    noise = float(req.option("judge_noise", 0.0))
    difficulty = float(req.option("judge_difficulty", 0.0))
    answer_key = req.prompt_key
    rng = req.rng("judge")
    verdicts = []
    for uid in units:
        unit = unit_id_of(req, uid)
        mark = markers.get(unit)
        label = MARK_LABELS.get(mark or "", "unrelated")
        chance = noise
        if 0 < noise < 1 and difficulty > 0:
            chance = rng_for(req.seed, "difficulty", unit, answer_key).betavariate(noise * difficulty,
                                                                                 (1 - noise) * difficulty)
        kept = label
        if chance > 0 and stable_uniform(req.seed, "noise", unit, answer_key, *req.sampling_salt) < chance:
            label = _OTHER_LABELS[label][stable_int(req.seed, "flip", unit, answer_key) % 2]
        if req.body.get("logprobs"):
            req.chosen.append(_label_choice(req, uid, label, kept, chance, unit, answer_key))
        verdicts.append({"unit_id": uid, "type": label, "reason": reason_for(req, label, rng)})
    return judge_reply(req, verdicts)


def _label_choice(req: SimRequest, name: str, label: str, kept: str, chance: float, unit: str,
                  answer_key: int) -> ChosenValue:
    """How sure the judge was of `label` for unit `name` (see judge_verdicts)."""
    p = 1 - chance if label == kept else chance
    if req.option("judge_confidence", "calibrated") == "overconfident":
        p = 0.95 + 0.0499 * stable_uniform(req.seed, "overconfident", unit, answer_key)
    p = min(max(p, 0.001), 0.999)
    others = [other for other in ("correct", "incorrect", "unrelated") if other != label][:2]
    return ChosenValue(rf'"{re.escape(name)}"\s*:\s*"({label})"',
                       ((label, p), (others[0], (1 - p) / 2), (others[1], (1 - p) / 2)))


def judge_reply(req: SimRequest, verdicts: list[dict[str, str]]) -> Completion:
    """The verdicts in the shape the call's schema asks for: a label map with reasons for those that have
    one (a schema with `labels`, agents/judge/unit_judge.py), else the list of per-unit verdicts."""
    if "labels" not in (req.schema or {}).get("properties", {}):
        return {"verdicts": verdicts}
    return {"labels": {v["unit_id"]: v["type"] for v in verdicts},
            "reasons": [{"unit": v["unit_id"], "reason": v["reason"]} for v in verdicts if v["reason"]]}


# ---------------------------------------------------------------- geval

def score_scale(req: SimRequest) -> int:
    """The top of the call's 1..N score scale: the `scale` hint (default 5)."""
    return int(req.hint("scale", 5))


@register_behaviour("geval")
def geval_score(req: SimRequest) -> Completion:
    """A single score on the call's 1..N scale: the share of `known` markers, else a seeded value.

    With a schema it falls back to the schema faker.
    """
    if req.schema is not None or req.json_mode:
        return generic(req)
    prompt = req.last_user
    top = score_scale(req)
    markers = list(claim_markers(prompt).values())
    rng = req.rng("geval")
    if markers:
        share = markers.count("known") / len(markers)
        score = 1 + round(share * (top - 1))
    else:
        score = rng.randint(1, top)
    if req.temperature > 0 and rng.random() < 0.3:
        score = min(top, max(1, score + rng.choice((-1, 1))))
    return str(score)
