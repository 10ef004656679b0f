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


def page_file(page: str) -> str:
    return f"pages/{page}.py"


def neighbours(page: str) -> tuple[str, str] | None:
    """The pages before and after a step page in the order data flows; None for a page not inside the chain."""
    i = CHAIN.index(page) if page in CHAIN[1:-1] else None
    return None if i is None else (CHAIN[i - 1], CHAIN[i + 1])
