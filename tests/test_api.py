"""The Python API: README's example runs as written (simulated backend), and the results are typed."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

import examiner

ROOT = Path(__file__).resolve().parents[1]


def readme_python() -> str:
    """The python code block of README's "Python API" section."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Python API", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "README's Python API section should hold one python example"
    return blocks[0]


def test_readme_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "corpora").symlink_to(ROOT / "corpora")
    monkeypatch.chdir(tmp_path)
    scope: dict[str, object] = {}
    exec(compile(readme_python(), "README.md", "exec"), scope)  # noqa: S102 - the documented example itself
    out = capsys.readouterr().out
    exam, judged, ranked = scope["exam"], scope["judged"], scope["ranked"]
    assert isinstance(exam, examiner.ExamResult) and exam.status == "completed" and exam.judge_mode == "refeval"
    assert (tmp_path / exam.run_dir / "report.json").is_file()
    scores = exam.targets[exam.target]
    assert 0 <= scores.accuracy.low <= scores.accuracy.value <= scores.accuracy.high <= 1
    assert scores.correct + scores.incorrect + scores.unanswered + scores.uncovered > 0
    assert isinstance(judged, examiner.JudgeResult) and judged.rows == 10 and judged.judged == 20
    assert isinstance(ranked, examiner.MetaResult) and {e.evaluator for e in ranked.ranking} == {"local", "simulated"}
    assert "accuracy" in out and "agreement with gold" in out
    with pytest.raises(dataclasses.FrozenInstanceError):
        exam.status = "changed"  # type: ignore[misc]


def test_an_unknown_option_is_a_type_error(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="no option 'max_round'"):
        examiner.run_exam(ROOT / "corpora" / "examiner-handbook", out=tmp_path / "x", simulate=True, max_round=1)
    assert not (tmp_path / "x").exists()


def test_bad_input_raises_user_error_before_creating_anything(tmp_path: Path) -> None:
    from examiner.core.errors import UserError

    with pytest.raises(UserError, match="corpus path does not exist"):
        examiner.run_exam(tmp_path / "no-such-corpus", out=tmp_path / "run", simulate=True)
    assert not (tmp_path / "run").exists()
