"""The Vision Transformer (engine/vit.py, engine/vit_train.py) against PyTorch built from the same weights, its
trace and explanations, its refusals of bad settings and pixels, the digits' file and the shipped trained model.

The torch reference: the patches cut by torch's own reshape, nn.Linear for the projection E, the class token and
position embeddings added by hand, nn.TransformerEncoderLayer(norm_first=True, activation="gelu",
batch_first=True) per layer, nn.LayerNorm and nn.Linear for the head; float64, dropout 0. Every bias, gamma and beta
is random first (the initialisation's zeros and ones would hide a swapped or missing one)."""
import hashlib
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from threadpoolctl import threadpool_info, threadpool_limits

from engine import digits
from engine.__main__ import main
from engine.config import ConfigError
from engine.kinds import IMAGE_KINDS
from engine.vit import (HEAD_LN_TEX, SEED_SLIPS, VisionTransformer, ViTConfig, position_similarity,
                        vit_param_shapes)
from engine.vit_train import (REPRODUCED_ACCURACY, SHIPPED, SHIPPED_KERNELS, ViTTrainSettings, accuracy, confusion,
                              load, loss_and_grads, save, train)

ROOT = Path(__file__).resolve().parents[1]

# (H, W, C, P, D, h, L, d_ff): square and not, grey and colour, one patch per pixel up to one patch per image
SIZES = [(8, 8, 1, 4, 16, 4, 2, 32), (8, 8, 1, 2, 12, 3, 1, 20), (6, 4, 3, 2, 8, 2, 3, 16),
         (4, 4, 2, 1, 6, 1, 1, 8), (8, 8, 1, 8, 10, 5, 2, 12), (9, 6, 1, 3, 4, 2, 2, 7)]


def perturbed(model, seed):
    rng = np.random.default_rng(seed)
    updates = {name: rng.normal(0.0, 0.5, value.shape) + (1.0 if name.endswith("gamma") else 0.0)
               for name, value in model.params.items() if value.ndim == 1 or name == "img.x_class"}
    return model.with_params(updates)


def model_of(size, seed=0, n_classes=7):
    H, W, C, P, D, h, L, d_ff = size
    settings = ViTConfig(height=H, width=W, channels=C, patch=P, d_model=D, n_heads=h, n_layers=L, d_ff=d_ff,
                         n_classes=n_classes)
    return perturbed(VisionTransformer.initial(settings, seed), seed + 1)


def _tensor(value):
    return torch.tensor(np.asarray(value), dtype=torch.float64)


def torch_reference(model):
    """The torch modules holding the model's weights: (projection, layers, head norm, head, x_class, E_pos)."""
    s, p = model.settings, {name: _tensor(value) for name, value in model.params.items()}
    proj = torch.nn.Linear(s.patch_size, s.d_model, dtype=torch.float64)
    proj.load_state_dict({"weight": p["img.E"].T, "bias": p["img.b_E"]})
    layers = []
    for l in range(s.n_layers):
        layer = torch.nn.TransformerEncoderLayer(s.d_model, s.n_heads, s.d_ff, dropout=0.0, activation="gelu",
                                                 batch_first=True, norm_first=True, dtype=torch.float64)
        a, f = f"enc.{l}.attn.", f"enc.{l}.ffn."
        side = {k: p[a + k].permute(1, 0, 2).reshape(s.d_model, -1).T for k in ("W_Q", "W_K", "W_V")}
        layer.load_state_dict({
            "self_attn.in_proj_weight": torch.cat([side["W_Q"], side["W_K"], side["W_V"]]),
            "self_attn.in_proj_bias": torch.cat([p[a + b].reshape(-1) for b in ("b_Q", "b_K", "b_V")]),
            "self_attn.out_proj.weight": p[a + "W_O"].T, "self_attn.out_proj.bias": p[a + "b_O"],
            "linear1.weight": p[f + "W_1"].T, "linear1.bias": p[f + "b_1"],
            "linear2.weight": p[f + "W_2"].T, "linear2.bias": p[f + "b_2"],
            "norm1.weight": p[f"enc.{l}.ln1.gamma"], "norm1.bias": p[f"enc.{l}.ln1.beta"],
            "norm2.weight": p[f"enc.{l}.ln2.gamma"], "norm2.bias": p[f"enc.{l}.ln2.beta"]}, strict=True)
        layers.append(layer.eval())
    norm = torch.nn.LayerNorm(s.d_model, eps=s.eps, dtype=torch.float64)
    norm.load_state_dict({"weight": p["head.ln.gamma"], "bias": p["head.ln.beta"]})
    head = torch.nn.Linear(s.d_model, s.n_classes, dtype=torch.float64)
    head.load_state_dict({"weight": p["head.W_F"].T, "bias": p["head.b_F"]})
    return proj, layers, norm, head, p["img.x_class"], p["img.E_pos"]


def torch_forward(modules, images, patch):
    """{"patches", "z0", "layer l", "logits"}: (b, ...) tensors; `images` a (b, H, W, C) tensor."""
    proj, layers, norm, head, x_class, E_pos = modules
    b, H, W, C = images.shape
    x_p = images.reshape(b, H // patch, patch, W // patch, patch, C).permute(0, 1, 3, 2, 4, 5)
    x_p = x_p.reshape(b, -1, patch * patch * C)  # (b, N, P²C)
    z = torch.cat([x_class.expand(b, 1, -1), proj(x_p)], dim=1) + E_pos  # (b, N+1, D)
    out = {"patches": x_p, "z0": z}
    for l, layer in enumerate(layers):
        z = layer(z)
        out[f"layer {l}"] = z
    out["logits"] = head(norm(z[:, 0]))  # (b, N_c)
    return out


@pytest.mark.parametrize("size", SIZES)
def test_forward_and_gradients_equal_pytorch(size):
    model = model_of(size, seed=sum(size))
    rng = np.random.default_rng(len(SIZES) + sum(size))
    images, labels = rng.random((3, *size[:3])), rng.integers(0, 7, 3)
    result = loss_and_grads(model, images, labels)
    trace, modules = result.trace, torch_reference(model)
    params = [t for m in (modules[0], *modules[1], modules[2], modules[3]) for t in m.parameters()] + list(modules[4:])
    for t in params:
        t.requires_grad_(True)
    out = torch_forward(modules, _tensor(images), size[3])
    for ours, theirs in [("img.patches", "patches"), ("img.input", "z0"), ("head.logits", "logits")] + [
            (f"enc.{l}.add2", f"layer {l}") for l in range(size[6])]:
        expected = out[theirs].detach().numpy()
        np.testing.assert_allclose(trace[ours].reshape(expected.shape), expected, rtol=0, atol=1e-9, err_msg=ours)
    loss = torch.nn.functional.cross_entropy(out["logits"], torch.tensor(labels))
    loss.backward()
    assert abs(result.loss - loss.item()) <= 1e-9
    for name, grad in _torch_grads(modules, model).items():  # b_K's is 0 but rounding: softmax ignores a shift
        assert np.max(np.abs(result.grads[name] - grad)) <= 1e-7 * np.max(np.abs(grad)) + 1e-14, name


def _torch_grads(modules, model):
    """The torch gradients in the engine's parameter names and layouts."""
    proj, layers, norm, head, x_class, E_pos = modules
    s = model.settings
    grads = {"img.E": proj.weight.grad.T, "img.b_E": proj.bias.grad, "img.x_class": x_class.grad,
             "img.E_pos": E_pos.grad, "head.ln.gamma": norm.weight.grad, "head.ln.beta": norm.bias.grad,
             "head.W_F": head.weight.grad.T, "head.b_F": head.bias.grad}
    d_k = s.d_model // s.n_heads
    for l, layer in enumerate(layers):
        a, f = f"enc.{l}.attn.", f"enc.{l}.ffn."
        w, bias = layer.self_attn.in_proj_weight.grad, layer.self_attn.in_proj_bias.grad
        for i, key in enumerate("QKV"):
            block = w[i * s.d_model:(i + 1) * s.d_model].T  # (D, h d_k), heads side by side
            grads[a + f"W_{key}"] = block.reshape(s.d_model, s.n_heads, d_k).permute(1, 0, 2)
            grads[a + f"b_{key}"] = bias[i * s.d_model:(i + 1) * s.d_model].reshape(s.n_heads, d_k)
        grads.update({a + "W_O": layer.self_attn.out_proj.weight.grad.T, a + "b_O": layer.self_attn.out_proj.bias.grad,
                      f + "W_1": layer.linear1.weight.grad.T, f + "b_1": layer.linear1.bias.grad,
                      f + "W_2": layer.linear2.weight.grad.T, f + "b_2": layer.linear2.bias.grad,
                      f"enc.{l}.ln1.gamma": layer.norm1.weight.grad, f"enc.{l}.ln1.beta": layer.norm1.bias.grad,
                      f"enc.{l}.ln2.gamma": layer.norm2.weight.grad, f"enc.{l}.ln2.beta": layer.norm2.bias.grad})
    assert set(grads) == set(model.params)
    return {name: grad.detach().numpy() for name, grad in grads.items()}


def test_one_image_is_a_batch_of_one():
    model = model_of(SIZES[0])
    image = np.random.default_rng(3).random(SIZES[0][:3])
    alone, batch = model.run(image), model.run(np.stack([image, image[::-1]]))
    for step in alone.steps():
        shared = batch[step.name].ndim == step.value.ndim  # the position embeddings: one for every image
        mine = batch[step.name] if shared else batch[step.name][0]
        np.testing.assert_allclose(mine, step.value, rtol=0, atol=1e-12, err_msg=step.name)


def test_trace_names_shapes_and_kinds():
    model = VisionTransformer.initial(ViTConfig(patch=2, d_model=8, n_heads=2, n_layers=1, d_ff=16), seed=0)
    trace = model.run(np.zeros((8, 8, 1)))
    shapes = {"img.patches": (16, 4), "img.embed": (16, 8), "img.cls": (17, 8), "img.pos": (17, 8),
              "img.input": (17, 8), "enc.0.ln1": (17, 8), "enc.0.attn.weights": (2, 17, 17), "enc.0.add2": (17, 8),
              "head.token": (1, 8), "head.ln": (1, 8), "head.logits": (1, 10), "head.probs": (1, 10)}
    assert {name: trace[name].shape for name in shapes} == shapes
    names = list(trace)
    assert names[:5] == ["img.patches", "img.embed", "img.cls", "img.pos", "img.input"]
    assert names[-4:] == ["head.token", "head.ln", "head.logits", "head.probs"]
    assert not any(name.startswith(("enc.out", "dec.", "src.", "tgt.")) for name in names)
    assert set(IMAGE_KINDS) <= {step.kind for step in trace.steps()}
    assert trace.step("img.embed").inputs == ("img.patches", "img.E", "img.b_E")
    assert trace.step("img.cls").inputs == ("img.x_class", "img.embed")
    assert trace.step("head.ln").inputs == ("head.token", "head.ln.gamma", "head.ln.beta")
    assert np.sum(trace["head.probs"]) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("size", SIZES[:3])
def test_every_step_has_the_shape_it_declares(size):
    """The page writes a step's declared shape beside its numbers ("(1, d_model) = (1, 16)"): n is the N + 1 tokens,
    and a batch's steps have b in front, but the position embeddings every image shares."""
    model = model_of(size)
    s, c = model.settings, model.config
    n = s.n_patches + 1
    sizes = {"n": n, "n_q": n, "n_k": n, "N": s.n_patches, "P²C": s.patch_size, "h": c.n_heads, "d_k": c.d_k,
             "d_v": c.d_v, "d_model": s.d_model, "d_ff": s.d_ff, "n_classes": s.n_classes, "1": 1}
    images = np.random.default_rng(2).random((2, s.height, s.width, s.channels))
    for in_front, trace in (((), model.run(images[0])), ((2,), model.run(images))):
        for step in trace.steps():
            declared = tuple(math.prod(sizes[part] for part in axis.split("·")) for axis in step.axes)
            assert step.shape == (*(() if step.name == "img.pos" else in_front), *declared), step.name


def test_the_formulas_write_the_bias_of_the_patches_and_eq_45():
    """x_p E + b_E is what the class token joins and z_0 sums; the head's LayerNorm is eq. 45 on the class token."""
    trace = VisionTransformer.initial().run(np.zeros((8, 8, 1)))
    for name in ("img.embed", "img.cls", "img.input"):
        assert "E + b_E" in trace.step(name).formula, name
    assert trace.step("img.embed").symbol == "(x_p E + b_E)"  # its drill-down's title: (x_p E + b_E)[i, j]
    head_ln = trace.step("head.ln")
    assert head_ln.formula.startswith(HEAD_LN_TEX) and r"\operatorname{LayerNorm}(x)" in head_ln.formula
    assert head_ln.symbol == "y"


def test_patches_are_the_images_pixels_and_explained_by_them():
    model = VisionTransformer.initial(ViTConfig(height=4, width=6, channels=2, patch=2, d_model=4, n_heads=1,
                                                n_layers=1, d_ff=4), seed=0)
    image = np.arange(4 * 6 * 2, dtype=float).reshape(4, 6, 2)
    trace = model.run(image)
    # patch 4 is the grid's row 1, column 1: pixels rows 2-3, columns 2-3; cell 5 is its row 1, column 0, channel 1
    assert trace["img.patches"][4, 5] == image[3, 2, 1]
    assert trace.explain("img.patches", (4, 5)).text == f"img.patches[4, 5] = x[3, 2, 1] = {image[3, 2, 1]:g}"
    assert trace.explain("img.patches", (4, 5), first=1).text.startswith("img.patches[5, 6] = x[4, 3, 2]")


def test_explanations_of_the_new_steps():
    model = model_of(SIZES[1])
    trace = model.run(np.random.default_rng(5).random(SIZES[1][:3]))
    cls0, cls2 = trace.explain("img.cls", (0, 3)), trace.explain("img.cls", (2, 3))
    assert cls0.text.startswith("img.cls[0, 3] = x_class[3] ≈ ") and cls0.value == model.params["img.x_class"][0, 3]
    assert cls2.text.startswith("img.cls[2, 3] = img.embed[1, 3] ≈ ") and cls2.value == trace["img.embed"][1, 3]
    assert trace.explain("head.token", (0, 1)).text.startswith("head.token[0, 1] = enc.0.add2[0, 1] ≈ ")
    embed = trace.explain("img.embed", (1, 2))
    assert embed.value == pytest.approx(trace["img.patches"][1] @ model.params["img.E"][:, 2]
                                        + model.params["img.b_E"][2], abs=1e-12)
    assert trace.explain("img.pos", (2, 1)).text.startswith("img.pos[2, 1] = E_pos[2, 1] ⟦learned⟧ ≈ ")
    for name in ("img.pos", "img.input", "head.ln", "head.logits", "head.probs", "enc.0.ffn.act"):
        index = (0,) * trace[name].ndim
        assert trace.explain(name, index).value == trace[name][index]


def test_gradients_of_the_new_steps():
    model = model_of(SIZES[0])
    images = np.random.default_rng(8).random((2, *SIZES[0][:3]))
    result = loss_and_grads(model, images, [1, 2])
    grad_cls, grad_token = result.backward["grad.img.cls"], result.backward["grad.head.token"]
    np.testing.assert_allclose(result.grads["img.x_class"], grad_cls[:, :1].sum(axis=0), atol=1e-15)
    np.testing.assert_allclose(result.backward["grad.img.embed"], grad_cls[:, 1:], atol=1e-15)
    grad_last = result.backward["grad.enc.1.add2"]  # the class token's row gets head.token's gradient plus its own
    assert grad_token.shape == (2, 1, 16) and grad_last.shape == (2, 5, 16)
    assert result.backward["grad.img.patches"].shape == (2, 4, 16)  # each pixel's sway: the image gets none itself
    assert list(result.backward)[-1] == "grad.img.patches"


def test_a_short_training_lowers_the_loss():
    data = digits.split("train")
    run = train(VisionTransformer.initial(ViTConfig(), seed=0), (data.images[:128], data.labels[:128]),
                ViTTrainSettings(steps=20, batch_size=32, warmup=5))
    assert run.losses.shape == (20,) and np.mean(run.losses[-4:]) < 0.8 * np.mean(run.losses[:4])


def test_settings_refused_with_codes():
    bad = [({"patch": 3}, "vit_patch_divides"), ({"height": 9}, "vit_patch_divides"),
           ({"d_model": 30, "n_heads": 4}, "not_divisible"), ({"patch": 0}, "vit_range"),
           ({"d_model": 257}, "vit_range"), ({"n_layers": 2.0}, "vit_range"), ({"n_heads": True}, "vit_range"),
({"eps": float("nan")}, "vit_eps"),
           ({"height": 32, "width": 64, "patch": 1, "d_model": 8, "n_heads": 2}, "vit_too_many_patches"),
           ({"n_classes": 1}, "vit_range")]
    for changes, code in bad:
        with pytest.raises(ConfigError) as error:
            ViTConfig(**changes)
        assert error.value.code == code, changes
    for changes in ({"steps": 0}, {"batch_size": -1}, {"lr_scale": float("inf")}, {"warmup": "10"}):
        with pytest.raises(ConfigError):
            ViTTrainSettings(**changes)


@pytest.mark.parametrize("image, code", [
    (np.full((8, 8, 1), np.nan), "vit_pixels_nonfinite"), (np.full((8, 8, 1), np.inf), "vit_pixels_nonfinite"),
    (np.full((8, 8, 1), 1e300), "vit_pixels_range"), (np.full((8, 8, 1), -1e5), "vit_pixels_range"),
    (np.zeros((8, 8)), "vit_image_shape"), (np.zeros((8, 7, 1)), "vit_image_shape"),
    (np.zeros((0, 8, 8, 1)), "vit_image_shape"), (np.zeros((1, 1, 8, 8, 1)), "vit_image_shape"),
    ([["a"]], "vit_pixels_not_numbers"), (None, "vit_image_shape"), ({"x": 1}, "vit_pixels_not_numbers"),
    (np.zeros((8, 8, 1), dtype=complex), "vit_pixels_not_numbers"),
    ([[[1]] * 8] * 7 + [[[1, 2]] * 8], "vit_pixels_not_numbers")])
def test_hostile_pixels_are_refused_with_codes(image, code):
    model = VisionTransformer.initial(ViTConfig(), seed=0)
    with pytest.raises(ConfigError) as error:
        model.run(image)
    assert error.value.code == code


def test_hostile_labels_are_refused():
    model = VisionTransformer.initial(ViTConfig(), seed=0)
    for labels in ([10], [-1], [0.5], [[1, 2]], ["3"]):
        with pytest.raises(ConfigError) as error:
            loss_and_grads(model, np.zeros((1, 8, 8, 1)), labels)
        assert error.value.code == "vit_labels"


def test_the_largest_pixels_allowed_stay_finite():
    model = model_of(SIZES[0])
    trace = model.run(np.full((8, 8, 1), 1e4))
    assert trace.nonfinite == () and np.sum(trace["head.probs"]) == pytest.approx(1.0)


def test_digits_file_shape_counts_and_checksum():
    arrays = digits.raw()
    digest = hashlib.sha256()
    for name in sorted(arrays):
        digest.update(name.encode())
        digest.update(arrays[name].tobytes())
    assert digest.hexdigest() == "ccd2456ac6fa81bebc21c13e6c1adb805b9cbc1780b343455c79fff8dfe98537"
    assert arrays["train_images"].shape == (1437, 8, 8) and arrays["test_images"].shape == (360, 8, 8)
    assert all(a.dtype == np.uint8 for a in arrays.values())
    labels = np.concatenate([arrays["train_labels"], arrays["test_labels"]])
    assert np.bincount(labels).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
    assert np.bincount(arrays["test_labels"]).tolist() == [29, 38, 33, 40, 33, 39, 32, 42, 41, 33]
    assert arrays["train_images"].max() == 16 and digits.split("test").images.max() == 1.0
    with pytest.raises(ValueError):
        digits.split("validation")


def test_the_shipped_model_reproduces_its_stated_test_accuracy():
    model, facts = load(SHIPPED)
    test = digits.split("test")
    assert facts["test_accuracy"] >= REPRODUCED_ACCURACY and SHIPPED.stat().st_size < 1_000_000
    assert accuracy(model, *test) == facts["test_accuracy"]
    assert (confusion(model, *test).sum() == 360
            and np.trace(confusion(model, *test)) == round(360 * accuracy(model, *test)))
    assert position_similarity(model).shape == (model.settings.n_patches,) * 2


@pytest.mark.slow  # 800 steps: ~50 s on one idle core
def test_the_command_reproduces_the_shipped_model(tmp_path):
    """What README and the training page say: `python -m engine vit-train` with the shipped file's settings gives its
    weights bit for bit where NumPy's OpenBLAS runs SHIPPED_KERNELS (this test's process tells which its command's
    runs too: same machine, same environment), and on every machine a test accuracy of at least REPRODUCED_ACCURACY."""
    shipped, facts = load(SHIPPED)
    out = tmp_path / "vit.npz"
    command = ["vit-train", "--steps", str(facts["steps"]), "--seed", str(shipped.seed), "--out", str(out)]
    made = subprocess.run([sys.executable, "-m", "engine", *command], cwd=ROOT, capture_output=True, text=True,
                          timeout=3600)
    assert made.returncode == 0, made.stderr
    model, stated = load(out)
    assert stated["test_accuracy"] >= REPRODUCED_ACCURACY and stated["steps"] == facts["steps"]
    assert accuracy(model, *digits.split("test")) == stated["test_accuracy"]
    if {info.get("architecture") for info in threadpool_info() if info["user_api"] == "blas"} == {SHIPPED_KERNELS}:
        assert stated == facts and all(np.array_equal(model.params[n], shipped.params[n]) for n in shipped.params)


def test_saved_weights_load_back_and_bad_files_are_refused(tmp_path):
    model = model_of(SIZES[2])
    path = tmp_path / "vit.npz"
    save(model, path, test_accuracy=0.5)
    loaded, facts = load(path)
    assert facts == {"test_accuracy": 0.5} and loaded.settings == model.settings
    assert all(np.array_equal(loaded.params[n], model.params[n]) for n in model.params)
    for data in (b"", b"not a zip", path.read_bytes()[:100]):
        with pytest.raises(ConfigError):
            load(data)
    np.savez(tmp_path / "bad.npz", **{n: v for n, v in model.params.items() if n != "head.b_F"}, meta=np.array(["{}"]))
    with pytest.raises(ConfigError):
        load(tmp_path / "bad.npz")


def test_seed_slips_name_the_equation_and_the_correction():
    assert [slip.code for slip in SEED_SLIPS] == ["vit_output_shape", "vit_output_indices"]
    assert all(slip.written != slip.meant and slip.equation == "45" for slip in SEED_SLIPS)
    assert r"(N+1) \times D" in SEED_SLIPS[0].meant and "z_L^0" in SEED_SLIPS[1].meant


def test_parameter_shapes_follow_the_settings():
    shapes = vit_param_shapes(ViTConfig(height=6, width=4, channels=3, patch=2, d_model=8, n_heads=2, n_layers=1,
                                        d_ff=5, n_classes=3))
    assert shapes["img.E"] == (12, 8) and shapes["img.E_pos"] == (7, 8) and shapes["img.x_class"] == (1, 8)
    assert shapes["head.W_F"] == (8, 3) and shapes["enc.0.attn.W_Q"] == (2, 8, 4) and shapes["enc.0.ffn.W_1"] == (8, 5)
    assert not any(name.startswith(("dec.", "embed.", "unembed.", "enc.ln_final")) for name in shapes)


def test_the_command_line_trains_and_saves(tmp_path, capsys):
    out = tmp_path / "vit.npz"
    assert main(["vit-train", "--steps", "3", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    model, facts = load(out)
    assert facts["steps"] == 3 and f"test accuracy {facts['test_accuracy']:.4f}" in printed
    assert model.settings == ViTConfig() and json.dumps(facts)
    with pytest.raises(SystemExit) as exit_:
        main(["vit-train", "--steps", "3", "--out", str(tmp_path / "no" / "such.npz")])
    assert exit_.value.code == 2 and "its folder does not exist" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["vit-train", "--steps", "0"])


def blas_threads() -> list[int]:
    return [info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]


def test_the_benchmark_trains_with_one_blas_thread(monkeypatch):
    """As the app and the command line: a second thread only waits on these small products (261 s against 35 s)."""
    sys.path.insert(0, str(ROOT / "bench"))
    import vit_bench
    seen = []
    monkeypatch.setattr(vit_bench, "run_once", lambda settings: seen.append(blas_threads()) or (1.0, 1.0))
    with threadpool_limits(2, user_api="blas"):
        assert blas_threads() and set(blas_threads()) == {2}  # what the benchmark must not keep
        vit_bench.main(["--steps", "1"])
    assert seen and all(threads == [1] * len(threads) for threads in seen)
