"""The handout (ui/handout): every step of the trace in the order data flows, with its formula, shape and numbers as
the trace holds them (tables whose rows and columns are labelled, or heatmaps large enough to see), what the model
predicts, the settings that produced it and the post's differences; HTML whose math is MathML (Chromium draws it with
every network request refused) and Markdown with $…$ math; the same from the command line; a 64-token paper-size
state within HANDOUT_BYTES (its time: bench/handout_bench.py). In Chromium, printed on A4:
tests/test_handout_browser.py."""
import base64
import io
import re

import numpy as np
import pytest
from PIL import Image

import engine
from engine.blog import DIFFERENCES
from engine.notation import SUPERSCRIPTS
from ui.core.format import fmt
from ui.core.i18n import CATALOGS, literal, translator
from ui.core.labels import FIRST, description_key, step_axes, step_name_key, top_tokens, unique
from ui.handout.__main__ import main
from ui.handout.document import RANKED, Settings
from ui.handout.heatmap import CELL, MASKED, MAX_HEIGHT, MAX_WIDTH, heatmap
from ui.handout.render import FORMATS, handout_file, mathml

from test_app import assert_clean, open_page

HANDOUT_BYTES = 8_000_000  # the HTML handout of the paper's base model on 64 source and 64 decoder tokens
DIGITS = 8  # the tests' handouts print 8 significant digits, so a number read back is the trace's to 1e-7
HEADING = re.compile(r"^### .* · `([^`]+)`$", re.M)
MATRIX = re.compile(r"^\| \$[^\n]*\n\| --- \|(?: ---: \|)+\n(?:\|[^\n]*\n?)+", re.M)  # a matrix's table
IMAGE = re.compile(r"!\[\]\(data:image/png;base64,([^)]+)\)")
RAW_LATEX = re.compile(r"\\[A-Za-z]+|[_^]\{|\$\$|\[-?[\d.]+em\]")  # a formula left as LaTeX: \frac, _{, $$, [0.5em]
# settings of every formula variant the handout writes (tests/test_katex.py's, in inference)
VARIANTS = [("hello-world", {}), ("hello-world", dict(pos_encoding="sinusoidal", attn_divisor="sqrt_dk",
                                                      layer_norm="paper", norm_placement="pre", activation="gelu",
                                                      softmax="naive", attn_bias=True, embed_scale=True)),
            ("hello-world", dict(pos_encoding="blog")), ("hello-world", dict(pos_encoding="learned")),
            ("hello-world", dict(pos_encoding="none", d_model=1, n_heads=1, d_ff=2, eps=0.0)),
            ("hello-world", dict(decoder_only=True)),
            ("paper", dict(n_layers=1, layer_norm="blog", attn_divisor=8.0, tied_output=False))]


def make_handout(preset="hello-world", lang="en", format_="md", src="Hello World", tgt="hola mundo", digits=DIGITS,
                 **overrides):
    trace = engine.preset(preset, **overrides).run(src, tgt)
    settings = Settings(preset, 0, src, tgt, digits, edits=(("enc.0.attn.W_Q", (0, 1, 2), 1.5),))
    return trace, handout_file(trace, translator(lang), settings, format_)


def _number(cell: str) -> float:
    """A cell as ui.core.format.fmt writes it: 1.5, −3, −∞, 1.2×10⁻⁵."""
    cell = cell.strip().replace("−", "-").replace("∞", "inf")
    mantissa, _, exponent = cell.partition("×10")
    return float(mantissa) * 10.0 ** int(exponent.translate({v: k for k, v in SUPERSCRIPTS.items()}) or 0)


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split(" | ")]


def _matrices(markdown: str) -> dict[str, list[tuple]]:
    """Each step's matrix tables (a head's each), read back from the Markdown: (column labels, row labels, numbers)."""
    parts = HEADING.split(markdown)  # text, name, its section, name, its section, ...
    found = {}
    for name, section in zip(parts[1::2], parts[2::2]):
        found[name] = []
        for table in MATRIX.findall(section):
            header, _, *rows = [_cells(line) for line in table.strip().splitlines()]
            found[name].append((header[1:], [row[0] for row in rows],
                                np.array([[_number(c) for c in row[1:]] for row in rows])))
    return found


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_step_comes_in_the_order_data_flows_with_its_formula_and_shape(lang):
    trace, markdown = make_handout(lang=lang)
    t = translator(lang)
    assert HEADING.findall(markdown) == [step.name for step in trace.steps()]
    for step, section in zip(trace.steps(), HEADING.split(markdown)[2::2]):
        assert f"### {t(step_name_key(step.name))} · `{step.name}`" in markdown
        assert section.startswith(f"\n\n{t(description_key(step.name))}\n\n"), step.name
        assert f"$$\n{t.words(step.formula)}\n$$" in section, step.name
        assert t("view.shape", axes=", ".join(step.axes), sizes=", ".join(map(str, step.shape))) in section


def test_written_out_numbers_are_the_traces_labelled_by_token():
    trace, markdown = make_handout()
    matrices = _matrices(markdown)
    written = 0
    for step, section in zip(trace.steps(), HEADING.split(markdown)[2::2]):
        value = np.atleast_2d(step.value)
        if not matrices[step.name]:
            assert len(IMAGE.findall(section)) == 1, step.name  # a heatmap instead
            continue
        expected = list(value) if value.ndim == 3 else [value]
        *_, rows, cols = [[""], *step_axes(trace, step.name)]
        labelled = lambda labels: [label if label.isdigit() or not label else literal(label) for label in labels]
        assert len(matrices[step.name]) == len(expected), step.name
        for (got_cols, got_rows, got), want in zip(matrices[step.name], expected):
            assert (got_cols, got_rows) == (labelled(cols), labelled(rows)), step.name
            np.testing.assert_allclose(got, np.atleast_2d(want), rtol=1e-7, atol=1e-300, err_msg=step.name)
            written += 1
    assert written > 60  # the hello-world example writes out nearly every step (all but the output's 11 columns)
    column_labels, row_labels, scores = matrices["enc.0.attn.scores"][0]
    assert row_labels == column_labels == ["` hello `", "` world `"]  # queries' tokens, keys' tokens
    assert scores[0, 1] == pytest.approx(105.21)  # the post's S_1[1, 2] (engine/blog.py PRINTED)
    assert matrices["src.embed"][0][0] == [str(j + FIRST) for j in range(trace.model.config.d_model)]
    assert np.isneginf(matrices["dec.0.self_attn.masked"][0][2][0, 1])  # a masked score, written −∞


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_prediction_is_written_out_at_every_decoder_position(lang):
    trace, markdown = make_handout(lang=lang)
    t, tokens = translator(lang), trace.model.vocab.tokens
    section = markdown[markdown.index(f"### {t('handout.prediction')}\n"):]
    header = "| " + " | ".join(t(f"handout.prediction.{c}") for c in ("position", "token", "next", "p", "others"))
    lines = section[section.index(header):].splitlines()[2:2 + len(trace.tgt_tokens)]
    for i, (line, token, probs) in enumerate(zip(lines, unique(trace.tgt_tokens), trace["probs"])):
        (best, p), *others = top_tokens(probs, tokens, RANKED)
        assert _cells(line)[:4] == [str(i + FIRST), literal(token), literal(best), fmt(p, DIGITS)]
        assert _cells(line)[4] == " · ".join(f"{literal(word)} {fmt(q, DIGITS)}" for word, q in others)
    assert fmt(trace["probs"][-1].max(), DIGITS) in section and "c" == top_tokens(trace["probs"][-1], tokens)[0][0]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_heatmaps_caption_counts_its_minus_infinity_cells(lang):
    trace, markdown = make_handout(lang=lang)
    t, masked = translator(lang), trace["masked_logits"]
    section = HEADING.split(markdown)[2::2][[step.name for step in trace.steps()].index("masked_logits")]
    finite = masked[np.isfinite(masked)]
    assert IMAGE.search(section) and finite.size < masked.size  # at 8 digits the 11 words' logits are a heatmap
    numbers = {name: fmt(f(finite), DIGITS) for name, f in (("low", np.min), ("high", np.max), ("mean", np.mean))}
    assert t("handout.summary.masked", cells=masked.size, masked=masked.size - finite.size, **numbers) in section


def test_the_markdowns_heatmaps_are_large_enough_to_see_on_paper():
    """A Markdown viewer shows an image at its own size: a small matrix's cells are CELL pixels a side."""
    trace, markdown = make_handout()
    drawn = {step.name: IMAGE.findall(section) for step, section in zip(trace.steps(), HEADING.split(markdown)[2::2])}
    sizes = {name: Image.open(io.BytesIO(base64.b64decode(pngs[0]))).size for name, pngs in drawn.items() if pngs}
    assert {"logits", "masked_logits", "probs"} <= set(sizes)
    for name, size in sizes.items():
        rows, cols = np.atleast_2d(trace[name]).shape
        assert size == (cols * CELL, rows * CELL), name
    assert CELL >= 16  # 4.2 mm printed at 96 px to the inch


def test_every_index_a_reader_sees_counts_from_1():
    """Rows, columns, heads and edited entries: no "[0", "_0" or "_{0}" in either file, code spans included (a
    step's name, enc.0, is the one 0 a reader meets, as a name)."""
    for lang in CATALOGS:
        for format_ in FORMATS:
            _, page = make_handout(lang=lang, format_=format_)
            assert re.findall(r"\[0(?![.\d])|_\{?0\b|<mn>0</mn></msub>", page) == [], (lang, format_)


def test_settings_and_the_differences_are_listed():
    trace, markdown = make_handout(preset="paper", n_layers=1, d_ff=64)
    config, t = trace.model.config, translator("en")
    for row in (f"| {t('ctl.preset')} | {t('preset.paper')} |", f"| {t('ctl.seed')} | 0 |",
                f"| {t('ctl.src')} | ` Hello World ` |", f"| {t('ctl.digits')} | {DIGITS} |",
                "`enc.0.attn.W_Q` [1, 2, 3] = 1.5"):  # the edit's entry (0, 1, 2) counted from 1
        assert row in markdown
    options = next(line for line in markdown.splitlines() if line.startswith(f"| {t('handout.options')}"))
    changed = f" ({t('handout.changed')})"
    assert f"`n_layers = 1`{changed}" in options and f"`d_ff = 64`{changed}" in options
    assert "`d_model = 512`," in options and options.count(changed) == 2
    assert len(re.findall(r"`\w+ = [^`]+`", options)) == len(config.as_dict())
    for difference in DIFFERENCES:
        assert t(f"diff.{difference['key']}.why") in markdown
    assert markdown.index(t("handout.settings")) < markdown.index("`src.embed`") < markdown.index(
        t("handout.differences"))


def test_a_large_matrix_is_a_heatmap_of_its_numbers():
    values = np.arange(2 * 3 * 20, dtype=float).reshape(2, 3, 20) - 60  # (h, rows, cols), signed
    values[1, 0, 0] = -np.inf
    picture = heatmap(values)
    image = Image.open(io.BytesIO(picture.png))
    (tall, wide) = picture.cell
    assert image.mode == "P" and image.size == picture.size == (42 * wide, 3 * tall)
    pixels = np.array(image)[::tall, ::wide]  # a pixel of each square
    assert pixels.shape == (3, 20 + 2 + 20) and wide > 1  # two heads side by side, a gap between
    left, right = pixels[:, :20], pixels[:, 22:]
    assert right[0, 0] == MASKED and (pixels[:, 20:22] == MASKED).all()
    shade = 1 + np.rint((values + 60) / 120 * 254)  # −60 (the largest size) the darkest blue, 1; 0 white, 128
    np.testing.assert_array_equal(left, shade[0])
    np.testing.assert_array_equal(right.ravel()[1:], shade[1].ravel()[1:])
    wide = heatmap(np.ones((300, 2048)))
    assert Image.open(io.BytesIO(wide.png)).size == (MAX_WIDTH, 150) and wide.block == (2, 4) and wide.cell == (1, 1)
    assert max(Image.open(io.BytesIO(heatmap(np.ones((8, 64, 64))).png)).size) <= max(MAX_WIDTH, MAX_HEIGHT)
    assert heatmap(np.ones((3, 11))).size == (11 * CELL, 3 * CELL)
    assert heatmap(np.ones((2, 512))).size == (512, 2 * CELL)  # two rows as bands, not two lines of pixels


@pytest.mark.parametrize("preset, overrides", VARIANTS)
def test_every_formula_becomes_mathml_in_both_languages(preset, overrides):
    for lang in CATALOGS:
        trace, page = make_handout(preset, lang, "html", **overrides)
        assert "<merror" not in page and "<script" not in page
        text = re.sub(r"<code>.*?</code>|<style>.*?</style>", "", page, flags=re.S)  # code: names, typed text
        assert RAW_LATEX.findall(re.sub(r"<[^>]+>", "", text)) == [], (preset, lang)
        assert page.count('<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">') == len(trace)
        assert re.findall(r'(?:src|href)="(?!data:image/png;base64,)', page) == []  # nothing to fetch


def test_a_sentence_is_shown_as_typed_never_as_markup():
    typed = "<script>alert(1)</script> $\\frac{1}{0}$ **bold** `tick`"
    _, page = make_handout(format_="html", src=typed)
    assert "<script>" not in page and "alert(1)" in page and "<strong>bold" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; $\\frac{1}{0}$ **bold** `tick`" in page
    assert mathml(r"\text{<b>x</b> & y}").count("&lt;b&gt;x&lt;/b&gt;") == 1  # a formula's text too
    _, markdown = make_handout(src=typed)
    assert f"| {translator('en')('ctl.src')} | `` {typed} `` |" in markdown


def test_the_command_line_writes_the_apps_handout(tmp_path, capsys):
    out = tmp_path / "handout.html"
    assert main(["--preset", "hello-world", "--tgt", "hola mundo", "--lang", "zh", "--digits", "8",
                 "--out", str(out)]) == 0
    trace = engine.preset("hello-world").run("Hello World", "hola mundo")
    settings = Settings("hello-world", 0, "Hello World", "hola mundo", DIGITS)
    assert out.read_text(encoding="utf-8") == handout_file(trace, translator("zh"), settings, "html")
    assert main(["--preset", "hello-world", "--format", "md"]) == 0
    assert capsys.readouterr().out.startswith(f"# {translator('en')('handout.title')}\n")
    with pytest.raises(SystemExit) as refused:
        main(["--preset", "hello-world", "--set", "d_model=5"])
    assert refused.value.code == 2 and capsys.readouterr().err.count("\n") == 1
    assert set(FORMATS) == {"html", "md"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_overview_offers_both_files_made_only_when_clicked(lang):
    at = open_page(lang=lang, preset="hello-world", src="Hello World", tgt="hola mundo")
    assert_clean(at)
    t = translator(lang)
    buttons = at.get("download_button")
    assert [(b.key, b.label, b.help) for b in buttons] == [
        (f"handout.{format_}", t(f"handout.download.{format_}"), t("handout.download.help")) for format_ in FORMATS]
    assert all(b.proto.deferred_file_id and b.proto.ignore_rerun for b in buttons)  # no file until a click


@pytest.mark.slow  # ~5 s: the paper's model on 128 tokens
def test_a_64_token_paper_handout_stays_within_its_size():
    src, tgt = " ".join(["hello", "world"] * 32), " ".join(["hola"] * 63)
    trace, page = make_handout("paper", "en", "html", src=src, tgt=tgt)
    assert (len(trace.src_tokens), len(trace.tgt_tokens)) == (64, 64)
    assert len(page.encode()) <= HANDOUT_BYTES
    assert page.count("<figure>") + page.count('<table class="matrix">') >= len(trace)  # every step has its numbers
