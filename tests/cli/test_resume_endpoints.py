"""A resume sends the user's API key only to endpoints the user configured, and opens caches outside the
run folder only where the user configured them (issue 37, item 1b): a run folder's config.yaml names each
endpoint's URL and the environment variable its key is read from, and the caches' paths, and a folder from
someone else could send any variable of the user's anywhere. A resume of a folder this user did not start
asks for `--config FILE` (naming them as the folder does) or `--trust-run-config`, in one line, before any
call; the user's own runs resume without either."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
import yaml

from examiner.core import rundir
from examiner.core.config import Settings
from examiner.core.errors import UserError
from examiner.core.rundir import RunDir
from examiner.exam.config_trust import (check_resume_endpoints, confirmations_path, keyed_endpoints,
                                        remember_endpoints)
from examiner.simulator import SimulatedProcess
from tests.helpers.cli_runs import as_killed, assert_one_error, run_cli

KEY_VAR = "EXAMINER_TEST_ENDPOINT_KEY"
KEY = "k3y-of-the-user"


def _settings(url: str, key_var: str | None = KEY_VAR) -> Settings:
    endpoint = {"provider": "openai", "base_url": url, "model": "sim", "max_attempts": 2}
    if key_var:
        endpoint["api_key_env"] = key_var
    return Settings.model_validate({"endpoints": {"real": endpoint},
                                    "roles": {r: "real" for r in ("examiner", "candidate", "judge")},
                                    "exam": {"max_rounds": 1}})


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_VAR, KEY)


# --- the rule, call by call ------------------------------------------------------------------------------

def test_only_endpoints_that_send_a_key_to_a_configured_url_count() -> None:
    settings = Settings.model_validate({"endpoints": {
        "keyed": {"provider": "openai", "base_url": "https://h/v1", "api_key_env": KEY_VAR},
        "keyless": {"provider": "openai", "base_url": "https://h/v1"},
        "started": {"provider": "simulated", "api_key_env": KEY_VAR},
        "local": {"provider": "local"},
        "sim-at-url": {"provider": "simulated", "base_url": "http://h/v1", "api_key_env": KEY_VAR}}})
    assert sorted(keyed_endpoints(settings)) == ["keyed", "sim-at-url"]


def test_a_folder_the_user_never_vouched_for_is_refused_naming_endpoint_url_and_variable(tmp_path: Path) -> None:
    with pytest.raises(UserError) as caught:
        check_resume_endpoints(tmp_path / "run", _settings("https://evil.example/v1"))
    message = str(caught.value)
    for word in ("real", "https://evil.example/v1", f"${KEY_VAR}", "--config FILE", "--trust-run-config"):
        assert word in message, word
    assert KEY not in message and "\n" not in message


def test_what_the_user_started_resumes_in_that_folder_only(tmp_path: Path) -> None:
    settings = _settings("https://api.example/v1")
    remember_endpoints(tmp_path / "run", settings)
    check_resume_endpoints(tmp_path / "run", settings)
    with pytest.raises(UserError):
        check_resume_endpoints(tmp_path / "other", settings)  # the same URL in another folder
    with pytest.raises(UserError):
        check_resume_endpoints(tmp_path / "run", _settings("https://evil.example/v1"))  # the folder was edited
    with pytest.raises(UserError):
        check_resume_endpoints(tmp_path / "run", _settings("https://api.example/v1", "GITHUB_TOKEN"))
    assert "api.example" not in confirmations_path().read_text(encoding="utf-8")  # hashes, no URL


def test_a_config_naming_the_endpoints_as_the_folder_does_vouches_for_them(tmp_path: Path) -> None:
    folder = _settings("https://api.example/v1")
    same, other = tmp_path / "same.yaml", tmp_path / "other.yaml"
    same.write_text(yaml.safe_dump(folder.model_dump(mode="json")), encoding="utf-8")
    other.write_text(yaml.safe_dump(_settings("https://mine.example/v1").model_dump(mode="json")), encoding="utf-8")
    with pytest.raises(UserError, match="does not name endpoint real"):
        check_resume_endpoints(tmp_path / "run", folder, str(other))
    check_resume_endpoints(tmp_path / "run", folder, str(same))
    check_resume_endpoints(tmp_path / "run", folder)  # remembered for the next resume


def test_trust_run_config_vouches_and_is_remembered(tmp_path: Path) -> None:
    folder = _settings("https://colleague.example/v1")
    check_resume_endpoints(tmp_path / "run", folder, trust=True)
    check_resume_endpoints(tmp_path / "run", folder)


def test_endpoints_without_a_key_need_nothing(tmp_path: Path) -> None:
    check_resume_endpoints(tmp_path / "run", _settings("https://anywhere.example/v1", key_var=None))


def test_caches_outside_the_folder_need_the_users_word_those_inside_do_not(tmp_path: Path) -> None:
    run = tmp_path / "run"
    keyless = _settings("https://anywhere.example/v1", key_var=None)
    inside = keyless.merged({"cache_dir": str(run / "cache"), "embedding_cache": str(run / "e.sqlite")})
    check_resume_endpoints(run, inside)
    outside = keyless.merged({"embedding_cache": str(tmp_path / "someone" / "places.sqlite")})
    with pytest.raises(UserError, match="embedding_cache .*places.sqlite, outside the run folder"):
        check_resume_endpoints(run, outside)
    shared = keyless.merged({"cache_dir": str(tmp_path / "elsewhere")})
    with pytest.raises(UserError, match="cache_dir"):
        check_resume_endpoints(run, shared)
    check_resume_endpoints(run, shared, cache_dir=str(tmp_path / "mine"))  # --cache DIR: the user's own
    remember_endpoints(run, outside)  # what `examiner run --embedding-cache` notes
    check_resume_endpoints(run, outside)


# --- end to end: `examiner run`, then `examiner resume` of that folder and of a copy ------------------------

class _Recorder(BaseHTTPRequestHandler):
    seen: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 - the handler's API
        type(self).seen.append(self.headers.get("Authorization", ""))
        self.send_response(500)
        self.end_headers()

    do_GET = do_POST  # noqa: N815

    def log_message(self, *args: object) -> None:
        """Quiet."""


@pytest.fixture()
def listener() -> Iterator[tuple[str, list[str]]]:
    """A server that writes down the Authorization header of every request it gets."""
    seen: list[str] = []
    handler = type("Recorder", (_Recorder,), {"seen": seen})
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1", seen
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def own_run(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A run this user started with `examiner run --config` on a keyed endpoint (a simulated server)."""
    process = SimulatedProcess({"knowledge": {"known": 0.6, "wrong": 0.2, "unknown": 0.2}})
    url = process.start()
    root = tmp_path_factory.mktemp("keyed")
    config = root / "config.yaml"
    config.write_text(yaml.safe_dump(_settings(url).model_dump(mode="json")), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(KEY_VAR, KEY)
        from examiner.cli.main import main

        assert main(["run", str(corpus), "--config", str(config), "--out", str(root / "run"), "--quiet"]) == 0
    try:
        yield root / "run"
    finally:
        process.stop()


def test_the_users_own_killed_run_resumes_without_flags(own_run: Path, capsys, caplog) -> None:
    as_killed(own_run)  # and start it over from its records: the endpoint is opened again
    (own_run / rundir.CHECKPOINTS).unlink()
    code, lines, _ = run_cli(["resume", str(own_run), "--quiet"], capsys, caplog)
    assert code == 0, lines
    assert RunDir(own_run).read_info().status == "completed"


def test_a_copied_folder_pointing_elsewhere_gets_no_key(own_run: Path, listener, tmp_path: Path,
                                                        capsys, caplog) -> None:
    url, seen = listener
    run = tmp_path / "from-a-colleague"
    shutil.copytree(own_run, run)
    as_killed(run)  # and start it over, every call sent again
    (run / rundir.CHECKPOINTS).unlink()
    (run / rundir.CACHE).unlink()
    config = yaml.safe_load((run / rundir.CONFIG).read_text(encoding="utf-8"))
    config["endpoints"]["real"]["base_url"] = url
    (run / rundir.CONFIG).write_text(yaml.safe_dump(config), encoding="utf-8")
    code, lines, out = run_cli(["resume", str(run), "--quiet"], capsys, caplog)
    assert_one_error(code, lines, "endpoint real", url, f"${KEY_VAR}", "--config FILE", "--trust-run-config")
    assert KEY not in "\n".join(lines) + out
    assert seen == [], "the resume called the folder's endpoint"
    assert RunDir(run).read_info().status == "running"
