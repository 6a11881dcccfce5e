"""The last status of a run written on a full disk.

Why: run.json is replaced atomically (a new file renamed over it), which needs free space. When the disk
is full, that write fails, and the run's last word would stay `running` although the run stopped. The
old file's blocks are already allocated, so the new text can be written over them instead, compact and
padded with spaces to the old length (JSON allows trailing whitespace): no new block is needed on
filesystems that overwrite in place (ext4, xfs, tmpfs). The write is not atomic, which is why it is only
the fallback for a full disk.
"""

from __future__ import annotations

import os
from pathlib import Path


def overwrite_in_place(path: Path, data: bytes) -> bool:
    """Write `data` over `path`'s first bytes and pad the rest of the old length with spaces, keeping the
    file's size; False (nothing written) when `data` is longer than the file or the file cannot be opened
    for writing."""
    try:
        descriptor = os.open(path, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        size = os.fstat(descriptor).st_size
        if len(data) > size:
            return False
        os.pwrite(descriptor, data + b" " * (size - len(data)), 0)
        os.fsync(descriptor)
        return True
    except OSError:
        return False
    finally:
        os.close(descriptor)


__all__ = ["overwrite_in_place"]
