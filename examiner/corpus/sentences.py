"""Sentence segmentation: where the sentences of a text begin and end.

Its own module because both the corpus reader (which cuts long passages at sentence ends) and the unit
builder (sentence units) use it, and neither should import the other for it.
"""

from __future__ import annotations

import re


_ABBREVIATIONS = frozenset(
    "mr mrs ms mx dr prof sr jr st mt messrs mme mlle rev hon gen col lt sgt capt cmdr adm gov pres sen rep "
    "e.g i.e eg ie cf vs v al approx ca est inc ltd co corp dept univ assn bros viz resp "
    "fig figs tab eq eqs".split()
)
"""Words that, with a final period, do not end a sentence (compared lower-case, without that period)."""

_ABBREVIATIONS_BEFORE_NUMBER = frozenset(
    "no nos vol vols p pp art arts sec secs ch chap para ref refs ed eds jan feb mar apr jun jul aug sep sept "
    "oct nov dec op".split()
)
"""Abbreviations that only bind to a following number ("No. 5", "pp. 12", "Sept. 3")."""

_CANDIDATE = re.compile(r"([.!?…؟]+)([\"'”’)\]»]*)(\s+)(?=[\"'“‘(\[«]?(\S))")
_UNSPACED_END = re.compile(r"[。！？｡．।॥۔።։]+[\"'”’」』）)】》〉»]*")
"""Full stops that end a sentence with or without a following space: Chinese and Japanese 。！？ (and
their half-width forms), Devanagari danda । ॥, Urdu ۔, Ethiopic ።, Armenian ։."""
_LIST_OR_HEADING_LINE = re.compile(r"\n(?=[ \t]*(?:[-*•+]|\d{1,3}[.)]|#{1,6})[ \t])")
_DOTTED_ACRONYM = re.compile(r"^(?:[A-Za-z]\.){2,}$")
_INITIAL = re.compile(r"^[A-Z]\.$")


def _starts_sentence(char: str) -> bool:
    """A capital (any script), a digit, or a letter of a script without case (Arabic, Hebrew, Devanagari,
    CJK...): what may follow the space after a sentence's final punctuation."""
    return char.isupper() or char.isdigit() or (char.isalpha() and not char.islower())


def _is_boundary(text: str, punct_start: int, punct: str, next_pos: int) -> bool:
    if punct != ".":
        return True  # "!", "?", "...", "?!": sentence ends
    word_match = re.search(r"(\S+)$", text[max(0, punct_start - 40):punct_start + 1])  # a window, not O(n)
    word = word_match.group(1).lstrip("\"'“‘([") if word_match else ""
    bare = word[:-1].lower()
    if not bare:
        return True  # a spaced-out " . " (tokenised text)
    if bare in _ABBREVIATIONS or _DOTTED_ACRONYM.match(word) or _INITIAL.match(word):
        return False
    return not (bare in _ABBREVIATIONS_BEFORE_NUMBER and text[next_pos:next_pos + 1].isdigit())


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence in `text`, whitespace trimmed.

    A regex segmenter: ends at . ! ? ؟ followed by whitespace and a capital (of any script), a digit or a
    letter of a caseless script (after an optional opening quote), except after abbreviations ("e.g.",
    "Dr.", "U.S.", initials, "No. 5"); decimals never split because no space follows their point. The full
    stops of Chinese, Japanese, Devanagari and others (see _UNSPACED_END) end a sentence with or without a
    space after them. List items and headings on their own line start a new sentence.
    """
    cuts = [0]
    for m in _CANDIDATE.finditer(text):
        if _starts_sentence(m.group(4)) and _is_boundary(text, m.start(1), m.group(1), m.end()):
            cuts.append(m.end(2))
    cuts.extend(m.end() for m in _UNSPACED_END.finditer(text))
    cuts.extend(m.start() for m in _LIST_OR_HEADING_LINE.finditer(text))
    cuts = sorted(set(cuts)) + [len(text)]
    spans = []
    for a, b in zip(cuts, cuts[1:]):
        span = trim_span(text, a, b)
        if span:
            spans.append(span)
    return spans


def split_sentences(text: str) -> list[str]:
    """The sentences of `text` (see `sentence_spans`)."""
    return [text[a:b] for a, b in sentence_spans(text)]


def trim_span(text: str, a: int, b: int) -> tuple[int, int] | None:
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return (a, b) if a < b else None


__all__ = ["sentence_spans", "split_sentences", "trim_span"]
