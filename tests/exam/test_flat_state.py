"""The exam's graph state stays flat: checkpoints hold keys, the bulk state lives in state.sqlite as
immutable values, unit vectors sit in one matrix, and a resume says what it decided first."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from types import MethodType, SimpleNamespace

import numpy as np
import pytest

from examiner.core import rundir
from examiner.core.records import UnitRecord
from examiner.exam.nodes.context import UnitVectors
from examiner.exam.runner import ExamRequest, resume_exam, start_exam
from examiner.exam import statestore
from examiner.exam.statestore import StateStore
from examiner.exam.run_writer import RunStore
from tests.helpers.datasets import FIXTURE_DATA
from tests.helpers.simulated_exam import sim_settings


def largest_checkpoint(run_dir: Path) -> int:
    """Bytes of the largest checkpoint or pending write LangGraph saved for the run."""
    with closing(sqlite3.connect(run_dir / rundir.CHECKPOINTS)) as db:
        checkpoint = db.execute("SELECT MAX(LENGTH(checkpoint)) FROM checkpoints").fetchone()[0]
        write = db.execute("SELECT MAX(LENGTH(value)) FROM writes").fetchone()[0]
    return max(checkpoint, write)


def corpus_of(folder: Path, documents: int) -> Path:
    """`documents` of the invented PubMedQA-shaped abstracts (tests/fixtures/data), one file each (about 10
    knowledge units per abstract)."""
    from examiner.corpus.benchmarks import load_pubmedqa

    folder.mkdir()
    for item in load_pubmedqa(root=FIXTURE_DATA)[:documents]:
        (folder / f"{item.pubid}.txt").write_text("\n\n".join(item.contexts), encoding="utf-8")
    return folder


async def test_checkpoints_do_not_grow_with_the_units(tmp_path: Path) -> None:
    """One round on N units and on about 3.5N: the largest checkpoint barely changes (when the state carried
    every unit id, it grew with them: 2.5x here, 7.2 KB to 18 KB)."""
    settings = sim_settings(max_rounds=1, max_probes=0)
    sizes, units = [], []
    for documents in (3, 12):
        run_dir = tmp_path / f"run-{documents}"
        await start_exam(settings, ExamRequest([str(corpus_of(tmp_path / f"corpus-{documents}", documents))]),
                         run_dir, quiet=True, report=False)
        sizes.append(largest_checkpoint(run_dir))
        units.append(len(RunStore(run_dir).all(UnitRecord)))
    assert units[1] >= 3 * units[0]
    assert sizes[1] < 1.3 * sizes[0], f"largest checkpoint {sizes} bytes for {units} units"


def test_state_values_are_immutable_and_keyed_by_content(tmp_path: Path) -> None:
    """The same value gets the same key (a node run again after a kill writes nothing new); values survive
    reopening; a missing key is a KeyError naming the file."""
    store = StateStore(tmp_path / rundir.STATE)
    book = {"pool": ["u2", "u1"], "covered": {"u3": "v1"}}
    key = store.put(book)
    assert store.put({"covered": {"u3": "v1"}, "pool": ["u2", "u1"]}) == key
    assert store.put({**book, "pool": ["u1"]}) != key
    store.close()
    reopened = StateStore(tmp_path / rundir.STATE)
    assert reopened.get(key) == book
    with closing(sqlite3.connect(tmp_path / rundir.STATE)) as db:
        assert db.execute("SELECT COUNT(*) FROM state_values").fetchone()[0] == 2
    with pytest.raises(KeyError, match=rundir.STATE):
        reopened.get("0" * 64)
    reopened.close()


def test_decoded_values_kept_are_bounded_by_their_json_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Books of a large pool are not all kept decoded: the cache drops the oldest past its byte bound, keeps
    the one used last even when it alone is larger, and a dropped value still reads back from disk."""
    monkeypatch.setattr(statestore, "CACHED_JSON_BYTES", 10_000)
    store = StateStore(tmp_path / rundir.STATE)
    books = [{"pool": [f"ku-{round_:02d}-{i:05d}" for i in range(300)]} for round_ in range(5)]
    keys = [store.put(book) for book in books]  # about 4,800 JSON bytes each
    assert store.cached_json_bytes <= 10_000
    big = {"pool": [f"ku-{i:06d}" for i in range(2_000)]}
    big_key = store.put(big)
    assert store.cached_json_bytes > 10_000, "the value used last stays, however large"
    assert [store.get(key) for key in keys] == books
    assert store.cached_json_bytes <= 10_000
    assert store.get(big_key) == big
    store.close()


def test_unit_vectors_are_rows_of_one_matrix() -> None:
    """Rows come back in the order asked, as given, across appends that grow the matrix."""
    rng = np.random.default_rng(0)
    vectors = UnitVectors()
    first, second = rng.random((3, 4), dtype=np.float32), rng.random((5, 4), dtype=np.float32)
    vectors.add(["a", "b", "c"], first)
    vectors.add(["d", "e", "f", "g", "h"], second)
    assert np.array_equal(vectors.rows(["h", "a", "c"]), np.stack([second[4], first[0], first[2]]))
    assert vectors.rows([]).shape == (0, 4)


def test_round_one_rows_are_one_read_only_view_of_a_matrix_grown_once() -> None:
    """The pool of round 1 (every unit, in the order embedded) comes back as a view of the matrix, not a copy,
    and a pool added chunk by chunk with its `room` grows the matrix once: at 200,000 units each copy of the
    pool's rows is 300 MB at round 1's peak. Other orders come back as copies; no rows can be written."""
    rng = np.random.default_rng(1)
    first, second = rng.random((3, 4), dtype=np.float32), rng.random((2, 4), dtype=np.float32)
    vectors = UnitVectors()
    vectors.add(["a", "b", "c"], first, room=5)
    early = vectors.rows(["a", "b", "c"])
    vectors.add(["d", "e"], second, room=2)
    every = vectors.rows(["a", "b", "c", "d", "e"])
    assert np.array_equal(every, np.concatenate([first, second]))
    assert np.shares_memory(early, every), "the room asked for came at once: the second chunk did not grow it"
    assert np.shares_memory(every, vectors.rows(["a", "b", "c", "d", "e"])), "the whole pool in order: a view"
    reordered = vectors.rows(["b", "a", "c", "d", "e"])
    assert not np.shares_memory(reordered, every)
    assert np.array_equal(reordered, every[[1, 0, 2, 3, 4]])
    for rows in (every, reordered, vectors.rows(["e"])):
        with pytest.raises(ValueError):
            rows[0, 0] = 1.0


def test_unit_vectors_are_embedded_chunk_by_chunk_into_the_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    """ExamContext.vectors embeds what is missing EMBED_CHUNK texts a call, the calls Embedder.embed makes in
    one go, so the rows are the same, without the whole pool's vectors held beside the matrix."""
    from examiner.exam.nodes import context

    calls: list[int] = []

    class Embedder:
        def embed(self, texts: list[str]) -> np.ndarray:
            calls.append(len(texts))
            return np.array([[float(t[1:]), 1.0] for t in texts], dtype=np.float32)

    monkeypatch.setattr(context, "EMBED_CHUNK", 4)
    ids = [f"u{i}" for i in range(10)]
    ctx = SimpleNamespace(_vectors=UnitVectors(), embedder=Embedder(),
                          units={uid: SimpleNamespace(text=uid) for uid in ids})
    rows = context.ExamContext.vectors(ctx, ids)  # type: ignore[arg-type]
    assert calls == [4, 4, 2]
    assert np.array_equal(rows, np.array([[i, 1.0] for i in range(10)], dtype=np.float32))
    assert np.array_equal(context.ExamContext.vectors(ctx, ids[::-1]), rows[::-1])  # type: ignore[arg-type]
    assert calls == [4, 4, 2], "embedded once per run and unit"


def test_store_index_is_read_only_and_not_a_copy(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    index = store.index(UnitRecord)
    store.append([UnitRecord(id="u1", text="a", token_count=1, sources=[])])
    assert list(index) == ["u1"], "the index shows later appends: it is the store's own"
    with pytest.raises(TypeError):
        index["u2"] = index["u1"]  # type: ignore[index]


async def test_resume_announces_its_first_decision(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A budget-stopped run continued with a larger cap names the node it goes back to; a completed run
    says it only rebuilds its reports; --quiet prints neither."""
    corpus = [str(p) for p in sorted(Path("corpora/examiner-handbook").glob("*.md"))[:1]]
    run_dir = tmp_path / "run"
    settings = sim_settings(max_rounds=1).merged({"budget_usd": 0.005})
    info = await start_exam(settings, ExamRequest(corpus, run_id="stopped"), run_dir, quiet=True, report=False)
    assert info.status == "budget_exhausted"
    capsys.readouterr()
    info = await resume_exam(run_dir, quiet=False, report=False, budget_usd=10.0)
    assert info.status == "completed", info.stop_reason
    first = [line for line in capsys.readouterr().err.splitlines() if line.strip()][0]
    assert first.startswith("resume: continuing from the checkpoint before node "), first
    assert first.endswith("where the budget ran out")

    await resume_exam(run_dir, quiet=False, report=False)
    assert capsys.readouterr().err.splitlines()[0] == "resume: run stopped is complete; nothing to do"
    await resume_exam(run_dir, quiet=True, report=False)
    assert "resume:" not in capsys.readouterr().err


def test_the_coverage_update_reads_a_round_as_fields_not_records(tmp_path: Path) -> None:
    """update_coverage reads the round's verdicts as Judged tuples (questions before probes, then by id),
    not as the decoded records (1.3 KB each; round 1 of a 200,000-unit exam has about 240,000), and the
    pool comes out as the records would leave it."""
    from examiner.core.records import QuestionRecord, VerdictRecord
    from examiner.exam.nodes import context
    from examiner.exam.nodes.coverage import Judged, TargetRound, apply_verdicts, round_verdicts

    store = RunStore(tmp_path)
    question = QuestionRecord(id="q1", round=1, target="t", cluster_id="c", text="?", targets=["u1", "u2"])
    probe = question.model_copy(update={"id": "q0", "kind": "probe", "parent_id": "q1", "targets": ["u1"]})
    store.append([question, probe])
    verdicts = [VerdictRecord(id=vid, answer_id="a", question_id=qid, unit_id=uid, round=1, target="t",
                              verdict=label, reason="r")
                for vid, qid, uid, label in (("v0", "q0", "u1", "correct"), ("v2", "q1", "u2", "unrelated"),
                                             ("v1", "q1", "u1", "incorrect"))]
    store.append(verdicts)
    ctx = SimpleNamespace(store=store)
    ctx.work = MethodType(context.ExamContext.work, ctx)
    judged = round_verdicts(ctx, {"round_verdicts": store.values.put(["v0", "v1", "v2"])})  # type: ignore[arg-type]
    assert all(isinstance(v, Judged) for v in judged)
    assert [v.id for v in judged] == ["v1", "v2", "v0"], "questions before probes, then by id"
    by_fields = TargetRound(pool=["u1", "u2", "u3"], covered={}, targeted={}, times={}, unanswered=[])
    by_records = TargetRound(pool=["u1", "u2", "u3"], covered={}, targeted={}, times={}, unanswered=[])
    apply_verdicts(by_fields, judged, max_targeted=3)
    apply_verdicts(by_records, [verdicts[2], verdicts[1], verdicts[0]], max_targeted=3)
    assert by_fields == by_records and by_fields.pool == ["u2", "u3"] and by_fields.covered == {"u1": "v1"}
    store.close()
