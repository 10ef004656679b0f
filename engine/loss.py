"""The training loss (paper section 5.4): cross-entropy of the next token, with teacher forcing and label smoothing.

The decoder reads SOS + target and must predict target + EOS: the target shifted left by one. The loss reads
the masked logits (the model's "masked_logits" step: <unk> is -inf, P = 0) through a log-softmax that subtracts
the row max, whatever the `softmax` option, so a saturated model gets a large finite loss rather than log(0).
"""
from __future__ import annotations

import numpy as np


TEACHER_FORCING_TEX = (r"\text{⟦decoder-input⟧} = (\text{SOS}, t_1, \ldots, t_m),\quad "
                       r"y = (t_1, \ldots, t_m, \text{EOS})")
CROSS_ENTROPY_TEX = r"\ell_i = -\log P_{i,\,y_i}"
SMOOTHED_TARGET_TEX = r"q_{i,v} = (1 - \varepsilon)\,[v = y_i] + \frac{\varepsilon}{V}"
SMOOTHED_LOSS_TEX = r"\ell_i = -\sum_{v=1}^{V} q_{i,v} \log P_{i,v}"
MEAN_LOSS_TEX = r"L = \frac{1}{|I|} \sum_{i \in I} \ell_i,\quad I = \{\, i : y_i \ne \text{⟦ignore⟧} \,\}"
BATCH_LOSS_TEX = r"L = \frac{1}{B} \sum_{b=1}^{B} L_b"  # a batch: the mean of its sentences' mean losses
LOGITS_GRAD_TEX = (r"\frac{\partial L}{\partial\, \text{logits}_{i,v}} = \frac{P_{i,v} - q_{i,v}}{|I|}\ (i \in I),"
                   r"\ 0\ (i \notin I)")


def teacher_forcing(model, tgt_ids) -> tuple[list[int], list[int]]:
    """(decoder input, targets): SOS + tgt_ids and tgt_ids + EOS, one target per decoder position (the model's start
    and end tokens: Marian's are <pad> and </s>)."""
    tgt_ids = [int(i) for i in tgt_ids]
    return [model.start_id] + tgt_ids, tgt_ids + [model.vocab.id(model.vocab.end)]


def log_softmax(logits):
    """log P, computed as x - max - log(sum(exp(x - max))) so it stays finite where P underflows to 0."""
    shifted = logits - np.max(logits, axis=-1, keepdims=True)  # (n, V)
    return shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))  # (n, V)


def target_distribution(targets, vocab_size, label_smoothing=0.0, possible=None):
    """q: (1 - eps) on the target word plus eps / V on every word (PyTorch's convention); with `possible`, an
    (n, V) boolean array, eps is shared by the possible words of each row only (the output's mask rules out <unk>)."""
    possible = np.ones((len(targets), vocab_size), dtype=bool) if possible is None else possible  # (n, V)
    q = label_smoothing * possible / np.sum(possible, axis=-1, keepdims=True)  # (n, V)
    q[np.arange(len(targets)), targets] += 1.0 - label_smoothing  # (n, V)
    return q


def counted(targets, ignore_id=None):
    """1.0 for the positions the loss counts, 0.0 where the target is the ignored id (padding)."""
    targets = np.asarray(targets, dtype=int)  # (..., n)
    return np.ones(targets.shape) if ignore_id is None else (targets != ignore_id).astype(float)  # (..., n)


def cross_entropy(logits, targets, *, label_smoothing=0.0, ignore_id=None):
    """(mean loss over the counted positions, per-position losses with 0 at ignored ones).

    A padded batch, logits (b, n, V) and targets (b, n) with its padding ignored, gives the mean of each sentence's
    mean (BATCH_LOSS_TEX): the mean of the losses of its sentences, each computed alone. With no counted position a
    sentence's mean is 0.0 (PyTorch gives NaN): there is nothing to learn from."""
    q, weight = _targets(logits, targets, label_smoothing, ignore_id)  # (..., n, V), (..., n)
    # (..., n, V) a masked word (q = 0, log P = -inf) adds 0, not 0 * -inf
    terms = np.multiply(q, log_softmax(logits), out=np.zeros_like(q), where=q != 0)
    token_losses = -np.sum(terms, axis=-1) * weight  # (..., n)
    means = np.sum(token_losses, axis=-1) / np.maximum(np.sum(weight, axis=-1), 1.0)  # (...) each sentence's
    return float(np.mean(means)), token_losses


def cross_entropy_grad(logits, targets, *, label_smoothing=0.0, ignore_id=None):
    """dL/dlogits = (P - q) / |I| on the counted rows, 0 on ignored rows; in a batch of B sentences, / (B |I_b|)."""
    q, weight = _targets(logits, targets, label_smoothing, ignore_id)  # (..., n, V), (..., n)
    probs = np.exp(log_softmax(logits))  # (..., n, V)
    sentences = weight.size // weight.shape[-1]
    share = weight / np.maximum(np.sum(weight, axis=-1, keepdims=True), 1.0) / sentences  # (..., n)
    return (probs - q) * share[..., None]  # (..., n, V)


def _targets(logits, targets, label_smoothing, ignore_id):
    """Checks the arguments; (q, counted), with q = 0 on ignored rows."""
    shape = np.shape(logits)
    vocab_size = shape[-1] if len(shape) >= 2 else None
    if vocab_size is None or np.shape(targets) != shape[:-1]:
        raise ValueError(f"need one target per row of the logits, got {len(targets)} targets for shape "
                         f"{np.shape(logits)}")
    if isinstance(label_smoothing, bool) or not 0 <= label_smoothing <= 1:
        raise ValueError(f"label_smoothing must be a number from 0 to 1, got {label_smoothing!r}")
    weight = counted(targets, ignore_id)  # (..., n)
    ids = np.where(weight > 0, np.asarray(targets, dtype=int), 0)  # (..., n)
    if np.any((ids < 0) | (ids >= vocab_size)):
        raise ValueError(f"target ids must be between 0 and {vocab_size - 1}, got {list(targets)}")
    possible = np.asarray(logits).reshape(-1, vocab_size) != -np.inf  # (rows, V) words no output may be are -inf
    q = target_distribution(ids.ravel(), vocab_size, label_smoothing, possible).reshape(shape)  # (..., n, V)
    return q * weight[..., None], weight  # ignored rows: 0
