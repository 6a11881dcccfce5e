"""Judging toolkit: RevisEval (response-adapted references), G-Eval (probability-weighted form filling),
JudgeLM-style pairwise judging with swap-bias metrics, judge panels, and the reports of `examiner judge`.

Roles (one prompt + one gateway call each) live in `examiner.agents`; this package holds the judges
behind the judge contract (examiner.core.contract), the orchestration over datasets, metrics and reports.
"""
