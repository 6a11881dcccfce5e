"""The one judge contract: anything that marks answers implements `Judge`.

A judge takes a task (an exam answer with its reference units, a pair of responses, ...) and returns a
`Mark` for every thing it was asked to judge, keyed by that thing's id (a unit id, an item id). A mark
holds a label from the one vocabulary (`Verdict`, `Preference`) or `Unscored` with its reason; a
panel's mark also keeps every member's mark. Methods receive judge objects and never ask which kind
they hold: the Ref-Eval reference judge, the no-reference judge, RevisEval, G-Eval and a panel of any
of them are interchangeable.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from examiner.core.labels import Preference, Unscored, Verdict

L = TypeVar("L", Verdict, Preference)
T_contra = TypeVar("T_contra", contravariant=True)


@dataclass(frozen=True)
class Mark(Generic[L]):
    """One judge's label for one thing judged, with the reason; or Unscored with why."""

    label: L | Unscored
    reason: str = ""
    members: Mapping[str, "Mark[L]"] = field(default_factory=dict)
    """For a panel: each member's own mark, by member name (empty for a single judge)."""

    @property
    def scored(self) -> bool:
        return not isinstance(self.label, Unscored)

    @classmethod
    def unscored(cls, reason: str, raw: str = "") -> "Mark[L]":
        return cls(Unscored(reason, raw), reason)


@dataclass(frozen=True)
class ExamTask:
    """What an exam judge marks: one answer to one question, judged on the question's target units."""

    question: str
    answer: str
    units: tuple[tuple[str, str], ...]
    """(unit id, reference text) per target unit; the exam mode chooses the text (the unit itself, or
    for the Top baseline the unit's source passage)."""
    round: int
    passages: tuple[tuple[str, str], ...] = ()
    """(unit id, source passage text) per target unit where the exam knows it: shown only to a judge
    cascade's cheap tier that reads passages (`cheap_passages`); the judges themselves read `units`."""


class Judge(Protocol[T_contra, L]):
    """The contract every judge keeps (compare inspect_ai's Scorer: a small callable protocol)."""

    name: str
    """Shown in records and reports (a panel member is named by it)."""

    async def mark(self, task: T_contra) -> dict[str, Mark[L]]:
        """A mark for every id the task asks about; a missing id counts as unscored."""
        ...


def majority(marks: Mapping[str, Mark[L]]) -> Mark[L]:
    """The panel rule: the label most scored members gave. A tie for first place, or no scored member,
    is unscored (a panel never breaks a tie by a default)."""
    votes = Counter(m.label for m in marks.values() if m.scored)
    if not votes:
        return Mark(Unscored("no panel member gave a usable verdict"), "no panel member gave a usable verdict",
                    dict(marks))
    ranked = votes.most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        tied = " / ".join(sorted(str(label) for label, count in ranked if count == ranked[0][1]))
        reason = f"panel tied ({tied})"
        return Mark(Unscored(reason), reason, dict(marks))
    winner, count = ranked[0]
    reason = f"{count} of {len(marks)} panel members"
    return Mark(winner, reason, dict(marks))


@dataclass(frozen=True)
class MemberAgreement:
    """How often one member's label was the panel's, over the marks where both had a label."""

    member: str
    agreed: int
    compared: int
    unscored: int
    """Marks where this member gave no usable label."""

    @property
    def rate(self) -> float | None:
        return self.agreed / self.compared if self.compared else None


def agreement_with_panel(marks: Iterable[Mark[L]]) -> list[MemberAgreement]:
    """Per member, agreement with the panel's decision over every scored panel mark."""
    agreed: dict[str, int] = {}
    compared: dict[str, int] = {}
    unscored: dict[str, int] = {}
    for mark in marks:
        for name, own in mark.members.items():
            agreed.setdefault(name, 0)
            compared.setdefault(name, 0)
            unscored.setdefault(name, 0)
            if not own.scored:
                unscored[name] += 1
            elif mark.scored:
                compared[name] += 1
                agreed[name] += int(own.label == mark.label)
    return [MemberAgreement(n, agreed[n], compared[n], unscored[n]) for n in agreed]


__all__ = ["ExamTask", "Judge", "Mark", "MemberAgreement", "agreement_with_panel", "majority"]
