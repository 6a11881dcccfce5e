"""Simulated and real endpoints in one exam: refused unless asked for (`allow_simulated_roles`).

Why: the simulated backend answers from a knowledge profile, not from the text. A simulated examiner
beside a real target asks filler questions, a simulated judge marks a real model's answers at random, and
a simulated target under a real examiner and judge measures nothing; the run would finish with coverage
near 0 and health only warning. Tests and demos that mix on purpose say so with the setting.
"""

from __future__ import annotations

from collections.abc import Sequence

from examiner.core.config import Settings
from examiner.core.errors import UserError


def exam_endpoints(settings: Settings, targets: Sequence[str], judges: Sequence[str]) -> dict[str, list[str]]:
    """The endpoints an exam calls, per part: its examiner, its judge(s) (a panel or a cascade's tiers when
    given) and its target(s) (the candidate role's endpoint when none is named)."""
    cascade = list(settings.judge_cascade.tiers) if settings.judge_cascade is not None else []
    return {
        "examiner": [settings.roles["examiner"]],
        "judge": list(judges) or list(settings.judge_panel) or cascade or [settings.roles["judge"]],
        "target": list(targets) or [settings.roles["candidate"]],
    }


def check_role_mix(settings: Settings, targets: Sequence[str], judges: Sequence[str]) -> None:
    """UserError (one line) when the exam's examiner, judges and targets mix simulated and real endpoints,
    unless `settings.allow_simulated_roles`."""
    if settings.allow_simulated_roles:
        return
    parts = exam_endpoints(settings, targets, judges)
    simulated: list[str] = []
    real: list[str] = []
    for part, names in parts.items():
        for name in dict.fromkeys(names):
            (simulated if settings.endpoint(name).provider == "simulated" else real).append(f"{part} {name}")
    if simulated and real:
        raise UserError(
            f"simulated and real endpoints in one exam (simulated: {', '.join(simulated)}; real: {', '.join(real)}): "
            "a simulated examiner or judge says nothing about a real model. Give every role a real endpoint, "
            "or --simulate for all, or --allow-simulated-roles (allow_simulated_roles: true) to mix on purpose")


__all__ = ["check_role_mix", "exam_endpoints"]
