"""The Vision Transformer (seed 003 section 9, eqs. 41–46; Dosovitskiy et al. 2021): the encoder's own steps on an
image cut into patches, with a class token whose last vector is classified.

    model = vit.VisionTransformer.initial(vit.ViTConfig(), seed=0)
    trace = model.run(image)             # image (H, W, C), or a batch (b, H, W, C)
    trace["img.patches"]                 # (N, P²C) eq. 41
    trace["enc.0.attn.weights"]          # (h, n, n), n = N + 1 tokens: the class token first
    trace["head.probs"]                  # (1, n_classes) eq. 46

The pass records `img.patches`, `img.embed`, `img.cls`, `img.pos`, `img.input` (z_0), every encoder layer's steps
as the text model's pre-norm encoder names them (`enc.0.ln1` ... `enc.{L-1}.add2`, eqs. 43–44), then `head.token`
(z_L^0, the class token's row), `head.ln` (y, eq. 45), `head.logits` and `head.probs` (eq. 46). Its choices follow the
ViT paper where the seed is silent: a bias in the patch projection and the head, GELU in the MLP, learned position
embeddings, a final LayerNorm on the class token only. SEED_SLIPS lists what the seed's text gets wrong.
"""
from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import NamedTuple

import numpy as np

from . import attention as att
from . import dropout as dr
from . import explain
from . import positional as pe
from .config import Config, ConfigError
from .kinds import ADD, LINEAR, PATCHES, POS, PREPEND, ROW, SOFTMAX
from .model import encoder_blocks, layer_norm_step, layers, normalised
from .params import Parameters, layer_norm_shapes, layer_shapes
from .presets import initial_weight
from .steps import Decl, Hook, step_table_of
from .trace import Recorder, Trace
from .values import check_seed, whole

PATCHES_TEX = r"x_p = [x_p^1, x_p^2, \dots, x_p^N]^\top,\quad N = HW/P^2"  # eq. 41
PATCH_EMBED_TEX = r"x_p^i E + b_E"
CLASS_TOKEN_TEX = r"[x_{\text{class}};\ x_p^1 E + b_E;\ \dots;\ x_p^N E + b_E]"
POSITIONS_TEX = r"E_{\text{pos}} \in \mathbb{R}^{(N+1) \times D}\ \text{⟦learned-table⟧}"
INPUT_TEX = r"z_0 = [x_{\text{class}};\ x_p^1 E + b_E;\ \dots;\ x_p^N E + b_E] + E_{\text{pos}}"  # eq. 42, with b_E
TOKEN_TEX = r"z_L^0"
HEAD_LN_TEX = r"y = \operatorname{LN}(z_L^0)"  # eq. 45
HEAD_LOGITS_TEX = r"\text{logits} = y\, W^F + b^F"
HEAD_PROBS_TEX = r"y^s = \operatorname{softmax}(y\, W^F + b^F)"  # eq. 46 with the head's bias
POSITION_SIMILARITY_TEX = (r"\cos(E_{\text{pos}}^i, E_{\text{pos}}^j) = \frac{E_{\text{pos}}^i \cdot "
                           r"E_{\text{pos}}^j}{\lVert E_{\text{pos}}^i \rVert\, \lVert E_{\text{pos}}^j \rVert}")
MAX_PIXEL = 1e4  # the largest |pixel| the model takes: the digits' are 0 to 1; far larger only overflows
LIMITS = {"height": (1, 64), "width": (1, 64), "channels": (1, 4), "patch": (1, 64), "d_model": (1, 256),
          "n_heads": (1, 16), "n_layers": (1, 12), "d_ff": (1, 1024), "n_classes": (2, 100)}
MAX_PATCHES = 256


class Slip(NamedTuple):
    """A place where the seed's text is wrong: the equation, what it writes and what it means (LaTeX); `code` names
    the catalogs' words for it ("slip.<code>")."""
    code: str
    equation: str
    written: str
    meant: str


SEED_SLIPS = (
    Slip("vit_output_shape", "45", r"z^L \in \mathbb{R}^{N+1}", r"z_L \in \mathbb{R}^{(N+1) \times D}"),
    Slip("vit_output_indices", "45", r"z^L = [z_1^0, z_L^1, \cdots, z_L^N]", r"z_L = [z_L^0, z_L^1, \cdots, z_L^N]"),
)


@dataclass(frozen=True)
class ViTConfig:
    height: int = 8  # H: the image's rows of pixels
    width: int = 8  # W: its columns
    channels: int = 1  # C: numbers per pixel (1 grey, 3 colour)
    patch: int = 4  # P: each patch is P x P pixels; it must divide H and W
    d_model: int = 32  # D: the width of every token vector
    n_heads: int = 4  # h: attention heads; d_k = d_v = D / h
    n_layers: int = 2  # L: encoder layers
    d_ff: int = 64  # the MLP's hidden width
    n_classes: int = 10  # N_c: the classes the head tells apart
    eps: float = 1e-5  # LayerNorm's epsilon, inside the square root

    def __post_init__(self):
        for name, (low, high) in LIMITS.items():
            value = getattr(self, name)
            if not whole(value) or not low <= value <= high:
                raise ConfigError(f"{name} must be a whole number from {low} to {high}, got {value!r}", "vit_range",
                                  field=name, low=low, high=high)
        for side in ("height", "width"):
            if getattr(self, side) % self.patch:
                raise ConfigError(f"the patch size {self.patch} does not divide the image's {side} "
                                  f"{getattr(self, side)}", "vit_patch_divides", side=side, patch=self.patch,
                                  size=getattr(self, side))
        if self.d_model % self.n_heads:
            raise ConfigError(f"d_model ({self.d_model}) is not divisible by n_heads ({self.n_heads})",
                              "not_divisible", d_model=self.d_model, n_heads=self.n_heads)
        if self.n_patches > MAX_PATCHES:
            raise ConfigError(f"{self.n_patches} patches are too many; at most {MAX_PATCHES}: take larger patches",
                              "vit_too_many_patches", n=self.n_patches, high=MAX_PATCHES)
        if isinstance(self.eps, bool) or not isinstance(self.eps, (int, float)) or not 0 < self.eps < 1:
            raise ConfigError(f"eps must be a number between 0 and 1, got {self.eps!r}", "vit_eps")

    @property
    def n_patches(self) -> int:
        return self.height * self.width // self.patch**2  # N = HW / P^2

    @property
    def patch_size(self) -> int:
        return self.patch**2 * self.channels  # P^2 C: the length of a flattened patch

    @property
    def encoder(self) -> Config:
        """The text model's encoder settings this model's layers run with: pre-norm, GELU, learned positions, and
        attention biases, as ViT's reference code has them."""
        d_k = self.d_model // self.n_heads
        return Config(d_model=self.d_model, n_heads=self.n_heads, d_k=d_k, d_v=d_k, d_ff=self.d_ff,
                      n_layers=self.n_layers, norm_placement="pre", activation="gelu", pos_encoding="learned",
                      max_len=self.n_patches + 1, embed_scale=False, attn_bias=True, eps=float(self.eps))

    def replace(self, **changes) -> "ViTConfig":
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def vit_param_shapes(s: ViTConfig) -> dict[str, tuple]:
    """Every parameter's name and shape: the patch projection, class token and positions, the layers, the head."""
    c = s.encoder
    return {"img.E": (s.patch_size, s.d_model), "img.b_E": (s.d_model,), "img.x_class": (1, s.d_model),
            "img.E_pos": (s.n_patches + 1, s.d_model), **layer_shapes(c, "enc"), **layer_norm_shapes(c, "head.ln"),
            "head.W_F": (s.d_model, s.n_classes), "head.b_F": (s.n_classes,)}


def initial_params(s: ViTConfig, seed: int) -> dict:
    """The text model's initialisation (engine.presets); the class token and positions N(0, 0.02) as the ViT's."""
    check_seed(seed)
    params = {}
    for name, shape in vit_param_shapes(s).items():
        if name in ("img.x_class", "img.E_pos"):
            params[name] = np.random.default_rng([seed, len(name), shape[0]]).normal(0.0, 0.02, shape)
        else:
            params[name] = initial_weight(name, shape, seed)
    return params


class VisionTransformer(Parameters):
    """A ViTConfig (`settings`), the encoder Config its layers read (`config`) and named parameters."""

    def __init__(self, settings: ViTConfig, params, seed: int = 0):
        self.name, self.settings, self.config, self.seed = "vit", settings, settings.encoder, seed
        self._hold(params, vit_param_shapes(settings))

    @classmethod
    def initial(cls, settings: ViTConfig | None = None, seed: int = 0) -> "VisionTransformer":
        settings = settings or ViTConfig()
        return cls(settings, initial_params(settings, seed), seed)

    @property
    def tokens(self) -> tuple[str, ...]:
        """The names of the encoder's positions: the class token, then the patches row by row from 1."""
        return ("CLS", *(f"P{i}" for i in range(1, self.settings.n_patches + 1)))

    @property
    def classes(self) -> tuple[str, ...]:
        """The names of the head's classes: the digits' own, 0 to N_c - 1."""
        return tuple(map(str, range(self.settings.n_classes)))

    def run(self, images) -> Trace:
        """Record the pass of one image (H, W, C) or a batch (b, H, W, C); every step of a batch has b in front. The
        trace's source tokens are the positions' names (`tokens`)."""
        images = check_images(images, self.settings)
        rec = Recorder()
        hook = Hook(rec, step_table(self.config), self, dr.Dropout(), "head", "head")
        return Trace(self, _vit_pass(hook, images), rec.steps, self.tokens, (), (), (), ())


def check_images(images, s: ViTConfig) -> np.ndarray:
    """The images as float64 (..., H, W, C), refused with a ConfigError naming what is wrong."""
    try:
        if np.iscomplexobj(images):  # NumPy would drop the imaginary parts, with only a warning
            raise TypeError
        array = np.asarray(images, dtype=float)
    except (TypeError, ValueError):
        raise ConfigError("the image must be an array of numbers", "vit_pixels_not_numbers") from None
    expected = (s.height, s.width, s.channels)
    if array.ndim not in (3, 4) or array.shape[-3:] != expected or array.size == 0:
        raise ConfigError(f"the image must have shape {expected} or (b, *{expected}), got {array.shape}",
                          "vit_image_shape", shape=str(expected), got=str(array.shape))
    if not np.all(np.isfinite(array)):
        raise ConfigError("every pixel must be a finite number (no NaN or infinity)", "vit_pixels_nonfinite")
    if np.max(np.abs(array)) > MAX_PIXEL:
        raise ConfigError(f"pixels must lie between -{MAX_PIXEL:g} and {MAX_PIXEL:g}", "vit_pixels_range",
                          high=f"{MAX_PIXEL:g}")
    return array


# ---- the pass -----------------------------------------------------------------------------------------------------

def _vit_pass(hook, images):
    """Image to class probabilities: the patches' tokens (eqs. 41–42), L encoder layers (eqs. 43–44), the head on
    the class token (eqs. 45–46). A generator that stops after each stage, as the text model's."""
    z = yield from _image(hook.block("image", "img"), images)  # (n, D)
    z = yield from layers(hook, "enc", z, {"attn": None})  # (n, D)
    _head(hook.block("head", "head"), z)  # (1, N_c)


def _image_steps(c: Config):
    return {"patches": Decl(PATCHES, PATCHES_TEX, ("N", "P²C"), "x_p"),
            "embed": Decl(LINEAR, PATCH_EMBED_TEX, ("N", "d_model"), "(x_p E + b_E)"),
            "cls": Decl(PREPEND, CLASS_TOKEN_TEX),
            "pos": Decl(POS, POSITIONS_TEX, symbol=r"E_{\text{pos}}",
                        meta={"form": "learned", "d_model": c.d_model, "table": (r"E_{\text{pos}}", "E_pos")}),
            "input": Decl(ADD, INPUT_TEX, symbol="z_0")}


def _image(hook, images):
    """z_0 = [x_class; x_p E] + E_pos (eq. 42) of the patches x_p (eq. 41)."""
    s = hook.model.settings
    x_p = hook("patches", patchify, images, s.patch, patch=s.patch, channels=s.channels,
               across=s.width // s.patch)  # (N, P²C)
    embedded = hook("embed", att.linear, x_p, hook.matrix("E"), hook.param("b_E"))  # x_p E + b_E: (N, D)
    tokens = hook("cls", prepend, hook.param("x_class"), embedded)  # [x_class; x_p E + b_E]: (n, D)
    positions = hook("pos", pe.positional_encoding, "learned", s.n_patches + 1, s.d_model,
                     hook.param("E_pos"))  # (n, D)
    z = hook("input", operator.add, tokens, positions)  # z_0: (n, D)
    yield
    return z


def _head_steps(c: Config):
    classes = ("1", "n_classes")
    return {"token": Decl(ROW, TOKEN_TEX, ("1", "d_model"), "z_L^0", {"row": 0}), "ln": _head_layer_norm_step(c),
            "logits": Decl(LINEAR, HEAD_LOGITS_TEX, classes, r"\text{logits}"),
            "probs": Decl(SOFTMAX, HEAD_PROBS_TEX, classes, "y^s", {"form": "stable"})}


def _head_layer_norm_step(c: Config) -> Decl:
    """Eq. 45 on the class token's row, followed by the LayerNorm it names."""
    step = layer_norm_step(c)
    return step._replace(formula=rf"{HEAD_LN_TEX},\quad {step.formula}", shape=("1", "d_model"), symbol="y")


def _head(hook, z):
    """y = LN(z_L^0) (eq. 45), y^s = softmax(y W^F + b^F) (eq. 46)."""
    token = hook("token", class_row, z)  # z_L^0: (1, D)
    y = normalised(hook, "ln", token)  # (1, D)
    logits = hook("logits", att.linear, y, hook.matrix("W_F"), hook.param("b_F"))  # (1, N_c)
    hook("probs", att.softmax, logits)  # (1, N_c)


@lru_cache(maxsize=16)
def step_table(c: Config) -> MappingProxyType:
    """Every step's declaration, by block: the image's, the encoder's pre-norm layers' and the head's; read-only."""
    return step_table_of({"image": _image_steps(c), **encoder_blocks(c), "head": _head_steps(c)})


# ---- one function per equation ------------------------------------------------------------------------------------

def patchify(images, patch):
    """Eq. 41: (..., H, W, C) -> (..., N, P²C), patches row by row, each flattened row by row, channels innermost
    (the ViT's and torch's "(h p1) (w p2) c -> (h w) (p1 p2 c)")."""
    *batch, height, width, channels = images.shape
    grid = images.reshape(*batch, height // patch, patch, width // patch, patch, channels)
    grid = np.moveaxis(grid, -4, -3)  # (..., H/P, W/P, P, P, C)
    return grid.reshape(*batch, height * width // patch**2, patch * patch * channels)  # (..., N, P²C)


def prepend(first, rest):
    """[first; rest]: the class token (1, D) before every image's patch tokens (..., N, D) -> (..., N+1, D)."""
    first = np.broadcast_to(first, (*rest.shape[:-2], 1, rest.shape[-1]))  # (..., 1, D)
    return np.concatenate([first, rest], axis=-2)  # (..., N+1, D)


def class_row(z):
    """z_L^0, the class token's row, kept as a row: (..., n, D) -> (..., 1, D)."""
    return z[..., :1, :].copy()  # (..., 1, D)


def position_similarity(model: VisionTransformer) -> np.ndarray:
    """The cosine of every pair of the patches' learned position embeddings (the ViT paper's figure 7): (N, N)."""
    return pe.cosine_similarity(np.asarray(model.params["img.E_pos"])[1:])  # (N, N)


def patch_pixels(s: ViTConfig, i: int) -> np.ndarray:
    """Where each number of patch i's flattened row x_p^i comes from: the image's (row, column, channel) of its
    columns 0 .. P²C - 1, as patchify cuts it: (P²C, 3)."""
    if not whole(i) or not 0 <= i < s.n_patches:
        raise ConfigError(f"patch {i!r} is not one of the image's {s.n_patches}", "vit_patch_number", n=s.n_patches)
    return np.array([explain.patch_pixel((i, j), s.patch, s.channels, s.width // s.patch)
                     for j in range(s.patch_size)])  # (P²C, 3)


def similarity_maps(similarity: np.ndarray, s: ViTConfig) -> np.ndarray:
    """position_similarity laid out as the patch grid twice (the ViT paper's figure 7): [r, c] is the map of the
    patch at grid row r, column c: its cosine with every patch, at that patch's place. (N, N) -> (R, C, R, C)."""
    grid = (s.height // s.patch, s.width // s.patch)
    return similarity.reshape(*grid, *grid)  # (R, C, R, C)


def similarity_by_relation(similarity: np.ndarray, s: ViTConfig) -> dict[str, float | None]:
    """The mean cosine of the pairs of patches side by side in a row ("row"), one above the other ("column") and
    every other pair ("farther"); None where the grid has no such pair."""
    across = s.width // s.patch
    rows, cols = np.divmod(np.arange(s.n_patches), across)  # each patch's place in the grid
    i, j = np.triu_indices(s.n_patches, k=1)  # every pair once
    d_row, d_col = np.abs(rows[i] - rows[j]), np.abs(cols[i] - cols[j])
    groups = {"row": (d_row == 0) & (d_col == 1), "column": (d_row == 1) & (d_col == 0)}
    groups["farther"] = ~(groups["row"] | groups["column"])
    return {name: float(similarity[i[kept], j[kept]].mean()) if kept.any() else None for name, kept in groups.items()}
