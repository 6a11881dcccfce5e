"""Ref-Eval's token economy: what the exam's examiner and judge calls send and receive, and the simulated
judge writing reasons as the judge prompt asks (the same policy in every exam mode)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from examiner.config import EndpointSpec, Settings
from examiner.llm import Gateway
from examiner.prompting import _sections
from examiner.roles.judge import REASON_WORDS, judge_units

UNITS = [("ku-0123456789abcdef", "The zebrafish gene one regulates quokka metabolism in vitro."),
         ("ku-fedcba9876543210", "Quokka metabolism slows in winter."),
         ("ku-00112233aabbccdd", "Zebrafish live in fresh water.")]
ANSWER = ("Gene one regulates it (ku-0123456789abcdef:known). It speeds up in winter "
          "(ku-fedcba9876543210:wrong). Nothing more.")


def settings() -> Settings:
    spec = EndpointSpec(provider="simulated", model="sim", price_input_per_1m=10, price_output_per_1m=30)
    return Settings(endpoints={"sim": spec}, roles={r: "sim" for r in ("examiner", "candidate", "judge")})


@pytest.fixture
async def gateway(tmp_path: Path):
    async with Gateway(settings(), tmp_path, cache=False) as gw:
        yield gw


async def test_simulated_reasons_follow_the_prompt_policy_for_every_label(gateway: Gateway) -> None:
    result = await judge_units(gateway, "What regulates quokka metabolism?", ANSWER, UNITS, round=1)
    marks = {v.unit_id: v for v in result.parsed.verdicts}
    assert {uid: v.type for uid, v in marks.items()} == {
        UNITS[0][0]: "correct", UNITS[1][0]: "incorrect", UNITS[2][0]: "unrelated"}
    for verdict in marks.values():
        limit = REASON_WORDS.get(verdict.type, 0)
        assert len(verdict.reason.split()) <= limit
        assert bool(verdict.reason) == (limit > 0)


RUN_CONSTANTS = {"max_words", "scale", "incorrect_words", "brief_words"}
"""Placeholders that stay the same through a run (limits); every other placeholder is per-call content."""
ORDERED_PROMPTS = ("exam_question", "exam_probe", "exam_answer", "exam_judge", "exam_judge_noref", "exam_extract",
                   "reference_judge", "reference_judge_units")


@pytest.mark.parametrize("name", ORDERED_PROMPTS)
def test_fixed_instructions_come_first_and_per_call_content_last(name: str) -> None:
    """Providers cache a prompt's longest prefix seen before: the instructions (system message, rules,
    output format) must precede everything a call substitutes, which may only be followed by short labels."""
    template = _sections(name)["user"].template
    per_call = [m for m in re.finditer(r"\$\{?(\w+)\}?", template) if m.group(1) not in RUN_CONSTANTS]
    assert per_call, name
    before, after = template[:per_call[0].start()], template[per_call[0].start():]
    trailing = re.sub(r"\$\{?\w+\}?|</?[a-z_]+>", " ", after)
    assert len(trailing.split()) <= 8, f"{name}: instructions after the per-call content: {trailing.split()}"
    assert len(before.split()) >= 3 * len(trailing.split()), name
