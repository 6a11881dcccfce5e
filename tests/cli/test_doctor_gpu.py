"""`examiner doctor` runs a tiny FAISS k-means on the GPU in a child process when FAISS sees a GPU: a build
without kernels for the card (faiss-gpu-cu12 1.14 on an H100 aborted with CUDA error 209) must fail the
check with its reason, not pass on `get_num_gpus() > 0`. Here the GPU is faked: the CPU FAISS build has no
GPU k-means, so the child fails the way a broken GPU build does, and the check must say so."""

from __future__ import annotations

import faiss
import pytest

from examiner.cli.commands import setup
from examiner.core.errors import UserError


def test_a_gpu_that_cannot_run_a_kmeans_fails_the_faiss_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(faiss, "get_num_gpus", lambda: 1, raising=False)
    with pytest.raises(UserError, match="sees 1 GPU\\(s\\) but a GPU k-means failed") as caught:
        setup._faiss_probe()
    assert "faiss-gpu>=1.15" in str(caught.value)


def test_the_probe_passes_when_the_child_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(setup, "GPU_KMEANS_PROBE", "print('ok')")
    assert setup.gpu_kmeans_failure() is None
    monkeypatch.setattr(faiss, "get_num_gpus", lambda: 2, raising=False)
    assert setup._faiss_probe().endswith("GPU x2, a GPU k-means ran")


def test_without_a_gpu_no_child_is_started(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(faiss, "get_num_gpus", lambda: 0, raising=False)
    monkeypatch.setattr(setup, "gpu_kmeans_failure", lambda: pytest.fail("probe started without a GPU"))
    assert setup._faiss_probe().endswith(": CPU")
