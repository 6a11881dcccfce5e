"""How items, assessments and transcripts are shown to models, and how tagged replies are read back.

One format for every prompt (and the simulated backend parses the same tags): an item is a block of
`<instruction>`, `<output_1>`, `<output_2>` (pairwise), `<task>`, `<text>` (individual) or `<question>`,
`<answer>`, `<reference>` (verdict) sections; an assessment is `Decision: X` or `Score: N` followed by
`Explanation: ...`. Decisions and preferences are shown in the spellings the prompts ask for (Answer1 /
Answer2 / tie, correct / incorrect / unrelated, Assistant1 / Assistant2 / equally good) and read back
into the one vocabulary (examiner.core.labels) here, at the edge.
"""

from __future__ import annotations

import re

from examiner.core.assessments import Assessment, Decision, MetaItem, Turn, labels_for
from examiner.core.labels import Preference, preference_to_answer, preference_to_assistant

JDEVAL_TAGS = ("answer_reasoning", "better_answer", "assistant_reasoning", "better_assistant")


def item_block(item: MetaItem) -> str:
    if item.kind == "pairwise":
        return (f"<instruction>\n{item.instruction}\n</instruction>\n"
                f"<output_1>\n{item.output_1}\n</output_1>\n<output_2>\n{item.output_2}\n</output_2>")
    if item.kind == "individual":
        task = f"<task>\n{item.instruction}\n</task>\n" if item.instruction else ""
        return f"{task}<text>\n{item.text}\n</text>"
    return (f"<question>\n{item.instruction}\n</question>\n<answer>\n{item.text}\n</answer>\n"
            f"<reference>\n{item.reference}\n</reference>")


def decision_text(decision: Decision | None) -> str:
    """A decision as prompts spell it: Answer1 / Answer2 / tie, or the verdict itself."""
    if isinstance(decision, Preference):
        return preference_to_answer(decision)
    return str(decision)


def assessment_text(a: Assessment) -> str:
    head = (f"Score: {a.score:g}" if a.score is not None and a.decision is None
            else f"Decision: {decision_text(a.decision)}")
    return f"{head}\nExplanation: {a.explanation.strip()}"


def assessments_block(a1: Assessment, a2: Assessment) -> str:
    return (f"<assistant_1>\n{assessment_text(a1)}\n</assistant_1>\n"
            f"<assistant_2>\n{assessment_text(a2)}\n</assistant_2>")


def choices_text(item: MetaItem) -> str:
    return ", ".join(decision_text(label) for label in labels_for(item.kind))


def transcript_text(turns: list[Turn]) -> str:
    """The debate so far, one line per statement ('(none yet)' before the first question)."""
    if not turns:
        return "(none yet)"
    names = {"referee": "Referee", "assistant_1": "Assistant1", "assistant_2": "Assistant2"}
    return "\n".join(f"[round {t.round}] {names[t.speaker]}: {t.text.strip()}" for t in turns if t.kind != "unparseable")


def words(text: str) -> int:
    return len(text.split())


# ------------------------------------------------------------------ reading tagged replies

def read_tags(text: str, tags: tuple[str, ...]) -> dict[str, str] | None:
    """The content of each tag (last occurrence wins); None when any tag is missing.

    Tolerates a missing closing tag on the last section (small models stop early) but never fills in
    a missing section.
    """
    out: dict[str, str] = {}
    for i, tag in enumerate(tags):
        found = re.findall(rf"<{tag}>\s*(.*?)\s*</{tag}>", text, flags=re.DOTALL | re.IGNORECASE)
        if found:
            out[tag] = found[-1].strip()
            continue
        if i == len(tags) - 1:
            tail = re.search(rf"<{tag}>\s*(.+)$", text, flags=re.DOTALL | re.IGNORECASE)
            if tail:
                out[tag] = tail.group(1).strip()
                continue
        return None
    return out


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _match(text: str, spellings: dict[str, Decision]) -> Decision | None:
    """The one label `text` names (case, spaces and punctuation ignored); None when none or several."""
    t = _norm(text)
    exact = [label for spelling, label in spellings.items() if _norm(spelling) == t]
    if exact:
        return exact[0]
    found = [label for spelling, label in spellings.items() if _norm(spelling) in t]
    return found[0] if len(found) == 1 else None


def match_label(text: str, labels: tuple[Decision, ...]) -> Decision | None:
    """The decision among `labels` that `text` names in the prompts' spelling (`Answer1`, `correct`)."""
    return _match(text, {decision_text(label): label for label in labels})


def match_assistant(text: str) -> Preference | None:
    """The better assistant `text` names: Assistant1 (FIRST), Assistant2 (SECOND) or equally good (TIE)."""
    if _norm(text) in ("equal", "equallygood", "tie", "both", "neither", "equallygoodtie"):
        return Preference.TIE
    found = _match(text, {preference_to_assistant(p): p for p in Preference})
    return found if isinstance(found, Preference) else None
