"""The names a user picks from: exam modes, exam judge methods and `examiner judge` methods, each declared
once as a Literal type, with the tuple of its values derived from it.

Why here, and this small: the command line builds its choices from these tuples without loading the exam
(building the parser must stay fast), the API and the records type their fields with the Literals, and the
registries that map a name to its implementation (examiner.exam.modes.MODES,
examiner.judging.exam_judges) are held to the same names by tests/core/test_names.py. Adding a mode or
method starts here; a registry that misses it fails that test.
"""

from __future__ import annotations

from typing import Literal, get_args

ExamModeName = Literal["refeval", "top", "noref"]
"""`--mode`: refeval (clustered questions), top (one unit at a time), noref (judged without references)."""
EXAM_MODES: tuple[ExamModeName, ...] = get_args(ExamModeName)

ExamJudgeMethod = Literal["refeval", "reviseval", "geval"]
"""`--judge-mode`: how an exam's answers are judged against references."""
EXAM_JUDGE_METHODS: tuple[ExamJudgeMethod, ...] = get_args(ExamJudgeMethod)

JudgeMethod = Literal["pairwise", "reviseval", "geval", "reference"]
"""`examiner judge --method`: how a dataset's responses are judged."""
JUDGE_METHODS: tuple[JudgeMethod, ...] = get_args(JudgeMethod)

__all__ = ["EXAM_JUDGE_METHODS", "EXAM_MODES", "JUDGE_METHODS", "ExamJudgeMethod", "ExamModeName", "JudgeMethod"]
