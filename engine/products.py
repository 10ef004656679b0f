"""Weights as the forward pass multiplies by them: laid out once, with their last product remembered.

Models made from one another by edits (Model.with_params, Model.with_cells) share the multipliers of the weights
that were not edited, and so their products: a product of an unchanged weight with an unchanged input is not
made again. After an edit of the output layer, the encoder and decoder are not multiplied through again; after an
edit of W^Q, neither are K and V. At the paper's sizes each product reads 0.25 to 1 million weights.
"""


class Multiplier:
    """x @ matrix, where matrix is a weight in the layout the forward pass multiplies by, made on first use.

    The forward pass hands it to the equation functions in the weight's place: their `x @ W` is `times` in W's
    shape, so a per-head weight's product, made with the heads side by side, comes back head-first."""

    __array_ufunc__ = None  # NumPy's `x @ multiplier` defers to __rmatmul__

    def __init__(self, weight, layout=None, split=None):
        self._weight, self._layout = weight, layout  # layout: weight -> matrix, if the matrix is not the weight
        self._split = split  # x @ matrix -> x @ weight, for a weight of three axes (per head)
        self._matrix = None
        self._last = None  # (x's shape and bytes, x @ matrix), one tuple: sessions share models, and a thread
        # reads or replaces it whole

    @property
    def matrix(self):  # (d_in, d_out), read-only
        if self._matrix is None:
            matrix = self._weight if self._layout is None else self._layout(self._weight)
            matrix.setflags(write=False)
            self._matrix = matrix
        return self._matrix

    @property
    def shape(self):  # of what `x @ multiplier` multiplies by: the per-head weight, else the matrix
        return self.matrix.shape if self._split is None else self._weight.shape

    def __rmatmul__(self, x):
        """[n, d_in] @ matrix -> [n, d_out]; @ a per-head weight [h, d_in, d_k] -> [h, n, d_k]."""
        product = self.times(x)
        return product if self._split is None else self._split(product)

    def times(self, x):
        """x @ matrix: [n, d_in] -> [n, d_out], read-only."""
        key, last = (x.shape, x.tobytes()), self._last
        if last is not None and last[0] == key:
            return last[1]
        product = x @ self.matrix  # (n, d_out)
        product.setflags(write=False)
        self._last = (key, product)
        return product
