"""The task and criterion of G-Eval as an exam judge (prompt fragments of prompts/geval_unit.md).

The criterion is a bipolar 1-5 "agreement" scale: 1 = the answer contradicts the unit, 3 = the answer
does not address it, 5 = it states it correctly. Putting "not addressed" at the middle makes an unsure
judge (mass on both 1 and 5) land on `unrelated`, which an exam counts as "no evidence either way"
instead of a wrong credit. 0 is not on the scale but a category beside it: the answer declines, hedges
without a claim about the fact, or asks for more context (the exam's `abstained`); the judge reads it from
the probability on 0, never averaged with the scale (examiner/judging/exam_judges.py).
"""

from __future__ import annotations

GEVAL_TASK = ("You will be given a question, a reference fact about its subject, and a response written by "
              "a candidate. Your task is to rate how the response relates to the reference fact.")
GEVAL_CRITERION = ("Agreement (1-5): whether the response states the reference fact correctly. "
                   "1 = the response contradicts the fact; 2 = it partly contradicts it; 3 = the response "
                   "does not address the fact at all; 4 = it states the fact with minor inaccuracy or "
                   "vagueness; 5 = it states the fact correctly. "
                   "0 = the response declines to answer, hedges without making any claim about the fact, or asks "
                   "for more context (not a point of the scale: a refusal to answer, not a wrong answer).")
AGREEMENT_SCALE = 5
"""The top of the criterion's scale."""
DECLINED = 0
"""The form's score for an answer that declines (abstained): a category beside the 1-5 scale."""

__all__ = ["AGREEMENT_SCALE", "DECLINED", "GEVAL_CRITERION", "GEVAL_TASK"]
