"""The simulated examiner's question in the exam's language, and two faults of a weak examiner on request.

Why: the gateway tells every model which language the exam is held in (examiner.llm.reply_language); a
real examiner then writes German questions for a German corpus. The simulator used to write English
filler whatever the language, so a simulated run on a non-English corpus looked like the degenerate
examiner the health check `wrong_language_questions` looks for. It now reads that language line and
writes its question from a small phrasebook of the language (German, French, Spanish, Italian,
Portuguese, Dutch, Russian, Chinese, Japanese; other languages keep the English filler).

Two options of a simulated endpoint reproduce what a weak local model did (issue 29):
- `question_language: English` writes every question in that language, whatever the exam's (the local
  model that wrote 15 English questions out of 15 for a German corpus);
- `label_leak_share: 0.5` makes that seeded share of questions name the prompt's unit labels ("U1").
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any

from examiner.simulator.prose import stable_uniform, wh_question

_LANGUAGE_LINE = re.compile(r"Language: the reference text of this exam is in ([^.\n]+)\.")

_PHRASEBOOK: dict[str, dict[str, tuple[str, ...]]] = {
    "German": {
        "wh": ("Welche", "Warum", "Wie", "Wann", "Wo", "Wodurch"),
        "noun": ("Bedeutung", "Rolle", "Wirkung", "Entwicklung", "Aufgabe", "Grundlage", "Verbindung", "Ordnung"),
        "adj": ("wichtige", "allgemeine", "besondere", "neue", "gemeinsame", "spätere"),
        "pattern": ("{wh} {adj} {noun} hat die {noun2} für die {adj2} {noun3} nach dem Text, und was folgt "
                    "daraus für die {noun4}",),
    },
    "French": {
        "wh": ("Quelle", "Pourquoi", "Comment", "Quand", "Où"),
        "noun": ("importance", "fonction", "évolution", "relation", "origine", "structure", "règle", "forme"),
        "adj": ("principale", "générale", "particulière", "nouvelle", "commune", "ancienne"),
        "pattern": ("{wh} la {noun} {adj} de la {noun2} change-t-elle la {noun3} {adj2} selon le texte, et "
                    "que devient la {noun4}",),
    },
    "Spanish": {
        "wh": ("Qué", "Por qué", "Cómo", "Cuándo", "Dónde"),
        "noun": ("función", "relación", "importancia", "estructura", "regla", "forma", "historia", "parte"),
        "adj": ("principal", "general", "particular", "nueva", "común", "antigua"),
        "pattern": ("¿{wh} cambia la {noun} {adj} de la {noun2} la {noun3} {adj2} según el texto, y qué "
                    "pasa con la {noun4}",),
    },
    "Italian": {
        "wh": ("Quale", "Perché", "Come", "Quando", "Dove"),
        "noun": ("funzione", "relazione", "importanza", "struttura", "regola", "forma", "storia", "parte"),
        "adj": ("principale", "generale", "particolare", "nuova", "comune", "antica"),
        "pattern": ("{wh} la {noun} {adj} della {noun2} cambia la {noun3} {adj2} secondo il testo, e che "
                    "cosa succede alla {noun4}",),
    },
    "Portuguese": {
        "wh": ("Qual", "Por que", "Como", "Quando", "Onde"),
        "noun": ("função", "relação", "importância", "estrutura", "regra", "forma", "história", "parte"),
        "adj": ("principal", "geral", "particular", "nova", "comum", "antiga"),
        "pattern": ("{wh} a {noun} {adj} da {noun2} muda a {noun3} {adj2} segundo o texto, e o que acontece "
                    "com a {noun4}",),
    },
    "Dutch": {
        "wh": ("Welke", "Waarom", "Hoe", "Wanneer", "Waar"),
        "noun": ("betekenis", "rol", "werking", "ontwikkeling", "taak", "grondslag", "verbinding", "orde"),
        "adj": ("belangrijke", "algemene", "bijzondere", "nieuwe", "gemeenschappelijke", "latere"),
        "pattern": ("{wh} {adj} {noun} heeft de {noun2} volgens de tekst voor de {adj2} {noun3}, en wat "
                    "betekent dit eigenlijk voor de {noun4} van het geheel",),
    },
    "Russian": {
        "wh": ("Какую", "Почему", "Как", "Когда", "Где"),
        "noun": ("роль", "связь", "форму", "основу", "задачу", "структуру", "историю", "часть"),
        "adj": ("главную", "общую", "особую", "новую", "прежнюю", "важную"),
        "pattern": ("{wh} {adj} {noun} играет {noun2} для {adj2} {noun3} согласно тексту, и что из этого "
                    "следует для {noun4}",),
    },
    "Chinese": {
        "wh": ("为什么", "如何", "什么时候", "在哪里", "怎样"),
        "noun": ("意义", "作用", "关系", "原则", "方法", "结构", "变化", "基础"),
        "adj": ("主要", "一般", "特别", "新的", "共同", "早期"),
        "pattern": ("根据这段文本的内容，{adj}{noun}{wh}影响了{noun2}和{adj2}{noun3}？这对于我们理解{noun4}来说意味着什么",),
    },
    "Japanese": {
        "wh": ("なぜ", "どのように", "いつ", "どこで", "どうして"),
        "noun": ("意味", "役割", "関係", "原則", "方法", "構造", "変化", "基礎"),
        "adj": ("主な", "一般的な", "特別な", "新しい", "共通の", "初期の"),
        "pattern": ("本文によると、{adj}{noun}は{wh}{noun2}と{adj2}{noun3}に影響するのですか、それは{noun4}にとって何を意味しますか",),
    },
}
_QUESTION_MARK = {"Chinese": "？", "Japanese": "？"}


def exam_language(messages: Sequence[dict[str, Any]]) -> str | None:
    """The language named by the gateway's language line (`German`), or None (an English exam)."""
    for message in messages:
        if message.get("role") == "system":
            found = _LANGUAGE_LINE.search(str(message.get("content") or ""))
            if found:
                return found.group(1).strip()
    return None


def question_in(language: str | None, rng: random.Random) -> str:
    """A neutral question in `language` (English filler for English, None or a language without a
    phrasebook here)."""
    book = _PHRASEBOOK.get(language or "")
    if book is None:
        return wh_question(rng)
    words = {f"noun{i}" if i else "noun": rng.choice(book["noun"]) for i in range(5)}
    words |= {"adj": rng.choice(book["adj"]), "adj2": rng.choice(book["adj"]), "wh": rng.choice(book["wh"])}
    text = rng.choice(book["pattern"]).format(**words)
    return text + _QUESTION_MARK.get(language or "", "?")


def simulated_question(messages: Sequence[dict[str, Any]], options: Any, seed: int, rng: random.Random,
                       labels: Sequence[str]) -> str:
    """The simulated examiner's question: in the exam's language, or in the `question_language` option's;
    for a seeded `label_leak_share` of questions prefixed by the prompt's unit labels (`labels`)."""
    forced = options.get("question_language") if hasattr(options, "get") else None
    language = None if str(forced or "").lower() in ("en", "english") else forced or exam_language(messages)
    question = question_in(language, rng)
    share = float((options.get("label_leak_share") if hasattr(options, "get") else None) or 0.0)
    if labels and share > 0 and stable_uniform(seed, "label_leak", *sorted(labels)) < share:
        question = f"{' and '.join(labels)}: {question}"
    return question


__all__ = ["exam_language", "question_in", "simulated_question"]
