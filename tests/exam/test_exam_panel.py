"""A judge panel in the exam: the majority of simulated judges of different noise gives each verdict.

Members sit on different simulated endpoints (own seed, own `judge_noise`), so their errors are
independent; the noise-free member should agree with the panel most.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import yaml

from examiner.core.config import EndpointSpec, ExamSettings, Settings, load_settings
from examiner.core.records import VerdictRecord
from examiner.core.rundir import RunDir
from examiner.exam.nodes.coverage import TargetRound, apply_verdicts
from examiner.exam.runner import ExamRequest, start_exam
from examiner.exam.run_writer import RunStore
from examiner.llm.ledger import outcomes
from examiner.reporting import build_report

PROFILE = {"known": 0.6, "wrong": 0.2, "unknown": 0.2}
NOISE = {"j0": 0.0, "j1": 0.15, "j2": 0.4}


def panel_settings() -> Settings:
    endpoints = {"sim": EndpointSpec(provider="simulated", model="sim", max_concurrency=16,
                                     options={"knowledge": PROFILE})}
    for i, (name, noise) in enumerate(NOISE.items()):
        endpoints[name] = EndpointSpec(provider="simulated", model=name, max_concurrency=16,
                                       options={"judge_noise": noise, "seed": 100 + i})
    roles = {"examiner": "sim", "candidate": "sim", "judge": "sim"}
    return Settings(endpoints=endpoints, roles=roles, exam=ExamSettings(max_rounds=2))


def majority_type(members: dict[str, str]) -> str:
    """The panel rule written out again: most given label; a tie or no label is unscored."""
    votes = Counter(t for t in members.values() if t != "unscored").most_common()
    if not votes or (len(votes) > 1 and votes[0][1] == votes[1][1]):
        return "unscored"
    return votes[0][0]


def check_panel_run(run_dir: Path) -> list[VerdictRecord]:
    """Every verdict holds each member's own verdict and is their majority; calls went to every member."""
    verdicts = list(RunStore(run_dir).all(VerdictRecord).values())
    assert verdicts
    for verdict in verdicts:
        assert set(verdict.members) == set(NOISE)
        assert verdict.type == majority_type({n: m.type for n, m in verdict.members.items()})
    judge_calls = Counter(r.endpoint for r in outcomes(RunDir(run_dir).ledger_records()) if r.role == "judge")
    assert set(judge_calls) == set(NOISE) and len(set(judge_calls.values())) == 1, judge_calls
    return verdicts


async def test_panel_majority_members_and_agreement(small_corpus: Path, tmp_path: Path) -> None:
    request = ExamRequest([str(small_corpus)], judges=list(NOISE))
    info = await start_exam(panel_settings(), request, tmp_path, quiet=True, report=False)
    assert info.status == "completed"
    verdicts = check_panel_run(tmp_path)
    assert any(m.type != v.type for v in verdicts for m in v.members.values()), "noisy members disagree somewhere"

    build_report(tmp_path)
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    rows = {r["member"]: r for r in report["judge_panel"]["agreement"] if r["target"] == "all"}
    assert list(rows) == list(NOISE)
    for name, row in rows.items():
        both = [v for v in verdicts if v.type != "unscored" and v.members[name].type != "unscored"]
        agreed = sum(v.members[name].type == v.type for v in both)
        assert (row["agreed"], row["compared"]) == (agreed, len(both))
        assert row["agreement"] == pytest.approx(agreed / len(both))
    # The noise-free member agrees with the panel unless both noisy ones flip a unit the same way (about 3 %
    # of units at noise 0.15 and 0.4: on this small exam's ~30 verdicts a fixed share such as 0.95 depends
    # on the draw, so the rule itself is checked, unit by unit).
    for verdict in verdicts:
        votes = {name: member.type for name, member in verdict.members.items()}
        if verdict.type != "unscored" and votes["j0"] != verdict.type:
            assert votes["j1"] == votes["j2"] == verdict.type, votes
    assert rows["j0"]["agreement"] >= 0.9
    assert rows["j0"]["agreement"] > max(rows["j1"]["agreement"], rows["j2"]["agreement"])
    assert "## Judge panel" in (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "<h2>Judge panel</h2>" in (tmp_path / "report.html").read_text(encoding="utf-8")


async def test_panel_from_the_config_judge_list(small_corpus: Path, tmp_path: Path) -> None:
    """`roles: {judge: [A, B, C]}` in the YAML config names the panel."""
    config = tmp_path / "config.yaml"
    data = panel_settings().model_dump(mode="json")
    data["roles"]["judge"] = list(NOISE)
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    settings = load_settings(config)
    assert settings.judge_panel == list(NOISE) and settings.roles["judge"] == "j0"
    await start_exam(settings, ExamRequest([str(small_corpus)]), tmp_path / "run", quiet=True, report=False)
    check_panel_run(tmp_path / "run")


def test_cli_run_with_a_judge_panel(small_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from examiner.cli.main import main

    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(panel_settings().model_dump(mode="json")), encoding="utf-8")
    run_dir = tmp_path / "run"
    argv = ["run", str(small_corpus), "--config", str(config), "--out", str(run_dir), "--quiet", "--max-rounds", "1"]
    assert main(argv + [arg for name in NOISE for arg in ("--judge", name)]) == 0
    check_panel_run(run_dir)
    out = capsys.readouterr().out
    assert "judge panel" in out and all(name in out for name in NOISE)
    report = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    assert report["judge_panel"]["members"] == list(NOISE)


def test_an_unknown_panel_member_is_a_clear_error(small_corpus: Path, tmp_path: Path) -> None:
    from examiner.cli.main import main

    argv = ["run", str(small_corpus), "--simulate", "--judge", "simulated", "--judge", "nowhere", "--quiet",
            "--out", str(tmp_path / "run")]
    assert main(argv) == 2


def test_a_tied_or_unscored_verdict_leaves_the_unit_in_the_pool() -> None:
    now = TargetRound(pool=["u1", "u2"], covered={}, targeted={}, times={}, unanswered=[])
    tied = VerdictRecord(id="v1", answer_id="a", question_id="q", unit_id="u1", round=1, target="t",
                         type="unscored", reason="panel tied (correct / incorrect)")
    covered = tied.model_copy(update={"id": "v2", "unit_id": "u2", "type": "correct", "reason": "2 of 3"})
    apply_verdicts(now, [tied, covered], max_targeted=3)
    assert now.pool == ["u1"] and now.covered == {"u2": "v2"} and not now.targeted
