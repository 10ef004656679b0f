"""The exported PyTorch check (scripts/check_in_pytorch.py, handed out by engine.export.write_torch_check): the
script computes every step again in PyTorch from its declaration (kind and inputs) and finds it within 1e-9 of the
app's numbers (relative where they are above 1), for both presets in every non-default value of every Config option
(generated from the Config) and in combinations; it runs whole torch layers where the settings allow; it fails,
naming the step, when a weight or a number of the file is moved by 1e-7; and it names a step of a kind it does not
know without failing. Its check function runs here in-process on the NPZ's arrays; one test runs the zip as a user
would, in a fresh folder with nothing of this project on the path."""
import dataclasses
import importlib.util
import json
import re
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import engine
from engine.config import CHOICES, Config
from engine.export import CHECK_SCRIPT, npz_arrays, write_torch_check
from engine.presets import configure
from test_torch_reference import perturbed

SMALL = dict(d_model=16, n_heads=4, d_ff=24, n_layers=2)  # the paper preset's config at a size a test runs quickly
SIZES = {"hello-world": {}, "paper": SMALL}
SENTENCES = {"hello-world": ("Hello World", "hola mundo"), "paper": ("the cat sat", "el gato")}
TORCH, WRITTEN = "nn.Transformer", "step by step"  # how the script checks a layer
CASES = {  # name: (preset, settings, source, target, layers): settings combined; every bias, gamma, beta random
    "hello-world, a target and an unknown word": ("hello-world", {}, "Hello World how", "hola mundo zebra", WRITTEN),
    "paper, small": ("paper", SMALL, "the cat sat on the mat", "el gato se sentó", TORCH),
    "pre-norm, gelu, attention biases": ("paper", {**SMALL, "norm_placement": "pre", "activation": "gelu",
                                                   "attn_bias": True}, "the cat sat", "el gato", TORCH),
    "decoder-only, pre-norm, 3 heads": ("paper", {**SMALL, "n_heads": 3, "d_model": 12, "decoder_only": True,
                                                  "norm_placement": "pre"}, "hello world", "hola mundo", TORCH),
    "the blog's LayerNorm, PE and softmax": ("paper", {**SMALL, "layer_norm": "blog", "pos_encoding": "blog",
                                                       "softmax": "naive"}, "good morning", "buenos días", WRITTEN),
    "d_k, d_v, divisor, no biases": ("paper", {**SMALL, "d_k": 5, "d_v": 7, "attn_divisor": 3.5,
                                               "ffn_bias": False}, "i love learning", "yo", WRITTEN),
    "learned PE, own tables, no scale": ("paper", {**SMALL, "pos_encoding": "learned", "shared_embeddings": False,
                                                   "tied_output": False, "embed_scale": False}, "thank you", "gracias",
                                         TORCH),
    "own depths, printed PE, eps": ("paper", {**SMALL, "n_enc_layers": 1, "n_dec_layers": 3, "eps": 1e-3,
                                              "pos_encoding": "blog_table"}, "hello world", "hola mundo", TORCH),
    "no residual, pre-norm": ("paper", {**SMALL, "residual": False, "norm_placement": "pre"}, "the cat", "el gato",
                              WRITTEN),
}
SUMMARY = re.compile(r"largest difference (\S+) over (\d+) steps: (OK|DIFFERENT)")
LAYER = re.compile(r"(enc|dec)\.\d+: ")


def other_values(config: Config, field: dataclasses.Field) -> list:
    """The values of a Config field a user can set other than `config`'s: every other choice engine/config.py
    allows, the other truth value, a size doubled, a stack's own depth, another number. A field of a new type
    fails here, at collection, until it says how it varies."""
    value = getattr(config, field.name)
    if field.name in CHOICES:
        return [choice for choice in CHOICES[field.name] if choice != value]
    return {"bool": lambda: [not value],
            "int": lambda: [2 * value],
            "int | None": lambda: [config.n_layers + 1] if value is None else [None],  # None: n_layers
            "float": lambda: [0.0, value * 1000],
            "float | str": lambda: [3.5] if isinstance(value, str) else ["sqrt_dk", 2 * value]}[field.type]()


OPTIONS = {f"{preset}, {field.name}={value!r}": (preset, {**sizes, field.name: value})
           for preset, sizes in SIZES.items() for field in dataclasses.fields(Config)
           for value in other_values(configure(preset, **sizes), field)}


def load_script():
    """The script as a module, imported from its file as the zip holds it (it is no package of this project)."""
    spec = importlib.util.spec_from_file_location("check_in_pytorch", CHECK_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCRIPT = load_script()


def run_check(arrays, capsys):
    """The script's check of the NPZ's arrays, in-process: (its exit code, its printout, the printout by its first
    word: a step's name, or a layer's as "enc.0:")."""
    code = SCRIPT.check(arrays)
    out = capsys.readouterr().out
    return code, out, dict(line.split(None, 1) for line in out.splitlines() if " " in line)


def assert_every_step_agrees(trace, code, out, lines):
    assert code == 0, out[-3000:]
    worst, count, verdict = SUMMARY.search(out).groups()
    assert float(worst) <= 1e-9 and int(count) == len(trace) and verdict == "OK"
    assert all(float(lines[step].split()[0]) <= 1e-9 for step in trace), "a step is missing from the printout"


def built_layers(out):
    return [line.split(": ", 1)[1] for line in out.splitlines() if LAYER.match(line)]


@pytest.mark.parametrize("option", OPTIONS)
def test_every_setting_of_every_option_reaches_the_check(option, capsys):
    """Each non-default value of each Config option, one at a time, on both presets (the paper's at SMALL's sizes:
    an option's effect does not need 512 columns): every step within 1e-9, each layer checked."""
    preset, settings = OPTIONS[option]
    model = perturbed(engine.preset(preset, seed=5, **settings), seed=5)
    trace = model.run(*SENTENCES[preset])
    code, out, lines = run_check(npz_arrays(trace), capsys)
    assert_every_step_agrees(trace, code, out, lines)
    assert len(built_layers(out)) == model.config.depth("enc") + model.config.depth("dec")


def test_options_cover_every_config_field():
    """Not vacuous: every field of the Config has at least one value tried on each preset."""
    varied = {(preset, name) for preset, settings in OPTIONS.values() for name in settings
              if settings[name] != configure(preset, **SIZES[preset]).as_dict()[name]}
    assert varied == {(preset, f.name) for preset in SIZES for f in dataclasses.fields(Config)}


@pytest.mark.parametrize("case", CASES)
def test_settings_combined_agree_and_use_torch_layers_where_they_fit(case, capsys):
    name, settings, src, tgt, layers = CASES[case]
    model = perturbed(engine.preset(name, seed=5, **settings), seed=5)
    trace = model.run(src, tgt)
    code, out, lines = run_check(npz_arrays(trace), capsys)
    assert_every_step_agrees(trace, code, out, lines)
    built = built_layers(out)
    assert len(built) == model.config.depth("enc") + model.config.depth("dec")
    assert all(b.startswith(layers) for b in built), built


@pytest.mark.parametrize("cell", [1e4, 1e6])  # the embedding editor takes up to 1e6
def test_large_numbers_agree_relative_to_their_size(cell, capsys):
    """One embedding cell made large gives attention scores up to ~1e8 (1e4) or ~1e12 (1e6), whose float64 rounding
    is far above 1e-9 in absolute terms: the check is relative there, and agrees."""
    model = engine.preset("hello-world")
    table = model.params["embed.src"].copy()
    table[model.vocab.id("hello"), 0] = cell
    trace = model.with_params({"embed.src": table}).run("Hello World", "hola")
    assert np.abs(trace["enc.0.attn.scores"]).max() > 1e8
    assert_every_step_agrees(trace, *run_check(npz_arrays(trace), capsys))


def test_a_training_pass_agrees_with_its_own_dropout_masks(capsys):
    """Dropout steps are computed from the app's keep masks, which the file holds under meta/."""
    model = perturbed(engine.preset("paper", seed=3, **SMALL), seed=3)
    trace = model.run("the cat sat", "el gato", dropout=0.1, seed=4)
    arrays = npz_arrays(trace)
    assert any(key.startswith("meta/") and key.endswith("/keep") for key in arrays)
    code, out, lines = run_check(arrays, capsys)
    assert_every_step_agrees(trace, code, out, lines)
    assert all(b.startswith(WRITTEN) for b in built_layers(out))  # torch's layers would draw their own masks


def test_the_full_paper_model_uses_torch_layers_for_every_layer(capsys):
    """The paper preset as the app opens it: six encoder and six decoder layers, each run whole by torch's own."""
    trace = engine.preset("paper").run("hello world", "hola")
    code, out, lines = run_check(npz_arrays(trace), capsys)
    assert_every_step_agrees(trace, code, out, lines)
    assert [out.count(f"nn.Transformer{kind}Layer") for kind in ("Encoder", "Decoder")] == [6, 6]


@pytest.mark.parametrize("moved, failing", [("param/enc.0.ln1.beta", "enc.0.ln1"),
                                            ("param/dec.1.cross_attn.W_V", "dec.1.cross_attn.v"),
                                            ("step/dec.0.self_attn.scaled", "dec.0.self_attn.scaled")])
def test_a_number_moved_by_1e_7_fails_at_its_step(moved, failing, capsys):
    """Not vacuous: a weight (the script's input) or an app number (what it compares with) moved by 1e-7 in the
    file makes the check return 1 and name the first step it changes."""
    model = perturbed(engine.preset("paper", seed=2, **SMALL), seed=2)
    arrays = npz_arrays(model.run("the cat sat", "el gato"))
    arrays[moved] = arrays[moved] + 1e-7
    code, out, lines = run_check(arrays, capsys)
    assert code == 1 and "DIFFERENT" in out
    bad = [step for step, text in lines.items() if "tolerance" in text]
    assert bad[0] == failing, bad


def test_a_step_of_a_kind_without_torch_counterpart_is_named_and_not_checked(capsys):
    """A kind the script has no computation for (here one it has never heard of) is said by name; the steps after
    it are computed from the app's numbers for it, and checked."""
    trace = engine.preset("hello-world").run("Hello World", "hola")
    arrays = npz_arrays(trace)
    steps = json.loads(str(arrays["declarations"]))
    next(step for step in steps if step["name"] == "enc.0.attn.weights")["kind"] = "an unknown kind"
    arrays["declarations"] = np.array(json.dumps(steps))
    code, out, lines = run_check(arrays, capsys)
    assert code == 0 and lines["enc.0.attn.weights"] == "not checked (no torch counterpart)"
    assert SUMMARY.search(out).group(2) == str(len(trace) - 1) and float(lines["enc.0.attn.heads"]) <= 1e-9


def test_the_exported_zip_runs_on_its_own(tmp_path):
    """The zip as the app hands it out: unpacked in a fresh folder, run with nothing of this project on the path."""
    model = perturbed(engine.preset("paper", seed=5, **SMALL), seed=5)
    trace = model.run("the cat sat on the mat", "el gato se sentó")
    with open(tmp_path / "check.zip", "wb") as out:
        write_torch_check(trace, out)
    with zipfile.ZipFile(tmp_path / "check.zip") as archive:
        assert sorted(archive.namelist()) == ["check_in_pytorch.py", "trace.npz"]
        archive.extractall(tmp_path)
    result = subprocess.run([sys.executable, "-I", "check_in_pytorch.py"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert SUMMARY.search(result.stdout).groups()[1:] == (str(len(trace)), "OK")
    assert all(b.startswith(TORCH) for b in built_layers(result.stdout))
