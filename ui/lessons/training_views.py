"""The training page's building blocks: the loss of one pair with teacher forcing, the backward pass of each
step, live training on the shipped corpus (progress, loss curve, stop), its before/after, and saving or loading
weights. They only display what the engine computed."""
from __future__ import annotations

import io
import threading
import zipfile

import numpy as np
import streamlit as st

from engine import checkpoint, optim
from engine.backward import GRAD_TEX, backward_formula, loss_and_grads
from engine.config import ConfigError
from engine.explain import tex_escape
from engine.corpus import CORPORA, pairs
from engine.loss import (CROSS_ENTROPY_TEX, LOGITS_GRAD_TEX, MEAN_LOSS_TEX, SMOOTHED_LOSS_TEX, SMOOTHED_TARGET_TEX,
                         TEACHER_FORCING_TEX)
from engine.tokens import EOS, SOS, UNK, split
from engine.train import TRAINING_SETUP, TrainSettings, start_model, training, translations
from engine.values import MAX_SEED

from ui.core import session, session_store, sidebar
from ui.core.figures import curves, heatmap
from ui.core.format import arrow, fmt
from ui.core.labels import FIRST, loss_rows, param_axes, step_axes
from ui.core.model_card import code
from ui.core.runs import check_model_limits, run_model
from ui.core.state import CACHE_HASH, LimitError
from ui.lessons import derivation_views
from ui.views import draw, vocabulary
from ui.views.drawn import from_link, restore_from_link, show_in_link

PARTIAL, RESULT = "train.partial", "train.result"  # session_state: the run in progress; the run kept
ERROR, UPLOAD_ERROR = "train.error", "train.upload_error"  # session_state: why the last run or upload failed, said once
MAX_UPLOAD_MB = 50
MAX_FILE_NAME = 80  # an uploaded file's name is recorded (and shown) up to this many characters
CHART_EVERY = 20  # redraw the loss curve every this many steps while training
NUMBERS = {  # setting: (widget, low, high, step)
    "steps": ("number", 10, 2000, 10), "batch_size": ("number", 1, 16, 1), "warmup": ("number", 1, 1000, 10),
    "lr_scale": ("slider", 0.1, 5.0, 0.1), "label_smoothing": ("slider", 0.0, 0.3, 0.05),
    "dropout": ("slider", 0.0, 0.5, 0.05), "seed": ("number", 0, MAX_SEED, 1),
}


@st.cache_resource(max_entries=32, show_spinner=False, hash_funcs=CACHE_HASH)
def _loss(model_key, label_smoothing):
    return loss_and_grads(run_model(model_key), model_key[2], model_key[3], label_smoothing=label_smoothing)


@st.cache_resource(max_entries=4, show_spinner=False)
def _before(corpus):
    """The untrained model's greedy translations of a corpus (the same for every session)."""
    model = start_model()
    return model, translations(model, pairs(corpus))


class FinishedRuns:
    """Finished trainings by settings (the Vision Transformer's: its sizes and settings), shared by the class: the
    same settings are trained once per server. It keeps the `most` last put (a ViT's run is ~150 kB), so a server
    that runs for weeks does not grow."""

    def __init__(self, most: int = 16):
        self.most, self._runs, self._lock = most, {}, threading.Lock()

    def get(self, key):
        with self._lock:
            return self._runs.get(key)

    def put(self, key, run) -> None:
        with self._lock:
            self._runs.pop(key, None)
            self._runs[key] = run
            while len(self._runs) > self.most:
                self._runs.pop(next(iter(self._runs)))


@st.cache_resource(show_spinner=False)
def _finished_runs() -> FinishedRuns:
    return FinishedRuns()


# ---- one pair: teacher forcing, the loss, and backpropagation -----------------------------------------------

SMOOTHINGS = tuple(round(0.05 * i, 2) for i in range(7))  # the label smoothing the loss is shown with: 0 to 0.3


def loss_section(ctx):
    st.subheader(ctx.t("train.loss"))
    st.markdown(ctx.t("train.loss_intro"))
    draw.latex(ctx.t.words(_teacher_forcing_tex(ctx.model)))
    asked = from_link(ctx.t, "smoothing", lambda text: float(text) in SMOOTHINGS, "0")
    if asked is not None:
        session_store.put("train.view_smoothing", float(asked))
    smoothing = st.slider(ctx.t("train.label_smoothing"), 0.0, SMOOTHINGS[-1], step=0.05, key="train.view_smoothing")
    linked = next((step for step in SMOOTHINGS if step == round(smoothing, 2)), 0.0)  # a forged value between the
    show_in_link("smoothing", f"{linked:g}", "0")  # slider's steps is shown, not linked
    draw.latex(SMOOTHED_TARGET_TEX + r",\quad " + SMOOTHED_LOSS_TEX if smoothing else CROSS_ENTROPY_TEX)
    draw.latex(ctx.t.words(MEAN_LOSS_TEX))
    result = _loss(ctx.state.model_key, smoothing)
    header = [ctx.t(f"train.col.{c}") for c in ("position", "input", "target", "p_target", "loss")]
    rows = loss_rows(result, ctx.model.vocab.tokens, ctx.state.digits)
    st.table(arrow(dict(zip(header, zip(*rows)))), hide_index=True)
    st.metric(ctx.t("train.mean_loss"), fmt(result.loss, ctx.state.digits))
    return result


def _teacher_forcing_tex(model) -> str:
    """Teacher forcing with the model's own start and end tokens (a Marian translator's <pad> and </s>)."""
    start, end = (tex_escape(token) for token in (model.vocab.tokens[model.start_id], model.vocab.end))
    return TEACHER_FORCING_TEX.replace(r"\text{SOS}", rf"\text{{{start}}}").replace(r"\text{EOS}", rf"\text{{{end}}}")


def backward_section(ctx, result):
    st.subheader(ctx.t("train.backward"))
    st.markdown(ctx.t("train.backward_intro"))
    draw.latex(GRAD_TEX + r",\qquad " + LOGITS_GRAD_TEX)
    derivation_views.cross_entropy(ctx)
    names = list(result.backward)  # grad.<step>: the gradient of the step's output; the link names the step
    first = names[0].removeprefix("grad.")
    asked = from_link(ctx.t, "grad", lambda step: f"grad.{step}" in result.backward, first)
    if asked is not None:
        session_store.put("train.grad_step", f"grad.{asked}")
    name = st.selectbox(ctx.t("train.grad_step"), names, key="train.grad_step")
    step = result.trace.step(name.removeprefix("grad."))
    show_in_link("grad", step.name, first)
    draw.latex(ctx.t.words(backward_formula(step)))
    _gradient(ctx, result.trace, result.backward[name], step_axes(result.trace, step.name), "train.grad_step_head",
              "head")
    asked = from_link(ctx.t, "param", result.grads.__contains__, "")  # a parameter's gradient shown, or "" for none
    if asked is not None:
        session_store.put("train.grad_param_open", bool(asked))
    if asked:
        session_store.put("train.grad_param", asked)
    box = st.expander(ctx.t("train.grad_param"), key="train.grad_param_open", on_change="rerun")
    if box.open:  # a second heatmap only on demand: each one a page draws is redrawn by every sidebar edit
        with box:
            param = st.selectbox(ctx.t("train.grad_param"), list(result.grads), key="train.grad_param")
            show_in_link("param", param, None)  # in the link whenever the box is open
            value = result.grads[param]
            _gradient(ctx, result.trace, value, param_axes(ctx.model, param, value.shape), "train.grad_param_head",
                      "phead")


def _gradient(ctx, trace, value, axes, key, part):
    if value.ndim == 3:
        restore_from_link(ctx.t, key, part, range(value.shape[0]))
        head = st.selectbox(ctx.t("view.head"), range(value.shape[0]), format_func=lambda h: f"{h + FIRST}", key=key)
        show_in_link(part, head, 0)
        value, axes = value[head], axes[1:]
    rows, cols = (axes[0], axes[1]) if value.ndim == 2 else ([""], axes[0])
    size = len(trace.model.vocab)
    if vocabulary.is_long(trace) and size in value.shape:  # a real translator's 65,000 tokens: those that matter
        value, rows, cols = _vocabulary_cut(np.atleast_2d(value), rows, cols, vocabulary.columns(ctx, trace, key), size)
    draw.plot(ctx, heatmap(value, rows, cols, digits=ctx.state.digits, scale=draw.type_scale(ctx)), f"{key}.chart")


def _vocabulary_cut(value, rows, cols, shown, size):
    """A gradient's vocabulary axis (the rows of W_E's, the columns of the logits') cut to the tokens `shown`."""
    if value.shape[0] == size:
        value, rows = value[shown], [rows[i] for i in shown]
    if value.shape[1] == size:
        value, cols = value[:, shown], [cols[j] for j in shown]
    return value, rows, cols


# ---- training on the corpus ---------------------------------------------------------------------------------

def trainer(ctx):
    setup = TRAINING_SETUP["overrides"]
    st.markdown(ctx.t("train.corpus_intro", **setup))
    corpus = st.segmented_control(ctx.t("train.corpus"), list(CORPORA), default="en-es", required=True,
                                  format_func=lambda c: ctx.t(f"train.corpus.{c}"), key="train.corpus") or "en-es"
    box = st.expander(ctx.t("train.pairs", n=len(pairs(corpus))), key="train.pairs", on_change="rerun")
    if box.open:  # the table is drawn (and costs a rerun's time) only while it is shown
        box.dataframe(arrow(dict(zip([ctx.t("train.col.src"), ctx.t("train.col.tgt")], zip(*pairs(corpus))))),
                      hide_index=True)
    settings = _settings(ctx, corpus)
    if settings is None:
        return
    schedule(ctx, settings, setup["d_model"], "train.schedule", settings.optimizer)
    if start_and_stop(ctx, "train"):
        _train(ctx, settings)
    error = session_store.pop(ERROR)
    if error:
        st.error(error)
    _results(ctx)


def _settings(ctx, corpus):
    optimizer = st.segmented_control(ctx.t("train.optimizer"), list(optim.OPTIMIZERS), default="adam",
                                     required=True, key="train.optimizer")
    values = number_widgets(ctx, NUMBERS, TrainSettings(), "train")
    try:
        return TrainSettings(corpus=corpus, optimizer=optimizer, **values)
    except ValueError as error:
        st.error(session.refusal(ctx.t, error))
        return None


def number_widgets(ctx, numbers: dict, defaults, prefix: str) -> dict:
    """A training's settings as widgets, four to a row: {name: value} for numbers {name: (widget, low, high, step)}
    starting at the defaults' values; each labelled and keyed f"{prefix}.{name}"."""
    values, rows = {}, -(-len(numbers) // 4)
    for column, (name, (widget, low, high, step)) in zip([c for _ in range(rows) for c in st.columns(4)],
                                                          numbers.items()):
        value, label, key = getattr(defaults, name), ctx.t(f"{prefix}.{name}"), f"{prefix}.{name}"
        with column:
            if widget == "slider":
                values[name] = st.slider(label, low, high, float(value), step=step, key=key)
            else:
                values[name] = sidebar.whole_number_input(st, label, key, low, high, value=value, step=step)
    return values


def schedule(ctx, settings, d_model: int, key: str, optimizer: str = "adam"):
    """The optimiser's update and the learning-rate schedule's formula beside the schedule of these settings."""
    left, right = st.columns(2)
    with left:
        draw.latex(optim.ADAM_TEX if optimizer == "adam" else optim.MOMENTUM_TEX)
        draw.latex(optim.SCHEDULE_TEX)
    steps, rates = optim.schedule(settings.steps, d_model=d_model, warmup=settings.warmup, scale=settings.lr_scale)
    draw.plot(ctx, curves(steps, {"η": rates}, ctx.t("train.step"), ctx.t("train.lr")), key, where=right)


def start_and_stop(ctx, prefix: str) -> bool:
    """The Train and Stop buttons (keyed f"{prefix}.start", f"{prefix}.stop"): whether Train was clicked. Stop
    needs no action: its click ends the run in progress, whose weights so far the next run keeps."""
    start, stop, _ = st.columns([1, 1, 4])
    clicked = start.button(ctx.t("train.start"), type="primary", key=f"{prefix}.start")
    stop.button(ctx.t("train.stop"), key=f"{prefix}.stop", help=ctx.t("train.stop_help"))
    return clicked


def _train(ctx, settings):
    try:
        train_once(ctx, settings, lambda: training(start_model(), settings), settings, PARTIAL)
    except ValueError as error:  # the weights diverged: keep the last finite ones
        session_store.put(ERROR, ctx.t("train.diverged", error=session.refusal(ctx.t, error)))
    keep_interrupted_run()


def train_once(ctx, key, updates, settings, partial: str) -> None:
    """Train (`updates()`: an engine training's iterator) with progress and the loss curve, into
    session_state[partial]; or, if the same `key` was trained on this server before, take that run at once."""
    done = _finished_runs().get(key)
    if done is not None:
        session_store.put(partial, {**done, "replayed": True})
        return
    train_live(ctx, updates(), settings, partial)
    _finished_runs().put(key, session_store.get(partial))


def train_live(ctx, updates, settings, partial: str) -> None:
    """Train, keeping every step's weights in session_state[partial], where the next run finds them if this one is
    interrupted (Stop, or leaving the page): a progress bar and the loss curve as it goes. `updates` yields an
    engine training's updates (.step, .loss, .model)."""
    progress, chart, losses = st.progress(0.0), st.empty(), []
    for update in updates:
        losses.append(update.loss)
        session_store.put(partial, {"settings": settings, "model": update.model, "losses": list(losses)})
        if update.step % 5 == 0 or update.step == settings.steps:  # each of these is where Stop can interrupt
            progress.progress(update.step / settings.steps,
                              text=ctx.t("train.progress", step=update.step, steps=settings.steps,
                                         loss=f"{update.loss:.4f}"))
        if update.step % CHART_EVERY == 0:
            loss_curve(ctx, losses, where=chart)


def loss_curve(ctx, losses, key: str | None = None, where=st):
    """The training's loss by step, on a log scale."""
    draw.plot(ctx, curves(range(1, len(losses) + 1), {"loss": losses}, ctx.t("train.step"), ctx.t("train.loss_axis"),
                     log_y=True), key, where=where)


def finished(ctx, result: dict, prefix: str):
    """What a kept run did (f"{prefix}.done", or f"{prefix}.done_stopped" if stopped early), and its loss curve."""
    losses = result["losses"]
    st.success(ctx.t(f"{prefix}.done_stopped" if result["stopped"] else f"{prefix}.done", steps=len(losses),
                     loss=f"{losses[-1]:.4f}"))
    if result.get("replayed"):
        st.caption(ctx.t("train.replayed"))
    loss_curve(ctx, losses, f"{prefix}.curve")


def keep_interrupted_run():
    """A finished or interrupted (Stop, or leaving the page) run: its weights become every page's model."""
    partial = session_store.pop(PARTIAL)
    if partial is None:
        return
    settings, model = partial["settings"], partial["model"]
    session_store.put(RESULT, {**partial, "stopped": len(partial["losses"]) < settings.steps,
                               "after": translations(model, pairs(settings.corpus))})
    src, tgt = pairs(settings.corpus)[0]  # a sentence the model learned: the sidebar offers the learner's back
    session.keep_text_until_restored(src, tgt)
    sidebar.adopt_model_later(model, {"kind": "trained", "corpus": settings.corpus, "steps": len(partial["losses"])},
                              src=src, tgt=tgt)
    st.rerun()


def _results(ctx):
    result = session_store.get(RESULT)
    if result is None:
        return
    settings = result["settings"]
    finished(ctx, result, "train")
    start, before = _before(settings.corpus)
    after = result["after"]
    exact = sum(t.exact for t in after)
    st.markdown(ctx.t("train.exact", exact=exact, n=len(after)))
    st.dataframe(arrow({ctx.t("train.col.src"): [a.src for a in after],
                        ctx.t("train.col.tgt"): [" ".join(a.expected) for a in after],
                        ctx.t("train.col.before"): [b.text for b in before],
                        ctx.t("train.col.after"): [a.text for a in after],
                        "✓": ["✓" if a.exact else "" for a in after]}), hide_index=True)
    _attention_before_after(ctx, start, result["model"], pairs(settings.corpus)[0])


def _attention_before_after(ctx, before, after, pair):
    src, tgt = pair
    block = f"dec.{before.config.depth('dec') - 1}.cross_attn.weights"
    st.markdown(ctx.t("train.attention", src=src, tgt=tgt))
    for column, (label, model) in zip(st.columns(2), (("train.col.before", before), ("train.col.after", after))):
        trace = model.run(src, tgt)
        axes = step_axes(trace, block)
        column.markdown(f"**{ctx.t(label)}**")
        draw.plot(ctx, heatmap(trace[block][0], axes[1], axes[2], digits=ctx.state.digits, scale=draw.type_scale(ctx)),
                  f"train.attention.{label}", where=column)


# ---- saving and loading weights -----------------------------------------------------------------------------

def save_load(ctx):
    st.markdown(ctx.t("train.files_intro"))
    model = ctx.model
    st.download_button(ctx.t("train.download"), data=lambda: checkpoint.to_bytes(model),
                       mime="application/octet-stream",
                       file_name=f"transformer-{ctx.state.weights or model.name}.npz", key="train.download")
    st.file_uploader(ctx.t("train.upload"), type=["npz"], max_upload_size=MAX_UPLOAD_MB, key="train.upload",
                     on_change=_on_upload, args=(ctx.t,))
    error = session_store.pop(UPLOAD_ERROR)
    if error:
        st.error(error)


def _on_upload(t):
    uploaded = session_store.get("train.upload")
    if uploaded is None:
        return
    data = uploaded.getvalue()
    try:
        _check_unpacked_size(data)
        model = checkpoint.load(io.BytesIO(data))
        _check_vocabulary(model)
        check_model_limits(model)
    except (ValueError, MemoryError) as error:  # MemoryError: an array header that claims an impossible shape
        session_store.put(UPLOAD_ERROR, t("train.upload_bad", name=uploaded.name,
                                          error=session.refusal(t, _quoted(error))))
        return
    sidebar.adopt_model(model, {"kind": "uploaded", "file": uploaded.name[:MAX_FILE_NAME]})


def _quoted(error):
    """The refusal with each text the engine quotes from the file (a member's name, a dtype, a preset) in a code span
    of at most MAX_FILE_NAME characters, so none of it is read as Markdown."""
    if not isinstance(error, ConfigError):
        return error
    values = {key: code(value[:MAX_FILE_NAME]) if isinstance(value, str) else value
              for key, value in error.values.items()}
    return ConfigError(str(error), error.code, **values)


def _check_unpacked_size(data: bytes) -> None:
    """Refuse an archive that unpacks to more than the upload limit, from its directory alone: a small compressed
    file can hold gigabytes of zeros (the app's own files are not compressed, so they unpack to their size)."""
    try:
        members = zipfile.ZipFile(io.BytesIO(data)).infolist()
    except (zipfile.BadZipFile, ValueError, OSError):
        return  # checkpoint.load says what is wrong with it
    unpacked = sum(member.file_size for member in members)  # zipfile reads no more than this
    if unpacked > MAX_UPLOAD_MB * 2**20:
        raise LimitError("msg.upload_unpacks", {"mb": f"{unpacked / 2**20:,.0f}", "high": MAX_UPLOAD_MB})


def _check_vocabulary(model) -> None:
    """Every token must be one printable word as the tokenizer reads it (or a special token): no sentence reaches
    any other, and the pages write tokens into Markdown and chart labels, where markup or a right-to-left override
    would show to everyone given the weights' link."""
    odd = [t for t in model.vocab.tokens if not (split(t) == [t] and t.isprintable()) and t not in (UNK, SOS, EOS)]
    if odd:
        raise LimitError("msg.upload_odd_words", {"n": len(odd)})
