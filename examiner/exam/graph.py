"""The Ref-Eval exam as a LangGraph state machine; read top to bottom, it is the method's diagram.

    prepare_units -> cluster -> generate_questions -> collect_answers -> judge
                        ^                                   ^             |
                        |                                   +-- probe <---+ (targets left unrelated)
                        +------------- update_coverage <------------------+
                                          | (pool empty / stopped shrinking / max rounds)
                                          v
                                      self_check (the judge re-marks a seeded sample, units reordered)
                                          v
                                        finish

Any node that hits the budget (or finds every call failing) routes straight to `finish`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langgraph.graph import END, START, StateGraph

from examiner.exam.bookends import finish, prepare_units
from examiner.exam.nodes.answers import collect_answers
from examiner.exam.nodes.cluster import cluster
from examiner.exam.nodes.context import ExamContext, running
from examiner.exam.nodes.coverage import route_after_update, update_coverage
from examiner.exam.nodes.judge_cascade import judge_with_cascade
from examiner.exam.nodes.judge_units import judge
from examiner.exam.nodes.probing import probe, route_after_judge, route_after_probe
from examiner.exam.nodes.questions import generate_questions
from examiner.exam.nodes.self_check import self_check
from examiner.exam.state import ExamState

Node = Callable[[ExamContext, ExamState], Awaitable[dict[str, Any]]]


def continue_to(next_node: str) -> Callable[[ExamState], str]:
    """Router that continues to `next_node` unless a stop (budget, failure) was recorded."""

    def route(state: ExamState) -> str:
        return next_node if running(state) else "finish"

    route.__name__ = f"continue_to_{next_node}"
    return route


Sample = Callable[[ExamContext, dict[str, Any]], dict[str, Any]]
"""Narrows the exam's starting state to a sample of its units (the estimate's pilot, exam/estimate.py)."""


def build_exam_graph(ctx: ExamContext, corpus_paths: list[str], jsonl_field: str = "text",
                     sample: Sample | None = None) -> StateGraph:
    """The uncompiled graph for one run (compile it with a checkpointer); `sample`, if given, narrows the
    pools `prepare_units` starts with."""

    def node(step: Node) -> Callable[[ExamState], Awaitable[dict[str, Any]]]:
        async def run(state: ExamState) -> dict[str, Any]:
            return await step(ctx, state)

        run.__name__ = step.__name__
        return run

    def decide(router: Callable[[ExamContext, ExamState], str]) -> Callable[[ExamState], str]:
        def route(state: ExamState) -> str:
            return router(ctx, state)

        route.__name__ = router.__name__
        return route

    async def prepare(state: ExamState) -> dict[str, Any]:
        start = await prepare_units(ctx, corpus_paths, jsonl_field)
        # calls that failed for good stopped it: nothing to sample, the graph goes on to finish
        return start if sample is None or start["status"] != "running" else sample(ctx, start)

    async def wrap_up(state: ExamState) -> dict[str, Any]:
        return finish(ctx, state)

    graph = StateGraph(ExamState)
    graph.add_node("prepare_units", prepare)
    graph.add_node("cluster", node(cluster))
    graph.add_node("generate_questions", node(generate_questions))
    graph.add_node("collect_answers", node(collect_answers))
    graph.add_node("judge", node(judge if ctx.cascade is None else judge_with_cascade))
    graph.add_node("probe", node(probe))
    graph.add_node("update_coverage", node(update_coverage))
    graph.add_node("self_check", node(self_check))
    graph.add_node("finish", wrap_up)

    graph.add_edge(START, "prepare_units")
    graph.add_conditional_edges("prepare_units", continue_to("cluster"), {"cluster": "cluster", "finish": "finish"})
    graph.add_edge("cluster", "generate_questions")
    graph.add_conditional_edges(
        "generate_questions", continue_to("collect_answers"),
        {"collect_answers": "collect_answers", "finish": "finish"},
    )
    graph.add_conditional_edges("collect_answers", continue_to("judge"), {"judge": "judge", "finish": "finish"})
    graph.add_conditional_edges(
        "judge", decide(route_after_judge), {"probe": "probe", "update": "update_coverage", "finish": "finish"}
    )
    graph.add_conditional_edges(
        "probe", decide(route_after_probe),
        {"answer": "collect_answers", "update": "update_coverage", "finish": "finish"},
    )
    graph.add_conditional_edges(
        "update_coverage", decide(route_after_update), {"next_round": "cluster", "finish": "self_check"}
    )
    graph.add_edge("self_check", "finish")
    graph.add_edge("finish", END)
    return graph
