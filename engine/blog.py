"""The worked example of seed 002 ("The Random Transformer", hackerllama), as its published notebook computes it.

Where the post's prose and its code disagree, the engine follows the code; DIFFERENCES records each case
so that the app can explain it.
"""
import numpy as np

VOCABULARY = ("hello", "mundo", "world", "how", "?", "EOS", "SOS", "a", "hola", "c", "<unk>")
EMBEDDINGS = {"hello": [1, 2, 3, 4], "world": [2, 3, 4, 5], "SOS": [1, 0, 0, 0]}
WIDTH = len(EMBEDDINGS["hello"])  # the post's d_model: its numbers fit a model of this width only

# Per-head projections as the post's code defines them; heads stacked first: (h, d_model, d_k).
W_Q = np.array([[[0, 0, 0], [1, 1, 0], [0, 0, 1], [1, 0, 0]], [[1, 0, 1], [0, 1, 0], [1, 0, 0], [0, 1, 1]]], float)
W_K = np.array([[[1, 0, 1], [0, 1, 0], [1, 0, 1], [0, 1, 0]], [[0, 1, 1], [1, 0, 1], [1, 1, 0], [0, 1, 0]]], float)
W_V = np.array([[[0, 1, 1], [1, 0, 0], [1, 0, 1], [0, 1, 0]], [[1, 0, 0], [0, 1, 1], [0, 0, 1], [1, 0, 0]]], float)
W_O = np.array([
    [0.79445237, 0.1081456, 0.27411536, 0.78394531],
    [0.29081936, -0.36187258, -0.32312791, -0.48530339],
    [-0.36702934, -0.76471963, -0.88058366, -1.73713022],
    [-0.02305587, -0.64315981, -0.68306653, -1.25393866],
    [0.29077448, -0.04121674, 0.01509932, 0.13149906],
    [0.57451867, -0.08895355, 0.02190485, 0.24535932],
])  # (h*d_v, d_model)
ENCODER_ATTENTION = {"W_Q": W_Q, "W_K": W_K, "W_V": W_V, "W_O": W_O}

# Numbers the post prints, for tests and for the app's "paper vs blog" page.
PRINTED = {
    "encoder_input": [[1, 3, 3, 5], [2.84, 3.99, 4, 6]],
    "K1": [[4, 8, 4], [6.84, 9.99, 6.84]],
    "V1": [[6, 6, 4], [7.99, 8.84, 6.84]],
    "Q1": [[8, 3, 3], [9.99, 3.99, 4]],
    "scores1": [[68, 105.21], [87.88, 135.5517]],
    "scores1_sqrt3": [[39.2598183, 60.74302182], [50.73754166, 78.26081048]],
    "weights1_sqrt3": [[4.67695573e-10, 1.0], [1.11377182e-12, 1.0]],
    "weights2_sqrt3": [[1.10613872e-14, 1.0], [4.95934510e-20, 1.0]],
    "head1_sqrt3": [[7.99, 8.84, 6.84], [7.99, 8.84, 6.84]],
    "head2_sqrt3": [[8.84, 3.99, 7.99], [8.84, 3.99, 7.99]],
    "head1_div30": [[7.54348784, 8.20276657, 6.20276657], [7.65266185, 8.35857269, 6.35857269]],
    "head2_div30": [[8.45589591, 3.85610456, 7.72085664], [8.63740591, 3.91937741, 7.84804146]],
    "Z": [[11.46394285, -13.18016471, -11.59340253, -17.04387829],
          [11.62608573, -13.47454936, -11.87126395, -17.4926367]],
    "mean": [[-4.58837567], [-3.59559107]],
    "std": [[9.92061529], [10.50653019]],
    "layer_norm": [[1.71887693, -0.56365339, -0.40370747, -0.75151608],
                   [1.71909039, -0.56050453, -0.40695381, -0.75163205]],
}

# "post" and "engine" are formulas only (LaTeX; a word in them is a word slot, engine/words.py), rows and columns
# counted from 1 as the app writes them. The words of each difference, its topic and why, are the catalogs'
# "diff.<key>.topic" and "diff.<key>.why". A weight's row the post prints otherwise than its code defines it also
# names it, "weight": (parameter, head, row from 0) of ENCODER_ATTENTION, and the row the post prints, "printed".
DIFFERENCES = (
    {"key": "wq1", "post": r"W^Q_1[4,:] = [1, 1, 0]", "engine": r"W^Q_1[4,:] = [1, 0, 0]", "weight": ("W_Q", 0, 3),
     "printed": (1, 1, 0)},
    {"key": "wk2", "post": r"W^K_2[3,:] = [1, 0, 1]", "engine": r"W^K_2[3,:] = [1, 1, 0]", "weight": ("W_K", 1, 2),
     "printed": (1, 0, 1)},
    {"key": "pe_formula", "post": r"PE_{(pos,j)} = \sin / \cos\left(pos / 10000^{2j/d}\right)", 
     "engine": r"PE_{(pos,2i)}, PE_{(pos,2i+1)} = \sin / \cos\left(pos / 10000^{2i/d}\right)"},
    {"key": "pe_rounding", "post": r"\cos(0.01) \approx 0.99", "engine": r"\cos(0.01) = 0.99995"},
    {"key": "divisor", "post": r"S / 30", "engine": r"S / \sqrt{d_k} = S / \sqrt{3}"},
    {"key": "layer_norm", "post": r"\frac{x-\mu}{\sigma + 10^{-6}}", 
     "engine": r"\frac{x-\mu}{\sqrt{\sigma^2 + 10^{-5}}}\gamma + \beta"},
    {"key": "ln_rounding", "post": r"\text{⟦normalized⟧}_1 = 1.718", "engine": r"1.71887693"},
    {"key": "z_digits", "post": r"Z_{11} = 11.46394281", "engine": r"Z_{11} = 11.46394285"},
    {"key": "embed_scale", "post": r"X = E + PE", "engine": r"X = E\sqrt{d_{\text{model}}} + PE"},
    {"key": "mask", "post": r"M = 0", "engine": r"M_{ij} = -\infty \ (j > i)"},
    {"key": "softmax", "post": r"\frac{e^{x_j}}{\sum_k e^{x_k}}", 
     "engine": r"\frac{e^{x_j - \max x}}{\sum_k e^{x_k - \max x}}"},
    {"key": "w_o_random", "post": r"W^O_{t} \ne W^O_{t+1}", "engine": r"W^O"},
    {"key": "generate", "post": r"\operatorname{dec}(y_{t-1})", 
     "engine": r"\operatorname{dec}(\text{SOS}, y_1, \ldots, y_{t-1}) + PE"},
)
