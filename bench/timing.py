"""The one timing helper the benchmarks share."""
import statistics
import time


def median_ms(fn, repeats: int, warmup: int = 1) -> float:
    """The median wall time of fn() in milliseconds, after `warmup` untimed calls."""
    return wall_and_cpu_ms(fn, repeats, warmup)[0]


def wall_and_cpu_ms(fn, repeats: int, warmup: int = 1) -> tuple[float, float]:
    """The median wall time and the median CPU time of this process (all its threads) of fn(), in milliseconds: on a
    machine other work loads, the CPU time is what fn() cost, the wall time that and the waiting."""
    for _ in range(warmup):
        fn()
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return 1e3 * statistics.median(walls), 1e3 * statistics.median(cpus)
