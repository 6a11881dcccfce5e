"""The evaluators whose assessments a meta-evaluation compares."""
