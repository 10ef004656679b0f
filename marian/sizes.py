"""A Marian model's parameter count beside transformers' MarianMTModel.num_parameters(), the difference item by item.

transformers keeps final_logits_bias as a buffer, not a parameter, so it does not count the output bias the engine
does (b_out, V numbers); and it keeps each stack's sinusoid as an nn.Embedding's weight (frozen, computed, never
learned), so it counts 2 max_len x d_model numbers the engine computes and does not count."""
from __future__ import annotations

from engine.config import Config
from engine.sizes import parameter_count


def transformers_differences(config: Config, vocab_size: int) -> dict[str, int]:
    """What the engine counts beyond num_parameters(), item by item (negative: what transformers counts and it does
    not): parameter_count minus their sum is num_parameters()."""
    return {"output_bias": vocab_size, "position_tables": -2 * config.max_len * config.d_model}


def transformers_count(config: Config, vocab_size: int) -> int:
    """MarianMTModel.num_parameters() of the model (see transformers_differences)."""
    return parameter_count(config, vocab_size) - sum(transformers_differences(config, vocab_size).values())
