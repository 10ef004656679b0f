"""Training the Vision Transformer (engine/vit.py) on labelled images: cross-entropy of the class token's
prediction, backpropagation through the same per-kind rules as the text model (engine/backward.py), and Adam with
the paper's learning-rate schedule (engine/optim.py). Its weights are saved as an .npz file without pickles.

    run = train(VisionTransformer.initial(ViTConfig(), seed=0), digits.split("train"), ViTTrainSettings())
    accuracy(run.model, *digits.split("test"))
"""
from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass
from types import MappingProxyType
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .backward import backward
from .config import ConfigError
from .loss import cross_entropy, cross_entropy_grad
from .optim import adam, initial_state, learning_rate
from .values import check_seed, finite_number, read_only, whole
from .vit import ViTConfig, VisionTransformer, check_images, vit_param_shapes

META = "meta"
FORMAT = 1
EVAL_BATCH = 256  # images per pass when measuring accuracy
SHIPPED = Path(__file__).parent / "data" / "vit-digits.npz"  # the trained model the app opens on (README: vit-train)
# What `vit-train` with the shipped file's settings reproduces (README, the training page, tests/test_vit.py): its
# weights bit for bit where NumPy's OpenBLAS runs these kernels, as where the file was made, at any number of threads;
# elsewhere the products' terms are summed in another order, the weights drift apart, and the test accuracy (347 of
# 360 here; 348 with OPENBLAS_CORETYPE=Haswell or Katmai) stays above REPRODUCED_ACCURACY.
SHIPPED_KERNELS = "SkylakeX"
REPRODUCED_ACCURACY = 0.95


@dataclass(frozen=True)
class ViTTrainSettings:
    """How the Vision Transformer learns; checked on creation."""
    steps: int = 800  # optimisation steps, one batch each
    batch_size: int = 64  # images per step, whose gradients are averaged
    lr_scale: float = 2.0  # s in the schedule s * d_model^-0.5 * min(t^-0.5, t * warmup^-1.5)
    warmup: int = 100  # steps over which the learning rate rises to its peak
    seed: int = 0  # the weights' seed and the order of the images in each epoch

    def __post_init__(self):
        for name in ("steps", "batch_size", "warmup"):
            if not whole(getattr(self, name)) or not 1 <= getattr(self, name) <= 100_000:
                raise ConfigError(f"{name} must be a whole number from 1 to 100000, got {getattr(self, name)!r}",
                                  "vit_train_range", field=name)
        if not finite_number(self.lr_scale) or self.lr_scale <= 0:
            raise ConfigError(f"lr_scale must be a number greater than 0, got {self.lr_scale!r}", "vit_lr")
        check_seed(self.seed)


class LossAndGrads(NamedTuple):
    loss: float  # mean cross-entropy over the images
    grads: dict  # every parameter -> dL/d(parameter), like the parameter
    trace: object  # the forward Trace
    backward: MappingProxyType  # "grad.<step>" -> dL/d(step), in backward order


class Update(NamedTuple):
    step: int  # steps done, from 1
    epoch: int  # the pass over the images this step belongs to, from 1
    loss: float  # the batch's mean loss before the step
    lr: float
    model: VisionTransformer  # the weights after the step


def loss_and_grads(model: VisionTransformer, images, labels) -> LossAndGrads:
    """The mean cross-entropy of a batch (b, H, W, C) against its labels (b,), or of one image and label, and
    every gradient, by backpropagation from the logits (P - onehot) / b."""
    trace = model.run(images)
    logits = trace["head.logits"]  # (b, 1, N_c), one image (1, N_c)
    targets = _targets(labels, logits.shape[:-1], model.settings.n_classes)  # (b, 1)
    with np.errstate(all="ignore"):
        loss, _ = cross_entropy(logits, targets)
        grads = backward(trace, cross_entropy_grad(logits, targets), start="head.logits")
    params = {name: grads.get(name, np.zeros(value.shape)) for name, value in model.params.items()}
    steps = {f"grad.{s.name}": read_only(grads[s.name], copy=False) for s in reversed(trace.steps()) if s.name in grads}
    return LossAndGrads(loss, params, trace, MappingProxyType(steps))


def _targets(labels, shape, n_classes):
    labels = np.asarray(labels)
    if (labels.dtype.kind not in "iu" or labels.size != int(np.prod(shape))
            or np.any((labels < 0) | (labels >= n_classes))):
        raise ConfigError(f"give one class from 0 to {n_classes - 1} per image", "vit_labels", high=n_classes - 1)
    return labels.reshape(shape)  # (b, 1)


def training(model: VisionTransformer, data, settings: ViTTrainSettings | None = None):
    """An iterator of Update, one per step: shuffled batches of `data` (images, labels), each epoch reordered."""
    settings = settings or ViTTrainSettings()
    images, labels = check_images(data[0], model.settings), np.asarray(data[1])
    if settings.batch_size > len(images) or len(labels) != len(images):
        raise ConfigError(f"need as many labels as images, and at least batch_size ({settings.batch_size}) of them",
                          "vit_train_data", n=len(images))
    rng, per_epoch = np.random.default_rng([settings.seed, 2]), len(images) // settings.batch_size
    state, order = initial_state("adam", model.params), None
    for step in range(1, settings.steps + 1):
        if (step - 1) % per_epoch == 0:
            order = rng.permutation(len(images))
        start = (step - 1) % per_epoch * settings.batch_size
        batch = order[start:start + settings.batch_size]
        result = loss_and_grads(model, images[batch], labels[batch])
        lr = learning_rate(step, d_model=model.settings.d_model, warmup=settings.warmup, scale=settings.lr_scale)
        params, state = adam(model.params, result.grads, state, lr)
        model = model.with_params(params)
        yield Update(step, (step - 1) // per_epoch + 1, result.loss, lr, model)


class TrainingRun(NamedTuple):
    model: VisionTransformer
    losses: np.ndarray  # (steps,)


def train(model: VisionTransformer, data, settings: ViTTrainSettings | None = None) -> TrainingRun:
    losses = []
    for update in training(model, data, settings):
        model = update.model
        losses.append(update.loss)
    return TrainingRun(model, np.array(losses))


def predict(model: VisionTransformer, images) -> np.ndarray:
    """The most probable class of every image (b, H, W, C): (b,)."""
    images = check_images(images, model.settings)
    return np.concatenate([np.argmax(model.run(images[i:i + EVAL_BATCH])["head.logits"][:, 0], axis=-1)
                           for i in range(0, len(images), EVAL_BATCH)])


def accuracy(model: VisionTransformer, images, labels) -> float:
    """The share of images whose most probable class is their label."""
    return float(np.mean(predict(model, images) == np.asarray(labels)))


def confusion(model: VisionTransformer, images, labels) -> np.ndarray:
    """counts[true, predicted]: (N_c, N_c)."""
    n = model.settings.n_classes
    counts = np.zeros((n, n), dtype=int)
    np.add.at(counts, (np.asarray(labels), predict(model, images)), 1)
    return counts


# ---- saving ---------------------------------------------------------------------------------------------------------

def save(model: VisionTransformer, file, **facts) -> None:
    """Write the weights and a JSON "meta" entry (format, seed, settings, and `facts` such as the test accuracy)."""
    meta = {"format": FORMAT, "seed": model.seed, "settings": model.settings.as_dict(), "facts": facts}
    arrays = {name: np.asarray(value) for name, value in model.params.items()}
    np.savez_compressed(file, **arrays, **{META: np.array([json.dumps(meta)])})


def load(file) -> tuple[VisionTransformer, dict]:
    """(the model, its facts) from a file `save` wrote; anything else is refused with a ConfigError."""
    if isinstance(file, (bytes, bytearray)):
        file = io.BytesIO(file)
    try:
        with np.load(file, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
        meta = json.loads(str(arrays.pop(META)[0]))
        settings, seed = ViTConfig(**meta["settings"]), meta["seed"]
        check_seed(seed)
    except (OSError, ValueError, KeyError, TypeError, IndexError, EOFError, zipfile.BadZipFile, AttributeError):
        raise ConfigError("this is not a Vision Transformer's weights file", "vit_ckpt") from None
    shapes = vit_param_shapes(settings)
    if set(arrays) != set(shapes) or any(arrays[n].shape != shapes[n] or arrays[n].dtype.kind != "f"
                                         or not np.all(np.isfinite(arrays[n])) for n in shapes):
        raise ConfigError("the weights do not fit the file's settings", "vit_ckpt_params")
    params = {name: value.astype(float) for name, value in arrays.items()}
    return VisionTransformer(settings, params, seed), meta.get("facts", {})

