"""The pages in the order data flows, by section; app.py builds st.navigation from this."""
HOME = "overview"  # the page at "/"
PAGES = {
    "start": ["overview"],
    "encoder": ["tokens", "positional", "qkv", "attention", "multihead", "add_norm", "ffn", "encoder_stack"],
    "decoder": ["decoder_input", "masked_attention", "dec_add_norm", "cross_attention", "dec_ffn", "decoder_stack",
                "output"],
    "generate": ["generate", "train", "dropout"],
    "compare": ["paper_vs_blog", "sizes"],
}
# The step pages, each ending with links to its neighbours here: from the overview's map through the encoder and
# the decoder to generation, which runs the whole pass again per token. Training, dropout and the comparison
# are not steps of one forward pass.
CHAIN = [HOME, *PAGES["encoder"], *PAGES["decoder"], "generate"]
# The pages of the encoder-decoder model only: a decoder-only model (GPT-style) has no encoder, no cross-attention,
# and the app does not train it. They stay in the navigation and say so (ui/context.py: refuse_page).
ENCODER_DECODER_ONLY = (*PAGES["encoder"], "cross_attention", "train")


def page_file(page: str) -> str:
    return f"pages/{page}.py"


def neighbours(page: str, decoder_only: bool = False) -> tuple[str, str] | None:
    """The pages before and after a step page in the order data flows (a decoder-only model's pages: from the
    overview to the decoder's input); None for a page not inside the chain."""
    chain = [p for p in CHAIN if not (decoder_only and p in ENCODER_DECODER_ONLY)]
    i = chain.index(page) if page in chain[1:-1] else None
    return None if i is None else (chain[i - 1], chain[i + 1])
