"""The language block: one short system line telling every model of an exam which language to use.

The prompts under prompts/ are written in English. When the corpus is in another language (detected, or
set with `exam.language`), the gateway of the exam appends `language_instruction` to the system message
of every call (examiner.llm.gateway.Gateway.language): the examiner writes its questions, the candidate
its answers and the judge its reasoning in the corpus language. English adds nothing, so prompts (and the
simulated results) of English corpora are exactly as before.
"""

from __future__ import annotations

from examiner.corpus.language import UNDETERMINED, language_name

_UNCHANGED = ("", "en", UNDETERMINED)


def language_instruction(code: str) -> str:
    """The line for language `code`; empty for English or an undetermined language."""
    if code in _UNCHANGED:
        return ""
    name = language_name(code)
    return (f"Language: the reference text of this exam is in {name}. Write every question, answer and "
            f"explanation in {name}; keep JSON keys and ids exactly as specified.")


def with_language(messages: list[dict[str, str]], code: str) -> list[dict[str, str]]:
    """`messages` with the language line added to the first system message (a system message of its own
    when there is none); the same list when the line is empty."""
    line = language_instruction(code)
    if not line:
        return messages
    out = [dict(m) for m in messages]
    for message in out:
        if message.get("role") == "system":
            message["content"] = f"{message['content']}\n\n{line}"
            return out
    return [{"role": "system", "content": line}, *out]
