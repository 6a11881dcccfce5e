"""Credentials never leave the process (issue 25): a password in an endpoint's base_url
(`http://user:secret@host/v1`) or a token in a URL's query reaches no file of the run folder, no line of
`examiner -v run` (HTTP client log lines included), no line of `examiner models`, and no error message;
the gateway still connects with the full URL, and a resume gets the credentials back from the
configuration file the run was started with."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from examiner.core import rundir
from examiner.core.redact import RedactingFilter, has_credentials, redact_data, redact_text, redact_url
from examiner.core.rundir import RunDir
from examiner.exam.runner import load_run, restore_credentials
from examiner.simulator import SimulatedProcess
from tests.helpers.cli_runs import as_killed, run_cli

SECRET = "s3cr3t-pass"
TOKEN = "t0ken-value"


@pytest.mark.parametrize("url, expected", [
    ("http://user:s3cr3t-pass@host:8000/v1", "http://***@host:8000/v1"),
    ("https://user@host/v1", "https://***@host/v1"),
    ("http://u:p@ss@host/v1", "http://***@host/v1"),  # an unescaped @ in the password
    ("https://host/v1?api_key=t0ken-value&model=x", "https://host/v1?api_key=***&model=x"),
    ("https://host/v1?sig=abc&token=def&access_token=ghi#frag", "https://host/v1?sig=***&token=***&access_token=***#frag"),
    ("https://host/v1?X-Amz-Signature=abc&page=2", "https://host/v1?X-Amz-Signature=***&page=2"),
    ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
])
def test_redact_url(url: str, expected: str) -> None:
    assert redact_url(url) == expected
    assert has_credentials(url) == (url != expected)
    assert redact_url(expected) == expected  # idempotent


def test_redact_text_finds_urls_in_messages_and_leaves_other_text_alone() -> None:
    line = f'HTTP Request: POST http://user:{SECRET}@10.0.0.1/v1/chat/completions "HTTP/1.1 200 OK"'
    assert redact_text(line) == 'HTTP Request: POST http://***@10.0.0.1/v1/chat/completions "HTTP/1.1 200 OK"'
    assert redact_text("Authorization: Bearer sk-abcdefghijklmnop") == "Authorization: Bearer ***"
    for plain in ("write to ana@example.org", "x=1 and y=2", "see https://example.org/a?b=c"):
        assert redact_text(plain) == plain
    assert redact_data({"a": [f"http://u:{SECRET}@h/v1", 3], "b": None}) == {"a": ["http://***@h/v1", 3], "b": None}


def test_the_log_filter_redacts_third_party_records_and_tracebacks() -> None:
    record = logging.LogRecord("httpx", logging.INFO, __file__, 1, "HTTP Request: %s %s", ("POST", f"http://u:{SECRET}@h/v1"),
                               None)
    assert RedactingFilter().filter(record)
    assert record.getMessage() == "HTTP Request: POST http://***@h/v1"
    try:
        raise ValueError(f"cannot reach http://u:{SECRET}@h/v1")
    except ValueError:
        failed = logging.LogRecord("openai", logging.ERROR, __file__, 1, "failed", None, sys.exc_info())
    RedactingFilter().filter(failed)
    assert failed.exc_text and SECRET not in failed.exc_text and "http://***@h/v1" in failed.exc_text


# --- end to end: a real process against a real HTTP server with user-info in its URL --------------------------

@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    process = SimulatedProcess({"knowledge": {"known": 0.6, "wrong": 0.2, "unknown": 0.2}})
    url = process.start()
    try:
        yield url
    finally:
        process.stop()


@pytest.fixture(scope="module")
def secret_config(server: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    url = server.replace("http://", f"http://user:{SECRET}@")
    config = {"endpoints": {"real": {"provider": "openai", "base_url": url, "model": "sim", "max_attempts": 2,
                                     "price_input_per_1m": 1.0, "price_output_per_1m": 2.0}},
              "roles": {role: "real" for role in ("examiner", "candidate", "judge")}, "exam": {"max_rounds": 1}}
    path = tmp_path_factory.mktemp("secret") / "config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def _examiner(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(Path.cwd()), COLUMNS="250")  # no table cell wrapped
    return subprocess.run([sys.executable, "-m", "examiner.cli.main", *args], capture_output=True, text=True, env=env,
                          timeout=600)


def _files_holding(folder: Path, word: str) -> list[str]:
    return [str(p) for p in folder.rglob("*") if p.is_file() and word.encode() in p.read_bytes()]


@pytest.fixture(scope="module")
def secret_run(secret_config: Path, small_corpus: Path, tmp_path_factory: pytest.TempPathFactory
               ) -> tuple[Path, subprocess.CompletedProcess[str]]:
    out = tmp_path_factory.mktemp("secret-run") / "run"
    done = _examiner("-v", "run", str(small_corpus), "--config", str(secret_config), "--out", str(out), "--quiet")
    return out, done


def test_verbose_run_keeps_the_password_out_of_every_file_and_line(secret_run) -> None:
    out, done = secret_run
    assert done.returncode == 0, done.stderr[-3000:]
    assert "HTTP Request: POST http://***@127.0.0.1" in done.stderr  # the HTTP client's lines are there, redacted
    assert SECRET not in done.stdout and SECRET not in done.stderr
    assert _files_holding(out, SECRET) == []
    assert "http://***@127.0.0.1" in (out / rundir.CONFIG).read_text(encoding="utf-8")
    assert RunDir(out).read_info().status == "completed"


def test_models_shows_the_url_without_the_password(secret_config: Path) -> None:
    done = _examiner("models", "--config", str(secret_config))
    assert done.returncode == 0, done.stderr
    assert SECRET not in done.stdout + done.stderr
    assert "***" in done.stdout


def test_resume_takes_the_credentials_from_the_config_it_started_with(secret_run, secret_config: Path,
                                                                      tmp_path: Path, capsys, caplog) -> None:
    import shutil

    out = tmp_path / "run"
    shutil.copytree(secret_run[0], out)
    as_killed(out)  # and start it over, with every call sent again: the credentials are needed
    (out / rundir.CHECKPOINTS).unlink()
    (out / rundir.CACHE).unlink()
    code, lines, _ = run_cli(["resume", str(out), "--quiet"], capsys, caplog)
    assert code == 2 and len(lines) == 1, lines
    assert "credentials" in lines[0] and f"examiner resume {out} --config FILE" in lines[0]
    assert SECRET not in lines[0]
    code, lines, _ = run_cli(["resume", str(out), "--quiet", "--config", str(secret_config)], capsys, caplog)
    assert code == 0, lines
    assert RunDir(out).read_info().status == "completed"
    assert _files_holding(out, SECRET) == []
    settings, request = load_run(out)
    restored = restore_credentials(settings, request, out, str(secret_config))
    assert restored.endpoints["real"].base_url.startswith(f"http://user:{SECRET}@")  # what the gateway connects with


def test_an_error_naming_the_url_is_redacted(tmp_path: Path, small_corpus: Path, capsys, caplog) -> None:
    config = tmp_path / "dead.yaml"
    config.write_text(yaml.safe_dump({
        "endpoints": {"dead": {"provider": "openai", "base_url": f"http://user:{SECRET}@127.0.0.1:9/v1",
                               "max_attempts": 1, "timeout_s": 2}},
        "roles": {role: "dead" for role in ("examiner", "candidate", "judge")}, "exam": {"max_rounds": 1}}),
        encoding="utf-8")
    out = tmp_path / "run"
    code, lines, stdout = run_cli(["run", str(small_corpus), "--config", str(config), "--quiet", "--out", str(out)],
                                  capsys, caplog)
    assert code == 75, lines  # an outage (EX_TEMPFAIL), not bad input
    assert SECRET not in "\n".join(lines) + stdout
    assert _files_holding(out, SECRET) == []
