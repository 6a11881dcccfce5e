"""The exam's record index keeps JSON bytes and decodes on access: the records that come back equal the
ones put in, the last write under an id wins without moving it (as a dict assignment), iteration is over
the ids present when it began, and it takes a fraction of the memory of decoded records."""

from __future__ import annotations

import threading
import tracemalloc

from examiner.core.records import SourceRef, UnitRecord, VerdictRecord
from examiner.exam.recordindex import RecordIndex, index_of
from examiner.exam.store import RunStore


def unit(i: int, text: str = "") -> UnitRecord:
    return UnitRecord(id=f"u{i}", text=text or f"unit number {i} says something about the corpus",
                      sources=[SourceRef(document="doc", passage_id=f"p{i}", start=i, end=i + 40)], token_count=9)


def test_records_come_back_equal_and_replacement_keeps_the_position() -> None:
    index = RecordIndex(UnitRecord, cache_size=2)
    for i in range(5):
        index.put(f"u{i}", unit(i))
    index.put("u1", unit(1, "rewritten"))
    assert list(index) == ["u0", "u1", "u2", "u3", "u4"]
    assert index["u1"].text == "rewritten" and index["u3"] == unit(3)
    assert [u.id for u in index.values()] == ["u0", "u1", "u2", "u3", "u4"]  # more than the cache holds
    assert "u9" not in index and index.get("u9") is None and len(index) == 5
    copy = index.decoded()
    copy.pop("u0")
    assert "u0" in index


def test_iteration_walks_the_ids_present_when_it_began() -> None:
    index = index_of(UnitRecord, {f"u{i}": unit(i) for i in range(3)})
    seen = []
    for key in index:
        seen.append(key)
        index.put(f"new{key}", unit(99))
    assert seen == ["u0", "u1", "u2"] and len(index) == 6


def test_concurrent_readers_get_whole_records() -> None:
    index = index_of(UnitRecord, {f"u{i}": unit(i) for i in range(500)})
    index._cache_size = 16
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


def test_the_store_reloads_what_it_wrote_and_holds_bytes(tmp_path) -> None:
    store = RunStore(tmp_path)
    verdicts = [VerdictRecord(id=f"v{i}", answer_id=f"a{i}", question_id=f"q{i}", unit_id=f"u{i}", round=1,
                              target="t", type="correct", reason="the answer states it") for i in range(2000)]
    tracemalloc.start()
    store.append(verdicts)
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    decoded = sum(len(v.model_dump_json()) for v in verdicts)
    assert held < 3 * decoded  # bytes plus dict entries; decoded pydantic records take 5x their JSON
    assert store.get(VerdictRecord, "v7") == verdicts[7]
    assert list(RunStore(tmp_path).index(VerdictRecord)) == [f"v{i}" for i in range(2000)]
    assert RunStore(tmp_path).all(VerdictRecord)["v1999"] == verdicts[1999]
