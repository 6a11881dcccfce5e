"""The RevisEval reviser: turns a response into a response-adapted reference."""
