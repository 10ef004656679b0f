"""The Vision Transformer's training on the 8×8 digits from the fixed seed: test accuracy, wall time, steps per
second, and the machine's load average before and after (the machine is shared; compare runs at a like load). One BLAS
thread, as the app's server and `python -m engine vit-train` run: a second one mostly waits on these small products.

    .venv/bin/python bench/vit_bench.py [--steps 800] [--seed 0] [--repeat 1]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import digits  # noqa: E402
from engine.vit import VisionTransformer, ViTConfig  # noqa: E402
from engine.vit_train import ViTTrainSettings, accuracy, train  # noqa: E402


def run_once(settings: ViTTrainSettings) -> tuple[float, float]:
    """(test accuracy, seconds of training)."""
    model = VisionTransformer.initial(ViTConfig(), seed=settings.seed)
    start = time.perf_counter()
    trained = train(model, digits.split("train"), settings).model
    seconds = time.perf_counter() - start
    return accuracy(trained, *digits.split("test")), seconds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=ViTTrainSettings().steps)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=1, help="runs; the fastest is reported")
    args = parser.parse_args(argv)
    settings = ViTTrainSettings(steps=args.steps, seed=args.seed)
    load_before = os.getloadavg()[0]
    with threadpool_limits(1, user_api="blas"):
        runs = [run_once(settings) for _ in range(args.repeat)]
    score, seconds = min(runs, key=lambda run: run[1])
    print(f"settings      {ViTConfig()}\n              {settings}")
    print(f"test accuracy {score:.4f} ({round(score * 360)}/360)")
    print(f"time          {seconds:.1f} s (fastest of {args.repeat})")
    print(f"steps/s       {settings.steps / seconds:.1f} "
          f"({settings.steps * settings.batch_size / seconds:.0f} images/s)")
    print(f"load average  {load_before:.2f} before, {os.getloadavg()[0]:.2f} after (1 min, {os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
