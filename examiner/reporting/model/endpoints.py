"""report.json's `endpoints`: what stands behind each endpoint alias the run used (its model and server)."""

from __future__ import annotations

from typing import Literal

from examiner.reporting.model.base import Section

ServedBy = Literal["remote", "local", "simulated", "unknown"]
"""remote: a server at `base_url`; local: the model examiner starts itself (llama.cpp on 127.0.0.1);
simulated: examiner's simulator, no model ran; unknown: the settings do not name the endpoint."""


class EndpointIdentity(Section):
    """One endpoint alias of the run's settings: the roles it played, the model configured, where it is served
    (the URL without credentials), and the model names its server reported in its replies."""

    roles: list[str]
    """The roles it played: `target`, `judge (panel member)`, and the settings' roles (examiner, judge, ...)."""
    provider: str
    model: str
    """The model the settings name ('?' when they do not say); `simulated` for a simulated endpoint, whose
    settings carry the name of the model it stands in for although no model ran (`twin_of` names that endpoint)."""
    base_url: str | None
    """The server's root URL, user-info and token-like query parameters removed (None: none configured)."""
    served_by: ServedBy
    twin_of: str | None = None
    """For a simulated twin `sim-X` (`--simulate`): the endpoint `X` it stands in for."""
    reported_models: list[str] = []
    """The model names the server gave in its replies (the run's response cache), sorted; empty when none
    was recorded. Where one differs from `model`, `text` names both."""
    text: str
    """The endpoint in one line, as the reports print it after `alias = `."""
