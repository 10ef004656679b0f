"""The one timing helper the benchmarks share."""
import statistics
import time


def median_ms(fn, repeats: int, warmup: int = 1) -> float:
    """The median wall time of fn() in milliseconds, after `warmup` untimed calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)
