"""Two health checks of the examiner's questions: written in another language than the corpus, or naming
the prompt's unit labels.

Why: a weak local model wrote 15 English questions out of 15 for a German corpus, and others wrote "What
does U2 say about ...?": the candidate is then examined on the examiner's language or on labels it never
saw, and the headline measures that, not what it knows of the corpus (issue 29). Both checks read the
questions as recorded (examiner.exam.health's conventions: a figure, thresholds, offending examples).
The per-question rules are the question gate's (examiner/exam/gate/checks.py), which with
`question_gate` on stops such a question before it is asked; here they measure a whole run after the
fact, with the gate or without it.
"""

from __future__ import annotations

from collections.abc import Iterable

from examiner.core.records import QuestionRecord
from examiner.core.rundir import RunRecords
from examiner.corpus.language import UNDETERMINED, language_name, language_probabilities
from examiner.exam.gate.checks import LABELS, MIN_LETTERS, MIN_PROBABILITY, letters, named_labels
from examiner.exam.health_base import REF_MARK, Check, Example, Threshold, share_check, shorten

WRONG_LANGUAGE = Threshold(warn=0.10, fail=0.50)
"""Share of questions (with at least MIN_LETTERS letters and a detected language) written in a language
that is neither the exam's nor that of a document their units come from (each given a probability below
MIN_PROBABILITY). Above 10 % warns (langdetect
can misread a short question full of names), above 50 % fails: most of the exam was not held in the
corpus language."""
LEAKED_LABELS = Threshold(warn=0.0, fail=0.20)
"""Share of questions that name a unit label of the prompt (U1, [U2]), a knowledge-unit id (ku-...) or
"unit 3" / "knowledge unit": any warns, above 20 % fails. A label the question's own units contain
(a corpus about the band U2) is not counted."""


def _unit_languages(records: RunRecords, question: QuestionRecord) -> set[str]:
    """Languages of the documents the question's target units come from (passages.jsonl)."""
    found: set[str] = set()
    for uid in question.targets:
        unit = records.units.get(uid)
        for source in unit.sources if unit else []:
            row = records.passages.get(source.passage_id)
            language = row.get("language") if row else None
            if language:
                found.add(language)
    return found


def wrong_language(records: RunRecords, questions: Iterable[QuestionRecord]) -> Check:
    """Questions not in the exam's language nor their units' (see WRONG_LANGUAGE)."""
    what = "questions written in another language than the corpus"
    exam = records.info.language or ""
    if exam in ("", UNDETERMINED):
        return Check("wrong_language_questions", what, "info", None,
                     "not measured: the exam's language is not known (a run before languages were recorded)")
    counted, offending = 0, []
    for q in questions:
        text = REF_MARK.sub("", q.text)
        if letters(text) < MIN_LETTERS:
            continue
        odds = language_probabilities(text)
        if not odds:
            continue
        counted += 1
        allowed = {exam} | _unit_languages(records, q)
        if all(odds.get(code, 0.0) < MIN_PROBABILITY for code in allowed):
            code = max(odds, key=odds.__getitem__)
            offending.append(Example(q.id, f"{language_name(code)}: {shorten(text)}"))
    check = share_check("wrong_language_questions", what, offending, counted, "questions", WRONG_LANGUAGE)
    return Check(check.name, check.what, check.status, check.figure,
                 f"{check.detail} not in {language_name(exam)}" if check.figure is not None else check.detail,
                 check.threshold, check.examples)


def leaked_labels(records: RunRecords, questions: Iterable[QuestionRecord]) -> Check:
    """Questions that name unit labels or ids (see LEAKED_LABELS)."""
    asked = list(questions)
    offending = []
    for q in asked:
        text = REF_MARK.sub("", q.text)
        named = named_labels(text, (records.units[uid].text for uid in q.targets if uid in records.units))
        if named:
            offending.append(Example(q.id, f"names {', '.join(named)}: {shorten(text)}"))
    return share_check("leaked_unit_labels", "questions that name the prompt's unit labels or ids (U1, ku-...)",
                               offending, len(asked), "questions", LEAKED_LABELS)


__all__ = ["LABELS", "LEAKED_LABELS", "MIN_LETTERS", "MIN_PROBABILITY", "WRONG_LANGUAGE", "leaked_labels", "wrong_language"]
