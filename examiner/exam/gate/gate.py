"""One question through every check of the gate, before any target is asked it.

The checks, each logged with its reason (QuestionRecord.gate):
- language and labels (checks.py): written in the exam's or its units' language, naming no unit label;
- near_duplicate: its embedding (the exam's own embedding model) within `gate_duplicate_threshold` cosine
  of a question already accepted in this run, or being checked beside it (the first of two near-copies
  checked at once is entered before the second is compared);
- answerable and citation: the checker (agents/gate/checker.py) sees only the cluster's units and says
  whether they answer the question and which claimed units support it, quoting each; a quote that is not
  found in the unit it is given for fails the citation too (YourBench's filter: weak models cite wrongly);
- guessable: the guesser (agents/gate/guesser.py) answers with no corpus and the checker says whether that
  answer is right. Tagged; it rejects only with `gate_drop_guessable`.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from examiner.agents.gate.checker import GateCheck, check_question
from examiner.agents.gate.guesser import guess_answer
from examiner.core.records import GateCheckRecord
from examiner.corpus.language import UNDETERMINED, language_probabilities
from examiner.exam.gate.checks import CheckResult, bare, citation_check, label_check, language_check, nearest
from examiner.exam.nodes.context import ExamContext

UNITS_LANGUAGE_ODDS = 0.5
"""The units' own language is allowed beside the exam's when langdetect gives it at least this probability
over the cluster's text (a German cluster in a mostly English corpus)."""


@dataclass
class QuestionBook:
    """Questions accepted so far in a run, embedded: what the near-duplicate check compares against."""

    texts: list[str] = field(default_factory=list)
    vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))

    def add(self, text: str, vector: np.ndarray) -> int:
        """Enter a question; its row index (for `drop`)."""
        row = vector.reshape(1, -1).astype(np.float32)
        self.vectors = row if self.vectors.size == 0 else np.vstack([self.vectors, row])
        self.texts.append(text)
        return len(self.texts) - 1

    def drop(self, index: int) -> None:
        """Take a question back out (the gate rejected it for another reason: it is never asked)."""
        self.vectors[index] = 0.0


_BOOKS: weakref.WeakKeyDictionary[object, QuestionBook] = weakref.WeakKeyDictionary()


def book_of(ctx: ExamContext) -> QuestionBook:
    """The run's book of accepted questions, begun from the questions its store already holds (a resumed
    run compares against the rounds before the kill too). One per run store."""
    book = _BOOKS.get(ctx.store)
    if book is None:
        from examiner.core.records import QuestionRecord as Record

        earlier = list(dict.fromkeys(bare(q.text) for q in ctx.store.all(Record).values()
                                     if q.status == "ok" and q.kind == "question" and q.text))
        book = QuestionBook()
        if earlier:
            for text, vector in zip(earlier, ctx.embedder.embed(earlier)):
                book.add(text, vector)
        _BOOKS[ctx.store] = book
    return book


@dataclass
class GateOutcome:
    """The gate's checks of one question, and its row in the run's book of questions."""

    checks: list[CheckResult]
    entry: int
    """Its row in the book (QuestionBook.add), entered as soon as it passed the near-duplicate check."""

    @property
    def guessable(self) -> bool:
        return any(c.name == "guessable" and not c.passed for c in self.checks)

    def failed(self, drop_guessable: bool) -> list[CheckResult]:
        """The checks that reject the question (a guessable one only when it is to be dropped)."""
        return [c for c in self.checks if not c.passed and (c.name != "guessable" or drop_guessable)]

    def feedback(self, drop_guessable: bool) -> str:
        """Why the question was rejected, as feedback for its rewrite."""
        return "; ".join(f"{c.name}: {c.reason}" for c in self.failed(drop_guessable))

    def records(self) -> list[GateCheckRecord]:
        return [GateCheckRecord(name=c.name, passed=c.passed, reason=c.reason) for c in self.checks]


def allowed_languages(ctx: ExamContext, units: Sequence[tuple[str, str]]) -> set[str]:
    """The exam's language and, when langdetect is sure enough (UNITS_LANGUAGE_ODDS), the units' own."""
    allowed = {ctx.gateway.language or ""} - {"", UNDETERMINED}
    odds = language_probabilities(" ".join(text for _, text in units))
    allowed |= {code for code, p in odds.items() if p >= UNITS_LANGUAGE_ODDS}
    return allowed


def duplicate_check(book: QuestionBook, vector: np.ndarray, threshold: float) -> CheckResult:
    """Passed unless an accepted question is within `threshold` cosine."""
    index, cosine = nearest(vector, book.vectors)
    if index >= 0 and cosine >= threshold:
        return CheckResult("near_duplicate", False, f"cosine {cosine:.3f} to an earlier question: {book.texts[index][:80]}")
    return CheckResult("near_duplicate", True)


def judged_checks(check: GateCheck | None, targets: Sequence[str], texts: dict[str, str],
                  min_match: float) -> list[CheckResult]:
    """The checker's answers as the answerable, citation and guessable checks (all failed, with the reason,
    when its reply could not be read: the gate does not pass what it could not check)."""
    if check is None:
        why = "the checker's reply could not be read"
        return [CheckResult("answerable", False, why), CheckResult("citation", False, why),
                CheckResult("guessable", True)]
    support = {s.unit: (s.supported, s.quote) for s in check.support}
    reason = check.reason.strip()
    return [
        CheckResult("answerable", check.answerable, "" if check.answerable else reason or "the units do not answer it"),
        citation_check(targets, support, texts, min_match),
        CheckResult("guessable", not check.guess_correct,
                    "answered right without the corpus" if check.guess_correct else ""),
    ]


async def gate_question(ctx: ExamContext, units: Sequence[tuple[str, str]], question: str, targets: Sequence[str],
                        rnd: int, *, attempt: int = 0) -> GateOutcome:
    """Every check of the gate on `question`, written over `units` (the cluster's) and claiming `targets`.
    The guess and the check are two calls of ledger stage `question_gate`; a failed call raises as the
    exam's other calls do."""
    exam = ctx.exam
    texts = dict(units)
    own = [texts[uid] for uid in targets if uid in texts]
    vector = (await asyncio.to_thread(ctx.embedder.embed, [bare(question)]))[0]
    # compared and entered in one step, with no await between: of two near-copies checked at once (chains
    # run concurrently), the second always sees the first
    book = book_of(ctx)
    duplicate = duplicate_check(book, vector, exam.gate_duplicate_threshold)
    entry = book.add(bare(question), vector) if duplicate.passed else -1
    checks = [language_check(question, allowed_languages(ctx, units)), label_check(question, own), duplicate]
    ids = tuple(uid for uid, _ in units)
    guess = await guess_answer(ctx.gateway, question, round=rnd, unit_ids=ids, endpoint=exam.gate_guesser or None,
                               attempt=attempt)
    result = await check_question(ctx.gateway, question, units, targets, guess.text, round=rnd, attempt=attempt)
    checked = result.parsed if isinstance(result.parsed, GateCheck) else None
    checks += judged_checks(checked, targets, texts, exam.gate_min_quote_match)
    outcome = GateOutcome(checks, entry)
    if entry >= 0 and outcome.failed(exam.gate_drop_guessable):
        book.drop(entry)  # never asked: a later copy of it is no repeat
    return outcome


__all__ = ["GateOutcome", "QuestionBook", "allowed_languages", "book_of", "duplicate_check",
           "gate_question", "judged_checks"]
