"""Settings for a job: a Settings object, a mapping or a YAML file, with the options every model-calling
job shares (role overrides, budget, shared response cache, the simulated backend) applied on top."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Union

from pydantic import BaseModel, ConfigDict, Field

from examiner.api.checks import cache_folder, check_budget
from examiner.core.config import Settings, load_settings, validate_settings
from examiner.core.sim_prices import with_illustrative_prices

SettingsSource = Union[Settings, Mapping[str, Any], str, Path, None]
"""What a job takes as its configuration: Settings as they are; a mapping validated as config.yaml is;
a path to a YAML file (`--config FILE`) or None (the defaults), both read with the environment's
EXAMINER_ROLE_* and EXAMINER_BUDGET_USD as the command line reads them."""


class JobOptions(BaseModel):
    """Options of every job that calls models: the flags --role, --budget-usd, --cache and --simulate."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    roles: Mapping[str, str] = Field(default_factory=dict)
    """Role -> endpoint name overrides (`--role judge=openai`), applied over the configuration's roles."""
    budget_usd: float | None = None
    """Most the job may spend, in dollars (`--budget-usd`); None: the configuration's cap, if any."""
    cache_dir: str | None = None
    """A response cache folder shared between runs (`--cache DIR`); None: a cache inside the job's folder."""
    simulate: bool = False
    """Send every role to the simulated backend (`--simulate`): calls, tokens and dollars at no cost."""


def resolve_settings(source: SettingsSource, options: JobOptions) -> Settings:
    """Validated settings from `source` with the job's options applied; ConfigError on any problem."""
    budget = check_budget(options.budget_usd)
    roles = dict(options.roles)
    if source is None or isinstance(source, (str, Path)):
        settings = load_settings(source, role_overrides=roles, budget_usd=budget)
    else:
        settings = source if isinstance(source, Settings) else validate_settings(source)
        changes: dict[str, Any] = {}
        if roles:
            changes["roles"] = roles
        if budget is not None:
            changes["budget_usd"] = budget
        if changes:
            settings = settings.merged(changes)
    cache_dir = cache_folder(options.cache_dir)
    if cache_dir is not None:
        settings = settings.merged({"cache_dir": cache_dir})
    if not options.simulate:
        return settings
    return with_illustrative_prices(settings.simulated())


def simulated_name(settings: Settings, name: str) -> str:
    """An endpoint name as the simulated run knows it: its twin `sim-NAME` where the settings have one."""
    return f"sim-{name}" if f"sim-{name}" in settings.endpoints else name


def path_text(value: Any) -> Any:
    """A path-like option value as its string (options keep paths as text, as run folders record them)."""
    return os.fspath(value) if isinstance(value, os.PathLike) else value


def path_texts(value: Any) -> Any:
    """One path or several, as a tuple of strings."""
    if isinstance(value, (str, os.PathLike)):
        return (os.fspath(value),)
    return tuple(path_text(v) for v in value)
