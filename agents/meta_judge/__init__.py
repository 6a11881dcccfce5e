"""Meta-judges: JDEval, JDEval-i and BSMEval (the debate's referee is agents/referee/)."""
