"""The knowledge section's control-question figures: a simulated exam whose targets always answer, always
decline, or meet controls by what they know (option false_premise) reports, per target, the control refusal
rate and the false-premise acceptance rate with cluster intervals in report.json, report.md, report.html and
the terminal summary; a run without controls reports none."""

from __future__ import annotations

import json
from pathlib import Path

from examiner.core.config import EndpointSpec, Settings
from examiner.exam.runner import ExamRequest, start_exam
from examiner.reporting.reading import load_report
from examiner.reporting.terminal import exam_summary
from tests.helpers.simulated_exam import PROFILE, ROLES

POLICIES = {"always": ("answers", PROFILE), "never": ("declines", {"declined": 1.0}), "knows": ("knowledge", PROFILE)}


def settings(share: float) -> Settings:
    endpoints = {"sim": EndpointSpec(provider="simulated", model="sim-sim", max_concurrency=16,
                                     options={"knowledge": PROFILE})}
    endpoints |= {name: EndpointSpec(provider="simulated", model=f"sim-{name}", max_concurrency=16,
                                     options={"knowledge": profile, "false_premise": policy})
                  for name, (policy, profile) in POLICIES.items()}
    return Settings(endpoints=endpoints, roles={r: "sim" for r in ROLES},
                    exam={"max_rounds": 1, "control_share": share, "self_check_share": 0.0})


async def test_each_target_is_caught_with_intervals(small_corpus: Path, tmp_path: Path) -> None:
    await start_exam(settings(1.0), ExamRequest([str(small_corpus)], targets=list(POLICIES)), tmp_path, quiet=True)
    knowledge = json.loads((tmp_path / "report.json").read_text())["knowledge"]
    always, never = knowledge["always"]["controls"], knowledge["never"]["controls"]
    assert always["asked"] == never["asked"] >= 2
    assert always["false_premise_acceptance"]["value"] == 1.0 and always["refusal_rate"]["value"] == 0.0
    assert never["refusal_rate"]["value"] == 1.0 and never["false_premise_acceptance"]["value"] == 0.0
    assert knowledge["never"]["overall"]["abstention_rate"]["value"] == 1.0  # over-refusal on answerable ones
    knows = knowledge["knows"]["controls"]
    assert 0 < knows["refusal_rate"]["value"] < 1
    assert knows["refusal_rate"]["low"] < knows["refusal_rate"]["value"] < knows["refusal_rate"]["high"]
    assert knows["refusal_rate"]["num"] + knows["false_premise_acceptance"]["num"] == knows["asked"]
    assert sum(knows["by_kind"].values()) == knows["asked"]
    paper = {row["stage"]: row for row in json.loads((tmp_path / "report.json").read_text())["cost"]["paper"]}
    assert paper["control questions (beside)"]["questions"] == always["asked"]
    # the judge's control labels are not the exam's judging, nor the control answers its candidate answers
    assert paper["control questions (beside)"]["calls"] == always["asked"] * (1 + 2 * len(POLICIES))
    md = (tmp_path / "report.md").read_text()
    assert "### Control questions" in md and "false-premise acceptance" in md
    assert "Control questions" in (tmp_path / "report.html").read_text()
    lines = [p for p in exam_summary(load_report(tmp_path).report, tmp_path) if isinstance(p, str) and p.startswith("controls ")]
    assert len(lines) == 3 and "accepted a false premise 100.0%" in next(x for x in lines if "always" in x)


async def test_no_controls_no_figures(small_corpus: Path, tmp_path: Path) -> None:
    await start_exam(settings(0.0), ExamRequest([str(small_corpus)], targets=["always"]), tmp_path, quiet=True)
    knowledge = json.loads((tmp_path / "report.json").read_text())["knowledge"]
    assert knowledge["always"].get("controls") is None
    assert "### Control questions" not in (tmp_path / "report.md").read_text()


async def test_compare_shows_each_targets_controls_side_by_side(small_corpus: Path, tmp_path: Path) -> None:
    """compare: one control row per target (the always-answering one caught accepting, the declining one
    refusing), and each pair's abstention rate difference as its own figure."""
    from examiner.reporting.compare import CONTROL_HEADER, compare_html, compare_markdown, compare_report

    await start_exam(settings(1.0), ExamRequest([str(small_corpus)], targets=["always", "never"]), tmp_path,
                     quiet=True)
    report = compare_report([tmp_path])
    by_target = {t.target: t.controls for t in report.targets}
    always, never = by_target["always"], by_target["never"]
    assert always is not None and never is not None and always.asked == never.asked >= 2
    assert always.false_premise_acceptance.value == 1.0 and never.refusal_rate.value == 1.0
    md = compare_markdown(report)
    assert "## Control questions" in md and " | ".join(CONTROL_HEADER) in md
    (difference,) = report.abstention_differences
    assert difference.metric == "abstention_rate" and difference.value_b == 1.0  # `never` declines everything
    assert difference.difference.estimate == difference.value_b - difference.value_a
    assert "Paired difference in the abstention rate" in md and "Control questions" in compare_html(report)
