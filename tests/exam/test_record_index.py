"""The exam's record index keeps where each record lies in its file and decodes on access: the records
that come back equal the ones written, the last write under an id wins without moving it (as a dict
assignment), iteration is over the ids present when it began, and it takes a fraction of the memory of
the records' JSON."""

from __future__ import annotations

import threading
import tracemalloc
from pathlib import Path

from examiner.core.records import SourceRef, UnitRecord, VerdictRecord
from examiner.core.rundir import RunDir
from examiner.exam.recordindex import RecordIndex
from examiner.exam.run_writer import RunStore


def unit(i: int, text: str = "") -> UnitRecord:
    return UnitRecord(id=f"u{i}", text=text or f"unit number {i} says something about the corpus",
                      sources=[SourceRef(document="doc", passage_id=f"p{i}", start=i, end=i + 40)], token_count=9)


def index_of(folder: Path, units: list[UnitRecord], cache_size: int = 16) -> RecordIndex[UnitRecord]:
    """An index over a units.jsonl holding `units`, as the store builds it."""
    run = RunDir(folder)
    spans = run.append_records(UnitRecord, units, repair=False)
    index = RecordIndex(UnitRecord, run.record_file(UnitRecord), cache_size=cache_size)
    index.put_spans((u.id, span) for u, span in zip(units, spans))
    return index


def test_records_come_back_equal_and_replacement_keeps_the_position(tmp_path: Path) -> None:
    index = index_of(tmp_path, [unit(i) for i in range(5)], cache_size=2)
    rewritten = RunDir(tmp_path).append_records(UnitRecord, [unit(1, "rewritten")], repair=False)
    index.put_span("u1", rewritten[0])
    assert list(index) == ["u0", "u1", "u2", "u3", "u4"]
    assert index["u1"].text == "rewritten" and index["u3"] == unit(3)
    assert [u.id for u in index.values()] == ["u0", "u1", "u2", "u3", "u4"]  # more than the cache holds
    assert "u9" not in index and index.get("u9") is None and len(index) == 5
    copy = index.decoded()
    copy.pop("u0")
    assert "u0" in index


def test_iteration_walks_the_ids_present_when_it_began(tmp_path: Path) -> None:
    index = index_of(tmp_path, [unit(i) for i in range(3)])
    seen = []
    for key in index:
        seen.append(key)
        index.put_span(f"new{key}", (0, 10))
    assert seen == ["u0", "u1", "u2"] and len(index) == 6


def test_concurrent_readers_get_whole_records(tmp_path: Path) -> None:
    index = index_of(tmp_path, [unit(i) for i in range(500)], cache_size=16)
    errors: list[BaseException] = []

    def read() -> None:
        try:
            for _ in range(3):
                for i in range(500):
                    assert index[f"u{i}"].id == f"u{i}"
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_the_store_reloads_what_it_wrote_and_holds_little(tmp_path) -> None:
    store = RunStore(tmp_path)

    def verdicts(lo: int, hi: int) -> list[VerdictRecord]:
        return [VerdictRecord(id=f"v{i}", answer_id=f"a{i}", question_id=f"q{i}", unit_id=f"u{i}", round=1,
                              target="t", type="correct", reason="the answer states it") for i in range(lo, hi)]

    first, more = verdicts(0, 2000), verdicts(2000, 4000)
    store.append(first)  # builds the index (and warms pydantic's caches) before anything is measured
    tracemalloc.start()
    store.append(more)
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    json_bytes = sum(len(v.model_dump_json()) for v in more)
    assert held < json_bytes / 2  # an id and an int per record; decoded pydantic records take 5x their JSON
    assert store.get(VerdictRecord, "v7") == first[7] and store.get(VerdictRecord, "v3999") == more[-1]
    assert list(RunStore(tmp_path).index(VerdictRecord)) == [f"v{i}" for i in range(4000)]
    assert RunStore(tmp_path).all(VerdictRecord)["v1999"] == first[1999]


def test_a_record_after_a_torn_tail_is_read_from_where_it_landed(tmp_path: Path) -> None:
    """A resumed store indexes the file as it finds it, a torn last line left out; the repair before the
    first append cuts it, and the records written after it read back whole."""
    store = RunStore(tmp_path)
    store.append([unit(i) for i in range(3)])
    store.close()
    with (tmp_path / "units.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(unit(3).model_dump_json()[:20])  # a kill mid-line
    resumed = RunStore(tmp_path)
    assert list(resumed.index(UnitRecord)) == ["u0", "u1", "u2"]
    resumed.append([unit(3), unit(0, "rewritten")])
    assert resumed.get(UnitRecord, "u3") == unit(3) and resumed.get(UnitRecord, "u0").text == "rewritten"
    assert RunStore(tmp_path).all(UnitRecord) == {"u0": unit(0, "rewritten"), "u1": unit(1), "u2": unit(2), "u3": unit(3)}
