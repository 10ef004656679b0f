"""Command line: `python -m engine presets | trace | explain | grads | generate | train | vit-train` (see README)."""
from __future__ import annotations

import argparse
import dataclasses
import functools
import io
import json
import os
import sys
import time
import tomllib
from pathlib import Path

from . import digits
from .backward import loss_and_grads
from .checkpoint import save
from .config import parse_field
from .corpus import CORPORA, pairs
from .export import BINARY, WRITERS, jsonable
from .generate import STRATEGIES, beam_search, generate
from .optim import OPTIMIZERS
from .presets import DESCRIPTIONS, PRESETS, preset
from .train import TRAINING_SETUP, TrainSettings, corpus_loss, start_model, training, translations
from .vit import ViTConfig, VisionTransformer
from .vit_train import ViTTrainSettings, accuracy
from .vit_train import save as vit_save
from .vit_train import training as vit_training
from .words import fill

DEFAULT_SOURCE = "Hello World"
BLAS_THREADS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")  # what BLAS libraries read as they load
ENGLISH = Path(__file__).resolve().parents[1] / "ui" / "catalogs" / "en.toml"  # the words of the slots it prints


class OneLineParser(argparse.ArgumentParser):
    """Bad options print one line and exit 2, never a traceback or a usage page."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m engine", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    commands.add_parser("presets", help="list the presets and their settings")
    for name in ("trace", "explain", "grads"):
        sub = commands.add_parser(name, help={"trace": "run a forward pass", "explain": "explain one cell",
                                              "grads": "the training loss and every parameter's gradient"}[name])
        add_model_arguments(sub)
    trace = commands.choices["trace"]
    trace.add_argument("--format", choices=sorted(WRITERS), default="json",
                       help="pytorch: a zip of the NPZ and a script that checks it in PyTorch")
    trace.add_argument("--out", default=None, help="file to write (default: standard output)")
    explain = commands.choices["explain"]
    explain.add_argument("--step", required=True, help="a step name, e.g. enc.0.attn.scores")
    explain.add_argument("--index", required=True, help="comma-separated indices, e.g. 0,0,1")
    commands.choices["grads"].add_argument("--format", choices=["json"], default="json")
    _add_generate(commands)
    _add_train(commands)
    _add_vit_train(commands)
    return parser


def add_model_arguments(parser):
    """The options that choose a model and its sentences (read by model_from_args): trace, explain, grads and the
    handout's command line (python -m ui.handout)."""
    parser.add_argument("--preset", required=True, choices=sorted(PRESETS))
    parser.add_argument("--src", default=DEFAULT_SOURCE, help="the source sentence")
    parser.add_argument("--tgt", default=None, help="the target prefix (the decoder starts with SOS)")
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="FIELD=VALUE",
                        help="change one Config field, e.g. --set attn_divisor=sqrt_dk")
    parser.add_argument("--seed", type=int, default=0)


def _add_generate(commands):
    sub = commands.add_parser("generate", help="write a translation token by token (greedy, sampling or beam)")
    sub.add_argument("--preset", required=True, choices=sorted(PRESETS))
    sub.add_argument("--src", default=DEFAULT_SOURCE, help="the source sentence")
    sub.add_argument("--set", dest="settings", action="append", default=[], metavar="FIELD=VALUE",
                     help="change one Config field, e.g. --set d_model=16")
    sub.add_argument("--seed", type=int, default=0, help="the seed of the model's random weights")
    sub.add_argument("--strategy", choices=STRATEGIES + ("beam",), default="greedy")
    sub.add_argument("--max-len", type=int, default=None, help="the most tokens to write (default 10)")
    sub.add_argument("--temperature", type=float, default=None, help="sampling: divide the logits by T (default 1)")
    sub.add_argument("--k", type=int, default=None, help="top_k: sample among the k most likely tokens")
    sub.add_argument("--p", type=float, default=None, help="top_p: sample among the most likely tokens up to mass p")
    sub.add_argument("--sample-seed", type=int, default=None, help="sampling: the seed of the draws (default 0)")
    sub.add_argument("--width", type=int, default=None, help="beam: how many sentences to keep (1-5, default 3)")
    sub.add_argument("--alpha", type=float, default=None, help="beam: the length normalisation exponent (0.6)")


def _add_train(commands):
    sub = commands.add_parser("train", help="learn a tiny corpus from scratch, then translate it greedily")
    sub.add_argument("--corpus", choices=sorted(CORPORA), default="en-es")
    sub.add_argument("--steps", type=int, default=None, help="optimisation steps (default 300)")
    sub.add_argument("--batch-size", type=int, default=None, help="sentence pairs per step (default 16)")
    sub.add_argument("--optimizer", choices=sorted(OPTIMIZERS), default=None, help="default adam")
    sub.add_argument("--lr-scale", type=float, default=None, help="multiplies the paper's schedule (default 1)")
    sub.add_argument("--warmup", type=int, default=None, help="steps of rising learning rate (default 100)")
    sub.add_argument("--label-smoothing", type=float, default=None, help="the paper uses 0.1 (default 0)")
    sub.add_argument("--dropout", type=float, default=None, help="the paper uses 0.1 (default 0)")
    sub.add_argument("--seed", type=int, default=TRAINING_SETUP["seed"],
                     help="fixes the initial weights, the order of the pairs and the dropout masks")
    sub.add_argument("--out", default=None, help="write the trained weights to this .npz file")


def _add_vit_train(commands):
    sub = commands.add_parser("vit-train", help="train the Vision Transformer on the 8x8 digits, then test it")
    defaults = ViTTrainSettings()
    sub.add_argument("--steps", type=int, default=defaults.steps, help=f"optimisation steps (default {defaults.steps})")
    sub.add_argument("--seed", type=int, default=defaults.seed, help="the weights' seed and the images' order")
    sub.add_argument("--out", default=None, help="write the trained weights and their test accuracy to this .npz")


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "presets":
            return _presets()
        if args.command == "grads":
            return _grads(model_from_args(args), args)
        if args.command == "generate":
            return _generate(model_from_args(args), args)
        if args.command == "train":
            return _train(args)
        if args.command == "vit-train":
            return _vit_train(args)
        trace = model_from_args(args).run(args.src, args.tgt)
        if args.command == "trace":
            return _trace(trace, args)
        return _explain(trace, args)
    except (ValueError, KeyError) as error:
        message = error.args[0] if error.args else str(error)
        parser.exit(2, f"{parser.prog}: error: {message}\n")


def model_from_args(args):
    overrides = {}
    for setting in args.settings:
        field, sep, value = setting.partition("=")
        if not sep:
            raise ValueError(f"--set takes FIELD=VALUE, got {setting!r}")
        overrides[field.strip()] = parse_field(field.strip(), value)
    return preset(args.preset, seed=args.seed, **overrides)


def _presets() -> int:
    for name, config in PRESETS.items():
        print(json.dumps({"name": name, "description": DESCRIPTIONS[name], "config": config.as_dict()}))
    return 0


def _trace(trace, args) -> int:
    writer = WRITERS[args.format]
    if args.format in BINARY:
        with (open(args.out, "wb") if args.out else io.BytesIO()) as out:
            writer(trace, out)
            if not args.out:
                sys.stdout.buffer.write(out.getvalue())
    elif args.out:
        with open(args.out, "w", encoding="utf-8", newline="") as out:
            writer(trace, out)
    else:
        writer(trace, sys.stdout)
    for side, word in trace.unknown:
        print(f"note: unknown {side} word {word!r} was read as <unk>", file=sys.stderr)
    return 0


def _grads(model, args) -> int:
    """One JSON object: the ids, the mean cross-entropy of the logits at dec_input_ids against target_ids (teacher
    forcing, no label smoothing, no dropout), and every parameter with its gradient, streamed array by array."""
    result = loss_and_grads(model, args.src, args.tgt or "")
    head = {"src_ids": result.src_ids, "dec_input_ids": result.dec_input_ids, "target_ids": result.target_ids,
            "loss": jsonable(result.loss)}
    sys.stdout.write(json.dumps(head, allow_nan=False)[:-1])
    for key, arrays in (("params", model.params), ("grads", result.grads)):
        sys.stdout.write(f', "{key}": {{')
        for i, (name, value) in enumerate(arrays.items()):
            sys.stdout.write(("," if i else "") + f"{json.dumps(name)}: {json.dumps(jsonable(value), allow_nan=False)}")
        sys.stdout.write("}")
    sys.stdout.write("}\n")
    for side, word in result.trace.unknown:
        print(f"note: unknown {side} word {word!r} was read as <unk>", file=sys.stderr)
    return 0


_BEAM_ONLY, _SAMPLING_ONLY = ("width", "alpha"), ("temperature", "k", "p", "sample_seed")


def _generate(model, args) -> int:
    """One JSON object: the tokens, the text and each step's chosen token with its probability; for beam
    search the ranked hypotheses and the beam tree instead of steps."""
    given = {name: getattr(args, name) for name in ("max_len",) + _BEAM_ONLY + _SAMPLING_ONLY
             if getattr(args, name) is not None}
    beam = args.strategy == "beam"
    misplaced = [n for n in given if n in (_SAMPLING_ONLY if beam else _BEAM_ONLY)
                 or (n == "sample_seed" and args.strategy == "greedy")]
    if misplaced:
        raise ValueError(f"--{misplaced[0].replace('_', '-')} does not apply to --strategy {args.strategy}")
    if beam:
        result = beam_json(beam_search(model, args.src, **given))
    else:
        given["seed"] = given.pop("sample_seed", 0)
        result = generation_json(generate(model, args.src, args.strategy, **given))
    print(json.dumps({"preset": args.preset, "src": args.src, "strategy": args.strategy, **result},
                     ensure_ascii=False, allow_nan=False))
    return 0


def generation_json(g) -> dict:
    steps = [{"prefix": list(s.prefix_tokens), "token": s.token, "token_id": s.token_id, "prob": s.prob,
              "sampled_prob": s.sampled_prob} for s in g.steps]
    return {"settings": g.settings, "tokens": list(g.tokens), "token_ids": list(g.token_ids), "text": g.text,
            "finished": g.finished, "logprob": g.logprob, "steps": steps}


def beam_json(b) -> dict:
    hypotheses = [{"tokens": list(h.tokens), "token_ids": list(h.token_ids), "text": h.text, "logprob": h.logprob,
                   "score": h.score, "finished": h.finished} for h in b.hypotheses]
    nodes = [dataclasses.asdict(n) for n in b.nodes]
    return {"settings": b.settings, **{k: hypotheses[0][k] for k in ("tokens", "token_ids", "text", "finished",
                                                                     "logprob", "score")},
            "hypotheses": hypotheses, "nodes": nodes}


_TRAIN_OPTIONS = ("steps", "batch_size", "optimizer", "lr_scale", "warmup", "label_smoothing", "dropout")


def _train(args) -> int:
    """A progress line every tenth of the run, the final loss, each greedy translation; the weights to --out."""
    given = {name: getattr(args, name) for name in _TRAIN_OPTIONS if getattr(args, name) is not None}
    settings = TrainSettings(corpus=args.corpus, seed=args.seed, **given)
    _check_out(args.out)
    model, sentences = start_model(args.seed), pairs(args.corpus)
    updates = training(model, settings)
    sizes = ", ".join(f"{k} {v}" for k, v in TRAINING_SETUP["overrides"].items())
    print(f"training the {model.name} model ({sizes}) on {args.corpus}: {len(sentences)} pairs, "
          f"{settings.steps} steps of {settings.batch_size} pairs, {settings.optimizer}")
    every, width = max(1, settings.steps // 10), len(str(settings.steps))
    for update in updates:
        if update.step % every == 0 or update.step == settings.steps:
            print(f"step {update.step:>{width}}/{settings.steps}  epoch {update.epoch:>3}  "
                  f"loss {update.loss:.4f}  lr {update.lr:.5f}")
    model = update.model
    print(f"final loss {corpus_loss(model, sentences):.4f} (mean over the {len(sentences)} pairs, "
          "no dropout or smoothing)")
    results = translations(model, sentences)
    for t in results:
        expected = "" if t.exact else f"  (expected {' '.join(t.expected)})"
        print(f"{'ok' if t.exact else 'NO'}  {t.src} -> {t.text or '(nothing)'}{expected}")
    print(f"{sum(t.exact for t in results)}/{len(results)} translated exactly")
    if args.out:
        try:
            save(model, args.out)
        except OSError as error:
            raise ValueError(f"cannot write {args.out!r}: {error.strerror}") from None
        print(f"saved to {args.out}")
    return 0


def _vit_train(args) -> int:
    """A progress line every tenth of the run, then the test accuracy; the weights (and that accuracy) to --out."""
    settings = ViTTrainSettings(steps=args.steps, seed=args.seed)
    _check_out(args.out)
    model, data = VisionTransformer.initial(ViTConfig(), seed=args.seed), digits.split("train")
    print(f"training the Vision Transformer ({ViTConfig()}) on {len(data.labels)} digits: {settings}")
    every, start = max(1, settings.steps // 10), time.perf_counter()
    for update in vit_training(model, data, settings):
        if update.step % every == 0:
            print(f"step {update.step}/{settings.steps}  epoch {update.epoch}  "
                  f"loss {update.loss:.4f}  lr {update.lr:.5f}")
    seconds, test = time.perf_counter() - start, digits.split("test")
    score = accuracy(update.model, *test)
    print(f"test accuracy {score:.4f} ({round(score * len(test.labels))}/{len(test.labels)}) after {seconds:.1f} s")
    if args.out:
        vit_save(update.model, args.out, test_accuracy=score, steps=settings.steps)
        print(f"saved to {args.out}")
    return 0


def _check_out(out):
    if out and not os.path.isdir(os.path.dirname(os.path.abspath(out))):
        raise ValueError(f"cannot write {out!r}: its folder does not exist")  # before training, not after


def _explain(trace, args) -> int:
    if args.step not in trace:
        raise ValueError(f"unknown step {args.step!r}; steps: {', '.join(trace)}")
    try:
        index = tuple(int(part) for part in args.index.split(","))
    except ValueError:
        raise ValueError(f"--index takes whole numbers separated by commas, got {args.index!r}") from None
    explanation = trace.explain(args.step, index)
    print(fill(explanation.text, _english()))
    print(fill(explanation.latex, _english()))
    return 0


@functools.cache
def _english() -> dict:
    """The app's English catalog: the one source of the words the engine's slots stand for (engine/words.py)."""
    return tomllib.loads(ENGLISH.read_text(encoding="utf-8"))


def with_one_blas_thread() -> None:
    """Run this command again with one BLAS thread, as the app's server runs (ui/core/server.py), unless the caller
    set a number. The products are small (64 images of 5 tokens), so a second thread mostly waits, and on a busy
    machine it waits long: vit-train took 261 s instead of 35 s. A BLAS library reads its threads when NumPy loads
    it, which importing `engine` has done, hence a new process (engine/ imports NumPy only: no threadpoolctl)."""
    if any(name in os.environ for name in BLAS_THREADS):
        return
    one_thread = {**os.environ, **dict.fromkeys(BLAS_THREADS, "1")}
    os.execve(sys.executable, sys.orig_argv, one_thread)  # the same command, with the options Python was given


if __name__ == "__main__":
    with_one_blas_thread()
    try:
        sys.exit(main())
    except BrokenPipeError:  # e.g. `... | head`: the reader left, which is not an error of ours
        sys.stderr.close()
        sys.exit(0)
