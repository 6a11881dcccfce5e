"""The judge contract's panel: majority, ties and all-unscored stay unscored, member failures, agreement."""

from __future__ import annotations

import asyncio

import pytest

from examiner.core.contract import Mark, agreement_with_panel, majority
from examiner.core.labels import Preference, Unscored, Verdict
from examiner.judging.panel import Panel
from examiner.llm.gateway import ModelCallError

C, I, U = Verdict.CORRECT, Verdict.INCORRECT, Verdict.UNRELATED  # noqa: E741 - I for INCORRECT, as C and U


class Fixed:
    """A judge that returns the marks it was built with (or fails like an endpoint that is down)."""

    def __init__(self, name: str, labels: dict[str, object], fail: bool = False) -> None:
        self.name, self.labels, self.fail = name, labels, fail

    async def mark(self, task: str) -> dict[str, Mark[Verdict]]:
        if self.fail:
            raise ModelCallError(f"{self.name} is down", [])
        return {k: Mark(v, f"{self.name} says {v}") if not isinstance(v, Unscored) else Mark(v, v.reason)
                for k, v in self.labels.items()}


def test_majority_takes_the_most_given_label() -> None:
    mark = majority({"a": Mark(C), "b": Mark(C), "c": Mark(I)})
    assert mark.label is C and mark.reason == "2 of 3 panel members"
    assert set(mark.members) == {"a", "b", "c"}


def test_a_tie_for_first_place_is_unscored_not_a_default() -> None:
    mark = majority({"a": Mark(C), "b": Mark(I), "c": Mark.unscored("did not parse")})
    assert isinstance(mark.label, Unscored) and "tied" in mark.label.reason
    assert not mark.scored


def test_all_unscored_stays_unscored() -> None:
    mark = majority({"a": Mark.unscored("x"), "b": Mark.unscored("y")})
    assert isinstance(mark.label, Unscored)


def test_majority_works_for_preferences_too() -> None:
    mark = majority({"a": Mark(Preference.FIRST), "b": Mark(Preference.FIRST), "c": Mark(Preference.TIE)})
    assert mark.label is Preference.FIRST


def test_panel_marks_every_id_and_keeps_each_member() -> None:
    panel = Panel([Fixed("a", {"u1": C, "u2": U}), Fixed("b", {"u1": C, "u2": I}), Fixed("c", {"u1": I})])
    marks = asyncio.run(panel.mark("task"))
    assert marks["u1"].label is C
    assert isinstance(marks["u2"].label, Unscored)  # U vs I, and c gave nothing: a tie
    assert marks["u2"].members["c"].reason == "this member gave no verdict for it"


def test_a_failed_member_is_unscored_and_the_others_decide() -> None:
    panel = Panel([Fixed("a", {"u1": C}), Fixed("b", {"u1": C}), Fixed("down", {}, fail=True)])
    marks = asyncio.run(panel.mark("task"))
    assert marks["u1"].label is C
    assert "model call failed" in marks["u1"].members["down"].reason


def test_a_panel_whose_every_member_failed_raises() -> None:
    panel = Panel([Fixed("a", {}, fail=True), Fixed("b", {}, fail=True)])
    with pytest.raises(ModelCallError):
        asyncio.run(panel.mark("task"))


def test_panel_needs_two_distinct_members() -> None:
    with pytest.raises(ValueError):
        Panel([Fixed("a", {})])
    with pytest.raises(ValueError):
        Panel([Fixed("a", {}), Fixed("a", {})])


def test_agreement_with_panel_per_member() -> None:
    panel = Panel([Fixed("a", {"u1": C, "u2": I, "u3": C}), Fixed("b", {"u1": C, "u2": I, "u3": U}),
                   Fixed("c", {"u1": I, "u2": I, "u3": Unscored("did not parse")})])
    marks = asyncio.run(panel.mark("task")).values()
    rows = {r.member: r for r in agreement_with_panel(marks)}
    # u1: C (a, b agree; c not); u2: I (all agree); u3: C vs U tie -> unscored, not compared
    assert (rows["a"].agreed, rows["a"].compared) == (2, 2)
    assert (rows["c"].agreed, rows["c"].compared, rows["c"].unscored) == (1, 2, 1)
    assert rows["c"].rate == 0.5
