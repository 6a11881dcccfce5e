"""What a simulated run paid for, read from its ledger, and a run killed once it has spent a given amount:
the budget, cache and run-lock tests compare these across kills, resumes and shared caches."""

from __future__ import annotations

from pathlib import Path

import yaml

from examiner.core import rundir
from examiner.core.config import Settings
from examiner.core.rundir import RunDir
from examiner.llm.ledger import answered, spent_usd
from tests.helpers.killing import kill_examiner_when

CORPUS = [str(p) for p in sorted(Path("corpora/examiner-handbook").glob("*.md"))[:2]]
"""About 20 knowledge units: an uninterrupted simulated exam of them costs about $0.06 (round 1: $0.03)."""


def paid_bodies(run_dir: Path) -> list[str]:
    """One entry per billed request: the simulated server's request id without its repeat counter, so
    the same request body sent twice shows up twice."""
    return [r.request_id.rsplit("-", 1)[0] for r in answered(RunDir(run_dir).ledger_records())
            if not r.cache_hit]


def spent(run_dir: Path) -> float:
    """Dollars the run's ledger says it spent."""
    return spent_usd(RunDir(run_dir).ledger_records())


def start_killed_run(settings: Settings, tmp_path: Path, *, kill_at_usd: float) -> Path:
    """`examiner run` in a subprocess, killed with SIGKILL once its ledger shows `kill_at_usd` spent."""
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(settings.model_dump(mode="json")), encoding="utf-8")
    run_dir = tmp_path / "killed"
    kill_examiner_when(["run", *CORPUS, "--config", str(config), "--out", str(run_dir), "--quiet"],
                       lambda: (run_dir / rundir.LEDGER).exists() and spent(run_dir) >= kill_at_usd)
    return run_dir
