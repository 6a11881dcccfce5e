"""The referee of a debate (MDEval): reads two evaluators' judgments and their debate, and either asks
both one question or gives the verdict."""
