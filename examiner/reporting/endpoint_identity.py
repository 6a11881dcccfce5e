"""What stands behind each endpoint alias of a run: the model, the server's URL (without credentials), and
whether examiner served it itself (the local llama.cpp model, the simulator).

Why: a report or an export that says "llamacpp answered" does not say which model that was or where it
ran, and a simulated run's twin `sim-local` carries the local model's name although no model ran. Every
report (report.json `endpoints`, report.md, report.html, the terminal) and every export (the dataset
card, the Inspect log, the OpenTelemetry spans) takes the one line `endpoint_text` gives. Where the
server named another model in its replies than the settings did (the ledger's `reply_model`; for a run
from before the ledger kept it, the run's response cache, whose replies keep the name the server gave),
both are shown.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from examiner.core.ledger_record import LedgerRecord
from examiner.core.redact import redact_url
from examiner.core.rundir import CACHE
from examiner.llm.ledger import answered
from examiner.reporting.model.endpoints import EndpointIdentity, ServedBy
from examiner.reporting.run_reader import RunData

LOCAL_SERVER = "llama.cpp"
"""What serves a `local` endpoint: examiner starts llama-cpp-python's server on 127.0.0.1 (examiner/llm/local.py)."""
TWIN_PREFIX = "sim-"


def endpoint_roles(run: RunData) -> dict[str, list[str]]:
    """Endpoint -> the roles it played (targets first, then the judge panel, then the settings' roles)."""
    out: dict[str, list[str]] = {}
    pairs = [(t, "target") for t in run.info.targets] + [(j, "judge (panel member)") for j in run.info.judges]
    pairs += [(str(name), str(role)) for role, name in (run.config.get("roles") or {}).items()]
    for name, role in pairs:
        roles = out.setdefault(name, [])
        if role not in roles:
            roles.append(role)
    return out


def reported_models(run_dir: str | Path, ledger: Iterable[LedgerRecord]) -> dict[str, set[str]]:
    """Endpoint -> the model names its server gave in the replies of the run's calls: the ledger's
    `reply_model`, and for an endpoint with answered records that lack it (a run from before the ledger kept
    it) the name its replies keep in the run's response cache."""
    rows = list(ledger)
    out: dict[str, set[str]] = {}
    unnamed: set[str] = set()
    for record in answered(rows):
        endpoint, model = record.endpoint, record.reply_model
        if not endpoint:
            continue
        if model:
            out.setdefault(endpoint, set()).add(model)
        else:
            unnamed.add(endpoint)
    for endpoint, models in cached_models(run_dir, rows, unnamed).items():
        out.setdefault(endpoint, set()).update(models)
    return out


def cached_models(run_dir: str | Path, ledger: Iterable[LedgerRecord], endpoints: set[str]) -> dict[str, set[str]]:
    """Endpoint (of `endpoints`) -> the model names kept in the replies of the run's response cache for its
    calls; empty when the run has no cache or it cannot be read. Only for runs whose ledger has no
    `reply_model`: a cache may be shared, or cleared, so the ledger is the better witness."""
    endpoint_of = {r.cache_key: r.endpoint for r in ledger if r.cache_key and r.endpoint in endpoints}
    path = Path(run_dir) / CACHE
    out: dict[str, set[str]] = {}
    if not endpoint_of or not path.is_file():
        return out
    try:
        with sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True) as db:
            for key, payload in db.execute("SELECT key, payload FROM responses"):
                endpoint = endpoint_of.get(key)
                if endpoint is None:
                    continue
                try:
                    model = json.loads(payload).get("model")
                except (ValueError, AttributeError):
                    continue
                if isinstance(model, str) and model:
                    out.setdefault(endpoint, set()).add(model)
    except sqlite3.Error:
        return {}
    return out


def _served_by(provider: str) -> ServedBy:
    return {"openai": "remote", "local": "local", "simulated": "simulated"}.get(provider, "unknown")  # type: ignore[return-value]


def _plain_text(name: str, spec: dict[str, Any], reported: list[str]) -> str:
    """The line for a real (not simulated) endpoint."""
    model, provider = str(spec.get("model") or "?"), str(spec.get("provider") or "unknown")
    url = redact_url(spec.get("base_url"))
    if provider == "local":
        text = f"{model}, local ({LOCAL_SERVER} server examiner starts on 127.0.0.1)"
    elif not spec:
        text = "not in the run's settings (model and server unknown)"
    else:
        text = f"{model} at {url}" if url else f"{model} ({provider})"
    other = [m for m in reported if m != model]
    if other:
        text += f"; the server reported {', '.join(other)} in its replies"
    return text


def endpoint_identities(run: RunData) -> dict[str, EndpointIdentity]:
    """Every endpoint the run used (targets, judge panel, roles), in that order, with what stands behind it."""
    endpoints = run.config.get("endpoints") or {}
    served = reported_models(run.path, run.ledger)
    out = {}
    for name, roles in endpoint_roles(run).items():
        spec = dict(endpoints.get(name) or {})
        provider = str(spec.get("provider") or "unknown")
        reported = sorted(served.get(name, set()))
        twin_of = None
        if provider == "simulated":
            base = name[len(TWIN_PREFIX):] if name.startswith(TWIN_PREFIX) else ""
            if base and base in endpoints:
                twin_of = base
                text = f"simulated, no model ran (in place of {base}: {_plain_text(base, dict(endpoints[base]), [])})"
            else:
                text = "simulated, no model ran (examiner's simulator)"
            reported = []  # the simulator echoes the configured name: nothing was served
        else:
            text = _plain_text(name, spec, reported)
        if not spec:
            provider = "unknown"
        model = "simulated" if provider == "simulated" else str(spec.get("model") or "?")
        out[name] = EndpointIdentity(roles=roles, provider=provider, model=model,
                                     base_url=redact_url(spec.get("base_url")), served_by=_served_by(provider),
                                     twin_of=twin_of, reported_models=reported, text=text)
    return out


def model_text(run: RunData, name: str) -> str:
    """The model behind an endpoint for a column that names one: the settings' model, or for a simulated
    endpoint `simulated` (with the model its twin stands in for), never the real model's name alone."""
    endpoints = run.config.get("endpoints") or {}
    spec = endpoints.get(name) or {}
    model = str(spec.get("model") or "?")
    if spec.get("provider") != "simulated":
        return model
    base = name[len(TWIN_PREFIX):] if name.startswith(TWIN_PREFIX) else ""
    if base in endpoints:
        return f"simulated (in place of {base}: {(endpoints[base] or {}).get('model') or '?'})"
    return "simulated"


def endpoints_line(identities: dict[str, Any]) -> str:
    """`Endpoints: a = ...; b = ...` for the report's opening lines (models or report.json data); '' when none."""
    if not identities:
        return ""
    parts = []
    for name, ident in identities.items():
        text = ident["text"] if isinstance(ident, dict) else ident.text
        parts.append(f"{name} = {text}")
    return "Endpoints: " + "; ".join(parts) + "."


__all__ = ["LOCAL_SERVER", "endpoint_identities", "endpoint_roles", "endpoints_line", "model_text", "reported_models", "cached_models"]
