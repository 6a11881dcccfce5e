"""People's labels of a random sample of an exam's verdicts, without a browser (`examiner review`).

Draw the sample (recorded in the run's human_sample.jsonl), extend it with the next units of the same
seeded order, write a sheet of the drawn units to fill in, and import the filled-in labels; `examiner report RUN_DIR` then calibrates each target's accuracy with
them (docs/STATISTICS.md, section 3). The review page (`examiner view`) offers the same sample to label
in a browser. Every write holds the run's lock, as the review page's do.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from examiner.api.settings import path_text
from examiner.core.errors import UserError
from examiner.core.owned import check_replaceable, write_output


class ReviewSampleOptions(BaseModel):
    """`examiner review RUN_DIR`: draw a random sample of the run's judged units, write it as a sheet,
    import people's labels of it."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    run_dir: str
    """An exam run folder."""
    size: int | None = None
    """Draw this many judged units (per target with `per_target`) when the run has no sample yet; a run
    that has one keeps it (a different size, seed or method is refused: extend it with `extend`)."""
    extend: int | None = None
    """Add this many units (per target with a per-target draw) to the run's sample: the next ones of the same
    seeded order, so the labels given stay valid and the sample stays a uniform random draw."""
    seed: int = 0
    """The draw's seed (numpy default_rng): the same run, size and seed draw the same units."""
    per_target: bool = False
    """Draw `size` units from each target's judged units (stratified) instead of from all together."""
    who: str = "reviewer"
    """Recorded with the draw and with each imported label that names no one."""
    sheet: str | None = None
    """Write the drawn units here as JSONL (target, unit_id, question, answer, unit_text, verdict: null) to
    fill in; the judge's verdict is left out."""
    labels: str | None = None
    """Import labels from this JSONL (target, unit_id, verdict: correct / incorrect / abstained / unrelated; optional
    who, note); rows with an empty verdict are skipped (a sheet not yet filled in)."""

    _paths = field_validator("run_dir", "sheet", "labels", mode="before")(path_text)


@dataclass(frozen=True)
class ReviewSampleResult:
    """What the call did: the draw in force, whether it drew it now, the labels imported and in force."""

    run_dir: Path
    draw: dict[str, Any]
    """The draw record (human_sample.jsonl's first row) without its unit list."""
    drawn_now: bool
    imported: int
    labelled: int
    """Drawn units with a label in force."""
    per_target: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per target: units drawn and labelled."""
    sheet: Path | None = None
    extended: int = 0
    """Units added to the sample by this call (`extend`)."""
    minimum: int = 20
    """Labelled units per target the calibrated (PPI++) figure needs."""

    def lines(self) -> list[str]:
        """What `examiner review` prints."""
        d = self.draw
        verb = "drew" if self.drawn_now else "sample"
        out = [f"{verb} {d['draw_id']}: {d['drawn']} of {d['population']} judged units ({d['method']}, seed "
               f"{d['seed']}, size {d['size']}, by {d['who']} at {d['at']})"]
        if self.extended:
            out.append(f"extended the sample by {self.extended} units, the next of its seeded order "
                       f"({d['drawn']} drawn now; the labels given stay)")
        if self.imported:
            out.append(f"imported {self.imported} labels")
        out += [f"{target}: {c['labelled']} of {c['drawn']} drawn units labelled"
                for target, c in self.per_target.items()]
        short = [target for target, c in self.per_target.items() if c["labelled"] < self.minimum]
        if short:
            out.append(f"the calibrated (PPI++) figure needs {self.minimum} labelled units per target ({', '.join(short)} "
                       f"below): label the rest, or add units with --extend N")
        if self.sheet is not None:
            out.append(f"sheet: {self.sheet} (fill in `verdict`, then --labels {self.sheet})")
        return out


def _read_label_file(path: str) -> list[dict[str, Any]]:
    """The records of a labels JSONL; a line that is not a JSON object is a UserError naming it."""
    file = Path(path)
    if not file.is_file():
        raise UserError(f"labels file not found: {path}")
    records = []
    for n, line in enumerate(file.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}:{n}: not JSON ({exc.msg})") from None
        if not isinstance(record, dict):
            raise UserError(f"{path}:{n}: expected a JSON object per line")
        records.append(record)
    return records


def review_sample(options: ReviewSampleOptions) -> ReviewSampleResult:
    """Draw (when asked and none is drawn), write the sheet, import labels, as `examiner review` does."""
    from examiner.core.human_sample import append_extension, append_labels, read_sample, write_draw
    from examiner.core.runlock import hold_run_dir
    from examiner.reporting.calibration_section import MIN_LABELS
    from examiner.reporting.human_sample import draw_sample, extend_sample, label_rows, sheet
    from examiner.reporting.run_reader import load_run

    if options.sheet:  # before anything is drawn or written
        check_replaceable(Path(options.sheet), "--sheet")
    run = load_run(options.run_dir)
    method: Literal["uniform", "per-target"] = "per-target" if options.per_target else "uniform"
    drawn_now = False
    imported = extended = 0
    with hold_run_dir(options.run_dir):
        sample = read_sample(options.run_dir)
        if sample is None:
            if options.size is None:
                raise UserError(f"{options.run_dir}: no sample drawn yet: give --sample N to draw one")
            write_draw(options.run_dir, draw_sample(run, options.size, seed=options.seed, method=method,
                                                    who=options.who))
            drawn_now = True
        elif options.size is not None and (sample.draw.size, sample.draw.seed, sample.draw.method) != (
                options.size, options.seed, method):
            d = sample.draw
            raise UserError(f"{options.run_dir}: a sample was already drawn ({d.method}, size {d.size}, seed {d.seed}); "
                            "add units to it with --extend N, or move human_sample.jsonl aside to draw another")
        sample = read_sample(options.run_dir)
        assert sample is not None
        if options.extend is not None:
            extension = extend_sample(run, sample, options.extend, who=options.who)
            append_extension(options.run_dir, extension)
            extended = len(extension.units)
            sample = read_sample(options.run_dir)
            assert sample is not None
        if options.labels:
            rows = label_rows(sample, _read_label_file(options.labels), who=options.who)
            append_labels(options.run_dir, rows)
            imported = len(rows)
            sample = read_sample(options.run_dir)
            assert sample is not None
    sheet_path = None
    if options.sheet:
        sheet_path = Path(options.sheet)
        sheet_path.parent.mkdir(parents=True, exist_ok=True)
        write_output(sheet_path, "".join(json.dumps(row.to_dict(), ensure_ascii=False) + "\n"
                                         for row in sheet(run, sample)), "--sheet")
    labels = sample.labels()
    per_target: dict[str, dict[str, int]] = {}
    for unit in sample.units:
        counts = per_target.setdefault(unit.target, {"drawn": 0, "labelled": 0})
        counts["drawn"] += 1
        counts["labelled"] += (unit.target, unit.unit_id) in labels
    draw = {**sample.draw.model_dump(exclude={"units"}), "drawn": len(sample.units)}
    return ReviewSampleResult(run_dir=Path(options.run_dir), draw=draw, drawn_now=drawn_now, imported=imported,
                              labelled=len(labels), per_target=per_target, sheet=sheet_path, extended=extended,
                              minimum=MIN_LABELS)


__all__ = ["ReviewSampleOptions", "ReviewSampleResult", "review_sample"]
