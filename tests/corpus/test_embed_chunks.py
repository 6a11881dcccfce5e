"""Embedder.embed takes texts through the cache and the model EMBED_CHUNK at a time, so one call never
holds the vectors of a whole large corpus at once: the rows come back the same, in order, and a text met
in an earlier chunk is read from the cache, not encoded again. The model is replaced by a deterministic
fake, so the test loads nothing."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

import examiner.corpus.vectors as vectors
from examiner.corpus.vectors import Embedder, EmbeddingCache


def fake_vector(text: str) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")
    v = np.random.default_rng(seed).standard_normal(8).astype(np.float32)
    return v / np.linalg.norm(v)


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    seen: list[list[str]] = []

    def encode(self: Embedder, texts: list[str]) -> np.ndarray:
        seen.append(list(texts))
        return np.stack([fake_vector(t) for t in texts])

    monkeypatch.setattr(Embedder, "_encode", encode)
    return seen


TEXTS = [f"text {i % 7}" for i in range(11)] + ["last one"]  # repeats across chunks


def test_chunked_rows_equal_one_call(monkeypatch: pytest.MonkeyPatch, calls: list[list[str]], tmp_path: Path) -> None:
    with EmbeddingCache(tmp_path / "whole.sqlite") as cache:
        whole = Embedder(cache=cache).embed(TEXTS)
    assert len(calls) == 1
    calls.clear()
    monkeypatch.setattr(vectors, "EMBED_CHUNK", 4)
    with EmbeddingCache(tmp_path / "chunked.sqlite") as cache:
        chunked = Embedder(cache=cache).embed(TEXTS)
    assert np.array_equal(whole, chunked)
    assert all(len(c) <= 4 for c in calls)
    encoded = [t for c in calls for t in c]
    assert sorted(encoded) == sorted(set(TEXTS))  # each distinct text once: later chunks hit the cache


def test_chunks_without_a_cache(monkeypatch: pytest.MonkeyPatch, calls: list[list[str]]) -> None:
    monkeypatch.setattr(vectors, "EMBED_CHUNK", 5)
    rows = Embedder().embed(TEXTS)
    assert np.array_equal(rows, np.stack([fake_vector(t) for t in TEXTS]))
    assert [len(c) for c in calls] == [5, 5, 2]
