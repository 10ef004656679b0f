"""The engine's traced forward pass against PyTorch's Transformer layers, and the BLAS kernel NumPy ran.

    .venv/bin/python bench/engine_bench.py

Paper base sizes (d_model 512, 8 heads, d_ff 2048, 6 encoder + 6 decoder layers), float64, CPU. Inputs:
12 source tokens, and an 11-word target, which the decoder reads as SOS + target = 12 positions. PyTorch
runs nn.TransformerEncoder/DecoderLayer stacks (dropout 0, inference mode, its own random weights; the
values do not change the time) and the tied output projection on the engine's embedded inputs.

OpenBLAS reads OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE when it loads, and a forced older core type slows
NumPy's matmul; so the figures are measured here, then again in a child process without those two.

    .venv/bin/python bench/engine_bench.py --against 062b922^1    # make bench AGAINST=062b922^1

instead times this engine against the engine/ folder of a commit, imported beside it (`git archive`): the two run
in turn in one process (the machine's load weighs on both alike), CPU time with one BLAS thread (an idle thread
that spins waiting for a core would count), on the paper and hello-world presets, each on two sentences in turn; it
prints the medians and their ratio, and the ratio of the fastest runs.
"""
import importlib.util
import io
import itertools
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # import engine from this repository

import numpy as np  # noqa: E402
import torch  # noqa: E402
from threadpoolctl import threadpool_info, threadpool_limits  # noqa: E402

import engine  # noqa: E402
from timing import median_ms  # noqa: E402

SRC = "the cat sat on the mat . hello world how are you"  # 12 tokens
TGT = "el gato se sentó en la alfombra . hola mundo cómo"  # 11 words -> SOS + 11 = 12 decoder positions
OTHER_SRC = "you are how world hello . mat the on sat cat the"  # the same lengths, other inputs: see alternating()
OTHER_TGT = "cómo mundo hola . alfombra la en sentó se gato el"
OPENBLAS_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
CHILD_FLAG = "--without-openblas-vars"
WARMUP, REPEATS, HELLO_REPEATS = 3, 15, 101


def torch_forward(model, trace):
    """A closure running PyTorch's encoder and decoder stacks and the output projection on the trace's inputs."""
    c = model.config
    sizes = dict(d_model=c.d_model, nhead=c.n_heads, dim_feedforward=c.d_ff, dropout=0.0, activation=c.activation,
                 layer_norm_eps=c.eps, batch_first=True, norm_first=c.norm_placement == "pre", dtype=torch.float64)
    encoder = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(**sizes), c.n_layers,
                                          enable_nested_tensor=False).eval()
    decoder = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(**sizes), c.n_layers).eval()
    src, tgt = (torch.tensor(trace[f"{side}.input"])[None] for side in ("src", "tgt"))
    mask = torch.nn.Transformer.generate_square_subsequent_mask(tgt.shape[1], dtype=torch.float64)
    embed, bias = torch.tensor(model.params["embed.src"]), torch.tensor(model.params["unembed.b"])

    def forward():
        with torch.inference_mode():
            return decoder(tgt, encoder(src), tgt_mask=mask, tgt_is_causal=True) @ embed.T + bias

    return forward


def alternating(model, *sentences):
    """Runs of the model on each of the sentences in turn to the end of the pass: a model remembers the products
    of its last run (engine/products.py), so each run is a whole forward pass."""
    pairs = itertools.cycle(sentences)
    return lambda: model.run(*next(pairs))["probs"]  # the pass is lazy: read its end


def report(title):
    model = engine.preset("paper")
    trace = model.run(SRC, TGT)
    assert len(trace.src_tokens) == len(trace.tgt_tokens) == 12, (trace.src_tokens, trace.tgt_tokens)
    engine_ms = median_ms(alternating(model, (SRC, TGT), (OTHER_SRC, OTHER_TGT)), REPEATS, WARMUP)
    torch_ms = median_ms(torch_forward(model, trace), REPEATS, WARMUP)
    hello_ms = median_ms(alternating(engine.preset("hello-world"), ("Hello World",), ("World Hello",)), HELLO_REPEATS,
                         WARMUP)
    hello_with_preset_ms = median_ms(lambda: engine.preset("hello-world").run("Hello World")["probs"], HELLO_REPEATS,
                                     WARMUP)

    settings = ", ".join(f"{name}={os.environ.get(name, '(unset)')}" for name in OPENBLAS_VARS)
    print(f"== {title}: {settings}")
    for lib in (info for info in threadpool_info() if info["user_api"] == "blas"):
        print(f"  NumPy BLAS kernel: {lib['internal_api']} {lib['version']}, "
              f"architecture {lib.get('architecture')}, {lib['num_threads']} threads")
    rows = {"engine model.run(...)['probs'], paper base, 12 + 12 tokens": f"{engine_ms:9.2f} ms",
            f"torch 6+6 layers + output projection, {torch.get_num_threads()} threads": f"{torch_ms:9.2f} ms",
            "ratio engine / torch": f"{engine_ms / torch_ms:9.2f} x",
            "hello-world: run('Hello World')['probs']": f"{hello_ms:9.3f} ms",
            "hello-world: preset + run + ['probs']": f"{hello_with_preset_ms:9.3f} ms"}
    for label, value in rows.items():
        print(f"  {label:<62}{value}")
    sys.stdout.flush()


def engine_at(commit, into: Path):
    """The engine/ package of `commit`, written into the folder `into` and imported as `engine_at_commit`."""
    root = Path(__file__).resolve().parents[1]
    archive = subprocess.run(["git", "archive", commit, "engine"], cwd=root, capture_output=True, check=True).stdout
    tarfile.open(fileobj=io.BytesIO(archive)).extractall(into, filter="data")
    folder = into / "engine"
    spec = importlib.util.spec_from_file_location("engine_at_commit", folder / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    package = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(package)
    return package


def against(before, commit):
    """This engine's CPU time per pass over the engine `before`'s (the engine of `commit`), the two taking turns."""
    print(f"this engine / the engine of {commit}: CPU time per model.run(...)['probs'], the two in turn, 1 thread")
    cases = (("paper", ((SRC, TGT), (OTHER_SRC, OTHER_TGT)), REPEATS),
             ("hello-world", (("Hello World",), ("World Hello",)), HELLO_REPEATS))
    for name, sentences, repeats in cases:
        runs = [alternating(package.preset(name), *sentences) for package in (engine, before)]
        rounds = [[_cpu_ms(run) for run in runs] for _ in range(WARMUP + 2 * repeats)]  # each: (now, then)
        now, then = zip(*rounds[WARMUP:])
        print(f"  {name:<12} {statistics.median(now):9.3f} ms / {statistics.median(then):9.3f} ms = "
              f"{statistics.median(now) / statistics.median(then):.3f} (fastest runs: {min(now) / min(then):.3f})")


def _cpu_ms(fn) -> float:
    start = time.process_time()
    fn()
    return 1e3 * (time.process_time() - start)


if __name__ == "__main__":
    if "--against" in sys.argv:
        commit = sys.argv[sys.argv.index("--against") + 1]
        with threadpool_limits(1, user_api="blas"), tempfile.TemporaryDirectory() as folder:
            against(engine_at(commit, Path(folder)), commit)
    elif CHILD_FLAG in sys.argv:
        report(f"child process without {' and '.join(OPENBLAS_VARS)}")
    else:
        print(f"median of {REPEATS} runs (hello-world: {HELLO_REPEATS}) after {WARMUP} warm-up runs; "
              f"numpy {np.__version__}, torch {torch.__version__}")
        report("this environment")
        child_env = {name: value for name, value in os.environ.items() if name not in OPENBLAS_VARS}
        subprocess.run([sys.executable, __file__, CHILD_FLAG], env=child_env, check=True)
