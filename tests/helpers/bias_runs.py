"""A synthetic exam run with a judge of known biases, written without models: for the bias audit's tests.

Why synthetic: the audit's figures need a truth to be checked against. Here a three-member panel judges
two targets on 40 documents; the panel's first member `gpt-4o-mini` is of the same family as the target
`gpt-4o`, and with `length_bias` every member's chance of saying "correct" rises by that much per 100
tokens of answer. Members err independently with the noise given per member.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from examiner.core.assessments import MetaItem
from examiner.core.config import EndpointSpec, ExamSettings, Settings
from examiner.core.records import (
    AnswerRecord,
    MemberVerdict,
    QuestionRecord,
    RunInfo,
    SourceRef,
    UnitRecord,
    VerdictRecord,
)
from examiner.core.rundir import CONFIG, RunDir

TARGETS = {"gpt-4o": "gpt-4o", "llama": "llama-3.1-8b-instruct"}
"""Target endpoint -> the model it serves."""
MEMBERS = {"mini": ("gpt-4o-mini", 0.05), "claude": ("claude-3-5-haiku", 0.1), "qwen": ("qwen2.5-7b", 0.3)}
"""Panel member endpoint -> (model, chance of flipping the true verdict)."""
DOCUMENTS = 40
UNITS_PER_DOCUMENT = 6
WORDS = "the river city delta bridge market harbour valley tower castle".split()


def _dump(path: Path, records: list) -> None:
    path.write_text("".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")


def majority(types: list[str]) -> str:
    correct = types.count("correct")
    return "correct" if correct * 2 > len(types) else "incorrect"


def write_bias_run(run_dir: Path, *, length_bias: float = 0.0, seed: int = 0) -> Path:
    """The run directory (one round, one question and answer per unit and target); returns it."""
    rng = np.random.default_rng(seed)
    files = RunDir(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    units, questions, answers, verdicts = [], [], [], []
    for d in range(DOCUMENTS):
        for k in range(UNITS_PER_DOCUMENT):
            uid = f"ku-{d}-{k}"
            units.append(UnitRecord(id=uid, text=f"Fact {k} of document {d}.", token_count=5,
                                    sources=[SourceRef(document=f"doc{d}.txt", passage_id=f"p{d}", start=0, end=10)]))
    difficulty = rng.normal(0, 0.1, DOCUMENTS)
    for target in TARGETS:
        skill = 0.7 if target == "gpt-4o" else 0.55
        for i, unit in enumerate(units):
            d = i // UNITS_PER_DOCUMENT
            qid, aid = f"q-{target}-{unit.id}", f"a-{target}-{unit.id}"
            questions.append(QuestionRecord(id=qid, round=1, target=target, cluster_id=f"c{d}",
                                            text=f"What is fact {i}?", targets=[unit.id]))
            words = int(rng.integers(10, 300))
            answers.append(AnswerRecord(id=aid, question_id=qid, round=1, target=target,
                                        text=" ".join(rng.choice(WORDS, words))))
            p = float(np.clip(skill + difficulty[d] + length_bias * (words - 150) / 100, 0.02, 0.98))
            truth = "correct" if rng.random() < p else "incorrect"
            members = {}
            for name, (_, noise) in MEMBERS.items():
                own = truth if rng.random() >= noise else ("incorrect" if truth == "correct" else "correct")
                members[name] = MemberVerdict(verdict=own, reason="")  # type: ignore[arg-type]
            verdicts.append(VerdictRecord(id=f"v-{aid}", answer_id=aid, question_id=qid, unit_id=unit.id, round=1,
                                          target=target, verdict=majority([m.verdict for m in members.values()]),  # type: ignore[arg-type]
                                          reason="", members=members))
    files.write_info(RunInfo(run_id="bias-run", status="completed", targets=list(TARGETS), corpus_paths=[],
                             documents=DOCUMENTS, units=len(units), judges=list(MEMBERS)))
    endpoints = {name: {"provider": "openai", "base_url": "http://localhost:1/v1", "model": model}
                 for name, model in TARGETS.items()}
    endpoints.update({name: {"provider": "openai", "base_url": "http://localhost:1/v1", "model": model}
                      for name, (model, _) in MEMBERS.items()})
    files.file(CONFIG).write_text(yaml.safe_dump({"endpoints": endpoints, "roles": {"judge": "mini"}}), encoding="utf-8")
    _dump(files.record_file(UnitRecord), units)
    _dump(files.record_file(QuestionRecord), questions)
    _dump(files.record_file(AnswerRecord), answers)
    _dump(files.record_file(VerdictRecord), verdicts)
    return run_dir


def panel_exam_settings(judges: tuple[str, ...] = ("sim", "j1", "j2")) -> Settings:
    """A one-round simulated exam of the target `sim` judged by a panel of `judges` (endpoints `j1`, `j2`
    with their own noise and seed; `sim` is the target's own endpoint, so it judges its own answers)."""
    endpoints = {"sim": EndpointSpec(provider="simulated", model="sim", max_concurrency=16,
                                     options={"knowledge": {"known": 0.6, "wrong": 0.2, "unknown": 0.2}})}
    for i, (name, noise) in enumerate((("j1", 0.15), ("j2", 0.4))):
        endpoints[name] = EndpointSpec(provider="simulated", model=name, max_concurrency=16,
                                       options={"judge_noise": noise, "seed": 101 + i})
    return Settings(endpoints=endpoints, roles={"examiner": "sim", "candidate": "sim", "judge": "sim"},
                    judge_panel=list(judges), exam=ExamSettings(max_rounds=1))


META_ENDPOINTS = {
    "e80": {"provider": "simulated", "model": "sim-acc0.8", "max_concurrency": 16},
    "e65": {"provider": "simulated", "model": "sim-acc0.65", "max_concurrency": 16},
    "e50": {"provider": "simulated", "model": "sim-acc0.5", "max_concurrency": 16},
    "meta": {"provider": "simulated", "model": "sim-rel0.9", "max_concurrency": 16},
}
"""Simulated evaluators of set accuracy and a meta-judge, as tests/meta's pipeline tests use them."""


def meta_settings() -> Settings:
    return Settings(endpoints={k: EndpointSpec(**v) for k, v in META_ENDPOINTS.items()}, roles={"meta_judge": "meta"})


def meta_pair_items(n: int) -> list[MetaItem]:
    """Pairwise meta items with gold labels alternating between the two outputs."""
    return [MetaItem(id=f"p{i}", kind="pairwise", instruction=f"Summarise fact {i}.", output_1=f"Fact {i} holds.",
                     output_2=f"Something else about {i}.", gold_label="Answer2" if i % 2 else "Answer1")
            for i in range(n)]
