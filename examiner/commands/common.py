"""Flags shared by many commands: configuration file, role overrides, budget, simulation."""

from __future__ import annotations

import argparse

from examiner.config import Settings, load_settings
from examiner.errors import ConfigError


def add_config_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE", help="YAML file with endpoints, roles and settings")
    parser.add_argument(
        "--role",
        action="append",
        default=[],
        metavar="ROLE=ENDPOINT",
        help="assign a role to a configured endpoint (repeatable), e.g. --role judge=openai",
    )
    parser.add_argument("--budget-usd", type=float, metavar="X", help="stop cleanly before spending more than X dollars")
    parser.add_argument(
        "--simulate",
        action="store_true",
        help="send every role to the simulated backend (predicts calls, tokens and dollars at no cost)",
    )


def parse_roles(pairs: list[str]) -> dict[str, str]:
    roles = {}
    for pair in pairs:
        role, sep, endpoint = pair.partition("=")
        if not sep or not role or not endpoint:
            raise ConfigError(f"--role expects ROLE=ENDPOINT, got '{pair}'")
        roles[role.strip()] = endpoint.strip()
    return roles


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Validated settings from --config, the environment and the flags."""
    budget = getattr(args, "budget_usd", None)
    if budget is not None and budget < 0:
        raise ConfigError(f"--budget-usd must be zero or more, got {budget}")
    settings = load_settings(
        getattr(args, "config", None), role_overrides=parse_roles(getattr(args, "role", [])), budget_usd=budget
    )
    if getattr(args, "simulate", False):
        settings = settings.simulated()
    return settings
