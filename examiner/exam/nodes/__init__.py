"""The exam graph's nodes, one module per step: each node is a short async function over ExamState
that takes the run's ExamContext, calls roles (or the run's judge) and writes records.

Work inside a node fans out through examiner.llm.fanout.run_bounded; a budget stop keeps every record
already written and routes the graph to `finish` with status `budget_exhausted` (see nodes/context.py).
"""
