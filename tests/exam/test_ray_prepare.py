"""The Ray path of the prepare stage (examiner.exam.ray_prepare) against the local path: the same unit ids,
texts, sources and order exactly, and the same vectors up to float rounding, on a Ray instance started in
this process (1 CPU, no dashboard, a small object store)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest

from examiner.corpus.reading import load_corpus
from examiner.core.errors import UserError
from examiner.exam import ray_prepare
from examiner.corpus.units import sentence_units, split_oversized
from examiner.corpus.vectors import Embedder

VECTOR_ATOL = 1e-5
"""Largest difference allowed per vector component (unit-norm rows, components about 0.05): the Ray
workers embed other batches than the local path, and a batch pads every text to its longest member, so
the matrix shapes and summation orders differ and the last float32 bits move (about 1e-7 measured)."""

SPLIT_LIMIT = 20
"""Small, so the long sentence below is split into parts as an examiner with a small context would."""


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray", reason="the `ray` extra is not installed")
    ray.init(num_cpus=1, include_dashboard=False, object_store_memory=80 * 1024 * 1024,
             logging_level=logging.WARNING)
    yield ray
    ray.shutdown()


def _corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    root.mkdir()
    repeated = "The examiner asks one question per cluster of knowledge units in every round."
    long = ("The judge reads the reference text of every unit, compares it with the candidate's answer, weighs "
            "the evidence sentence by sentence, and records a verdict that says whether the answer is correct, "
            "incorrect or unrelated to the unit, together with a short reason.")
    (root / "a.md").write_text(
        f"# Exams\n\n{repeated} Units are short statements of the corpus.\n\n{long}\n\n"
        "Clusters group similar units so one question covers them. Short one.\n\nA third paragraph follows here "
        "with enough words to form a unit of its own.\n", encoding="utf-8")
    (root / "b.txt").write_text(
        f"{repeated.upper()}\n\nThe report lists accuracy and coverage with intervals for each target.\n\n"
        f"{repeated} It is the same statement again, found in a second file.\n", encoding="utf-8")
    return root


def _local(paths: list[str]) -> tuple[list, np.ndarray]:
    corpus = load_corpus(paths)
    units = split_oversized(sentence_units(corpus, max_tokens=80, min_tokens=8), SPLIT_LIMIT)
    return units, Embedder().embed([u.text for u in units])


@pytest.mark.slow
@pytest.mark.parametrize("passages_per_batch", [2, 256])
def test_ray_stages_give_the_local_units_and_vectors(local_ray, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      passages_per_batch: int) -> None:
    paths = [str(_corpus(tmp_path))]
    units, vectors = _local(paths)
    assert len({u.id for u in units}) < len(units) or any(len(u.sources) > 1 for u in units)  # duplicates met
    assert any(u.token_count > SPLIT_LIMIT for u in sentence_units(load_corpus(paths)))  # a split happened
    # 2 passages per batch: a unit's occurrences fall in different batches, which the driver joins.
    monkeypatch.setattr(ray_prepare, "PASSAGES_PER_BATCH", passages_per_batch)
    monkeypatch.setattr(ray_prepare, "UNITS_PER_BATCH", 3)
    prepared = ray_prepare.prepare_on_ray(paths, jsonl_field="text", max_tokens=80, min_tokens=8,
                                          split_limit=SPLIT_LIMIT)
    assert [u.id for u in prepared.units] == [u.id for u in units]
    assert prepared.units == units  # texts, sources (in corpus order) and token counts too
    assert prepared.corpus.passages == load_corpus(paths).passages
    assert prepared.vectors.shape == vectors.shape
    assert np.allclose(prepared.vectors, vectors, rtol=0, atol=VECTOR_ATOL)


@pytest.mark.slow
def test_ray_reads_the_handbook_like_load_corpus(local_ray) -> None:
    paths = ["corpora/examiner-handbook"]
    prepared = ray_prepare.prepare_on_ray(paths, jsonl_field="text", max_tokens=80, min_tokens=8, split_limit=16)
    corpus = load_corpus(paths)
    assert [d.id for d in prepared.corpus.documents] == [d.id for d in corpus.documents]
    assert prepared.corpus.documents == corpus.documents
    expected = split_oversized(sentence_units(corpus), 16)
    assert [u.id for u in prepared.units] == [u.id for u in expected]
    assert np.allclose(prepared.vectors, Embedder().embed([u.text for u in expected]), rtol=0, atol=VECTOR_ATOL)


def test_missing_ray_is_one_line_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_ray(name: str, *args, **kwargs):
        if name == "ray" or name.startswith("ray."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(UserError, match=r"pip install 'examiner\[ray\]'") as err:
        ray_prepare.import_ray()
    assert "\n" not in str(err.value)


@pytest.mark.slow
def test_cli_run_with_ray_engine_matches_the_local_run(local_ray, tmp_path: Path) -> None:
    from examiner.cli.main import main
    from examiner.core import rundir
    from examiner.corpus.vectors import EmbeddingCache, text_key

    handbook = "corpora/examiner-handbook"
    common = ["--simulate", "--max-rounds", "1", "--quiet"]
    assert main(["run", handbook, *common, "--out", str(tmp_path / "local")]) == 0
    assert main(["run", handbook, *common, "--prepare-engine", "ray", "--out", str(tmp_path / "ray")]) == 0
    for name in (rundir.UNITS, rundir.PASSAGES, rundir.QUESTIONS, rundir.VERDICTS):
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "local" / name).read_bytes(), name
    # The Ray vectors went into the run's embedding cache under the local path's keys.
    lines = (tmp_path / "ray" / rundir.UNITS).read_text(encoding="utf-8").splitlines()
    texts = [json.loads(line)["text"] for line in lines]
    with EmbeddingCache(tmp_path / "ray" / rundir.EMBEDDINGS) as cache:
        assert len(cache.get_many([text_key(t) for t in texts])) == len(set(texts))


def test_llm_units_on_ray_are_refused_before_the_run_starts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from examiner.cli.main import main

    out = tmp_path / "run"
    code = main(["run", "corpora/examiner-handbook", "--simulate", "--units", "llm", "--prepare-engine", "ray",
                 "--out", str(out), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and not out.exists()
    assert "unit mode `llm` is not supported" in err and len(err.splitlines()) == 1
