"""Records are written once: a node that a resume runs again after a kill skips the records it already
wrote (the same id and content) and replaces one whose content changed, so every record file holds each
id on one line, as an uninterrupted run's does."""

from __future__ import annotations

import gc
from pathlib import Path

import yaml

from examiner.core import rundir
from examiner.core.records import SourceRef, UnitRecord
from examiner.core.rundir import RunDir
from examiner.exam.run_writer import RunStore
from examiner.llm.ledger import in_flight
from tests.helpers.killing import kill_until_finished, run_examiner_killed_at_new_records
from tests.helpers.run_files import lines, record_lines, repeated_ids
from tests.helpers.simulated_exam import sim_settings

CORPUS = "corpora/examiner-handbook/01-exam.md"
"""12 knowledge units; one round with its probes, the self-check and the outcomes: 8 appends."""


def unit(i: int, text: str = "") -> UnitRecord:
    return UnitRecord(id=f"u{i}", text=text or f"unit {i} of the corpus", token_count=5,
                      sources=[SourceRef(document="doc", passage_id=f"p{i}", start=i, end=i + 20)])


def test_an_append_skips_what_the_file_holds_and_replaces_what_changed(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.append([unit(i) for i in range(3)])
    store.close()
    resumed = RunStore(tmp_path)  # a resume: the node runs again and writes the same records
    resumed.append([unit(i) for i in range(3)])
    assert len(lines(tmp_path / rundir.UNITS)) == 3, "identical records are not written again"
    resumed.append([unit(1, "changed"), unit(3)])
    assert resumed.get(UnitRecord, "u1").text == "changed"
    assert RunDir(tmp_path).records(UnitRecord)["u1"].text == "changed", "readers see the last write"
    resumed.close()
    file = lines(tmp_path / rundir.UNITS)
    assert len(file) == 4, "closing the store leaves one line per id"
    assert [UnitRecord.model_validate_json(line).id for line in file] == ["u0", "u1", "u2", "u3"]
    again = RunStore(tmp_path)
    assert again.all(UnitRecord) == {"u0": unit(0), "u1": unit(1, "changed"), "u2": unit(2), "u3": unit(3)}
    again.append([unit(4)])
    assert again.get(UnitRecord, "u1").text == "changed" and again.get(UnitRecord, "u4") == unit(4)


def test_a_file_with_repeated_ids_is_rewritten_once_by_its_next_writer(tmp_path: Path) -> None:
    """A run directory written before records were kept once (or killed between a replacing append and
    the store's close) holds an id twice: the next process that writes the file leaves it once."""
    RunDir(tmp_path).append_records(UnitRecord, [unit(0), unit(1), unit(0), unit(1, "last")], repair=False)
    store = RunStore(tmp_path)
    store.append([unit(2)])
    store.close()
    assert [UnitRecord.model_validate_json(line).text for line in lines(tmp_path / rundir.UNITS)] == \
        [unit(0).text, "last", unit(2).text]


def test_kill_at_every_node_boundary_writes_each_record_once(tmp_path: Path) -> None:
    """`examiner run` killed with SIGKILL right after its first append (a node's records written, its
    checkpoint not), then `examiner resume` killed right after the first append of records not yet on
    disk, again and again: each resume runs the killed node again and is killed after the next node's
    records, until a resume finishes. Every record file then has the lines of an uninterrupted run, no
    id twice, and no call is left in flight in the ledger."""
    config = tmp_path / "config.yaml"
    settings = sim_settings(max_rounds=1).merged({"embedding_cache": str(tmp_path / "embeddings.sqlite")})
    config.write_text(yaml.safe_dump(settings.model_dump(mode="json")), encoding="utf-8")  # one embedding each
    reference, killed = tmp_path / "reference", tmp_path / "killed"
    run = ["run", CORPUS, "--config", str(config), "--quiet"]
    assert not run_examiner_killed_at_new_records([*run, "--out", str(reference)], kill=False)
    kills = kill_until_finished([*run, "--out", str(killed)], killed)
    assert kills >= 6, f"only {kills} node boundaries were killed at"
    assert record_lines(killed) == record_lines(reference)
    assert not any(repeated_ids(killed).values()), repeated_ids(killed)
    assert not in_flight(RunDir(killed).ledger_records())


def test_records_reach_a_file_only_after_before_append(tmp_path: Path) -> None:
    """The runner sets before_append to the response cache's flush: records are written after it returns,
    never before, so a kill cannot leave a record whose reply the cache lost (a resume would pay again)."""
    store = RunStore(tmp_path)
    seen: list[int] = []
    store.before_append = lambda: seen.append(len(lines(tmp_path / rundir.UNITS)))
    store.append([unit(0), unit(1)])
    store.append([])  # nothing to write: no wait
    store.hold([unit(2)])
    store.release(lambda r: r.id)
    store.close()
    assert seen == [0, 2] and len(lines(tmp_path / rundir.UNITS)) == 3


def test_held_records_are_kept_as_their_lines_and_written_in_order(tmp_path: Path) -> None:
    """A round's records wait in `hold` as the JSON lines they will be written as, not decoded (round 1 of a
    200,000-unit exam holds about 350,000 of them): `get` decodes an equal record, and `release` writes the
    lines `append` would, in the order given (records of equal keys as held), each id once."""
    held = RunStore(tmp_path / "held")
    held.append([unit(0)])
    before = sum(isinstance(o, UnitRecord) for o in gc.get_objects())
    held.hold([unit(i, f"unit {i}, held") for i in range(1, 201)])
    held.hold([unit(7, "held again: the last of an id wins")])
    gc.collect()
    assert sum(isinstance(o, UnitRecord) for o in gc.get_objects()) <= before, "no held record stays decoded"
    assert held.get(UnitRecord, "u7") == unit(7, "held again: the last of an id wins")
    assert held.get(UnitRecord, "u0") == unit(0) and "u5" not in held.index(UnitRecord)
    held.release(lambda r: r.id.startswith("u1"))  # u1, u10..u19, u100..u199 last, each side in held order
    held.close()
    order = [i for i in range(2, 201) if not str(i).startswith("1")] + [i for i in range(1, 201) if str(i).startswith("1")]
    appended = RunStore(tmp_path / "appended")
    appended.append([unit(0)])
    appended.append([unit(i, "held again: the last of an id wins" if i == 7 else f"unit {i}, held") for i in order])
    appended.close()
    assert lines(tmp_path / "held" / rundir.UNITS) == lines(tmp_path / "appended" / rundir.UNITS)
