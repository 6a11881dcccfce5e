"""A target that writes a 400,000-character answer does not decide the judge's prompt: the judge reads
the answer cut to `max_passed_chars` with the marker, answers.jsonl keeps it whole, and the report
counts the cut (issue 37, item 6)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from examiner.cli.main import main
from examiner.core.records import AnswerRecord
from examiner.core.rundir import RunDir
from examiner.exam.runner import ExamRequest, start_exam
from examiner.simulator import behaviours, server
from examiner.simulator.behaviours import content_text
from tests.helpers.simulated_exam import sim_settings

RUNAWAY = 400_000
CAP = 10_000
OWN_SIZE = 6_000
"""More than the judge prompt's own characters (template, question, three reference units)."""


@pytest.fixture
def judge_prompts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The user messages of every judge request the simulated server answers."""
    seen: list[str] = []

    def spying(role: str, stage: str) -> Any:
        found = behaviours.find_behaviour(role, stage)
        if role != "judge":
            return found

        def judge(req: behaviours.SimRequest) -> Any:
            seen.append("\n".join(content_text(m.get("content")) for m in req.body["messages"]))
            return found(req)
        return judge

    monkeypatch.setattr(server, "find_behaviour", spying)
    return seen


async def test_a_runaway_answer_reaches_the_judge_cut_and_is_counted(tmp_path: Path,
                                                                     judge_prompts: list[str]) -> None:
    corpus = tmp_path / "corpus.md"
    corpus.write_text("Zebrafish live in fresh water streams of South Asia. Their embryos are transparent "
                      "for the first days. Adults grow to about four centimetres long.\n", encoding="utf-8")
    settings = sim_settings(max_rounds=1, max_probes=0).merged(
        {"max_passed_chars": CAP, "endpoints": {"sim": {"options": {"answer_chars": RUNAWAY, "ignores_max_tokens": True}}}})
    run_dir = tmp_path / "run"
    info = await start_exam(settings, ExamRequest([str(corpus)], targets=["sim"]), run_dir, quiet=True)
    assert info.status == "completed"

    answers = list(RunDir(run_dir).records(AnswerRecord).values())
    assert len(answers) == 1 and len(answers[0].text) == RUNAWAY, "answers.jsonl keeps the answer whole"
    assert judge_prompts, "the judge was asked"
    for prompt in judge_prompts:
        assert len(prompt) <= CAP + OWN_SIZE, len(prompt)
        assert f"of {RUNAWAY:,} characters shown]" in prompt

    report = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    assert report["passed_text"] == {"limit": CAP, "answers": 1, "answers_cut": 1, "longest_answer": RUNAWAY}
    markdown = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "1 of 1 answers were longer than `max_passed_chars`" in markdown
    assert f"1 of 1 answers reached the judge cut to max_passed_chars ({CAP:,} characters)." in markdown

    # Distillation data shows the student the answer as the teacher read it.
    distilled = tmp_path / "distil"
    assert main(["distil", "--exam", str(run_dir), "--out", str(distilled), "--validation-share", "0.5"]) == 0
    examples = [json.loads(line) for name in ("train.jsonl", "validation.jsonl")
                for line in (distilled / name).read_text(encoding="utf-8").splitlines()]
    assert examples
    for example in examples:
        user = next(m["content"] for m in example["messages"] if m["role"] == "user")
        assert len(user) <= CAP + OWN_SIZE and f"of {RUNAWAY:,} characters shown]" in user
