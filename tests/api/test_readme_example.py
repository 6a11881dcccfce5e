"""The Python API as README shows it: its example runs as written (simulated backend), and the results
are typed and frozen."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from examiner.api import ExamResult, JudgeResult, MetaResult, VerdictRow
from examiner.reporting.model import MetaReport

ROOT = Path(__file__).resolve().parents[2]


def readme_python() -> str:
    """The python code block of README's "Python API" section."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Python API", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "README's Python API section should hold one python example"
    assert "docs/API.md" in section, "README's Python API section should link docs/API.md"
    return blocks[0]


def test_readme_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                              fixture_data: Path) -> None:
    """`llmbar:Natural` reads the invented stand-in (a user pulls the real set first, as README says)."""
    (tmp_path / "corpora").symlink_to(ROOT / "corpora")
    monkeypatch.chdir(tmp_path)
    scope: dict[str, object] = {}
    exec(compile(readme_python(), "README.md", "exec"), scope)  # noqa: S102 - the documented example itself
    out = capsys.readouterr().out
    exam, judged, ranked, verdicts = scope["exam"], scope["judged"], scope["ranked"], scope["verdicts"]
    assert isinstance(exam, ExamResult) and exam.status == "completed" and exam.judge_mode == "refeval"
    assert (tmp_path / exam.run_dir / "report.json").is_file()
    scores = exam.targets[exam.target]
    assert 0 <= scores.accuracy.low <= scores.accuracy.value <= scores.accuracy.high <= 1
    assert scores.correct + scores.incorrect + scores.unanswered + scores.uncovered > 0
    assert verdicts and all(isinstance(v, VerdictRow) for v in verdicts)
    correct = sum(1 for o in exam.outcomes() if o.status == "correct")
    assert correct == scores.correct, "the outcome rows and the report's counts disagree"
    assert isinstance(judged, JudgeResult) and judged.rows == 10 and judged.judged == 20
    assert len(judged.judgments) == 20 and {j.order for j in judged.judgments} == {"original", "swapped"}
    assert isinstance(ranked, MetaResult) and {e.evaluator for e in ranked.ranking} == {"local", "simulated"}
    assert isinstance(ranked.report, MetaReport) and ranked.report.config.method == ranked.method
    assert "accuracy" in out and "agreement with gold" in out and "verdicts" in out
    with pytest.raises(dataclasses.FrozenInstanceError):
        exam.status = "changed"  # type: ignore[misc]


def test_the_package_face_gives_the_api() -> None:
    """`examiner.run_exam` is `examiner.api.run_exam`: the face forwards every public name, loaded on use."""
    import examiner.api

    assert examiner.run_exam is examiner.api.run_exam and examiner.ExamOptions is examiner.api.ExamOptions
    assert set(examiner.api.__all__) <= set(dir(examiner))
    with pytest.raises(AttributeError):
        examiner.no_such_name  # noqa: B018 - the attribute lookup is the test
