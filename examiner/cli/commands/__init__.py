"""Sub-commands of the `examiner` CLI, one module each."""
