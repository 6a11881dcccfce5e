"""Exam health: does the run's own output look like an exam, or like a degenerate examiner or judge?

Why: a weak or misconfigured model can produce nonsense under a confident headline (the same template
question twenty times, "..." as every judge reason, one label sequence whatever the answer says). Each
check below reads only the run's records (questions, answers, verdicts, clusterings, units and the
judge self-check) and compares one figure with documented thresholds (the constants below; docs/GUIDE.md's
"Exam health" table repeats them). The run's health is `fail` when any check fails, `warn` when any
warns, else `pass`; a failing health marks the headline accuracy and coverage untrustworthy in every
report, and `--strict` turns it into exit code 4.

Texts are compared after `normalise` (case-folded, `[ref:...]` markers dropped, every run of
non-word characters one space), and overlap is measured on character n-grams, so the checks work in
any script.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any


from examiner.core.records import AnswerRecord, QuestionRecord, VerdictRecord
from examiner.exam.health_base import (EXAMPLES, REF_MARK, Check, Example, Status, Threshold, share_check,
                                      shorten)
from examiner.exam.health_questions import leaked_labels, wrong_language
from examiner.core.rundir import RunRecords
from examiner.stats.intervals import accuracy_interval

REPEATED_QUESTIONS = Threshold(warn=0.05, fail=0.20)
"""Share of questions whose normalised text is asked more than once (a template such as "What is the
answer to this question?" repeated). Each cluster gets its own question, so repeats mean the examiner
ignored the units it was given."""
NOT_QUESTIONS = Threshold(warn=0.10, fail=0.30)
"""Share of questions that do not end in a question mark (see _QUESTION_MARKS)."""
COPIED_UNITS = Threshold(warn=0.0, fail=0.05)
"""Share of questions that copy a unit of their cluster: COPY_CONTAINMENT or more of the unit's character
n-grams appear in the question (the leak check counts distinctive words and can miss a verbatim copy).
Any copy warns."""
COPY_CONTAINMENT = 0.6
"""Share of a unit's character NGRAM-grams found in a question above which the question copies the unit."""
NGRAM = 8
"""Character n-gram length for the copy and relatedness checks (about a word and a half in English)."""
PLACEHOLDER_ANSWERS = Threshold(warn=0.05, fail=0.20)
"""Share of answers that are empty or a placeholder (see PLACEHOLDERS)."""
PLACEHOLDER_REASONS = Threshold(warn=0.05, fail=0.20)
"""Share of the judge's reasons (scored verdicts; a panel's members' own reasons) that are empty or a
placeholder."""
REPEATED_REASON = Threshold(warn=0.50, fail=None)
"""Share of the judge's reasons that are one and the same text (at least MIN_VERDICTS reasons). Warns
only: a terse judge may legitimately repeat a short reason."""
SAME_PATTERN = Threshold(warn=0.30, fail=0.50)
"""Share of answers (with two or more scored targets; at least MIN_PATTERNS of them) whose verdicts, read
in target order, form the most common MIXED label sequence (e.g. correct, incorrect, unrelated): a judge
that labels by position, not by what the answer says. Uniform sequences are left to ONE_LABEL, since a
candidate may truly know all or nothing of a cluster."""
ONE_LABEL = Threshold(warn=0.95, fail=None)
"""Share of scored verdicts that carry the most common label (at least MIN_VERDICTS verdicts). Warns only:
a candidate may truly know almost nothing (or everything) of a corpus."""
OFF_CLUSTER = Threshold(warn=0.10, fail=0.30)
"""Share of questions whose examiner named units outside the question's cluster or named none of them
(the question's `dropped_targets` / `no_targets`)."""
UNRELATED_QUESTIONS_BELOW = 0.02
"""A question is counted unrelated to its cluster when fewer than this share of its character n-grams
occur in the cluster's unit texts. Shown for information only, never warns: a question may rightly be
phrased in other words than its units (the simulated examiner's always are)."""
INSTRUCTION_LIKE_UNITS = Threshold(warn=0.0, fail=None)
"""Share of units whose text looks like instructions to a model or like prompt markup (see
_INSTRUCTION_LIKE): a document that tries to steer the examiner or the judge, or text the corpus carried
in from a web page or a prompt. Prompts fence and escape every unit (agents/prompting/fence.py), so
such a unit cannot change the exam's structure; any warns all the same, because the user should see the
units and decide whether they belong in the corpus. Never fails."""
SELF_AGREEMENT = Threshold(warn=0.80, fail=0.60, higher_is_worse=False)
"""Judge self-agreement: share of re-judged units given the same label when the units came in another
order (the self-check). Below 0.8 warns, below 0.6 fails."""
MIN_PATTERNS = 10
MIN_VERDICTS = 20
"""Offending items named per check."""
PLACEHOLDERS = frozenset({"", "n a", "na", "none", "null", "nil", "tbd", "todo", "placeholder", "reason",
                          "answer", "text", "no reason", "your answer", "your reason", "x", "xxx"})
"""Normalised texts that say nothing (punctuation alone, such as "...", normalises to "")."""

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)
_INSTRUCTION_LIKE: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("an instruction to the model", re.compile(
        r"\b(?:ignore|disregard|forget|override)\b[^.\n]{0,40}\b(?:instructions?|prompts?|rules?|directions?)\b"
        r"|\b(?:new|updated|real) instructions?\s*:|\byou are now\b|\bact as (?:the|an?) (?:judge|examiner|grader)\b"
        r"|\b(?:label|mark|grade|rate|score)\b[^.\n]{0,30}\b(?:every|all|each)\b[^.\n]{0,20}\b(?:units?|answers?|facts?)\b"
        r"[^.\n]{0,20}\b(?:as )?(?:correct|incorrect|unrelated|abstained)\b", re.I)),
    ("a chat role header", re.compile(
        r"^\s*#{1,6}\s*(?:system|user|assistant)\b|<\|[a-z_]+\|>|\[/?INST\]|<</?SYS>>"
        r"|^\s*(?:system|assistant)\s*:", re.I | re.M)),
    ("markup", re.compile(r"</?[A-Za-z][\w-]*(?:\s[^<>]*)?/?>|\[U\d+\]|\[ref:")),
    ("a JSON label object", re.compile(
        r"\{\s*\"(?:labels|type|verdict|target|question|score|units)\"\s*:"
        r"|\"[^\"]{1,40}\"\s*:\s*\"(?:correct|incorrect|unrelated|abstained)\"", re.I)),
)
"""What makes a unit look like instructions or markup, each with the name the check's examples give."""
_QUESTION_MARKS = ("?", "\uff1f", "\u061f", "\u037e")
"""Question marks: Latin, full-width (Chinese, Japanese), Arabic, Greek."""


def normalise(text: str) -> str:
    """Case-folded text without `[ref:...]` markers, each run of non-word characters one space."""
    return _NON_WORD.sub(" ", REF_MARK.sub("", text).casefold()).strip()


def is_placeholder(text: str) -> bool:
    return normalise(text) in PLACEHOLDERS


def ngrams(text: str, n: int = NGRAM) -> set[str]:
    """Character n-grams of the normalised text (the whole text when shorter than n)."""
    flat = normalise(text)
    return {flat[i:i + n] for i in range(max(1, len(flat) - n + 1))} if flat else set()


def containment(part: set[str], whole: set[str]) -> float:
    """Share of `part`'s n-grams found in `whole` (0 for an empty part)."""
    return len(part & whole) / len(part) if part else 0.0


@dataclass(frozen=True)
class SelfAgreement:
    """The judge self-check: units labelled the same when their answer was judged again, reordered."""

    answers: int
    """Answers re-judged."""
    compared: int
    """Units with a label both times."""
    agreed: int
    value: float | None
    low: float | None
    high: float | None
    """95% Wilson interval with design effect and t on answers - 1 df (a judge's units in one call are not
    independent); never zero-width."""
    changed: list[Example] = field(default_factory=list)
    """Units whose label changed: id `answer/unit`, text `first -> second`."""


@dataclass(frozen=True)
class Health:
    """The run's health: overall status, every check, and the judge self-agreement."""

    status: Status
    checks: list[Check]
    self_agreement: SelfAgreement

    @property
    def trustworthy(self) -> bool:
        """False when a check failed: the headline figures should not be believed."""
        return self.status != "fail"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["trustworthy"] = self.trustworthy
        return data


def _asked(records: RunRecords) -> list[QuestionRecord]:
    return [q for q in records.questions.values() if q.status == "ok" and q.text.strip()]


def repeated_questions(questions: list[QuestionRecord]) -> Check:
    # Per target: targets of one run sit the same paper, so one question put to each is not a template.
    texts = Counter((q.target, normalise(q.text)) for q in questions)
    repeated = [q for q in questions if texts[(q.target, normalise(q.text))] > 1]
    examples: list[Example] = []
    for key, count in texts.most_common():
        if count < 2 or len(examples) >= EXAMPLES:
            break
        ids = [q.id for q in repeated if (q.target, normalise(q.text)) == key]
        first = next(q for q in repeated if q.id == ids[0])
        examples.append(Example(",".join(ids[:3]) + ("..." if len(ids) > 3 else ""),
                                f"{count}x {shorten(first.text)}"))
    check = share_check("repeated_questions", "questions asked more than once (a template)",
                         [Example(q.id, q.text) for q in repeated], len(questions), "questions", REPEATED_QUESTIONS)
    return replace(check, examples=examples if check.examples else [])


def not_questions(questions: list[QuestionRecord]) -> Check:
    offending = [Example(q.id, shorten(q.text)) for q in questions
                 if not REF_MARK.sub("", q.text).rstrip().rstrip('"\'”»)').endswith(_QUESTION_MARKS)]
    return share_check("not_questions", "question texts that are not questions (no question mark)", offending,
                        len(questions), "questions", NOT_QUESTIONS)


def _cluster_members(records: RunRecords) -> dict[str, list[str]]:
    members: dict[str, list[str]] = {}
    for rounds in records.clusters.values():
        for rnd in rounds:
            for cluster in rnd.clusters:
                members.setdefault(cluster.id, cluster.members)
    return members


def _unit_ids_of(question: QuestionRecord, members: Mapping[str, list[str]]) -> list[str]:
    return list(dict.fromkeys([*members.get(question.cluster_id, []), *question.targets]))


def copied_units(records: RunRecords, questions: list[QuestionRecord]) -> Check:
    members = _cluster_members(records)
    grams = {uid: ngrams(unit.text) for uid, unit in records.units.items()}
    offending = []
    for q in questions:
        mine = ngrams(q.text)
        copied = [uid for uid in _unit_ids_of(q, members) if containment(grams.get(uid, set()), mine) >= COPY_CONTAINMENT]
        if copied:
            offending.append(Example(q.id, f"copies unit {copied[0]}: {shorten(q.text)}"))
    return share_check("copied_units", "questions that copy a unit of their cluster", offending, len(questions),
                        "questions", COPIED_UNITS)


def off_cluster(questions: list[QuestionRecord], all_questions: Iterable[QuestionRecord]) -> Check:
    counted = [q for q in all_questions if q.status in ("ok", "no_targets")]
    offending = [Example(q.id, f"named {len(q.dropped_targets)} units outside its cluster" if q.dropped_targets
                         else "named no unit of its cluster") for q in counted
                 if q.dropped_targets or q.status == "no_targets"]
    return share_check("off_cluster_targets", "questions whose examiner targeted units outside the cluster",
                        offending, len(counted), "questions", OFF_CLUSTER)


def unrelated_questions(records: RunRecords, questions: list[QuestionRecord]) -> Check:
    members = _cluster_members(records)
    offending = []
    for q in questions:
        cluster_grams: set[str] = set()
        for uid in _unit_ids_of(q, members):
            if uid in records.units:
                cluster_grams |= ngrams(records.units[uid].text)
        if containment(ngrams(q.text), cluster_grams) < UNRELATED_QUESTIONS_BELOW:
            offending.append(Example(q.id, shorten(q.text)))
    figure = len(offending) / len(questions) if questions else None
    return Check("unrelated_questions", "questions sharing almost no wording with their cluster (information)",
                 "info", figure, f"{len(offending)} of {len(questions)} questions", None, offending[:EXAMPLES])


def placeholder_answers(answers: list[AnswerRecord]) -> Check:
    offending = [Example(a.id, repr(shorten(a.text, 40))) for a in answers if is_placeholder(a.text)]
    return share_check("placeholder_answers", "answers that are empty or a placeholder", offending, len(answers),
                        "answers", PLACEHOLDER_ANSWERS)


def judge_reasons(records: RunRecords) -> list[tuple[str, str]]:
    """(verdict id, reason) of every scored label the judge wrote a reason for or had to (an incorrect
    unit; correct and unrelated ones need none): a panel's members' own reasons (the
    panel's reason is examiner's tally); in `noref` mode one per answer and member (that judge gives one
    reason to every target). G-Eval's reasons are examiner's own text (the score), so it has none."""
    if records.info.judge_mode == "geval":
        return []
    seen: set[tuple[str, str, str]] = set()
    reasons = []
    for v in records.verdicts.values():
        marks = [(name, m.verdict, m.reason) for name, m in v.members.items()] if v.members else [("", v.verdict, v.reason)]
        for member, label, reason in marks:
            key = (v.answer_id if records.info.mode == "noref" else v.id, member, reason)
            # The reference judge writes a reason only for an incorrect unit (agents/judge/unit_judge.py):
            # an empty reason is a placeholder only where one was asked for.
            if label != "unscored" and key not in seen and (label == "incorrect" or reason.strip()):
                seen.add(key)
                reasons.append((v.id, reason))
    return reasons


def placeholder_reasons(reasons: list[tuple[str, str]]) -> Check:
    offending = [Example(vid, repr(shorten(reason, 40))) for vid, reason in reasons if is_placeholder(reason)]
    return share_check("placeholder_reasons", "judge reasons that are empty or a placeholder", offending,
                        len(reasons), "reasons", PLACEHOLDER_REASONS)


def repeated_reason(reasons: list[tuple[str, str]]) -> Check:
    counts = Counter(normalise(reason) for _, reason in reasons)
    text, _ = counts.most_common(1)[0] if counts else ("", 0)
    offending = [Example(vid, repr(shorten(reason, 60))) for vid, reason in reasons if normalise(reason) == text]
    return share_check("repeated_reason", "judge reasons that are one and the same text", offending, len(reasons),
                        "reasons", REPEATED_REASON, minimum=MIN_VERDICTS)


def same_pattern(records: RunRecords) -> Check:
    by_answer: dict[str, list[VerdictRecord]] = {}
    for v in records.verdicts.values():
        by_answer.setdefault(v.answer_id, []).append(v)
    patterns: dict[str, tuple[str, ...]] = {}
    for aid, verdicts in by_answer.items():
        question = records.questions.get(verdicts[0].question_id)
        rank = {uid: i for i, uid in enumerate(question.targets)} if question else {}
        labels = tuple(v.verdict for v in sorted(verdicts, key=lambda v: rank.get(v.unit_id, len(rank)))
                       if v.verdict != "unscored")
        if len(labels) >= 2:
            patterns[aid] = labels
    mixed = Counter(p for p in patterns.values() if len(set(p)) > 1)
    top, _ = mixed.most_common(1)[0] if mixed else ((), 0)
    offending = [Example(aid, ", ".join(p)) for aid, p in patterns.items() if p == top]
    return share_check("same_verdict_pattern", "answers given the same mixed label sequence by position",
                        offending, len(patterns), "answers with 2+ scored units", SAME_PATTERN, minimum=MIN_PATTERNS)


def one_label(records: RunRecords) -> Check:
    labels = Counter(v.verdict for v in records.verdicts.values() if v.verdict != "unscored")
    top, _ = labels.most_common(1)[0] if labels else ("", 0)
    offending = [Example(v.id, top) for v in records.verdicts.values() if v.verdict == top]
    return share_check("one_label", "scored verdicts carrying the most common label", offending,
                        sum(labels.values()), "scored verdicts", ONE_LABEL, minimum=MIN_VERDICTS)


def instruction_like(text: str) -> str | None:
    """What makes `text` look like instructions to a model or like prompt markup (None: nothing): an
    imperative to the grader ("ignore previous instructions", "label every unit correct"), a chat role
    header (`### system`, `<|im_start|>`), markup (a tag, `[U2]`, `[ref:...]`), a JSON label object, or a
    placeholder of the prompt files (`$units`, `${question}`, `{question}`)."""
    for name, pattern in _INSTRUCTION_LIKE:
        if pattern.search(text):
            return name
    placeholders = _placeholders()
    for m in re.finditer(r"\$\{?([A-Za-z_]\w*)\}?|\{\{?\s*([A-Za-z_]\w*)\s*\}?\}", text):
        if (m.group(1) or m.group(2)) in placeholders:
            return "a prompt placeholder"
    return None


def _placeholders() -> frozenset[str]:
    from examiner.agents.prompting import placeholder_names

    return placeholder_names()


def instruction_like_units(records: RunRecords) -> Check:
    offending = []
    for uid, unit in records.units.items():
        why = instruction_like(unit.text)
        if why is not None:
            offending.append(Example(uid, f"{why}: {shorten(unit.text)}"))
    return share_check("instruction_like_units", "units whose text looks like instructions or prompt markup",
                        offending, len(records.units), "units", INSTRUCTION_LIKE_UNITS)


def self_agreement(records: RunRecords) -> SelfAgreement:
    """Agreement of the self-check's second labels with the exam's verdicts, unit by unit, with the
    Wilson interval with design effect over answers (examiner.stats.intervals.accuracy_interval): a
    judge's units in one call are not independent, and a percentile bootstrap over answers printed
    1.000 [1.000, 1.000] for 12 of 12 units (issue 40); this interval is never zero-width."""
    first = {(v.answer_id, v.unit_id): v.verdict for v in records.verdicts.values()}
    per_answer: dict[str, list[float]] = {}
    changed = []
    for check in records.self_checks.values():
        for uid, second in check.labels.items():
            before = first.get((check.answer_id, uid))
            if before is None or before == "unscored" or second == "unscored":
                continue
            per_answer.setdefault(check.answer_id, []).append(float(before == second))
            if before != second:
                changed.append(Example(f"{check.answer_id}/{uid}", f"{before} -> {second}"))
    compared = sum(len(v) for v in per_answer.values())
    agreed = int(sum(sum(v) for v in per_answer.values()))
    if not compared:
        return SelfAgreement(len(records.self_checks), 0, 0, None, None, None)
    outcomes = [int(x) for v in per_answer.values() for x in v]
    answers = [answer for answer, v in per_answer.items() for _ in v]
    ci = accuracy_interval(outcomes, answers)
    finite = [x if math.isfinite(x) else None for x in (ci.low, ci.high)]
    return SelfAgreement(len(records.self_checks), compared, agreed, agreed / compared, finite[0], finite[1],
                         changed[:EXAMPLES])


def self_agreement_check(agreement: SelfAgreement, applicable: bool = True) -> Check:
    """The self-agreement as a check; unmeasured, it is `not_measured` (the run cannot claim a pass it did
    not check) unless the mode has no self-check (`applicable` False: the no-reference judge reads no units)."""
    what = "judge self-agreement when the units come in another order"
    if agreement.value is None:
        why = "no answer was re-judged" if not agreement.answers else "no unit was labelled both times"
        status: Status = "info" if applicable is False else "not_measured"
        return Check("self_agreement", what, status, None, f"not measured: {why}", SELF_AGREEMENT)
    interval = "" if agreement.low is None else f", 95% interval [{agreement.low:.3f}, {agreement.high:.3f}]"
    return Check("self_agreement", what, SELF_AGREEMENT.status(agreement.value), agreement.value,
                 f"{agreement.agreed} of {agreement.compared} units in {agreement.answers} answers{interval}",
                 SELF_AGREEMENT, agreement.changed)


def exam_health(records: RunRecords) -> Health:
    """Every check over one run's records, the self-agreement, and the overall status."""
    questions = _asked(records)
    reasons = judge_reasons(records)
    agreement = self_agreement(records)
    checks = [
        repeated_questions(questions),
        not_questions(questions),
        copied_units(records, questions),
        off_cluster(questions, records.questions.values()),
        unrelated_questions(records, questions),
        placeholder_answers([a for a in records.answers.values()]),
        placeholder_reasons(reasons),
        repeated_reason(reasons),
        same_pattern(records),
        one_label(records),
        instruction_like_units(records),
        self_agreement_check(agreement, records.info.mode != "noref"),
    ]

    checks[2:2] = [wrong_language(records, questions), leaked_labels(records, questions)]
    statuses = {c.status for c in checks}
    status: Status = ("fail" if "fail" in statuses else "warn" if "warn" in statuses
                      else "incomplete" if "not_measured" in statuses else "pass")
    return Health(status, checks, agreement)


__all__ = ["Check", "Example", "Health", "SelfAgreement", "Threshold", "exam_health", "instruction_like", "normalise", "self_agreement"]
