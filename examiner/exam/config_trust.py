"""What a resume may take from the run folder's config.yaml: the endpoints it sends the user's API key to,
and the cache files outside the folder it reads and writes.

Why: config.yaml names each endpoint's base_url and the environment variable holding its key
(`api_key_env`), and the response and embedding caches' paths. The folder may come from someone else;
resumed as it is, it would send the value of any variable of the user's (an API key, a token) to whatever
URL it names, and read and write any SQLite file or folder it names. So a resume uses them only where the
user vouches for them in this invocation: named the same way in the `--config` file they pass (`--cache
DIR` for the response cache), or with `--trust-run-config`; or where this user started or confirmed them
before for this very folder, remembered as hashes in the user's own data folder (never in the run folder,
which is data). Endpoints that send no key (simulated ones, the embedded local model, a URL without
`api_key_env`) and caches inside the run folder need no confirmation.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shlex
from dataclasses import dataclass
from pathlib import Path

from examiner.core import rundir
from examiner.core.config import EndpointSpec, Settings, load_settings, read_settings_file, validate_settings
from examiner.core.errors import UserError
from examiner.core.redact import redact_url

log = logging.getLogger(__name__)

CONFIRMED_FILE = "confirmed-endpoints"
"""Name of the file, in the user's data folder, of (run folder, endpoint or path) hashes the user vouched for."""

CACHE_PATHS = ("cache_dir", "embedding_cache")
"""Settings that name a file or folder a run reads and writes."""


@dataclass(frozen=True)
class Named:
    """One thing config.yaml names that needs the user's word: an endpoint that gets a key, or a path."""

    kind: str
    """`endpoint` or `path`."""
    name: str
    """The endpoint's name, or the setting's (`cache_dir`)."""
    where: tuple[str, ...]
    """What identifies it: the URLs (credentials masked) and the key's variable, or the resolved path."""

    def describe(self) -> str:
        if self.kind == "endpoint":
            return f"endpoint {self.name} at {self.where[0]}, which would get your key from {self.where[-1]}"
        return f"{self.name} {self.where[0]}, outside the run folder, which the run would read and write"


def keyed_endpoints(settings: Settings) -> dict[str, EndpointSpec]:
    """The endpoints that would send a key from the environment to a URL the configuration names."""
    return {name: spec for name, spec in settings.endpoints.items()
            if spec.api_key_env and (spec.provider == "openai" or spec.base_url)}


def _endpoint(name: str, spec: EndpointSpec) -> Named:
    urls = [spec.base_url or "", *spec.replicas]
    return Named("endpoint", name, (*(redact_url(url) or "" for url in urls), f"${spec.api_key_env}"))


def _path(key: str, value: str) -> Named:
    return Named("path", key, (str(Path(value).expanduser().resolve()),))


def named_in(run_dir: Path, settings: Settings) -> list[Named]:
    """What `settings` name that needs the user's word for `run_dir`: keyed endpoints, cache paths outside it."""
    inside = run_dir.resolve()
    items = [_endpoint(name, spec) for name, spec in keyed_endpoints(settings).items()]
    for key in CACHE_PATHS:
        value = getattr(settings, key)
        if value and not Path(value).expanduser().resolve().is_relative_to(inside):
            items.append(_path(key, value))
    return items


def confirmations_path() -> Path:
    """The file of confirmations: in the user's data folder (`~/.local/share/examiner` on Linux)."""
    import platformdirs

    return platformdirs.user_data_path("examiner") / CONFIRMED_FILE


def _fingerprint(run_dir: Path, item: Named) -> str:
    data = json.dumps([str(run_dir.resolve()), item.kind, item.name, list(item.where)])
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def _remembered() -> set[str]:
    try:
        return set(confirmations_path().read_text(encoding="utf-8").split())
    except (OSError, UnicodeDecodeError):
        return set()


def remember_endpoints(run_dir: str | Path, settings: Settings) -> None:
    """Note that the user configured what `settings` name for `run_dir` (a run they start, or a resume they
    confirmed), so a later resume of the folder uses it without asking again."""
    run_dir = Path(run_dir)
    known = _remembered()
    new = [f for f in (_fingerprint(run_dir, item) for item in named_in(run_dir, settings)) if f not in known]
    if not new:
        return
    path = confirmations_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as out:
            out.write("".join(f + "\n" for f in new))
    except OSError as exc:  # a read-only home: the next resume asks for --config, nothing worse
        log.warning("could not note the confirmed endpoints in %s (%s)", path, exc.strerror or exc)


def folder_settings(run_dir: Path) -> Settings | None:
    """The settings in the run folder's config.yaml when the run is unfinished (a finished run's resume
    only rebuilds its reports, calling no endpoint and opening no cache), else None; a damaged file is left
    to the resume, which names it."""
    try:
        if rundir.RunDir(run_dir).read_info().status == "completed":
            return None
        return validate_settings(read_settings_file(run_dir / rundir.CONFIG), str(run_dir / rundir.CONFIG))
    except (UserError, OSError):
        return None


def check_resume_endpoints(run_dir: str | Path, settings: Settings | None = None, config_file: str | None = None,
                           trust: bool = False, cache_dir: str | None = None) -> None:
    """Refuse (UserError, one line) a resume that would send a key to an endpoint, or open a cache outside
    the run folder, that the user did not configure in this invocation: `config_file` must name each as the
    run folder's settings (`settings`, else its config.yaml) do; without it, each must be remembered for
    this folder or `trust` given. `cache_dir` (the resume's --cache) replaces the folder's response cache.
    What the user vouched for is remembered for the next resume."""
    run_dir = Path(run_dir)
    settings = settings if settings is not None else folder_settings(run_dir)
    if settings is None:
        return
    if cache_dir is not None:
        settings = settings.merged({"cache_dir": cache_dir})
    items = named_in(run_dir, settings)
    if not items:
        return
    if cache_dir is not None:  # the user's own, given in this invocation
        items = [item for item in items if item.name != "cache_dir"]
    again = f"examiner resume {shlex.quote(str(run_dir))}"
    if config_file is not None:
        given = {(item.kind, item.name): item for item in named_in(run_dir, load_settings(config_file))}
        for item in items:
            if given.get((item.kind, item.name)) != item:
                raise UserError(f"{config_file} does not name {item.describe()}, as the run folder does: resume "
                                "with the configuration the run was started with, or `--trust-run-config` to use "
                                "what the folder names")
    elif not trust:
        known = _remembered()
        for item in items:
            if _fingerprint(run_dir, item) not in known:
                raise UserError(f"{run_dir} names {item.describe()}, and you did not configure it for this run: "
                                f"`{again} --config FILE` (your configuration naming it) or "
                                f"`{again} --trust-run-config`")
    remember_endpoints(run_dir, settings)


__all__ = ["CACHE_PATHS", "CONFIRMED_FILE", "Named", "check_resume_endpoints", "confirmations_path",
           "folder_settings", "keyed_endpoints", "named_in", "remember_endpoints"]
