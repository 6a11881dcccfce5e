"""A simulated exam of a strong and a weak target on the same paper, for the paired comparison, the gate
and the plans: made once per test session (the first test that asks writes it; later ones reuse it), since
an exam takes seconds and every test reads it only.

`strong` knows 90 % of the units, `weak` 40 % and gets 40 % wrong: a difference the paired statistics
must find on the examiner handbook's 4 documents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

CORPUS = "corpora/examiner-handbook"
PROFILES = {"strong": {"known": 0.9, "wrong": 0.05, "unknown": 0.05},
            "weak": {"known": 0.4, "wrong": 0.4, "unknown": 0.2}}


def paired_settings() -> dict[str, Any]:
    """Two simulated targets priced like a hosted model; `strong` does every other role."""
    endpoints = {name: {"provider": "simulated", "model": name, "price_input_per_1m": 2.5, "price_output_per_1m": 10.0,
                        "options": {"knowledge": profile}} for name, profile in PROFILES.items()}
    roles = {"examiner": "strong", "candidate": "strong", "judge": "strong"}
    return {"endpoints": endpoints, "roles": roles, "exam": {"max_rounds": 2}}


def write_paired_config(folder: Path) -> Path:
    """The settings as `folder/config.yaml`, for tests that run the command line."""
    import yaml

    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(paired_settings()), encoding="utf-8")
    return path


def strong_and_weak_run(factory: pytest.TempPathFactory) -> Path:
    """The run folder of `strong` and `weak` on the same paper (written on first use in this session)."""
    from examiner.api import ExamOptions, run_exam

    run_dir = factory.getbasetemp() / "paired-strong-weak"
    if not (run_dir / "report.json").is_file():
        run_exam(ExamOptions(corpus=(CORPUS,), targets=("strong", "weak"), out=str(run_dir), quiet=True),
                 paired_settings())
    return run_dir
