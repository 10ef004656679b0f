"""Token embeddings and positional encodings (paper section 3.4 and 3.5, and the blog's variants)."""
from functools import lru_cache

import numpy as np

EMBED_TEX = r"X_{\text{emb}} = E[\text{token}]"
EMBED_SCALED_TEX = r"X_{\text{emb}} = E[\text{token}] \cdot \sqrt{d_{\text{model}}}"
INPUT_TEX = r"X = X_{\text{emb}} + PE"
PE_TEX = {
    "sinusoidal": r"PE_{(pos,2i)} = \sin\left(\frac{pos}{10000^{2i/d_{\text{model}}}}\right),\quad "
    r"PE_{(pos,2i+1)} = \cos\left(\frac{pos}{10000^{2i/d_{\text{model}}}}\right)",
    "blog": r"PE_{(pos,j)} = \sin\left(\frac{pos}{10000^{2j/d_{\text{model}}}}\right)\ (j \text{⟦even⟧}),\quad "
    r"\cos\left(\frac{pos}{10000^{2j/d_{\text{model}}}}\right)\ (j \text{⟦odd⟧})",
    "sinusoidal_halves": r"PE_{(pos,i)} = \sin\left(\frac{pos}{10000^{2i/d_{\text{model}}}}\right),\quad "
    r"PE_{(pos,\lceil d_{\text{model}}/2 \rceil + i)} = \cos\left(\frac{pos}{10000^{2i/d_{\text{model}}}}\right)",
    "learned": r"PE_{(pos,:)} = P[pos] \ \text{⟦learned-table⟧}",
    "none": r"PE = 0",
}
PE_BASE = 10000.0
# The encodings the post prints for "Hello" and "World" (rounded by hand: cos(0.01) = 0.99995 shows as 0.99).
BLOG_PRINTED_PE = np.array([[0.0, 1.0, 0.0, 1.0], [0.84, 0.99, 0.0, 1.0]])
BLOG_TABLE_TEX = r"PE = %s\ \text{⟦printed-table⟧}"  # when every cell is one the post printed
BLOG_TABLE_CASES_TEX = (r"\begin{gathered}PE_{(pos,j)} = \begin{cases} T_{pos,j} & pos < 2,\ j < 4 \\ "
                        r"\operatorname{round}_2 \sin\left(pos / 10000^{2j/d_{\text{model}}}\right) "
                        r"& \text{⟦otherwise⟧},\ j \text{⟦even⟧} \\ "
                        r"\operatorname{round}_2 \cos\left(pos / 10000^{2j/d_{\text{model}}}\right) "
                        r"& \text{⟦otherwise⟧},\ j \text{⟦odd⟧} \end{cases} \\[0.5em] "
                        r"T = %s\ \text{⟦printed-table⟧}\end{gathered}")


@lru_cache(maxsize=256)  # every forward pass asks; the answer depends on these three alone
def pe_tex(kind, n, d_model):
    """The formula of an (n, d_model) encoding of the given kind. The post printed two rows of four numbers: an
    encoding within them is that table; a longer or wider one takes its further cells from the post's formula."""
    if kind != "blog_table":
        return PE_TEX[kind]
    if n <= 2 and d_model <= 4:
        return BLOG_TABLE_TEX % _bmatrix(BLOG_PRINTED_PE[:n, :d_model])
    return BLOG_TABLE_CASES_TEX % _bmatrix(BLOG_PRINTED_PE)


def _bmatrix(matrix):
    return r"\begin{bmatrix} " + r" \\ ".join(" & ".join(f"{x:g}" for x in row) for row in matrix) + r" \end{bmatrix}"


def embed(table, ids, scale):
    """X_emb = E[ids] * scale: [..., n] ids -> [..., n, d_model]."""
    return table[np.asarray(ids)] * scale  # (..., n, d_model)


def sinusoid_angle(pos, d_model, exponent_index):
    """pos / 10000^(exponent_index / d_model): the argument of sin/cos at row pos (exponent_index: its column's)."""
    return pos / PE_BASE ** (exponent_index / d_model)


def paper_exponent(j):
    """Paper: columns 2i and 2i+1 share the exponent 2i."""
    return 2 * (np.asarray(j) // 2)


def blog_exponent(j):
    """The blog writes 2*j/d for column j, so odd columns get a larger exponent than the paper's."""
    return 2 * np.asarray(j)


def sinusoidal(n, d_model, exponent=paper_exponent):
    """sin at even columns, cos at odd columns of pos / 10000^(exponent(j) / d_model)."""
    pos = np.arange(n)[:, None]  # (n, 1)
    j = np.arange(d_model)[None, :]  # (1, d_model)
    angle = sinusoid_angle(pos, d_model, exponent(j))  # (n, d_model)
    return np.where(j % 2 == 0, np.sin(angle), np.cos(angle))  # (n, d_model)


def halves_order(d_model):
    """The paper's columns in Marian's order: the sines (even columns) first, then the cosines (odd columns), so
    column i < ceil(d_model / 2) is sin with exponent 2i and column ceil(d_model / 2) + i is cos with exponent 2i
    (transformers' MarianSinusoidalPositionalEmbedding.create_weight)."""
    return np.concatenate([np.arange(0, d_model, 2), np.arange(1, d_model, 2)])  # (d_model,)


def blog_table(n, d_model):
    """The post's printed rows where they exist; further rows from its formula, rounded to 2 decimals."""
    table = np.round(sinusoidal(n, d_model, blog_exponent), 2)  # (n, d_model)
    rows, cols = min(n, 2), min(d_model, 4)
    table[:rows, :cols] = BLOG_PRINTED_PE[:rows, :cols]
    return table  # (n, d_model)


def positional_encoding(kind, n, d_model, learned=None):
    """The (n, d_model) positional encoding of the given kind, read-only."""
    if kind == "learned":
        return learned[:n]  # (n, d_model)
    return _fixed_encoding(kind, n, d_model)


@lru_cache(maxsize=16)  # every forward pass asks; a table depends on these three alone
def _fixed_encoding(kind, n, d_model):
    """The (n, d_model) encoding of a kind that has no parameters, made once."""
    if kind == "sinusoidal":
        table = sinusoidal(n, d_model)
    elif kind == "sinusoidal_halves":
        table = sinusoidal(n, d_model)[:, halves_order(d_model)]
    elif kind == "blog":
        table = sinusoidal(n, d_model, blog_exponent)
    elif kind == "blog_table":
        table = blog_table(n, d_model)
    else:
        table = np.zeros((n, d_model))
    table.setflags(write=False)
    return table  # (n, d_model)


ONE_HOT_TEX = r"X_{\text{emb}} = \chi\, W_E"
ONE_HOT_SCALED_TEX = r"X_{\text{emb}} = \chi\, W_E \cdot \sqrt{d_{\text{model}}}"
COSINE_TEX = r"\cos(E_a, E_b) = \frac{E_a \cdot E_b}{\lVert E_a \rVert\, \lVert E_b \rVert}"
ROTATION_TEX = r"PE_{pos+k} = R(k)\, PE_{pos}"


def one_hot(ids, vocab_size):
    """chi: row i is 0 except a 1 in column ids[i] (seed 001's chi in R^{n x N})."""
    chi = np.zeros((len(ids), vocab_size))  # (n, N)
    chi[np.arange(len(ids)), ids] = 1.0
    return chi  # (n, N)


def embed_as_product(table, ids, scale):
    """X_emb = chi W_E * scale: the row lookup of embed() written as a matrix product."""
    return one_hot(ids, table.shape[0]) @ table * scale  # (n, N) @ (N, d_model) -> (n, d_model)


def cosine_similarity(table, eps=1e-8):
    """cos of every pair of rows, as torch.nn.functional.cosine_similarity (each norm at least eps)."""
    norms = np.maximum(np.linalg.norm(table, axis=1), eps)  # (N,)
    unit = table / norms[:, None]  # (N, d_model)
    return unit @ unit.T  # (N, N)


def frequencies(d_model):
    """omega_i = 1 / 10000^(2i/d_model) of the paper's column pairs (2i, 2i+1)."""
    return sinusoid_angle(1.0, d_model, paper_exponent(np.arange(0, d_model - 1, 2)))  # (d_model // 2,)


def pair_rotations(k, d_model):
    """R_i(k) = [[cos w_i k, sin w_i k], [-sin w_i k, cos w_i k]] of every full pair: (sin, cos)(w (pos + k)) is
    R_i(k) times (sin, cos)(w pos) by the angle-sum identities."""
    c, s = np.cos(frequencies(d_model) * k), np.sin(frequencies(d_model) * k)  # (d_model // 2,)
    return np.stack([np.stack([c, s], -1), np.stack([-s, c], -1)], -2)  # (d_model // 2, 2, 2)


def rotation(k, d_model):
    """R(k): the pairs' rotations on the diagonal, (2 (d_model // 2), 2 (d_model // 2)); an odd d_model's last
    column has no partner and is left out."""
    blocks = pair_rotations(k, d_model)  # (pairs, 2, 2)
    size = 2 * len(blocks)
    r = np.zeros((size, size))
    for i, block in enumerate(blocks):
        r[2 * i:2 * i + 2, 2 * i:2 * i + 2] = block
    return r  # (2 pairs, 2 pairs)


def dot_by_distance(table, starts):
    """PE(pos) . PE(pos + k) for k = 0, 1, ... from each start pos: {pos: (n - pos,)}."""
    return {pos: table[pos:] @ table[pos] for pos in starts}  # (n - pos, d_model) @ (d_model,) -> (n - pos,)


def position_similarity(table):
    """PE PE^T: the dot product of every pair of positions' encodings."""
    return table @ table.T  # (n, d_model) @ (d_model, n) -> (n, n)


def rotated(table, pos, k):
    """R(k) PE(pos) over the full column pairs: what PE(pos + k) is if the encoding is the paper's."""
    pairs = 2 * (table.shape[1] // 2)
    return rotation(k, table.shape[1]) @ table[pos, :pairs]  # (pairs, pairs) @ (pairs,) -> (pairs,)


def rotation_gap(table, pos, k):
    """max |R(k) PE(pos) - PE(pos + k)| over the full column pairs: ~1e-16 for the paper's encoding."""
    pairs = 2 * (table.shape[1] // 2)
    return float(np.abs(rotated(table, pos, k) - table[pos + k, :pairs]).max())


def permutation_gap(weights, reordered, order):
    """max |A' - A[order][:, order]| over every head: how far the reordered sentence's attention weights A' are from
    the first sentence's, permuted like its words."""
    return float(np.abs(reordered - weights[:, order][:, :, order]).max())  # (h, n, n)
