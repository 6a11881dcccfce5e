"""The debaters of MDEval: each defends its own assessment over rounds."""
