"""A meta-evaluation ranks evaluators against gold only on enough gold items (examiner.meta.gold: fewer
than 10 stop the run with one line, `--min-gold` lowers the floor), and its reports name the meta-judge's
endpoint and model, also when the meta_judge role chose it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from examiner.cli.main import main
from examiner.core.assessments import MetaItem
from examiner.core.errors import UserError
from examiner.core.overrides import OverrideRecord, utc_now
from examiner.core.rundir import RunDir
from examiner.meta.gold import MIN_GOLD, check_gold
from examiner.reporting import load_run
from tests.helpers.cli_runs import assert_one_error, run_cli
from tests.helpers.sample_run import write_sample_run


def _items(n: int, gold: int) -> list[MetaItem]:
    return [MetaItem(id=f"i{k}", kind="verdict", instruction="q", text="a", reference="r",
                     gold_label="correct" if k < gold else None) for k in range(n)]


def test_the_floor_counts_gold_items_only() -> None:
    assert MIN_GOLD == 10
    assert check_gold(_items(12, 0)) is None  # no gold: nothing is ranked against gold
    assert check_gold(_items(12, 10)) is None and check_gold(_items(12, 10), human_labels=True) is None
    line = check_gold(_items(12, 1))  # a dataset: the report's first problem
    assert line is not None and line.startswith("too few gold items to rank evaluators (n=1 < 10)")
    assert "--min-gold 1" in line and "not to be used" in line
    assert check_gold(_items(12, 1), minimum=1) is None
    with pytest.raises(UserError, match=r"^too few gold items to rank evaluators \(n=9 < 10\).*examiner view"):
        check_gold(_items(9, 9), human_labels=True)
    with pytest.raises(UserError, match=r"n=0 < 10"):
        check_gold(_items(3, 0), human_labels=True)


@pytest.fixture()
def one_override(tmp_path: Path) -> Path:
    """The sample run with one verdict overridden by a person: one gold item."""
    run_dir = write_sample_run(tmp_path / "run", tmp_path / "corpus")
    verdict = sorted(load_run(run_dir).verdicts.values(), key=lambda v: v.id)[0]
    RunDir(run_dir).append_override(OverrideRecord(question_id=verdict.question_id, unit_id=verdict.unit_id,
                                                   verdict_before=verdict.verdict, verdict="incorrect",
                                                   reason="checked", who="ana", at=utc_now()))
    return run_dir


def _config(folder: Path) -> Path:
    path = folder / "cfg.yaml"
    path.write_text(yaml.safe_dump({"endpoints": {
        "e80": {"provider": "simulated", "model": "sim-acc0.8", "max_concurrency": 8},
        "e50": {"provider": "simulated", "model": "sim-acc0.5", "max_concurrency": 8},
        "referee": {"provider": "simulated", "model": "sim-rel0.9", "max_concurrency": 8}},
        "roles": {"meta_judge": "referee"}}))
    return path


def test_human_labels_on_one_item_stop_with_one_line(one_override: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str],
                                                     caplog: pytest.LogCaptureFixture) -> None:
    out = tmp_path / "meta"
    code, lines, _ = run_cli(["meta", "--exam", str(one_override), "--human-labels", "--config",
                              str(_config(tmp_path)), "--evaluators", "e80,e50", "--out", str(out)], capsys, caplog)
    assert_one_error(code, lines, "too few gold items", "n=1 < 10", "--min-gold 1")
    assert not (out / "report.json").exists()


def test_min_gold_ranks_anyway_and_the_reports_name_the_role_s_endpoint(one_override: Path, tmp_path: Path) -> None:
    out = tmp_path / "meta"
    assert main(["meta", "--exam", str(one_override), "--human-labels", "--min-gold", "1", "--config",
                 str(_config(tmp_path)), "--evaluators", "e80,e50", "--out", str(out), "--bootstrap", "20",
                 "--shuffles", "10", "--quiet"]) == 0
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["items"] == 1
    assert (report["config"]["meta_judge"], report["config"]["meta_judge_endpoint"],
            report["config"]["meta_judge_model"]) == (None, "referee", "sim-rel0.9")
    for name in ("report.md", "report.html"):
        text = (out / name).read_text(encoding="utf-8")
        assert "referee (model sim-rel0.9)" in text and "role default" not in text


def test_an_older_report_without_the_endpoint_still_renders() -> None:
    from examiner.meta.sections import meta_judge_name
    from examiner.reporting.model.meta import MetaConfigSection

    fields = dict(evaluators=["a", "b"], method="jdeval", seed=0, draws=3, both_orders=False, rules="enforce",
                  max_rounds=5, statement_words=200, reasoning_words=100, shuffles=200, bootstrap=1000,
                  concurrency=64, debater=None)
    assert meta_judge_name(MetaConfigSection(meta_judge="ref", **fields)) == "ref"
    assert "not recorded" in meta_judge_name(MetaConfigSection(meta_judge=None, **fields))


def test_a_dataset_with_few_gold_labels_says_so_first_among_its_problems(tmp_path: Path) -> None:
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps({"id": f"p{k}", "input": f"Name river {k}.", "output_1": f"River {k}.",
                                        "output_2": "No idea.", "label": 1}) + "\n" for k in range(4)))
    out = tmp_path / "meta"
    assert main(["meta", str(data), "--config", str(_config(tmp_path)), "--evaluators", "e80,e50", "--out", str(out),
                 "--bootstrap", "20", "--shuffles", "10", "--quiet"]) == 0
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert any(p.startswith("too few gold items to rank evaluators (n=4 < 10)") for p in report["problems"])
    assert "too few gold items" in (out / "report.md").read_text(encoding="utf-8")
