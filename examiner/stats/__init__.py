"""Statistics: correlations with human judgements, cluster bootstrap, and the classic reference metrics."""
