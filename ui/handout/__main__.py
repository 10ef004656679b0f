"""Command line: `python -m ui.handout --preset paper --src "Hello World" --format html --out handout.html` writes
the handout the app downloads (README: "The handout"). The model's options are the engine's CLI's."""
from __future__ import annotations

import sys

from engine.__main__ import OneLineParser, add_model_arguments, model_from_args
from ui.core.format import DIGITS, DIGITS_RANGE
from ui.core.i18n import LANGUAGES, translator
from ui.handout.document import Settings
from ui.handout.render import FORMATS, handout_file


def build_parser() -> OneLineParser:
    parser = OneLineParser(prog="python -m ui.handout", description=__doc__)
    add_model_arguments(parser)
    parser.add_argument("--lang", choices=sorted(LANGUAGES), default="en", help="the handout's language")
    parser.add_argument("--digits", type=int, choices=range(DIGITS_RANGE[0], DIGITS_RANGE[1] + 1), default=DIGITS,
                        metavar=f"{DIGITS_RANGE[0]}-{DIGITS_RANGE[1]}", help="significant digits of every number")
    parser.add_argument("--format", choices=sorted(FORMATS), default="html")
    parser.add_argument("--out", default=None, help="file to write (default: standard output)")
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        trace = model_from_args(args).run(args.src, args.tgt)
        settings = Settings(args.preset, args.seed, args.src, args.tgt, args.digits)
        text = handout_file(trace, translator(args.lang), settings, args.format)
    except (ValueError, KeyError) as error:
        parser.exit(2, f"{parser.prog}: error: {error.args[0] if error.args else error}\n")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as out:
            out.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
