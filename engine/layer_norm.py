"""Layer normalisation (Ba et al. 2016, which paper section 3.1 cites without a formula): their (x - mu) / sigma
with the eps implementations add, inside the square root as PyTorch's nn.LayerNorm (named "paper" for the paper's
setting; Ba et al. write no eps), or added to sigma as the blog's code does."""
import numpy as np

DENOMINATOR_TEX = {"paper": r"\sqrt{\sigma^2 + \epsilon}", "blog": r"\sigma + \epsilon"}
LAYER_NORM_TEX = {form: r"\operatorname{LayerNorm}(x) = \frac{x - \mu}{%s} \odot \gamma + \beta" % denominator
                  for form, denominator in DENOMINATOR_TEX.items()}


def layer_norm(x, gamma, beta, eps, form="paper"):
    """Normalise each row to mean 0 and variance 1, then scale by gamma and shift by beta."""
    mu = np.mean(x, axis=-1, keepdims=True)  # (n, 1)
    var = np.mean((x - mu) ** 2, axis=-1, keepdims=True)  # (n, 1), the population variance
    denominator = np.sqrt(var + eps) if form == "paper" else np.sqrt(var) + eps  # (n, 1)
    out = (x - mu) / denominator * gamma + beta  # (n, d_model)
    return np.where(np.isinf(var), np.nan, out)  # a variance past float64's range cannot be normalised by
