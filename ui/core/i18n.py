"""Every user-facing string, from the catalogs ui/catalogs/<language>.toml (English, Simplified Chinese; terms from
shared/GLOSSARY.md): a new language is one new file there. The engine writes no words: the word slots of its
formulas and arithmetic are filled from the same files ("word.<code>")."""
import collections
import functools
import re
import string
import tomllib
from pathlib import Path

from engine.words import fill

CATALOG_DIR = Path(__file__).parents[1] / "catalogs"


def load_catalogs(folder: Path) -> dict[str, dict[str, str]]:
    """Every catalog in a folder, by language code (its file name, en.toml -> "en"): English, the reference, first."""
    paths = sorted(folder.glob("*.toml"), key=lambda path: (path.stem != "en", path.stem))
    return {path.stem: tomllib.loads(path.read_text(encoding="utf-8")) for path in paths}


CATALOGS = load_catalogs(CATALOG_DIR)  # once per process: a rerun reads the dicts, never the files
EN, ZH = CATALOGS["en"], CATALOGS["zh"]
LANGUAGES = {lang: catalog["lang.name"] for lang, catalog in CATALOGS.items()}  # the picker's options


def language_of(locale: str | None) -> str:
    """The app's language for a browser locale such as "zh-CN" or "en-US": its catalog's, else English."""
    lang = re.split(r"[-_]", (locale or "").lower())[0]
    return lang if lang in CATALOGS else "en"


class _Plurals(string.Formatter):
    """str.format with English plurals: {n:token|tokens} writes "1 token", "2 tokens" (a language whose nouns do not
    change with the count writes {n} and the noun)."""

    def format_field(self, value, spec):
        if "|" not in spec:
            return super().format_field(value, spec)
        one, other = spec.split("|")
        return f"{value} {one if value == 1 else other}"


_PLURALS = _Plurals()


def translator(lang: str):
    catalog = CATALOGS.get(lang, EN)

    def t(key: str, **values) -> str:
        text = catalog.get(key, EN[key])
        if not values:
            return text
        return _PLURALS.vformat(text, (), values) if "|" in text else text.format(**values)

    t.lang = lang if lang in CATALOGS else "en"
    t.words = functools.partial(fill, catalog=collections.ChainMap(catalog, EN))  # t.words(text): the engine's
    # formula or arithmetic with its word slots (engine/words.py) in the language
    return t


# the math of the titles, in Unicode where only plain text shows (navigation, the presenter rail, plotly)
UNICODE_MATH = {"W^O": "Wᴼ", r"\times W^O": "× Wᴼ"}


def literal(text: str) -> str:
    """Text from outside the app (a part of a link) to show inside Markdown as it is, as inline code: Markdown
    would make a link of "[sign in](//elsewhere)", a bare address or <b>, math of $…$ and a directive of
    :red[…]; a code span makes nothing of them. Its fence is one backtick longer than any run in the text. A line
    break is written as \\n or \\r: an empty line would end the code span, and Markdown would read what follows."""
    text = text.replace("\r", "\\r").replace("\n", "\\n")
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}"


def plain_math(text: str) -> str:
    """A text with its $…$ math in Unicode (or unwrapped), for labels that cannot render LaTeX."""
    return re.sub(r"\$([^$]+)\$", lambda match: UNICODE_MATH.get(match[1], match[1]), text)
