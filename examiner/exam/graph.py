"""The Ref-Eval exam as a LangGraph state machine; read top to bottom, it is the method's diagram.

    START --(corpus)--> prepare_units -> cluster -> examine -----------------------------------+
                                           ^          |  (each cluster: question -> answers -> judge -> probes)
                                           |          +-- with a judge cascade: judge <-> probe <-> collect_answers
                                           |                                                        |
                                           +------------ update_coverage <--------------------------+
                                                  | (pool empty / stopped shrinking / max rounds)
                                                  v
                                              controls (with --control-share: unanswerable control questions)
                                                  v
    START --(paper)--> start_paper -> sit_round -> self_check (the judge re-marks a seeded sample, units reordered)
                                     (per round)      v
                                                  rewording (with --paraphrases K: a seeded share of round 1's
                                                      |      questions in K other wordings, answered and judged)
                                                      v
                                                    finish

`examine` (examiner/exam/nodes/examine.py) carries each cluster of a round through its whole chain as soon
as its previous step is done; a run with a judge cascade, whose threshold needs the round's calibration
sample, has its answers judged by the staged `judge` node and probed by `probe` / `collect_answers`.
A re-sit of an earlier run's paper (`--paper`, examiner/exam/paper.py) enters at `start_paper` instead of
the corpus and sits the paper's rounds one by one (examiner/exam/nodes/sitting.py), then shares
`self_check`, `rewording` and `finish` with the exam, so it checkpoints, stops and resumes as the exam does.
Any node that hits the budget (or finds every call failing) routes straight to `finish`.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from examiner.exam.bookends import finish, prepare_units
from examiner.exam.nodes.answers import collect_answers
from examiner.exam.nodes.cluster import cluster
from examiner.exam.nodes.context import ExamContext, Sample, running
from examiner.exam.nodes.controls import controls
from examiner.exam.nodes.coverage import route_after_update, update_coverage
from examiner.exam.nodes.examine import examine
from examiner.exam.nodes.judge_cascade import judge_with_cascade
from examiner.exam.nodes.judge_units import judge as judge_one_by_one
from examiner.exam.nodes.probing import probe, route_after_judge, route_after_probe
from examiner.exam.nodes.rewording import rewording
from examiner.exam.nodes.self_check import self_check
from examiner.exam.nodes.sitting import finish_paper, route_after_sitting, sit_round, start_paper
from examiner.exam.state import ExamState

Node = Callable[[ExamContext, ExamState], Awaitable[dict[str, Any]]]
"""An exam step: the run's context (examiner.exam.nodes.context) and the graph state in, a state update out."""
Router = Callable[[ExamContext, ExamState], str]


def continue_to(next_node: str) -> Callable[[ExamState], str]:
    """Router that continues to `next_node` unless a stop (budget, failure) was recorded."""

    def route(state: ExamState) -> str:
        return next_node if running(state) else "finish"

    route.__name__ = f"continue_to_{next_node}"
    return route


def node(step: Node) -> Callable[[ExamState, Runtime[ExamContext]], Awaitable[dict[str, Any]]]:
    """A step as a LangGraph node: the run's context comes from the graph's runtime (`context=` at
    invoke), so one compiled graph serves every run and nothing is bound by closure."""

    async def run(state: ExamState, runtime: Runtime[ExamContext]) -> dict[str, Any]:
        return await step(runtime.context, state)

    run.__name__ = step.__name__
    return run


def decide(router: Router) -> Callable[[ExamState, Runtime[ExamContext]], str]:
    """A router as a LangGraph path function, with the run's context from the runtime."""

    def route(state: ExamState, runtime: Runtime[ExamContext]) -> str:
        return router(runtime.context, state)

    route.__name__ = router.__name__
    return route


async def prepare(ctx: ExamContext, state: ExamState) -> dict[str, Any]:
    """Node `prepare_units`: the corpus read, cut into units and embedded; narrowed to `ctx.sample` (the
    estimate's pilot) when one is set."""
    start = await prepare_units(ctx, ctx.corpus_paths, ctx.jsonl_field)
    # calls that failed for good stopped it: nothing to sample, the graph goes on to finish
    return start if ctx.sample is None or start["status"] != "running" else ctx.sample(ctx, start)


async def judge(ctx: ExamContext, state: ExamState) -> dict[str, Any]:
    """Node `judge`: through the judge cascade when the run has one, else the run's judge or panel."""
    return await (judge_one_by_one if ctx.cascade is None else judge_with_cascade)(ctx, state)


async def wrap_up(ctx: ExamContext, state: ExamState) -> dict[str, Any]:
    """Node `finish`: outcomes and run.json, a sitting's from the paper's questions."""
    if ctx.paper is not None:
        return {"status": finish_paper(ctx, state, time.time()).status}
    return finish(ctx, state)


def route_start(ctx: ExamContext, state: ExamState) -> str:
    """The entry: `start_paper` for a re-sit of an earlier run's paper, else `prepare_units` (the corpus)."""
    return "start_paper" if ctx.paper is not None else "prepare_units"


def route_after_examine(ctx: ExamContext, state: ExamState) -> str:
    """`judge` when the chains left their answers to the judge cascade, else `update` (they judged and
    probed); `finish` after a stop."""
    if not running(state):
        return "finish"
    return "judge" if ctx.cascade is not None else "update"


def build_exam_graph() -> StateGraph:
    """The uncompiled graph (compile it with a checkpointer, invoke it with `context=` the run's
    ExamContext)."""
    graph = StateGraph(ExamState, context_schema=ExamContext)
    graph.add_node("prepare_units", node(prepare))
    graph.add_node("cluster", node(cluster))
    graph.add_node("examine", node(examine))
    graph.add_node("collect_answers", node(collect_answers))
    graph.add_node("judge", node(judge))
    graph.add_node("probe", node(probe))
    graph.add_node("update_coverage", node(update_coverage))
    graph.add_node("controls", node(controls))
    graph.add_node("self_check", node(self_check))
    graph.add_node("rewording", node(rewording))
    graph.add_node("start_paper", node(start_paper))
    graph.add_node("sit_round", node(sit_round))
    graph.add_node("finish", node(wrap_up))

    graph.add_conditional_edges(START, decide(route_start), {"prepare_units": "prepare_units",
                                                             "start_paper": "start_paper"})
    graph.add_conditional_edges("start_paper", decide(route_after_sitting),
                                {"sit_round": "sit_round", "self_check": "self_check", "finish": "finish"})
    graph.add_conditional_edges("sit_round", decide(route_after_sitting),
                                {"sit_round": "sit_round", "self_check": "self_check", "finish": "finish"})
    graph.add_conditional_edges("prepare_units", continue_to("cluster"), {"cluster": "cluster", "finish": "finish"})
    graph.add_edge("cluster", "examine")
    graph.add_conditional_edges("examine", decide(route_after_examine),
                                {"judge": "judge", "update": "update_coverage", "finish": "finish"})
    graph.add_conditional_edges("collect_answers", continue_to("judge"), {"judge": "judge", "finish": "finish"})
    graph.add_conditional_edges(
        "judge", decide(route_after_judge), {"probe": "probe", "update": "update_coverage", "finish": "finish"}
    )
    graph.add_conditional_edges(
        "probe", decide(route_after_probe),
        {"answer": "collect_answers", "update": "update_coverage", "finish": "finish"},
    )
    graph.add_conditional_edges(
        "update_coverage", decide(route_after_update), {"next_round": "cluster", "finish": "controls"}
    )
    graph.add_edge("controls", "self_check")
    graph.add_edge("self_check", "rewording")
    graph.add_edge("rewording", "finish")
    graph.add_edge("finish", END)
    return graph


__all__ = ["Node", "Sample", "build_exam_graph", "continue_to"]
