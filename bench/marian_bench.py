"""A Marian checkpoint at opus-mt's sizes (d_model 512, 8 heads, d_ff 2048, 6 + 6 layers, 65 001 tokens) with random
weights (tests/marian_checkpoint.py), in the engine and in transformers (float64, the same weights): the load, the
forward pass of a 16-token source and a 15-token decoder input (the engine's whole trace to the probabilities; their
logits and a softmax; new ids each time), and a greedy translation of up to 15 tokens (both keep a cache: the encoder
once, one decoder row per token; transformers writes as many tokens as the engine did). Ratios are engine /
transformers, measured in one run; one BLAS thread, as the app's server runs. Wall and CPU time: on a loaded machine the
CPU time is what a pass costs.

    .venv/bin/python bench/marian_bench.py [--repeats 5]
"""
from __future__ import annotations

import argparse
import itertools
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import marian  # noqa: E402
from bench.timing import wall_and_cpu_ms  # noqa: E402
from engine.generate import generate  # noqa: E402
from marian_checkpoint import FULL, write_checkpoint  # noqa: E402

VOCABULARY = 65001  # opus-mt-en-zh's
TOKENS = 15
SENTENCE = "Hello world."


def fresh_ids(start_id):
    """(16-token source, 15-token decoder input) pairs, each new: the engine keeps each weight's last product
    (engine/products.py), which a pass on the ids of the one before would read instead of multiplying."""
    for offset in itertools.count():
        yield [5 + offset + i for i in range(15)] + [0], [start_id] + [30 + offset + i for i in range(14)]


def their_probs(hf, src, dec):
    import torch

    logits = hf(input_ids=torch.tensor([src]), decoder_input_ids=torch.tensor([dec])).logits
    return torch.softmax(logits, -1)


def main(argv=None) -> int:
    import torch
    from transformers import MarianMTModel

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder, threadpool_limits(1, user_api="blas"):
        torch.set_num_threads(1)
        write_checkpoint(Path(folder), FULL, VOCABULARY)
        start = time.perf_counter()
        model, _ = marian.load(folder)
        ours_load = time.perf_counter() - start
        start = time.perf_counter()
        hf = MarianMTModel.from_pretrained(folder, dtype=torch.float64).eval()
        theirs_load = time.perf_counter() - start
        ours_ids, theirs_ids = fresh_ids(model.start_id), fresh_ids(model.start_id)  # the same pairs, in turn
        ours = wall_and_cpu_ms(lambda: model.run_ids(*next(ours_ids))["probs"], args.repeats)
        written = len(generate(model, SENTENCE, max_len=TOKENS).steps)
        ours_greedy = wall_and_cpu_ms(lambda: generate(model, SENTENCE, max_len=TOKENS), args.repeats)
        with torch.no_grad():
            theirs = wall_and_cpu_ms(lambda: their_probs(hf, *next(theirs_ids)), args.repeats)
            sentence = torch.tensor([model.vocab.encode(SENTENCE)[0]])
            theirs_greedy = wall_and_cpu_ms(lambda: hf.generate(sentence, num_beams=1, do_sample=False,
                                                                min_new_tokens=written, max_new_tokens=written),
                                            args.repeats)
    megabytes = sum(value.nbytes for value in model.params.values()) / 1e6
    print(f"parameters      {megabytes:.0f} MB of float64 in the engine; peak RSS of this process "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3:.0f} MB (both models)")
    print(f"load            engine {ours_load:.1f} s, transformers {theirs_load:.1f} s")
    for clock, at in (("wall", 0), ("CPU", 1)):
        print(f"forward 16 + 15 {clock:4} engine {ours[at]:.0f} ms, transformers {theirs[at]:.0f} ms, "
              f"ratio {ours[at] / theirs[at]:.2f}")
        print(f"greedy {written} tokens {clock:4} engine {ours_greedy[at] / 1e3:.2f} s "
              f"({ours_greedy[at] / written:.0f} ms per token), transformers {theirs_greedy[at] / 1e3:.2f} s "
              f"({theirs_greedy[at] / written:.0f} ms per token), ratio {ours_greedy[at] / theirs_greedy[at]:.2f}")
    print(f"load average    {load_before:.2f} before, {os.getloadavg()[0]:.2f} after (1 min, {os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
