"""The position-wise feed-forward network (paper section 3.3)."""
import math

import numpy as np

HIDDEN_TEX = r"H = x W_1 + b_1"
HIDDEN_NO_BIAS_TEX = r"H = x W_1"
ACT_TEX = {"relu": r"\operatorname{ReLU}(H) = \max(0, H)",
           "gelu": (r"\operatorname{GELU}(H) = H \cdot \Phi(H) = "
                    r"\tfrac{H}{2}\left(1 + \operatorname{erf}(H/\sqrt{2})\right)"),
           "swish": r"\operatorname{Swish}(H) = H \cdot \sigma(H) = \frac{H}{1 + e^{-H}}"}
OUT_TEX = r"\operatorname{FFN}(x) = \operatorname{%s}(x W_1 + b_1) W_2 + b_2"
OUT_NO_BIAS_TEX = r"\operatorname{FFN}(x) = \operatorname{%s}(x W_1) W_2"
_erf = np.frompyfunc(math.erf, 1, 1)


def relu(x):
    return np.maximum(0.0, x)


def gelu(x):
    """The exact GELU, x * Phi(x), as PyTorch's default."""
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)).astype(float))


def swish(x):
    """Swish (SiLU), x * sigmoid(x), as Marian's activation_function "swish" (PyTorch's nn.SiLU). A very negative x
    makes exp(-x) overflow to inf, and x / inf is the limit, -0."""
    with np.errstate(over="ignore"):
        return x / (1.0 + np.exp(-x))


ACTIVATIONS = {"relu": relu, "gelu": gelu, "swish": swish}
