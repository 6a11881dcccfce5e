"""An agent's card: the prompt files it renders, the reply schemas it asks for and its generation
defaults, stated in one place per agent module (its `CARD`).

Why: a reader (or a new judge method) finds what an agent sends and expects without reading its calls,
and the card cannot drift from them: the agent renders through its card's `Prompt`s, which refuse a
value the card does not name, and takes its generation settings from them. tests/agents/test_cards.py
checks every card against the prompt files.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from pydantic import BaseModel

from examiner.agents.prompting import render
from examiner.llm import GenerationConfig


@dataclass(frozen=True)
class Prompt:
    """One prompt file (prompts/<file>.md) an agent renders, the values it fills in, and how the call
    that sends it generates."""

    file: str
    values: frozenset[str]
    """The placeholders the agent fills: exactly those the file uses."""
    generation: GenerationConfig | None = None
    """The call's generation settings; None for a fragment rendered into another prompt."""
    max_tokens: Callable[[int], int] | None = None
    """For a reply whose length follows the call's input: max_tokens for an input of size n
    (`sized_by` says what n counts); `generation.max_tokens` is then replaced call by call."""
    sized_by: str = ""

    @classmethod
    def of(cls, file: str, *values: str, generation: GenerationConfig | None = None,
           max_tokens: Callable[[int], int] | None = None, sized_by: str = "") -> Prompt:
        return cls(file, frozenset(values), generation, max_tokens, sized_by)

    def render(self, **values: object) -> list[dict[str, str]]:
        """The chat messages (agents/prompting.render), refusing values other than the card's."""
        if set(values) != self.values:
            raise ValueError(f"prompt {self.file} takes {sorted(self.values)}, was given {sorted(values)}")
        return render(self.file, **values)

    def config(self, size: int | None = None) -> GenerationConfig:
        """The call's generation settings, with max_tokens for an input of `size` when the reply is sized
        by its input."""
        if self.generation is None:
            raise ValueError(f"prompt {self.file} is a fragment: no call sends it")
        config = self.generation
        if self.max_tokens is not None:
            if size is None:
                raise ValueError(f"prompt {self.file}: max_tokens follows the {self.sized_by}; give a size")
            config = replace(config, max_tokens=self.max_tokens(size))
        return config


@dataclass(frozen=True)
class AgentCard:
    """What one agent module is: its folder under agents/, the gateway role whose endpoint answers it
    (settings `roles`), the prompts it renders and the schemas its replies are validated against."""

    agent: str
    """The agent's folder under agents/ (examiner, candidate, judge, ...)."""
    name: str
    """What the module does, in a few words (`pairwise judge`, `question writer`)."""
    role: str
    prompts: tuple[Prompt, ...]
    reply_schemas: tuple[type[BaseModel], ...] = ()
    """The pydantic models replies must follow (sent as the response schema where the endpoint takes one)."""
    text_reply: str = ""
    """How a free-text reply is read, for the calls that ask for no schema ("" when every call has one)."""

    @property
    def generation(self) -> dict[str, GenerationConfig]:
        """Generation settings by prompt file (fragments have none)."""
        return {p.file: p.generation for p in self.prompts if p.generation is not None}


__all__ = ["AgentCard", "Prompt"]
