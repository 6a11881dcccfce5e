"""experiments/bench_scale.py takes the embedding model's CPU out of the exam's: calls made at the same
time from several threads must count the process's CPU once, not once per call (it printed negative
overheads on a run that encoded)."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

from examiner.corpus.vectors import Embedder

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "experiments"))
import bench_scale  # noqa: E402


def busy(_self: Embedder, texts: list[str]) -> list[str]:
    """Stands in for the model: 0.1 s of this thread's CPU."""
    end = time.thread_time() + 0.1
    while time.thread_time() < end:
        pass
    return texts


def test_overlapping_encodes_count_the_process_cpu_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Embedder, "_encode", busy)
    spent = bench_scale._time_encoding()
    monkeypatch.setattr(Embedder, "_encode", Embedder._encode)  # undone at the end of the test
    start = threading.Barrier(4)

    def call() -> None:
        start.wait()
        Embedder._encode(None, ["a", "b"])  # type: ignore[arg-type]

    threads = [threading.Thread(target=call) for _ in range(4)]
    began = time.process_time()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    whole = time.process_time() - began
    assert spent["encoded_texts"] == 8
    assert 0.35 <= spent["encode_cpu_s"] <= whole + 0.01  # one span per overlap, not four
