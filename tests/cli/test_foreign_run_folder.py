"""A run folder is data, not code: a folder written by someone else (a CI artifact, a shared drive) whose files
carry payloads that would run a command if their reader built objects from them (a checkpoint naming
os.system, pickles, lc constructors, a python-tagged YAML) never runs it. Each command that reads a run
folder (resume, report, view, export, distil) either refuses with one line (exit 2) or ignores the foreign
object; the marker file the payload would create never appears."""

from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path

import ormsgpack
import pytest
import yaml
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from examiner.core import rundir
from examiner.core.errors import UserError
from examiner.exam.checkpoints import ExamSerializer, ForeignCheckpoint, checkpoint_problem
from examiner.reporting.view_server import ReviewServer
from tests.helpers import foreign_payloads as payloads
from tests.helpers.cli_runs import as_killed, assert_one_error, run_cli


@pytest.fixture()
def marker(tmp_path: Path) -> Path:
    return tmp_path / "pwned"


def test_the_payloads_run_their_command_when_built(marker: Path) -> None:
    """The payloads are real: LangGraph's permissive serializer, pickle and yaml's unsafe loader run them."""
    packed = ormsgpack.packb({"stop_reason": payloads.msgpack_call(marker)})
    loaders = [lambda: JsonPlusSerializer(allowed_msgpack_modules=True).loads_typed(("msgpack", packed)),
               lambda: pickle.loads(payloads.pickled(marker)),  # noqa: S301 - the point of the check
               lambda: yaml.unsafe_load(payloads.yaml_call(marker))]
    for load in loaders:
        load()
        assert marker.exists()
        marker.unlink()


@pytest.mark.parametrize("kind", ["msgpack", "json", "pickle"])
def test_the_exam_serializer_builds_nothing_it_did_not_write(kind: str, marker: Path) -> None:
    data = {"msgpack": ormsgpack.packb({"stop_reason": payloads.msgpack_call(marker)}),
            "json": json.dumps(payloads.lc_constructor(marker)).encode(), "pickle": payloads.pickled(marker)}[kind]
    with pytest.raises(ForeignCheckpoint):
        ExamSerializer().loads_typed((kind, data))
    assert not marker.exists()
    assert ExamSerializer().loads_typed(("msgpack", ormsgpack.packb({"round": 2}))) == {"round": 2}


def test_examiners_own_checkpoints_pass_the_check(finished_run: Path) -> None:  # noqa: F811
    assert checkpoint_problem(finished_run / rundir.CHECKPOINTS) is None


@pytest.mark.parametrize("how", ["msgpack", "json", "pickle"])
def test_resume_refuses_a_checkpoint_naming_a_call_in_one_line(how: str, finished_run: Path, tmp_path: Path,  # noqa: F811
                                                               marker: Path, capsys, caplog) -> None:
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    as_killed(run)
    payloads.plant_in_checkpoints(run / rundir.CHECKPOINTS, marker, how)
    before = (run / rundir.RUN_INFO).read_bytes()
    code, lines, _ = run_cli(["resume", str(run), "--quiet"], capsys, caplog)
    assert_one_error(code, lines, str(run / rundir.CHECKPOINTS), "not written by examiner")
    assert not marker.exists()
    assert (run / rundir.RUN_INFO).read_bytes() == before  # refused before anything was written


def _plant(run: Path, kind: str, marker: Path) -> None:
    if kind == "checkpoints":
        payloads.plant_in_checkpoints(run / rundir.CHECKPOINTS, marker, "msgpack")
    elif kind == "config":
        (run / rundir.CONFIG).write_text(payloads.yaml_call(marker), encoding="utf-8")
    elif kind.endswith(".sqlite"):
        assert payloads.plant_in_sqlite_values(run / kind, marker) > 0
    elif kind == rundir.OVERRIDES:
        row = {"question_id": "q", "unit_id": "u", "verdict_before": "incorrect", "verdict": "correct",
               "reason": "checked", "who": "ana", "at": "2026-11-22T16:50:00Z"}
        (run / kind).write_text(json.dumps(row) + "\n", encoding="utf-8")
        payloads.plant_in_jsonl(run / kind, marker)
    elif kind == "records":
        for path in sorted(run.glob("*.jsonl")):
            payloads.plant_in_jsonl(path, marker)
    elif kind.endswith(".json"):
        payloads.plant_in_jsonl(run / kind, marker)
    else:
        raise ValueError(kind)


KINDS = ["checkpoints", "config", rundir.CACHE, rundir.STATE, rundir.EMBEDDINGS, rundir.OVERRIDES, "records",
         rundir.RUN_INFO, rundir.REQUEST]


@pytest.mark.parametrize("kind", KINDS)
def test_no_command_runs_a_payload_planted_in_a_run_folder(kind: str, finished_run: Path, tmp_path: Path,  # noqa: F811
                                                           marker: Path, capsys, caplog) -> None:
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    as_killed(run)
    _plant(run, kind, marker)
    commands = [["resume", str(run), "--quiet"], ["report", str(run)],
                ["export", str(run), "--to", "jsonl", str(tmp_path / "export")],
                ["distil", "--exam", str(run), "--out", str(tmp_path / "distil")]]
    for args in commands:
        code, lines, _ = run_cli(args, capsys, caplog)
        if code != 0:
            assert_one_error(code, lines)
        assert not marker.exists(), args
    try:
        ReviewServer(run, who="ana").rows()  # what `examiner view` reads
    except UserError:  # a refusal is fine (the one-line kind)
        pass
    assert not marker.exists()
