"""The parts of a layer drawn the same way in the encoder and the decoder: an attention block with the paper's whole
equations above its steps and the heads' W^Q as the one matrix they are slices of, Add & LayerNorm, the
feed-forward network, a stack's output, and the dropout of training. The encoder's and the decoder's pages call
these with their stack ("enc" or "dec")."""
import streamlit as st

import numpy as np

from engine import attention as att
from engine import blog
from engine import dropout as dr
from engine import layers
from engine.presets import PRESETS

from ui.core import runs, session_store, sidebar
from ui.core.figures import heatmap
from ui.core.format import arrow, fmt, fmt_tex
from ui.core.labels import FIRST, SUBLAYER_WORDS, indices, param_tex, step_axes, step_name_key
from ui.core.navigation import STACK_SECTIONS
from ui.core.session_store import LINK_VIEW
from ui.core.state import CACHE_HASH
from ui.lessons.formulas import DIGITS, attention_equations, mark_head, side_by_side_tex
from ui.views import draw, frame, pickers, steps

WQ_ROWS = 16  # a W^Q too big to write out is drawn as a heatmap of its first rows (512 x 512 is 2 MB to send)
EVEN = 0.01  # cross-attention whose weights are all this close to 1/n_keys is said to weigh the source alike
PAPER = "paper"  # the preset a one-layer stack offers for its layers to compare
MEASURES = {"change": layers.CHANGE_TEX, "cosine": layers.COSINE_TEX, "norm": layers.NORM_TEX}  # catalog stack.*
DROPOUTS = {  # where training drops cells, in the order of the pass: step -> (what, of which sub-layer) or None
    "src": {"src.dropout": None}, "tgt": {"tgt.dropout": None},
    "enc": {"attn.dropout": ("weights", "self_attn"), "drop1": ("output", "self_attn"), "drop2": ("output", "ffn")},
    "dec": {"self_attn.dropout": ("weights", "masked"), "drop1": ("output", "masked"),
            "cross_attn.dropout": ("weights", "cross"), "drop2": ("output", "cross"), "drop3": ("output", "ffn")},
}
INPUT_SUM = ": X_emb + PE"  # what the source's and the decoder's input dropouts drop from


def equations(ctx, block: str):
    """Attention(Q,K,V), MultiHead and its head_i of the paper, and what Q, K and V are in this block, as it computes
    them, in one formula."""
    divisor = ctx.trace.step(f"{block}.scaled").meta["divisor_tex"]
    lines = attention_equations(divisor, block.endswith(".self_attn"), block.endswith(".cross_attn"),
                                ctx.config.attn_bias, ctx.config.norm_placement == "pre")
    draw.latex(ctx.t.words(r" \\ ".join(lines)))
    steps.paper_form(ctx, ("scale", "proj"), block)


def weights_side_by_side(ctx, block: str, head: int):
    """The h heads' W^Q_i as the column blocks of one d_model x h·d_k matrix, `head`'s columns marked."""
    W = ctx.model.params[f"{block}.W_Q"]
    h, d_model, d_k = W.shape
    text = ctx.t("formulas.side_by_side", h=h, d_model=d_model, width=h * d_k, head=head + 1, d_k=d_k)
    if d_model <= draw.LATEX_CELLS and h * d_k <= draw.LATEX_CELLS:
        equals = r" \\ = " if ctx.state.present else " = "  # a presenter's matrix on a line of its own: wider type
        draw.text_and_formula(text, att.SIDE_BY_SIDE_TEX + equals + side_by_side_tex(W, head,
                                                                                    min(ctx.state.digits, DIGITS)))
        _posts_printed_rows(ctx, block)
        return
    rows = min(d_model, WQ_ROWS)
    draw.text_and_formula(text, att.SIDE_BY_SIDE_TEX)
    st.caption(ctx.t("formulas.first_rows", rows=rows, d_model=d_model))
    chart = heatmap(att.heads_side_by_side(W)[:rows], indices(rows), indices(h * d_k), digits=ctx.state.digits,
                    scale=draw.type_scale(ctx))
    draw.plot(ctx, mark_head(chart, head, d_k, h), f"wq.{block}.{head}")


def _posts_printed_rows(ctx, block: str):
    """Where the model's W^Q or W^K holds a row the post prints otherwise (its LaTeX against its code, whose numbers it
    prints; engine.blog.DIFFERENCES): a note under the matrix, naming the row and both versions."""
    for difference in blog.DIFFERENCES:
        param, head, row = difference.get("weight", (None, 0, 0))
        name = f"{block}.{param}"
        if param is None or not _holds_the_codes_row(ctx.model.params.get(name), blog.ENCODER_ATTENTION[param], head,
                                                     row):
            continue
        st.caption(ctx.t("diff.weight_note", symbol=param_tex(name, head), row=row + FIRST,
                         code=_vector(blog.ENCODER_ATTENTION[param][head, row]), post=_vector(difference["printed"])))


def _holds_the_codes_row(weight, code, head: int, row: int) -> bool:
    return weight is not None and weight.shape == code.shape and np.array_equal(weight[head, row], code[head, row])


def _vector(values) -> str:
    return "[" + ", ".join(fmt(float(x), DIGITS) for x in values) + "]"


# The decoder's two attention pages, one page for either block of a decoder layer: {page: (the block, the key of the
# page's widgets)}.
DECODER_ATTENTION = {"masked_attention": ("self_attn", "masked"), "cross_attention": ("cross_attn", "cross")}


def decoder_attention_page(page: str):
    """The page of a decoder attention block (a page of DECODER_ATTENTION), per head: Q, K, V to the heads' outputs,
    Concat and W^O."""
    part, key = DECODER_ATTENTION[page]

    @frame.page
    def body(ctx):
        frame.intro(ctx, page)
        layer = pickers.layer_picker(ctx, "layer.dec")
        block = f"dec.{layer}.{part}"
        equations(ctx, block)
        if part == "cross_attn":
            _evenly_spread_note(ctx, ctx.trace[f"{block}.weights"])
        head = pickers.head_picker(ctx, f"heads.{key}.{layer}")
        weights_side_by_side(ctx, block, head)
        steps.flow(ctx, steps.page_steps(ctx, page, block), head, key=key)  # one heatmap: the chosen step's

    body()


def _evenly_spread_note(ctx, weights):
    """Where cross-attention weighs every source position alike, why: the encoder's outputs are alike, from the step
    at which they became so (engine.layers.convergence), when that is so."""
    n = weights.shape[-1]
    if n < 2 or not layers.evenly_spread(weights, EVEN):
        return
    note = ctx.t("cross.even", n=n, tolerance=EVEN)
    where = layers.convergence(ctx.trace, "enc")
    if where is not None:
        note += "\n\n" + ctx.t("cross.even.alike", n=n, tolerance=fmt(100 * layers.ALIKE, 2),
                            name=where.step, title=ctx.t(step_name_key(where.step)), spread=fmt(100 * where.spread, 2),
                            before=where.before, before_title=ctx.t(step_name_key(where.before)),
                            spread_before=fmt(100 * where.spread_before, 2))
    st.container(border=True).markdown(":material/info: " + note)  # a lesson, not a warning: no alert box


def add_norm(ctx, stack: str, layer: int, key: str):
    """A sub-layer's residual add and LayerNorm, in the order of the norm placement; the sub-layer is chosen."""
    blocks = ctx.config.sublayers[stack]  # by number: a decoder-only layer has no cross-attention, sub-layer 2
    sublayer = pickers.choice(ctx, f"{key}.sublayer", ctx.t("add_norm.sublayer"), list(blocks),
                               lambda k: ctx.t(f"sublayer.{SUBLAYER_WORDS[blocks[k]]}"), link="sublayer")
    order = ("add", "ln") if ctx.config.norm_placement == "post" else ("ln", "add")
    steps.flow(ctx, [f"{stack}.{layer}.{kind}{sublayer}" for kind in order], key=f"{key}.{sublayer}")


def ffn(ctx, stack: str, layer: int, key: str):
    steps.flow(ctx, steps.page_steps(ctx, key, f"{stack}.{layer}.ffn"), key=key)  # key: the page, "ffn" or "dec_ffn"


def stack_output(ctx, stack: str):
    """Two sections (pickers.section_tabs, one drawn per rerun), in the order of navigation.STACK_SECTIONS: layer by
    layer, where the lesson starts (a layer's input, where its heads look, its output, which is the next layer's input
    or the stack's output); what each layer changes, all layers at a glance."""
    names = layers.layer_outputs(ctx.trace, stack)
    _measure_names_its_section()
    draws = {"stack.layer_by_layer": lambda ctx: _layer_by_layer(ctx, stack, names),
             "stack.changes": lambda ctx: _layer_changes(ctx, stack, names)}
    pickers.section_tabs(ctx, {label: draws[label] for label in STACK_SECTIONS}, f"{stack}.section", link="section",
                         numbers=STACK_SECTIONS)


def _measure_names_its_section():
    """A link from before a layer's path came first left out the section on what each layer changes, the first then:
    one that names a measure and no section asks for that section (a link now names it)."""
    asked = session_store.get(LINK_VIEW, {})
    if "measure" in asked and "section" not in asked:
        asked["section"] = STACK_SECTIONS["stack.changes"]


def _layer_changes(ctx, stack, names):
    """One measure (engine.layers) per position and layer, as a heatmap with its numbers: positions down, layers
    across."""
    if ctx.step_in_view:  # the heading the step scroll brings to the top of the screen
        st.markdown(f"##### {ctx.t('stack.changes')}")
    measure = pickers.choice(ctx, f"{stack}.measure", ctx.t("stack.measure"), list(MEASURES),
                             lambda m: ctx.t(f"stack.{m}"), link="measure")
    values = getattr(layers.layer_changes([ctx.trace[name] for name in names]), measure)  # (layers, positions)
    draw.latex(MEASURES[measure])
    if not ctx.step_in_view:  # a slide's note (and a following student's) is under its numbers
        _changes_notes(ctx, stack, measure)
    first = 0 if measure == "norm" else 1  # x^(0), the input, has a length but no change
    columns = [ctx.t("view.input") if l == 0 else ctx.t("stack.layer", l=l) for l in range(first, len(names))]
    chart = heatmap(values.T, step_axes(ctx.trace, names[0])[0], columns, digits=ctx.state.digits,
                    scale=draw.type_scale(ctx))
    draw.plot(ctx, chart, f"{stack}.{measure}", width=draw.chart_width(len(columns)))
    if ctx.step_in_view:
        _changes_notes(ctx, stack, measure)


def _changes_notes(ctx, stack, measure):
    st.caption(ctx.t(f"stack.{measure}_note"))
    if ctx.config.depth(stack) == 1:
        _more_layers(ctx, stack, ctx.t("stack.one_layer_note", field=f"n_{stack}_layers"))


def _more_layers(ctx, stack, note):
    """A one-layer stack's note, with the paper preset's layers one click away (the sentences kept); a following
    student's page is the teacher's to change."""
    if ctx.reading:
        st.caption(note)
        return
    row = st.container(horizontal=True, vertical_alignment="center", gap="small")
    row.caption(note)
    row.button(ctx.t("stack.paper_layers", n=PRESETS[PAPER].depth(stack)), key=f"{stack}.paper_layers",
               icon=":material/layers:", on_click=sidebar.choose_preset, args=(PAPER,))


def _layer_by_layer(ctx, stack, names):
    """The chosen layer's path: its input, where its attention sub-layers' heads look, and its output."""
    if ctx.step_in_view:  # the heading the step scroll brings to the top of the screen
        st.markdown(f"##### {ctx.t('stack.layer_by_layer')}")
    layer = pickers.layer_picker(ctx, f"layer.{stack}_stack")
    sublayers = ctx.config.sublayers[stack].values()
    if not ctx.step_in_view:  # a slide's notes (and a following student's) are under its numbers
        _path_notes(ctx, stack, layer, sublayers)
    _layer_input(ctx, names, layer)
    for block in sublayers:
        if block != "ffn":
            _attention_focus(ctx, f"{stack}.{layer}.{block}", SUBLAYER_WORDS[block])
    _layer_output(ctx, stack, names, layer)
    if ctx.step_in_view:
        _path_notes(ctx, stack, layer, sublayers)


def _path_notes(ctx, stack, layer, sublayers):
    st.caption(ctx.t("stack.path", l=layer + 1,
                     sublayers=" → ".join(ctx.t(f"sublayer.{SUBLAYER_WORDS[block]}") for block in sublayers)))
    if ctx.config.depth(stack) == 1:
        _more_layers(ctx, stack, ctx.t("stack.one_layer_path"))


def _layer_input(ctx, names, layer):
    """The layer's input: the stack's (the embeddings and positions), or the layer before's output."""
    heading = ctx.t("stack.next_input", l=layer + 1, before=layer) if layer else ctx.t("stack.first_input")
    st.markdown(f"**{heading}**")
    steps.step(ctx, names[layer], drill=False)


def _attention_focus(ctx, block, sublayer):
    """Per query position and head: the key it weighs most, and that weight."""
    focus = layers.attention_focus(ctx.trace[f"{block}.weights"])
    queries, keys = step_axes(ctx.trace, f"{block}.weights")[1:]
    st.markdown(f"**{ctx.t('stack.focus', sublayer=ctx.t(f'sublayer.{sublayer}'))}**")
    st.caption(ctx.t("stack.focus_note_masked" if sublayer == "masked" else "stack.focus_note", k=len(keys),
                     even=fmt(1 / len(keys), ctx.state.digits)))
    heads = {f"{ctx.t('view.head')} {h + 1}": [f"{keys[k]} · {fmt(w, ctx.state.digits)}"
                                               for k, w in zip(key, weight)]
             for h, (key, weight) in enumerate(zip(*focus))}
    st.dataframe(arrow({"": queries, **heads}), hide_index=True,
                 column_config={"": st.column_config.TextColumn(pinned=True)})  # the query positions


def _layer_output(ctx, stack, names, layer):
    """The layer's output; the last layer's is followed by the stack's, or is it (post-norm)."""
    n, post = ctx.config.depth(stack), ctx.config.norm_placement == "post"
    if layer < n - 1 or not post:
        heading = ctx.t("stack.layer_output", l=layer + 1) if layer == n - 1 else \
            ctx.t("stack.next_layers_input", l=layer + 1, after=layer + 2)
        st.markdown(f"**{heading}**")
        steps.step(ctx, names[layer + 1], drill=False)
    if layer == n - 1:
        st.markdown(f"**{ctx.t('stack.last_output' if post else 'stack.final_norm', l=n)}**")
        st.caption(ctx.t("stack.same" if post else "stack.final_norm_note", out=f"{stack}.out", l=n,
                         name=names[-1]))
        steps.step(ctx, f"{stack}.out")


@st.cache_resource(max_entries=16, show_spinner=False, hash_funcs=CACHE_HASH)
def _training_pass(model_key, p, seed):
    """The page's model run once in training mode (dropout p, masks from seed)."""
    return runs.run_model(model_key).run(model_key.src, model_key.tgt or None, dropout=p, seed=seed)


def dropout(ctx):
    """One dropout of a pass in training mode, after the step it drops cells from."""
    row = st.container(horizontal=True, gap="medium")
    p = row.slider(ctx.t("train.dropout"), 0.05, 0.5, 0.1, step=0.05, key="dropout.p")
    seed = row.number_input(ctx.t("train.seed"), min_value=0.0, max_value=float(2**32 - 1), step=1.0, format="%g",
                            key="dropout.seed")  # a float input: a forged NaN or inf puts the default back
    places = _dropouts(ctx.config)
    place = pickers.choice(ctx, "dropout.place", ctx.t("dropout.place"), list(places),
                           lambda where: ctx.t(f"dropout.place.{where}"), link="place")
    drops = places[place]
    drop = next(iter(drops))
    if len(drops) > 1:
        layer = pickers.layer_picker(ctx, f"layer.{place}")
        drop = f"{place}.{layer}." + pickers.choice(
            ctx, f"dropout.which.{place}", ctx.t("dropout.which"), list(drops),
            lambda d: ctx.t(f"dropout.{drops[d][0]}", sublayer=ctx.t(f"sublayer.{drops[d][1]}")), link="dropout")
    trace = _training_pass(ctx.state.model_key, p, int(seed))
    names = [trace.step(drop).inputs[0], drop]  # before, after
    head = pickers.head_picker(ctx, "heads.dropout") if trace[drop].ndim == 3 else None
    pickers.section_tabs(ctx, {
        "dropout.tab.flow": lambda ctx: steps.flow(ctx, names, head, key=f"dropout.{drop}", trace=trace),
        "dropout.tab.mask": lambda ctx: _dropout_mask(ctx, trace, names, head),
        "dropout.tab.places": lambda ctx: _dropout_places(ctx, place, drop)}, "dropout.tab", link="section")


def _dropout_mask(ctx, trace, names, head):
    """The keep mask m of the chosen dropout as 0/1 cells, its scale 1/(1 - p), and one kept cell in numbers."""
    before, drop = names
    s = trace.step(drop)
    keep, p = s.meta["keep"], s.meta["rate"]
    mask = keep if head is None else keep[head]  # (rows, cols)
    st.markdown(ctx.t("dropout.mask.text", kept=int(mask.sum()), cells=mask.size, seed=s.meta["seed"], name=drop))
    axes = step_axes(trace, drop)
    draw.plot(ctx, heatmap(mask.astype(float), axes[-2], axes[-1], digits=1, scale=draw.type_scale(ctx)),
              "dropout.mask.chart", width=draw.chart_width(mask.shape[1]))
    scale, digits = dr.keep_scale(p), ctx.state.digits
    formula = rf"\frac{{1}}{{1 - p}} = \frac{{1}}{{1 - {fmt_tex(p, digits)}}} = {fmt_tex(scale, digits)}"
    if not mask.any():
        draw.text_and_formula(ctx.t("dropout.scale.text"), formula)
        return
    i, j = (int(x) for x in np.argwhere(mask)[0])
    index = (i, j) if head is None else (head, i, j)
    draw.text_and_formula(ctx.t("dropout.scale.example", row=i + 1, col=j + 1),
                          rf"{formula},\quad {fmt_tex(trace[before][index], digits)} \cdot "
                          rf"{fmt_tex(scale, digits)} = {fmt_tex(trace[drop][index], digits)}")


def _dropout_places(ctx, place, drop):
    """Every place the model's training pass drops cells (_dropouts), the chosen one in bold."""
    lines = []
    for where, drops in _dropouts(ctx.config).items():
        lines.append(f"- {ctx.t(f'dropout.place.{where}')}" + (INPUT_SUM if len(drops) == 1 else ""))
        for name, what in drops.items():
            if what is not None:
                word = ctx.t(f"dropout.{what[0]}", sublayer=ctx.t(f"sublayer.{what[1]}"))
                chosen = where == place and drop.endswith(f".{name}")
                lines.append(f"    - **{word}** ← {ctx.t('dropout.here')}" if chosen else f"    - {word}")
        if where == place and len(drops) == 1:
            lines[-1] = f"- **{ctx.t(f'dropout.place.{where}')}{INPUT_SUM}** ← {ctx.t('dropout.here')}"
    st.markdown(ctx.t("dropout.places.text") + "\n\n" + "\n".join(lines))


def _dropouts(config) -> dict:
    """DROPOUTS of the model's places: a decoder-only model has no source, no encoder and no cross-attention."""
    if not config.decoder_only:
        return DROPOUTS
    return {place: {step: what for step, what in drops.items() if what is None or what[1] != "cross"}
            for place, drops in DROPOUTS.items() if place in ("tgt", "dec")}
