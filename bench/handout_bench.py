"""The handout of a 64-token paper-size state: its time against the forward pass that it writes out, and its size.

    .venv/bin/python bench/handout_bench.py

The paper's base model (d_model 512, 8 heads, d_ff 2048, 6 + 6 layers) on 64 source tokens and SOS + 63 target
tokens: 282 steps, 11.3 million numbers, one BLAS thread as in the app. Each line is the median of REPEATS runs after
one warm-up: the whole forward pass (a fresh trace of another sentence each time, so no product is remembered), then
the HTML and Markdown handouts of one finished trace. The limit stated in README ("The handout"): the HTML at most
8 MB (tests/test_handout.py), made in at most 6 forward passes' time (docs/PERFORMANCE.md, "Handout").
"""
import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # import engine and ui from this repository

from threadpoolctl import threadpool_limits  # noqa: E402

import engine  # noqa: E402
from timing import median_ms  # noqa: E402
from ui.core.i18n import translator  # noqa: E402
from ui.handout.document import Settings  # noqa: E402
from ui.handout.render import handout_file  # noqa: E402

REPEATS = 5
SRC, TGT = " ".join(["hello", "world"] * 32), " ".join(["hola"] * 63)


def main():
    with threadpool_limits(1):  # as the app runs (ui.core.server.configure): BLAS threads would time the load
        _measure()


def _measure():
    model = engine.preset("paper")
    trace = model.run(SRC, TGT)
    settings = Settings("paper", 0, SRC, TGT, 4)
    sentences = itertools.cycle([SRC, SRC.replace("hello", "how", 1)])  # a weight remembers its last product only
    forward = median_ms(lambda: len(model.run(next(sentences), TGT)), REPEATS)
    print(f"forward pass, 64 + 64 tokens: {forward:8.0f} ms")
    for format_ in ("html", "md"):
        text = handout_file(trace, translator("en"), settings, format_)
        made = median_ms(lambda: handout_file(trace, translator("en"), settings, format_), REPEATS)
        print(f"{format_:4s} handout: {made:8.0f} ms = {made / forward:4.2f} forward passes, "
              f"{len(text.encode()) / 1e6:5.2f} MB")


if __name__ == "__main__":
    main()
