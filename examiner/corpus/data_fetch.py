"""Fetching the public sets (examiner/corpus/public_sets.py) into the data folder, and checking what is there.

Each file is streamed from `{base}/{repo}/{commit}/{path}` (raw.githubusercontent.com, or a mirror with the
same layout) into `<file>.part` beside its target; a `.part` left by a killed pull is completed with an HTTP
Range request when the server honours it. Only bytes whose size and sha256 equal the registry's are renamed
onto the target (os.replace, atomic), so a reader never meets a half-written or tampered file: bytes that
fail the check are removed with their `.part`. A network error keeps the `.part` for the next pull.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal
from urllib.parse import quote

import httpx

from examiner.core.errors import UserError
from examiner.corpus.public_sets import DataFile, PublicSet

DEFAULT_BASE_URL = "https://raw.githubusercontent.com"
URL_ENV = "EXAMINER_DATA_URL"
"""The environment variable naming a mirror (same layout as raw.githubusercontent.com)."""
CHUNK = 1 << 16

FileState = Literal["present", "missing", "damaged"]
Progress = Callable[[DataFile, int, int], None]
"""Called as bytes arrive: the file, bytes on disk so far (resumed ones included), bytes expected."""


@dataclass(frozen=True)
class SetStatus:
    """What the data folder holds of one set."""

    set: PublicSet
    folder: Path
    files: tuple[tuple[DataFile, FileState], ...]

    @property
    def state(self) -> FileState:
        """present: every file with its pinned bytes; damaged: a file with other bytes; missing otherwise."""
        states = {s for _, s in self.files}
        if states == {"present"}:
            return "present"
        return "damaged" if "damaged" in states else "missing"

    @property
    def missing(self) -> tuple[DataFile, ...]:
        """The files that are not there with their pinned bytes."""
        return tuple(f for f, s in self.files if s != "present")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _state(path: Path, size: int, sha256: str) -> FileState:
    if not path.is_file():
        return "missing"
    return "present" if path.stat().st_size == size and sha256_of(path) == sha256 else "damaged"


def set_status(root: Path, public_set: PublicSet) -> SetStatus:
    """Each file of the set in `root`: present (pinned size and sha256), damaged (other bytes) or missing."""
    return SetStatus(public_set, root / public_set.name,
                     tuple((f, _state(root / f.local, f.size, f.sha256)) for f in public_set.files))


def base_url(given: str | None = None) -> str:
    """The mirror to fetch from: `given`, else `$EXAMINER_DATA_URL`, else raw.githubusercontent.com."""
    url = (given or os.environ.get(URL_ENV) or DEFAULT_BASE_URL).rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise UserError(f"data mirror {url!r} is not an http:// or https:// URL (--base-url, {URL_ENV})")
    return url


def file_url(base: str, public_set: PublicSet, path: str) -> str:
    """`{base}/{repo}/{commit}/{path}`, the path URL-quoted (LLMBar has a folder named `LLMEval^2`)."""
    return f"{base.rstrip('/')}/{public_set.repo}/{public_set.commit}/{quote(path)}"


def by_hand(root: Path, public_set: PublicSet) -> str:
    """How to place the set's files without `pull`: the folder and the file names in it."""
    names = [PurePosixPath(f.local).relative_to(public_set.name).as_posix() if f.convert is None
             else PurePosixPath(f.local).with_name(PurePosixPath(f.upstream).name).relative_to(public_set.name)
             .as_posix() for f in public_set.files]
    then = f' and run "examiner data pull {public_set.name}"' if any(f.convert for f in public_set.files) else ""
    return (f"to place {public_set.name} by hand, save the files of {public_set.repo} at commit {public_set.commit[:12]} "
            f"that `examiner data list` names into {root / public_set.name} as {', '.join(names)}{then} "
            "(docs/DATA.md)")


class _Refused(Exception):
    """Bytes that arrived but are not the pinned ones (size or sha256): removed, not retried."""


def _download(client: httpx.Client, url: str, part: Path, size: int, sha256: str, progress: Progress | None,
              data_file: DataFile) -> None:
    """Stream `url` into `part` (resuming what is there) until it holds `size` bytes with `sha256`."""
    done = part.stat().st_size if part.is_file() else 0
    if done > size:
        part.unlink()
        done = 0
    if done < size:
        headers = {"Range": f"bytes={done}-"} if done else {}
        with client.stream("GET", url, headers=headers) as reply:
            if reply.status_code == 416 and done:  # the server cannot resume from there: start over
                part.unlink()
                _download(client, url, part, size, sha256, progress, data_file)
                return
            resumed = reply.status_code == 206 and reply.headers.get("content-range", "").startswith(f"bytes {done}-")
            if reply.status_code not in (200, 206) or (reply.status_code == 206 and not resumed):
                raise httpx.HTTPStatusError(f"HTTP {reply.status_code}", request=reply.request, response=reply)
            done = done if resumed else 0
            with open(part, "ab" if resumed else "wb") as fh:
                if progress:
                    progress(data_file, done, size)
                for chunk in reply.iter_bytes(CHUNK):
                    if done + len(chunk) > size:
                        raise _Refused(f"it sends more than the pinned {size:,} bytes")
                    fh.write(chunk)
                    done += len(chunk)
                    if progress:
                        progress(data_file, done, size)
        if done < size:
            raise httpx.RemoteProtocolError(f"the reply ended after {done:,} of {size:,} bytes")
    got = sha256_of(part)
    if got != sha256:
        raise _Refused(f"its bytes have sha256 {got[:16]}..., not the pinned {sha256[:16]}...")


def _fetch(client: httpx.Client, url: str, target: Path, size: int, sha256: str, progress: Progress | None,
           data_file: DataFile) -> None:
    """`target` from `url` through `target.part`; the part is removed when its bytes are refused."""
    part = target.with_name(target.name + ".part")
    try:
        _download(client, url, part, size, sha256, progress, data_file)
    except _Refused:
        part.unlink(missing_ok=True)
        raise
    os.replace(part, target)


def _write_converted(data_file: DataFile, source: Path, target: Path) -> None:
    """The converted file, checked against its pinned size and sha256 before it replaces anything."""
    assert data_file.convert is not None
    data = data_file.convert(source.read_bytes())
    got = hashlib.sha256(data).hexdigest()
    if len(data) != data_file.size or got != data_file.sha256:
        raise UserError(f"converting {source} gave {len(data):,} bytes with sha256 {got[:16]}..., not the pinned "
                        f"{data_file.size:,} bytes with {data_file.sha256[:16]}...: nothing written")
    part = target.with_name(target.name + ".part")
    part.write_bytes(data)
    os.replace(part, target)


def pull_set(public_set: PublicSet, root: Path, base: str, client: httpx.Client,
             progress: Progress | None = None) -> tuple[str, ...]:
    """Fetch the files of `public_set` that `root` lacks (or holds damaged); returns their local paths.

    UserError, one line, when a file cannot be fetched (naming its URL) or its bytes are not the pinned ones
    (refused and removed); either way with how to place the files by hand. Nothing unverified is left under
    a target's name."""
    fetched = []
    for data_file, state in set_status(root, public_set).files:
        if state == "present":
            continue
        target = root / data_file.local
        target.parent.mkdir(parents=True, exist_ok=True)
        url = file_url(base, public_set, data_file.upstream)
        source = target if data_file.convert is None else target.with_name(PurePosixPath(data_file.upstream).name)
        try:
            if _state(source, data_file.fetched_size, data_file.fetched_sha256) != "present":
                _fetch(client, url, source, data_file.fetched_size, data_file.fetched_sha256, progress, data_file)
        except _Refused as exc:
            raise UserError(f"refused {url}: {exc}; removed; {by_hand(root, public_set)}") from None
        except httpx.HTTPError as exc:
            reason = str(exc).splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UserError(f"cannot fetch {url} ({reason}); {by_hand(root, public_set)}") from None
        if data_file.convert is not None:
            _write_converted(data_file, source, target)
            source.unlink()
        fetched.append(data_file.local)
    return tuple(fetched)


def new_client() -> httpx.Client:
    """The HTTP client a pull uses: redirects followed, a proxy from the environment, bounded waits."""
    from examiner.core.version import VERSION

    return httpx.Client(follow_redirects=True, timeout=httpx.Timeout(60.0, connect=15.0),
                        headers={"User-Agent": f"examiner/{VERSION} (data pull)"})


def pull_sets(sets: Sequence[PublicSet], root: Path, base: str, progress: Progress | None = None,
              done: Callable[[PublicSet, tuple[str, ...]], None] | None = None) -> dict[str, tuple[str, ...]]:
    """`pull_set` for each set in turn (stopping at the first that fails); `done` hears of each finished set."""
    fetched: dict[str, tuple[str, ...]] = {}
    with new_client() as client:
        for public_set in sets:
            fetched[public_set.name] = pull_set(public_set, root, base, client, progress)
            if done:
                done(public_set, fetched[public_set.name])
    return fetched
