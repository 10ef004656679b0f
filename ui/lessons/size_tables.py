"""The sizes page's tables: parameters per part of the model, multiply-adds per step (pure: no Streamlit). The
engine counts (engine/sizes.py); these put its numbers in columns, with the catalog's words."""
from __future__ import annotations

from engine import sizes
from engine.params import param_shapes

from ui.core.labels import one_embedding_table

STACKS = ("enc", "dec", "logits")  # where a product sits (sizes.stack_of), in the pass's order


def count(n: int) -> str:
    return f"{n:,}"


def part_key(part: str, config) -> str:
    """The catalog key of a part's name; the embedding table and the output layer are worded by what they share."""
    if part.startswith("embed.") and one_embedding_table(config):
        return "sizes.part.embed.shared"
    if part == "unembed" and config.tied_output:
        return "sizes.part.unembed.tied"
    return f"sizes.part.{part}"


def parameter_table(t, config, vocab_size: int) -> dict[str, list]:
    """A row per part: its name, the parameters of one copy, how many copies, and the total with this model's
    vocabulary and with the paper's; then the sums."""
    ours, papers = sizes.part_counts(config, vocab_size), sizes.part_counts(config, sizes.PAPER_VOCABULARY_SIZE)
    column = {"part": t("sizes.col.part"), "each": t("sizes.col.each"), "copies": t("sizes.col.copies"),
              "ours": t("sizes.col.total", v=count(vocab_size)),
              "paper": t("sizes.col.total", v=count(sizes.PAPER_VOCABULARY_SIZE))}
    rows = [(t(part_key(part, config)), count(p.each), str(p.copies), count(p.total), count(papers[part].total))
            for part, p in ours.items()]
    rows.append((t("sizes.all"), "", "", count(sizes.parameter_count(config, vocab_size)),
                 count(sizes.parameter_count(config, sizes.PAPER_VOCABULARY_SIZE))))
    return {name: [row[i] for row in rows] for i, name in enumerate(column.values())}


def signed(n: int) -> str:
    return f"{n:+,}".replace("-", "−")


def torch_note(t, config, vocab_size: int) -> str:
    """What PyTorch's counterpart is (engine.sizes, above torch_differences), before the table that compares it."""
    tables = sum(1 for name in param_shapes(config, vocab_size) if name.startswith("embed."))
    return t("sizes.torch.text", reference=_torch_reference(config), d_model=config.d_model, tables=tables)


def _torch_reference(config) -> str:
    """PyTorch's counterpart of the model's layers, as code."""
    c = config
    if c.decoder_only:
        return (f"nn.TransformerEncoder(nn.TransformerEncoderLayer({c.d_model}, {c.n_heads}, {c.d_ff}), "
                f"{c.depth('dec')}, norm=nn.LayerNorm({c.d_model}))")
    return f"nn.Transformer({c.d_model}, {c.n_heads}, {c.depth('enc')}, {c.depth('dec')}, {c.d_ff})"


def torch_table(t, config, vocab_size: int) -> dict[str, list]:
    """PyTorch's sum(p.numel()), a row per item this model counts beyond it (engine.sizes.torch_difference_parts)
    with its parameters per block and its blocks where they do not depend on the vocabulary, and this model's count:
    columns as parameter_table's."""
    vocabularies = (vocab_size, sizes.PAPER_VOCABULARY_SIZE)
    ours, papers = (sizes.torch_difference_parts(config, v) for v in vocabularies)
    c = config
    words = {"hd_k": c.n_heads * c.d_k, "hd_v": c.n_heads * c.d_v, "d_model": c.d_model}
    rows = [(t("sizes.torch.count"), "", "", *(count(sizes.torch_count(c, v)) for v in vocabularies))]
    for item in dict.fromkeys([*ours, *papers]):
        part, paper = ours.get(item, sizes.Part(0, 0)), papers.get(item, sizes.Part(0, 0))
        each, copies = (signed(part.each), str(part.copies)) if part == paper else ("", "")  # V's items: per column
        rows.append((t(f"sizes.torch.{item}", **words), each, copies, signed(part.total), signed(paper.total)))
    rows.append((t("sizes.torch.ours"), "", "", *(count(sizes.parameter_count(c, v)) for v in vocabularies)))
    columns = [t("sizes.col.part"), t("sizes.col.each"), t("sizes.col.copies"),
               *(t("sizes.col.total", v=count(v)) for v in vocabularies)]
    return {name: [row[i] for row in rows] for i, name in enumerate(columns)}


def transformers_table(t, config, vocab_size: int) -> dict[str, list]:
    """A real translator's count as transformers' MarianMTModel.num_parameters() gives it, each item this app counts
    otherwise (marian/sizes.py), and this app's count: columns as parameter_table's first and last."""
    from marian.sizes import transformers_count, transformers_differences  # marian/ is loaded with a translator

    differences = transformers_differences(config, vocab_size)
    rows = [(t("sizes.marian.theirs"), count(transformers_count(config, vocab_size))),
            *((t(f"sizes.marian.{item}", max_len=config.max_len, d_model=config.d_model), signed(n))
              for item, n in differences.items()),
            (t("sizes.torch.ours"), count(sizes.parameter_count(config, vocab_size)))]
    columns = [t("sizes.col.part"), t("sizes.col.total", v=count(vocab_size))]
    return {name: [row[i] for row in rows] for i, name in enumerate(columns)}


def product_table(t, products: dict) -> dict[str, list]:
    """A row per step that multiplies two matrices: its name, its operands' shapes, its multiply-adds."""
    return {t("sizes.col.step"): list(products),
            t("sizes.col.operands"): [f"{p.a_shape} · {p.b_shape}" for p in products.values()],
            t("sizes.col.multiply_adds"): [count(p.multiply_adds) for p in products.values()]}


def product_totals(t, products: dict) -> str:
    """Multiply-adds per stack and in all, in a sentence."""
    totals = sizes.totals_by_stack(products)
    parts = [t(f"sizes.stack.{stack}", n=count(totals[stack])) for stack in STACKS if stack in totals]
    return t("sizes.products_total", parts=t("list.separator").join(parts), n=count(totals["all"]))
