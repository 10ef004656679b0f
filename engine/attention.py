"""Scaled dot-product and multi-head attention (paper section 3.2), one function per equation."""
import numpy as np

# Each head's projections of what the block binds Q and K, V to (bound_to): %s is X, LayerNorm(X), X_dec or X_enc.
PROJ_TEX = {"q": r"Q_i = %s W_i^Q", "k": r"K_i = %s W_i^K", "v": r"V_i = %s W_i^V"}
BIAS_TEX = {"q": r" + b_i^Q", "k": r" + b_i^K", "v": r" + b_i^V"}
SCORES_TEX = r"S_i = Q_i K_i^\top"
SQRT_DK_TEX = r"\sqrt{d_k}"  # the paper's divisor; a divisor set by hand is written as its number
SCALED_TEX = {"sqrt_dk": r"S_i' = \frac{Q_i K_i^\top}{\sqrt{d_k}}", "number": r"S_i' = \frac{Q_i K_i^\top}{%s}"}
MASK_TEX = r"M_{ij} = \begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases}"
MASKED_TEX = r"S_i'' = S_i' + M"
# A batch: each sentence padded to the longest; the padding mask hides sentence b's padded keys (j >= its length).
PAD_MASK_TEX = (r"M^{\text{⟦pad⟧}}_{bj} = \begin{cases} 0 & j < \text{⟦len⟧}_b \\ -\infty & j \ge \text{⟦len⟧}_b"
                r" \end{cases}")
CAUSAL_PAD_MASK_TEX = r"M = M^{\text{⟦causal⟧}} + M^{\text{⟦pad⟧}}"
PAD_MASKED_TEX = r"S_i'' = S_i' + M^{\text{⟦pad⟧}}"
WEIGHTS_TEX = r"A_i = \operatorname{softmax}(S_i')"
MASKED_WEIGHTS_TEX = r"A_i = \operatorname{softmax}(S_i'')"
HEADS_TEX = r"\text{head}_i = A_i V_i"
CONCAT_TEX = r"\operatorname{Concat}(\text{head}_1, \ldots, \text{head}_h)"
OUT_TEX = r"\operatorname{MultiHead}(Q,K,V) = \operatorname{Concat}(\text{head}_1, \ldots, \text{head}_h)\, W^O"
# The paper's whole equations (section 3.2), which the steps above take apart; %s is the divisor, sqrt(d_k) in the
# paper.
ATTENTION_TEX = r"\operatorname{Attention}(Q,K,V) = \operatorname{softmax}\!\left(\frac{QK^\top}{%s}\right) V"
MASKED_ATTENTION_TEX = (r"\operatorname{Attention}(Q,K,V) = "
                        r"\operatorname{softmax}\!\left(\frac{QK^\top}{%s} + M\right) V")
HEAD_TEX = r"\text{head}_i = \operatorname{Attention}(Q W_i^Q%s,\; K W_i^K%s,\; V W_i^V%s)"
# What Q, K and V stand for in a block (section 3.2.3): one input in self-attention, two in cross-attention.
SELF_BINDING_TEX = r"Q = K = V = %s \quad (\text{⟦sublayer-input⟧})"
CROSS_BINDING_TEX = r"Q = %s,\; K = V = %s \\ (\text{⟦cross-inputs⟧})"  # the words on a line of their own
SIDE_BY_SIDE_TEX = r"W^Q = \begin{bmatrix} W_1^Q & \cdots & W_h^Q \end{bmatrix}"  # heads_side_by_side


def bound_to(cross: bool, pre_norm: bool) -> tuple[str, str]:
    """What a block binds Q, and K and V, to: the sub-layer's input X (LayerNorm(X) in pre-norm, where the sub-layer
    reads it normalised); in cross-attention Q is the decoder's X_dec so bound, K and V the encoder's output X_enc
    (its memory, already the encoder's last LayerNorm's in pre-norm)."""
    own = (r"\operatorname{LayerNorm}(%s)" if pre_norm else "%s") % (r"X_{\text{dec}}" if cross else "X")
    return (own, r"X_{\text{enc}}") if cross else (own, own)


def bindings_tex(cross: bool, pre_norm: bool) -> str:
    """The line that says what Q, K and V are in this block."""
    q, kv = bound_to(cross, pre_norm)
    return CROSS_BINDING_TEX % (q, kv) if cross else SELF_BINDING_TEX % q


def project(x, W, b=None):
    """Per-head projection X W_i (+ b_i): [..., n, d_model] @ [h, d_model, d_k] -> [..., h, n, d_k] (`...` a batch
    axis, if any). The forward pass passes W as a products.Multiplier, which makes the product with the heads side by
    side (one matrix product)."""
    out = x @ W  # (..., h, n, d_k)
    return out if b is None else out + b[:, None, :]  # (..., h, n, d_k)


def heads_side_by_side(W):
    """[h, d_model, d_k] -> [d_model, h*d_k], head 0's columns first."""
    h, d_model, d_k = W.shape
    return W.transpose(1, 0, 2).reshape(d_model, h * d_k)  # (d_model, h*d_k)


def heads_of(side_by_side, shape):
    """The inverse of heads_side_by_side, as a view: [d_model, h*d_k] -> [h, d_model, d_k]."""
    h, d_model, d_k = shape
    return side_by_side.reshape(d_model, h, d_k).transpose(1, 0, 2)  # (h, d_model, d_k)


def scores(q, k):
    """S_i = Q_i K_i^T."""
    return q @ np.swapaxes(k, -1, -2)  # (..., h, n_q, n_k)


def scale(s, divisor):
    """S / sqrt(d_k), or S / the chosen number."""
    return s / divisor  # (..., h, n_q, n_k)


def causal_mask(n, pad=None):
    """0 where a position may look (j <= i), -inf where it would see the future (j > i); in a batch, plus the keys'
    padding mask `pad` (b, 1, 1, n)."""
    mask = np.where(np.triu(np.ones((n, n), dtype=bool), k=1), -np.inf, 0.0)  # (n, n)
    return mask if pad is None else mask + pad  # (n, n), in a batch (b, 1, n, n)


def apply_mask(s, mask):
    """S + M: blocked cells become -inf, so softmax gives them weight exactly 0."""
    return s + mask  # (..., h, n_q, n_k)


def padding_mask(lengths, n):
    """0 on each sentence's real keys, -inf on its padding: [b] lengths -> [b, 1, 1, n], which broadcasts over the
    heads and the queries; softmax gives a padded key weight exactly 0."""
    padded = np.arange(n) >= np.asarray(lengths)[:, None]  # (b, n)
    return np.where(padded, -np.inf, 0.0)[:, None, None, :]  # (b, 1, 1, n)


def softmax(x, form="stable"):
    """Row softmax over the last axis; "stable" subtracts the row max so exp never overflows."""
    if form == "stable":
        x = x - np.max(x, axis=-1, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=-1, keepdims=True)


def weighted_sum(weights, v):
    """head_i = A_i V_i."""
    return weights @ v  # (..., h, n_q, d_v)


def concat_heads(heads):
    """[..., h, n, d_v] -> [..., n, h*d_v], head 0's columns first."""
    *batch, h, n, d_v = heads.shape
    return heads.swapaxes(-3, -2).reshape(*batch, n, h * d_v)  # (..., n, h*d_v)


def split_heads(side_by_side, h):
    """The inverse of concat_heads: [..., n, h*d] -> [..., h, n, d]."""
    return side_by_side.reshape(*side_by_side.shape[:-1], h, -1).swapaxes(-3, -2)  # (..., h, n, d)


def linear(x, W, b=None):
    """x W (+ b)."""
    out = x @ W  # (..., n, d_out)
    return out if b is None else out + b  # (..., n, d_out)
