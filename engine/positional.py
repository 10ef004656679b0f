"""Token embeddings and positional encodings (paper section 3.4 and 3.5, and the blog's variants)."""
import numpy as np

EMBED_TEX = r"X_{\text{emb}} = E[\text{token}]"
EMBED_SCALED_TEX = r"X_{\text{emb}} = E[\text{token}] \cdot \sqrt{d_{\text{model}}}"
INPUT_TEX = r"X = X_{\text{emb}} + PE"
PE_TEX = {
    "sinusoidal": r"PE_{(pos,2i)} = \sin\left(\frac{pos}{10000^{2i/d_{\text{model}}}}\right),\quad "
    r"PE_{(pos,2i+1)} = \cos\left(\frac{pos}{10000^{2i/d_{\text{model}}}}\right)",
    "blog": r"PE_{(pos,j)} = \sin\left(\frac{pos}{10000^{2j/d_{\text{model}}}}\right)\ (j \text{ even}),\quad "
    r"\cos\left(\frac{pos}{10000^{2j/d_{\text{model}}}}\right)\ (j \text{ odd})",
    "learned": r"PE_{(pos,:)} = P[pos] \ \text{(a learned table)}",
    "none": r"PE = 0",
}
PE_BASE = 10000.0
# The encodings the post prints for "Hello" and "World" (rounded by hand: cos(0.01) = 0.99995 shows as 0.99).
BLOG_PRINTED_PE = np.array([[0.0, 1.0, 0.0, 1.0], [0.84, 0.99, 0.0, 1.0]])
BLOG_TABLE_TEX = r"PE = %s\ \text{(the post's printed table)}"  # when every cell is one the post printed
BLOG_TABLE_CASES_TEX = (r"\begin{gathered}PE_{(pos,j)} = \begin{cases} T_{pos,j} & pos < 2,\ j < 4 \\ "
                        r"\operatorname{round}_2 \sin\left(pos / 10000^{2j/d_{\text{model}}}\right) "
                        r"& \text{otherwise},\ j \text{ even} \\ "
                        r"\operatorname{round}_2 \cos\left(pos / 10000^{2j/d_{\text{model}}}\right) "
                        r"& \text{otherwise},\ j \text{ odd} \end{cases} \\[0.5em] "
                        r"T = %s\ \text{(the post's printed table)}\end{gathered}")


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


def blog_table(n, d_model):
    """The post's printed rows where they exist; further rows from its formula, rounded to 2 decimals."""
    table = np.round(sinusoidal(n, d_model, blog_exponent), 2)  # (n, d_model)
    rows, cols = min(n, 2), min(d_model, 4)
    table[:rows, :cols] = BLOG_PRINTED_PE[:rows, :cols]
    return table  # (n, d_model)


def positional_encoding(kind, n, d_model, learned=None):
    """The (n, d_model) positional encoding of the given kind."""
    if kind == "sinusoidal":
        return sinusoidal(n, d_model)
    if kind == "blog":
        return sinusoidal(n, d_model, blog_exponent)
    if kind == "blog_table":
        return blog_table(n, d_model)
    if kind == "learned":
        return learned[:n]  # (n, d_model)
    return np.zeros((n, d_model))
