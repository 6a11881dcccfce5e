"""Meta-judges: JDEval, JDEval-i, BSMEval and the referee of a debate."""
