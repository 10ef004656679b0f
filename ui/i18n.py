"""Every user-facing string, from the catalogs ui/catalogs/<language>.toml (English, Simplified Chinese; terms from
shared/GLOSSARY.md): a new language is one new file there. Also the Chinese of the engine's English formula words."""
import functools
import re
import tomllib
from pathlib import Path

from engine.blog import DIFFERENCES

CATALOG_DIR = Path(__file__).with_name("catalogs")


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


# The words the engine writes inside its formulas (\text{...}), in the other languages; the math stays as it is.
MATH_WORDS = {"zh": {
    "is not passed on: the encoding is fixed, not learned": "不再往回传：位置编码是固定的，不用学习",
    "is a constant: its gradient reaches no parameter": "是常数：它的梯度不会传到任何参数",
    "(each row)": "（逐行）",
    "columns ": "第 ",
    " of ": " 列，取自 ",
    "the post's printed value": "博客给出的数值",
    "otherwise": "其余",
    "its formula: ": "按公式：",
    ": a later position": "：后面的位置",
    "kept": "保留",
    "dropped; it was ": "被丢弃；原值为 ",
    "decoder input": "解码器输入",
    "ignore": "忽略",
    " even": " 为偶数",
    " odd": " 为奇数",
    "(the post's printed table)": "（博客列出的表）",
    "(a learned table)": "（学习得到的表）",
    "normalized": "归一化值",  # the post's name for LayerNorm's output (engine.blog.DIFFERENCES)
    "pad": "填充",  # a padded batch's masks (engine.attention.PAD_MASK_TEX)
    "causal": "因果",
    "len": "长度",
}}


# The words of the engine's plain-text arithmetic (Explanation.text), as (pattern, replacement) pairs.
PLAIN_WORDS = {"zh": [
    (r"^With (.*?): ", r"其中 \1："),
    (r", (?=σ|√\(σ)", "，"),  # LayerNorm's σ², σ and denominator
    (r" and x̂ = ", "，x̂ = "),
    (r"\(no positional encoding\)", "（没有位置编码）"),
    (r"\(learned\)", "（学习得到）"),
    (r"the post's printed value \(its formula: (.*)\) = ", r"博客给出的数值（按公式：\1） = "),
    (r", 2 decimals\)", "，保留 2 位小数)"),
    (r"\(position (\d+) comes after (\d+)\)", r"（位置 \1 在 \2 之后）"),
    (r"\(position (\d+) is not after (\d+)\)", r"（位置 \1 不在 \2 之后）"),
    (r"\(kept\)", "（保留）"),
    (r"\(dropped; it was (.*?)\)", r"（被丢弃；原值为 \1）"),
]}


def translator(lang: str):
    catalog = CATALOGS.get(lang, EN)

    def t(key: str, **values) -> str:
        text = catalog.get(key, EN[key])
        return text.format(**values) if values else text

    t.lang = lang if lang in CATALOGS else "en"
    t.math = functools.partial(math_words, lang)  # t.math(latex): a formula with its words in the language
    t.plain = functools.partial(plain_words, lang)  # t.plain(text): the plain-text arithmetic, likewise
    return t


UNICODE_MATH = {"W^O": "Wᴼ"}  # the math of the titles, in Unicode where only plain text shows (navigation, plotly)


def plain_math(text: str) -> str:
    """A text with its $…$ math in Unicode (or unwrapped), for labels that cannot render LaTeX."""
    return re.sub(r"\$([^$]+)\$", lambda match: UNICODE_MATH.get(match[1], match[1]), text)


def math_words(lang: str, latex: str) -> str:
    r"""The engine's formula with the words inside its \text{} in the language."""
    for english, words in MATH_WORDS.get(lang, {}).items():
        latex = latex.replace(f"\\text{{{english}}}", f"\\text{{{words}}}")
    return latex


def plain_words(lang: str, text: str) -> str:
    """The engine's plain-text arithmetic with its words in the language."""
    for pattern, replacement in PLAIN_WORDS.get(lang, []):
        text = re.sub(pattern, replacement, text)
    return text


# The blog-vs-paper differences: English from the engine's record, other languages in their files.
EN.update({f"diff.{d['key']}.topic": d["topic"] for d in DIFFERENCES})
EN.update({f"diff.{d['key']}.why": d["why"] for d in DIFFERENCES})
