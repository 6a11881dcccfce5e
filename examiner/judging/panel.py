"""A judge panel: several judges mark the same task, the majority decides (examiner.core.contract).

A panel is itself a `Judge`, so anything that takes a judge takes a panel. Members are asked at the
same time. A member whose model call fails after the gateway's retries gives an unscored mark (its
reason says so) and the others still decide; a budget stop ends the whole task, as for any judge.
What the reports show per member is `agreement_with_panel` (examiner.core.contract: the exam report,
below the methods, computes it from verdict records too).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
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


__all__ = ["Panel"]
