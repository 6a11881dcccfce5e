"""Options and settings: options are frozen and refuse unknown names; settings come from a Settings object,
a mapping or a YAML file with the job's options on top; input the tool cannot use is a UserError raised
before anything is created, in the command's own words."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from examiner.api import (ExamOptions, JobOptions, JudgeOptions, ResumeOptions, resolve_settings, resume_exam,
                          run_exam)
from examiner.api import judge as judge_dataset
from examiner.core.config import Settings, load_settings
from examiner.core.errors import ConfigError, UserError

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpora" / "examiner-handbook"


def test_an_unknown_option_is_refused_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="max_round"):
        ExamOptions(corpus=CORPUS, out=tmp_path / "x", simulate=True, max_round=1)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="method"):
        JudgeOptions(data="x.jsonl", method="pairwize", out=tmp_path / "j")  # type: ignore[arg-type]
    assert not (tmp_path / "x").exists()


def test_options_are_frozen_and_keep_paths_as_text(tmp_path: Path) -> None:
    options = ExamOptions(corpus=CORPUS, out=tmp_path / "run")
    assert options.corpus == (str(CORPUS),) and options.out == str(tmp_path / "run")
    assert ExamOptions(corpus=[CORPUS, "b.md"]).corpus == (str(CORPUS), "b.md")
    with pytest.raises(ValidationError, match="frozen"):
        options.max_rounds = 3  # type: ignore[misc]


def test_bad_input_raises_user_error_before_creating_anything(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="corpus path does not exist"):
        run_exam(ExamOptions(corpus=tmp_path / "no-such-corpus", out=tmp_path / "run", simulate=True))
    with pytest.raises(ConfigError, match=r"--max-rounds 0: "):
        run_exam(ExamOptions(corpus=CORPUS, out=tmp_path / "run", simulate=True, max_rounds=0))
    with pytest.raises(ConfigError, match="--budget-usd must be a finite number"):
        run_exam(ExamOptions(corpus=CORPUS, out=tmp_path / "run", budget_usd=-1))
    with pytest.raises(UserError, match="no run directory"):
        resume_exam(ResumeOptions(run_dir=tmp_path / "never-ran"))
    with pytest.raises(UserError, match="--limit must be 1 or more"):
        judge_dataset(JudgeOptions(data="llmbar:Natural", method="pairwise", out=tmp_path / "j", limit=0,
                                   simulate=True))
    assert not (tmp_path / "run").exists() and not (tmp_path / "j").exists()


def test_settings_from_an_object_a_mapping_or_a_file_agree(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("exam:\n  max_rounds: 3\nroles:\n  judge: simulated\n", encoding="utf-8")
    plain = JobOptions()
    from_file = resolve_settings(config, plain)
    from_mapping = resolve_settings({"exam": {"max_rounds": 3}, "roles": {"judge": "simulated"}}, plain)
    from_object = resolve_settings(load_settings(config), plain)
    assert from_file == from_mapping == from_object
    assert from_file.exam.max_rounds == 3 and from_file.roles["judge"] == "simulated"


def test_the_jobs_options_go_on_top_of_the_settings(tmp_path: Path) -> None:
    base = Settings()
    options = JobOptions(roles={"judge": "local"}, budget_usd=1.5, cache_dir=str(tmp_path / "cache"), simulate=True)
    settings = resolve_settings(base, options)
    assert settings.budget_usd == 1.5 and settings.cache_dir == str((tmp_path / "cache").resolve())
    assert settings.roles["judge"] == "sim-local"  # the judge's endpoint, then its simulated twin
    with pytest.raises(ConfigError, match="--budget-usd must be a finite number"):
        resolve_settings(base, JobOptions(budget_usd=float("nan")))
    with pytest.raises(ConfigError):
        resolve_settings({"no_such_setting": 1}, JobOptions())


def test_judge_stats_options_default_to_the_judgment_fields_the_library_reads() -> None:
    """JudgeStatsOptions repeats JudgmentFields' keys with their documentation (the API module stays light,
    so it does not import the judging package at load); the two lists of names and defaults must agree,
    or the API and the library would read a judgments file differently."""
    import dataclasses

    from examiner.api.judging import JudgeStatsOptions
    from examiner.judging.judgment_files import JudgmentFields

    library = {f.name: f.default for f in dataclasses.fields(JudgmentFields)}
    options = JudgeStatsOptions(judgments="j.jsonl")
    assert {name: getattr(options, name) for name in library} == library
