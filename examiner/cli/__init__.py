"""The command line: argument parsing and printing. `examiner.cli.main:main` is the entry point."""
