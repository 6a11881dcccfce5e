"""A killed or stopped `examiner export` (or `distil`) leaves nothing at its output path, so the same command run
again exports (a partial folder used to block the retry as "not an empty folder"): the export is written
into a hidden folder beside OUT and renamed to OUT at the end; the folder a kill -9 left is removed by the
retry, and a SIGTERM removes its own."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from examiner.core.staging import clear_stale, staged_folder

_CARD_THEN = """
import os, signal, sys
import examiner.reporting.exports as exports
card = exports.card
def card_then_signal(*args, **kwargs):
    os.kill(os.getpid(), signal.{signal})   # the rows are written, the card not yet
    return card(*args, **kwargs)
exports.card = card_then_signal
import examiner.cli.main as cli
sys.argv = ["examiner", *sys.argv[1:]]
sys.exit(cli.main())
"""


def _export(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, HF_HUB_OFFLINE="1"))


def _leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


def test_a_killed_export_does_not_block_its_retry(finished_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "data"
    args = ("export", str(finished_run), "--to", "jsonl", str(out))
    killed = _export(_CARD_THEN.replace("{signal}", "SIGKILL"), *args)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert not out.exists() and len(_leftovers(out)) == 1

    again = _export(_CARD_THEN.replace("{signal}", "SIGCONT"), *args)  # SIGCONT: a signal that changes nothing
    assert again.returncode == 0, again.stderr[-2000:]
    rows = [json.loads(line) for line in (out / "data.jsonl").read_text(encoding="utf-8").splitlines()]
    assert rows and (out / "README.md").is_file()
    assert _leftovers(out) == []


def test_a_sigterm_during_export_exits_143_and_leaves_nothing(finished_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "data"
    stopped = _export(_CARD_THEN.replace("{signal}", "SIGTERM"), "export", str(finished_run), "--to", "jsonl", str(out))
    assert stopped.returncode == 143, stopped.stderr[-2000:]
    assert [line for line in stopped.stderr.splitlines() if line.startswith("examiner:")] == [
        "examiner: interrupted by SIGTERM"]
    assert not out.exists() and _leftovers(out) == []


def test_a_staging_folder_of_a_running_process_is_kept(tmp_path: Path) -> None:
    out = tmp_path / "data"
    mine = tmp_path / f".data.partial-{os.getpid()}-abc"
    mine.mkdir()
    assert clear_stale(out) == [] and mine.is_dir()
    with staged_folder(out) as staging:
        (staging / "rows.jsonl").write_text("{}\n", encoding="utf-8")
    assert (out / "rows.jsonl").is_file() and mine.is_dir()


_KILLED_BEFORE_RENAME = """
import os, signal, sys
import examiner.core.staging as staging
staging.os.replace = lambda source, target: os.kill(os.getpid(), signal.SIGKILL)
import examiner.cli.main as cli
sys.argv = ["examiner", *sys.argv[1:]]
sys.exit(cli.main())
"""


def test_a_killed_distil_does_not_block_its_retry(tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps({"id": f"r{i}", "instruction": "q", "output_1": "a", "output_2": "b",
                                        "label": 1 + i % 2}) + "\n" for i in range(6)), encoding="utf-8")
    out = tmp_path / "distilled"
    killed = _export(_KILLED_BEFORE_RENAME, "distil", "--data", str(data), "--out", str(out))
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert not out.exists()
    again = _export(_CARD_THEN.replace("{signal}", "SIGCONT"), "distil", "--data", str(data), "--out", str(out))
    assert again.returncode == 0, again.stderr[-2000:]
    assert (out / "train.jsonl").is_file() and (out / "distil.json").is_file() and _leftovers(out) == []
