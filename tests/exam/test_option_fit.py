"""Every exam option is honoured or refused by every way of sitting an exam, never ignored: a paper sitting
(`--paper`) and each exam mode (`--mode`). The table is checked against the options the API takes, so a
new option cannot slip in unclassified; a paper sitting with a judge cascade runs the cascade."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from examiner.api.exam import ExamOptions
from examiner.cli.main import main
from examiner.core.errors import UserError
from examiner.exam.modes import MODES
from examiner.exam.option_fit import HONOURED_BY_PAPER, UNHONOURED_BY_MODE, UNHONOURED_BY_PAPER, check_options_fit
from tests.helpers.sample_run import write_sample_run

GIVEN = {str: "x", int: 3, float: 1.5, bool: True}
"""A value that counts as given for an option of each type."""


def test_every_option_is_classified_for_a_paper_sitting() -> None:
    refused = {rule.field for rule in UNHONOURED_BY_PAPER}
    assert not refused & HONOURED_BY_PAPER
    assert set(ExamOptions.model_fields) == refused | HONOURED_BY_PAPER


def test_the_mode_rules_name_real_modes_and_options() -> None:
    assert set(UNHONOURED_BY_MODE) <= set(MODES)
    for rules in UNHONOURED_BY_MODE.values():
        assert {rule.field for rule in rules} <= set(ExamOptions.model_fields)


def _given(field: str) -> object:
    """A valid value, other than the unset one, for an option (by its annotation)."""
    special = {"mode": "top", "units": "llm", "prepare_engine": "ray", "jsonl_field": "body"}
    if field in special:
        return special[field]
    annotation = str(ExamOptions.model_fields[field].annotation)
    return next(value for kind, value in GIVEN.items() if kind.__name__ in annotation)


@pytest.mark.parametrize("rule", UNHONOURED_BY_PAPER, ids=lambda rule: rule.flag)
def test_each_option_a_paper_cannot_honour_is_refused_by_its_flag(rule) -> None:  # type: ignore[no-untyped-def]
    options = ExamOptions(corpus=("c",), paper="earlier", **{rule.field: _given(rule.field)})
    with pytest.raises(UserError) as refused:
        check_options_fit(options)
    line = str(refused.value)
    assert "\n" not in line and rule.flag in line and "--paper" in line


@pytest.mark.parametrize(("mode", "rule"), [(mode, rule) for mode, rules in UNHONOURED_BY_MODE.items() for rule in rules],
                         ids=lambda item: getattr(item, "flag", item))
def test_each_option_a_mode_cannot_honour_is_refused(mode: str, rule) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UserError, match=rule.flag):
        check_options_fit(ExamOptions(corpus=("c",), mode=mode, **{rule.field: _given(rule.field)}))  # type: ignore[arg-type]
    check_options_fit(ExamOptions(corpus=("c",), mode="refeval", **{rule.field: _given(rule.field)}))  # honoured there


def test_honoured_options_pass(tmp_path: Path) -> None:
    check_options_fit(ExamOptions(corpus=("c",), paper="earlier", seed=7, language="de", judges=("a", "b"),
                                  judge_mode="reviseval", budget_usd=1.0))


def test_the_command_line_refuses_in_one_line_before_creating_anything(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    earlier = write_sample_run(tmp_path / "earlier")
    corpus = json.loads((earlier / "run.json").read_text())["corpus_paths"][0]
    out = tmp_path / "sitting"
    assert main(["run", corpus, "--simulate", "--paper", str(earlier), "--paper-target", "alpha",
                 "--max-rounds", "2", "--cluster-size", "4", "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--max-rounds 2" in err[0] and "--cluster-size 4" in err[0]
    assert not out.exists()
    assert main(["run", corpus, "--simulate", "--mode", "top", "--max-probes", "1", "--out", str(out), "--quiet"]) == 2
    assert "--max-probes 1" in capsys.readouterr().err and not out.exists()


CHEAP = {"provider": "simulated", "model": "sim-cheap", "price_input_per_1m": 0.1, "price_output_per_1m": 0.4,
         "options": {"judge_noise": 0.15, "judge_difficulty": 3}}
STRONG = {"provider": "simulated", "model": "sim-strong", "price_input_per_1m": 2.5, "price_output_per_1m": 10.0}


def test_a_paper_sitting_runs_its_judge_cascade(tmp_path: Path) -> None:
    """`--paper A --judge-cascade CHEAP,STRONG`: cheap-judge calls, cascade records and the report's section."""
    earlier = write_sample_run(tmp_path / "earlier")
    corpus = json.loads((earlier / "run.json").read_text())["corpus_paths"][0]
    config = tmp_path / "cascade.yaml"
    config.write_text(yaml.safe_dump({"endpoints": {"cheap": CHEAP, "strong": STRONG},
                                      "roles": {"examiner": "simulated", "candidate": "simulated"}}))
    out = tmp_path / "sitting"
    assert main(["run", corpus, "--config", str(config), "--paper", str(earlier), "--paper-target", "alpha",
                 "--judge-cascade", "cheap,strong", "--target-agreement", "0.8", "--out", str(out), "--quiet"]) == 0
    ledger = [json.loads(line) for line in (out / "ledger.jsonl").read_text().splitlines() if line.strip()]
    assert any(r.get("endpoint") == "cheap" and r.get("outcome") == "ok" for r in ledger)
    cascade = [json.loads(line) for line in (out / "cascade.jsonl").read_text().splitlines() if line.strip()]
    verdicts = [json.loads(line) for line in (out / "verdicts.jsonl").read_text().splitlines() if line.strip()]
    assert cascade and {c["id"] for c in cascade} == {v["id"] for v in verdicts}
    section = json.loads((out / "report.json").read_text())["cascade"]
    assert section is not None and section["units"] == len(cascade) and section["cheap"] == "cheap"


def test_a_paper_sitting_keeps_the_papers_language_unless_asked_for_another(tmp_path: Path) -> None:
    earlier = write_sample_run(tmp_path / "earlier")
    info = json.loads((earlier / "run.json").read_text())
    info["language"] = "de"
    (earlier / "run.json").write_text(json.dumps(info))
    for extra, expected in (([], "de"), (["--language", "fr"], "fr")):
        out = tmp_path / f"sitting-{expected}"
        assert main(["run", info["corpus_paths"][0], "--simulate", "--paper", str(earlier), "--paper-target", "alpha",
                     *extra, "--out", str(out), "--quiet"]) == 0
        assert json.loads((out / "run.json").read_text())["language"] == expected
