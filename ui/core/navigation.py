"""The pages in the order data flows, by section; app.py builds st.navigation from this."""
HOME = "overview"  # the page at "/"
PAGES = {
    "start": ["overview", "animation"],
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
# and the app neither trains nor animates it. They stay in the navigation and say so (ui/views/frame.py: refuse_page).
ENCODER_DECODER_ONLY = (*PAGES["encoder"], "cross_attention", "train", "animation")


def page_file(page: str) -> str:
    return f"pages/{page}.py"


def neighbours(page: str, decoder_only: bool = False) -> tuple[str, str] | None:
    """The pages before and after a step page in the order data flows (a decoder-only model's pages: from the
    overview to the decoder's input); None for a page not inside the chain."""
    chain = [p for p in CHAIN if not (decoder_only and p in ENCODER_DECODER_ONLY)]
    i = chain.index(page) if page in chain[1:-1] else None
    return None if i is None else (chain[i - 1], chain[i + 1])


# Presenter mode's slides: the forward pass one step per screen, in the order data flows, as (page, the view the
# page opens on: its flow's step, an add & norm page's sub-layer, a stack page's section, and in a stack of more than
# one layer the layer, which the page's picker shows; positions from 0). The steps are those each page's flow draws
# (pages/*.py, ui/lessons/blocks.py); tests/test_presenter.py opens every slide.
RAIL = ("encoder", "decoder", "output")  # the rail's parts, catalog keys present.part.*
ATTENTION = ("q", "k", "v", "scores", "scaled", "weights", "heads", "concat", "out")  # a decoder attention page


def slides(norm_placement: str, decoder_only: bool = False, enc_layers: int = 1,
           dec_layers: int = 1) -> list[tuple[str, str, dict]]:
    """[(rail part, page, view)] of the whole forward pass, every layer of each stack in turn; post-norm adds then
    normalises, pre-norm the reverse. A decoder-only model has no encoder and no cross-attention: its decoder's
    sub-layers 1 and 3 are the add & norm page's first and second choice."""
    order = ("add", "ln") if norm_placement == "post" else ("ln", "add")

    def flow(page, leaves, **view):
        return [(page, {**view, "step": leaf}) for leaf in leaves]

    def add_norm(page, sublayer, position=None, **view):  # position: the sub-layer's among the page's choices
        return flow(page, [f"{kind}{sublayer}" for kind in order],
                    sublayer=sublayer - 1 if position is None else position, **view)

    def stack(page):
        return [(page, {"section": 0}), (page, {"section": 1})]

    def layers(n, one_layer):  # the layer is in a view only where the pages have a layer picker (pickers.layer_picker)
        return [slide for layer in range(n) for slide in one_layer({"layer": layer} if n > 1 else {})]

    def encoder_layer(at):
        return [*flow("qkv", ("q", "k", "v"), **at), *flow("attention", ("scores", "scaled", "weights", "heads"), **at),
                *flow("multihead", ("concat", "out"), **at), *add_norm("add_norm", 1, **at),
                *flow("ffn", ("hidden", "act", "out"), **at), *add_norm("add_norm", 2, **at)]

    def decoder_layer(at):
        masked = ATTENTION[:5] + ("mask", "masked") + ATTENTION[5:]
        return [*flow("masked_attention", masked, **at), *add_norm("dec_add_norm", 1, **at),
                *([] if decoder_only else [*flow("cross_attention", ATTENTION, **at),
                                           *add_norm("dec_add_norm", 2, **at)]),
                *flow("dec_ffn", ("hidden", "act", "out"), **at),
                *add_norm("dec_add_norm", 3, 1 if decoder_only else 2, **at)]

    parts = {
        "encoder": [("tokens", {}), *flow("positional", ("embed", "pos", "input")),
                    *layers(enc_layers, encoder_layer), *stack("encoder_stack")],
        "decoder": [*flow("decoder_input", ("embed", "pos", "input")), *layers(dec_layers, decoder_layer),
                    *stack("decoder_stack")],
        "output": flow("output", ("logits", "vocab_mask", "masked_logits", "probs")),
    }
    return [(part, page, view) for part in RAIL for page, view in parts[part]
            if not (decoder_only and part == "encoder")]


def slide_at(slides: list, page: str, shown: dict) -> int | None:
    """The position of the slide a page shows (shown: what its widgets show, defaults too), or None."""
    return next((i for i, (_, at, view) in enumerate(slides)
                 if at == page and all(shown.get(key) == value for key, value in view.items())), None)
