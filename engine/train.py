"""Training (paper section 5): teacher forcing, the loss's analytic gradients, an optimiser and the schedule.

Each step takes a batch of sentence pairs, pads them to one length and computes every parameter's gradient in one
forward and backward pass (engine.backward.padded_loss_and_grads): the mean of the pairs' gradients, which the loop
over the pairs (per_pair=True, one pass each) computes too, slower. The optimiser then moves the weights. An epoch
is one pass over the corpus in a seeded random order.

    model = start_model()
    for update in training(model, TrainSettings(corpus="en-zh")):
        update.step, update.epoch, update.loss, update.lr   # stop whenever you like
    update.model                                          # the weights after that step
    run = train(start_model(), TrainSettings())           # or run to the end
    run.model, run.losses
    translations(run.model, pairs("en-es"))               # greedy decoding of every source sentence
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from .backward import loss_and_grads, padded_loss_and_grads
from .config import ConfigError
from .corpus import CORPORA, pairs as corpus_pairs
from .generate import generate
from .loss import cross_entropy, teacher_forcing
from .model import Model
from .optim import OPTIMIZERS, initial_state, learning_rate
from .presets import preset
from .values import check_seed, finite_number, whole

# The model the app and the command line train: the paper's architecture, small enough to learn in seconds.
TRAINING_SETUP = {"preset": "paper", "overrides": {"d_model": 32, "n_heads": 4, "d_ff": 64, "n_layers": 2}, "seed": 0}
BATCH_MEAN_TEX = r"g = \frac{1}{B} \sum_{b=1}^{B} \nabla_\theta L_b"


@dataclass(frozen=True)
class TrainSettings:
    """What to learn and how; checked on creation, with messages a learner understands."""
    corpus: str = "en-es"  # the sentence pairs to learn, by name (engine.corpus)
    steps: int = 300  # optimisation steps; each one learns from one batch
    batch_size: int = 16  # pairs per step, whose gradients are averaged
    optimizer: str = "adam"  # "adam" (the paper's, with beta_1 0.9, beta_2 0.98, epsilon 1e-9) or "sgd"
    lr_scale: float = 1.0  # s in the schedule s * d_model^-0.5 * min(t^-0.5, t * warmup^-1.5)
    warmup: int = 100  # steps over which the learning rate rises to its peak (the paper: 4000)
    momentum: float = 0.9  # SGD only: the share of the previous step kept in the next one
    label_smoothing: float = 0.0  # epsilon_ls: the paper uses 0.1; 0 lets the model learn the corpus exactly
    dropout: float = 0.0  # P_drop, in training only: the paper uses 0.1
    seed: int = 0  # fixes the order of the pairs in each epoch and the dropout masks

    def __post_init__(self):
        if self.corpus not in CORPORA:
            raise ValueError(f"unknown corpus {self.corpus!r}; choose one of {', '.join(CORPORA)}")
        for name in ("steps", "batch_size", "warmup"):
            if not whole(getattr(self, name)) or getattr(self, name) < 1:
                raise ValueError(f"{name} must be a whole number of at least 1, got {getattr(self, name)!r}")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {', '.join(OPTIMIZERS)}; got {self.optimizer!r}")
        if not finite_number(self.lr_scale) or self.lr_scale <= 0:
            raise ValueError(f"the learning-rate scale must be a number greater than 0, got {self.lr_scale!r}")
        for name in ("momentum", "label_smoothing", "dropout"):
            if not finite_number(getattr(self, name)) or not 0 <= getattr(self, name) < 1:
                raise ValueError(f"{name} must be a number from 0 up to (not including) 1, "
                                 f"got {getattr(self, name)!r}")
        check_seed(self.seed)

    def replace(self, **changes) -> "TrainSettings":
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class TrainingUpdate:
    """What one optimisation step did."""
    step: int  # steps done so far, from 1
    epoch: int  # the pass over the corpus this step belongs to, from 1
    loss: float  # the batch's mean loss before the step (with the settings' label smoothing and dropout)
    lr: float  # the learning rate of this step
    grad_norm: float  # the length of the averaged gradient, all parameters together
    batch: tuple  # the (source, target) pairs of this step
    model: Model  # the weights after the step


@dataclass(frozen=True)
class TrainingRun:
    """A finished training: the final model and the history of every step."""
    model: Model
    losses: np.ndarray  # (steps,) each step's batch loss
    lrs: np.ndarray  # (steps,) each step's learning rate


@dataclass(frozen=True)
class Translation:
    """One source sentence decoded greedily, against its training target."""
    src: str
    expected: tuple  # the target's tokens as the vocabulary spells them
    tokens: tuple  # the generated tokens, EOS excluded
    finished: bool  # the model wrote EOS

    @property
    def exact(self) -> bool:
        return self.finished and self.tokens == self.expected

    @property
    def text(self) -> str:
        return " ".join(self.tokens)


def start_model(seed: int | None = None) -> Model:
    """The untrained model of TRAINING_SETUP (its own seed unless one is given)."""
    setup = TRAINING_SETUP
    return preset(setup["preset"], seed=setup["seed"] if seed is None else seed, **setup["overrides"])


def training(model: Model, settings: TrainSettings | None = None, pairs=None, *, per_pair: bool = False):
    """An iterator of TrainingUpdate, one after every optimisation step; stop whenever you like, the last update's
    model is the training so far.

    `settings` default to TrainSettings(); `pairs`, the (source, target) sentences to learn, to its corpus.
    They are checked at once, before the first step. A step that would make a weight inf or NaN (a learning rate
    far too large) raises ValueError instead; the last update's model is still the last good one. per_pair=True
    computes each step's gradient with the loop over the pairs (pairs_loss_and_grads) instead of the padded batch."""
    settings = settings or TrainSettings()
    pairs = _check_pairs(corpus_pairs(settings.corpus) if pairs is None else pairs, settings)
    return _training(model, settings, pairs, pairs_loss_and_grads if per_pair else batch_loss_and_grads)


def _training(model, settings, pairs, gradient):
    """The steps themselves; two generators from the seed, so the order of the pairs does not depend on dropout."""
    order_rng, dropout_rng = (np.random.default_rng([settings.seed, stream]) for stream in (0, 1))
    per_epoch = math.ceil(len(pairs) / settings.batch_size)
    state, order = initial_state(settings.optimizer, model.params), []
    hyper = {"momentum": settings.momentum} if settings.optimizer == "sgd" else {}
    for step in range(1, settings.steps + 1):
        if (step - 1) % per_epoch == 0:
            order = list(order_rng.permutation(len(pairs)))
        start = (step - 1) % per_epoch * settings.batch_size
        batch = tuple(pairs[i] for i in order[start:start + settings.batch_size])
        loss, grads = gradient(model, batch, settings, dropout_rng)
        lr = learning_rate(step, d_model=model.config.d_model, warmup=settings.warmup, scale=settings.lr_scale)
        with np.errstate(over="ignore", invalid="ignore"):  # a diverging update is refused just below
            params, state = OPTIMIZERS[settings.optimizer](model.params, grads, state, lr, **hyper)
        if not all(np.all(np.isfinite(value)) for value in params.values()):
            raise ConfigError(f"training diverged at step {step}: the update made some weights inf or NaN, which "
                              f"happens when the learning rate ({lr:.3g} here) is too large; try a smaller lr_scale",
                              "train_diverged", step=step, lr=f"{lr:.3g}")
        model = model.with_params(params)
        yield TrainingUpdate(step, (step - 1) // per_epoch + 1, loss, lr, _norm(grads), batch, model)


def train(model: Model, settings: TrainSettings | None = None, pairs=None, *, per_pair: bool = False) -> TrainingRun:
    """Run `training` to the end."""
    losses, lrs = [], []
    for update in training(model, settings, pairs, per_pair=per_pair):
        model = update.model
        losses.append(update.loss)
        lrs.append(update.lr)
    return TrainingRun(model, np.array(losses), np.array(lrs))


def batch_loss_and_grads(model: Model, batch, settings: TrainSettings, dropout_rng=None) -> tuple[float, dict]:
    """(mean loss, mean gradient) over the batch's pairs (BATCH_MEAN_TEX), in one pass of the padded batch; its
    dropout seed is drawn from dropout_rng (by default a generator seeded with the settings' seed)."""
    dropout_rng = dropout_rng or np.random.default_rng([settings.seed, 1])
    seed = int(dropout_rng.integers(2**32)) if settings.dropout else 0
    result = padded_loss_and_grads(model, batch, label_smoothing=settings.label_smoothing, dropout=settings.dropout,
                                   seed=seed)
    return result.loss, result.grads


def pairs_loss_and_grads(model: Model, batch, settings: TrainSettings, dropout_rng=None) -> tuple[float, dict]:
    """batch_loss_and_grads as a loop, one pass per pair: the reference the padded batch equals (without dropout,
    whose masks are drawn per pair here); each pair's dropout seed is drawn from dropout_rng."""
    options = {"label_smoothing": settings.label_smoothing, "dropout": settings.dropout}
    dropout_rng = dropout_rng or np.random.default_rng([settings.seed, 1])
    total_loss, total = 0.0, {name: np.zeros(value.shape) for name, value in model.params.items()}
    for src, tgt in batch:
        seed = int(dropout_rng.integers(2**32)) if settings.dropout else 0
        result = loss_and_grads(model, src, tgt, seed=seed, **options)
        total_loss += result.loss
        for name, grad in result.grads.items():
            total[name] += grad  # like the parameter
    return total_loss / len(batch), {name: grad / len(batch) for name, grad in total.items()}


def corpus_loss(model: Model, pairs) -> float:
    """The mean cross-entropy over the pairs, in inference mode (no dropout, no label smoothing)."""
    losses = []
    for src, tgt in pairs:
        trace = model.run(src, tgt)
        losses.append(cross_entropy(trace["masked_logits"], teacher_forcing(model, trace.tgt_ids[1:])[1])[0])
    return float(np.mean(losses))


def translations(model: Model, pairs, max_len: int | None = None) -> tuple:
    """Greedy decoding of every source sentence, next to its target; max_len defaults to the longest target + 2."""
    expected = [model.vocab.encode(tgt, side="tgt")[1] for _, tgt in pairs]
    if max_len is None:
        max_len = min(max(len(tokens) for tokens in expected) + 2, model.config.max_len)
    result = []
    for (src, _), tokens in zip(pairs, expected):
        generation = generate(model, src, max_len=max_len)
        words = tuple(t for t in generation.tokens if t != model.vocab.end)
        result.append(Translation(src, tuple(tokens), words, generation.finished))
    return tuple(result)


def _check_pairs(pairs, settings):
    pairs = tuple(pairs)
    if not pairs:
        raise ValueError("there are no sentence pairs to learn from")
    if settings.batch_size > len(pairs):
        raise ValueError(f"batch_size ({settings.batch_size}) is larger than the corpus ({len(pairs)} pairs)")
    return pairs


def _norm(grads) -> float:
    return float(np.sqrt(sum(np.sum(g**2) for g in grads.values())))


