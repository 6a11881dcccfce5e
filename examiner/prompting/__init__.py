"""Prompt templates: one Markdown file per role and variant under `prompts/`.

A template file holds a `### system` section and a `### user` section. Placeholders use
`string.Template` syntax (`$name` or `${name}`), so JSON examples with braces need no escaping.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from string import Template

_SECTION = re.compile(r"^### (system|user)\s*$", re.MULTILINE)


@lru_cache(maxsize=None)
def _sections(name: str) -> dict[str, Template]:
    text = resources.files("prompts").joinpath(f"{name}.md").read_text(encoding="utf-8")
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
    for entry in sorted(resources.files("prompts").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".md"):
            digest.update(entry.name.encode() + b"\0" + entry.read_bytes() + b"\0")
    return digest.hexdigest()


def render(name: str, **values: object) -> list[dict[str, str]]:
    """Chat messages for prompt `name` with placeholders filled; a missing value raises KeyError."""
    sections = _sections(name)
    text_values = {key: str(value) for key, value in values.items()}
    messages = []
    if "system" in sections:
        messages.append({"role": "system", "content": sections["system"].substitute(text_values)})
    messages.append({"role": "user", "content": sections["user"].substitute(text_values)})
    return messages


def unit_block(units: list[tuple[str, str]]) -> str:
    """Units as `<unit id="...">text</unit>` lines: the one format every prompt uses to show units
    (the simulated backend reads ids from it)."""
    return "\n".join(f'<unit id="{uid}">{text}</unit>' for uid, text in units)
