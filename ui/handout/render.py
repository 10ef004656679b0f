"""A handout's blocks (ui.handout.document) written out: one self-contained HTML file whose math is MathML, which a
browser renders with no script, font or network (print it to PDF from the browser), or Markdown with $…$ math.
Heatmaps go inline in both as data: URIs."""
from __future__ import annotations

import base64
import html
import re

from xml.etree.ElementTree import tostring

from latex2mathml.converter import convert_to_element

from ui.handout.document import Settings, handout

CODE = re.compile(r"(`+) ?(.+?) ?\1")  # a code span, as labels.literal writes one: its fence, one space, the text
MATH = re.compile(r"\$([^$]+)\$")
BOLD = re.compile(r"\*\*(.+?)\*\*")
ENTITY = re.compile(r"&amp;(#x[0-9A-Fa-f]+;)")  # a character reference latex2mathml wrote, escaped by tostring
GATHERED = re.compile(r"\\(begin|end)\{gathered\}")  # lines of a formula, which latex2mathml writes on one line
LINE_SPACE = re.compile(r"\\\\\[[^\]]*\]")  # a line break's extra space, \\[0.5em], which latex2mathml writes out

LABELLED_CELL = 12  # CSS px: a heatmap's squares this size or larger get their labels, a line of .heat's type each
# An A4 page less its margins is 180 mm (680 CSS px) wide in print: every table, formula and picture fits in it
# (tests/test_handout_browser.py measures), so Chromium prints at 100 % rather than shrinking every page.
PAGE_MARGIN_MM = 15
STYLE = "\n@page { size: A4; margin: %dmm; }" % PAGE_MARGIN_MM + """
body { font-family: system-ui, "Noto Sans CJK SC", sans-serif; max-width: 52rem; margin: 2rem auto; padding: 0 1rem;
       line-height: 1.45; color: #222; }
h1 { font-size: 1.7rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #ccc; } h3 { margin-bottom: 0.3rem; }
math { font-family: "Latin Modern Math", "STIX Two Math", "Cambria Math", "DejaVu Math TeX Gyre", math;
       font-size: 1.1em; }
math[display="block"] { margin: 0.6rem 0; overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.9rem; margin: 0.4rem 0; } td, th { border: 1px solid #ccc;
       padding: 0.25rem 0.5rem; vertical-align: top; text-align: left; overflow-wrap: break-word; }
table.text { width: 100%; } table.text math { font-size: 1em; } table.text th { word-break: keep-all; }
table.matrix { font-size: 0.8rem; font-variant-numeric: tabular-nums; display: inline-table; vertical-align: top;
       margin-right: 0.8rem; } table.matrix td { text-align: right;
       padding: 0.15rem 0.4rem; overflow-wrap: normal; white-space: nowrap; } table.matrix th { background: #f4f4f4; }
img { image-rendering: pixelated; border: 1px solid #ccc; max-width: 100%; } figure { margin: 0.6rem 0; }
.heat { display: grid; gap: 2px 4px; width: max-content; max-width: 100%; font-size: 0.75rem; }
.heat .columns, .heat .rows { display: grid; } .heat .columns span { writing-mode: vertical-rl;
       transform: rotate(180deg); text-align: left; overflow: hidden; white-space: nowrap; max-height: 6rem; }
.heat .rows span { text-align: right; overflow: hidden; white-space: nowrap; max-width: 8rem; align-self: center; }
figcaption { font-size: 0.85rem; color: #555; } code { font-size: 0.9em; }
section { break-inside: avoid; }
@media print { body { margin: 0; max-width: none; padding: 0; } h2 { break-after: avoid; } math { font-size: 1em; } }
"""


def to_html(blocks, lang: str) -> str:
    """One HTML document: no script, no link to anything outside it."""
    title = html.escape(blocks[0].text)
    body, after = [], None
    for block in blocks:
        if block.kind == "heading" or block.kind == "subheading" and after not in (None, "heading"):
            body.append("</section><section>")  # a step stays on one printed page where it fits, under its heading
        body.append(_html_block(block))
        after = block.kind
    head = f'<meta charset="utf-8">\n<title>{title}</title>\n<style>{STYLE}</style>'
    return (f'<!doctype html>\n<html lang="{html.escape(lang)}">\n<head>\n{head}\n</head>\n<body><section>\n'
            + "\n".join(body) + "\n</section></body>\n</html>\n")


def _html_block(block) -> str:
    if block.kind in ("title", "heading", "subheading"):
        level = {"title": 1, "heading": 2, "subheading": 3}[block.kind]
        return f"<h{level}>{inline_html(block.text)}</h{level}>"
    if block.kind == "text":
        return f"<p>{inline_html(block.text)}</p>"
    if block.kind == "math":
        return mathml(block.text, "block")
    if block.kind == "image":
        return f"<figure>{_heatmap_html(block)}<figcaption>{inline_html(block.text)}</figcaption></figure>"
    header, *rows = block.rows
    matrix = block.kind == "matrix"  # its first column: the rows' labels
    return (f'<table class="{"matrix" if matrix else "text"}"><thead>' + _html_row(header, "th") + "</thead><tbody>"
            + "".join(_html_row(row, "td", matrix) for row in rows) + "</tbody></table>")


def _html_row(cells, tag: str, labelled: bool = False) -> str:
    tags = ["th" if labelled else tag] + [tag] * (len(cells) - 1)
    return "<tr>" + "".join(f"<{tag}>{inline_html(cell)}</{tag}>" for tag, cell in zip(tags, cells)) + "</tr>"


def _heatmap_html(block) -> str:
    """The picture at its own size (CSS px), its rows' and columns' labels beside each square when it has them and
    a square is as tall (wide) as a label's line."""
    image = block.image
    picture = f'<img src="{_data_uri(image.png)}" alt="" width="{image.size[0]}" height="{image.size[1]}">'
    tall, wide = (side >= LABELLED_CELL for side in image.cell)
    if not block.axes or not (tall or wide):
        return picture
    rows, cols = block.axes
    columns = _labels("columns", cols, f"grid-template-columns: repeat({len(cols)}, {image.cell[1]}px)")
    row_labels = _labels("rows", rows, f"grid-template-rows: repeat({len(rows)}, {image.cell[0]}px); padding-top: 1px")
    return (f'<div class="heat" style="grid-template-columns: auto {image.size[0] + 2}px">'
            + f"<span></span>{columns}" * wide + (row_labels if tall else "<span></span>") + f"{picture}</div>")


def _labels(axis: str, labels, grid: str) -> str:
    """A heatmap's labels along one axis, a square's size each."""
    spans = "".join(f"<span>{html.escape(label)}</span>" for label in labels)
    return f'<div class="{axis}" style="{grid}">{spans}</div>'


def inline_html(text: str) -> str:
    """Markdown's inline marks as the catalogs use them: `code` (its text as it is), $math$ (MathML), **bold**;
    everything else escaped."""
    parts = []
    for i, piece in enumerate(CODE.split(text)):
        if i % 3 == 2:  # the code span's text (split gives text, fence, code, text, ...)
            parts.append(f"<code>{html.escape(piece)}</code>")
        elif i % 3 == 0:
            parts.append(_math_and_bold(piece))
    return "".join(parts)


def _math_and_bold(text: str) -> str:
    pieces = MATH.split(text)
    return "".join(mathml(piece) if i % 2 else BOLD.sub(r"<strong>\1</strong>", html.escape(piece))
                   for i, piece in enumerate(pieces))


def mathml(latex: str, display: str = "inline") -> str:
    """LaTeX as MathML, its text escaped: latex2mathml's convert() unescapes the whole markup it writes (to keep the
    character references it puts in as text, &#x0003D;), so a `\\texttt{<unk>}` came out as an <unk> element.
    Here only those references are given back."""
    latex = GATHERED.sub(r"\\\1{matrix}", LINE_SPACE.sub(r"\\\\", latex))  # rows one above the other
    markup = tostring(convert_to_element(latex, display=display), encoding="unicode")
    return ENTITY.sub(r"&\1", markup)


def _data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def to_markdown(blocks) -> str:
    """Markdown with $…$ math ($$…$$ for a formula of its own), tables in pipes, heatmaps as data: URIs."""
    return "\n\n".join(_markdown_block(block) for block in blocks) + "\n"


def _markdown_block(block) -> str:
    if block.kind in ("title", "heading", "subheading"):
        return "#" * {"title": 1, "heading": 2, "subheading": 3}[block.kind] + " " + block.text
    if block.kind == "text":
        return block.text
    if block.kind == "math":
        return f"$$\n{block.text}\n$$"
    if block.kind == "image":
        return f"![]({_data_uri(block.image.png)})\n\n{block.text}"
    header, *rows = block.rows
    numbers = " ---: |" if block.kind == "matrix" else " --- |"  # a matrix's numbers right-aligned
    return "\n".join([_markdown_row(header), "| --- |" + numbers * (len(header) - 1), *map(_markdown_row, rows)])


def _markdown_row(cells) -> str:
    return "| " + " | ".join(cell.replace("|", r"\|") for cell in cells) + " |"



FORMATS = {"html": "text/html", "md": "text/markdown"}  # a handout's file formats and their MIME types


def handout_file(trace, t, settings: Settings, format_: str) -> str:
    """The handout of a trace in the translator's language as a file of FORMATS."""
    blocks = handout(trace, t, settings)
    return to_html(blocks, t.lang) if format_ == "html" else to_markdown(blocks)
