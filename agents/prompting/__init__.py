"""Prompt templates: one Markdown file per role and variant under `prompts/`.

A template file holds a `### system` section and a `### user` section. Placeholders use
`string.Template` syntax (`$name` or `${name}`), so JSON examples with braces need no escaping.

Every value is escaped as it is substituted (agents/prompting/fence.py): untrusted text (units,
passages, answers, questions and assessments written by models) cannot forge the prompt's tags; blocks
that code builds from escaped parts are `Markup` and go in as they are.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from string import Template

from examiner.agents.prompting.fence import Markup, escape, lines, tagged

_SECTION = re.compile(r"^### (system|user)\s*$", re.MULTILINE)


@lru_cache(maxsize=None)
def _sections(name: str) -> dict[str, Template]:
    text = resources.files("examiner.prompts").joinpath(f"{name}.md").read_text(encoding="utf-8")
    parts = _SECTION.split(text)
    sections: dict[str, Template] = {}
    for label, body in zip(parts[1::2], parts[2::2]):
        sections[label] = Template(body.strip("\n"))
    if "user" not in sections:
        raise ValueError(f"prompt {name} has no '### user' section")
    return sections


def prompts_digest() -> str:
    """SHA-256 over every prompt file (name and text, in name order): which prompts a run used, recorded in
    run.json so that a run exported or compared later says whether the prompts have changed since."""
    import hashlib

    digest = hashlib.sha256()
    for entry in sorted(resources.files("examiner.prompts").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".md"):
            digest.update(entry.name.encode() + b"\0" + entry.read_bytes() + b"\0")
    return digest.hexdigest()


def render(name: str, **values: object) -> list[dict[str, str]]:
    """Chat messages for prompt `name` with placeholders filled, each value escaped unless it is `Markup`
    (fence.py); a missing value raises KeyError. Substitution is one pass: a `$name` inside a value stays
    as it is."""
    sections = _sections(name)
    text_values = {key: escape(value) for key, value in values.items()}
    messages = []
    if "system" in sections:
        messages.append({"role": "system", "content": sections["system"].substitute(text_values)})
    messages.append({"role": "user", "content": sections["user"].substitute(text_values)})
    return messages


def placeholder_names(name: str | None = None) -> frozenset[str]:
    """The placeholder names (`$units`, `${question}`, ...) prompt file `name` uses, or those of every
    prompt file when no name is given: the health check `instruction_like_units` looks for them in unit
    texts, and the agents' cards (agents/card.py) are checked against them."""
    if name is None:
        files = [e.name[:-3] for e in resources.files("examiner.prompts").iterdir() if e.name.endswith(".md")]
        return frozenset().union(*(placeholder_names(file) for file in files))
    names: set[str] = set()
    for section in _sections(name).values():
        for match in section.pattern.finditer(section.template):
            found = match.group("named") or match.group("braced")
            if found:
                names.add(found)
    return frozenset(names)


def unit_block(units: list[tuple[str, str]]) -> Markup:
    """Units as `<unit id="...">text</unit>` lines, texts escaped: the format of prompts that show units by
    id (the simulated backend reads ids from it)."""
    return lines(tagged("unit", text, id=uid) for uid, text in units)
