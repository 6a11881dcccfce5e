"""A pairwise judge panel through the judge contract: majority per ordering, ties unscored, each member's
verdict kept in the judgments, per-member agreement in the report; in Python and on the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

import examiner.simulator.judging_roles  # noqa: F401 - registers the simulated pairwise judge
from examiner.cli.main import main
from examiner.core.config import EndpointSpec, Settings
from examiner.core.labels import preference_from_text
from examiner.judging.dataset import Row
from examiner.judging.pairwise import PairwiseJudge, PairwiseOptions, run_pairwise
from examiner.judging.sections import pairwise_section
from examiner.llm.gateway import Gateway

# Without gold the simulated judge prefers the response of higher seeded "quality"; accuracy 1 follows
# it on every pair, accuracy 0 goes against it on every pair, so the members' votes are known.
MEMBERS = {"right": 1.0, "wrong": 0.0, "also_right": 1.0}
PAIRS = [{"id": f"q{i}", "question": f"Describe item {i}.", "a": f"Item {i} is a small thing.",
          "b": f"Item {i} is a large thing.", "gold": 1 + i % 2} for i in range(6)]


def _spec(accuracy: float) -> EndpointSpec:
    return EndpointSpec(provider="simulated", model=f"sim-{accuracy}", max_concurrency=8,
                        options={"pairwise_accuracy": accuracy})


def _rows() -> list[Row]:
    return [Row(line=i + 1, id=p["id"], instruction=p["question"], output_1=p["a"], output_2=p["b"],
                label=preference_from_text(p["gold"])) for i, p in enumerate(PAIRS)]


async def test_panel_majority_keeps_every_member_and_agreement() -> None:
    settings = Settings(endpoints={name: _spec(acc) for name, acc in MEMBERS.items()})
    async with Gateway(settings) as gw:
        records = await run_pairwise(gw, _rows(), PairwiseOptions(swap=True, grade_only=True),
                                     panel={name: name for name in MEMBERS})
        alone = await PairwiseJudge(gw, PairwiseOptions(swap=True, grade_only=True, endpoint="right")).mark(_rows()[0])
    assert len(records) == 12 and all(set(r["panel"]) == set(MEMBERS) for r in records)
    for r in records:
        votes = {name: own["verdict"] for name, own in r["panel"].items()}
        assert votes["right"] == votes["also_right"] == r["verdict"] != votes["wrong"]
        assert r["reason"] == "2 of 3 panel members"
    first = [r for r in records if r["id"] == "q0"]
    assert [preference_from_text(r["verdict"]) for r in first] == [alone["original"].label, alone["swapped"].label]
    agreement = {m["member"]: m for m in pairwise_section(records)["panel_agreement"]}
    assert agreement["right"]["rate"] == 1.0 and agreement["also_right"]["rate"] == 1.0
    assert agreement["wrong"]["rate"] == 0.0 and agreement["wrong"]["compared"] == 12


async def test_a_split_panel_leaves_the_pair_unscored_never_a_tie() -> None:
    settings = Settings(endpoints={name: _spec(MEMBERS[name]) for name in ("right", "wrong")})
    async with Gateway(settings) as gw:
        records = await run_pairwise(gw, _rows(), PairwiseOptions(), panel={"right": "right", "wrong": "wrong"})
    assert all(r["verdict"] is None and r["unscored"].startswith("panel tied") for r in records)
    section = pairwise_section(records)
    assert section["n_unparseable"] == 6 and section["agreement"]["n"] == 0
    assert all(m["compared"] == 0 and m["rate"] is None for m in section["panel_agreement"])


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "panel.yaml"
    path.write_text(yaml.safe_dump({"endpoints": {name: _spec(acc).model_dump() for name, acc in MEMBERS.items()}}))
    return path


def test_cli_judge_panel_end_to_end(tmp_path: Path) -> None:
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(p) + "\n" for p in PAIRS))
    out = tmp_path / "run"
    judges = [flag for name in MEMBERS for flag in ("--judge", name)]
    assert main(["judge", str(data), "--method", "pairwise", "--swap", *judges, "--config", str(_config(tmp_path)),
                 "--instruction-field", "question", "--output1-field", "a", "--output2-field", "b",
                 "--label-field", "gold", "--out", str(out)]) == 0
    records = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
    assert len(records) == 12 and all(set(r["panel"]) == set(MEMBERS) for r in records)
    report = json.loads((out / "report.json").read_text())
    assert report["judge"] == "panel of right, wrong, also_right"
    rates = {m["member"]: m["rate"] for m in report["pairwise"]["panel_agreement"]}
    assert rates == {"right": 1.0, "wrong": 0.0, "also_right": 1.0}
    assert report["pairwise"]["swap"]["n_pairs_both_orders"] == 6
    assert "| panel member | agrees with panel [95% CI] |" in (out / "report.md").read_text()
    # the judgments file alone is enough to recompute the panel's figures
    assert main(["judge-stats", str(out / "judgments.jsonl"), "--out", str(tmp_path / "stats")]) == 0
    again = json.loads((tmp_path / "stats" / "report.json").read_text())
    assert again["pairwise"]["panel_agreement"] == report["pairwise"]["panel_agreement"]


def test_cli_panel_needs_a_method_that_gives_a_preference(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"id": "s1", "instruction": "Summarise.", "output": "A summary."}) + "\n")
    code = main(["judge", str(data), "--method", "geval", "--judge", "right", "--judge", "wrong",
                 "--config", str(_config(tmp_path)), "--out", str(tmp_path / "o")])
    assert code == 2 and "works with --method pairwise" in capsys.readouterr().err


def test_cli_panel_from_the_config(tmp_path: Path) -> None:
    """`roles: {judge: [A, B, C]}` in the config gives the same panel as three --judge flags."""
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(p) + "\n" for p in PAIRS))
    config = tmp_path / "panel.yaml"
    config.write_text(yaml.safe_dump({
        "endpoints": {name: _spec(acc).model_dump(mode="json") for name, acc in MEMBERS.items()},
        "roles": {"judge": list(MEMBERS)},
    }))
    out = tmp_path / "run"
    assert main(["judge", str(data), "--method", "pairwise", "--config", str(config),
                 "--instruction-field", "question", "--output1-field", "a", "--output2-field", "b",
                 "--label-field", "gold", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["judge"] == "panel of right, wrong, also_right"
    rates = {m["member"]: m["rate"] for m in report["pairwise"]["panel_agreement"]}
    assert rates == {"right": 1.0, "wrong": 0.0, "also_right": 1.0}
