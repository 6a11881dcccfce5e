"""Keep the C allocator from holding on to the embedding model's freed buffers.

glibc's malloc serves a large request (at least M_MMAP_THRESHOLD, 128 KiB at start) with its own mmap and
returns it to the system on free, but after such a free it raises the threshold to that size (up to 32
MiB), so later buffers of the same size come from the heap. The encoder's activations (a few MB a batch,
another size with every batch's length) then fill the heap with free holes that RSS keeps. In a 6,773-unit
simulated exam on an empty embedding cache the exam process peaked at 2.68 GB; with the threshold fixed
at 128 KiB, which also stops the raising, it peaked at 1.30 GB (docs/MEASUREMENTS.md, "Memory").

The exam's own large buffers (state values decoded from state.sqlite, record batches) churn the same
way, so `fix_mmap_threshold` runs when an exam starts or resumes and when the model loads. It changes
nothing where the C library is not glibc, or where the user set MALLOC_MMAP_THRESHOLD_ themselves.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform

M_MMAP_THRESHOLD = -3
"""mallopt parameter number (malloc.h)."""

MMAP_THRESHOLD_BYTES = 128 * 1024
"""glibc's own starting threshold, kept fixed."""

_done = False


def fix_mmap_threshold() -> bool:
    """Fix glibc's mmap threshold at 128 KiB (once per process); True when it is set here."""
    global _done
    if _done:
        return True
    if platform.system() != "Linux" or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    if platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        _done = bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES))
    except (OSError, AttributeError):
        return False
    return _done
