"""A small, realistic run directory written without models: for the report's tests and for previewing.

Why a shared helper: the report, the provenance graph and `compare` all need the same run shape, and a
person checking the HTML by eye needs one too (`python -m tests.helpers.sample_run DIR` from the repository
root, then `examiner report DIR`).
Two targets sit the same paper over a two-document corpus; `alpha` knows most units, `beta` fewer.
The records are written the way a resumed run writes them: some ids appear twice, the ledger ends in a
torn line.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from examiner.corpus.reading import load_corpus
from examiner.core.records import (
    AnswerRecord,
    ClusterRecord,
    ClusterRound,
    QuestionRecord,
    RoundSummary,
    RunInfo,
    SourceRef,
    UnitOutcome,
    UnitRecord,
    VerdictRecord,
)
from examiner.core.rundir import CONFIG, LEDGER, PASSAGES, RunDir

DOCUMENTS = {
    "rivers.txt": (
        "The Danube flows through ten countries. It rises in the Black Forest of Germany.\n\n"
        "The Danube empties into the Black Sea through a wide delta. The delta is a protected wetland.\n\n"
        "Vienna, Budapest and Belgrade stand on the Danube. Budapest grew from the towns of Buda and Pest."
    ),
    "glaciers.md": (
        "# Glaciers\n\n"
        "A glacier forms where snow accumulates faster than it melts. Compacted snow turns into firn and "
        "then into glacial ice.\n\n"
        "Glaciers move under their own weight. Crevasses open where the ice flows over uneven ground.\n\n"
        "Louis Agassiz proposed the theory of past ice ages in 1837. Moraines mark the furthest advance "
        "of a glacier."
    ),
}

ALPHA_WRONG = {4, 10}
"""Unit indices `alpha` answers wrongly; every other unit it knows."""
BETA_WRONG = {1, 4, 7, 10}
BETA_UNKNOWN = {2, 11}
"""Units `beta` never covers: they come back each round and end `unanswered`."""
LATE = {"alpha": {3, 7}, "beta": {5}}
"""Units the answer misses in round 1 only: they return to the pool and are covered in round 2."""
QTYPES = ["where", "what", "how", "who", "when", "why"]


def _id(prefix: str, *parts: Any) -> str:
    return prefix + "-" + hashlib.sha256("\x00".join(map(str, parts)).encode()).hexdigest()[:10]


def _dump(path: Path, records: list[BaseModel], duplicate_every: int = 0) -> None:
    lines = []
    for i, record in enumerate(records):
        lines.append(record.model_dump_json())
        if duplicate_every and i % duplicate_every == 0:
            lines.append(record.model_dump_json())  # rewritten after a resume
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_sample_run(run_dir: str | Path, corpus_dir: str | Path | None = None, *,
                     targets: tuple[str, ...] = ("alpha", "beta"), status: str = "completed",
                     stop_reason: str = "pool_empty", with_outcomes: bool = True, with_passages: bool = False) -> Path:
    """Write the corpus (beside the run unless given) and a run directory; returns the run directory.
    `with_passages` adds passages.jsonl (id, document, span, text), where reports read source passages."""
    run = Path(run_dir)
    run.mkdir(parents=True, exist_ok=True)
    files = RunDir(run)
    corpus_root = Path(corpus_dir) if corpus_dir else run.parent / "sample-corpus"
    corpus_root.mkdir(parents=True, exist_ok=True)
    for name, text in DOCUMENTS.items():
        (corpus_root / name).write_text(text, encoding="utf-8")
    corpus = load_corpus(corpus_root)

    units: list[UnitRecord] = []
    for passage in corpus.passages:
        if passage.text.startswith("#"):
            continue
        pos = 0
        for sentence in passage.text.replace(". ", ".\n").splitlines():
            a = passage.text.index(sentence, pos)
            pos = a + len(sentence)
            units.append(UnitRecord(
                id=_id("ku", sentence), text=sentence, token_count=len(sentence.split()),
                sources=[SourceRef(document=passage.document, passage_id=passage.id,
                                   start=passage.start + a, end=passage.start + pos)]))
    ids = [u.id for u in units]

    questions: list[QuestionRecord] = []
    answers: list[AnswerRecord] = []
    verdicts: list[VerdictRecord] = []
    outcomes: list[UnitOutcome] = []
    summaries: list[RoundSummary] = []
    ledger: list[dict[str, Any]] = []

    def call(role: str, stage: str, rnd: int, unit_ids: list[str], p: int, c: int, endpoint: str,
             cache_hit: bool = False) -> None:
        ledger.append({"role": role, "stage": stage, "round": rnd, "unit_ids": unit_ids, "item_id": "",
                       "endpoint": endpoint, "model": endpoint, "prompt_tokens": p, "completion_tokens": c,
                       "cost_usd": 0.0 if cache_hit else (p * 10 + c * 30) / 1e6, "cache_hit": cache_hit,
                       "latency_s": 0.1, "outcome": "ok"})

    for target in targets:
        wrong = ALPHA_WRONG if target == targets[0] else BETA_WRONG
        always_unknown = set() if target == targets[0] else BETA_UNKNOWN
        late = LATE["alpha" if target == targets[0] else "beta"]
        last_cluster: dict[int, str] = {}
        pool = list(range(len(ids)))
        times_uncovered = {i: 0 for i in pool}
        status_of: dict[int, tuple[str, str, str, int, str]] = {}
        rnd = 0
        while pool and rnd < 4:
            rnd += 1
            k = max(1, len(pool) // 4)
            groups = [pool[j::k] for j in range(k)]
            clusters = [ClusterRecord(id=_id("c", target if rnd > 1 else "", rnd, j), center=ids[g[0]],
                                      members=[ids[i] for i in g]) for j, g in enumerate(groups)]
            projection = {ids[i]: (float(j * 3 + (i % 3) * 0.4), float(j % 2 * 2 + (i % 4) * 0.3))
                          for j, g in enumerate(groups) for i in g}
            files.write_clusters(ClusterRound(round=rnd, target=target, k=k, clusters=clusters, projection=projection))
            covered_now: list[int] = []
            unknown = always_unknown | (late if rnd == 1 else set())
            for cluster, group in zip(clusters, groups):
                call("examiner", "question", rnd, cluster.members, 320, 40, "examiner-model")
                q = QuestionRecord(id=_id("q", target, cluster.id), round=rnd, target=target,
                                   cluster_id=cluster.id, text=f"Tell me about {units[group[0]].text.split()[1]}?",
                                   targets=cluster.members, qtype=QTYPES[(group[0] + rnd) % len(QTYPES)],  # type: ignore[arg-type]
                                   leak_rejections=1 if group[0] == 0 else 0)
                questions.append(q)
                call("candidate", "answer", rnd, cluster.members, 80, 60, target)
                known = [units[i].text for i in group if i not in unknown and i not in wrong]
                answer_text = " ".join(known) or "I am not sure about this."
                if any(i in wrong for i in group):
                    answer_text += " The Danube rises in the Alps." if target == targets[0] else " It is in Asia."
                a = AnswerRecord(id=_id("a", q.id), question_id=q.id, round=rnd, target=target,
                                 text=answer_text, bleu=round(10.0 + 60.0 * len(known) / len(group), 2),
                                 embedding_similarity=round(0.3 + 0.6 * len(known) / len(group), 3))
                answers.append(a)
                call("judge", "judge", rnd, cluster.members, 450, 90, "judge-model", cache_hit=(rnd == 1 and
                                                                                               target != targets[0]))
                for i in group:
                    last_cluster[i] = cluster.id
                    if i in unknown:
                        vtype, reason = "unrelated", "The answer does not mention this."
                    elif i in wrong:
                        vtype, reason = "incorrect", (f"The answer says something else; the reference says: "
                                                      f"{units[i].text}")
                    else:
                        vtype, reason = "correct", "Matches the reference."
                    v = VerdictRecord(id=_id("v", a.id, ids[i]), answer_id=a.id, question_id=q.id,
                                      unit_id=ids[i], round=rnd, target=target, type=vtype, reason=reason)  # type: ignore[arg-type]
                    verdicts.append(v)
                    if vtype in ("correct", "incorrect"):
                        status_of[i] = (vtype, v.id, cluster.id, rnd, q.qtype)
                        covered_now.append(i)
                    else:
                        times_uncovered[i] += 1
            before = len(pool)
            pool = [i for i in pool if i not in covered_now]
            dropped = [i for i in pool if times_uncovered[i] >= 2]
            pool = [i for i in pool if i not in dropped]
            for i in dropped:
                status_of[i] = ("unanswered", "", last_cluster[i], 0, "")
            summaries.append(RoundSummary(round=rnd, target=target, pool_before=before, clusters=k,
                                          questions=k, probes=0, covered=len(covered_now), pool_after=len(pool),
                                          unanswered_new=len(dropped)))
        for i, uid in enumerate(ids):
            st = status_of.get(i, ("uncovered", "", "", 0, ""))
            outcomes.append(UnitOutcome(
                unit_id=uid, target=target, status=st[0], verdict_id=st[1] or None,  # type: ignore[arg-type]
                times_targeted=times_uncovered[i] + (1 if st[1] else 0),
                times_targeted_uncovered=times_uncovered[i], covered_round=st[3] or None,
                cluster_id=st[2] or None, qtype=st[4] or None))  # type: ignore[arg-type]

    info = RunInfo(run_id="sample-run", status=status, stop_reason=stop_reason, targets=list(targets),  # type: ignore[arg-type]
                   corpus_paths=[str(corpus_root)], documents=len(corpus.documents),
                   passages=len(corpus.passages), units=len(units),
                   skipped_files=[{"path": str(corpus_root / "image.bin"), "reason": "binary file"}],
                   rounds=summaries, unparseable_judgments=0, leak_rejections=1, ignored_verdicts=1,
                   started=1_700_000_000.0, finished=1_700_000_042.0)
    files.write_info(info)
    files.file(CONFIG).write_text("mode: refeval\ncluster_size: 4\nmax_rounds: 4\n", encoding="utf-8")
    _dump(files.record_file(UnitRecord), units)
    _dump(files.record_file(QuestionRecord), questions, duplicate_every=3)
    _dump(files.record_file(AnswerRecord), answers, duplicate_every=2)
    _dump(files.record_file(VerdictRecord), verdicts, duplicate_every=5)
    if with_outcomes:
        _dump(files.record_file(UnitOutcome), outcomes, duplicate_every=4)
    if with_passages:
        rows = [{"id": p.id, "document": p.document, "start": p.start, "end": p.end, "text": p.text}
                for p in corpus.passages]
        files.file(PASSAGES).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    call("examiner", "extract_units", 0, [], 0, 0, "examiner-model")
    ledger[-1]["outcome"] = "failed"
    text = "\n".join(json.dumps(r) for r in ledger) + "\n" + '{"role": "judge", "stage'  # torn by a kill
    files.file(LEDGER).write_text(text, encoding="utf-8")
    return run


if __name__ == "__main__":
    print(write_sample_run(sys.argv[1] if len(sys.argv) > 1 else "runs/sample"))
