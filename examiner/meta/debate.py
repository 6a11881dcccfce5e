"""MDEval (docs/METHODS.md section 5): a refereed multi-round debate between two evaluators, as a LangGraph graph.

    referee --verdict--> END
       |  \\--unreadable, rounds left--> referee (next round)
       question
       v
    debaters (both answer at once, asyncio.gather) --> referee

A round is one referee turn (plus, when it asks, both debaters' answers). In round `max_rounds` (5) the
referee may only give a verdict; if even that reply is unreadable the debate ends without a verdict,
is counted, and is left out of the ranking. The compiled graph is a self-contained subgraph: its state
keys (DebateState) are the interface a parent graph mounts it with.
"""

from __future__ import annotations

import asyncio
import operator
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypedDict

from langgraph.graph import END, START, StateGraph

from examiner.core.assessments import Assessment, Debate, MetaItem, MetaJudgment, Turn, labels_for
from examiner.core.labels import Preference, Unscored, preference_from_text
from examiner.llm import Gateway
from examiner.meta.jdeval import judgment_id
from examiner.agents.prompting.meta_blocks import match_label, words
from examiner.agents.debaters import debater
from examiner.agents.referee import referee as rf

MAX_ROUNDS = 5


@dataclass(frozen=True)
class DebateConfig:
    max_rounds: int = MAX_ROUNDS
    statement_words: int = debater.STATEMENT_WORDS
    referee_words: int = rf.REASONING_WORDS
    referee_endpoint: str | None = None


class DebateState(TypedDict, total=False):
    item: MetaItem
    a1: Assessment
    a2: Assessment
    debater_1: str | None
    """Endpoint that argues for Assistant1's judgment (default: that evaluator itself)."""
    debater_2: str | None
    turns: Annotated[list[Turn], operator.add]
    round: int
    question: str
    verdict: Preference | None
    better_answer: str
    reasoning: str
    forced: bool
    unscored: Unscored | None
    """Set when the referee's last allowed turn could not be had: the debate ends without a verdict."""


def build_debate_graph(gateway: Gateway, config: DebateConfig = DebateConfig()) -> Any:
    """The compiled debate subgraph for one gateway and settings; invoke with a DebateState."""

    async def referee(state: DebateState) -> dict[str, Any]:
        rnd = state.get("round", 0) + 1
        turn = await rf.referee(gateway, state["item"], state["a1"], state["a2"], state.get("turns", []),
                                round=rnd, max_rounds=config.max_rounds, endpoint=config.referee_endpoint,
                                max_words=config.referee_words)
        if isinstance(turn, Unscored):
            out: dict[str, Any] = {"round": rnd,
                                   "turns": [Turn(round=rnd, speaker="referee", kind="unparseable", text=turn.reason)]}
            if rnd >= config.max_rounds:
                out["unscored"] = turn
            return out
        if isinstance(turn, rf.RefereeVerdict) or turn.action == "verdict":
            text = f"Verdict: {turn.verdict}. {turn.reasoning}".strip()
            return {"round": rnd, "verdict": preference_from_text(turn.verdict), "better_answer": turn.better_answer,
                    "reasoning": turn.reasoning, "forced": rnd >= config.max_rounds,
                    "turns": [Turn(round=rnd, speaker="referee", kind="verdict", text=text, words=words(text))]}
        q = turn.question.strip()
        return {"round": rnd, "question": q,
                "turns": [Turn(round=rnd, speaker="referee", kind="question", text=q, words=words(q))]}

    def after_referee(state: DebateState) -> Literal["end", "ask", "again"]:
        if state.get("verdict") is not None or state.get("unscored") is not None:
            return "end"
        last = state["turns"][-1]
        return "ask" if last.kind == "question" else "again"

    async def debaters(state: DebateState) -> dict[str, Any]:
        rnd, q, seen = state["round"], state["question"], state.get("turns", [])
        item, a1, a2 = state["item"], state["a1"], state["a2"]
        first, second = await asyncio.gather(
            debater.answer(gateway, state.get("debater_1"), item, "Assistant1", a1, a2, seen, q, round=rnd,
                           max_words=config.statement_words),
            debater.answer(gateway, state.get("debater_2"), item, "Assistant2", a2, a1, seen, q, round=rnd,
                           max_words=config.statement_words),
        )
        turns = []
        for speaker, text in (("assistant_1", first), ("assistant_2", second)):
            if isinstance(text, Unscored):
                turns.append(Turn(round=rnd, speaker=speaker, kind="unparseable", text="(no statement: call failed)"))
            else:
                turns.append(Turn(round=rnd, speaker=speaker, kind="statement", text=text, words=words(text)))
        return {"turns": turns}

    graph = StateGraph(DebateState)
    graph.add_node("referee", referee)
    graph.add_node("debaters", debaters)
    graph.add_edge(START, "referee")
    graph.add_conditional_edges("referee", after_referee, {"end": END, "ask": "debaters", "again": "referee"})
    graph.add_edge("debaters", "referee")
    return graph.compile()


async def run_debate(graph: Any, item: MetaItem, a1: Assessment, a2: Assessment, *, draw: int,
                     order: Literal["forward", "reversed"] = "forward", max_rounds: int = MAX_ROUNDS,
                     debater_endpoints: tuple[str | None, str | None] | None = None) -> tuple[MetaJudgment, Debate]:
    """One debate -> the meta-judgment (outcome from the referee's verdict) and the full transcript."""
    d1, d2 = debater_endpoints or (a1.evaluator, a2.evaluator)
    state: DebateState = {"item": item, "a1": a1, "a2": a2, "debater_1": d1, "debater_2": d2, "turns": [],
                          "round": 0, "question": "", "verdict": None, "unscored": None}
    final = await graph.ainvoke(state, config={"recursion_limit": 4 * max_rounds + 10})
    jid = judgment_id("mdeval", item.id, draw, order, a1.evaluator, a2.evaluator)
    turns: list[Turn] = final.get("turns", [])
    verdict = final.get("verdict")
    unscored = final.get("unscored")
    if verdict is not None:
        unscored = None
    elif unscored is None:
        unscored = Unscored("debate ended without a parseable verdict")
    debate = Debate(judgment_id=jid, item_id=item.id, assistant_1=a1.evaluator, assistant_2=a2.evaluator,
                    turns=turns, rounds=final.get("round", 0),
                    questions=sum(t.kind == "question" for t in turns), verdict=verdict,
                    forced=bool(final.get("forced")), unscored=unscored)
    judgment = MetaJudgment(
        id=jid, method="mdeval", item_id=item.id, draw=draw, order=order, assistant_1=a1.evaluator,
        assistant_2=a2.evaluator, better_answer=match_label(final.get("better_answer") or "", labels_for(item.kind)),
        better_assistant=verdict,
        outcome=verdict, assistant_reasoning=final.get("reasoning", ""),
        unscored=unscored,
        rounds=debate.rounds,
    )
    return judgment, debate
