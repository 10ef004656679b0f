"""The exported PyTorch check (scripts/check_in_pytorch.py, handed out by engine.export.write_torch_check): the
script, run on its own in a fresh folder with only NumPy and PyTorch, rebuilds the app's model from torch.nn layers
and finds every step of both presets, in many settings, within 1e-9 of the app's numbers; and it fails, naming the
step, when a weight or a number of the file is moved by 1e-7."""
import re
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import engine
from engine.export import write_torch_check
from test_torch_reference import perturbed

SMALL = dict(d_model=16, n_heads=4, d_ff=24, n_layers=2)
TORCH, WRITTEN = "nn.Transformer", "written out"  # how the script builds the layers
CASES = {  # name: (preset, settings, source, target, layers); every bias, gamma and beta random (perturbed)
    "hello-world": ("hello-world", {}, "Hello World", "", WRITTEN),
    "hello-world, a target and an unknown word": ("hello-world", {}, "Hello World how", "hola mundo zebra", WRITTEN),
    "hello-world, decoder-only": ("hello-world", {"decoder_only": True}, "Hello World", "hola", WRITTEN),
    "paper, small": ("paper", SMALL, "the cat sat on the mat", "el gato se sentó", TORCH),
    "pre-norm, gelu": ("paper", {**SMALL, "norm_placement": "pre", "activation": "gelu"}, "the cat sat", "el gato",
                       TORCH),
    "decoder-only, pre-norm, 3 heads": ("paper", {**SMALL, "n_heads": 3, "d_model": 12, "decoder_only": True,
                                                  "norm_placement": "pre"}, "hello world", "hola mundo", TORCH),
    "the blog's LayerNorm, PE and softmax": ("paper", {**SMALL, "layer_norm": "blog", "pos_encoding": "blog",
                                                       "softmax": "naive"}, "good morning", "buenos días", WRITTEN),
    "d_k, d_v, divisor, no biases": ("paper", {**SMALL, "d_k": 5, "d_v": 7, "attn_divisor": 3.5, "attn_bias": False,
                                               "ffn_bias": False}, "i love learning", "yo", WRITTEN),
    "learned PE, own tables, no scale": ("paper", {**SMALL, "pos_encoding": "learned", "shared_embeddings": False,
                                                   "tied_output": False, "embed_scale": False}, "thank you", "gracias",
                                         TORCH),
    "own depths, printed PE, eps": ("paper", {**SMALL, "n_enc_layers": 1, "n_dec_layers": 3, "eps": 1e-3,
                                              "pos_encoding": "blog_table"}, "hello world", "hola mundo", TORCH),
}
SUMMARY = re.compile(r"largest difference (\S+) over (\d+) steps: (OK|DIFFERENT)")


def exported(model, src, tgt, folder):
    """The app's PyTorch check of this model and sentence, unpacked in `folder`."""
    trace = model.run(src, tgt)
    with open(folder / "check.zip", "wb") as out:
        write_torch_check(trace, out)
    with zipfile.ZipFile(folder / "check.zip") as archive:
        assert sorted(archive.namelist()) == ["check_in_pytorch.py", "trace.npz"]
        archive.extractall(folder)
    return trace


def run_check(folder):
    """Runs the script where it was unpacked, as a user would, with nothing of this project on the path."""
    result = subprocess.run([sys.executable, "-I", "check_in_pytorch.py"], cwd=folder, capture_output=True, text=True,
                            timeout=600)
    lines = dict(line.split(None, 1) for line in result.stdout.splitlines() if " " in line)
    return result, lines  # lines: the printout by its first word, a step's name


@pytest.mark.parametrize("case", CASES)
def test_the_exported_script_reproduces_every_step_within_1e_9(case, tmp_path):
    name, settings, src, tgt, layers = CASES[case]
    model = perturbed(engine.preset(name, seed=5, **settings), seed=5)
    trace = exported(model, src, tgt, tmp_path)
    result, lines = run_check(tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    worst, count, verdict = SUMMARY.search(result.stdout).groups()
    assert (float(worst), int(count), verdict) <= (1e-9, len(trace), "OK") and int(count) == len(trace)
    assert all(float(lines[step].split()[0]) <= 1e-9 for step in trace), "a step is missing from the printout"
    built = [line.split(": ", 1)[1] for line in result.stdout.splitlines() if re.match(r"(enc|dec)\.\d+: ", line)]
    assert len(built) == model.config.depth("enc") + model.config.depth("dec")
    assert all(b.startswith(layers) for b in built), built


def test_the_full_paper_model_uses_torch_layers_for_every_layer(tmp_path):
    """The paper preset as the app opens it: six encoder and six decoder layers, each torch's own layer."""
    exported(engine.preset("paper"), "hello world", "hola", tmp_path)
    result, _ = run_check(tmp_path)
    assert result.returncode == 0
    assert [result.stdout.count(f"nn.Transformer{kind}Layer") for kind in ("Encoder", "Decoder")] == [6, 6]


@pytest.mark.parametrize("moved, failing", [("param/enc.0.ln1.beta", "enc.0.ln1"),
                                            ("param/dec.1.cross_attn.W_V", "dec.1.cross_attn.v"),
                                            ("step/dec.0.self_attn.scaled", "dec.0.self_attn.scaled")])
def test_a_number_moved_by_1e_7_fails_at_its_step(moved, failing, tmp_path):
    """Not vacuous: a weight (the script's input) or an app number (what it compares with) moved by 1e-7 in the
    file makes the script exit 1 and name the first step it changes."""
    model = perturbed(engine.preset("paper", seed=2, **SMALL), seed=2)
    exported(model, "the cat sat", "el gato", tmp_path)
    with np.load(tmp_path / "trace.npz", allow_pickle=False) as data:
        arrays = {key: data[key] for key in data.files}
    arrays[moved] = arrays[moved] + 1e-7
    np.savez(tmp_path / "trace.npz", **arrays)
    result, lines = run_check(tmp_path)
    assert result.returncode == 1 and "DIFFERENT" in result.stdout
    bad = [step for step, text in lines.items() if "tolerance" in text]
    assert bad[0] == failing, bad
