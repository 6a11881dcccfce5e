"""A meta-evaluation counts the outputs and explanations that the evaluators and the meta-judge read cut
to `max_passed_chars` (issue 37, item 6)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import examiner.simulator.meta_roles  # noqa: F401 - simulated evaluators / meta-judge
from examiner.core.assessments import MetaItem
from examiner.meta.pipeline import MetaConfig, run_meta
from examiner.meta.sections import meta_report
from examiner.core.config import EndpointSpec, Settings

CAP = 1_000


def sim_settings() -> Settings:
    """Two simulated evaluators and a simulated meta-judge (as tests/meta/test_meta_jdeval.py sets them up)."""
    endpoints = {name: EndpointSpec(provider="simulated", model=f"sim-acc{accuracy}", max_concurrency=16)
                 for name, accuracy in (("e80", 0.8), ("e50", 0.5))}
    endpoints["meta"] = EndpointSpec(provider="simulated", model="sim-rel0.9", max_concurrency=16)
    return Settings(endpoints=endpoints, roles={"meta_judge": "meta"}, cache=True)


def test_outputs_longer_than_the_cap_are_counted_once_each(tmp_path: Path) -> None:
    long = "A very long answer. " * 200  # 4,000 characters
    items = [MetaItem(id=f"p{i}", kind="pairwise", instruction=f"Name a prime above {i * 7}.",
                      output_1=f"{long}({i})" if i < 2 else f"{i * 7 + 1} is one.", output_2=f"Consider {i * 7 + 3}.",
                      gold_label="Answer1") for i in range(4)]
    settings = sim_settings().merged({"max_passed_chars": CAP})
    run = asyncio.run(run_meta(items, MetaConfig(evaluators=["e80", "e50"], bootstrap=20), settings, tmp_path))
    explanations = sum(len(a.explanation) > CAP for a in run.assessments if a.ok)
    assert run.counts["passed_cut"] == 2 + explanations
    assert meta_report(run).counts.passed_cut == run.counts["passed_cut"]
