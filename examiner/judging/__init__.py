"""Judging toolkit: RevisEval (response-adapted references), G-Eval (probability-weighted form filling),
JudgeLM-style pairwise judging with swap-bias metrics, and the reports of `examiner judge`.

Agents (one prompt + one gateway call each) live in the top-level `agents` package; this package holds
the parsing, scoring arithmetic, orchestration over datasets, metrics and reports.
"""
