"""What the trace's laziness and the weights' remembered products save a page, on the paper preset.

    .venv/bin/python bench/lazy_bench.py

Paper base sizes, 12 + 12 tokens (bench/engine_bench.py's sentences), one BLAS thread, median CPU time of 15 runs
(as `engine_bench.py --against`: a shared machine's load weighs on wall time far more).
Laziness: the time to read one step of a fresh pass, the sentences in turn (so that no product is reused), for the
steps the encoder's pages read first and for the pass's end. The product cache (engine/products.py): a weight edited
as the app's editors do (Model.with_cells, a new value each run), then the same sentence run to its end, with the
products remembered and with every product made anew.
"""
import statistics
import sys
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # import engine from this repository

from threadpoolctl import threadpool_limits  # noqa: E402

import engine  # noqa: E402
from engine_bench import OTHER_SRC, OTHER_TGT, SRC, TGT, _cpu_ms  # noqa: E402
from engine.products import Multiplier  # noqa: E402

READ = ("src.input", "enc.0.attn.weights", "enc.0.ffn.out", "enc.out", "dec.0.self_attn.weights", "probs")
EDITS = {"unembed.b": (3,), "dec.5.ffn.W_2": (0, 0), "enc.0.attn.W_Q": (0, 0, 0)}  # a cell of each
REPEATS, WARMUP = 15, 2


def reading(model, name):
    """A fresh pass read as far as step `name`, on the two sentences in turn."""
    turn = [0]

    def read():
        turn[0] ^= 1
        return model.run(*((SRC, TGT), (OTHER_SRC, OTHER_TGT))[turn[0]])[name]

    return read


def edited_run(model, name, cell):
    """The model with one cell of `name` changed, a new value each time, run on one sentence to its end."""
    value = [0.0]

    def run():
        value[0] += 0.01
        return model.with_cells({name: [(cell, value[0])]}).run(SRC, TGT)["probs"]

    return run


def median_cpu_ms(fn) -> float:
    for _ in range(WARMUP):
        fn()
    return statistics.median(_cpu_ms(fn) for _ in range(REPEATS))


def main():
    model = engine.preset("paper")
    with threadpool_limits(1):
        print("laziness: a fresh pass read as far as")
        for name in READ:
            print(f"  {name:28s} {median_cpu_ms(reading(model, name)):7.1f} ms")
        print("an edit, then the pass to its end: products remembered / made anew")
        for name, cell in EDITS.items():
            remembered = median_cpu_ms(edited_run(model, name, cell))
            with mock.patch.object(Multiplier, "times", lambda self, x: x @ self.matrix):
                anew = median_cpu_ms(edited_run(model, name, cell))
            print(f"  {name:28s} {remembered:7.1f} ms / {anew:7.1f} ms")


if __name__ == "__main__":
    main()
