"""The ViT training page's training: the shipped model's facts, and training from the seed's random weights at the
pages' sizes, live (progress, the loss curve, Stop: ui/lessons/training_views, as the text model's page), whose
weights, finished or interrupted, go to the server's weights store and become every ViT page's model (their id is
state.vit.weights, vw= in the link)."""
from __future__ import annotations

import streamlit as st

from engine import digits, vit_train
from engine.values import MAX_SEED
from engine.vit import VisionTransformer
from engine.vit_train import ViTTrainSettings

from ui.core import runs, session, session_store
from ui.core.session_store import STATE
from ui.core.state.vision import SIZES
from ui.lessons import training_views

NUMBERS = {  # setting: (widget, low, high, step)
    "steps": ("number", 10, 5000, 10), "batch_size": ("number", 1, 256, 1), "warmup": ("number", 1, 1000, 10),
    "lr_scale": ("slider", 0.1, 5.0, 0.1), "seed": ("number", 0, MAX_SEED, 1),
}
PARTIAL, RESULT = "vit_train.partial", "vit_train.result"  # session_state: the run in progress; the run kept
SHIPPED_FILE = "engine/data/vit-digits.npz"


def shipped_facts(ctx):
    """The model the app ships: the command that made it, its test accuracy (the file's own facts) and what the
    command reproduces where."""
    model, facts = runs.shipped_vit()
    n = len(digits.split("test").labels)
    st.markdown(ctx.t("vit_train.shipped", percent=f"{100 * facts['test_accuracy']:.2f}",
                      right=round(facts["test_accuracy"] * n), n=n))
    st.code(f"python -m engine vit-train --steps {facts['steps']} --seed {model.seed} --out {SHIPPED_FILE}",
            language=None)  # plain: Streamlit's shell colours are below WCAG AA's contrast (2.5:1 for 4.5:1)
    st.markdown(ctx.t("vit_train.reproduced", kernels=vit_train.SHIPPED_KERNELS,
                      band=f"{100 * vit_train.REPRODUCED_ACCURACY:g}"))


def trainer(ctx):
    """The settings, Train and Stop; a run's progress and loss curve; then what the run kept."""
    t, vit = ctx.t, ctx.state.vit
    s = vit.settings()
    st.subheader(t("vit_train.train_title"))
    st.markdown(t("vit_train.train_intro", n=len(digits.split("train").labels), patch=s.patch, d_model=s.d_model,
                  n_heads=s.n_heads, n_layers=s.n_layers, d_ff=s.d_ff))
    values = training_views.number_widgets(ctx, NUMBERS, ViTTrainSettings(seed=vit.seed), "vit_train")
    try:
        settings = ViTTrainSettings(**values)
    except ValueError as error:
        st.error(session.refusal(t, error))
        return
    training_views.schedule(ctx, settings, s.d_model, "vit_train.schedule")
    if training_views.start_and_stop(ctx, "vit_train"):
        _train(vit, ctx, settings)
    result = session_store.get(RESULT)
    if result is not None and result["weights"] == vit.weights:  # the weights trained last are still in use
        training_views.finished(ctx, result, "vit_train")


def _train(vit, ctx, settings: ViTTrainSettings):
    def updates():
        start = VisionTransformer.initial(vit.settings(), settings.seed)
        return vit_train.training(start, digits.split("train"), settings)
    training_views.train_once(ctx, (vit.sizes, settings), updates, settings, PARTIAL)
    keep_interrupted_run()


def keep_interrupted_run():
    """A finished or interrupted run (Stop, or leaving the page): its weights go to the server's weights store and
    become every ViT page's model, at their own sizes and seed."""
    partial = session_store.pop(PARTIAL, None)
    if partial is None:
        return
    settings, model, losses = partial["settings"], partial["model"], partial["losses"]
    weights = runs.weights_store().put(model, {"kind": "vit_trained", "steps": len(losses)})
    session_store.put(RESULT, {"settings": settings, "losses": losses, "replayed": partial.get("replayed", False),
                               "stopped": len(losses) < settings.steps, "weights": weights})
    state = session_store.get(STATE)
    sized = state.vit.with_sizes(**{field: getattr(model.settings, field) for field in SIZES})
    session.set_state(state.replace(vit=sized.replace(weights=weights, seed=settings.seed)))
    st.rerun()
