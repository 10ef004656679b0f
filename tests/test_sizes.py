"""The model's sizes: parameter counts equal PyTorch's sum(p.numel()) for the same modules, and each step's
multiply-adds equal hand-computed counts and PyTorch's FLOP counter (2 FLOPs a multiply-add)."""
import itertools

import pytest
import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

import engine
from engine import checkpoint, sizes
from engine.config import NEWER_FIELDS, parse_field
from engine.params import param_shapes
from engine.presets import configure
from test_train import archive


def attention(c):
    return nn.ModuleList([nn.Linear(c.d_model, c.n_heads * c.d_k, bias=c.attn_bias),
                          nn.Linear(c.d_model, c.n_heads * c.d_k, bias=c.attn_bias),
                          nn.Linear(c.d_model, c.n_heads * c.d_v, bias=c.attn_bias),
                          nn.Linear(c.n_heads * c.d_v, c.d_model, bias=c.attn_bias)])


def feed_forward(c):
    return nn.Sequential(nn.Linear(c.d_model, c.d_ff, bias=c.ffn_bias), nn.Linear(c.d_ff, c.d_model, bias=c.ffn_bias))


def hand_built(c, vocab_size):
    """The model of config c from torch's Linear, LayerNorm and Embedding, the shared and tied tables shared."""
    model = nn.Module()
    model.src = nn.Embedding(vocab_size, c.d_model)
    model.tgt = model.src if c.shared_embeddings else nn.Embedding(vocab_size, c.d_model)
    if c.pos_encoding == "learned":
        model.pos = nn.Embedding(c.max_len, c.d_model)
    model.enc = nn.ModuleList([nn.ModuleList([attention(c), feed_forward(c), nn.LayerNorm(c.d_model),
                                              nn.LayerNorm(c.d_model)]) for _ in range(c.n_layers)])
    model.dec = nn.ModuleList([nn.ModuleList([attention(c), attention(c), feed_forward(c)]
                                             + [nn.LayerNorm(c.d_model) for _ in range(3)])
                               for _ in range(c.n_layers)])
    if c.norm_placement == "pre":
        model.final = nn.ModuleList([nn.LayerNorm(c.d_model), nn.LayerNorm(c.d_model)])
    model.out = nn.Linear(c.d_model, vocab_size)
    if c.tied_output:
        model.out.weight = model.tgt.weight
    return model


def torch_count(module) -> int:
    return sum(p.numel() for p in module.parameters())  # a shared parameter once


CONFIGS = [
    ("paper", {}),
    ("hello-world", {}),
    ("paper", dict(d_model=16, n_heads=4, d_k=5, d_v=3, d_ff=24, n_layers=2, attn_bias=True, tied_output=False)),
    ("paper", dict(d_model=8, n_heads=2, d_ff=12, n_layers=3, shared_embeddings=False, ffn_bias=False,
                   pos_encoding="learned", max_len=20, norm_placement="pre")),
    ("hello-world", dict(n_layers=2, shared_embeddings=False, tied_output=True)),
]


@pytest.mark.parametrize("preset, overrides", CONFIGS)
@pytest.mark.parametrize("vocab_size", [11, 37_000])
def test_the_count_equals_torchs(preset, overrides, vocab_size):
    config = configure(preset, **overrides)
    expected = torch_count(hand_built(config, vocab_size))
    assert sizes.parameter_count(config, vocab_size) == expected
    assert sum(sizes.block_counts(config, vocab_size).values()) == expected
    assert sum(part.total for part in sizes.part_counts(config, vocab_size).values()) == expected


@pytest.mark.parametrize("placement", ["post", "pre"])
def test_a_layer_counts_as_torchs_transformer_layers(placement):
    """nn.TransformerEncoderLayer / DecoderLayer: the paper's layers with PyTorch's attention biases (d_k = d_model
    / h)."""
    c = configure("paper", d_model=64, n_heads=4, d_ff=96, n_layers=3, norm_placement=placement, attn_bias=True)
    parts = sizes.part_counts(c, 100)
    enc = nn.TransformerEncoderLayer(c.d_model, c.n_heads, c.d_ff, norm_first=placement == "pre")
    dec = nn.TransformerDecoderLayer(c.d_model, c.n_heads, c.d_ff, norm_first=placement == "pre")
    assert parts["enc.attn"].each + parts["enc.ffn"].each + parts["enc.ln"].each == torch_count(enc)
    assert sum(parts[f"dec.{p}"].each for p in ("self_attn", "cross_attn", "ffn", "ln")) == torch_count(dec)
    assert {p.copies for name, p in parts.items() if name.startswith(("enc.", "dec."))} == \
        ({3, 1} if placement == "pre" else {3})
    if placement == "pre":  # nn.Transformer has a final LayerNorm after each stack, as pre-norm does
        whole = nn.Transformer(c.d_model, c.n_heads, c.n_layers, c.n_layers, c.d_ff, batch_first=True)
        stacks = sum(p.total for name, p in parts.items() if name.startswith(("enc.", "dec.")))
        assert stacks == torch_count(whole)


def test_the_paper_base_model_is_about_65_million():
    count = sizes.parameter_count(engine.Config(), sizes.PAPER_VOCABULARY_SIZE)
    assert count == 63_082_632  # 44,101,632 in the layers, 37,000 x 512 in the shared table, 37,000 output biases
    assert abs(count - sizes.PAPER_BASE_PARAMETERS) / sizes.PAPER_BASE_PARAMETERS < 0.03


def test_parts_and_blocks():
    c = configure("paper", n_layers=2, norm_placement="pre", tied_output=False)
    assert sizes.block_of("enc.1.attn.W_Q") == "enc.1.attn"
    assert sizes.block_of("dec.0.ln3.beta") == "dec.0.ln3"
    assert sizes.block_of("embed.src") == "embed.src"
    assert sizes.part_of("dec.1.ln2") == "dec.ln"
    assert sizes.part_of("enc.ln_final") == "enc.ln_final"
    parts = sizes.part_counts(c, 10)
    assert parts["dec.ln"] == sizes.Part(3 * 2 * 512, 2)
    assert parts["enc.ln_final"] == sizes.Part(2 * 512, 1)
    assert parts["unembed"] == sizes.Part(512 * 10 + 10, 1)


def test_multiply_adds_by_hand():
    assert sizes.multiply_adds("proj", (5, 4), (2, 4, 3)) == 2 * 5 * 4 * 3
    assert sizes.multiply_adds("linear", (5, 6), (6, 4)) == 5 * 6 * 4
    assert sizes.multiply_adds("linear", (3, 4), (11, 4)) == 3 * 4 * 11  # the tied output layer, E transposed
    assert sizes.multiply_adds("scores", (2, 5, 3), (2, 3, 7)) == 2 * 5 * 7 * 3  # Q K^T: K^T is (h, d_k, m)
    assert sizes.multiply_adds("weighted", (2, 5, 7), (2, 7, 3)) == 2 * 5 * 7 * 3
    assert sizes.multiply_adds("softmax", (2, 5, 7), (2, 5, 7)) == 0


def test_the_worked_example_step_by_step():
    """'Hello World' (n = 2) into SOS hola mundo (3) in the 4-dimensional model: h = 2, d_k = d_v = 3, d_ff = 8."""
    trace = engine.preset("hello-world").run("Hello World", "Hola Mundo")
    products = sizes.pass_products(trace)
    expected = {"enc.0.attn.q": 2 * 2 * 4 * 3, "enc.0.attn.scores": 2 * 2 * 2 * 3, "enc.0.attn.heads": 2 * 2 * 2 * 3,
                "enc.0.attn.out": 2 * 6 * 4, "enc.0.ffn.hidden": 2 * 4 * 8, "dec.0.self_attn.scores": 2 * 3 * 3 * 3,
                "dec.0.cross_attn.k": 2 * 2 * 4 * 3, "dec.0.cross_attn.scores": 2 * 3 * 2 * 3,
                "logits": 3 * 4 * len(trace.model.vocab)}
    assert {name: products[name].multiply_adds for name in expected} == expected
    assert products["enc.0.attn.scores"][:2] == ((2, 2, 3), (2, 3, 2))  # Q (h, n, d_k) times K^T (h, d_k, n)
    assert len(products) == 8 + 14 + 1  # 6 + 2 in the encoder layer, 6 + 6 + 2 in the decoder layer, the logits
    totals = sizes.totals_by_stack(products)
    assert totals["all"] == sum(p.multiply_adds for p in products.values()) == \
        totals["enc"] + totals["dec"] + totals["logits"]


@pytest.mark.parametrize("preset, overrides", CONFIGS[1:4])
def test_multiply_adds_equal_torchs_flop_count(preset, overrides):
    """Each product done again in torch with the operands' shapes: FlopCounterMode counts 2 FLOPs a multiply-add."""
    trace = engine.preset(preset, **overrides).run("the cat sat", "el gato")
    for name, product in sizes.pass_products(trace).items():
        a, b = torch.ones(product.a_shape), torch.ones(product.b_shape)
        with FlopCounterMode(display=False) as counter:
            a @ b  # the operands as multiplied: K^T, E^T
        assert counter.get_total_flops() == 2 * product.multiply_adds, name


def test_each_stack_has_its_own_depth_or_n_layers():
    config = engine.Config(n_layers=2)
    assert (config.depth("enc"), config.depth("dec")) == (2, 2)
    config = config.replace(n_dec_layers=5)
    assert (config.depth("enc"), config.depth("dec")) == (2, 5)
    assert config.replace(n_layers=4).depth("enc") == 4 and config.replace(n_layers=4).depth("dec") == 5
    with pytest.raises(ValueError, match="n_enc_layers must be between 1 and 64"):
        engine.Config(n_enc_layers=0)
    with pytest.raises(ValueError, match="n_dec_layers must be a whole number"):
        engine.Config(n_dec_layers=2.0)
    assert parse_field("n_dec_layers", "3") == 3


def test_a_checkpoint_written_before_the_stacks_had_their_own_depths_loads():
    """A file whose config lacks the settings added since (NEWER_FIELDS) loads with their defaults."""
    model = engine.trained()
    older = {k: v for k, v in model.config.as_dict().items() if k not in NEWER_FIELDS}
    loaded = checkpoint.load(archive(model, meta={"config": older}))
    assert set(older) < set(model.config.as_dict()) and loaded.config == model.config
    assert loaded.config.n_enc_layers is None and loaded.config.depth("dec") == loaded.config.n_layers


def torch_counterpart(c, vocab_size):
    """PyTorch's counterpart of config c (engine/sizes.py, above torch_differences), on the meta device: shapes only.
    nn.Transformer for the encoder-decoder model; for a decoder-only one, a stack of nn.TransformerEncoderLayer (run
    with a causal mask, as test_decoder_only does) with a final LayerNorm; an nn.Embedding per embedding table."""
    meta, pre = {"device": "meta"}, c.norm_placement == "pre"
    model = nn.Module()
    if c.decoder_only:
        layer = nn.TransformerEncoderLayer(c.d_model, c.n_heads, c.d_ff, norm_first=pre, **meta)
        model.body = nn.TransformerEncoder(layer, c.depth("dec"), norm=nn.LayerNorm(c.d_model, **meta),
                                           enable_nested_tensor=False)
    else:
        model.body = nn.Transformer(c.d_model, c.n_heads, c.depth("enc"), c.depth("dec"), c.d_ff, norm_first=pre,
                                    **meta)
    tables = [name for name in param_shapes(c, vocab_size) if name.startswith("embed.")]
    model.embeddings = nn.ModuleList(nn.Embedding(vocab_size, c.d_model, **meta) for _ in tables)
    return model


def test_the_paper_models_total_beside_pytorchs():
    """nn.Transformer(512, 8, 6, 6, 2048) and the 37,000 x 512 embedding: 63,084,544; the paper model 63,082,632,
    by its output bias (+37,000), PyTorch's two final LayerNorms, which it keeps in post-norm (γ and β, -2 x 1,024),
    and PyTorch's attention biases b_Q, b_K, b_V, b_O, which the paper's formulas do not have (-4 x 512 in each of
    6 + 2 x 6 attention blocks)."""
    c, v = sizes.PAPER_BASE_CONFIG, sizes.PAPER_VOCABULARY_SIZE
    assert c == engine.PRESETS["paper"] and not c.attn_bias
    assert torch_count(torch_counterpart(c, v)) == sizes.torch_count(c, v) == 63_084_544
    assert sizes.parameter_count(c, v) == 63_082_632
    assert sizes.torch_difference_parts(c, v) == {"output_bias": sizes.Part(37_000, 1),
                                                  "final_norms": sizes.Part(-2 * 512, 2),
                                                  "attention_biases": sizes.Part(-4 * 512, 6 + 2 * 6)}
    assert sizes.torch_differences(c, v) == {"output_bias": 37_000, "final_norms": -2_048, "attention_biases": -36_864}
    with_biases = c.replace(attn_bias=True)  # PyTorch's attention: only the output bias and the final norms differ
    assert sizes.torch_differences(with_biases, v) == {"output_bias": 37_000, "final_norms": -2_048}


OPTIONS = {"decoder_only": (False, True), "shared_embeddings": (True, False), "tied_output": (True, False),
           "attn_bias": (True, False), "ffn_bias": (True, False), "norm_placement": ("post", "pre"),
           "pos_encoding": ("sinusoidal", "learned"), "d_k": (4, 3)}  # d_k = 4: d_model / h


def test_the_difference_from_pytorch_holds_for_every_option():
    """Every combination of the sidebar's options that change a count: PyTorch's sum(p.numel()) is the model's count
    less the items, and each item is there exactly when its option makes it."""
    wrong = []
    for values in itertools.product(*OPTIONS.values()):
        options = dict(zip(OPTIONS, values))
        c = configure("paper", d_model=8, n_heads=2, d_ff=12, n_layers=2, n_dec_layers=3, max_len=10, **options)
        items = sizes.torch_differences(c, 11)
        expected_items = {"output_bias", "final_norms"} - ({"final_norms"} if c.norm_placement == "pre" else set())
        expected_items |= {item for item, there in (("output_weights", not c.tied_output),
                                                    ("learned_positions", c.pos_encoding == "learned"),
                                                    ("attention_biases", not c.attn_bias),
                                                    ("ffn_biases", not c.ffn_bias),
                                                    ("head_widths", c.d_k != 4)) if there}
        if torch_count(torch_counterpart(c, 11)) != sizes.torch_count(c, 11) or set(items) != expected_items:
            wrong.append((options, items))
    assert not wrong, wrong
