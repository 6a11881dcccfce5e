"""Judge agents: per-unit verdicts against references, pairwise JudgeLM judging and G-Eval scoring."""
