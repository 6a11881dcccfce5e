"""The reliability catalogue: one test per class of damaged or foreign input.

Each asserts what a user sees: the exit code, exactly one line on stderr (`examiner: error: ...` naming
the file, flag or endpoint and what is wrong), no traceback, and that the records a run had already
written are byte for byte unchanged. The commands run in-process through `examiner.cli.main.main`: an
exception escaping it would be the traceback (and fails the test); warnings that a real process logs to
stderr are counted as stderr lines (pytest captures log records apart from stderr). One test runs the
command line as a real process to hold the same for the process's own stderr.
"""

from __future__ import annotations

import http.server
import json
import logging
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from examiner.cli.main import os_error_line
from examiner.cli.flags import output_dir
from examiner.core import rundir
from examiner.core.errors import UserError
from tests.helpers.cli_runs import as_killed, assert_one_error, run_cli

RECORDS = (rundir.LEDGER, rundir.QUESTIONS, rundir.ANSWERS, rundir.VERDICTS, rundir.OUTCOMES, rundir.UNITS)


@pytest.fixture
def run_copy(finished_run: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(finished_run, copy)
    return copy


def records(run_dir: Path) -> dict[str, bytes]:
    return {name: (run_dir / name).read_bytes() for name in RECORDS if (run_dir / name).exists()}


# --- damaged or missing run files ------------------------------------------------------------------------

@pytest.mark.parametrize("damage", ["missing", "cut"])
def test_resume_with_damaged_or_missing_run_json(run_copy: Path, damage: str, capsys, caplog) -> None:
    before = records(run_copy)
    info = run_copy / rundir.RUN_INFO
    if damage == "missing":
        info.unlink()
    else:
        info.write_bytes(info.read_bytes()[:40])
    code, lines, _ = run_cli(["resume", str(run_copy), "--quiet"], capsys, caplog)
    assert_one_error(code, lines, rundir.RUN_INFO)
    assert records(run_copy) == before


@pytest.mark.parametrize("damage", ["missing", "not YAML", "not a mapping", "invalid setting"])
def test_resume_with_damaged_or_missing_config_yaml(run_copy: Path, damage: str, capsys, caplog) -> None:
    before = records(run_copy)
    config = run_copy / rundir.CONFIG
    if damage == "missing":
        config.unlink()
    elif damage == "not YAML":
        config.write_text("exam: [1\n", encoding="utf-8")
    elif damage == "not a mapping":
        config.write_text("- 1\n- 2\n", encoding="utf-8")
    else:
        config.write_text(config.read_text(encoding="utf-8").replace("max_rounds: 1", "max_rounds: 0"), encoding="utf-8")
    code, lines, _ = run_cli(["resume", str(run_copy), "--quiet"], capsys, caplog)
    assert_one_error(code, lines, rundir.CONFIG)
    assert records(run_copy) == before


def test_resume_with_damaged_request_json(run_copy: Path, capsys, caplog) -> None:
    before = records(run_copy)
    (run_copy / rundir.REQUEST).write_text('{"corpus_paths": ["x"], "colour": "red"}', encoding="utf-8")
    code, lines, _ = run_cli(["resume", str(run_copy), "--quiet"], capsys, caplog)
    assert_one_error(code, lines, rundir.REQUEST, "damaged")
    assert records(run_copy) == before


@pytest.mark.parametrize("damage", ["not a database", "cut"])
def test_resume_with_damaged_checkpoints(run_copy: Path, damage: str, capsys, caplog) -> None:
    """A damaged checkpoints.sqlite: one line saying how to start over (a missing one starts over by itself:
    tests/cli/test_run_folder_safety.py)."""
    as_killed(run_copy)
    before = records(run_copy)
    checkpoints = run_copy / rundir.CHECKPOINTS
    if damage == "not a database":
        checkpoints.write_bytes(b"this is not SQLite\n" * 100)
    else:
        checkpoints.write_bytes(checkpoints.read_bytes()[:3000])
    code, lines, _ = run_cli(["resume", str(run_copy), "--quiet"], capsys, caplog)
    assert_one_error(code, lines, rundir.CHECKPOINTS, "damaged", f"examiner resume {run_copy}")
    assert records(run_copy) == before


@pytest.mark.parametrize("damage", ["not a database", "cut"])
def test_resume_with_damaged_state_store(run_copy: Path, damage: str, capsys, caplog) -> None:
    """state.sqlite holds the values the checkpoints name: a damaged one is an error like damaged checkpoints."""
    as_killed(run_copy)
    before = records(run_copy)
    state = run_copy / rundir.STATE
    state.write_bytes(b"this is not SQLite\n" * 100 if damage == "not a database" else state.read_bytes()[:3000])
    code, lines, _ = run_cli(["resume", str(run_copy), "--quiet"], capsys, caplog)
    assert_one_error(code, lines, rundir.STATE, "damaged")
    assert records(run_copy) == before


@pytest.mark.parametrize("damage", ["cut", "not a database", "missing"])
def test_resume_with_damaged_or_missing_cache_warns_and_continues(run_copy: Path, damage: str, capsys, caplog) -> None:
    """The one row that is not an error: a damaged or missing cache only costs repeated calls, so the
    resume goes on with a fresh cache after one warning line; a damaged file is kept beside it."""
    as_killed(run_copy)
    before = records(run_copy)
    cache = run_copy / rundir.CACHE
    if damage == "missing":
        cache.unlink()
    else:
        cache.write_bytes(cache.read_bytes()[:5000] if damage == "cut" else b"not SQLite at all\n" * 300)
    code, lines, _ = run_cli(["resume", str(run_copy), "--quiet"], capsys, caplog)
    assert code == 0, lines
    assert len(lines) == 1 and lines[0].startswith("WARNING") and str(cache) in lines[0], lines
    if damage != "missing":
        assert "cache.sqlite.damaged" in lines[0] and (run_copy / "cache.sqlite.damaged").is_file()
    assert records(run_copy) == before


def test_resume_with_damaged_embeddings_warns_and_continues(run_copy: Path, capsys, caplog) -> None:
    as_killed(run_copy)
    before = records(run_copy)
    (run_copy / rundir.EMBEDDINGS).write_bytes(b"not SQLite at all\n" * 300)
    code, lines, _ = run_cli(["resume", str(run_copy), "--quiet"], capsys, caplog)
    assert code == 0, lines
    assert len(lines) == 1 and "embeddings.sqlite.damaged" in lines[0], lines
    assert records(run_copy) == before


# --- endpoints that answer with something else than a chat completion ---------------------------------

class _ForeignHandler(http.server.BaseHTTPRequestHandler):
    body: bytes = b""
    content_type: str = ""

    def do_POST(self) -> None:  # noqa: N802 - the http.server naming
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", self.content_type)
        self.send_header("content-length", str(len(self.body)))
        self.end_headers()
        try:
            self.wfile.write(self.body)
        except (BrokenPipeError, ConnectionResetError):
            # examiner may hang up as soon as it has judged the reply foreign; the traceback socketserver
            # would print for that lands in the stderr the test reads.
            pass

    def log_message(self, *args: object) -> None:
        """Silent: the test reads examiner's stderr."""


FOREIGN = {
    "html": (b"<!doctype html><html><body><h1>Sign in</h1></body></html>", "text/html; charset=utf-8"),
    "not JSON": (b"upstream says hello {", "application/json"),
}


@pytest.fixture(params=list(FOREIGN))
def foreign_endpoint(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """(config file with endpoint `web` on a local server answering 200 with a foreign body, content type)."""
    body, content_type = FOREIGN[request.param]
    handler = type("Handler", (_ForeignHandler,), {"body": body, "content_type": content_type})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    config = tmp_path / "web.yaml"
    config.write_text(yaml.safe_dump({
        "endpoints": {"web": {"base_url": f"http://127.0.0.1:{server.server_port}/v1", "model": "x",
                              "max_attempts": 2, "backoff_base_s": 0.01},
                      "sim": {"provider": "simulated", "model": "sim"}},
        "roles": {"examiner": "web", "candidate": "web", "judge": "sim"},
        "allow_simulated_roles": True,  # a mix on purpose: the foreign endpoint is the one under test
        "exam": {"max_rounds": 1},
    }), encoding="utf-8")
    yield config, content_type.split(";")[0]
    server.shutdown()
    server.server_close()


def test_endpoint_answering_html_or_non_json(foreign_endpoint: tuple[Path, str], corpus: Path, tmp_path: Path,
                                             capsys, caplog) -> None:
    """run and chat: one line naming the endpoint, the status and the content type; doctor's endpoint
    check explains the same."""
    from examiner.cli.commands.setup import _check, _endpoint_probe
    from examiner.core.config import load_settings

    config, content_type = foreign_endpoint
    code, lines, _ = run_cli(["run", str(corpus), "--config", str(config), "--out", str(tmp_path / "r"), "--quiet"],
                             capsys, caplog)
    assert_one_error(code, lines, "endpoint web", "127.0.0.1", "HTTP 200", content_type)
    code, lines, _ = run_cli(["chat", "hello", "--config", str(config)], capsys, caplog)
    assert_one_error(code, lines, "endpoint web", "HTTP 200", content_type)
    _, ok, detail = _check("endpoint web", _endpoint_probe(load_settings(config), "web"))
    assert not ok and "HTTP 200" in detail and content_type in detail and "base_url" in detail


def test_html_endpoint_in_a_real_process_prints_one_line(corpus: Path, tmp_path: Path) -> None:
    """The same, with the process's own stderr: the logging set-up of a real run adds no line."""
    body, content_type = FOREIGN["html"]
    handler = type("Handler", (_ForeignHandler,), {"body": body, "content_type": content_type})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        config = tmp_path / "web.yaml"
        config.write_text(yaml.safe_dump({
            "endpoints": {"web": {"base_url": f"http://127.0.0.1:{server.server_port}/v1", "max_attempts": 2,
                                  "backoff_base_s": 0.01}},
            "roles": {"candidate": "web"},
        }), encoding="utf-8")
        done = subprocess.run([sys.executable, "-m", "examiner.cli.main", "chat", "hello", "--config", str(config)],
                              capture_output=True, text=True, timeout=120, env=dict(os.environ, HF_HUB_OFFLINE="1"))
    finally:
        server.shutdown()
        server.server_close()
    lines = done.stderr.splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr and "text/html" in lines[0] and "HTTP 200" in lines[0]


def test_dead_endpoint_is_one_warning_and_one_error(corpus: Path, tmp_path: Path, capsys, caplog) -> None:
    """Every call of a fan-out failing the same way is logged once, then the run's error line."""
    config = tmp_path / "dead.yaml"
    config.write_text(yaml.safe_dump({
        "endpoints": {"dead": {"base_url": "http://127.0.0.1:9/v1", "max_attempts": 2, "backoff_base_s": 0.01},
                      "sim": {"provider": "simulated", "model": "sim"}},
        "roles": {"examiner": "dead", "candidate": "sim", "judge": "sim"},
        "allow_simulated_roles": True,  # a mix on purpose: only the examiner's endpoint is dead
    }), encoding="utf-8")
    code, lines, _ = run_cli(["run", str(corpus), "--config", str(config), "--out", str(tmp_path / "r"), "--quiet"],
                             capsys, caplog)
    assert code == 75  # an outage, told apart from bad input (tests/cli/test_exit_codes.py)
    warnings = [line for line in lines if line.startswith("WARNING")]
    errors = [line for line in lines if line.startswith("examiner: error: every question generation call failed: dead")]
    assert len(warnings) == 1 and len(errors) == 1 and len(lines) == 2, lines


# --- binary and non-UTF-8 datasets -----------------------------------------------------------------------

BINARY = b"\x00\x01\x02\xffPK\x03\x04" * 64


def _latin1_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_bytes("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("latin-1"))
    return path


PAIRS = [{"id": f"p{i}", "instruction": f"Qu'est-ce qu'un caf\u00e9 cr\u00e8me {i}?", "output_1": "Un caf\u00e9 au lait.",
          "output_2": "Je ne sais pas.", "input": f"Caf\u00e9 {i}?", "label": 1} for i in range(3)]


def _dataset_commands(data: Path, out: Path, config: Path) -> dict[str, list[str]]:
    return {
        "judge": ["judge", str(data), "--method", "pairwise", "--config", str(config), "--out", str(out / "j")],
        "judge-stats": ["judge-stats", str(data)],
        "meta": ["meta", str(data), "--evaluators", "sim,sim2", "--config", str(config), "--limit", "2",
                 "--out", str(out / "m")],
    }


@pytest.mark.parametrize("command", ["judge", "judge-stats", "meta"])
def test_binary_dataset_is_refused_in_one_line(command: str, tmp_path: Path, config_file: Path, capsys, caplog) -> None:
    data = tmp_path / "blob.jsonl"
    data.write_bytes(BINARY)
    code, lines, _ = run_cli(_dataset_commands(data, tmp_path, config_file)[command], capsys, caplog)
    assert_one_error(code, lines, str(data), "binary")
    assert not (tmp_path / "j").exists() and not (tmp_path / "m").exists()


@pytest.mark.parametrize("command", ["judge", "judge-stats", "meta"])
def test_latin1_dataset_is_decoded_with_replacement_and_counted(command: str, tmp_path: Path, config_file: Path,
                                                                capsys, caplog) -> None:
    """Read as the corpus reader reads such files: in the encoding detected for them (issue 25: no longer
    U+FFFD for every accented letter), named in one warning, and the rows are used."""
    rows = PAIRS if command != "judge-stats" else [
        {"id": f"p{i}", "order": "original", "verdict": 1, "label": 1, "note": "caf\u00e9"} for i in range(3)]
    data = _latin1_jsonl(tmp_path / "latin.jsonl", rows)
    code, lines, _ = run_cli(_dataset_commands(data, tmp_path, config_file)[command], capsys, caplog)
    assert code == 0, lines
    warnings = [line for line in lines if "not valid UTF-8" in line]
    assert len(warnings) == 1 and str(data) in warnings[0] and "read as cp1252" in warnings[0], lines
    assert not any("Traceback" in line or line.startswith("examiner: error") for line in lines), lines


# --- output folders the system refuses -------------------------------------------------------------------

@pytest.mark.parametrize("command", ["run", "judge", "judge-stats", "meta", "chat"])
def test_unwritable_out_is_one_line(command: str, corpus: Path, config_file: Path, tmp_path: Path,
                                    capsys, caplog) -> None:
    """Tests run as root, whom permission bits do not stop: a path below a regular file is refused for
    everyone (ENOTDIR), before any work or spending."""
    blocker = tmp_path / "a-file"
    blocker.write_text("keep me\n", encoding="utf-8")
    data = _latin1_jsonl(tmp_path / "pairs.jsonl", PAIRS)
    args = {
        "run": ["run", str(corpus), "--config", str(config_file), "--quiet", "--out", str(blocker / "run")],
        "chat": ["chat", "hello", "--config", str(config_file), "--run-dir", str(blocker / "chat")],
        **{k: v[:-1] + [str(blocker / k)] if k != "judge-stats" else v + ["--out", str(blocker / k)]
           for k, v in _dataset_commands(data, tmp_path, config_file).items()},
    }[command]
    code, lines, _ = run_cli(args, capsys, caplog)
    lines = [line for line in lines if "not valid UTF-8" not in line]  # the dataset's own warning
    assert_one_error(code, lines, "--run-dir" if command == "chat" else "--out", str(blocker), "is a file")
    assert blocker.read_text(encoding="utf-8") == "keep me\n"


def test_output_dir_and_os_error_messages(tmp_path: Path) -> None:
    blocker = tmp_path / "f"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(UserError, match=r"--out .*f/deep/er: cannot make a folder there, .*f is a file"):
        output_dir(blocker / "deep" / "er")
    assert output_dir(tmp_path / "new" / "folder") == tmp_path / "new" / "folder"
    assert not (tmp_path / "new").exists(), "checking creates nothing"
    denied = PermissionError(13, "Permission denied", "/srv/runs/r1")
    assert os_error_line(denied) == "cannot use /srv/runs/r1: Permission denied"
    below_file = NotADirectoryError(20, "Not a directory", "/tmp/f/run")
    assert os_error_line(below_file) == "cannot use /tmp/f/run: Not a directory (a part of the path is a file, not a folder)"


def test_a_refused_file_during_a_command_is_one_line(run_copy: Path, capsys, caplog) -> None:
    """A file the system refuses after the checks (here report.json is a folder) is one line, not a trace."""
    (run_copy / rundir.REPORT_JSON).mkdir()
    before = records(run_copy)
    code, lines, _ = run_cli(["resume", str(run_copy), "--quiet"], capsys, caplog)
    assert_one_error(code, lines, rundir.REPORT_JSON)
    assert records(run_copy) == before


# --- settings validated the same way by run and resume --------------------------------------------------

@pytest.mark.parametrize("flag, value", [("--max-probes", "-1"), ("--seed", "-1"), ("--cluster-size", "0"),
                                         ("--max-rounds", "-2")])
def test_negative_knobs_are_refused_by_run_and_resume(flag: str, value: str, corpus: Path, config_file: Path,
                                                      run_copy: Path, tmp_path: Path, capsys, caplog) -> None:
    out = tmp_path / "never"
    code, lines, _ = run_cli(["run", str(corpus), "--config", str(config_file), "--quiet", "--out", str(out),
                              flag, value], capsys, caplog)
    assert_one_error(code, lines, f"{flag} {value}")
    assert not out.exists()
    # the same value written into a run's config.yaml: resume refuses it with the same validation
    as_killed(run_copy)
    before = records(run_copy)
    config = run_copy / rundir.CONFIG
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["exam"][flag.removeprefix("--").replace("-", "_")] = int(value)
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    code, lines, _ = run_cli(["resume", str(run_copy), "--quiet"], capsys, caplog)
    assert_one_error(code, lines, str(config), "exam." + flag.removeprefix("--").replace("-", "_"))
    assert records(run_copy) == before


# --- a missing corpus, and stops that must say something --------------------------------------------------

def test_missing_corpus_creates_nothing_and_a_corrected_rerun_works(corpus: Path, config_file: Path, tmp_path: Path,
                                                                    capsys, caplog) -> None:
    out = tmp_path / "exam"
    code, lines, _ = run_cli(["run", str(tmp_path / "typo"), "--config", str(config_file), "--quiet",
                              "--out", str(out)], capsys, caplog)
    assert_one_error(code, lines, "corpus path does not exist", "typo")
    assert not out.exists()
    code, lines, _ = run_cli(["run", str(corpus), "--config", str(config_file), "--quiet", "--out", str(out)],
                             capsys, caplog)
    assert code == 0, lines
    assert (out / rundir.OUTCOMES).is_file()


def test_no_command_exits_non_zero_silently(corpus: Path, config_file: Path, tmp_path: Path, capsys, caplog) -> None:
    """A budget stop (exit 3) and a bare `examiner` (exit 2) say why on stderr."""
    code, lines, _ = run_cli(["run", str(corpus), "--config", str(config_file), "--quiet", "--budget-usd", "0.0005",
                              "--out", str(tmp_path / "b")], capsys, caplog)
    assert code == 3
    assert lines and lines[0].startswith("examiner: stopped") and not any("Traceback" in line for line in lines)
    code, lines, _ = run_cli([], capsys, caplog)
    assert code == 2 and any(line.startswith("examiner: error: no command") for line in lines)


def test_cache_with_a_damaged_write_ahead_log_is_set_aside(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """SQLite would drop every transaction behind a damaged WAL frame without a word (and the calls would
    be paid again unnoticed); a log torn only at its end, as a kill leaves it, is not damage."""
    from examiner.llm.cache import ResponseCache

    live = tmp_path / "live"
    live.mkdir()
    cache = ResponseCache(live / rundir.CACHE)
    for i in range(40):
        cache.put(f"k{i}", {"text": "reply " * 80, "i": i})
    copies = {}
    for name in ("damaged", "torn"):  # what a killed process leaves: the database and its uncheckpointed log
        copies[name] = tmp_path / name
        copies[name].mkdir()
        for suffix in ("", "-wal"):
            shutil.copy(live / f"{rundir.CACHE}{suffix}", copies[name] / f"{rundir.CACHE}{suffix}")
    cache.close()
    wal = copies["damaged"] / f"{rundir.CACHE}-wal"
    data = bytearray(wal.read_bytes())
    data[len(data) // 2: len(data) // 2 + 16] = b"\xff" * 16
    wal.write_bytes(bytes(data))
    torn = copies["torn"] / f"{rundir.CACHE}-wal"
    torn.write_bytes(torn.read_bytes()[:-100])

    with caplog.at_level(logging.WARNING):
        assert len(ResponseCache(copies["damaged"] / rundir.CACHE)) == 0
        assert len(ResponseCache(copies["torn"] / rundir.CACHE)) == 39
    assert [r.getMessage() for r in caplog.records if "write-ahead log" in r.getMessage()], caplog.text
    assert len(caplog.records) == 1 and (copies["damaged"] / "cache.sqlite.damaged-wal").is_file()
