"""Training each corpus from the fixed seed: speed, final loss, and whether greedy decoding writes every target;
on padded batches (one pass per step, as engine.train trains) and with the loop over the pairs (one pass per pair),
in the same run, their steps in turn: the steps-per-second ratio, and the two final losses. A third run, padded,
starts from the same weights but one moved by one unit in the last place (NUDGED): how far rounding alone carries
the training.

    .venv/bin/python bench/train_bench.py
    .venv/bin/python bench/train_bench.py --record ui/data/padded_training.json   # what the training page shows

The record (ui.lessons.batch_views.training_record) holds each run's loss per step, its time and its final loss and
exact translations, with the date, the commit and the machine.

The model is engine.train.TRAINING_SETUP with the default TrainSettings (Adam, the paper's schedule). Then
one training step is taken apart: where the time of one pair's forward pass and backpropagation goes.
"""
import dataclasses
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # import engine from this repository

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from engine.backward import backward, loss_and_grads  # noqa: E402
from timing import median_ms  # noqa: E402
from engine.corpus import CORPORA, pairs  # noqa: E402
from engine.loss import cross_entropy_grad, teacher_forcing  # noqa: E402
from engine.optim import OPTIMIZERS, initial_state  # noqa: E402
from engine.train import (TRAINING_SETUP, TrainSettings, batch_loss_and_grads, corpus_loss,  # noqa: E402
                          pairs_loss_and_grads, start_model, training, translations)

REPEATS = 50
NUDGED = ("dec.1.ffn.W_2", (0, 0))  # the weight the third run moves by one unit in the last place, upwards
AGREE = 1e-9  # the record's agree_until: the last step before the losses first differ by more than this, relatively


def nudged_start():
    """start_model() with the NUDGED weight moved to the next float up (about 1e-17 here)."""
    model = start_model()
    name, index = NUDGED
    params = dict(model.params)
    params[name] = np.array(params[name])
    params[name][index] = np.nextafter(params[name][index], np.inf)
    return model.with_params(params)


def lockstep(corpus: str) -> dict:
    """The padded, the loop and the nudged run of a corpus, step by step in turn: each run's time is the sum of its
    steps' CPU time (this process's, one BLAS thread as the app's server), so other work on the machine (it is
    shared) counts in none of them."""
    settings = TrainSettings(corpus=corpus)
    starts = {"padded": (start_model(), False), "per_pair": (start_model(), True), "nudged": (nudged_start(), False)}
    runs = {how: training(model, settings, per_pair=per_pair) for how, (model, per_pair) in starts.items()}
    seconds, losses, models = dict.fromkeys(runs, 0.0), {how: [] for how in runs}, {}
    for _ in range(settings.steps):
        for how, run in runs.items():
            start = time.process_time()
            update = next(run)
            seconds[how] += time.process_time() - start
            losses[how].append(update.loss)
            models[how] = update.model
    return {how: summary(corpus, how, models[how], losses[how], seconds[how], settings) for how in runs}


def summary(corpus, how, model, losses, seconds, settings) -> dict:
    results = translations(model, pairs(corpus))
    exact = sum(t.exact for t in results)
    loss = corpus_loss(model, pairs(corpus))
    print(f"  {corpus}, {how}: {len(pairs(corpus))} pairs, {settings.steps} steps of {settings.batch_size} pairs in "
          f"{seconds:.1f} s of CPU = {settings.steps / seconds:.1f} steps/s "
          f"({settings.steps * settings.batch_size / seconds:.0f} pairs/s); final loss {loss:.5f} "
          f"(last batch {losses[-1]:.5f}); greedy exact {exact}/{len(results)}"
          + ("" if exact == len(results) else "  NOT ALL"))
    return {"seconds": seconds, "steps_per_second": settings.steps / seconds, "corpus_loss": loss, "exact": exact,
            "pairs": len(results), "translations": [t.text for t in results], "losses": losses}


def agree_until(a, b) -> int:
    """The number of steps before the two loss curves first differ by more than AGREE, relatively."""
    apart = np.abs(np.subtract(a, b)) > AGREE * np.abs(b)
    return int(np.argmax(apart)) if apart.any() else len(a)


def compare(corpus: str) -> dict:
    runs = lockstep(corpus)
    padded, loop, nudged = runs["padded"], runs["per_pair"], runs["nudged"]
    ratio = loop["seconds"] / padded["seconds"]
    print(f"  {corpus}: padded batches take {1 / ratio:.2f} of the loop's time, {ratio:.1f}x the steps per second; "
          f"final losses differ by {abs(padded['corpus_loss'] - loop['corpus_loss']):.1e} "
          f"(nudged: {abs(padded['corpus_loss'] - nudged['corpus_loss']):.1e}); "
          f"same translations: {padded['translations'] == loop['translations']}")
    return {**runs, "speedup": ratio, "agree_until": {"per_pair": agree_until(padded["losses"], loop["losses"]),
                                                      "nudged": agree_until(padded["losses"], nudged["losses"])}}


def record(path: str, corpora: dict):
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).parent).stdout.strip()
    data = {"measured": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": commit, "machine": f"{os.cpu_count()} CPUs, {platform.processor() or platform.machine()}, "
                                         f"Python {platform.python_version()}, NumPy {np.__version__}",
            "load_after": [round(x, 2) for x in os.getloadavg()],
            "settings": {k: v for k, v in dataclasses.asdict(TrainSettings()).items() if k != "corpus"},
            "nudged": f"{NUDGED[0]}{list(NUDGED[1])}", "agree": AGREE, "corpora": corpora}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"recorded in {path}")


def breakdown():
    """Median times of the pieces of one step, on the corpus's longest pair and on a batch."""
    model, settings = start_model(), TrainSettings()
    src, tgt = max(pairs("en-es"), key=lambda p: len(p[0].split()) + len(p[1].split()))
    trace = model.run(src, tgt)
    targets = teacher_forcing(model, trace.tgt_ids[1:])[1]
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
    threadpool_limits(1, user_api="blas")
    setup = TRAINING_SETUP
    print(f"model: preset {setup['preset']!r}, {setup['overrides']}, seed {setup['seed']}; "
          f"{len(start_model().vocab)} tokens, {sum(p.size for p in start_model().params.values())} parameters; "
          f"numpy {np.__version__}")
    print(f"settings: {TrainSettings()}")
    runs = {corpus: compare(corpus) for corpus in CORPORA}
    padded = [run["padded"] for run in runs.values()]
    print(f"  all corpora learned: {all(p['exact'] == p['pairs'] and p['corpus_loss'] < 0.05 for p in padded)}; "
          f"slowest {max(p['seconds'] for p in padded):.1f} s")
    if "--record" in sys.argv:
        record(sys.argv[sys.argv.index("--record") + 1], runs)
    print(f"where one step's time goes (median of {REPEATS} runs):")
    breakdown()
