"""People's labels of a random sample of an exam's verdicts (human_sample.jsonl) and the report's
"Calibrated by people" section: the draw is reproducible and recorded, browsing overrides are never used
as sample labels, and the figures are examiner.stats.ppi's on the same labels.

The run is the hand-written sample of tests.helpers.sample_run: alpha 10 correct, 2 incorrect of 12 judged
units; beta 6 correct, 4 incorrect (2 unanswered: not judged, so not in the population)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from examiner.core.errors import UserError
from examiner.core.human_sample import append_labels, read_sample, write_draw
from examiner.core.overrides import OverrideRecord, utc_now
from examiner.core.rundir import HUMAN_SAMPLE, RunDir
from examiner.reporting import build_report, load_run
from examiner.reporting import calibration_section as cs
from examiner.reporting.human_sample import draw_sample, label_rows, population, sheet
from examiner.stats.ppi import agreement, calibrated_accuracy


@pytest.fixture()
def run_dir(sample_run_copy: Path) -> Path:
    """A fresh copy of the sample run (tests/conftest.py) for each test."""
    return sample_run_copy


def test_population_is_the_judged_units_with_their_deciding_verdict(run_dir: Path) -> None:
    run = load_run(run_dir)
    units = population(run)
    assert len(units) == 22 and {u.target for u in units} == {"alpha", "beta"}
    for u in units:
        outcome = run.outcomes[u.target][u.unit_id]
        assert outcome.status in ("correct", "incorrect") and outcome.verdict_id == u.verdict_id


def test_draw_is_reproducible_recorded_and_stratified(run_dir: Path) -> None:
    run = load_run(run_dir)
    first = draw_sample(run, 8, seed=7, who="ana")
    again = draw_sample(run, 8, seed=7, who="ana")
    other = draw_sample(run, 8, seed=8, who="ana")
    assert first.units == again.units and first.draw_id == again.draw_id
    assert first.units != other.units
    assert len({(u.target, u.unit_id) for u in first.units}) == 8  # without replacement
    strata = draw_sample(run, 4, seed=7, method="per-target")
    assert sorted(u.target for u in strata.units) == ["alpha"] * 4 + ["beta"] * 4
    assert len(draw_sample(run, 100, seed=1).units) == 22  # never more than the population
    write_draw(run_dir, first)
    stored = read_sample(run_dir)
    assert stored is not None and stored.draw == first
    assert (stored.draw.seed, stored.draw.size, stored.draw.population, stored.draw.method, stored.draw.who) == (
        7, 8, 22, "uniform", "ana")
    assert stored.draw.population_per_target == {"alpha": 12, "beta": 10}
    with pytest.raises(UserError, match="already drawn"):
        write_draw(run_dir, other)


def test_labels_are_checked_and_the_latest_wins(run_dir: Path) -> None:
    run = load_run(run_dir)
    draw = draw_sample(run, 5, seed=1)
    write_draw(run_dir, draw)
    stored = read_sample(run_dir)
    assert stored is not None
    unit = draw.units[0]
    with pytest.raises(UserError, match="not in the drawn sample"):
        label_rows(stored, [{"target": "alpha", "unit_id": "nope", "verdict": "correct"}], who="ana")
    with pytest.raises(UserError, match="label record 1"):
        label_rows(stored, [{"target": unit.target, "unit_id": unit.unit_id, "verdict": "maybe"}], who="ana")
    assert label_rows(stored, [{"target": unit.target, "unit_id": unit.unit_id, "verdict": ""}], who="ana") == []
    key = {"target": unit.target, "unit_id": unit.unit_id}
    append_labels(run_dir, label_rows(stored, [{**key, "verdict": "correct"}], who="ana"))
    append_labels(run_dir, label_rows(stored, [{**key, "label": "unrelated", "note": "off topic"}], who="bo"))
    stored = read_sample(run_dir)
    assert stored is not None and len(stored.rows) == 2
    row = stored.labels()[(unit.target, unit.unit_id)]
    assert (row.verdict, row.who, row.note, row.source) == ("unrelated", "bo", "off topic", "import")
    shown = sheet(run, stored)
    assert [r.unit_id for r in shown] == [u.unit_id for u in draw.units]  # the order drawn
    assert shown[0].verdict == "unrelated" and all(r.verdict is None for r in shown[1:])
    assert "reason" not in shown[0].to_dict()  # the judge's verdict and reason are not on the sheet


def test_report_without_a_sample_has_no_section(run_dir: Path) -> None:
    assert cs.exam_calibration(load_run(run_dir)) is None
    assert cs.calibration_markdown(None, lambda header, rows: "") == []


def _label_all(run_dir: Path, size: int, seed: int, flip: int) -> dict[tuple[str, str], str]:
    """Draw `size` per target and label every drawn unit as the judge did, except the first `flip`
    correct ones, which the person calls incorrect; returns (target, unit) -> the person's label."""
    run = load_run(run_dir)
    draw = draw_sample(run, size, seed=seed, method="per-target", who="ana")
    write_draw(run_dir, draw)
    stored = read_sample(run_dir)
    assert stored is not None
    given, flipped = {}, 0
    for u in draw.units:
        judge = run.outcomes[u.target][u.unit_id].status
        label = judge
        if judge == "correct" and flipped < flip:
            label, flipped = "incorrect", flipped + 1
        given[(u.target, u.unit_id)] = label
    append_labels(run_dir, label_rows(stored, [{"target": t, "unit_id": uid, "verdict": v}
                                               for (t, uid), v in given.items()], who="ana"))
    return given


def test_calibrated_figures_are_ppis_on_the_same_labels(run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cs, "MIN_LABELS", 4)  # the sample run has 12 judged units per target at most
    given = _label_all(run_dir, 6, seed=2, flip=2)
    run = load_run(run_dir)
    section = cs.exam_calibration(run)
    assert section is not None and section["draw"]["labelled"] == 12 and section["minimum"] == 4
    for target in ("alpha", "beta"):
        units = [u for u in population(run) if u.target == target]
        judge = [run.outcomes[target][u.unit_id].status for u in units]
        people = [given.get((target, u.unit_id)) for u in units]
        expected = calibrated_accuracy([int(j == "correct") for j in judge],
                                       [None if p is None else int(p == "correct") for p in people])
        agree = agreement([p for p in people if p is not None], [j for j, p in zip(judge, people) if p is not None])
        got = section["targets"][target]
        assert got["ppi"] == expected.ppi.to_dict() and got["human_only"] == expected.human_only.to_dict()
        assert got["judge_raw"] == expected.judge_raw.to_dict()
        assert (got["lam"], got["judge_bias"]) == (expected.lam, expected.judge_bias)
        assert got["agreement"] == {**agree.to_dict(), "per_label": list(agree.to_dict()["per_label"])}
        assert (got["labelled"], got["population"]) == (6, len(units)) and got["note"] is None


def test_browsing_overrides_are_never_used_as_sample_labels(run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cs, "MIN_LABELS", 4)
    _label_all(run_dir, 6, seed=2, flip=0)
    before = cs.exam_calibration(load_run(run_dir))
    run = load_run(run_dir)
    for v in sorted(run.verdicts.values(), key=lambda v: v.id)[:8]:  # a reviewer overturns eight verdicts
        RunDir(run_dir).append_override(OverrideRecord(
            question_id=v.question_id, unit_id=v.unit_id, old=v.type,
            new="incorrect" if v.type == "correct" else "correct", reason="browsing", who="cy", at=utc_now()))
    after = cs.exam_calibration(load_run(run_dir))
    assert load_run(run_dir).overrides and after == before


def test_too_small_a_sample_says_so_and_report_rerender_picks_up_labels(run_dir: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    _label_all(run_dir, 3, seed=5, flip=1)
    build_report(run_dir)
    report = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    alpha = report["calibration"]["targets"]["alpha"]
    assert alpha["labelled"] == 3 and alpha["ppi"] is None and alpha["human_only"]["n"] == 3
    assert f"needs at least {cs.MIN_LABELS}" in alpha["note"]
    md = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "### Calibrated by people" in md and f"needs at least {cs.MIN_LABELS}" in md
    assert "Calibrated by people" in (run_dir / "report.html").read_text(encoding="utf-8")
    assert report["calibration"]["file"] == HUMAN_SAMPLE


def test_a_label_whose_unit_is_now_decided_by_another_verdict_is_stale(run_dir: Path) -> None:
    given = _label_all(run_dir, 3, seed=5, flip=0)
    stored = read_sample(run_dir)
    assert stored is not None
    unit = stored.draw.units[0]
    lines = (run_dir / HUMAN_SAMPLE).read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    for row in rows[1:]:
        if (row["target"], row["unit_id"]) == (unit.target, unit.unit_id):
            row["verdict_id"] = "v-elsewhere"
    (run_dir / HUMAN_SAMPLE).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    section = cs.exam_calibration(load_run(run_dir))
    assert section is not None and section["draw"]["stale"] == 1
    assert section["targets"][unit.target]["labelled"] == sum(1 for (t, _) in given if t == unit.target) - 1


def test_abstention_and_hallucination_rates_are_calibrated_by_the_same_labels(
        run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A person says two judged units declined (abstained) where the judge saw a claim: the abstention rate
    is PPI++ of the 0/1 abstained labels, the hallucination rate PPI++ for a ratio (incorrect among
    attempted: the relabelled units leave the denominator), and report.md shows both."""
    from examiner.stats.ppi_ratio import ppi_ratio

    monkeypatch.setattr(cs, "MIN_LABELS", 4)
    run = load_run(run_dir)
    draw = draw_sample(run, 6, seed=2, method="per-target", who="ana")
    write_draw(run_dir, draw)
    stored = read_sample(run_dir)
    assert stored is not None
    given: dict[tuple[str, str], str] = {}
    for u in draw.units:
        judge = run.outcomes[u.target][u.unit_id].status
        changed = sum(v == "abstained" for (t, _), v in given.items() if t == u.target) < 2
        given[(u.target, u.unit_id)] = "abstained" if changed else judge
    append_labels(run_dir, label_rows(stored, [{"target": t, "unit_id": uid, "verdict": v}
                                               for (t, uid), v in given.items()], who="ana"))
    section = cs.exam_calibration(load_run(run_dir))
    assert section is not None

    def pair(label: str) -> tuple[int, int]:
        return int(label == "incorrect"), int(label in ("correct", "incorrect"))

    for target in ("alpha", "beta"):
        units = [u for u in population(run) if u.target == target]
        judge = [run.outcomes[target][u.unit_id].status for u in units]
        people = [given.get((target, u.unit_id)) for u in units]
        rates = section["rates"][target]
        expected = calibrated_accuracy([int(j == "abstained") for j in judge],
                                       [None if p is None else int(p == "abstained") for p in people])
        abstention = rates["abstention_rate"]
        assert abstention["ppi"] == expected.ppi.to_dict() and abstention["human_only"]["estimate"] == 2 / 6
        assert abstention["judge_raw"]["estimate"] == 0.0  # the judge never said abstained in this run
        labelled = [i for i, p in enumerate(people) if p is not None]
        ppi, lam = ppi_ratio([pair(str(people[i])) for i in labelled], [pair(judge[i]) for i in labelled],
                             [pair(judge[i]) for i, p in enumerate(people) if p is None])
        hallucination = rates["hallucination_rate"]
        assert hallucination["ppi"] == ppi.to_dict() and hallucination["lam"] == lam
        attempted = [pair(str(people[i])) for i in labelled if people[i] != "abstained"]
        assert hallucination["human_only"]["estimate"] == pytest.approx(sum(x for x, _ in attempted) / 4)
        assert hallucination["judge_raw"]["estimate"] == pytest.approx(judge.count("incorrect") / len(judge))
        assert hallucination["population"] == len(units) and hallucination["labelled"] == 6
    md = cs.calibration_markdown(section, lambda header, rows: "\n".join(" | ".join(r) for r in [header, *rows]))
    assert "hallucination (incorrect among attempted)" in "\n".join(md)
    assert any(line.startswith("  abstention:") for line in cs.calibration_lines(section))
