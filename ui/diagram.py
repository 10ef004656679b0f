"""The architecture as a Graphviz DOT graph, labelled with the current sizes (pure).

It holds sizes and words of the app only, not the sentence (the overview shows the tokens above it): the browser lays
a changed graph out again, about 400 ms, so a new sentence of the same length leaves it as it is."""


def architecture(t, trace) -> str:
    c = trace.model.config
    n, m, d = len(trace.src_tokens), len(trace.tgt_tokens), c.d_model

    def node(name, page, shape=""):
        return f'{name} [label="{t("page." + page)}{shape}"];'

    lines = [
        'digraph G { rankdir=BT; node [shape=box, style="rounded,filled", fillcolor="#eef4fb", fontname="Noto Sans CJK SC"];',
        f'src_in [label="{t("overview.src")}", shape=plaintext, fillcolor=white];',
        f'tgt_in [label="{t("overview.tgt")}", shape=plaintext, fillcolor=white];',
        node("tokens", "tokens", f"\\n{n}×{d}"), node("pos", "positional", f"\\n{n}×{d}"),
        f'subgraph cluster_enc {{ label="{t("section.encoder")} × {c.n_layers}"; style=dashed;',
        node("attn", "attention", f"\\n{c.n_heads} × {n}×{n}"), node("add1", "add_norm"), node("ffn", "ffn",
                                                                                              f"\\n{n}×{c.d_ff}"),
        node("add2", "add_norm"), "}",
        node("dtok", "decoder_input", f"\\n{m}×{d}"),
        f'subgraph cluster_dec {{ label="{t("section.decoder")} × {c.n_layers}"; style=dashed;',
        node("mask", "masked_attention", f"\\n{c.n_heads} × {m}×{m}"), node("dadd1", "add_norm"),
        node("cross", "cross_attention", f"\\n{c.n_heads} × {m}×{n}"), node("dadd2", "add_norm"),
        node("dffn", "ffn"), node("dadd3", "add_norm"), "}",
        node("out", "output", f"\\n{m}×{len(trace.model.vocab)}"),
        "src_in -> tokens -> pos -> attn -> add1 -> ffn -> add2;",
        "tgt_in -> dtok -> mask -> dadd1 -> cross -> dadd2 -> dffn -> dadd3 -> out;",
        "add2 -> cross;", "}",
    ]
    return "\n".join(lines)

