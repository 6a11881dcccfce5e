"""The corpus: readers with limits, languages, passages, knowledge units, embeddings and clustering, and the
loaders of the shipped datasets and of users' datasets."""
