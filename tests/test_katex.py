"""Every formula and every cell's arithmetic the engine writes (as it is, and as the drill-down names the cell and
counts its positions) parses in the KaTeX that st.latex uses, in every language: Streamlit's own rehype-katex
bundle, run in Chromium with st.latex's options (display mode; an error thrown is what the browser shows as red raw
LaTeX).

Streamlit 1.67 ships KaTeX 0.16.47 inside static/js/rehype-katex.<hash>.js (the standalone katex.<hash>.js beside
it is mermaid's 0.18); its default export is the rehype plugin StreamlitMarkdown runs with no options over
`$$\\n{body}\\n$$`, and it reports a KaTeX error through the file's message().
"""
import itertools
from pathlib import Path

import numpy as np
import streamlit
from streamlit.string_util import clean_text

import engine
from engine import attention, backward, feed_forward, generate, kinds, loss, model, optim, positional, steps, vit
from ui.core.format import DIGITS
from ui.core.i18n import CATALOGS, translator
from ui.core.labels import step_name_key
from ui.views.drill import cell_explanation

STATIC = Path(streamlit.__file__).parent / "static" / "static" / "js"
ORIGIN = "http://katex.test"  # served by the page's route from STATIC, never the network
ALL_CELLS = 8  # a step this small has every cell explained; a larger one its corners (and a kept/dropped cell)

# (name, preset, overrides, dropout, the step kinds to explain or None for all): between them every step kind and
# every variant an explainer has
SETTINGS = [
    ("hello-world", "hello-world", {}, 0.0, None),
    ("hello-world pre-norm gelu naive paper-LN biases", "hello-world",
     dict(norm_placement="pre", activation="gelu", softmax="naive", layer_norm="paper", attn_bias=True,
          pos_encoding="sinusoidal", embed_scale=True, attn_divisor="sqrt_dk"), 0.3, None),
    ("hello-world blog PE", "hello-world", dict(pos_encoding="blog"), 0.0, {"pos"}),
    ("hello-world learned PE", "hello-world", dict(pos_encoding="learned"), 0.0, {"pos"}),
    ("hello-world no PE, overflowing naive softmax", "hello-world",
     dict(pos_encoding="none", softmax="naive", attn_divisor=1e-4), 0.0, {"pos", "scale", "softmax", "weighted"}),
    ("hello-world d_model 1, no epsilon", "hello-world", dict(d_model=1, n_heads=1, d_ff=2, eps=0.0), 0.0,
     {"layer_norm"}),
    ("paper", "paper", dict(n_layers=1), 0.0, None),
    ("paper pre-norm gelu blog-LN divisor 8 dropout", "paper",
     dict(norm_placement="pre", activation="gelu", layer_norm="blog", attn_divisor=8.0, n_layers=1), 0.1, None),
    ("hello-world as Marian: swish, halves PE, <pad> start and mask", "hello-world",
     dict(activation="swish", pos_encoding="sinusoidal_halves", decoder_start="pad", never_next="pad"), 0.0,
     {"activation", "pos", "mask"}),
]


def _cells(step):
    if step.value.size <= ALL_CELLS:
        return list(np.ndindex(step.shape))
    corners = list(itertools.product(*[sorted({0, n - 1}) for n in step.shape]))
    if step.kind == "dropout":  # one kept and one dropped cell
        keep = step.meta["keep"]
        corners += [tuple(map(int, np.argwhere(keep == kept)[0])) for kept in (True, False) if (keep == kept).any()]
    return corners


def _engine_constants():
    """The engine's formulas that pages render as they are (a %s template with a stand-in)."""
    for module in (attention, backward, feed_forward, generate, kinds, loss, model, optim, positional, steps, vit):
        for name, value in vars(module).items():
            if name.endswith("_TEX"):
                for key, tex in (value.items() if isinstance(value, dict) else [("", value)]):
                    for variant, tex in (tex.items() if isinstance(tex, dict) else [("", tex)]):
                        yield f"{module.__name__}.{name}[{key}][{variant}]", tex.replace("%s", "x")


def _engine_latex():
    """(where, LaTeX, the language it is in or None) for every formula and explanation the engine writes in the
    settings above, and every drill-down's in each language."""
    yield from ((where, tex, None) for where, tex in _engine_constants())
    for label, name, overrides, dropout, kinds in SETTINGS:
        trace = engine.preset(name, **overrides).run("Hello World", "hola mundo", dropout=dropout)
        for step in (s for s in trace.steps() if kinds is None or s.kind in kinds):
            yield f"{label}: {step.name} formula", step.formula, None
            yield f"{label}: {step.name} backward formula", backward.backward_formula(step), None
            for cell in _cells(step):
                yield f"{label}: {step.name}{list(cell)}", trace.explain(step.name, cell).latex, None
                for lang in CATALOGS:
                    title = translator(lang)(step_name_key(step.name))
                    yield (f"{label}: drill-down of {step.name}{list(cell)}",
                           cell_explanation(trace, step.name, cell, title, DIGITS).latex, lang)


def _vit_latex():
    """(where, LaTeX, None) for every step of a small Vision Transformer's pass, and the seed's slips."""
    settings = vit.ViTConfig(height=4, width=4, patch=2, d_model=4, n_heads=2, n_layers=1, d_ff=4, n_classes=3)
    trace = vit.VisionTransformer.initial(settings).run(np.random.default_rng(0).random((4, 4, 1)))
    for step in trace.steps():
        yield f"vit: {step.name} formula", step.formula, None
        yield f"vit: {step.name} backward formula", backward.backward_formula(step), None
        for cell in _cells(step):
            yield f"vit: {step.name}{list(cell)}", trace.explain(step.name, cell).latex, None
    for slip in vit.SEED_SLIPS:
        yield from ((f"vit: slip {slip.code}", tex, None) for tex in (slip.written, slip.meant))


def _in_every_language():
    """{LaTeX as st.latex sends it: where it was first written}."""
    first = {}
    for where, tex, written_in in itertools.chain(_engine_latex(), _vit_latex()):
        for lang in [written_in] if written_in else CATALOGS:
            first.setdefault(clean_text(translator(lang).words(tex)), f"{where} ({lang})")
    return first


def katex_errors(chromium, formulas: list[str]) -> list[str]:
    """KaTeX's error for each formula ("" where it renders), all rendered in one page."""
    bundles = list(STATIC.glob("rehype-katex.*.js"))
    assert len(bundles) == 1, f"written for Streamlit 1.67's one rehype-katex bundle; found {bundles} in {STATIC}"
    context = chromium.new_context()
    try:
        page = context.new_page()
        page.route(f"{ORIGIN}/**", lambda route: route.fulfill(
            body=(STATIC / route.request.url.rsplit("/", 1)[-1]).read_text(encoding="utf-8"),
            content_type="text/javascript") if route.request.url.endswith(".js")
            else route.fulfill(body="<!doctype html><title>katex</title>", content_type="text/html"))
        page.goto(f"{ORIGIN}/")
        return page.evaluate("""async ([bundle, formulas]) => {
            const rehypeKatex = (await import(bundle)).default;
            return formulas.map(tex => {
                const errors = [];
                const tree = {type: "root", children: [{type: "element", tagName: "div",
                    properties: {className: ["math-display"]}, children: [{type: "text", value: tex}]}]};
                rehypeKatex()(tree, {message: (reason, options) => errors.push(String(options.cause))});
                return errors.join("; ");
            });
        }""", [f"/{bundles[0].name}", formulas])
    finally:
        context.close()


def test_the_check_sees_katex_errors(chromium):
    """The check itself: a line break inside \\frac (the LayerNorm drill-down's old error) and an unknown command
    fail, a good formula passes."""
    good, broken, unknown = katex_errors(chromium, [
        r"\begin{aligned}&\mu = \frac{1 + 2}{2} \\ &= 1.5\end{aligned}",
        r"\begin{aligned}&\mu = \frac{1 \\ &\quad + 2}{2}\end{aligned}", r"\nosuchcommand"])
    assert good == "" and "Expected 'EOF', got '&'" in broken and "Undefined control sequence" in unknown


def test_every_formula_and_explanation_renders(chromium):
    formulas = _in_every_language()
    assert len(formulas) > 1500  # every step, cell and language above: a sweep that found nothing fails here
    failures = [f"{where}: {error}\n    {tex}"
                for (tex, where), error in zip(formulas.items(), katex_errors(chromium, list(formulas))) if error]
    assert not failures, f"{len(failures)} of {len(formulas)} formulas fail in KaTeX:\n" + "\n".join(failures[:20])
