"""The question gate: every question is checked before any target is asked it (issue 43, item 1).

- checks.py: the checks that need no model (language, unit labels, citation match, near-duplicates);
- gate.py: one question through every check, the guesser's and the checker's calls included;
- gating.py: a question rewritten once when the gate rejects it (the exam's question node calls it).
"""
