"""MDEval: the debate graph stops by round 5 with a verdict, keeps its transcript, respects word limits."""

from __future__ import annotations

import asyncio
from pathlib import Path

import examiner.simulator.meta_roles  # noqa: F401
from examiner.core.config import EndpointSpec, Settings
from examiner.llm import Gateway
from examiner.meta.debate import DebateConfig, build_debate_graph, run_debate
from examiner.core.assessments import Assessment, MetaItem
from examiner.core.labels import Preference
from examiner.meta.pipeline import MetaConfig, register_gold, run_meta

ITEM = MetaItem(id="d1", kind="pairwise", instruction="Give a synonym of quick.", output_1="fast",
                output_2="slow", gold_label="Answer1")
A1 = Assessment(item_id="d1", evaluator="e80", decision="Answer1", explanation="fast means quick [detail:0.80]")
A2 = Assessment(item_id="d1", evaluator="e50", decision="Answer2", explanation="slow is fine [detail:0.40]")


def settings(meta_options: dict) -> Settings:
    eps = {"e80": EndpointSpec(provider="simulated", model="sim-acc0.8"),
           "e50": EndpointSpec(provider="simulated", model="sim-acc0.5"),
           "meta": EndpointSpec(provider="simulated", model="sim-rel1.0", options=meta_options)}
    return Settings(endpoints=eps, roles={"meta_judge": "meta"}, cache=False)


async def debate(meta_options: dict, max_rounds: int = 5, words: int = 200):
    async with Gateway(settings(meta_options), cache=False) as gw:
        await register_gold(gw, [ITEM], ["meta"])  # the simulated referee knows Answer1 is right
        graph = build_debate_graph(gw, DebateConfig(max_rounds=max_rounds, statement_words=words))
        return await run_debate(graph, ITEM, A1, A2, draw=0, max_rounds=max_rounds)


def test_referee_that_keeps_asking_is_forced_to_decide_in_round_5():
    judgment, d = asyncio.run(debate({"referee_questions": 99}))
    assert d.rounds == 5 and d.forced and d.verdict is Preference.FIRST
    assert d.questions == 4
    assert [t.round for t in d.turns if t.speaker == "referee"] == [1, 2, 3, 4, 5]
    statements = [t for t in d.turns if t.kind == "statement"]
    assert len(statements) == 8  # both debaters, rounds 1-4
    assert {t.speaker for t in statements} == {"assistant_1", "assistant_2"}
    assert judgment.outcome is Preference.FIRST and judgment.status == "ok" and judgment.rounds == 5


def test_referee_asking_twice_decides_in_round_3_and_transcript_is_ordered():
    _, d = asyncio.run(debate({"referee_questions": 2}))
    assert d.rounds == 3 and not d.forced and d.questions == 2
    kinds = [(t.round, t.speaker, t.kind) for t in d.turns]
    assert kinds[:3] == [(1, "referee", "question"), (1, "assistant_1", "statement"), (1, "assistant_2", "statement")]
    assert kinds[-1] == (3, "referee", "verdict")


def test_cap_is_configurable_and_statements_respect_word_limit():
    _, d = asyncio.run(debate({"referee_questions": 99}, max_rounds=2, words=30))
    assert d.rounds == 2 and d.forced and d.verdict is not None
    assert all(t.words <= 30 for t in d.turns if t.kind == "statement")


def test_debate_without_a_parseable_verdict_is_reported_and_left_out(tmp_path: Path):
    items = [ITEM.model_copy(update={"id": f"d{i}", "output_2": f"slow {i}"}) for i in range(4)]
    cfg = MetaConfig(evaluators=["e80", "e50"], method="mdeval", bootstrap=50, draws=1)
    run = asyncio.run(run_meta(items, cfg, settings({"meta_garbage": 1.0}), tmp_path))
    assert run.counts["no_verdict"] == 4 and run.counts["usable"] == 0
    assert all(d.rounds == 5 and d.verdict is None for d in run.debates)  # tried every round, then gave up
    assert any("without a parseable verdict" in p for p in run.problems)
    assert run.rankings["matches"] == 0
    assert (tmp_path / "debates.jsonl").read_text().count("\n") == 4
