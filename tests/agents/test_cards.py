"""Every agent states its card (agents/card.py), and the card is true: the prompt files exist, the values
the agent fills are exactly the placeholders of each file, the reply schemas are pydantic models, and
a call sends the card's prompt and generation settings.

The walk finds the role modules itself (every module under agents/ that defines `CARD`), so an agent
added without a card, or a card naming a prompt that is not shipped, fails here.
"""

from __future__ import annotations

import asyncio
import importlib
import pkgutil
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import ModuleType

import pytest
from pydantic import BaseModel

import examiner.agents
from examiner.agents.card import AgentCard, Prompt
from examiner.agents.prompting import placeholder_names
from examiner.core.config import Settings
from examiner.llm import CallContext, CallResult, GenerationConfig

AGENT_FOLDERS = {"examiner", "candidate", "judge", "reviser", "evaluators", "debaters", "referee", "meta_judge", "gate"}
"""The agents of the design card, one folder each (prompting/ is shared rendering, not an agent)."""


def role_modules() -> dict[str, ModuleType]:
    """Every module under examiner.agents that defines a CARD, by dotted name."""
    found: dict[str, ModuleType] = {}
    for info in pkgutil.walk_packages(examiner.agents.__path__, "examiner.agents."):
        module = importlib.import_module(info.name)
        if isinstance(getattr(module, "CARD", None), AgentCard):
            found[info.name] = module
    return found


MODULES = role_modules()
CARDS = {name: module.CARD for name, module in MODULES.items()}
PROMPT_FILES = {entry.name[:-3] for entry in resources.files("examiner.prompts").iterdir() if entry.name.endswith(".md")}


def test_every_agent_folder_has_role_modules_with_cards() -> None:
    root = Path(examiner.agents.__file__).parent
    folders = {p.name for p in root.iterdir() if (p / "__init__.py").is_file()} - {"prompting"}
    assert folders == AGENT_FOLDERS
    assert {card.agent for card in CARDS.values()} == AGENT_FOLDERS
    for name, card in CARDS.items():
        assert name.split(".")[2] == card.agent, f"{name}: the card names agent {card.agent}"


def test_the_referee_is_its_own_agent() -> None:
    referee = CARDS["examiner.agents.referee.referee"]
    assert [p.file for p in referee.prompts] == ["meta_referee"]
    assert "meta_referee" not in {p.file for c in CARDS.values() if c.agent == "meta_judge" for p in c.prompts}


@pytest.mark.parametrize("name", sorted(CARDS))
def test_card_prompts_exist_and_their_placeholders_are_the_values_the_agent_fills(name: str) -> None:
    card = CARDS[name]
    assert card.prompts, f"{name}: a card with no prompt"
    for prompt in card.prompts:
        assert prompt.file in PROMPT_FILES, f"{name}: prompts/{prompt.file}.md is not shipped"
        assert prompt.values == placeholder_names(prompt.file), prompt.file


@pytest.mark.parametrize("name", sorted(CARDS))
def test_card_replies_are_pydantic_models_or_said_to_be_text(name: str) -> None:
    card = CARDS[name]
    for schema in card.reply_schemas:
        assert isinstance(schema, type) and issubclass(schema, BaseModel), schema
        schema.model_json_schema()  # an endpoint can be sent it
    assert card.reply_schemas or card.text_reply, f"{name}: neither a reply schema nor how its text is read"
    assert card.generation, f"{name}: no prompt that a call sends"
    for prompt in card.prompts:
        if prompt.max_tokens is not None:
            assert prompt.sized_by and prompt.config(3).max_tokens == prompt.max_tokens(3)


def test_every_shipped_prompt_belongs_to_a_card() -> None:
    carded = {p.file for card in CARDS.values() for p in card.prompts}
    assert carded == PROMPT_FILES


def test_a_prompt_refuses_values_the_card_does_not_name() -> None:
    prompt = Prompt.of("exam_answer", "question", "max_words")
    assert prompt.render(question="q", max_words=5)[-1]["content"]
    with pytest.raises(ValueError, match="exam_answer"):
        prompt.render(question="q", max_words=5, extra="x")
    with pytest.raises(ValueError, match="exam_answer"):
        prompt.render(question="q")
    with pytest.raises(ValueError, match="fragment"):
        Prompt.of("pairwise_rules", "after_line").config()


@dataclass
class RecordingGateway:
    """Records each call's role, messages and generation settings, and answers with a fixed text."""

    reply: str
    calls: list[tuple[str, list[dict[str, str]], GenerationConfig]] = field(default_factory=list)
    settings: Settings = field(default_factory=Settings)

    async def chat(self, role: str, messages: list[dict[str, str]], config: GenerationConfig,
                   context: CallContext, **_: object) -> CallResult[str]:
        self.calls.append((role, messages, config))
        return CallResult(text=self.reply, parsed=self.reply)


def test_calls_send_the_cards_role_prompt_and_generation() -> None:
    from examiner.agents.candidate import answerer
    from examiner.agents.judge import pairwise_judge, reference_judge
    from examiner.agents.reviser import reviser

    gateway = RecordingGateway("8 6\nthe first is better")
    asyncio.run(answerer.answer(gateway, "Why?", target="t", round=1, unit_ids=[], max_words=50))
    asyncio.run(pairwise_judge.judge_pair(gateway, instruction="i", answer_1="a", answer_2="b"))
    asyncio.run(reference_judge.score_with_reference(gateway, instruction="i", response="r", reference="f"))
    asyncio.run(reviser.revise(gateway, instruction="i", response="r"))
    expected = [(answerer.CARD, answerer.ANSWER.config(50)), (pairwise_judge.CARD, pairwise_judge.PAIRWISE.config()),
                (reference_judge.CARD, reference_judge.SCORE.config()), (reviser.CARD, reviser.REVISE.config())]
    for (role, _messages, config), (card, generation) in zip(gateway.calls, expected, strict=True):
        assert role == card.role and config == generation
    assert answerer.ANSWER.config(50) == GenerationConfig(max_tokens=96)
