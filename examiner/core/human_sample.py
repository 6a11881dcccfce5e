"""A random sample of an exam's verdicts for people to label (human_sample.jsonl in the run directory).

Why a file apart from overrides.jsonl: the human-calibrated accuracy (examiner/stats/ppi.py) is unbiased
only when the labelled units were drawn at random, independently of what anyone saw. Overrides are chosen
while browsing (a reviewer stops on the answers that look wrong), so they are never used as a sample. This
file holds one draw record first (how the sample was drawn: seed, method, population and sample sizes,
who, when, the units in the order drawn), then one label row per label given, appended; the latest label
per (target, unit) wins and the earlier ones stay as history, as in overrides.jsonl. An extension row
adds units drawn later from the same seeded order (`examiner review --extend N`: reporting/human_sample.py),
so the labels already given stay valid and the whole sample stays a uniform random draw. The judge's
verdict is not in the file: the page that collects the labels hides it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from examiner.core.errors import UserError
from examiner.core.jsonl import CorruptRunFile, append_jsonl, read_jsonl, repair_tail
from examiner.core.overrides import NonBlank, OverrideLabel
from examiner.core.rundir import HUMAN_SAMPLE

DrawMethod = Literal["uniform", "per-target"]
"""uniform: `size` units drawn without replacement from all targets' judged units together; per-target:
`size` units from each target's (stratified), every target's share then being its own uniform sample."""


class SampledUnit(BaseModel):
    """One drawn unit: a target's judged unit and the verdict that decided it when drawn."""

    target: str
    unit_id: str
    question_id: str
    verdict_id: str


class SampleDraw(BaseModel):
    """The first row of human_sample.jsonl: how the sample was drawn, and the units in the order drawn."""

    kind: Literal["draw"] = "draw"
    draw_id: str
    method: DrawMethod
    seed: int
    size: int
    """The size asked for (per target with `per-target`); `units` holds fewer when the population is smaller."""
    population: int
    """Judged units (correct or incorrect outcome, with the verdict behind it) over all targets when drawn."""
    population_per_target: dict[str, int]
    population_rule: str
    """In words: which units the population held and how they were drawn (numpy's default_rng(seed))."""
    blind: bool = True
    """The labelling page hides the judge's verdict and reason (a person who sees them tends to agree)."""
    who: str
    at: str
    units: list[SampledUnit]


class SampleExtension(BaseModel):
    """A row adding units to the draw: the next `added` units (per target with `per-target`) of its seeded order."""

    kind: Literal["extend"] = "extend"
    draw_id: str
    added: int
    """The number asked for (per target with `per-target`); `units` holds fewer when the population ran out."""
    rule: str
    """In words: the seeded order the units were taken from."""
    who: str
    at: str
    units: list[SampledUnit]


class SampleLabel(BaseModel):
    """A person's label of one drawn unit (the answer to its question, about that unit)."""

    kind: Literal["label"] = "label"
    draw_id: str
    target: str
    unit_id: str
    verdict_id: str
    """The judge's verdict that decided the unit when drawn (a label of a unit now decided by another is stale)."""
    verdict: OverrideLabel
    """The person's label (named as in overrides.jsonl and verdicts.jsonl)."""
    who: NonBlank
    at: str
    note: str = ""
    source: Literal["page", "import"] = "page"
    """Given on the review page's sample mode, or imported from a file (`examiner review --labels`)."""

    @property
    def key(self) -> tuple[str, str]:
        return (self.target, self.unit_id)


SampleRow = Annotated[SampleDraw | SampleLabel | SampleExtension, Field(discriminator="kind")]
_ROW = TypeAdapter(SampleRow)


class HumanSample(BaseModel):
    """human_sample.jsonl as read: the draw, the label rows in the order written, its extensions, a torn last line."""

    draw: SampleDraw
    rows: list[SampleLabel]
    extensions: list[SampleExtension] = []
    torn_tail: bool = False

    @property
    def units(self) -> list[SampledUnit]:
        """Every unit of the sample in the order drawn: the draw's, then each extension's."""
        return [*self.draw.units, *(u for ext in self.extensions for u in ext.units)]

    def labels(self) -> dict[tuple[str, str], SampleLabel]:
        """The label in force per (target, unit) of the sample: the last row written for it."""
        drawn = {(u.target, u.unit_id) for u in self.units}
        current: dict[tuple[str, str], SampleLabel] = {}
        for row in self.rows:
            if row.draw_id == self.draw.draw_id and row.key in drawn:
                current[row.key] = row
        return current


class DamagedSample(UserError):
    """human_sample.jsonl cannot be read as a sample (a line not a valid row, rows out of order): the file
    needs a person's fix, unlike a bad request, so the review page answers it apart (422, not 400)."""


def sample_path(run_dir: str | Path) -> Path:
    return Path(run_dir) / HUMAN_SAMPLE


def _row_problem(path: Path, number: int) -> str:
    """What is wrong with line `number` of the file, in one short clause (the first problem pydantic names)."""
    with path.open("rb") as handle:
        raw = next((line for n, line in enumerate(handle, 1) if n == number), b"")
    try:
        _ROW.validate_json(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"]))
        return f"{where}: {first['msg']}" if where else first["msg"]
    return "not a valid row"


def read_sample(run_dir: str | Path) -> HumanSample | None:
    """The run's sample (None when none was drawn); a damaged file is a DamagedSample naming the line."""
    path = sample_path(run_dir)
    try:
        read = read_jsonl(path, _ROW.validate_json)
    except CorruptRunFile as exc:
        if exc.line is None:
            raise DamagedSample(str(exc)) from None
        raise DamagedSample(f"{path}: line {exc.line} is damaged ({_row_problem(path, exc.line)}); fix or delete "
                            "that line, or move the file aside to draw the sample again") from None
    if not read.rows:
        return None
    first, rest = read.rows[0], read.rows[1:]
    if not isinstance(first, SampleDraw) or any(isinstance(row, SampleDraw) for row in rest):
        raise DamagedSample(f"{path}: the first row must be the one draw record (move the file aside to draw again)")
    extensions = [row for row in rest if isinstance(row, SampleExtension)]
    if any(ext.draw_id != first.draw_id for ext in extensions):
        raise DamagedSample(f"{path}: an extension row names another draw than the file's first row")
    return HumanSample(draw=first, rows=[row for row in rest if isinstance(row, SampleLabel)], extensions=extensions,
                       torn_tail=read.torn_tail)


def write_draw(run_dir: str | Path, draw: SampleDraw) -> None:
    """Start human_sample.jsonl with its draw record; refused when the run already has a sample."""
    path = sample_path(run_dir)
    if read_sample(run_dir) is not None:
        raise UserError(f"{path}: a sample was already drawn (move the file aside to draw again)")
    repair_tail(path)
    append_jsonl(path, [draw.model_dump_json()])


def append_extension(run_dir: str | Path, extension: SampleExtension) -> None:
    """Append an extension row (after cutting off a torn tail); the caller holds the run's lock."""
    path = sample_path(run_dir)
    repair_tail(path)
    append_jsonl(path, [extension.model_dump_json()])


def append_labels(run_dir: str | Path, rows: list[SampleLabel]) -> None:
    """Append label rows (cutting off a torn tail first: each append is its own writer)."""
    path = sample_path(run_dir)
    repair_tail(path)
    append_jsonl(path, [row.model_dump_json() for row in rows])


__all__ = ["DamagedSample", "DrawMethod", "HumanSample", "SampleDraw", "SampleExtension", "SampleLabel", "SampledUnit",
           "append_extension", "append_labels", "read_sample", "sample_path", "write_draw"]
