"""The pages in the order data flows, by section; app.py builds st.navigation from this."""
HOME = "overview"  # the page at "/"
PAGES = {
    "start": ["overview"],
    "encoder": ["tokens", "positional", "qkv", "attention", "multihead", "add_norm", "ffn", "encoder_stack"],
    "decoder": ["decoder_input", "masked_attention", "dec_add_norm", "cross_attention", "dec_ffn", "decoder_stack",
                "output"],
    "generate": ["generate", "train", "dropout"],
    "compare": ["paper_vs_blog"],
}


def page_file(page: str) -> str:
    return f"pages/{page}.py"
