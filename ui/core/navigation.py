"""The pages in the order data flows, by section; app.py builds st.navigation from this."""
from engine.model import step_table

HOME = "overview"  # the page at "/"
PAGES = {
    "start": ["overview", "animation"],
    "encoder": ["tokens", "positional", "qkv", "attention", "multihead", "add_norm", "ffn", "encoder_stack"],
    "decoder": ["decoder_input", "masked_attention", "dec_add_norm", "cross_attention", "dec_ffn", "decoder_stack",
                "output"],
    "generate": ["generate", "train", "dropout"],
    "compare": ["paper_vs_blog", "sizes"],
    "practice": ["exercises"],
    "vision": ["vit_patches", "vit_embed", "vit_encoder", "vit_head", "vit_train"],
}
# The pages drawn in sections, each by its picker (pickers.section_tabs, whose key is given here): {page: picker key}.
# A page's sections are the {label key: draw} its picker is given; tests/test_sections.py opens every one of them.
SECTIONS = {"tokens": "tokens.tab", "positional": "pos.tab", "encoder_stack": "enc.section",
            "decoder_stack": "dec.section", "dropout": "dropout.tab", "generate": "gen.tab", "train": "train.tab",
            "exercises": "ex.tab", "vit_encoder": "vit_encoder.section"}
# A stack page's sections in the order it shows them, each with its number in the page's link (from 0), which is the
# order they had before a layer's path came first: a link shared then (section=2, one layer) opens the same section.
STACK_SECTIONS = {"stack.layer_by_layer": 1, "stack.changes": 0}
# The step pages, each ending with links to its neighbours here: from the overview's map through the encoder and
# the decoder to generation, which runs the whole pass again per token. Training, dropout and the comparison
# are not steps of one forward pass.
CHAIN = [HOME, *PAGES["encoder"], *PAGES["decoder"], "generate"]
# The pages of the encoder-decoder model only: a decoder-only model (GPT-style) has no encoder, no cross-attention,
# and the app neither trains nor animates it. They stay in the navigation and say so (ui/views/frame.py: refuse_page).
# The encoder's first two pages, tokens and positional encoding, show a decoder-only model's one input sequence.
ENCODER_DECODER_ONLY = (*PAGES["encoder"][2:], "cross_attention", "train", "animation")


# Not "pages/": Streamlit runs a folder of that name in its legacy mode (a page opened by a deep link, without app.py)
# until the first st.navigation call of the process.
PAGE_FOLDER = "app_pages"


def page_file(page: str) -> str:
    return f"{PAGE_FOLDER}/{page}.py"


def neighbours(page: str, decoder_only: bool = False) -> tuple[str, str | None] | None:
    """The pages before and after a page of the chain in the order data flows (generation, the last, has none
    after it; a decoder-only model's chain skips the pages it has nothing for); None for a page outside it and
    for the overview, which opens it with its map."""
    chain = [p for p in CHAIN if not (decoder_only and p in ENCODER_DECODER_ONLY)]
    if page not in chain[1:]:
        return None
    i = chain.index(page)
    return chain[i - 1], chain[i + 1] if i + 1 < len(chain) else None


# The steps a step page draws: those its block declares (engine/model.py) from the page's first step up to, not
# including, the `stop` step (None: the block's first, its end), so a step declared anywhere in a block is drawn on
# one page and has its slide. The positional and decoder-input pages draw a side's embedding ("src", "tgt"); the
# attention and feed-forward pages one layer's block. Add & LayerNorm follows the norm placement instead
# (ui/lessons/blocks.add_norm).
FLOWS = {
    "positional": ("embedding", None, None), "decoder_input": ("embedding", None, None),
    "qkv": ("attn", None, "scores"), "attention": ("attn", "scores", "concat"), "multihead": ("attn", "concat", None),
    "ffn": ("ffn", None, None), "dec_ffn": ("ffn", None, None),
    "masked_attention": ("self_attn", None, None), "cross_attention": ("cross_attn", None, None),
    "output": ("output", None, None),
}


def flow_leaves(config, page: str) -> list[str]:
    """The last names of the steps `page` draws, in the order its block declares them (an inference pass's)."""
    block, start, stop = FLOWS[page]
    declared = list(step_table(config, 0)[block])
    return declared[declared.index(start) if start else 0:declared.index(stop) if stop else None]


# Presenter mode's slides: the forward pass one step per screen, in the order data flows, as (page, the view the
# page opens on: its flow's step, an add & norm page's sub-layer, a stack page's section, and in a stack of more than
# one layer the layer, which the page's picker shows; positions from 0). tests/test_presenter.py opens every slide. A
# page's first slide is where it opens without a view: every picker on its first choice (docs/ARCHITECTURE.md).
RAIL = ("encoder", "decoder", "output")  # the rail's parts, catalog keys present.part.*


def slides(config) -> list[tuple[str, str, dict]]:
    """[(rail part, page, view)] of the whole forward pass of a model of this config, every layer of each stack in
    turn; post-norm adds then normalises, pre-norm the reverse. A decoder-only model has no encoder and no
    cross-attention: its decoder's sub-layers 1 and 3 are the add & norm page's first and second choice."""
    order = ("add", "ln") if config.norm_placement == "post" else ("ln", "add")
    decoder_only = config.decoder_only

    def flow(page, leaves=None, **view):
        return [(page, {**view, "step": leaf}) for leaf in leaves or flow_leaves(config, page)]

    def add_norm(page, sublayer, position=None, **view):  # position: the sub-layer's among the page's choices
        return flow(page, [f"{kind}{sublayer}" for kind in order],
                    sublayer=sublayer - 1 if position is None else position, **view)

    def stack(page):
        return [(page, {"section": number}) for number in STACK_SECTIONS.values()]

    def layers(n, one_layer):  # the layer is in a view only where the pages have a layer picker (pickers.layer_picker)
        return [slide for layer in range(n) for slide in one_layer({"layer": layer} if n > 1 else {})]

    def encoder_layer(at):
        return [*flow("qkv", **at), *flow("attention", **at), *flow("multihead", **at), *add_norm("add_norm", 1, **at),
                *flow("ffn", **at), *add_norm("add_norm", 2, **at)]

    def decoder_layer(at):
        return [*flow("masked_attention", **at), *add_norm("dec_add_norm", 1, **at),
                *([] if decoder_only else [*flow("cross_attention", **at), *add_norm("dec_add_norm", 2, **at)]),
                *flow("dec_ffn", **at), *add_norm("dec_add_norm", 3, 1 if decoder_only else 2, **at)]

    parts = {
        "encoder": [("tokens", {}), *flow("positional"), *layers(config.depth("enc"), encoder_layer),
                    *stack("encoder_stack")],
        "decoder": [*flow("decoder_input"), *layers(config.depth("dec"), decoder_layer), *stack("decoder_stack")],
        "output": flow("output"),
    }
    return [(part, page, view) for part in RAIL for page, view in parts[part]
            if not (decoder_only and part == "encoder")]


VISION_RAIL = ("image", "encoder", "head")  # the Vision Transformer's rail's parts, catalog keys present.part.*
ENCODER_SECTIONS = {"attn": 1, "ffn": 2}  # the ViT encoder page's sections: 0, the class token's attention map


def vision_slides(names: list[str], n_layers: int) -> list[tuple[str, str, dict]]:
    """The Vision Transformer's slides, as `slides` gives the text model's, from its trace's step names in the order of
    the pass: the patches; the embeddings' steps; each layer's class-token attention over the image, then its
    sub-layers' steps (the encoder page's sections); the head's steps. Its training page is off the pass."""
    def steps_of(prefix, **view):
        return [{**view, "step": name.rsplit(".", 1)[-1]} for name in names if name.startswith(prefix)]

    def layer(l):
        at = {"layer": l} if n_layers > 1 else {}
        ends = [names.index(f"enc.{l}.add{i}") for i in (1, 2)]
        start = names.index(f"enc.{l}.ln1")
        groups = {"attn": names[start:ends[0] + 1], "ffn": names[ends[0] + 1:ends[1] + 1]}
        return [{**at, "section": 0}] + [{**at, "section": ENCODER_SECTIONS[block], "step": name.rsplit(".", 1)[-1]}
                                         for block, group in groups.items() for name in group]

    image = [("image", "vit_patches", {})] + [("image", "vit_embed", view) for view in steps_of("img.")[1:]]
    encoder = [("encoder", "vit_encoder", view) for l in range(n_layers) for view in layer(l)]
    return image + encoder + [("head", "vit_head", view) for view in steps_of("head.")]


def vision_step(page: str, view: dict) -> str | None:
    """The full name of the step a ViT slide shows (`vision_slides`), or None for one that shows none."""
    leaf = view.get("step")
    if leaf is None:
        return None
    if page == "vit_encoder":
        block = "" if leaf[:-1] in ("ln", "add") else ("attn." if view["section"] == 1 else "ffn.")
        return f"enc.{view.get('layer', 0)}.{block}{leaf}"
    return f"{'img' if page == 'vit_embed' else 'head'}.{leaf}"


def slide_at(slides: list, page: str, shown: dict) -> int | None:
    """The position of the slide a page shows (shown: what its widgets show, defaults too), or None."""
    return next((i for i, (_, at, view) in enumerate(slides)
                 if at == page and all(shown.get(key) == value for key, value in view.items())), None)
