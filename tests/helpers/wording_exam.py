"""Settings for simulated exams with the wording check (`--paraphrases`): what the wording check's exam,
report and resume tests share."""

from __future__ import annotations

from examiner.core.config import EndpointSpec, Settings
from tests.helpers.simulated_exam import PROFILE, ROLES

TARGETS = ["a", "b"]
"""Two simulated targets, so that every run has a pair to compare."""


def settings(paraphrases: int, *, share: float = 0.5, wording_sd: float = 0.0, max_rounds: int = 1) -> Settings:
    """Simulated examiner, judge and TARGETS (`wording_sd`: the simulator's injected wording effect), the
    self-check off, K = `paraphrases` wordings for a share `share` of round 1's clusters."""
    endpoints = {name: EndpointSpec(provider="simulated", model=f"sim-{name}", max_concurrency=16,
                                    options={"knowledge": PROFILE, "wording_sd": wording_sd})
                 for name in ["sim", *TARGETS]}
    return Settings(endpoints=endpoints, roles={r: "sim" for r in ROLES},
                    exam={"max_rounds": max_rounds, "paraphrases": paraphrases, "paraphrase_share": share,
                          "self_check_share": 0.0})
