"""Process-wide settings for a server whose one process runs every session's script (see docs/PERFORMANCE.md)."""
from __future__ import annotations

import ctypes
import functools

import numpy  # noqa: F401 (loaded before the limit below, which applies to the BLAS libraries loaded so far)
from threadpoolctl import threadpool_limits

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_ARENA_MAX = -1, -3, -8  # glibc's mallopt parameters (malloc.h)
KEEP_FREE = 64 << 20  # bytes of freed memory the allocator keeps before it gives any back to the system
FROM_HEAP = 32 << 20  # blocks up to this size come from the allocator's heap, not from a fresh mapping each
ARENAS = 2  # the allocator's heaps, shared by all threads (glibc's default on 2 cores: up to 16)


@functools.cache
def configure() -> None:
    """Once per process, from the entry point's first run (app.py): importing a module configures nothing."""
    # One BLAS thread: a session's products are small (a few tokens), so a second thread mostly waits for the
    # first and burns CPU that other sessions need; the server runs many sessions at once instead.
    threadpool_limits(1, user_api="blas")
    _tune_allocator()


def _tune_allocator() -> None:
    """By default glibc maps a block over 128 kB afresh and unmaps it when freed, so every edit of a paper-size
    weight (a new 2 MB array, and its heads laid side by side) page-faults in new memory: about 5 ms per edit
    on this 2-core VM against 1.5 ms when freed blocks are reused. Each script run is a new thread, and glibc
    gives new threads heaps of their own (arenas, up to 8 per core), each keeping its own freed blocks: with 30
    sessions editing the paper preset, the server grew by ~8 MB a minute for ten minutes; with two arenas it
    stayed flat (docs/PERFORMANCE.md, memory soak). Set before threads have made more than eight arenas, as
    here at the first script run, the cap holds. No-op where the C library is not glibc."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    libc.mallopt(M_ARENA_MAX, ARENAS)
    libc.mallopt(M_MMAP_THRESHOLD, FROM_HEAP)
    libc.mallopt(M_TRIM_THRESHOLD, KEEP_FREE)
