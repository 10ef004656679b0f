"""Training each corpus from the fixed seed: speed, final loss, and whether greedy decoding writes every target;
on padded batches (one pass per step, as engine.train trains) and with the loop over the pairs (one pass per pair),
in the same run: the steps-per-second ratio, and the two final losses, which must agree.

    .venv/bin/python bench/train_bench.py

The model is engine.train.TRAINING_SETUP with the default TrainSettings (Adam, the paper's schedule). Then
one training step is taken apart: where the time of one pair's forward pass and backpropagation goes.
"""
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # import engine from this repository

import numpy as np  # noqa: E402

from engine.backward import backward, loss_and_grads  # noqa: E402
from timing import median_ms  # noqa: E402
from engine.corpus import CORPORA, pairs  # noqa: E402
from engine.loss import cross_entropy_grad, teacher_forcing  # noqa: E402
from engine.optim import OPTIMIZERS, initial_state  # noqa: E402
from engine.train import (TRAINING_SETUP, TrainSettings, batch_loss_and_grads, corpus_loss,  # noqa: E402
                          pairs_loss_and_grads, start_model, train, translations)

REPEATS = 50


def train_corpus(corpus: str, per_pair: bool = False):
    settings = TrainSettings(corpus=corpus)
    start = time.perf_counter()
    run = train(start_model(), settings, per_pair=per_pair)
    seconds = time.perf_counter() - start
    results = translations(run.model, pairs(corpus))
    exact = sum(t.exact for t in results)
    loss = corpus_loss(run.model, pairs(corpus))
    pairs_per_second = settings.steps * settings.batch_size / seconds
    how = "per-pair loop" if per_pair else "padded batches"
    print(f"  {corpus}, {how}: {len(pairs(corpus))} pairs, {settings.steps} steps of {settings.batch_size} pairs in "
          f"{seconds:.1f} s = {settings.steps / seconds:.1f} steps/s ({pairs_per_second:.0f} pairs/s); "
          f"final loss {loss:.5f} (last batch {run.losses[-1]:.5f}); greedy exact {exact}/{len(results)}"
          + ("" if exact == len(results) else "  NOT ALL"))
    return seconds, loss, exact == len(results), results


def breakdown():
    """Median times of the pieces of one step, on the corpus's longest pair and on a batch."""
    model, settings = start_model(), TrainSettings()
    src, tgt = max(pairs("en-es"), key=lambda p: len(p[0].split()) + len(p[1].split()))
    trace = model.run(src, tgt)
    targets = teacher_forcing(model.vocab, trace.tgt_ids[1:])[1]
    grad_logits = cross_entropy_grad(trace["masked_logits"], targets)
    grads = loss_and_grads(model, src, tgt).grads
    state = initial_state("adam", model.params)
    batch = pairs("en-es")[:settings.batch_size]
    rows = {
        f"forward pass model.run(...)['probs'] ({len(trace.src_tokens)} + {len(trace.tgt_tokens)} tokens)":
            lambda: model.run(src, tgt)["probs"],  # the pass is lazy: read its end
        "backpropagation backward(trace, dL/dlogits)": lambda: backward(trace, grad_logits),
        "loss_and_grads (forward + loss + backward + packaging)": lambda: loss_and_grads(model, src, tgt),
        "Adam update of every parameter": lambda: OPTIMIZERS["adam"](model.params, grads, state, 1e-3),
        "Model.with_params (a read-only copy of the weights)": lambda: model.with_params(grads),
        f"one step: padded batch of {settings.batch_size} pairs, one pass": lambda: batch_loss_and_grads(
            model, batch, settings),
        f"one step: batch of {settings.batch_size} pairs, one pass per pair": lambda: pairs_loss_and_grads(
            model, batch, settings),
    }
    for label, fn in rows.items():
        print(f"  {label:<66}{median_ms(fn, REPEATS if 'one step' not in label else 10):8.3f} ms")


if __name__ == "__main__":
    setup = TRAINING_SETUP
    print(f"model: preset {setup['preset']!r}, {setup['overrides']}, seed {setup['seed']}; "
          f"{len(start_model().vocab)} tokens, {sum(p.size for p in start_model().params.values())} parameters; "
          f"numpy {np.__version__}")
    print(f"settings: {TrainSettings()}")
    results = []
    for corpus in CORPORA:
        padded, loop = train_corpus(corpus), train_corpus(corpus, per_pair=True)
        print(f"  {corpus}: padded batches take {padded[0] / loop[0]:.2f} of the loop's time, "
              f"{loop[0] / padded[0]:.1f}x the steps per second; final losses differ by {abs(padded[1] - loop[1]):.1e}; "
              f"same translations: {padded[3] == loop[3]}")
        results.append(padded)
    print(f"  all corpora learned: {all(ok and loss < 0.05 for _, loss, ok, _ in results)}; "
          f"slowest {max(s for s, _, _, _ in results):.1f} s")
    print(f"where one step's time goes (median of {REPEATS} runs):")
    breakdown()
