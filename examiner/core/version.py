"""The package's version, in the core layer so run records (run.json, dataset cards) can name it without
importing the package's face (examiner/__init__.py, which sits above every method)."""

VERSION = "0.1.0"
"""Keep equal to `version` in pyproject.toml."""
