"""The exam report's judge bias audit on runs of known truth: a panel whose members' "correct" rises with
answer length (slope found) or not (interval covers 0), a member of the same family as a target
(flagged, with its gap), the members' kappas equal to scikit-learn's and statsmodels', and the section in
report.json, report.md, report.html and the terminal; a run without panel or swap says "not measured"."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from examiner.core.records import VerdictRecord
from examiner.exam.run_writer import RunStore
from examiner.reporting import build_report
from examiner.reporting.bias_audit import exam_bias_audit
from examiner.reporting.bias_render import bias_line
from examiner.reporting.model import ExamReport
from examiner.reporting.run_reader import load_run
from tests.helpers.bias_runs import MEMBERS, write_bias_run
from tests.helpers.sample_run import write_sample_run


@pytest.fixture(scope="module")
def biased(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_bias_run(tmp_path_factory.mktemp("biased") / "run", length_bias=0.1)


def test_a_length_biased_panel_is_flagged_and_a_fair_one_is_not(biased: Path, tmp_path: Path) -> None:
    slope = exam_bias_audit(load_run(biased))["length"]
    assert slope["measured"] and slope["flagged"] and slope["groups"] == 40
    assert 0 < slope["low"] < 0.1 < slope["high"]
    fair = [exam_bias_audit(load_run(write_bias_run(tmp_path / f"fair{s}", seed=s)))["length"] for s in range(3)]
    assert all(f["low"] <= 0 <= f["high"] and not f["flagged"] for f in fair)


def test_the_same_family_member_is_flagged_with_its_gap(biased: Path) -> None:
    item = exam_bias_audit(load_run(biased))["self_preference"]
    assert item["flagged"]
    assert [(m["judge"], m["target"], m["match"]) for m in item["matches"]] == [("mini", "gpt-4o", "same family")]
    verdicts = list(RunStore(biased).all(VerdictRecord).values())
    own = [(v.target == "gpt-4o", v.members["mini"].verdict == "correct") for v in verdicts]
    self_mean = np.mean([c for s, c in own if s])
    other_mean = np.mean([c for s, c in own if not s])
    (gap,) = item["gaps"]
    assert gap["gap"] == pytest.approx(self_mean - other_mean)
    assert gap["low"] <= gap["gap"] <= gap["high"] and gap["n_self"] == gap["n_other"] == 240


def test_panel_kappas_equal_sklearn_and_statsmodels(biased: Path) -> None:
    item = exam_bias_audit(load_run(biased))["panel"]
    verdicts = sorted(RunStore(biased).all(VerdictRecord).values(), key=lambda v: v.id)
    labels = {m: [v.members[m].verdict for v in verdicts] for m in MEMBERS}
    pairs = {(p["a"], p["b"]): p for p in item["pairs"]}
    assert set(pairs) == {("mini", "claude"), ("mini", "qwen"), ("claude", "qwen")}
    for (a, b), pair in pairs.items():
        assert pair["kappa"] == pytest.approx(cohen_kappa_score(labels[a], labels[b]))
        assert pair["low"] <= pair["kappa"] <= pair["high"]
    assert pairs[("mini", "claude")]["kappa"] > pairs[("claude", "qwen")]["kappa"]  # qwen is the noisy one
    codes = np.array([[1 if labels[m][i] == "correct" else 0 for m in MEMBERS] for i in range(len(verdicts))])
    assert item["fleiss_kappa"] == pytest.approx(fleiss_kappa(aggregate_raters(codes)[0], method="fleiss"))


def test_the_section_is_in_every_rendering(biased: Path) -> None:
    build_report(biased)
    data = json.loads((biased / "report.json").read_text(encoding="utf-8"))
    report = ExamReport.model_validate(data)
    assert report.bias_audit is not None and report.bias_audit.length.flagged
    md = (biased / "report.md").read_text(encoding="utf-8")
    section = md[md.index("## Judge bias audit"):]
    assert "Position flips under swap: not measured: the exam's judge marks one answer at a time" in section
    assert "FLAGGED: longer answers judged more favourably" in section
    assert "Self-preference: FLAGGED: judge mini (gpt-4o-mini) judges gpt-4o (gpt-4o): same family" in section
    assert "| mini | claude | 480 |" in section
    assert "Judge bias audit" in (biased / "report.html").read_text(encoding="utf-8")
    line = bias_line(report.bias_audit)
    assert line is not None and line.startswith("judge bias: flips -") and "FLAGGED: length, self-preference" in line


def test_a_run_without_panel_says_what_was_not_measured(tmp_path: Path) -> None:
    audit = exam_bias_audit(load_run(write_sample_run(tmp_path / "run")))
    assert audit["panel"] == {"measured": False, "reason": "one judge, no panel (roles: {judge: [A, B, C]} names one)"}
    assert not audit["position"]["measured"]
    assert audit["self_preference"]["flagged"] is False  # judge `local`, targets alpha and beta
    few = exam_bias_audit(load_run(write_sample_run(tmp_path / "one", targets=("alpha",))))["length"]
    assert few["measured"] or "at least 10" in few["reason"] or "same length" in few["reason"]


async def test_a_simulated_exam_with_a_panel_reports_the_audit(small_corpus: Path, tmp_path: Path) -> None:
    """A real (simulated) exam judged by a panel one of whose members is the target's own endpoint."""
    from examiner.exam.runner import ExamRequest, start_exam
    from tests.helpers.bias_runs import panel_exam_settings

    judges = ["sim", "j1", "j2"]
    info = await start_exam(panel_exam_settings(tuple(judges)), ExamRequest([str(small_corpus)], judges=judges),
                            tmp_path, quiet=True, report=False)
    assert info.status == "completed"
    build_report(tmp_path)
    report = ExamReport.model_validate(json.loads((tmp_path / "report.json").read_text(encoding="utf-8")))
    audit = report.bias_audit
    assert audit is not None and audit.panel.measured and audit.panel.members == judges
    assert [(m.judge, m.target, m.match) for m in audit.self_preference.matches] == [("sim", "sim", "same model")]
    assert audit.self_preference.flagged and not audit.self_preference.gaps  # the one target is the judge's own
    verdicts = list(RunStore(tmp_path).all(VerdictRecord).values())
    both = [(v.members["sim"].verdict, v.members["j1"].verdict) for v in verdicts
            if v.members["sim"].verdict != "unscored" and v.members["j1"].verdict != "unscored"]
    pair = next(p for p in audit.panel.pairs if (p.a, p.b) == ("sim", "j1"))
    assert pair.n == len(both)
    if len({x for b in both for x in b}) > 1:
        assert pair.kappa == pytest.approx(cohen_kappa_score([a for a, _ in both], [b for _, b in both]))
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "## Judge bias audit" in md and "Self-preference: FLAGGED: judge sim (sim) judges sim (sim): same model" in md
