"""Errors a user can act on: the CLI prints them as one line and exits with code 2."""


class UserError(Exception):
    """A problem with the user's input or configuration (bad file, unknown role, missing key...)."""


class ConfigError(UserError):
    """The configuration file, environment or flags do not describe a usable setup."""


class BudgetExhausted(Exception):
    """The next model call could push spending above the run's budget; the run stops cleanly."""
