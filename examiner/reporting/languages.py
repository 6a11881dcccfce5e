"""Accuracy per language: for a corpus in another language than English, or in several.

A unit's language is that of the document its first source comes from (recorded per passage in the run's
passages.jsonl). The section is shown only when it says something: more than one language, or one that is
not English.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from examiner.core.labels import COVERING
from examiner.corpus.language import UNDETERMINED, language_name
from examiner.reporting.model.base import Section
from examiner.reporting.run_reader import RunData


def _plain(data: Section | Mapping[str, Any]) -> Mapping[str, Any]:
    """A report part as a mapping: the model's fields, or report.json's data as read by older callers."""
    return data.model_dump() if isinstance(data, Section) else data


def unit_language(run: RunData, unit_id: str) -> str:
    """Language code of a unit's first source passage (`und` when the run did not record it)."""
    unit = run.units.get(unit_id)
    if unit is None or not unit.sources:
        return UNDETERMINED
    return str(run.passages.get(unit.sources[0].passage_id, {}).get("language") or UNDETERMINED)


def per_language(run: RunData, target: str) -> list[dict[str, Any]]:
    """Per language: units, covered units, correct, incorrect, abstained and accuracy = correct / covered
    (as the target's accuracy); most units first."""
    units: Counter[str] = Counter()
    labels: dict[str, Counter[str]] = {}
    for outcome in run.outcomes.get(target, {}).values():
        code = unit_language(run, outcome.unit_id)
        units[code] += 1
        labels.setdefault(code, Counter())[outcome.status] += 1
    rows = []
    for code, n in sorted(units.items(), key=lambda item: (-item[1], item[0])):
        c, i, a = labels[code]["correct"], labels[code]["incorrect"], labels[code]["abstained"]
        rows.append({"language": code, "name": language_name(code), "units": n,
                     "covered": sum(labels[code][s] for s in COVERING), "correct": c, "incorrect": i,
                     "abstained": a, "accuracy": c / (c + i + a) if c + i + a else None})
    return rows


def shows_languages(run: Section | Mapping[str, Any]) -> bool:
    """Whether the report has a language section: several languages, or one other than English (`run`: the
    report's run section, or a whole report holding one)."""
    data = _plain(run)
    data = data.get("run", data) or {}
    codes = set(data.get("languages") or {}) | {data.get("language") or "en"}
    codes.discard(UNDETERMINED)
    return len(codes) > 1 or codes != {"en"}


def language_line(run: Section | Mapping[str, Any]) -> str:
    """`Chinese (zh); documents: zh 3, en 1`: the exam's language and the documents per language."""
    data = _plain(run)
    code = data.get("language") or "en"
    docs = ", ".join(f"{c} {n}" for c, n in (data.get("languages") or {}).items())
    return f"{language_name(code)} ({code})" + (f"; documents: {docs}" if docs else "")


LANGUAGE_HEADER = ["target", "language", "units", "covered", "correct", "incorrect", "abstained", "accuracy"]


def language_rows(report: Section | Mapping[str, Any]) -> list[list[Any]]:
    """LANGUAGE_HEADER rows for every target (accuracy as a fraction, None when nothing was scored)."""
    return [[name, f"{r['name']} ({r['language']})", r["units"], r["covered"], r["correct"], r["incorrect"],
             r.get("abstained", 0), r["accuracy"]]
            for name, t in _plain(report)["targets"].items() for r in t.get("per_language", [])]
