"""Command line: `python -m engine presets | trace | explain` (see README)."""
from __future__ import annotations

import argparse
import io
import json
import sys

from .config import parse_field
from .export import WRITERS, header
from .presets import DESCRIPTIONS, PRESETS, preset

DEFAULT_SOURCE = "Hello World"


class OneLineParser(argparse.ArgumentParser):
    """Bad options print one line and exit 2, never a traceback or a usage page."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m engine", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    commands.add_parser("presets", help="list the presets and their settings")
    for name in ("trace", "explain"):
        sub = commands.add_parser(name, help="run a forward pass" if name == "trace" else "explain one cell")
        sub.add_argument("--preset", required=True, choices=sorted(PRESETS))
        sub.add_argument("--src", default=DEFAULT_SOURCE, help="the source sentence")
        sub.add_argument("--tgt", default=None, help="the target prefix (the decoder starts with SOS)")
        sub.add_argument("--set", dest="settings", action="append", default=[], metavar="FIELD=VALUE",
                         help="change one Config field, e.g. --set attn_divisor=sqrt_dk")
        sub.add_argument("--seed", type=int, default=0)
    trace = commands.choices["trace"]
    trace.add_argument("--format", choices=sorted(WRITERS), default="json")
    trace.add_argument("--out", default=None, help="file to write (default: standard output)")
    explain = commands.choices["explain"]
    explain.add_argument("--step", required=True, help="a step name, e.g. enc.0.attn.scores")
    explain.add_argument("--index", required=True, help="comma-separated indices, e.g. 0,0,1")
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "presets":
            return _presets()
        trace = _model(args).run(args.src, args.tgt)
        if args.command == "trace":
            return _trace(trace, args)
        return _explain(trace, args)
    except (ValueError, KeyError) as error:
        message = error.args[0] if error.args else str(error)
        parser.exit(2, f"{parser.prog}: error: {message}\n")


def _model(args):
    overrides = {}
    for setting in args.settings:
        field, sep, value = setting.partition("=")
        if not sep:
            raise ValueError(f"--set takes FIELD=VALUE, got {setting!r}")
        overrides[field.strip()] = parse_field(field.strip(), value)
    return preset(args.preset, seed=args.seed, **overrides)


def _presets() -> int:
    for name, config in PRESETS.items():
        print(json.dumps({"name": name, "description": DESCRIPTIONS[name], "config": config.as_dict()}))
    return 0


def _trace(trace, args) -> int:
    writer = WRITERS[args.format]
    if args.format == "npz":
        with (open(args.out, "wb") if args.out else io.BytesIO()) as out:
            writer(trace, out)
            if not args.out:
                sys.stdout.buffer.write(out.getvalue())
    elif args.out:
        with open(args.out, "w", encoding="utf-8", newline="") as out:
            writer(trace, out)
    else:
        writer(trace, sys.stdout)
    for side, word in trace.unknown:
        print(f"note: unknown {side} word {word!r} was read as <unk>", file=sys.stderr)
    return 0


def _explain(trace, args) -> int:
    if args.step not in trace:
        raise ValueError(f"unknown step {args.step!r}; steps: {', '.join(trace)}")
    try:
        index = tuple(int(part) for part in args.index.split(","))
    except ValueError:
        raise ValueError(f"--index takes whole numbers separated by commas, got {args.index!r}") from None
    explanation = trace.explain(args.step, index)
    print(explanation.text)
    print(explanation.latex)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # e.g. `... | head`: the reader left, which is not an error of ours
        sys.stderr.close()
        sys.exit(0)
