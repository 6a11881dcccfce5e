"""Rewording every prompt file changes no simulated result: the simulator reads structure, not prose.

Regression guarded: the simulated backend used to choose behaviour by matching prompt sentences
("This is round N of at most M", "under N words", "1-10", "Your judgment (...)") and keyed its random
draws on the whole prompt text, so editing a prompt's wording changed simulated results and broke tests.

The rewording keeps what code relies on: the `### system` / `### user` headers, every `$placeholder`
(where code substitutes data), and lines that hold only a tag such as `<instruction>` or `</response>`
(they delimit a substituted value, like the tagged blocks of prompting/meta_blocks.py). Every other
word, number and punctuation mark is replaced by nonsense.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import random
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

import examiner.prompts as prompts
from examiner.core.names import EXAM_JUDGE_METHODS
from examiner.cli.main import main
from examiner.core.config import EndpointSpec, Settings
from examiner.exam.runner import ExamRequest, start_exam
from examiner.agents.prompting import _sections, render

_KEEP_LINE = re.compile(r"^(### (system|user)|</?[a-z][a-z0-9_]*>)\s*$")
_PLACEHOLDER = re.compile(r"\$(?:\{(\w+)\}|(\w+))")
_NONSENSE = ("blorp", "quindle", "zarf", "mimsy", "wug", "frabble", "gloam", "snick", "vorpal", "tove",
             "plimb", "dwindle", "crumple", "yonder", "fennick", "spoon", "grelt", "obble")
# Whatever differs between two runs with the same prompts (or follows from prompt length), not a result.
_VOLATILE = {"ts", "latency_s", "prompt_tokens", "completion_tokens", "cost_usd", "elapsed_s", "started", "finished"}


def reword(text: str, rng: random.Random) -> str:
    """`text` with every word outside headers, placeholders and tag-only lines replaced by nonsense."""
    def scramble(prose: str) -> str:
        return re.sub(r"\S+", lambda _: " ".join(rng.choice(_NONSENSE) for _ in range(rng.randint(1, 2))), prose)

    lines = []
    for line in text.splitlines():
        if _KEEP_LINE.match(line):
            lines.append(line)
            continue
        pieces, pos = [], 0
        for m in _PLACEHOLDER.finditer(line):
            pieces += [scramble(line[pos:m.start()]), "${%s}" % (m.group(1) or m.group(2))]
            pos = m.end()
        lines.append("".join(pieces) + scramble(line[pos:]))
    return "\n".join(lines) + "\n"


def _names(template: str) -> set[str]:
    return {m.group(1) or m.group(2) for m in _PLACEHOLDER.finditer(template)}


def _reworded_package(folder: Path) -> Any:
    """A `prompts` package in `folder` holding a reworded copy of every prompt file."""
    package = folder / "prompts"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    rng = random.Random(8)
    originals = sorted(Path(prompts.__file__).parent.glob("*.md"))
    assert len(originals) >= 20
    for source in originals:
        text = source.read_text(encoding="utf-8")
        changed = reword(text, rng)
        assert changed != text and _names(changed) == _names(text), source.name
        (package / source.name).write_text(changed, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("examiner.prompts", package / "__init__.py",
                                                  submodule_search_locations=[str(package)])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def reworded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Prompt loading pointed at the reworded copy for the duration of a test."""
    monkeypatch.setitem(sys.modules, "examiner.prompts", _reworded_package(tmp_path / "reworded"))
    _sections.cache_clear()
    shown = render("exam_answer", question="Why? [ref:u1]", max_words=50)
    assert "Why? [ref:u1]" in shown[-1]["content"] and "interviewed" not in shown[0]["content"]
    yield
    _sections.cache_clear()


def test_reword_keeps_placeholders_and_headers_and_changes_every_word() -> None:
    text = "### system\nYou judge.\n\n### user\nStay under $max_words words (1-10).\n<response>\n$answer\n</response>\n"
    out = reword(text, random.Random(0))
    assert out.splitlines()[0] == "### system" and "### user" in out.splitlines()
    assert "${max_words}" in out and "${answer}" in out and "<response>\n${answer}\n</response>" in out
    assert not {"judge", "Stay", "under", "words", "1-10"} & set(re.findall(r"[\w-]+", out))


def _records(folder: Path) -> list[tuple[str, list[dict[str, Any]]]]:
    """Every JSONL file a run wrote (the ledger aside), records without volatile fields, in a fixed
    order (concurrent calls append in the order they finish)."""
    out = []
    for path in sorted(folder.rglob("*.jsonl")):
        if path.name == "ledger.jsonl":
            continue
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        kept = [{k: v for k, v in row.items() if k not in _VOLATILE} for row in rows]
        out.append((path.name, sorted(kept, key=lambda row: json.dumps(row, sort_keys=True))))
    return out


EXAM_MODES = (("refeval", "refeval"), ("refeval", "reviseval"), ("refeval", "geval"), ("noref", "refeval"))
"""(exam mode, judge mode) pairs the exam runs in: every judge the exam can use."""


def test_the_pairs_cover_every_declared_judge_method() -> None:
    assert {judge for _, judge in EXAM_MODES} == set(EXAM_JUDGE_METHODS)


def _exam(folder: Path) -> list[tuple[str, list[dict[str, Any]]]]:
    spec = EndpointSpec(provider="simulated", model="sim", max_concurrency=16,
                        options={"knowledge": {"known": 0.6, "wrong": 0.2, "unknown": 0.2}})
    roles = ("examiner", "candidate", "judge", "reviser", "geval")
    settings = Settings(endpoints={"sim": spec}, roles={r: "sim" for r in roles}, exam={"max_rounds": 2})
    corpus = [str(p) for p in sorted(Path("corpora/examiner-handbook").glob("*.md"))[:1]]
    out = []
    for mode, judge_mode in EXAM_MODES:
        run_dir = folder / f"{mode}-{judge_mode}"
        request = ExamRequest(corpus, targets=["sim"], mode=mode, judge_mode=judge_mode)
        info = asyncio.run(start_exam(settings, request, run_dir, quiet=True, report=False))
        assert info.status == "completed"
        out += _records(run_dir)
    return out


PAIRS = [{"id": f"q{i}", "question": f"Explain topic {i}.", "a": f"Topic {i} is this (t{i}:known).",
          "b": f"Weather {i} (t{i}:wrong).", "gold": 1 + i % 2, "ref": f"Topic {i} explained."} for i in range(4)]
SCORED = [{"id": f"s{i}", "instruction": "Summarise.", "output": f"Summary {i} " + "(u1:known) " * (i % 3),
           "reference": "A summary.", "human_score": 1 + i % 5} for i in range(4)]


def _judge(folder: Path) -> list[tuple[str, list[dict[str, Any]]]]:
    folder.mkdir(parents=True)
    pairs, scored = folder / "pairs.jsonl", folder / "scored.jsonl"
    pairs.write_text("".join(json.dumps(r) + "\n" for r in PAIRS), encoding="utf-8")
    scored.write_text("".join(json.dumps(r) + "\n" for r in SCORED), encoding="utf-8")
    pair_flags = ["--instruction-field", "question", "--output1-field", "a", "--output2-field", "b",
                  "--label-field", "gold", "--simulate"]  # neither method reads a reference here (3bb9115 refuses it)
    assert main(["judge", str(pairs), "--method", "pairwise", "--swap", "--out", str(folder / "pw"), *pair_flags]) == 0
    assert main(["judge", str(pairs), "--method", "reviseval", "--out", str(folder / "rv"), *pair_flags]) == 0
    assert main(["judge", str(scored), "--method", "geval", "--human-range", "1,5", "--simulate",
                 "--criterion", "Coherence (1-5): is it coherent?", "--out", str(folder / "ge")]) == 0
    assert main(["judge", str(scored), "--method", "geval", "--no-logprobs", "--samples", "3", "--simulate",
                 "--out", str(folder / "gs")]) == 0
    return _records(folder / "pw") + _records(folder / "rv") + _records(folder / "ge") + _records(folder / "gs")


def _meta(folder: Path) -> list[tuple[str, list[dict[str, Any]]]]:
    folder.mkdir(parents=True)
    endpoints = {"e80": {"provider": "simulated", "model": "sim-acc0.8", "max_concurrency": 16},
                 "e50": {"provider": "simulated", "model": "sim-acc0.5", "max_concurrency": 16},
                 "meta": {"provider": "simulated", "model": "sim-rel0.9", "max_concurrency": 16}}
    config = folder / "cfg.yaml"
    config.write_text(yaml.safe_dump({"endpoints": endpoints, "roles": {"meta_judge": "meta"}}))
    data = folder / "items.jsonl"
    data.write_text("".join(json.dumps({"id": f"p{i}", "input": f"Summarise fact {i}.", "output_1": f"Fact {i} holds.",
                                        "output_2": f"Something else about {i}.", "label": 1 + i % 2}) + "\n"
                            for i in range(6)))
    out = []
    for method in ("jdeval", "mdeval"):
        assert main(["meta", str(data), "--config", str(config), "--evaluators", "e80,e50", "--method", method,
                     "--meta-judge", "meta", "--out", str(folder / method), "--bootstrap", "20", "--shuffles", "5"]) == 0
        out += _records(folder / method)
    return out


def _results(folder: Path) -> dict[str, Any]:
    return {"exam": _exam(folder / "exam"), "judge": _judge(folder / "judge"), "meta": _meta(folder / "meta")}


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The results with the prompts as shipped."""
    _sections.cache_clear()
    return _results(tmp_path_factory.mktemp("original"))


def test_original_results_cover_every_method(original: dict[str, Any]) -> None:
    names = {kind: {name for name, rows in files if rows} for kind, files in original.items()}
    assert "verdicts.jsonl" in names["exam"]
    assert "judgments.jsonl" in names["judge"]
    assert {"judgments.jsonl", "debates.jsonl"} <= names["meta"]
    debates = [row for name, rows in original["meta"] if name == "debates.jsonl" for row in rows]
    assert any(len(d.get("turns", [])) > 2 for d in debates), "no debate went past its first round"


@pytest.mark.parametrize("kind", ["exam", "judge", "meta"])
def test_reworded_prompts_give_the_same_simulated_results(kind: str, original: dict[str, Any], reworded: None,
                                                          tmp_path: Path) -> None:
    run = {"exam": _exam, "judge": _judge, "meta": _meta}[kind]
    again = run(tmp_path / kind)
    assert [name for name, _ in again] == [name for name, _ in original[kind]]
    for (name, rows), (_, before) in zip(again, original[kind]):
        assert rows == before, f"{kind}: {name} changed when the prompts were reworded"
