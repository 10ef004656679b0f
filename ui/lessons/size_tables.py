"""The sizes page's tables: parameters per part of the model, multiply-adds per step (pure: no Streamlit). The
engine counts (engine/sizes.py); these put its numbers in columns, with the catalog's words."""
from __future__ import annotations

from engine import sizes

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


def product_table(t, products: dict) -> dict[str, list]:
    """A row per step that multiplies two matrices: its name, its operands' shapes, its multiply-adds."""
    return {t("sizes.col.step"): list(products),
            t("sizes.col.operands"): [f"{p.a_shape} · {p.b_shape}" for p in products.values()],
            t("sizes.col.multiply_adds"): [count(p.multiply_adds) for p in products.values()]}


def product_totals(t, products: dict) -> str:
    """Multiply-adds per stack and in all, in a sentence."""
    totals = sizes.totals_by_stack(products)
    parts = [t(f"sizes.stack.{stack}", n=count(totals[stack])) for stack in STACKS if stack in totals]
    return t("sizes.products_total", parts=t("sizes.list_separator").join(parts), n=count(totals["all"]))
