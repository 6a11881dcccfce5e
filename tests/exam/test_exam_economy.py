"""Ref-Eval's token economy: what the exam's examiner and judge calls send and receive, and the simulated
judge writing reasons as the judge prompt asks (the same policy in every exam mode)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from examiner.core.config import EndpointSpec, Settings
from examiner.llm import CallContext, CallResult, Gateway
from examiner.agents.prompting import _sections
from examiner.agents.judge.unit_judge import REASON_WORDS, Judgment, UnitReason, UnitVerdict, judge_units, judgment_schema
from examiner.agents.examiner.questioner import Question, write_question

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


RUN_CONSTANTS = {"max_words", "scale", "incorrect_words", "count"}
"""Placeholders that stay the same through a run (limits, the wording check's number of paraphrases); every
other placeholder is per-call content."""
ORDERED_PROMPTS = ("exam_question", "exam_probe", "exam_answer", "exam_judge", "exam_judge_passages",
                   "exam_judge_noref", "exam_extract",
                   "exam_paraphrase", "exam_control", "exam_control_judge", "reference_judge", "reference_judge_units")


def test_every_exam_prompt_is_held_to_the_order() -> None:
    """A new exam prompt (a new judge method's, say) joins ORDERED_PROMPTS, so its fixed text stays first."""
    shipped = {path.stem for path in Path("prompts").glob("exam_*.md")}
    assert shipped <= set(ORDERED_PROMPTS)


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


class Recorder:
    """A gateway stand-in that keeps the messages it is sent and replies with what a test gives it."""

    def __init__(self, parsed: object) -> None:
        self.parsed = parsed
        self.sent: list[tuple[list[dict[str, str]], CallContext, type]] = []
        self.settings = Settings()  # what the prompts read of a gateway's settings (max_passed_chars)

    async def chat(self, role: str, messages: list[dict[str, str]], config: object, context: CallContext, *,
                   schema: type, response_schema: type | None = None, endpoint: str | None = None) -> CallResult:
        self.sent.append((messages, context, response_schema or schema))
        return CallResult(text="{}", parsed=self.parsed)


async def test_units_go_out_under_short_names_and_come_back_as_unit_ids() -> None:
    reply = Judgment(labels={"U2": "incorrect", "U1": "correct", "U9": "correct"},
                     reasons=[UnitReason(unit="U2", reason="says faster")])
    judge = Recorder(reply)
    result = await judge_units(judge, "Q?", "A.", UNITS[:2], round=1)  # type: ignore[arg-type]
    assert result.parsed.verdicts == [UnitVerdict(unit_id=UNITS[1][0], type="incorrect", reason="says faster"),
                                      UnitVerdict(unit_id=UNITS[0][0], type="correct"),
                                      UnitVerdict(unit_id="U9", type="correct")]
    examiner = Recorder(Question(question="Q?", target=["U3", "U1"]))
    asked = await write_question(examiner, UNITS, round=1,  # type: ignore[arg-type]
                                 feedback=f"the question gives away {UNITS[2][0]}")
    assert asked.parsed.target == [UNITS[2][0], UNITS[0][0]]
    for messages, context, schema in judge.sent + examiner.sent:
        text = "\n".join(m["content"] for m in messages)
        assert not any(uid in text for uid, _ in UNITS) and f"\n<U1>{UNITS[0][1]}\n" in text
        assert context.unit_ids == tuple(uid for uid, _ in UNITS[:len(context.unit_ids)])
        assert "ku-" not in json.dumps(schema.model_json_schema())
    assert "gives away U3" in examiner.sent[0][0][-1]["content"]


def test_the_judge_reply_schema_asks_a_label_per_shown_unit_and_reasons_naming_only_them() -> None:
    schema = judgment_schema(["U1", "U2"]).model_json_schema()
    labels = schema["$defs"]["Labels"]
    assert sorted(labels["required"]) == ["U1", "U2"] and labels["additionalProperties"] is False
    assert schema["$defs"]["UnitReason"]["properties"]["unit"]["enum"] == ["U1", "U2"]
    assert sorted(schema["required"]) == ["labels", "reasons"]


def test_reply_schemas_and_their_json_are_built_once_per_list_of_names() -> None:
    from examiner.llm.structured import response_format
    from examiner.agents.examiner.questioner import question_schema

    assert judgment_schema(["U1", "U2"]) is judgment_schema(("U1", "U2"))
    assert judgment_schema(["U1", "U2"]) is not judgment_schema(["U1", "U2", "U3"])
    assert question_schema(["U1"]) is question_schema(["U1"])
    first = response_format(judgment_schema(["U1", "U2"]), "json_schema")
    again = response_format(judgment_schema(["U1", "U2"]), "json_schema")
    assert first is not None and again is not None
    assert first["json_schema"]["schema"] is again["json_schema"]["schema"]
    assert first["json_schema"]["schema"] == judgment_schema(["U1", "U2"]).model_json_schema()
