"""Exam judges (RevisEval, G-Eval per-unit marks) and the simulated pairwise judge's knobs."""

from __future__ import annotations

import pytest

import examiner.simulator.judging_roles  # noqa: F401 - registers the judging behaviours
from examiner.core.config import EndpointSpec, Settings
from examiner.judging.dataset import Row
from examiner.core.contract import ExamTask
from examiner.core.labels import Unscored, preference_from_text
from examiner.judging.exam_judges import GEvalJudge, RevisEvalJudge, label_from_agreement
from examiner.judging.pairwise import PairwiseOptions, number, run_pairwise
from examiner.judging.sections import pairwise_section
from examiner.core.assessments import pairwise_oracle
from examiner.llm.gateway import Gateway
from examiner.simulator import SimulatedServer

UNITS = (("u1", "Quokkas live on Rottnest Island."), ("u2", "Quokkas are marsupials."),
         ("u3", "Quokkas weigh about three kilograms."))
ANSWER = "Quokkas live on Rottnest Island (u1:known). They are rodents (u2:wrong). They are friendly."
TASK = ExamTask("What are quokkas?", ANSWER, UNITS, 1)


def _settings(url: str, logprobs: bool = True, **roles: str) -> Settings:
    spec = EndpointSpec(provider="simulated", base_url=url, model="sim-judge", supports_logprobs=logprobs,
                        max_concurrency=32, max_attempts=2)
    return Settings(endpoints={"sim": spec}, roles={r: "sim" for r in ("judge", "reviser", "geval", "pairwise")})


@pytest.fixture(scope="module")
def server():
    srv = SimulatedServer({"pairwise_accuracy": 0.8, "pairwise_position_bias": 0.3}, seed=5)
    srv.start()
    yield srv
    srv.stop()


EXPECTED = {"u1": "correct", "u2": "incorrect", "u3": "unrelated"}


async def test_reviseval_unit_verdicts(server: SimulatedServer) -> None:
    async with Gateway(_settings(server.base_url)) as gw:
        marks = await RevisEvalJudge(gw).mark(TASK)
        assert {uid: str(m.label) for uid, m in marks.items()} == EXPECTED
        assert all(m.reason for m in marks.values())
        assert gw.totals.calls == 2


@pytest.mark.parametrize("logprobs", [True, False])
async def test_geval_unit_verdicts(server: SimulatedServer, logprobs: bool) -> None:
    async with Gateway(_settings(server.base_url, logprobs)) as gw:
        marks = await GEvalJudge(gw).mark(TASK)
        assert {uid: str(m.label) for uid, m in marks.items()} == EXPECTED
        assert all(("logprobs" if logprobs else "samples") in m.reason for m in marks.values())
        assert gw.totals.calls == 1 + len(UNITS)  # steps once + one call per unit


def test_agreement_thresholds() -> None:
    assert isinstance(label_from_agreement(Unscored("no sample gave a score in range")), Unscored)
    assert [str(label_from_agreement(s)) for s in (1.0, 2.5, 2.6, 3.4, 3.5, 5.0)] == [
        "incorrect", "incorrect", "unrelated", "unrelated", "correct", "correct"]


async def test_simulated_pairwise_accuracy_and_position_bias(server: SimulatedServer) -> None:
    rows = [Row(line=i + 1, id=f"p{i}", instruction=f"Request number {i}: describe item {i}.",
                output_1=f"First response to request {i}.", output_2=f"Second response to request {i}.",
                label=preference_from_text(1 + (i * 7 % 3 == 0))) for i in range(200)]
    server.register_oracle(pairwise_oracle((r.instruction, r.output_1, r.output_2, number(r.label)) for r in rows))
    async with Gateway(_settings(server.base_url)) as gw:
        records = await run_pairwise(gw, rows, PairwiseOptions(swap=True, grade_only=True))
    section = pairwise_section(records)
    swap = section["swap"]
    assert section["n_unparseable"] == 0
    # bias 0.3 toward the first position, drawn per judgment: consistency ~ 1 - 0.3 (some draws agree anyway)
    assert 0.6 < swap["consistency"] < 0.85
    assert swap["bias_first"] == 1.0 and swap["bias_second"] == 0.0
    # accuracy 0.8 before bias; the bias adds or removes correct verdicts around it
    assert 0.65 < section["agreement"]["accuracy"] < 0.9
