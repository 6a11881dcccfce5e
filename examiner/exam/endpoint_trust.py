"""Which endpoints a resume may send the user's API key to.

Why: a run folder's config.yaml names each endpoint's base_url and the environment variable holding its
key (`api_key_env`). The folder may come from someone else; resumed as it is, it would send the value of
any variable of the user's (an API key, a token) to whatever URL it names. So a resume sends a key only to
an endpoint the user vouches for in this invocation: named the same way (URL, replicas, key variable) in
the `--config` file they pass, or with `--trust-endpoints`; or one this user started or confirmed before
for this very folder, remembered as a hash in the user's own data folder (never in the run folder, which
is data). Endpoints that send no key (simulated ones, the embedded local model, a URL without
`api_key_env`) need no confirmation.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shlex
from pathlib import Path

from examiner.core.config import EndpointSpec, Settings, load_settings
from examiner.core.errors import UserError
from examiner.core.redact import redact_url

log = logging.getLogger(__name__)

CONFIRMED_FILE = "confirmed-endpoints"
"""Name of the file, in the user's data folder, of (run folder, endpoint) hashes the user vouched for."""


def keyed_endpoints(settings: Settings) -> dict[str, EndpointSpec]:
    """The endpoints that would send a key from the environment to a URL the configuration names."""
    return {name: spec for name, spec in settings.endpoints.items()
            if spec.api_key_env and (spec.provider == "openai" or spec.base_url)}


def confirmations_path() -> Path:
    """The file of confirmed endpoints: in the user's data folder (`~/.local/share/examiner` on Linux)."""
    import platformdirs

    return platformdirs.user_data_path("examiner") / CONFIRMED_FILE


def _where(spec: EndpointSpec) -> list[str]:
    """What identifies where the key goes: the URLs (credentials masked, as the run folder keeps them)
    and the variable it is read from."""
    urls = [spec.base_url or "", *spec.replicas]
    return [*(redact_url(url) or "" for url in urls), f"${spec.api_key_env}"]


def _fingerprint(run_dir: Path, name: str, spec: EndpointSpec) -> str:
    data = json.dumps([str(run_dir.resolve()), name, _where(spec)])
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def _remembered() -> set[str]:
    try:
        return set(confirmations_path().read_text(encoding="utf-8").split())
    except (OSError, UnicodeDecodeError):
        return set()


def remember_endpoints(run_dir: str | Path, settings: Settings) -> None:
    """Note that the user configured the keyed endpoints of `settings` for `run_dir` (a run they start, or
    a resume they confirmed), so a later resume of the folder sends their keys without asking again."""
    known = _remembered()
    new = [f for f in (_fingerprint(Path(run_dir), n, s) for n, s in keyed_endpoints(settings).items())
           if f not in known]
    if not new:
        return
    path = confirmations_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as out:
            out.write("".join(f + "\n" for f in new))
    except OSError as exc:  # a read-only home: the next resume asks for --config, nothing worse
        log.warning("could not note the confirmed endpoints in %s (%s)", path, exc.strerror or exc)


def _differs(saved: EndpointSpec, given: EndpointSpec | None) -> bool:
    return given is None or _where(given) != _where(saved)


def folder_settings(run_dir: Path) -> Settings | None:
    """The settings in the run folder's config.yaml when the run is unfinished (a finished run's resume
    only rebuilds its reports, calling no endpoint), else None; a damaged file is left to the resume,
    which names it."""
    from examiner.core import rundir
    from examiner.core.config import read_settings_file, validate_settings
    from examiner.core.rundir import RunDir

    try:
        if RunDir(run_dir).read_info().status == "completed":
            return None
        return validate_settings(read_settings_file(run_dir / rundir.CONFIG), str(run_dir / rundir.CONFIG))
    except (UserError, OSError):
        return None


def check_resume_endpoints(run_dir: str | Path, settings: Settings | None = None, config_file: str | None = None,
                           trust: bool = False) -> None:
    """Refuse (UserError, one line) a resume that would send a key to an endpoint the user did not
    configure in this invocation: `config_file` must name every keyed endpoint of the run folder's
    settings (`settings`, else its config.yaml) as the folder does; without it, each must be remembered
    for this folder or `trust` given. What the user vouched for is remembered for the next resume."""
    run_dir = Path(run_dir)
    settings = settings if settings is not None else folder_settings(run_dir)
    if settings is None:
        return
    keyed = keyed_endpoints(settings)
    if not keyed:
        return
    again = f"examiner resume {shlex.quote(str(run_dir))}"
    if config_file is not None:
        given = load_settings(config_file).endpoints
        for name, spec in keyed.items():
            if _differs(spec, given.get(name)):
                raise UserError(f"{config_file} does not name endpoint {name} as the run folder does "
                                f"({redact_url(spec.base_url or '')}, key from ${spec.api_key_env}): resume with "
                                "the configuration the run was started with, or `--trust-endpoints` to send the "
                                "key where the folder says")
    elif not trust:
        known = _remembered()
        for name, spec in keyed.items():
            if _fingerprint(run_dir, name, spec) not in known:
                raise UserError(f"{run_dir} names endpoint {name} at {redact_url(spec.base_url or '')}, which would "
                                f"get your key from ${spec.api_key_env}, and you did not configure it for this run: "
                                f"`{again} --config FILE` (your configuration naming that endpoint) or "
                                f"`{again} --trust-endpoints`")
    remember_endpoints(run_dir, settings)


__all__ = ["CONFIRMED_FILE", "check_resume_endpoints", "confirmations_path", "keyed_endpoints",
           "remember_endpoints"]
