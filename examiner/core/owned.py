"""What examiner wrote, so that no command deletes or overwrites a file it did not write.

Why: output names are common ones (config.yaml, report.md, figures/, compare.md): a folder or file of the
user's that happens to carry them must never be taken for an earlier output. Two records say what is
examiner's: a marker file examiner puts in each run folder it creates (FOLDER_MARK), and, beside single-file
outputs written outside such a folder, a small JSON file (WRITTEN) holding the sha256 of each file as
examiner wrote it, so a file edited since, or one examiner never wrote, is refused in one line.
Links are never followed: a link at an output path is refused, and files are replaced, never written into.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

from examiner.core.errors import UserError

FOLDER_MARK = ".examiner-run"
"""Written by examiner into a run folder it creates: the folder's exam outputs may be replaced."""
WRITTEN = ".examiner-written.json"
"""Beside single-file outputs: file name -> sha256 of the bytes examiner wrote there."""


def mark_folder(folder: Path) -> None:
    """Record that examiner created `folder` (idempotent; a link in the marker's place is refused)."""
    _write_replacing(folder / FOLDER_MARK, b"This folder was created by examiner; it may replace its outputs here.\n")


def is_marked(folder: Path) -> bool:
    """Whether examiner created `folder`: its marker is a regular file (a link does not count)."""
    try:
        return stat.S_ISREG(os.lstat(folder / FOLDER_MARK).st_mode)
    except OSError:
        return False


def check_replaceable(path: Path, flag: str = "output") -> None:
    """UserError (one line) unless `path` is free or a regular file examiner wrote: in a folder it
    created, or with the sha256 it recorded when it wrote it. Links are refused, dangling ones too."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    refuse_link(path, flag)
    if not stat.S_ISREG(mode):
        raise UserError(f"{flag} {path} exists and is not a file examiner wrote")
    if is_marked(path.parent) or _recorded(path) == _sha256(path.read_bytes()):
        return
    raise UserError(f"{flag} {path} exists and examiner did not write it (or it changed since): remove it or "
                    "give another name")


def write_output(path: Path, data: str | bytes, flag: str = "output", *, run_folder: bool = False) -> Path:
    """Write a single-file output at `path` after check_replaceable, by replacing (never writing through
    a link), and record its sha256 beside it (unless its folder is a marked run folder). `run_folder`:
    the caller writes one of a run's own outputs into the run folder it read as a run (an exam's report
    rebuilt), so only a link at `path` is refused."""
    if run_folder:
        refuse_link(path, flag)
    else:
        check_replaceable(path, flag)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    _write_replacing(path, raw)
    if not run_folder and not is_marked(path.parent):
        record_written(path, raw)
    return path


def refuse_link(path: Path, flag: str = "output") -> None:
    """UserError (one line) when `path` is a symbolic link, dangling or not."""
    if path.is_symlink():
        raise UserError(f"{flag} {path} is a symbolic link: examiner does not write through links")


def record_written(path: Path, data: bytes | None = None) -> None:
    """Remember the sha256 of `path` as examiner wrote it (`data`, else the file's bytes now)."""
    ledger = path.parent / WRITTEN
    known = _read_ledger(ledger)
    known[path.name] = _sha256(path.read_bytes() if data is None else data)
    _write_replacing(ledger, (json.dumps(known, sort_keys=True, indent=0) + "\n").encode("utf-8"))


def refuse_links(folder: Path) -> None:
    """UserError (one line) naming the first symbolic link inside run folder `folder` (at any depth; the
    folder itself may be one). Why: a run folder may come from elsewhere, and writing a report, a ledger
    row or an override through a link it holds would write a file the link names, anywhere."""
    for top, folders, files in os.walk(folder):
        for name in sorted(folders + files):
            path = Path(top) / name
            if path.is_symlink():
                raise UserError(f"{path} is a symbolic link: examiner does not write through links in a run "
                                "folder (replace it with the file it names)")


def _recorded(path: Path) -> str | None:
    value = _read_ledger(path.parent / WRITTEN).get(path.name)
    return value if isinstance(value, str) else None


def _read_ledger(ledger: Path) -> dict[str, object]:
    try:
        if not stat.S_ISREG(os.lstat(ledger).st_mode):
            return {}
        data = json.loads(ledger.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write_replacing(path: Path, data: bytes) -> None:
    """`data` at `path`: written to a new temporary file beside it (O_EXCL, no link followed), then
    renamed over it, so a link at `path` is replaced, never written through."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(temporary, flags, 0o644)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
