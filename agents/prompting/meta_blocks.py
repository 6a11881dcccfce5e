"""How items, assessments and transcripts are shown to models, and how tagged replies are read back.

One format for every prompt (and the simulated backend parses the same tags): an item is a block of
`<instruction>`, `<output_1>`, `<output_2>` (pairwise), `<task>`, `<text>` (individual) or `<question>`,
`<answer>`, `<reference>` (verdict) sections; an assessment is `Decision: X` or `Score: N` followed by
`Explanation: ...`. Decisions and preferences are shown in the spellings the prompts ask for (Answer1 /
Answer2 / tie, correct / incorrect / unrelated, Assistant1 / Assistant2 / equally good) and read back
into the one vocabulary (examiner.core.labels) here, at the edge.

Every value in a block is escaped (fence.py), so an instruction, output, explanation or debate statement
cannot close its block or open another; an explanation sits on one line, so it cannot start a
`Decision:` line of its own.
"""

from __future__ import annotations

import re

from examiner.core.assessments import Assessment, Decision, MetaItem, Turn, labels_for
from examiner.core.labels import Preference, preference_to_answer, preference_to_assistant
from examiner.core.passed_text import cut_passed
from examiner.agents.prompting.fence import Markup, escape, fenced, lines, one_line, tagged

JDEVAL_TAGS = ("answer_reasoning", "better_answer", "assistant_reasoning", "better_assistant")


def item_block(item: MetaItem, *, limit: int) -> Markup:
    """The item's sections; its outputs (texts models wrote) cut to `limit` characters
    (examiner.core.passed_text)."""
    if item.kind == "pairwise":
        return lines([fenced("instruction", item.instruction), fenced("output_1", cut_passed(item.output_1, limit)),
                      fenced("output_2", cut_passed(item.output_2, limit))])
    if item.kind == "individual":
        task = [fenced("task", item.instruction)] if item.instruction else []
        return lines([*task, fenced("text", cut_passed(item.text, limit))])
    return lines([fenced("question", item.instruction), fenced("answer", cut_passed(item.text, limit)),
                  fenced("reference", item.reference)])


def decision_text(decision: Decision | None) -> str:
    """A decision as prompts spell it: Answer1 / Answer2 / tie, or the verdict itself."""
    if isinstance(decision, Preference):
        return preference_to_answer(decision)
    return str(decision)


def assessment_text(a: Assessment, *, limit: int) -> Markup:
    """An evaluator's decision and its explanation (on one line, cut to `limit` characters)."""
    head = (f"Score: {a.score:g}" if a.score is not None and a.decision is None
            else f"Decision: {escape(decision_text(a.decision))}")
    return Markup(f"{head}\nExplanation: {escape(one_line(cut_passed(a.explanation, limit)))}")


def assessments_block(a1: Assessment, a2: Assessment, *, limit: int) -> Markup:
    return Markup(f"<assistant_1>\n{assessment_text(a1, limit=limit)}\n</assistant_1>\n"
                  f"<assistant_2>\n{assessment_text(a2, limit=limit)}\n</assistant_2>")


def choices_text(item: MetaItem) -> str:
    return ", ".join(decision_text(label) for label in labels_for(item.kind))


def transcript_text(turns: list[Turn], *, limit: int) -> Markup:
    """The debate so far, one `<turn round="N" speaker="...">statement</turn>` line per statement, the
    statement cut to `limit` characters, escaped and on one line ('(none yet)' before the first question)."""
    if not turns:
        return Markup("(none yet)")
    names = {"referee": "Referee", "assistant_1": "Assistant1", "assistant_2": "Assistant2"}
    return lines(tagged("turn", one_line(cut_passed(t.text, limit)), round=t.round, speaker=names[t.speaker])
                 for t in turns if t.kind != "unparseable")


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
