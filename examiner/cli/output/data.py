"""What `examiner data` prints: each set's state in the data folder (`list`), and the download's progress
on stderr (`pull`): a live bar per file on a terminal, one whole line per finished file when piped."""

from __future__ import annotations

import os
import sys
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from examiner.api.data import DataStatus
    from examiner.corpus.public_sets import DataFile


def size_text(size: int) -> str:
    """Bytes as kB / MB (powers of ten, as download tools print them)."""
    return f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{size / 1e3:.1f} kB"


def print_status(status: DataStatus) -> None:
    """Every set: state, size and licence, its source (repository@commit) and each file's path upstream and here."""
    from examiner.corpus.public_sets import DATA_ENV

    where = f"${DATA_ENV}" if os.environ.get(DATA_ENV) else f"the user cache folder (${DATA_ENV} unset)"
    print(f"data folder: {status.root} ({where})")
    for entry in status.sets:
        public_set = entry.set
        print(f"\n{public_set.name:<11} {entry.state:<8} {size_text(public_set.size):>8}  licence: {public_set.licence}")
        print(f"  {public_set.what}")
        print(f"  source: {public_set.repo}@{public_set.commit}")
        for data_file, state in entry.files:
            converted = " (converted)" if data_file.convert else ""
            mark = "" if state == "present" else f"  [{state}]"
            print(f"    {data_file.upstream} -> {data_file.local}{converted}{mark}")
    missing = [e.set.name for e in status.sets if e.state != "present"]
    if missing:
        print(f'\nto fetch: examiner data pull {" ".join(missing)}')


class DownloadProgress:
    """Byte progress of `examiner data pull` on stderr; `note` prints a set's summary line on stdout."""

    def __init__(self) -> None:
        from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn,
                                   TransferSpeedColumn)

        from examiner.core.console import make_console

        console = make_console(stderr=True)
        self.piped = not console.is_terminal
        self._progress: Progress = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                                            TransferSpeedColumn(), TimeRemainingColumn(), console=console,
                                            disable=self.piped)
        self._tasks: dict[str, TaskID] = {}

    def __enter__(self) -> DownloadProgress:
        self._progress.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._progress.stop()

    def update(self, data_file: DataFile, done: int, total: int) -> None:
        """Bytes of `data_file` on disk so far (a resumed file starts where its `.part` ended)."""
        task = self._tasks.get(data_file.local)
        if task is None:
            task = self._tasks[data_file.local] = self._progress.add_task(data_file.local, total=total)
            if self.piped and done:
                print(f"{data_file.local}: resuming at {done:,} of {total:,} bytes", file=sys.stderr)
        self._progress.update(task, completed=done)
        if self.piped and done == total:
            print(f"{data_file.local}: {total:,} bytes fetched", file=sys.stderr)

    def note(self, line: str) -> None:
        print(line)
