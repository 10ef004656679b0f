"""The command line and the export formats."""
import ast
import csv
import io
import json
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import engine
from engine.__main__ import BLAS_THREADS, main
import engine.blog
from engine.export import CHECK_SCRIPT, npz_arrays, write_csv, write_json, write_npz
from engine.kinds import IMAGE_KINDS, KINDS


def to_json_text(trace, params: bool = True) -> str:
    buffer = io.StringIO()
    write_json(trace, buffer, params)
    return buffer.getvalue()


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "engine", *args], capture_output=True, text=True, timeout=120)


# Started by Python before the command (PYTHONPATH): at exit, the BLAS threads of the process that ran it.
BLAS_AT_EXIT = """
import atexit, json, sys
def report():
    from threadpoolctl import threadpool_info
    print(json.dumps([info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]),
          file=sys.stderr)
atexit.register(report)
"""


@pytest.mark.parametrize("chosen, threads", [({}, [1]), ({"OPENBLAS_NUM_THREADS": "2"}, [2])])
def test_the_command_line_runs_one_blas_thread_unless_told_otherwise(tmp_path, chosen, threads):
    (tmp_path / "sitecustomize.py").write_text(BLAS_AT_EXIT)
    env = {name: value for name, value in os.environ.items() if name not in BLAS_THREADS}
    result = subprocess.run([sys.executable, "-m", "engine", "presets"], capture_output=True, text=True, timeout=120,
                            env={**env, "PYTHONPATH": str(tmp_path), **chosen})
    assert result.returncode == 0 and json.loads(result.stderr.splitlines()[-1]) == threads, result.stderr


def test_presets_lists_both():
    result = run_cli("presets")
    names = [json.loads(line)["name"] for line in result.stdout.splitlines()]
    assert result.returncode == 0 and names == ["hello-world", "paper"]


def test_trace_json_is_strict_json_with_the_documented_keys(tmp_path):
    out = tmp_path / "trace.json"
    assert run_cli("trace", "--preset", "hello-world", "--format", "json", "--out", str(out)).returncode == 0
    data = json.loads(out.read_text(), parse_constant=lambda c: pytest.fail(f"non-RFC constant {c}"))
    assert {"config", "src_tokens", "tgt_tokens", "src_ids", "tgt_ids", "params", "steps"} <= set(data)
    assert data["src_tokens"] == ["hello", "world"] and data["tgt_tokens"] == ["SOS"]
    z = next(s for s in data["steps"] if s["name"] == "enc.0.attn.out")
    assert z["shape"] == [2, 4] and z["formula"].startswith(r"\operatorname{MultiHead}")
    np.testing.assert_allclose(z["value"][0][0], 11.46394285, atol=5e-9)
    assert data["params"]["enc.0.attn.W_Q"][0][3] == [1.0, 0.0, 0.0]
    assert data["config"]["attn_divisor"] == 30.0


def test_non_finite_numbers_become_strings():
    model = engine.preset("hello-world")
    model = model.with_params({"embed.src": np.full(model.params["embed.src"].shape, np.inf)})
    data = json.loads(to_json_text(model.run("Hello World")))
    embed = next(s for s in data["steps"] if s["name"] == "src.embed")
    weights = next(s for s in data["steps"] if s["name"] == "enc.0.attn.weights")
    assert embed["value"][0][0] == "inf" and "nan" in json.dumps(weights["value"])


def test_set_and_seed_change_the_model():
    result = run_cli("trace", "--preset", "paper", "--set", "d_model=8", "--set", "n_heads=2", "--set", "d_ff=16",
                     "--set", "n_layers=1", "--set", "norm_placement=pre", "--seed", "3", "--src", "hello world")
    data = json.loads(result.stdout)
    assert data["config"]["d_model"] == 8 and data["config"]["d_k"] == 4 and data["config"]["seed"] == 3
    assert data["config"]["norm_placement"] == "pre"


@pytest.mark.parametrize("args, message", [
    (["trace", "--preset", "nope"], "invalid choice"),
    (["trace", "--preset", "paper", "--set", "d_model=10", "--set", "n_heads=3"], "not divisible"),
    (["trace", "--preset", "paper", "--set", "colour=red"], "unknown setting"),
    (["trace", "--preset", "paper", "--set", "d_model"], "FIELD=VALUE"),
    (["trace", "--preset", "paper", "--set", "d_model=big"], "whole number"),
    (["trace", "--preset", "paper", "--set", "attn_divisor=-1"], "attn_divisor"),
    (["trace", "--preset", "paper", "--set", "n_layers=0"], "n_layers"),
    (["trace", "--preset", "hello-world", "--src", ""], "empty"),
    (["trace", "--preset", "hello-world", "--format", "xml"], "invalid choice"),
    (["explain", "--preset", "hello-world", "--step", "nope", "--index", "0"], "unknown step"),
    (["explain", "--preset", "hello-world", "--step", "src.pos", "--index", "a,b"], "whole numbers"),
    (["explain", "--preset", "hello-world", "--step", "src.pos", "--index", "9,0"], "outside"),
    (["explain", "--preset", "hello-world", "--step", "src.pos", "--index", "0"], "axes"),
])
def test_bad_options_give_one_line_and_exit_2(args, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_explain_prints_the_dot_product():
    result = run_cli("explain", "--preset", "hello-world", "--step", "enc.0.attn.scores", "--index", "0,0,1")
    assert result.returncode == 0
    assert result.stdout.splitlines()[0] == "enc.0.attn.scores[0, 0, 1] = 8×6.84 + 3×9.99 + 3×6.84 = 105.21"


def test_npz_loads_without_pickle(tmp_path):
    out = tmp_path / "t.npz"
    write_npz(engine.preset("hello-world").run("Hello World"), str(out))
    with np.load(out, allow_pickle=False) as data:
        np.testing.assert_allclose(data["step/enc.0.ln1"][0, 0], 1.71887693, atol=5e-9)
        assert json.loads(str(data["header"]))["src_tokens"] == ["hello", "world"]
        assert data["param/enc.0.attn.W_O"].shape == (6, 4)


def test_csv_has_one_row_per_number():
    trace = engine.preset("hello-world").run("Hello World")
    buffer = io.StringIO()
    write_csv(trace, buffer)
    rows = [r for r in csv.DictReader(io.StringIO(buffer.getvalue())) if r["source"] != "header"]
    total = sum(v.size for v in trace.values()) + sum(v.size for v in trace.model.params.values())
    assert len(rows) == total
    score = next(r for r in rows if r["name"] == "enc.0.attn.scores" and r["index"] == "0,1,1")
    assert float(score["value"]) == pytest.approx(135.5517)


def test_every_format_carries_the_vocabulary_and_settings(tmp_path):
    """A file is self-contained: its ids read as its tokens through its own vocabulary, and it holds the settings."""
    trace = engine.preset("hello-world").run("Hello World", "hola zebra")
    data = json.loads(to_json_text(trace))
    write_npz(trace, str(tmp_path / "t.npz"))
    with np.load(tmp_path / "t.npz", allow_pickle=False) as npz:
        assert json.loads(str(npz["header"])) == {key: data[key] for key in json.loads(str(npz["header"]))}
    assert data["vocabulary"] == list(engine.blog.VOCABULARY) and data["config"]["layer_norm"] == "blog"
    assert [data["vocabulary"][i] for i in data["tgt_ids"]] == data["tgt_tokens"] == ["SOS", "hola", "<unk>"]
    assert data["unknown"] == [{"side": "tgt", "word": "zebra"}]
    buffer = io.StringIO()
    write_csv(trace, buffer)
    header = [r for r in csv.DictReader(io.StringIO(buffer.getvalue())) if r["source"] == "header"]
    rows = {(r["name"], r["index"]): r["value"] for r in header}
    assert rows["config.attn_divisor", ""] == "30.0" and rows["config.pos_encoding", ""] == "blog_table"
    assert rows["config.n_enc_layers", ""] == "null" and rows["config.embed_scale", ""] == "false"
    assert [rows["vocabulary", str(i)] for i in range(len(data["vocabulary"]))] == data["vocabulary"]
    assert rows["tgt_tokens", "2"] == "<unk>" and rows["unknown", "0"] == '{"side": "tgt", "word": "zebra"}'


def test_json_and_csv_leave_the_weights_out_when_asked():
    trace = engine.preset("hello-world").run("Hello World")
    data = json.loads(to_json_text(trace, params=False))
    assert data["params"] == {} and len(data["steps"]) == len(trace)
    buffer = io.StringIO()
    write_csv(trace, buffer, params=False)
    sources = {r["source"] for r in csv.DictReader(io.StringIO(buffer.getvalue()))}
    assert sources == {"header", "step"}


def test_the_pytorch_format_is_a_zip_of_the_script_and_the_npz(tmp_path):
    out = tmp_path / "check.zip"
    assert run_cli("trace", "--preset", "hello-world", "--format", "pytorch", "--out", str(out)).returncode == 0
    with zipfile.ZipFile(out) as archive:
        assert sorted(archive.namelist()) == ["check_in_pytorch.py", "trace.npz"]
        script = archive.read("check_in_pytorch.py").decode()
        with archive.open("trace.npz") as npz, np.load(io.BytesIO(npz.read()), allow_pickle=False) as data:
            assert data["step/enc.0.ln1"].shape == (2, 4)
    imports = {line.split()[1] for line in script.splitlines() if line.startswith(("import ", "from "))}
    assert imports == {"json", "math", "sys", "pathlib", "numpy", "torch", "torch.nn"}  # nothing of this project


def test_the_npz_declares_every_step_as_the_trace_records_it():
    """The PyTorch check computes each step from its declaration: kind, inputs, shape and constants."""
    trace = engine.preset("hello-world").run("Hello World", "hola")
    declared = json.loads(str(npz_arrays(trace)["declarations"]))
    assert [(d["name"], d["kind"], tuple(d["inputs"]), tuple(d["shape"])) for d in declared] == [
        (s.name, s.kind, s.inputs, s.shape) for s in trace.steps()]
    assert next(d for d in declared if d["name"] == "src.embed")["meta"]["ids"] == list(trace.src_ids)


def test_the_pytorch_check_knows_every_kind_the_engine_declares():
    """scripts/check_in_pytorch.py's KINDS (read from its source: this tier imports no torch) names every kind of
    engine/kinds.py, with its torch computation or None for none: a new kind fails here, not in the slow tier."""
    tree = ast.parse(CHECK_SCRIPT.read_text(encoding="utf-8"))
    table = next(node.value for node in tree.body if isinstance(node, ast.Assign)
                 and any(isinstance(target, ast.Name) and target.id == "KINDS" for target in node.targets))
    assert {key.value for key in table.keys} == set(KINDS) | set(IMAGE_KINDS)
