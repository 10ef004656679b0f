"""Backpropagation by hand: the engine's gradients of the training loss equal PyTorch autograd (float64) to 1e-8
relative for every parameter, and central finite differences for the options PyTorch has no layer for (the
blog's LayerNorm, the naive softmax, a numeric divisor, learned positions, untied tables, label smoothing,
an ignored id, dropout with its masks fixed).

The torch model is built from the reference helpers of test_torch_reference.py (every engine parameter is
loaded into torch layers, strictly); the engine's gradients are mapped to torch's layout through the very same
helpers, by loading them as if they were parameters, so no layout is written twice.
"""
import json
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from conftest import examples
from test_torch_reference import SUBLAYERS, cases, final_norm, layer_output, perturbed, torch_input, torch_layer

import engine
from engine.__main__ import DEFAULT_SOURCE, main
from engine.backward import backward_formula, loss_and_grads
from engine.explain import Writing
from engine.kinds import KINDS
from engine.loss import cross_entropy, teacher_forcing
from engine.params import param_shapes
from engine.presets import PAPER_VOCABULARY

RTOL = 1e-8  # engine vs torch, relative to the largest gradient of the same parameter
SMALL = dict(d_model=16, n_heads=4, d_ff=24, n_layers=2)
SRC, TGT = "the cat sat on the mat", "el gato se sentó en la alfombra"
GATO = PAPER_VOCABULARY.index("gato")  # the second target of TGT


# ---- PyTorch autograd on the same model ----------------------------------------------------------------------

class TorchModel:
    """The engine model in torch: its layers (test_torch_reference), the embeddings, PE and output layer around."""

    def __init__(self, model):
        c, P = model.config, model.params
        self.model = model
        self.leaves = {name: torch.tensor(P[name], requires_grad=True)
                       for name in ("embed.src", "embed.tgt", "unembed.W", "unembed.b") if name in P}
        self.layers = {stack: [torch_layer(model, stack, l) for l in range(c.depth(stack))] for stack in SUBLAYERS}
        self.norms = {stack: final_norm(model, stack) for stack in SUBLAYERS}
        self.no_embedding = model.with_params({"embed.src": np.zeros(P["embed.src"].shape)})  # torch_input -> PE
        self.outputs = {}  # engine step name -> torch tensor, for the step gradients

    def input(self, table, ids):
        scale = math.sqrt(self.model.config.d_model)
        return self.leaves[table][list(ids)] * scale + torch_input(self.no_embedding, ids)

    def logits(self, src_ids, dec_ids):
        m, tables = self.model, self.model.embed_names
        x = self._keep("src.input", self.input(tables["src"], src_ids)[None])
        for l, layer in enumerate(self.layers["enc"]):
            x = self._keep(layer_output(m, "enc", l), layer(x))
        memory = self._keep("enc.out", self.norms["enc"](x))
        mask = torch.nn.Transformer.generate_square_subsequent_mask(len(dec_ids), dtype=torch.float64)
        y = self._keep("tgt.input", self.input(tables["tgt"], dec_ids)[None])
        for l, layer in enumerate(self.layers["dec"]):
            y = self._keep(layer_output(m, "dec", l), layer(y, memory, tgt_mask=mask, tgt_is_causal=True))
        y = self._keep("dec.out", self.norms["dec"](y))[0]
        W = self.leaves[tables["tgt"]].T if m.config.tied_output else self.leaves["unembed.W"]
        return self._keep("logits", y @ W + self.leaves["unembed.b"])

    def _keep(self, name, tensor):
        tensor.retain_grad()
        self.outputs[name] = tensor
        return tensor

    def loss_and_grads(self, src_ids, dec_ids, targets, label_smoothing=0.0):
        """The loss over the words an output may be: the engine masks <unk>'s logit, torch leaves its column out."""
        words = [i for i in range(len(self.model.vocab)) if i not in self.model.never_next]
        logits = self.logits(src_ids, dec_ids)[:, words]
        loss = F.cross_entropy(logits, torch.tensor([words.index(t) for t in targets]), label_smoothing=label_smoothing)
        loss.backward()
        return loss.item(), self.torch_layout_grads()

    def torch_layout_grads(self):
        """Every torch parameter's gradient by a unique name."""
        grads = {name: leaf.grad.numpy() for name, leaf in self.leaves.items()}
        for stack in SUBLAYERS:
            for l, layer in enumerate(self.layers[stack]):
                grads.update({f"{stack}.{l}/{n}": p.grad.numpy() for n, p in layer.named_parameters()})
            grads.update({f"{stack}.norm/{n}": p.grad.numpy() for n, p in self.norms[stack].named_parameters()})
        return grads


def in_torch_layout(model, grads):
    """The engine's gradients laid out as torch's parameters, by loading them with the reference's own helpers."""
    as_params = model.with_params(grads)
    out = {name: grads[name] for name in ("embed.src", "embed.tgt", "unembed.W", "unembed.b") if name in grads}
    for stack in SUBLAYERS:
        for l in range(model.config.depth(stack)):
            state = torch_layer(as_params, stack, l).state_dict()
            out.update({f"{stack}.{l}/{n}": v.numpy() for n, v in state.items()})
        out.update({f"{stack}.norm/{n}": v.numpy() for n, v in final_norm(as_params, stack).state_dict().items()})
    return out


def assert_grads_match_torch(model, src, tgt, label_smoothing=0.0, result=None):
    """Every parameter's gradient, the gradients of the layer outputs and the loss equal torch autograd's.

    `result` is the engine's for `model` unless given (the guard test gives another model's)."""
    result = result or loss_and_grads(model, src, tgt, label_smoothing=label_smoothing)
    reference = TorchModel(model)
    loss, expected = reference.loss_and_grads(result.src_ids, result.dec_input_ids, result.target_ids, label_smoothing)
    actual = in_torch_layout(model, result.grads)
    assert set(actual) == set(expected)
    assert sum(v.size for v in actual.values()) == sum(v.size for v in model.params.values())  # none left out
    # A gradient that is 0 in exact arithmetic (b_K; the query path of a cross-attention over one memory token)
    # is rounding noise in torch: the tolerance never drops below 1e-6 of the largest gradient of the model.
    floor = 1e-6 * max(np.max(np.abs(value)) for value in expected.values())
    for name, value in expected.items():
        scale = max(np.max(np.abs(value)), floor)
        np.testing.assert_allclose(actual[name], value, rtol=RTOL, atol=RTOL * scale, err_msg=name)
    for name, tensor in reference.outputs.items():
        step_grad = tensor.grad[0] if tensor.grad.ndim == 3 else tensor.grad
        np.testing.assert_allclose(result.backward[f"grad.{name}"], step_grad.numpy(), rtol=RTOL,
                                   atol=RTOL * float(step_grad.abs().max()), err_msg=f"grad.{name}")
    assert result.loss == pytest.approx(loss, rel=1e-12)


# ---- finite differences ------------------------------------------------------------------------------------------

def loss_only(model, src, tgt, *, label_smoothing=0.0, ignore_id=None, dropout=0.0, seed=0):
    trace = model.run(src, tgt, dropout=dropout, seed=seed)
    _, targets = teacher_forcing(model, trace.tgt_ids[1:])
    return cross_entropy(trace["masked_logits"], targets, label_smoothing=label_smoothing, ignore_id=ignore_id)[0]


def coordinates(grad, rng, count=3):
    """The coordinate of the largest gradient and `count - 1` random ones (most embedding rows are unused)."""
    randoms = rng.choice(grad.size, min(count - 1, grad.size), replace=False)
    flat = {int(np.argmax(np.abs(grad)))} | set(randoms.tolist())
    return [np.unravel_index(i, grad.shape) for i in sorted(flat)]


def finite_difference(model, name, index, src, tgt, h=1e-5, **options):
    def loss_at(delta):
        value = np.array(model.params[name])
        value[index] += delta
        return loss_only(model.with_params({name: value}), src, tgt, **options)
    return (loss_at(h) - loss_at(-h)) / (2 * h)


def assert_grads_match_finite_differences(model, src, tgt, **options):
    """Central differences on a few coordinates of every parameter. Their own error is about 1e-10 of the
    largest gradient (rounding over h, and h^2), hence the absolute floor."""
    result = loss_and_grads(model, src, tgt, **options)
    rng = np.random.default_rng(0)
    scale = max(np.max(np.abs(g)) for g in result.grads.values())
    for name, grad in result.grads.items():
        for index in coordinates(grad, rng):
            numeric = finite_difference(model, name, index, src, tgt, **options)
            assert grad[index] == pytest.approx(numeric, rel=1e-6, abs=3e-9 * scale), (name, index)


# ---- the tests: PyTorch --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("activation", ["relu", "gelu", "swish"])
@pytest.mark.parametrize("placement", ["post", "pre"])
@settings(max_examples=examples(20, large=60), deadline=None)  # a pull request's, or the large profile's
@given(case=cases(), shared=st.booleans(), tied=st.booleans(), smoothing=st.sampled_from([0.0, 0.1]))
def test_random_sizes_match_torch_autograd(placement, activation, case, shared, tied, smoothing):
    sizes, src, tgt, seed = case
    model = perturbed(engine.preset("paper", attn_bias=True, seed=seed, norm_placement=placement, activation=activation,
                                    shared_embeddings=shared, tied_output=tied, **sizes), seed)
    assert_grads_match_torch(model, " ".join(src), " ".join(tgt), label_smoothing=smoothing)


def test_paper_base_sizes_match_torch_autograd():
    model = perturbed(engine.preset("paper", attn_bias=True), seed=3)
    c = model.config
    assert (c.d_model, c.n_heads, c.d_ff, c.n_layers) == (512, 8, 2048, 6)
    assert_grads_match_torch(model, "hello world how are you", "hola mundo cómo estás")


def test_the_torch_comparison_sees_a_small_error():
    """Guard against a vacuous reference: the gradients of the model with one beta moved by 1e-7 fail."""
    model = perturbed(engine.preset("paper", attn_bias=True, **SMALL), seed=4)
    nudged = model.with_params({"dec.1.ln2.beta": model.params["dec.1.ln2.beta"] + 1e-7})
    assert_grads_match_torch(model, SRC, TGT)
    with pytest.raises(AssertionError, match="Not equal to tolerance"):
        assert_grads_match_torch(model, SRC, TGT, result=loss_and_grads(nudged, SRC, TGT))


# ---- the tests: finite differences ---------------------------------------------------------------------------------

FD_CASES = {
    "hello-world preset (blog LayerNorm, divisor 30, printed PE, untied output)": ("hello-world", {}, {}),
    "blog LayerNorm, naive softmax, divisor 2.5, learned PE, untied, pre-norm, GELU": (
        "paper", dict(SMALL, layer_norm="blog", softmax="naive", attn_divisor=2.5, pos_encoding="learned",
                      shared_embeddings=False, tied_output=False, norm_placement="pre", activation="gelu"), {}),
    "output tied to a separate target table, no biases, no embedding scale, label smoothing": (
        "paper", dict(SMALL, shared_embeddings=False, attn_bias=False, ffn_bias=False, embed_scale=False,
                      pos_encoding="blog"), dict(label_smoothing=0.1)),
    "paper defaults, an ignored target id and label smoothing": (
        "paper", SMALL, dict(label_smoothing=0.1, ignore_id=GATO)),
    "blog LayerNorm with post-norm and eps 0.1, no PE": (
        "paper", dict(SMALL, layer_norm="blog", eps=0.1, pos_encoding="none", n_layers=1), {}),
    "no residual connections, pre-norm": ("paper", dict(SMALL, residual=False, norm_placement="pre"), {}),
}


@pytest.mark.parametrize("name", FD_CASES)
def test_gradients_match_finite_differences(name):
    preset_name, overrides, options = FD_CASES[name]
    model = perturbed(engine.preset(preset_name, seed=5, **overrides), seed=5)
    src, tgt = ("Hello World", "hola mundo") if preset_name == "hello-world" else (SRC, TGT)
    assert_grads_match_finite_differences(model, src, tgt, **options)


def test_ignored_positions_add_nothing():
    model = perturbed(engine.preset("paper", attn_bias=True, **SMALL), seed=6)
    result = loss_and_grads(model, SRC, TGT, ignore_id=GATO)
    plain = loss_and_grads(model, SRC, TGT)
    position = result.target_ids.index(GATO)
    assert result.target_ids.count(GATO) == 1 and result.token_losses[position] == 0.0
    counted = [i for i, t in enumerate(result.target_ids) if t != GATO]
    assert result.loss == pytest.approx(np.mean(plain.token_losses[counted]), rel=1e-13)
    words = [i for i in range(len(model.vocab)) if i not in model.never_next]
    assert plain.token_losses[position] > 0 and np.all(plain.backward["grad.logits"][position, words] != 0.0)
    np.testing.assert_array_equal(plain.backward["grad.logits"][:, model.never_next], 0.0)  # <unk>: masked
    np.testing.assert_array_equal(result.backward["grad.logits"][position], 0.0)


def test_the_finite_difference_check_sees_a_wrong_gradient():
    model = perturbed(engine.preset("paper", attn_bias=True, **SMALL, layer_norm="blog"), seed=7)
    result = loss_and_grads(model, SRC, TGT)
    index = np.unravel_index(np.argmax(np.abs(result.grads["enc.0.ln1.gamma"])), (16,))
    numeric = finite_difference(model, "enc.0.ln1.gamma", index, SRC, TGT)
    assert result.grads["enc.0.ln1.gamma"][index] == pytest.approx(numeric, rel=1e-6)
    assert result.grads["enc.0.ln1.gamma"][index] * (1 + 1e-5) != pytest.approx(numeric, rel=1e-6)


# ---- the tests: the result object --------------------------------------------------------------------------------

def test_result_has_every_parameter_and_step_gradient():
    model = engine.preset("paper", **SMALL, pos_encoding="learned", shared_embeddings=False, tied_output=False)
    result = loss_and_grads(model, SRC, TGT)
    shapes = param_shapes(model.config, len(model.vocab))
    assert list(result.grads) == list(shapes)
    assert all(result.grads[name].shape == shape for name, shape in shapes.items())
    assert result.src_ids == list(result.trace.src_ids) and result.dec_input_ids == list(result.trace.tgt_ids)
    assert result.target_ids == result.dec_input_ids[1:] + [model.vocab.id("EOS")]
    assert result.token_losses.shape == (len(result.dec_input_ids),)
    assert result.loss == pytest.approx(np.mean(result.token_losses), rel=1e-13)
    names = list(result.backward)
    assert names[0] == "grad.logits" and "grad.probs" not in names
    steps = [s.name for s in result.trace.steps() if s.name not in ("vocab_mask", "masked_logits", "probs")]
    assert names == [f"grad.{n}" for n in reversed(steps)]  # every step reaches the loss, in backward order
    for name, grad in result.backward.items():
        assert grad.shape == result.trace[name[len("grad."):]].shape and not grad.flags.writeable
        assert np.all(np.isfinite(grad)), name


def test_masked_cells_get_exactly_zero_gradient():
    result = loss_and_grads(perturbed(engine.preset("paper", attn_bias=True, **SMALL), seed=8), SRC, TGT)
    n = len(result.dec_input_ids)
    future = np.triu(np.ones((n, n), dtype=bool), k=1)
    for l in range(2):
        masked = result.backward[f"grad.dec.{l}.self_attn.masked"]  # (h, n, n)
        assert np.all(np.isfinite(masked)) and np.all(masked[:, future] == 0.0)
        assert np.any(masked[:, ~future] != 0.0)


def test_non_finite_weights_give_nan_not_an_error(recwarn):
    model = engine.preset("hello-world")
    model = model.with_params({"embed.src": np.full(model.params["embed.src"].shape, np.inf)})
    result = loss_and_grads(model, "Hello World", "hola")
    assert math.isnan(result.loss) and np.all(np.isnan(result.grads["enc.0.attn.W_Q"]))
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_empty_target_predicts_eos_from_sos():
    model = engine.preset("paper", **SMALL)
    result = loss_and_grads(model, "hello", "")
    assert result.dec_input_ids == [model.vocab.id("SOS")] and result.target_ids == [model.vocab.id("EOS")]
    assert result.loss == pytest.approx(-np.log(result.trace["probs"][0, model.vocab.id("EOS")]), rel=1e-12)


def test_relu_derivative_at_zero_is_zero():
    model = engine.preset("paper", **SMALL, ffn_bias=False)
    zero_row = np.array(model.params["enc.0.ffn.W_1"])
    zero_row[:, 3] = 0.0  # hidden unit 3 is exactly 0 at every position
    result = loss_and_grads(model.with_params({"enc.0.ffn.W_1": zero_row}), SRC, TGT)
    assert np.all(result.backward["grad.enc.0.ffn.hidden"][:, 3] == 0.0)
    assert np.all(result.grads["enc.0.ffn.W_1"][:, 3] == 0.0)


def test_every_kind_has_a_backward_formula():
    result = loss_and_grads(engine.preset("hello-world"), "Hello World", "hola", dropout=0.1)
    kinds = {s.kind for s in result.trace.steps()}
    assert kinds == set(KINDS)  # a training pass makes every kind
    for step in result.trace.steps():
        assert backward_formula(step).count("{") == backward_formula(step).count("}")
    assert backward_formula(result.trace.step("enc.0.attn.scaled")) == r"\bar{S}_i = \frac{\bar{S}_i'}{30}"


@pytest.mark.parametrize("overrides", [{}, {"attn_bias": True, "ffn_bias": False}])
def test_a_backward_formula_has_a_bias_where_the_step_adds_one(overrides):
    """The hello-world model's attention has no biases, its feed-forward network has: a rule writes b̄ exactly where
    the step has a bias among its inputs, as its gradients do."""
    result = loss_and_grads(engine.preset("hello-world", **overrides), "Hello World", "hola")
    c = result.trace.model.config
    has_bias = {"enc.0.attn.q": c.attn_bias, "enc.0.attn.out": c.attn_bias, "enc.0.ffn.hidden": c.ffn_bias,
                "enc.0.ffn.out": c.ffn_bias, "logits": True}  # the output layer always has b_out
    for name, expected in has_bias.items():
        step = result.trace.step(name)
        bias = step.inputs[2] if len(step.inputs) == 3 else None
        assert (bias is not None) == expected and (bias in result.grads) == expected, name
        assert (r"\bar{b}" in backward_formula(step)) == expected, name


# ---- the tests: dropout ------------------------------------------------------------------------------------------

def dropout_names(n_layers):
    enc = [name for l in range(n_layers) for name in (f"enc.{l}.attn.dropout", f"enc.{l}.drop1", f"enc.{l}.drop2")]
    dec = [name for l in range(n_layers) for name in (f"dec.{l}.self_attn.dropout", f"dec.{l}.drop1",
                                                      f"dec.{l}.cross_attn.dropout", f"dec.{l}.drop2",
                                                      f"dec.{l}.drop3")]
    return ["src.dropout"] + enc + ["tgt.dropout"] + dec


@pytest.mark.parametrize("placement", ["post", "pre"])
def test_dropout_zero_is_the_plain_run(placement):
    model = perturbed(engine.preset("paper", attn_bias=True, **SMALL, norm_placement=placement), seed=9)
    plain, zero = model.run(SRC, TGT), model.run(SRC, TGT, dropout=0.0, seed=123)
    assert list(zero) == list(plain)
    assert all(np.array_equal(zero[name], plain[name]) for name in plain)
    a, b = loss_and_grads(model, SRC, TGT), loss_and_grads(model, SRC, TGT, dropout=0.0, seed=7)
    assert a.loss == b.loss and all(np.array_equal(a.grads[n], b.grads[n]) for n in a.grads)


@pytest.mark.parametrize("placement", ["post", "pre"])
def test_dropout_steps_apply_their_keep_mask(placement):
    model = perturbed(engine.preset("paper", attn_bias=True, **SMALL, norm_placement=placement), seed=10)
    trace = model.run(SRC, TGT, dropout=0.25, seed=1)
    steps = [s for s in trace.steps() if s.kind == "dropout"]
    assert [s.name for s in steps] == dropout_names(2)
    for step in steps:
        x, keep = trace[step.inputs[0]], step.meta["keep"]
        assert keep.shape == x.shape and keep.dtype == bool and step.meta["rate"] == 0.25
        np.testing.assert_array_equal(step.value, np.where(keep, x / 0.75, 0.0))
    assert trace.step("enc.0.attn.heads").inputs == ("enc.0.attn.dropout", "enc.0.attn.v")
    assert trace.step("dec.1.add3").inputs[1] == "dec.1.drop3"


def test_dropout_masks_follow_the_seed():
    model = engine.preset("paper", **SMALL)
    masks = {seed: [s.meta["keep"] for s in model.run(SRC, TGT, dropout=0.5, seed=seed).steps() if s.kind == "dropout"]
             for seed in (1, 2)}
    again = [s.meta["keep"] for s in model.run(SRC, TGT, dropout=0.5, seed=1).steps() if s.kind == "dropout"]
    assert all(np.array_equal(a, b) for a, b in zip(masks[1], again))
    assert sum(not np.array_equal(a, b) for a, b in zip(masks[1], masks[2])) == len(again)


def test_dropout_keeps_the_expected_share_of_cells():
    model = engine.preset("paper", d_model=128, n_heads=4, d_ff=64, n_layers=2)
    p = 0.3
    masks = [s.meta["keep"] for s in model.run(SRC, TGT, dropout=p, seed=11).steps() if s.kind == "dropout"]
    total = sum(m.size for m in masks)
    kept = sum(int(m.sum()) for m in masks)
    assert total > 10_000 and abs(kept / total - (1 - p)) < 4.5 * math.sqrt(p * (1 - p) / total)


@pytest.mark.parametrize("placement", ["post", "pre"])
def test_dropout_gradient_matches_finite_differences_with_the_mask_fixed(placement):
    model = perturbed(engine.preset("paper", attn_bias=True, **SMALL, norm_placement=placement, activation="gelu"),
                      seed=12)
    options = dict(dropout=0.2, seed=5)
    result = loss_and_grads(model, SRC, TGT, **options)
    assert result.loss != pytest.approx(loss_and_grads(model, SRC, TGT).loss, rel=1e-3)  # dropout did something
    assert_grads_match_finite_differences(model, SRC, TGT, **options)


@pytest.mark.parametrize("bad", [dict(dropout=1.0), dict(dropout=-0.1), dict(dropout=0.1, seed=-1), dict(dropout="x")])
def test_bad_dropout_settings_are_refused(bad):
    with pytest.raises(ValueError, match="dropout"):
        engine.preset("hello-world").run("Hello World", **bad)


def test_dropout_cells_are_explained():
    trace = engine.preset("hello-world").run("Hello World", "hola", dropout=0.5, seed=1)
    keep = trace.step("enc.0.drop1").meta["keep"]
    kept, dropped = tuple(np.argwhere(keep)[0]), tuple(np.argwhere(~keep)[0])
    x = trace["enc.0.attn.out"]
    written = Writing().aside  # a number as the text writes it
    assert trace.explain("enc.0.drop1", kept).text.endswith(f"⟦kept-text⟧ ≈ {written(2 * x[kept])}")  # word slots
    assert trace.explain("enc.0.drop1", dropped).text.endswith(f"= 0 ⟦dropped-text|x={written(x[dropped])}⟧ = 0"), \
        "a dropped cell is exactly 0, whatever the value it drops"


# ---- the tests: the command line ---------------------------------------------------------------------------------

@pytest.mark.parametrize("args, src, tgt", [
    ([], DEFAULT_SOURCE, ""),
    (["--src", "Hello", "--tgt", "hola mundo", "--seed", "3", "--set", "n_layers=2"], "Hello", "hola mundo"),
])
def test_grads_command_prints_loss_params_and_grads(args, src, tgt, capsys):
    assert main(["grads", "--preset", "hello-world", *args, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out, parse_constant=lambda c: pytest.fail(f"non-RFC constant {c}"))
    assert list(data) == ["src_ids", "dec_input_ids", "target_ids", "loss", "params", "grads"]
    model = engine.preset("hello-world", seed=3 if args else 0, **({"n_layers": 2} if args else {}))
    result = loss_and_grads(model, src, tgt)
    assert (data["src_ids"], data["dec_input_ids"], data["target_ids"]) == (
        result.src_ids, result.dec_input_ids, result.target_ids)
    assert data["loss"] == result.loss
    assert list(data["params"]) == list(data["grads"]) == list(model.params)
    for name, value in model.params.items():
        np.testing.assert_array_equal(data["params"][name], value)
        np.testing.assert_array_equal(data["grads"][name], result.grads[name])


@pytest.mark.parametrize("args, message", [
    (["grads", "--preset", "nope"], "invalid choice"),
    (["grads", "--preset", "paper", "--set", "d_model=big"], "whole number"),
    (["grads", "--preset", "hello-world", "--format", "csv"], "invalid choice"),
    (["grads", "--preset", "hello-world", "--src", ""], "empty"),
])
def test_grads_command_refuses_bad_options_in_one_line(args, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and message in err and len(err.strip().splitlines()) == 1
