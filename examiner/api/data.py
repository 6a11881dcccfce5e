"""The public validation sets as library calls: what the data folder holds, fetching sets into it (pinned
commit, size and sha256 checked before a file takes its name), and the folder of one set.

`examiner data list|pull|path` call these. The registry is examiner/corpus/public_sets.py; `sets` stands in
for it (a mirror's own registry, tests)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, model_validator

from examiner.api.checks import Notes, to_stderr
from examiner.corpus import public_sets
from examiner.corpus.data_fetch import Progress, SetStatus


class DataPullOptions(BaseModel):
    """`examiner data pull`: which sets, and where from."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    names: tuple[str, ...] = ()
    """The sets to fetch (llmbar, mt_bench, pubmedqa, wikitext2, legalbench, summeval)."""
    all: bool = False
    """Fetch every set instead of naming them."""
    base_url: str | None = None
    """A mirror laid out as `{base}/{repo}/{commit}/{path}`; default `$EXAMINER_DATA_URL`, else
    https://raw.githubusercontent.com."""

    @model_validator(mode="after")
    def _which(self) -> "DataPullOptions":
        if bool(self.names) == self.all:
            raise ValueError("give the names of the sets to pull, or all=True, not both and not neither")
        return self


@dataclass(frozen=True)
class DataStatus:
    """The data folder and what it holds of each set."""

    root: Path
    sets: tuple[SetStatus, ...]


@dataclass(frozen=True)
class PulledSet:
    """One set after a pull: its folder, the files fetched now and its licence."""

    name: str
    folder: Path
    fetched: tuple[str, ...]
    """Local paths fetched by this pull (empty: every file was already there with its pinned bytes)."""
    source: str
    """`repository@commit`."""
    licence: str


@dataclass(frozen=True)
class DataPullResult:
    root: Path
    sets: tuple[PulledSet, ...]


def _registry(sets: Sequence[public_sets.PublicSet] | None) -> Sequence[public_sets.PublicSet]:
    return public_sets.PUBLIC_SETS if sets is None else sets


def data_status(*, sets: Sequence[public_sets.PublicSet] | None = None) -> DataStatus:
    """Each set's files in the data folder: present (pinned size and sha256), damaged or missing."""
    from examiner.corpus.data_fetch import set_status

    root = public_sets.configured_root()
    return DataStatus(root, tuple(set_status(root, s) for s in _registry(sets)))


def data_path(name: str, *, sets: Sequence[public_sets.PublicSet] | None = None) -> Path:
    """The folder of set `name` in the data folder (whether or not it has been pulled)."""
    return public_sets.configured_root() / public_sets.find_set(name, _registry(sets)).name


def pull_data(options: DataPullOptions, *, sets: Sequence[public_sets.PublicSet] | None = None,
              notes: Notes = to_stderr, progress: Progress | None = None) -> DataPullResult:
    """Fetch the sets the data folder lacks, as `examiner data pull` does; `notes` hears one line per set
    with its licence as each is done, `progress` the bytes as they arrive. UserError (one line naming the
    URL and how to place the files by hand) on a network error or bytes other than the pinned ones."""
    from examiner.corpus.data_fetch import base_url, pull_sets

    registry = _registry(sets)
    chosen = list(registry) if options.all else [public_sets.find_set(n, registry) for n in dict.fromkeys(options.names)]
    base = base_url(options.base_url)
    root = public_sets.data_root(create=True)
    pulled: list[PulledSet] = []

    def done(public_set: public_sets.PublicSet, fetched: tuple[str, ...]) -> None:
        pulled.append(PulledSet(public_set.name, root / public_set.name, fetched,
                                f"{public_set.repo}@{public_set.commit}", public_set.licence))
        what = f"{len(fetched)} file(s) fetched" if fetched else "already there"
        notes(f"{public_set.name}: {what}, {root / public_set.name}; licence: {public_set.licence}")

    pull_sets(chosen, root, base, progress, done)
    return DataPullResult(root, tuple(pulled))
