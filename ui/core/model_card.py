"""The sentence that says which model is in use: its sizes and where its weights came from (pure: no Streamlit)."""
from __future__ import annotations

from engine import blog
from engine.corpus import pairs

# presets whose weights' origin names encoder weights: a decoder-only model's differs
ENCODER_WEIGHTS = ("hello-world",)


def describe(t, preset: str, seed: int, config, origin: dict | None, stored: bool) -> str:
    """Sizes, then the weights' origin: the preset's random draw from the seed, or (stored: weights held by the
    server) trained here, uploaded, the shipped trained model, a real translator (translator_origin), or not
    recorded (ui.stores.weights.ORIGIN_FIELDS)."""
    sizes = model_sizes(t, config)
    if not stored:
        return t("model.card", sizes=sizes, origin=t(f"model.from.{preset}{_variant(preset, config)}", seed=seed,
                                                     d_model=config.d_model, width=blog.WIDTH))
    kind = origin["kind"] if origin else "unknown"
    values = {"preset": t(f"preset.{preset}"), "seed": seed}
    if kind in ("trained", "shipped"):
        values["corpus"] = t(f"train.corpus.{origin['corpus']}")
    if kind == "trained":
        values["steps"] = origin["steps"]
    if kind == "uploaded":
        values["file"] = code(origin["file"])
    if kind == "marian":
        values |= {"name": code(origin["name"]), "mb": origin["mb"]}
    return t("model.card", sizes=sizes, origin=t(f"model.from.{kind}", **values))


def preset_name(t, preset: str, origin: dict | None) -> str:
    """What a table of settings calls the model (Markdown): a real translator by its name (it runs on the paper
    preset's settings with Marian's), else the preset."""
    if origin and origin["kind"] == "marian":
        return t("preset.translator", name=code(origin["name"]))
    return t(f"preset.{preset}")


def translator_origin(name: str, model) -> dict:
    """A real translator's origin (ui.stores.models): its name, and the memory its float64 weights take in each
    server process."""
    megabytes = sum(value.nbytes for value in model.params.values()) / 2**20
    return {"kind": "marian", "name": name, "mb": f"{megabytes:,.0f}" if megabytes >= 1 else "< 1"}


def learned(t, preset: str, seed: int, config, origin: dict | None, stored: bool) -> str:
    """What the weights that make a page's predictions and attention patterns have learned: nothing (the preset's
    post's numbers and random ones, or random ones alone), or the corpus they were trained on, or the file they came
    from."""
    if not stored:
        posts = preset in ENCODER_WEIGHTS and config.d_model == blog.WIDTH
        return t("learned.post" if posts else "learned.random", seed=seed)
    kind = origin["kind"] if origin else "unknown"
    values = {}
    if kind in ("trained", "shipped"):
        values = {"corpus": t(f"train.corpus.{origin['corpus']}"), "n": len(pairs(origin["corpus"]))}
    if kind == "trained":
        values["steps"] = origin["steps"]
    if kind == "uploaded":
        values["file"] = code(origin["file"])
    if kind == "marian":
        values["name"] = code(origin["name"])
    return t(f"learned.{kind}", **values)


def _variant(preset: str, config) -> str:
    """The preset's origin for this config: the post's numbers fit only its width (d_model 4), and a decoder-only
    model has none of its encoder weights."""
    if preset not in ENCODER_WEIGHTS:
        return ""
    if config.d_model != blog.WIDTH:
        return ".random"
    return ".decoder_only" if config.decoder_only else ""


def model_sizes(t, config) -> str:
    key = "model.sizes.decoder_only" if config.decoder_only else "model.sizes"
    return t(key, d_model=config.d_model, h=config.n_heads, d_k=config.d_k, d_ff=config.d_ff,
             n_enc=config.depth("enc"), n_dec=config.depth("dec"))


def code(text: str) -> str:
    """Typed text (a file's name, a sentence) in a Markdown code span, so none of its Markdown is read."""
    return f"`{text.replace('`', '')}`"
