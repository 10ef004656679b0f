"""Word slots: where a formula or an explanation says something in words, the engine writes a code, not a language.

A slot is ⟦code⟧, or ⟦code|name=value|...⟧ with the numbers the words hold. A reader fills it from a catalog:
the text of "word.<code>", its {name} placeholders given the values (ui/catalogs/<language>.toml; the app's
translator, `t.words`, and the command line's English). Inside LaTeX a slot stands inside \\text, e.g.
`0 & \\text{⟦otherwise⟧}`. A value is a number or math the engine wrote, never a user's word (a token may be any
text, so tokens stay outside the slots).
"""
from __future__ import annotations

from collections.abc import Mapping

OPEN, CLOSE, SEP = "⟦", "⟧", "|"


def word(code: str, **values) -> str:
    """The slot of the catalog's "word.<code>" with these values."""
    return OPEN + SEP.join([code, *(f"{name}={value}" for name, value in values.items())]) + CLOSE


def fill(text: str, catalog: Mapping[str, str]) -> str:
    """`text` with every slot replaced by its words from `catalog`. What only looks like a slot (a token "⟦", a
    code the catalog lacks, values its words do not take) stays as it is."""
    first, *rest = text.split(OPEN)
    pieces = [first]
    for part in rest:
        inside, closed, after = part.partition(CLOSE)
        words = _words(inside, catalog) if closed else None
        pieces.append(OPEN + part if words is None else words + after)
    return "".join(pieces)


def _words(inside: str, catalog: Mapping[str, str]) -> str | None:
    code, *pairs = inside.split(SEP)
    text = catalog.get(f"word.{code}")
    if text is None:
        return None
    try:
        return text.format(**dict(pair.partition("=")[::2] for pair in pairs))
    except (KeyError, IndexError, ValueError):
        return None
