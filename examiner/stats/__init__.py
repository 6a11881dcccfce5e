"""Statistics: correlations with human judgements and the cluster bootstrap (correlation), the classic
reference metrics, and decisions with known error (docs/STATISTICS.md): paired comparisons and the
non-inferiority gate (paired), small-sample intervals (intervals), power and sample-size plans (planning),
human-calibrated accuracy by PPI++ (ppi), rating intervals (rankings), and the clustering they share
(clusters)."""
