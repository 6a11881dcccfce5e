"""Short per-call names for knowledge units: a call shows its units as U1..Uk and the model names them so;
the role maps the names back to unit ids before anything is recorded.

A unit id (`ku-` and 16 hex digits) costs about 12 tokens each time a prompt shows it or a reply names it;
`U3` costs one or two. An examiner or judge call names every unit it shows at least twice (prompt and
reply), so the ids were a large share of what Ref-Eval paid per unit. The names mean nothing outside their
call, so they are never stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from examiner.agents.prompting.fence import Markup, line_element, lines


@dataclass(frozen=True)
class UnitAliases:
    """The units of one call in the order shown, named U1..Uk."""

    ids: tuple[str, ...]

    @classmethod
    def of(cls, units: Sequence[tuple[str, str]]) -> UnitAliases:
        return cls(tuple(dict.fromkeys(uid for uid, _ in units)))

    @property
    def names(self) -> list[str]:
        return [f"U{i}" for i in range(1, len(self.ids) + 1)]

    def block(self, units: Sequence[tuple[str, str]]) -> Markup:
        """The units as the prompt shows them: one `<U1>text` line each (fence.line_element), the text on
        one line and escaped (agents/prompting/fence.py), so no unit text can name a unit, end its line or
        start another. Lighter than the `<unit id="...">text</unit>` blocks of
        examiner.agents.prompting.unit_block (~3 tokens of markup per unit instead of ~9): a short name
        needs no quoting and the line's end closes the element."""
        named = dict(zip(self.ids, self.names))
        return lines(line_element(named[uid], text) for uid, text in units)

    def unit_id(self, name: str) -> str:
        """The unit id a short name stands for; a name the call did not give is returned unchanged (the
        caller then treats it as any id from outside the call)."""
        by_name = dict(zip(self.names, self.ids))
        return by_name.get(name.strip(), name)

    def shorten(self, text: str) -> str:
        """`text` (e.g. feedback on an earlier draft) with the call's unit ids replaced by their names."""
        for uid, name in zip(self.ids, self.names):
            text = text.replace(uid, name)
        return text

    @property
    def hint(self) -> dict[str, dict[str, str]]:
        """Call hint `aliases` (name -> unit id): metadata for a test backend, never part of the prompt."""
        return {"aliases": dict(zip(self.names, self.ids))}
