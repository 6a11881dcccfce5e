"""`--embedding-cache FILE` (Settings.embedding_cache): embeddings shared between runs, so examining a
corpus again does not embed it again."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from examiner.cli.main import main
from examiner.core.config import Settings
from examiner.core import rundir
from examiner.corpus.vectors import Embedder, EmbeddingCache
from tests.helpers.paid_runs import CORPUS
from tests.helpers.simulated_exam import outcomes_of, write_config


@pytest.fixture
def encoded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text that goes through the embedding model in this test, in order."""
    texts: list[str] = []
    encode = Embedder._encode

    def counting(self: Embedder, batch: list[str]):  # noqa: ANN202 - returns what Embedder._encode does
        texts.extend(batch)
        return encode(self, batch)

    monkeypatch.setattr(Embedder, "_encode", counting)
    return texts


def test_second_run_with_the_same_embedding_cache_embeds_nothing(tmp_path: Path, encoded: list[str]) -> None:
    """The first run fills the shared file (no embeddings.sqlite in its run directory); a second run in a
    new directory finds every unit and answer vector there, encodes no text, and gives the same outcomes."""
    config, shared = write_config(tmp_path), tmp_path / "vectors" / "shared.sqlite"
    first, second = tmp_path / "first", tmp_path / "second"
    assert main(["run", *CORPUS, "--config", str(config), "--embedding-cache", str(shared), "--out", str(first),
                 "--quiet"]) == 0
    first_encoded = len(encoded)
    with EmbeddingCache(shared) as cache:
        vectors = len(cache)
    assert first_encoded > 0 and vectors == first_encoded, "the first run embedded its texts into the shared file"
    assert not (first / rundir.EMBEDDINGS).exists()
    assert main(["run", *CORPUS, "--config", str(config), "--embedding-cache", str(shared), "--out", str(second),
                 "--quiet"]) == 0
    assert encoded[first_encoded:] == [], "the second run embedded texts the shared file already held"
    with EmbeddingCache(shared) as cache:
        assert len(cache) == vectors
    assert not (second / rundir.EMBEDDINGS).exists()
    assert yaml.safe_load((second / rundir.CONFIG).read_text())["embedding_cache"] == str(shared.resolve())
    assert {k: o.status for k, o in outcomes_of(second).items()} == {k: o.status for k, o in outcomes_of(first).items()}


def test_without_the_setting_embeddings_stay_in_the_run_directory(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    run_dir = tmp_path / "run"
    assert main(["run", *CORPUS, "--config", str(config), "--out", str(run_dir), "--quiet"]) == 0
    assert (run_dir / rundir.EMBEDDINGS).is_file()
    assert yaml.safe_load((run_dir / rundir.CONFIG).read_text())["embedding_cache"] is None


def test_embedding_cache_flag_names_a_file_in_a_usable_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    for bad in (blocker / "sub" / "e.sqlite", tmp_path):
        assert main(["run", *CORPUS, "--simulate", "--embedding-cache", str(bad), "--out", str(tmp_path / "r")]) == 2
        assert "--embedding-cache" in capsys.readouterr().err
        assert not (tmp_path / "r").exists()


def test_home_folder_is_expanded_in_the_config() -> None:
    assert Settings(embedding_cache="~/e.sqlite").embedding_cache == str(Path("~/e.sqlite").expanduser())
    assert Settings(embedding_cache="").embedding_cache is None
