"""Drawing the random sample of an exam's judged units that people label, and reading their labels back.

Why drawn here and not chosen on the page: the human-calibrated accuracy (examiner/stats/ppi.py) is
unbiased only for a random sample. The population is every target's judged units (the units whose
outcome is correct or incorrect: what accuracy counts), each with the verdict that decided it; the draw
is numpy's default_rng(seed) choosing without replacement, so the same run, size and seed draw the same
units. The draw is recorded in human_sample.jsonl (core/human_sample.py) before anyone labels.

A sample too small for the calibrated figure can be extended (`examiner review --extend N`) without moving
the file aside: the units the first draw left out are put in one seeded order (EXTEND_RULE), and each
extension takes the next N of it. The first draw is a uniform random subset and the rest is taken in a
uniformly random order from an independent stream of the same seed, so the sample stays a uniform random
draw of its new size, and the labels already given stay valid.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import ValidationError

from examiner.core.errors import UserError
from examiner.core.human_sample import DrawMethod, HumanSample, SampleDraw, SampledUnit, SampleExtension, SampleLabel
from examiner.core.labels import COVERING
from examiner.core.overrides import utc_now
from examiner.reporting.run_reader import RunData

POPULATION_RULE = ("every target's judged units (outcome correct or incorrect, with the verdict that decided "
                   "it), sorted by (target, unit id); numpy.random.default_rng(seed).choice without replacement")
EXTEND_RULE = ("the judged units the first draw left out (per target with per-target), sorted by (target, unit id), "
               "shuffled by numpy.random.default_rng(numpy.random.SeedSequence(seed).spawn(1)[0]).permutation, "
               "target after target; each extension takes the next units of that order")


def population(run: RunData) -> list[SampledUnit]:
    """The units a sample is drawn from, in (target, unit id) order: judged units with their deciding verdict."""
    out = []
    for target in sorted(run.outcomes):
        for unit_id, outcome in sorted(run.outcomes[target].items()):
            verdict = run.verdicts.get(outcome.verdict_id or "")
            if outcome.status in COVERING and verdict is not None:
                out.append(SampledUnit(target=target, unit_id=unit_id, question_id=verdict.question_id,
                                       verdict_id=verdict.id))
    return out


def draw_sample(run: RunData, size: int, *, seed: int = 0, method: DrawMethod = "uniform",
                who: str = "reviewer") -> SampleDraw:
    """A reproducible random sample of `size` judged units (per target with `per-target`), as its draw record."""
    if size < 1:
        raise UserError(f"the sample size must be 1 or more, got {size}")
    if seed < 0:  # numpy's default_rng refuses a negative seed with a bare ValueError
        raise UserError(f"the sample seed must be 0 or more, got {seed}")
    units = population(run)
    if not units:
        raise UserError(f"{run.path}: no judged unit to sample (no correct or incorrect outcome yet)")
    rng = np.random.default_rng(seed)
    if method == "uniform":
        picked = [units[i] for i in rng.choice(len(units), size=min(size, len(units)), replace=False)]
    else:
        picked = []
        for target in sorted({u.target for u in units}):
            mine = [u for u in units if u.target == target]
            picked += [mine[i] for i in rng.choice(len(mine), size=min(size, len(mine)), replace=False)]
    digest = hashlib.sha256(f"{run.info.run_id}|{method}|{seed}|{size}|{len(units)}".encode()).hexdigest()[:12]
    return SampleDraw(draw_id=f"draw-{digest}", method=method, seed=seed, size=size, population=len(units),
                      population_per_target=dict(Counter(u.target for u in units)), population_rule=POPULATION_RULE,
                      who=who, at=utc_now(), units=picked)


def extension_order(run: RunData, draw: SampleDraw) -> dict[str, list[SampledUnit]]:
    """The seeded order extensions take units in, per stratum (the target with `per-target`; "" for uniform):
    the units the first draw left out, shuffled (EXTEND_RULE). Refused when the run's judged units are no
    longer those the draw was made from (a resumed run): the extension would not be the same random draw."""
    units = population(run)
    now = {(u.target, u.unit_id): u.verdict_id for u in units}
    changed = (len(units) != draw.population or dict(Counter(u.target for u in units)) != draw.population_per_target
               or any(now.get((u.target, u.unit_id)) != u.verdict_id for u in draw.units))
    if changed:
        raise UserError(f"{run.path}: the run's judged units changed since the sample was drawn ({draw.population} "
                        f"then, {len(units)} now), so it cannot be extended as the same random draw; move "
                        "human_sample.jsonl aside to draw a new sample")
    first = {(u.target, u.unit_id) for u in draw.units}
    rng = np.random.default_rng(np.random.SeedSequence(draw.seed).spawn(1)[0])
    strata = sorted({u.target for u in units}) if draw.method == "per-target" else [""]
    order = {}
    for stratum in strata:
        left = [u for u in units if (u.target, u.unit_id) not in first and stratum in ("", u.target)]
        order[stratum] = [left[i] for i in rng.permutation(len(left))]
    return order


def extend_sample(run: RunData, sample: HumanSample, more: int, *, who: str = "reviewer") -> SampleExtension:
    """The next `more` units (per target with `per-target`) of the sample's seeded order, as an extension row;
    a population with none left is a UserError."""
    if more < 1:
        raise UserError(f"the extension must add 1 unit or more, got {more}")
    taken = {(u.target, u.unit_id) for u in sample.units}
    picked: list[SampledUnit] = []
    for order in extension_order(run, sample.draw).values():
        left = [u for u in order if (u.target, u.unit_id) not in taken]
        picked += left[:more]
    if not picked:
        raise UserError(f"{run.path}: every judged unit is in the sample already ({len(taken)}); nothing to extend")
    return SampleExtension(draw_id=sample.draw.draw_id, added=more, rule=EXTEND_RULE, who=who, at=utc_now(),
                           units=picked)


@dataclass(frozen=True)
class SheetRow:
    """One drawn unit as a person labels it: the question, the answer and the unit, without the judge's verdict."""

    position: int
    target: str
    unit_id: str
    question: str
    answer: str
    """The whole answer (people label what they read: no excerpt)."""
    unit_text: str
    verdict: str | None
    """The person's label in force (None: not labelled yet)."""
    who: str | None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def sheet(run: RunData, sample: HumanSample) -> list[SheetRow]:
    """The drawn units in the order drawn, with the label in force (None: not labelled yet)."""
    labels = sample.labels()
    rows = []
    for i, unit in enumerate(sample.units, 1):
        verdict = run.verdicts.get(unit.verdict_id)
        question = run.questions.get(unit.question_id)
        answer = run.answers.get(verdict.answer_id) if verdict else None
        record = run.units.get(unit.unit_id)
        given = labels.get((unit.target, unit.unit_id))
        rows.append(SheetRow(position=i, target=unit.target, unit_id=unit.unit_id,
                             question=question.text if question else "", answer=answer.text if answer else "",
                             unit_text=record.text if record else "", verdict=given.verdict if given else None,
                             who=given.who if given else None))
    return rows


def label_rows(sample: HumanSample, given: Iterable[Mapping[str, Any]], *, who: str,
               source: str = "import") -> list[SampleLabel]:
    """Label rows for the drawn units from plain records (target, unit_id, verdict (or label); optional who, note).

    Records whose label is empty are skipped (a sheet not filled in yet); a unit not in the draw, or a label
    that is not correct / incorrect / abstained / unrelated, is a UserError naming the record."""
    drawn = {(u.target, u.unit_id): u for u in sample.units}
    rows = []
    at = utc_now()
    for n, record in enumerate(given, 1):
        given_label = record.get("verdict") or record.get("label")
        if not given_label:
            continue
        key = (str(record.get("target", "")), str(record.get("unit_id", "")))
        unit = drawn.get(key)
        if unit is None:
            raise UserError(f"label record {n}: target {key[0]!r}, unit {key[1]!r} is not in the drawn sample")
        try:
            rows.append(SampleLabel(draw_id=sample.draw.draw_id, target=unit.target, unit_id=unit.unit_id,
                                    verdict_id=unit.verdict_id, verdict=given_label,
                                    who=str(record.get("who") or who), at=at, note=str(record.get("note") or ""),
                                    source=source))
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise UserError(f"label record {n}: {problems}") from None
    return rows


__all__ = ["EXTEND_RULE", "POPULATION_RULE", "SheetRow", "draw_sample", "extend_sample", "extension_order", "label_rows",
           "population", "sheet"]
