"""Which language a text is in, and what that language is called.

Detection uses langdetect (a port of Google's language-detection: character n-gram profiles of 55
languages shipped inside the package, so nothing is downloaded at run time). Its sampling is seeded here,
so the same text always gets the same answer. Only the first `SAMPLE_CHARS` characters of a document are
read: enough for a stable answer, and a large corpus is not slowed down.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

UNDETERMINED = "und"
"""The code of a text whose language cannot be told (too short, no letters): BCP 47's 'undetermined'."""

SAMPLE_CHARS = 2000

NAMES = {
    "af": "Afrikaans", "ar": "Arabic", "bg": "Bulgarian", "bn": "Bengali", "ca": "Catalan", "cs": "Czech",
    "cy": "Welsh", "da": "Danish", "de": "German", "el": "Greek", "en": "English", "es": "Spanish",
    "et": "Estonian", "fa": "Persian", "fi": "Finnish", "fr": "French", "gu": "Gujarati", "he": "Hebrew",
    "hi": "Hindi", "hr": "Croatian", "hu": "Hungarian", "id": "Indonesian", "it": "Italian", "ja": "Japanese",
    "kn": "Kannada", "ko": "Korean", "lt": "Lithuanian", "lv": "Latvian", "mk": "Macedonian",
    "ml": "Malayalam", "mr": "Marathi", "ne": "Nepali", "nl": "Dutch", "no": "Norwegian", "pa": "Punjabi",
    "pl": "Polish", "pt": "Portuguese", "ro": "Romanian", "ru": "Russian", "sk": "Slovak", "sl": "Slovenian",
    "so": "Somali", "sq": "Albanian", "sv": "Swedish", "sw": "Swahili", "ta": "Tamil", "te": "Telugu",
    "th": "Thai", "tl": "Tagalog", "tr": "Turkish", "uk": "Ukrainian", "ur": "Urdu", "vi": "Vietnamese",
    "zh": "Chinese",
}
"""English names of the languages langdetect knows, by ISO 639-1 code."""


def language_name(code: str) -> str:
    """`Chinese` for `zh`; the code itself for a language without a name here."""
    return NAMES.get(code, "an unknown language" if code == UNDETERMINED else code)


def detect_language(text: str) -> str:
    """ISO 639-1 code of the text's language (`zh` for both Chinese scripts), or `und`."""
    from langdetect import DetectorFactory, LangDetectException, detect

    DetectorFactory.seed = 0  # langdetect samples n-grams at random: a fixed seed makes it deterministic
    sample = text[:SAMPLE_CHARS]
    if not any(ch.isalpha() for ch in sample):
        return UNDETERMINED
    try:
        code = detect(sample)
    except LangDetectException:  # no usable features in the text (digits, symbols): undetermined
        return UNDETERMINED
    return code.split("-")[0]


def language_probabilities(text: str) -> dict[str, float]:
    """langdetect's probability per language code for `text` (seeded, as `detect_language`; `zh` for both
    Chinese scripts); empty when the text has no usable letters. For short texts (a question) where the
    single best guess is noisy: Chinese read as Korean with 0.57 against 0.43."""
    from langdetect import DetectorFactory, LangDetectException, detect_langs

    DetectorFactory.seed = 0
    sample = text[:SAMPLE_CHARS]
    if not any(ch.isalpha() for ch in sample):
        return {}
    try:
        found = detect_langs(sample)
    except LangDetectException:
        return {}
    result: dict[str, float] = {}
    for item in found:
        code = item.lang.split("-")[0]
        result[code] = result.get(code, 0.0) + item.prob
    return result


def dominant_language(weighted: Iterable[tuple[str, int]]) -> str:
    """The language holding the most characters among (language, characters) pairs, undetermined ones
    left out unless nothing else is known; ties go to the language met first."""
    totals: Counter[str] = Counter()
    for code, size in weighted:
        totals[code] += size
    known = [(code, n) for code, n in totals.items() if code != UNDETERMINED]
    if not known:
        return UNDETERMINED if totals else "en"
    return max(known, key=lambda item: item[1])[0]
