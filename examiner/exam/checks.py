"""Checks on examiner questions: length, answer leaks, and the question's wh-type, in any script.

A question leaks when its wording carries too much of a target unit's *distinctive* content: the unit's
content terms that are not shared by most of its cluster (shared terms name the topic, which a question
may and should mention). Units with fewer than four distinctive terms are too short to judge and pass.

Terms are script-independent: words of any alphabet (Latin, Cyrillic, Greek, Arabic, Hebrew, Devanagari,
Hangul...) as Unicode letters and digits, and, for scripts written without spaces (Chinese, Japanese kanji
and katakana, Thai, Lao, Khmer, Myanmar), overlapping character pairs of each run. Japanese hiragana
(mostly particles and endings) and the commonest Chinese function characters separate runs rather than
count as terms. English behaves as it always did: its terms and stop words are unchanged.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache

_UNSPACED_CHARS = ("\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"  # Han
                   "\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f"  # Katakana
                   "\u0e00-\u0e7f\u0e80-\u0eff\u1780-\u17ff\u1000-\u109f")  # Thai, Lao, Khmer, Myanmar
_HIRAGANA = "\u3040-\u309f"
_ZH_FUNCTION_CHARS = "的了是在和与及也而之其这那们着或"
_TERM = re.compile(
    rf"(?P<run>[{_UNSPACED_CHARS}]+)"
    rf"|(?P<word>[^\W_{_UNSPACED_CHARS}{_HIRAGANA}](?:[^\W_{_UNSPACED_CHARS}{_HIRAGANA}]|['\-])*)"
)
_RUN_BREAK = re.compile(f"[{_ZH_FUNCTION_CHARS}]")
_UNSPACED_RUN = re.compile(f"[{_UNSPACED_CHARS}{_HIRAGANA}]+")

_STOP = frozenset(
    """a an the and or but if of at by for with about against between into through during before after above
    below to from up down in out on off over under again further then once here there when where why how all
    any both each few more most other some such no nor not only own same so than too very can will just should
    now is are was were be been being have has had having do does did doing i me my we our you your he him his
    she her it its they them their what which who whom this that these those am also as may might must would
    could shall while because until within without per via its it's""".split()
)
_STOP_OTHER_SCRIPTS = frozenset(
    # Russian (Cyrillic): words that never occur in English text, so English results cannot move
    """и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только ее мне было
    вот от меня еще нет о из ему теперь когда даже ну вдруг ли если уже или ни быть был него до вас нибудь
    опять уж вам ведь там потом себя ничего ей может они тут где есть надо ней для мы тебя их чем была сам
    чтоб без будто чего раз тоже себе под будет ж тогда кто этот того потому этого какой совсем ним здесь
    этом один почти мой тем чтобы нее сейчас были куда зачем всех никогда можно при наконец два об другой
    хоть после над больше тот через эти нас про всего них какая много разве три эту моя впрочем хорошо свою
    этой перед иногда лучше чуть том нельзя такой им более всегда конечно всю между это также является
    """
    # Arabic
    """في من على إلى عن مع هذا هذه ذلك تلك التي الذي الذين هو هي هم كان كانت يكون أن إن لا ما لم لن قد
    ثم أو و أي كل بعض غير بين عند حتى إذا كما لكن بل منذ فيه فيها منه منها به بها له لها"""
    .split()
)
_QTYPES = ("who", "what", "when", "where", "why", "how")
_QTYPE_ALIASES = {"which": "what", "whom": "who", "whose": "who"}

_INTERROGATIVES: dict[str, dict[str, str]] = {
    "es": {"quién": "who", "quiénes": "who", "qué": "what", "cuál": "what", "cuáles": "what",
           "cuándo": "when", "dónde": "where", "adónde": "where", "cómo": "how", "cuánto": "how",
           "cuánta": "how", "cuántos": "how", "cuántas": "how"},
    "fr": {"qui": "who", "quoi": "what", "que": "what", "qu'est-ce": "what", "quel": "what", "quelle": "what",
           "quels": "what", "quelles": "what", "lequel": "what", "laquelle": "what", "quand": "when",
           "où": "where", "pourquoi": "why", "comment": "how", "combien": "how"},
    "de": {"wer": "who", "wen": "who", "wem": "who", "wessen": "who", "was": "what", "welche": "what",
           "welcher": "what", "welches": "what", "welchen": "what", "welchem": "what", "wann": "when",
           "wo": "where", "wohin": "where", "woher": "where", "warum": "why", "weshalb": "why",
           "wieso": "why", "weswegen": "why", "wie": "how"},
    "it": {"chi": "who", "che": "what", "cosa": "what", "quale": "what", "quali": "what", "quando": "when",
           "dove": "where", "perché": "why", "come": "how", "quanto": "how", "quanti": "how"},
    "pt": {"quem": "who", "que": "what", "qual": "what", "quais": "what", "quando": "when", "onde": "where",
           "porque": "why", "como": "how", "quanto": "how", "quantos": "how"},
    "ru": {"кто": "who", "кого": "who", "кому": "who", "кем": "who", "чей": "who", "чья": "who", "что": "what",
           "чего": "what", "чему": "what", "чем": "what", "какой": "what", "какая": "what", "какое": "what",
           "какие": "what", "каков": "what", "который": "what", "которая": "what", "когда": "when",
           "где": "where", "куда": "where", "откуда": "where", "почему": "why", "зачем": "why", "как": "how",
           "сколько": "how"},
    "ar": {"مَن": "who", "ماذا": "what", "ما": "what", "ماهو": "what", "ماهي": "what", "أي": "what", "متى": "when",
           "أين": "where", "لماذا": "why", "كيف": "how", "كم": "how"},
}
"""Interrogative words of languages written with spaces, by detected language (question words only: a
word that is mostly a conjunction, like Spanish `que` without its accent, is left out)."""

_CJK_INTERROGATIVES: tuple[tuple[str, str], ...] = (
    # longer forms first: at one position the longest match wins
    ("什么时候", "when"), ("什麼時候", "when"), ("为什么", "why"), ("為什麼", "why"), ("何時", "when"),
    ("何时", "when"), ("几时", "when"), ("哪一年", "when"), ("哪年", "when"), ("哪里", "where"),
    ("哪裡", "where"), ("哪儿", "where"), ("何处", "where"), ("何處", "where"), ("为何", "why"), ("為何", "why"),
    ("何故", "why"), ("怎么", "how"), ("怎麼", "how"), ("怎样", "how"), ("怎樣", "how"), ("如何", "how"),
    ("多少", "how"), ("什么", "what"), ("什麼", "what"), ("哪", "what"), ("谁", "who"), ("誰", "who"),
    ("だれ", "who"), ("どなた", "who"), ("いつ", "when"), ("どこ", "where"), ("なぜ", "why"),
    ("どうして", "why"), ("なんで", "why"), ("どのように", "how"), ("どうやって", "how"), ("いくつ", "how"),
    ("いくら", "how"), ("どう", "how"), ("どの", "what"), ("どれ", "what"), ("なに", "what"), ("何", "what"),
)
"""Chinese (simplified and traditional) and Japanese question words, found anywhere in the question."""


def _terms(text: str) -> list[str]:
    out = []
    for m in _TERM.finditer(text):
        if m.group("word"):
            out.append(m.group("word").casefold())
            continue
        for piece in _RUN_BREAK.split(m.group("run")):
            if len(piece) == 1:
                out.append(piece)
            out.extend(piece[i:i + 2] for i in range(len(piece) - 1))
    return out


def content_words(text: str) -> list[str]:
    """Content terms: lower-cased words minus stop words and one-letter words, plus character pairs (and
    lone characters) of scripts written without spaces."""
    return [t for t in _terms(text)
            if t not in _STOP and t not in _STOP_OTHER_SCRIPTS
            and (len(t) > 1 or _UNSPACED_RUN.fullmatch(t) is not None)]


def word_count(text: str) -> int:
    """Words separated by spaces; a run of a script written without spaces counts one word per two
    characters (a Chinese word is one to two characters long)."""
    runs = _UNSPACED_RUN.findall(text)
    if not runs:
        return len(text.split())
    spaced = [w for w in _UNSPACED_RUN.sub(" ", text).split() if any(ch.isalnum() for ch in w)]
    return len(spaced) + sum(math.ceil(len(run) / 2) for run in runs)


def question_type(question: str) -> str:
    """who / what / when / where / why / how from the first wh-word, else `other`.

    English wh-words are looked for first (as they always were); then the question words of Chinese and
    Japanese; then those of Russian for a question in Cyrillic, of Arabic for one in Arabic script, else
    of the question's detected language (Spanish, French, German, Italian, Portuguese)."""
    for word in (m.group(0).lower() for m in _ASCII_WORD.finditer(question)):
        word = _QTYPE_ALIASES.get(word, word)
        if word in _QTYPES:
            return word
    if _UNSPACED_RUN.search(question):
        found = [(question.find(w), -len(w), kind) for w, kind in _CJK_INTERROGATIVES if w in question]
        if found:
            return min(found)[2]
    table = _INTERROGATIVES.get(_script_language(question) or _question_language(question))
    if table:
        words = [w for w in _terms(question)]
        for index, word in enumerate(words):
            if word == "qué" and index > 0 and words[index - 1] == "por":
                return "why"  # Spanish "por qué"
            if word in table:
                return table[word]
    return "other"


_ASCII_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-]*")
"""English words, exactly as question types were always read."""


_CYRILLIC = re.compile("[\u0400-\u04ff]")
_ARABIC = re.compile("[\u0600-\u06ff]")


def _script_language(question: str) -> str:
    """`ru` or `ar` when the script alone tells which interrogatives to read (short questions are where
    detection confuses Russian with Bulgarian or Ukrainian)."""
    if _CYRILLIC.search(question):
        return "ru"
    return "ar" if _ARABIC.search(question) else ""


@lru_cache(maxsize=4096)
def _question_language(question: str) -> str:
    from examiner.corpus.language import detect_language

    return detect_language(question)


def distinctive_words(unit_text: str, cluster_texts: list[str]) -> set[str]:
    """Content terms of a unit that fewer than half of the cluster's units share."""
    counts = Counter(word for text in cluster_texts for word in set(content_words(text)))
    limit = max(2, len(cluster_texts) / 2)
    return {w for w in content_words(unit_text) if counts[w] < limit}


def leaking_targets(
    question: str, targets: list[str], texts: dict[str, str], threshold: float
) -> list[str]:
    """Ids of target units whose distinctive terms appear in the question above `threshold` share (each
    target's `distinctive_words` among `texts`, with every text's terms taken and counted once, not once
    per target)."""
    asked = set(content_words(question))
    terms = {uid: content_words(text) for uid, text in texts.items()}
    counts = Counter(word for words in terms.values() for word in set(words))
    limit = max(2, len(texts) / 2)
    leaks = []
    for uid in targets:
        words = {w for w in terms[uid] if counts[w] < limit}
        if len(words) >= 4 and len(words & asked) / len(words) > threshold:
            leaks.append(uid)
    return leaks
