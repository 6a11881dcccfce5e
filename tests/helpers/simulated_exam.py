"""Settings for exams on the simulated backend, and reading their outcomes back: what most exam, resume
and cache tests start from, so they all sit the same kind of simulated exam."""

from __future__ import annotations

from pathlib import Path

import yaml

from examiner.core.config import EndpointSpec, Settings
from examiner.core.records import UnitOutcome
from examiner.exam.run_writer import RunStore

PROFILE = {"known": 0.6, "wrong": 0.2, "unknown": 0.2}
"""The simulated candidate's knowledge: the share of units it knows, gets wrong and does not know."""

ROLES = ("examiner", "candidate", "judge")
"""The roles an exam needs, all given to the first simulated model."""


def sim_settings(*, latency: float = 0.0, max_rounds: int = 5, models: tuple[str, ...] = ("sim",), **exam: object) -> Settings:
    """Settings for simulated `models` priced like a hosted model (so budgets and ledgers have something
    to count), every role on the first; `exam` adds exam settings."""
    endpoints = {
        name: EndpointSpec(
            provider="simulated", model=name, price_input_per_1m=2.5, price_output_per_1m=10.0,
            max_concurrency=16, options={"knowledge": PROFILE, "latency_s": latency},
        )
        for name in models
    }
    return Settings(endpoints=endpoints, roles={r: models[0] for r in ROLES}, exam={"max_rounds": max_rounds, **exam})


def every_role_settings(**extra: object) -> Settings:
    """Simulated endpoints for every role a command asks for (`sim` for most, `referee` as the meta
    judge, `sim2` a second model to compare with `sim`), one exam round: what the command-line tests run;
    `extra` adds top-level settings."""
    endpoints = {name: EndpointSpec(provider="simulated", model=name, price_input_per_1m=2.5, price_output_per_1m=10.0)
                 for name in ("sim", "sim2", "referee")}
    roles = {"examiner": "sim", "candidate": "sim", "judge": "sim", "pairwise": "sim", "meta_judge": "referee"}
    return Settings.model_validate({"endpoints": endpoints, "roles": roles, "exam": {"max_rounds": 1}, **extra})


def outcomes_of(run_dir: Path) -> dict[str, UnitOutcome]:
    """The unit outcomes a run wrote, by record id: what two runs must agree on to count as the same exam."""
    return RunStore(run_dir).all(UnitOutcome)


def write_config(tmp_path: Path) -> Path:
    """A two-round simulated exam written as `tmp_path/config.yaml`, for tests that run the command line."""
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(sim_settings(max_rounds=2).model_dump(mode="json")), encoding="utf-8")
    return config
