"""A judge panel: several judges mark the same task, the majority decides (examiner.core.contract).

A panel is itself a `Judge`, so anything that takes a judge takes a panel. Members are asked at the
same time. A member whose model call fails after the gateway's retries gives an unscored mark (its
reason says so) and the others still decide; a budget stop ends the whole task, as for any judge.
`agreement_with_panel` is what the reports show per member.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from examiner.core.contract import Judge, L, Mark, majority
from examiner.llm.gateway import ModelCallError

T = TypeVar("T")


class Panel(Generic[T, L]):
    """Majority of `members` for every id any member marked; ties and all-unscored stay unscored."""

    def __init__(self, members: Sequence[Judge[T, L]], name: str = "panel") -> None:
        names = [m.name for m in members]
        if len(members) < 2:
            raise ValueError("a judge panel needs at least two members")
        if len(set(names)) != len(names):
            raise ValueError(f"panel members need distinct names, got {names}")
        self.members = list(members)
        self.name = name

    async def mark(self, task: T) -> dict[str, Mark[L]]:
        """Every member's marks, then the majority per id; raises when every member's call failed."""
        results = await asyncio.gather(*(self._member(m, task) for m in self.members))
        failures = [r for r in results if isinstance(r, ModelCallError)]
        if len(failures) == len(results):
            raise failures[0]
        keys = list(dict.fromkeys(key for r in results if not isinstance(r, ModelCallError) for key in r))
        return {key: majority({m.name: self._own(r, key) for m, r in zip(self.members, results)}) for key in keys}

    @staticmethod
    async def _member(member: Judge[T, L], task: T) -> dict[str, Mark[L]] | ModelCallError:
        try:
            return await member.mark(task)
        except ModelCallError as exc:  # one member down: the others still decide
            return exc

    @staticmethod
    def _own(result: dict[str, Mark[L]] | ModelCallError, key: str) -> Mark[L]:
        if isinstance(result, ModelCallError):
            return Mark.unscored(f"model call failed: {result}")
        return result.get(key) or Mark.unscored("this member gave no verdict for it")


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


__all__ = ["MemberAgreement", "Panel", "agreement_with_panel"]
