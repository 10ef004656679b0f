import streamlit as st

from engine import sizes
from ui.core import session
from ui.core.format import arrow
from ui.lessons.size_tables import (count, parameter_table, product_table, product_totals, torch_note, torch_table,
                                    transformers_table)
from ui.views import frame

ctx = session.get()
frame.intro(ctx, "sizes")
t, c, vocab_size = ctx.t, ctx.config, len(ctx.model.vocab)

st.subheader(t("sizes.parameters"))
st.markdown(t("sizes.parameters_note", n=count(sizes.parameter_count(c, vocab_size)), v=count(vocab_size),
              paper_v=count(sizes.PAPER_VOCABULARY_SIZE),
              paper_n=count(sizes.parameter_count(c, sizes.PAPER_VOCABULARY_SIZE))))
st.dataframe(arrow(parameter_table(t, c, vocab_size)), hide_index=True, height="content")
st.markdown(torch_note(t, c, vocab_size))
st.dataframe(arrow(torch_table(t, c, vocab_size)), hide_index=True, height="content")
if ctx.state.model:  # a real translator: its count as transformers gives it
    st.markdown(t("sizes.marian.text", name=ctx.state.model))
    st.dataframe(arrow(transformers_table(t, c, vocab_size)), hide_index=True, height="content")
other = c.replace(decoder_only=not c.decoder_only)  # the count of the other kind of model, of the same sizes
st.markdown(t("sizes.encoder_decoder" if c.decoder_only else "sizes.decoder_only",
              n=count(sizes.parameter_count(other, vocab_size)), d=other.depth("dec"), e=other.depth("enc")))
st.caption(t("sizes.paper_base", n=count(sizes.parameter_count(sizes.PAPER_BASE_CONFIG, sizes.PAPER_VOCABULARY_SIZE)),
             paper=count(sizes.PAPER_BASE_PARAMETERS)))

st.subheader(t("sizes.products"))
products = sizes.pass_products(ctx.trace)
this_pass = "sizes.products_pass.decoder_only" if c.decoder_only else "sizes.products_pass"
st.markdown(t(this_pass, rule=t("sizes.products_note"), n_src=len(ctx.trace.src_tokens),
              n_tgt=len(ctx.trace.tgt_tokens)))
st.markdown(product_totals(t, products))
st.dataframe(arrow(product_table(t, products)), hide_index=True)
