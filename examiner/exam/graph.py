"""The Ref-Eval exam as a LangGraph state machine; read top to bottom, it is the method's diagram.

    prepare_units -> cluster -> generate_questions -> collect_answers -> judge
                        ^                                   ^             |
                        |                                   +-- probe <---+ (targets left unrelated)
                        +------------- update_coverage <------------------+
                                          | (pool empty / stopped shrinking / max rounds)
                                          v
                                        finish

Any node that hits the budget (or finds every call failing) routes straight to `finish`.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from examiner.exam.bookends import finish, prepare_units
from examiner.exam.nodes import ExamContext, ExamNodes
from examiner.exam.state import ExamState


def build_exam_graph(ctx: ExamContext, corpus_paths: list[str], jsonl_field: str = "text") -> StateGraph:
    """The uncompiled graph for one run (compile it with a checkpointer)."""
    nodes = ExamNodes(ctx)

    async def prepare(state: ExamState) -> dict[str, Any]:
        return await prepare_units(ctx, corpus_paths, jsonl_field)

    async def wrap_up(state: ExamState) -> dict[str, Any]:
        return finish(ctx, state)

    graph = StateGraph(ExamState)
    graph.add_node("prepare_units", prepare)
    graph.add_node("cluster", nodes.cluster)
    graph.add_node("generate_questions", nodes.generate_questions)
    graph.add_node("collect_answers", nodes.collect_answers)
    graph.add_node("judge", nodes.judge)
    graph.add_node("probe", nodes.probe)
    graph.add_node("update_coverage", nodes.update_coverage)
    graph.add_node("finish", wrap_up)

    graph.add_edge(START, "prepare_units")
    graph.add_edge("prepare_units", "cluster")
    graph.add_edge("cluster", "generate_questions")
    graph.add_conditional_edges(
        "generate_questions", nodes.route_or_finish("collect_answers"),
        {"collect_answers": "collect_answers", "finish": "finish"},
    )
    graph.add_conditional_edges(
        "collect_answers", nodes.route_or_finish("judge"), {"judge": "judge", "finish": "finish"}
    )
    graph.add_conditional_edges(
        "judge", nodes.route_after_judge, {"probe": "probe", "update": "update_coverage", "finish": "finish"}
    )
    graph.add_conditional_edges(
        "probe", nodes.route_after_probe, {"answer": "collect_answers", "update": "update_coverage", "finish": "finish"}
    )
    graph.add_conditional_edges(
        "update_coverage", nodes.route_after_update, {"next_round": "cluster", "finish": "finish"}
    )
    graph.add_edge("finish", END)
    return graph
