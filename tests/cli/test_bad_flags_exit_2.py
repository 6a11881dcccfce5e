"""Flags of `review`, `finetune` and `serve-local` with values the command cannot use are the user's error:
one line naming the flag, exit 2, nothing started. They used to reach the last-resort handler as a
ValidationError, ValueError or InvalidURL (exit 70, "internal error"), or start a server that then died
with its log's traceback in the error line."""

from __future__ import annotations

from pathlib import Path

import pytest

from examiner.cli.flag_errors import options_from_flags
from examiner.core.errors import UserError
from tests.helpers.cli_runs import assert_one_error, run_cli

FINETUNE_FLAGS = [("--max-steps", "0"), ("--max-minutes", "-1"), ("--max-minutes", "nan"), ("--grad-accum", "0"),
                  ("--learning-rate", "-1"), ("--lora-r", "0"), ("--max-length", "0"), ("--save-every", "0"),
                  ("--threads", "0")]


@pytest.mark.parametrize(("flag", "value"), FINETUNE_FLAGS)
def test_finetune_refuses_a_bad_flag_in_one_line(flag: str, value: str, tmp_path: Path, capsys, caplog) -> None:
    out = tmp_path / "judge"
    code, lines, _ = run_cli(["finetune", "--data", str(tmp_path / "data"), "--out", str(out), flag, value],
                             capsys, caplog)
    assert_one_error(code, lines, flag)
    assert not out.exists()


def test_review_refuses_a_negative_seed(finished_run: Path, capsys, caplog) -> None:
    code, lines, _ = run_cli(["review", str(finished_run), "--sample", "3", "--seed", "-1"], capsys, caplog)
    assert_one_error(code, lines, "--seed", "-1")
    assert not (finished_run / "human_sample.jsonl").exists()


@pytest.mark.parametrize(("flag", "value"), [("--port", "-1"), ("--port", "70000"), ("--host", "256.1.1.1")])
def test_serve_local_refuses_a_bad_address_before_starting(flag: str, value: str, capsys, caplog) -> None:
    code, lines, _ = run_cli(["serve-local", flag, value], capsys, caplog)
    assert_one_error(code, lines, flag, value)


def test_options_from_flags_names_the_flag_the_option_came_from() -> None:
    from examiner.api.finetune import FinetuneOptions

    with pytest.raises(UserError, match=r"^--steps 0: input should be greater than or equal to 1$"):
        options_from_flags(FinetuneOptions, {"max_steps": "--steps"}, data="d", out="o", max_steps=0)
    assert options_from_flags(FinetuneOptions, data="d", out="o", max_steps=3).max_steps == 3
