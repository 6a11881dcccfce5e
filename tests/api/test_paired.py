"""The API's paired figures are examiner.stats called on the run's own records: compare_runs' paired
section, gate's decision and estimate's plans agree with compare_paired, non_inferiority, design_from_pilot
and plan applied directly to the outcomes and source documents the run folders hold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from examiner.api import (CompareOptions, EstimateOptions, GateOptions, compare_runs, estimate_exam, gate)
from examiner.core.errors import UserError
from examiner.core.records import UnitRecord
from examiner.exam.run_writer import RunStore
from examiner.stats.paired import compare_paired, non_inferiority
from examiner.stats.planning import design_from_pilot, plan
from tests.helpers.paired_runs import CORPUS, paired_settings, strong_and_weak_run
from tests.helpers.simulated_exam import outcomes_of

VALUE = {"correct": 1, "incorrect": 0}


def outcomes_and_documents(run_dir: Path, units: set[str] | None = None) -> tuple[list, list, list]:
    """strong's and weak's outcome per unit (None: not covered) and each unit's source document, read
    from the records directly."""
    by_target: dict[str, dict[str, int | None]] = {"strong": {}, "weak": {}}
    for o in outcomes_of(run_dir).values():
        by_target[o.target][o.unit_id] = VALUE.get(o.status)
    documents = {u.id: u.sources[0].document for u in RunStore(run_dir).all(UnitRecord).values()}
    ids = sorted(set(by_target["strong"]) & (units if units is not None else set(documents)))
    return ([by_target["strong"][u] for u in ids], [by_target["weak"].get(u) for u in ids],
            [documents[u] for u in ids])


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return strong_and_weak_run(tmp_path_factory)


def test_compare_runs_paired_is_compare_paired_on_the_records(run_dir: Path) -> None:
    result = compare_runs(CompareOptions(run_dirs=(run_dir,)))
    (section,) = result.paired
    assert (section.a, section.b) == ("strong", "weak") and result.report.paired == [section]
    strong, weak, documents = outcomes_and_documents(run_dir)
    direct = compare_paired(strong, weak, documents)
    assert section.n_units == direct.n_units and section.n_documents == direct.n_documents == 4
    assert section.accuracy_difference.estimate == pytest.approx(direct.accuracy_difference.estimate)
    assert section.accuracy_difference.low == pytest.approx(direct.accuracy_difference.low)
    assert section.accuracy_difference.high == pytest.approx(direct.accuracy_difference.high)
    assert section.coverage_difference.estimate == pytest.approx(direct.coverage_difference.estimate)
    assert section.mcnemar.p_value == pytest.approx(direct.mcnemar.p_value)
    assert (section.mcnemar.a_only, section.mcnemar.b_only) == (direct.mcnemar.a_only, direct.mcnemar.b_only)
    assert section.clustered_test.p_value == pytest.approx(direct.clustered_test.p_value)
    assert section.power.achieved == pytest.approx(direct.power.achieved)
    assert section.power.minimum_detectable_effect == pytest.approx(direct.power.minimum_detectable_effect)
    assert section.accuracy_difference.estimate < 0 and section.mcnemar.p_value < 0.05
    assert result.headlines() and result.headlines()[0].startswith("weak - strong: accuracy -")
    by_document = [g for g in section.subgroups if g.by == "document"]
    assert sorted(g.key for g in by_document) == sorted(set(documents))
    assert all(g.p_adjusted >= g.p_value for g in by_document)


def test_gate_is_non_inferiority_on_the_records(run_dir: Path) -> None:
    result = gate(GateOptions(base=run_dir, new=run_dir, base_target="strong", new_target="weak", margin=0.05))
    strong, weak, documents = outcomes_and_documents(run_dir)
    direct = non_inferiority(strong, weak, documents, 0.05)
    assert not result.passed and result.decision.passed == direct.passed
    assert result.decision.lower_bound == pytest.approx(direct.lower_bound)
    assert result.decision.p_value == pytest.approx(direct.p_value)
    assert result.line() == result.decision.line() and result.line().startswith("FAIL")
    assert gate(GateOptions(base=run_dir, new=run_dir, target="strong", margin=0.1)).passed
    with pytest.raises(UserError, match="--target"):
        gate(GateOptions(base=run_dir, new=run_dir, margin=0.1))


def test_estimate_plans_are_the_planner_on_the_pilot(tmp_path: Path) -> None:
    pilot = tmp_path / "pilot"
    result = estimate_exam(EstimateOptions(corpus=(CORPUS,), targets=("strong", "weak"), out=str(pilot),
                                           detect=0.1), paired_settings())
    assert result.plans is not None and result.estimate is not None
    sample = set(json.loads((pilot / "pilot.json").read_text())["units"])
    strong, weak, documents = outcomes_and_documents(pilot, sample)
    design = design_from_pilot(strong, documents, None, weak)
    assert result.plans.design.unit_variance == pytest.approx(design.unit_variance)
    assert result.plans.design.icc_documents == pytest.approx(design.icc_documents)
    size = result.estimate.units / result.estimate.documents
    (planned,) = result.plans.plans
    direct = plan(design, detect=0.1, units_per_document=size)
    assert (planned.units, planned.documents) == (direct.units, direct.documents)
    assert planned.dollars == pytest.approx(planned.units * result.estimate.total.dollars.value / result.estimate.units)
    assert result.as_dict()["plan"]["plans"][0]["units"] == planned.units
