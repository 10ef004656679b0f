"""The tokens page's lessons beyond the lookup (issue 19): the embedding as the product of the one-hot matrix chi
and W_E, and the cosine similarity of the vocabulary's embeddings before and after training. Sections
(pickers.section_tabs): only the chosen one is drawn."""
import numpy as np
import streamlit as st

from engine import blog, positional as pe
from engine.explain import tex_escape

from ui.core import runs, session_store, sidebar
from ui.core.runs import TRAINED_CORPUS, shipped_trained
from ui.core.session_store import STATE
from ui.core.figures import heatmap
from ui.core.format import arrow, bmatrix
from ui.core.i18n import literal
from ui.core.labels import input_side, input_tokens
from ui.views import draw, vocabulary

LANGUAGE_CHOSEN = "tokens.language_chosen"  # the language picker changed the source: the sidebar shows it again
COSINE_TOKENS = 24  # the first tokens of a vocabulary whose similarities are drawn: 24 labels fit half the page
SCALE_TEX = r" \cdot \sqrt{d_{\text{model}}}"


def sections():
    """The page's sections after the lookup: {label key: draw(ctx)}."""
    return {"tokens.tab.product": product, "tokens.tab.cosine": cosine}


def case_note(ctx):
    """Under the token table: which words of the sentence were looked up under another spelling (the vocabulary
    ignores case, "The" is the token "the"), when any was."""
    texts = (ctx.state.src, ctx.state.tgt) if ctx.config.decoder_only else (ctx.state.src,)  # input_tokens' words
    respelled = ctx.model.vocab.respelled(*texts)
    if respelled:
        st.caption(ctx.t("tokens.case", words=ctx.t("list.separator").join(
            f"{literal(w)} → {literal(token)}" for w, token in respelled)))


def pieces(ctx):
    """A real translator's lookup: the source's SentencePiece pieces, the id of each in vocab.json (<unk>'s for a
    piece it lacks) and, for a multilingual model, the language it writes, as a token before the source."""
    if session_store.pop(LANGUAGE_CHOSEN):
        st.rerun(scope="app")  # the page is a fragment; the sidebar's source box shows the new sentence
    vocab, trace = ctx.model.vocab, ctx.trace
    st.markdown(ctx.t("tokens.pieces"))
    if vocab.languages:
        session_store.put("tokens.language", source_language(ctx.state.src, vocab.languages)[0])  # the source's,
        # typed in the sidebar or taken from a link
        st.selectbox(ctx.t("tokens.language"), ["", *vocab.languages], key="tokens.language",
                     format_func=lambda code: code or ctx.t("tokens.language.none"), on_change=_choose_language,
                     args=(vocab.languages,), disabled=ctx.reading)
    shown = vocab.pieces(ctx.state.src) + [trace.src_tokens[-1]]  # the pieces, then </s>
    st.subheader(ctx.t("tokens.table"))
    st.dataframe(arrow({
        ctx.t("tokens.piece"): shown,
        ctx.t("tokens.id"): trace.src_ids,
        ctx.t("tokens.known"): [ctx.t("tokens.yes" if piece == token else "tokens.unk")
                                for piece, token in zip(shown, trace.src_tokens)],
    }), hide_index=True)


def source_language(src: str, languages) -> tuple[str, str]:
    """(the language token a source starts with, or "", the rest): ">>cmn_Hans<< Hello" -> (">>cmn_Hans<<",
    "Hello")."""
    first, _, rest = src.lstrip().partition(" ")
    return (first, rest.lstrip()) if first in languages else ("", src)


def _choose_language(languages):
    chosen = session_store.widget("tokens.language")
    state = session_store.get(STATE)
    text = source_language(state.src, languages)[1]
    sidebar.adopt(state.replace(src=f"{chosen} {text}" if chosen else text))
    session_store.put(LANGUAGE_CHOSEN, True)


def product(ctx):
    """chi (n, N) times W_E (N, d_model), the rows it picks, and the product: the lookup's numbers."""
    trace, model, side = ctx.trace, ctx.model, input_side(ctx.config)
    tokens, ids = (list(sequence) for sequence in input_tokens(trace))
    table, name = model.params[model.embed_names[side]], f"{side}.embed"
    scale, scaled = trace.step(name).meta["scale"], ctx.config.embed_scale
    draw.text_and_formula(ctx.t("tokens.product.text", n=len(ids), vocab=table.shape[0]),
                          pe.ONE_HOT_SCALED_TEX if scaled else pe.ONE_HOT_TEX)
    chi, columns = pe.one_hot(ids, table.shape[0]), list(model.vocab.tokens)  # (n, N)
    if vocabulary.is_long(trace):  # a real translator's 65,000 columns: only the sentence's tokens' hold a 1
        shown = list(dict.fromkeys(ids))
        chi, columns = chi[:, shown], [columns[i] for i in shown]
        st.caption(ctx.t("tokens.product.columns", n=len(shown), rest=table.shape[0] - len(shown)))
    draw.plot(ctx, heatmap(chi, tokens, columns, digits=1, scale=draw.type_scale(ctx)), "tokens.onehot.chart")
    result = pe.embed_as_product(table, ids, scale)  # (n, d_model)
    scale_tex = SCALE_TEX if scaled else ""
    rows = r" \\ ".join(rf"W_E[\text{{{tex_escape(token)}}}]" for token in tokens)  # the drill-down's E[hello, 1]
    draw.latex(rf"\chi\, W_E{scale_tex} = \begin{{bmatrix}} {rows} \end{{bmatrix}}{scale_tex} \\ = "
               + bmatrix(result, ctx.state.digits))  # two lines: d_model = 512's numbers need the whole width
    st.caption(ctx.t("tokens.product.equal" if np.array_equal(result, trace[name]) else "tokens.product.unequal",
                     name=name))


def _embedding_table(model):
    return model.params[model.embed_names[input_side(model.config)]]  # (V, d_model)


def _untrained_caption(t, model, which: str) -> str:
    """Random weights, or the post's numbers for its words where the table holds them (the hello-world preset)."""
    table, known = _embedding_table(model), {token.lower() for token in model.vocab.tokens}
    words = [w for w, row in blog.EMBEDDINGS.items() if w.lower() in known and table.shape[1] == len(row)
             and np.array_equal(table[model.vocab.id(w)], row)]
    if not words:
        return t(f"tokens.cosine.random_{which}", seed=model.seed)
    return t(f"tokens.cosine.post_{which}", seed=model.seed, words=" ".join(f"`{w}`" for w in words))


def cosine(ctx):
    """The first COSINE_TOKENS tokens' cosine similarities, of the model in use and of the other one: the trained
    weights' untrained start, or the shipped trained model if the pages use random weights."""
    draw.text_and_formula(ctx.t("tokens.cosine.text"), pe.COSINE_TEX)
    trained = ctx.state.own_weights
    other = (runs.run_model(ctx.state.replace(weights="", model="", edits=()).model_key) if trained
             else shipped_trained())
    captions = (_untrained_caption(ctx.t, ctx.model, "in_use") if not trained
                else ctx.t("tokens.cosine.trained_in_use"),
                _untrained_caption(ctx.t, other, "other") if trained
                else ctx.t("tokens.cosine.trained_other", corpus=TRAINED_CORPUS, d_model=other.config.d_model))
    for column, model, caption, key in zip(st.columns(2), (ctx.model, other), captions, ("in_use", "other")):
        tokens = list(model.vocab.tokens)[:COSINE_TOKENS]
        column.caption(ctx.t("tokens.cosine.caption", model=caption, shown=len(tokens), vocab=len(model.vocab)))
        table = _embedding_table(model)
        similarity = pe.cosine_similarity(table[:COSINE_TOKENS])
        draw.plot(ctx, heatmap(similarity, tokens, tokens, digits=ctx.state.digits, scale=draw.type_scale(ctx)),
                  f"tokens.cosine.{key}", where=column)
