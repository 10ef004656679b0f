"""Command line: translate a sentence with a Marian checkpoint, a folder in the Hugging Face layout or a Hub id.

    python -m marian --model opus-mt-en-zh --src "Hello world."           # greedy
    python -m marian --model opus-mt-en-zh --src "Hello world." --beam    # the checkpoint's beams, length penalty
    python -m marian --model opus-mt-en-mul --language ">>cmn_Hans<<" --src "Hello world."

It prints one JSON object: the source's pieces, the tokens written and their text. The command is this package's, not
`python -m engine`'s: engine/ imports NumPy alone (tests/test_engine_imports.py reads its sources), and loading a
checkpoint needs SentencePiece and safetensors.
"""
from __future__ import annotations

import json
import sys

from engine.__main__ import OneLineParser, beam_json, generation_json
from engine.config import ConfigError
from engine import transformers_beam
from engine.generate import MAX_WIDTH, generate

from . import load, with_language

MAX_LEN = 64  # tokens written at most unless --max-len says otherwise


def build_parser():
    parser = OneLineParser(prog="python -m marian", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a checkpoint's folder, or its Hub id (owner/name)")
    parser.add_argument("--src", required=True, help="the sentence to translate")
    parser.add_argument("--language", default=None, help="a multilingual model's target language token, e.g. "
                                                         ">>cmn_Hans<<")
    parser.add_argument("--beam", action="store_true", help="beam search as transformers' generate runs it, with the "
                        f"checkpoint's num_beams (at most {MAX_WIDTH}) and length_penalty")
    parser.add_argument("--max-len", type=int, default=None, help=f"the most tokens to write (default {MAX_LEN}, "
                        "within the checkpoint's max_length)")
    parser.add_argument("--revision", default=None, help="a Hub id's branch, tag or commit")
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        print(json.dumps(translate(args), ensure_ascii=False, allow_nan=False))
    except (ValueError, KeyError) as error:  # ConfigError is a ValueError: a refused checkpoint says why
        parser.exit(2, f"{parser.prog}: error: {error.args[0] if error.args else error}\n")
    return 0


def translate(args) -> dict:
    model, generation = load(args.model, args.revision)
    languages = model.vocab.languages
    if args.language is not None and args.language not in languages:
        raise ConfigError(f"{args.language!r} is not a language token of this model; it has "
                          f"{', '.join(languages) or 'none'}", "marian_language", language=args.language)
    src = with_language(args.src, args.language)
    max_len = min(args.max_len or MAX_LEN, generation["max_length"] - 1, model.config.max_len)  # less the start
    if args.beam:
        width = min(generation["num_beams"], MAX_WIDTH)
        result = beam_json(transformers_beam.beam_search(model, src, width=width, max_len=max_len,
                                                         length_penalty=generation["length_penalty"],
                                                         force_end=generation["force_end"]))
    else:
        result = generation_json(generate(model, src, max_len=max_len, force_end=generation["force_end"]))
    src_ids, src_tokens, unknown = model.vocab.encode(src)
    return {"model": args.model, "src": src, "src_tokens": src_tokens, "src_ids": src_ids, "unknown": unknown,
            "strategy": "beam" if args.beam else "greedy", **result,
            "text": model.vocab.decode(result["token_ids"])}


if __name__ == "__main__":
    sys.exit(main())
