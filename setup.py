"""Package layout that pyproject.toml alone cannot say: the top-level folders `agents/` and `prompts/` are
installed inside the examiner namespace, as `examiner.agents` and `examiner.prompts` (package data), never
as top-level `agents` or `prompts` packages. Everything else is in pyproject.toml."""

from setuptools import find_packages, setup

AGENTS = ["examiner.agents"] + [f"examiner.agents.{name}" for name in find_packages("agents")]

setup(
    packages=find_packages(include=["examiner", "examiner.*"]) + AGENTS + ["examiner.prompts"],
    package_dir={"examiner.agents": "agents", "examiner.prompts": "prompts"},
)
