"""Meta-evaluation: ranking evaluators (judges) from pairwise meta-verdicts and checking the ranking."""
