"""The wording check (`--paraphrases K`): a seeded share of round 1's questions re-asked in K wordings,
answered by every target and judged, beside the exam. It must leave the exam's verdicts and calls alone,
keep its calls under the ledger stage `rewording`, write one record per (question, target, wording) and
recover a wording effect the simulated target was given (option `wording_sd`)."""

from __future__ import annotations

import json
from collections import defaultdict
from html import escape
from pathlib import Path

import numpy as np

from examiner.api.compare import CompareOptions, compare_runs
from examiner.api.gating import GateOptions, gate
from examiner.core.records import VerdictRecord, WordingRecord
from examiner.core.rundir import RunDir
from examiner.exam.nodes.rewording import choose_clusters
from examiner.exam.runner import ExamRequest, start_exam
from examiner.llm.ledger import aggregate, answered
from examiner.reporting.wording import wording_line, wording_section
from examiner.stats.paired import BLIND
from examiner.stats.wording import crossed_parts
from tests.helpers.wording_exam import TARGETS, settings


def tables(records: dict[str, WordingRecord]) -> list[np.ndarray]:
    """Per (question, target): wordings x units, 1 where the unit was answered right."""
    rows: dict[str, dict[int, dict[str, str]]] = defaultdict(dict)
    for r in records.values():
        rows[r.question_id][r.wording] = r.labels
    found = []
    for by_wording in rows.values():
        units = sorted(by_wording[0])
        found.append(np.array([[by_wording[w][u] == "correct" for u in units] for w in sorted(by_wording)], float))
    return found


async def test_rewording_stays_beside_the_exam(small_corpus: Path, tmp_path: Path) -> None:
    with_check, without = tmp_path / "with", tmp_path / "without"
    for folder, k in ((with_check, 2), (without, 0)):
        await start_exam(settings(k), ExamRequest([str(small_corpus)], targets=TARGETS), folder, quiet=True,
                         report=False)
    verdicts = [{k: v.model_dump() for k, v in RunDir(d).records(VerdictRecord).items()} for d in (with_check, without)]
    assert verdicts[0] == verdicts[1]
    stages = [{r["stage"]: r["calls"] for r in aggregate(answered(RunDir(d).ledger_records()), by=("stage",))}
              for d in (with_check, without)]
    records = RunDir(with_check).records(WordingRecord)
    reworded = {r.cluster_id for r in records.values()}
    # one examiner call per question, then an answer and a judgment per target and new wording
    assert stages[0].pop("rewording") == len(reworded) * (1 + 2 * 2 * len(TARGETS)) > 0
    assert stages[0] == stages[1]
    assert len(records) == len(reworded) * len(TARGETS) * 3
    assert {r.wording for r in records.values()} == {0, 1, 2}
    assert len({r.text for r in records.values() if r.target == "a"}) == 3 * len(reworded)
    assert not RunDir(without).records(WordingRecord)
    section = wording_section(with_check)
    assert section is not None and wording_section(without) is None
    assert (section.paraphrases, section.questions, sorted(section.targets)) == (2, len(reworded), TARGETS)
    assert [(p.a, p.b) for p in section.pairs] == [("a", "b")]
    assert 0 <= section.pairs[0].rank_flip <= 1
    assert wording_line(section).startswith(f"wording: {len(reworded)} questions re-asked in 2 other wordings")
    gated = gate(GateOptions(base=str(with_check), new=str(with_check), base_target="a", new_target="b", margin=0.1))
    blind = gate(GateOptions(base=str(without), new=str(without), base_target="a", new_target="b", margin=0.1))
    assert blind.decision.wording_variance == 0 and "wording-aware" not in blind.line()
    assert blind.line().endswith("; variance: document-clustered, blind to wording (no --paraphrases in the runs)")
    assert (gated.as_dict()["variance"], blind.as_dict()["variance"]) == ("wording-aware", BLIND)
    assert "; variance: wording-aware (+" in gated.line()
    assert gated.decision.difference == blind.decision.difference
    assert gated.decision.lower_bound <= blind.decision.lower_bound
    aware = compare_runs(CompareOptions(run_dirs=(str(with_check),), out=str(tmp_path / "aware.md")))
    lines = aware.wording_lines()
    assert len(lines) == 1 and "b - a: " in lines[0] and "wording-aware 95% interval" in lines[0]
    assert f"- {lines[0]}" in (tmp_path / "aware.md").read_text(encoding="utf-8")
    assert escape(lines[0]) in (tmp_path / "aware.html").read_text(encoding="utf-8")
    written = json.loads((tmp_path / "aware.json").read_text(encoding="utf-8"))["paired"][0]["wording"]
    assert written["variance"] == "wording-aware" and written["low"] <= written["high"]
    assert written["low"] <= aware.paired[0].accuracy_difference.low
    blind_compare = compare_runs(CompareOptions(run_dirs=(str(without),), out=str(tmp_path / "blind.md")))
    assert blind_compare.wording_lines() == []
    assert f"b - a: variance {BLIND} (no --paraphrases in the runs)" in (tmp_path / "blind.md").read_text()
    assert json.loads((tmp_path / "blind.json").read_text())["paired"][0]["wording"] == {"variance": BLIND}


def test_the_same_clusters_are_chosen_whatever_the_order() -> None:
    ids = [f"c{i}" for i in range(40)]
    assert choose_clusters(ids, 0.25, 7) == choose_clusters(list(reversed(ids)), 0.25, 7)
    assert len(choose_clusters(ids, 0.25, 7)) == 10 and len(choose_clusters(ids[:3], 0.1, 7)) == 2
    assert choose_clusters(ids, 0.25, 7) != choose_clusters(ids, 0.25, 8)


async def test_an_injected_wording_effect_shows_and_none_shows_without(tmp_path: Path) -> None:
    found = {}
    for sd in (0.0, 0.2):
        folder = tmp_path / str(sd)
        await start_exam(settings(2, share=1.0, wording_sd=sd), ExamRequest(["corpora/harbor-water"], targets=TARGETS),
                         folder, quiet=True, report=False)
        found[sd] = crossed_parts(tables(RunDir(folder).records(WordingRecord)))
    assert found[0.0].tables >= 20
    assert found[0.0].wording < 0.005
    assert found[0.2].wording > 0.01


def test_the_estimate_pilot_leaves_the_wording_check_to_a_note() -> None:
    from examiner.exam.estimate import pilot_settings

    assert pilot_settings(settings(2), 1).exam.paraphrases == 0
    assert pilot_settings(settings(2), 1).exam.paraphrase_share == 0.5
