"""Carrying untrusted text in prompts: nothing a corpus, a dataset or a model writes can forge a prompt's
structure or its instructions.

One rule, applied by `render` to every value it substitutes: the value is escaped (`&`, `<`, `>` become
`&amp;`, `&lt;`, `&gt;`), and every structural marker the tool emits is a tag (`<exam_answer>` fences in
the templates, `<U1>` unit lines (`line_element`), `<unit id="...">`, `<passage id="...">`, the item and assessment blocks
of meta_blocks). Escaped text holds no `<`, so it can open or close no block, name no unit and never
stand outside its fence; chat-template tokens such as `<|im_start|>` lose their brackets the same way.
Blocks built here are `Markup`: their own values are escaped already, so `render` inserts them as they
are. Escaping is the standard one, exactly reversible (`unescape`: the simulated backend reads values
back with it), models read `&lt;` as `<`, and honest text seldom holds these characters, so it costs
nothing in the common case.

Every template puts its untrusted values inside named fences and ends with its own instruction line,
after the data (a document cannot end the prompt). `string.Template` substitutes in one pass, so a
`$units` or `${question}` inside a value is never expanded.
"""

from __future__ import annotations

from collections.abc import Iterable

_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"))


class Markup(str):
    """Prompt text built by code whose untrusted parts are escaped already: `render` inserts it as is."""

    __slots__ = ()


def escape(text: object) -> str:
    """`text` with `&`, `<` and `>` escaped (a `Markup` value is returned as it is)."""
    if isinstance(text, Markup):
        return str(text)
    out = str(text)
    for raw, escaped in _ESCAPES:
        out = out.replace(raw, escaped)
    return out


def unescape(text: str) -> str:
    """The inverse of `escape`: `unescape(escape(t)) == t` for every text (other entities stay as they are)."""
    for raw, escaped in reversed(_ESCAPES):
        text = text.replace(escaped, raw)
    return text


def attribute(value: object) -> str:
    """A value for a tag attribute (`id="..."`): escaped, double quotes too."""
    return escape(value).replace('"', "&quot;")


def one_line(text: str) -> str:
    """`text` with every run of whitespace (newlines included) one space: a value shown on a line of its own
    cannot start another line."""
    return " ".join(str(text).split())


def fenced(tag: str, text: object) -> Markup:
    """`text` escaped inside a `<tag>` block whose tags stand on lines of their own."""
    return Markup(f"<{tag}>\n{escape(text)}\n</{tag}>")


def tagged(tag: str, text: object, **attributes: object) -> Markup:
    """One `<tag a="...">text</tag>` element with escaped text and attribute values."""
    attrs = "".join(f' {name}="{attribute(value)}"' for name, value in attributes.items())
    return Markup(f"<{tag}{attrs}>{escape(text)}</{tag}>")


def line_element(tag: str, text: object) -> Markup:
    """`<tag>text`: an element that is one whole line, its text escaped and on one line (`one_line`). No
    closing tag is needed: the text holds no `<` and no line break, so it cannot end the element early, run
    on into the next line or open another, and the line's end closes it. Three tokens a line fewer than
    `tagged` (`</U1>`), which counts where a prompt lists many short units."""
    return Markup(f"<{tag}>{escape(one_line(str(text)))}")


def lines(elements: Iterable[str]) -> Markup:
    """Code-built elements, one a line."""
    return Markup("\n".join(elements))


__all__ = ["Markup", "attribute", "escape", "fenced", "line_element", "lines", "one_line", "tagged", "unescape"]
