"""The sample run with people's labels and named models: what the export tests read back.

Why a helper: the dataset export, the Inspect log and the OpenTelemetry spans must all carry the same
human labels and identities, so they start from the same run: one verdict overridden (correct -> incorrect,
written with the field names every version of overrides.jsonl reads), a random sample of four units of
which three are labelled, settings naming the models, one endpoint's URL carrying a password and one its
key's variable name (neither may reach an export).
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from examiner.core.human_sample import append_labels, read_sample, write_draw
from examiner.core.records import VerdictRecord
from examiner.core.rundir import CONFIG, OVERRIDES, RunDir
from examiner.reporting.human_sample import draw_sample, label_rows
from examiner.reporting.run_reader import load_run
from tests.helpers.sample_run import write_sample_run

SECRETS = ("hunter2", "SAMPLE_KEY_VAR")
"""Text in the settings that no export may carry (a URL's password, a key's variable name)."""
SETTINGS = {
    "endpoints": {
        "alpha": {"provider": "openai", "model": "alpha-7b", "base_url": "http://ana:hunter2@localhost:9/v1",
                  "api_key_env": "SAMPLE_KEY_VAR"},
        "beta": {"provider": "openai", "model": "beta-1b"},
        "judge-model": {"provider": "anthropic", "model": "judge-xl"},
        "examiner-model": {"provider": "openai", "model": "examiner-m"},
    },
    "roles": {"examiner": "examiner-model", "candidate": "alpha", "judge": "judge-model"},
}


def write_labelled_run(run_dir: Path) -> tuple[Path, VerdictRecord, list[str]]:
    """The sample run with labels; returns the run, the overridden verdict and the sample-labelled verdict ids."""
    run = write_sample_run(run_dir)
    (run / CONFIG).write_text(yaml.safe_dump(SETTINGS), encoding="utf-8")
    verdicts = RunDir(run).records(VerdictRecord)
    flipped = next(v for v in sorted(verdicts.values(), key=lambda v: v.id) if v.verdict == "correct")
    row = {"question_id": flipped.question_id, "unit_id": flipped.unit_id, "old": "correct", "new": "incorrect",
           "reason": "the answer names another river", "who": "ana", "at": "2026-11-24T10:00:00Z"}
    (run / OVERRIDES).write_text(json.dumps(row) + "\n", encoding="utf-8")
    draw = draw_sample(load_run(run), 4, seed=3, who="bo")
    write_draw(run, draw)
    sample = read_sample(run)
    assert sample is not None
    given = [{"target": u.target, "unit_id": u.unit_id, "verdict": "unrelated"} for u in draw.units[:3]
             if u.verdict_id != flipped.id]
    append_labels(run, label_rows(sample, given, who="bo", source="page"))
    labelled = [u.verdict_id for u in draw.units[:3] if u.verdict_id != flipped.id]
    return run, flipped, labelled
